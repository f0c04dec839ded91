"""FUNCTION and FCALL (Redis 7.0): loading libraries with the restricted load-time API,
redis.register_function's forms and errors, FCALL/FCALL_RO, LIST, DELETE, FLUSH, DUMP/RESTORE
and STATS. Expected values are Redis 7.0.15's (the suite also runs against redis-server)."""

import pytest
import redis

from helpers import assert_err, assert_err_prefix
from resp_client import Simple

LIB = """#!lua name=mylib
redis.register_function('f1', function(keys, args) return redis.call('incr', keys[1]) end)
redis.register_function{function_name='f2', callback=function(keys, args)
  return {keys[1], args[1], #keys, #args} end, flags={'no-writes'}, description='desc'}
redis.register_function('ferr', function(keys, args)
  error('boom') end)"""


@pytest.fixture
def r(rb):
    rb.function_flush()
    yield rb
    rb.function_flush()


def as_dict(pairs):
    """A RESP2 map (flat [k, v, ...] list) as a dict."""
    return dict(zip(pairs[::2], pairs[1::2]))


def load(r, code, replace=False):
    return r.function_load(code, replace=replace)


class TestLoad:
    def test_load_and_call(self, r):
        assert load(r, LIB) == b"mylib"
        r.delete("fn:cnt")
        assert r.fcall("f1", 1, "fn:cnt") == 1
        assert r.fcall("f1", 1, "fn:cnt") == 2
        assert r.fcall("f2", 2, "a", "b", "x") == [b"a", b"x", 2, 1]
        assert r.fcall_ro("f2", 1, "a") == [b"a"]  # the array ends at args[1], nil

    def test_keys_and_argv_globals_do_not_exist(self, raw):
        raw.call("FUNCTION", "FLUSH")
        raw.call("FUNCTION", "LOAD", "#!lua name=g\nredis.register_function('g', "
                 "function() return type(KEYS) end)")
        assert_err(raw.call("FCALL", "g", "0"),
                   "ERR user_function:2: Script attempted to access nonexistent global variable "
                   "'KEYS' script: g, on @user_function:2.")

    def test_runtime_error_names_the_function(self, raw):
        raw.call("FUNCTION", "FLUSH")
        raw.call("FUNCTION", "LOAD", LIB)
        assert_err(raw.call("FCALL", "ferr", "0"),
                   "ERR user_function:6: boom script: ferr, on @user_function:6.")

    @pytest.mark.parametrize("code,error", [
        ("return 1", "ERR Missing library metadata"),
        ("#!lua\nreturn 1", "ERR Library name was not given"),
        ("#!lua name=a-b\nreturn 1", "ERR Library names can only contain letters, numbers, or "
                                     "underscores(_) and must be at least one character long"),
        ("#!lua name=x2\nreturn 1", "ERR No functions registered"),
        ("#!lua name=x3\nredis.call('ping')", "ERR Error registering functions: ERR "
         "user_function:2: Script attempted to access nonexistent global variable 'call'"),
        ("#!lua name=x5\nredis.register_function('bad-name', function() return 1 end)",
         "ERR Error registering functions: ERR Library names can only contain letters, numbers, "
         "or underscores(_) and must be at least one character long"),
        ("#!lua name=x6\nredis.register_function{function_name='g', callback=function() "
         "return 1 end, flags={'bad'}}", "ERR Error registering functions: ERR unknown flag given"),
        ("#!lua name=x7\nredis.register_function('g')", "ERR Error registering functions: ERR "
         "calling redis.register_function with a single argument is only applicable to Lua "
         "table (representing named arguments)."),
        ("#!lua name=x8\nx = 5\nredis.register_function('g8', function() return 1 end)",
         "ERR Error registering functions: ERR user_function:2: Attempt to modify a readonly "
         "table"),
        ("#!py name=x9\nreturn 1", "ERR Engine 'py' not found"),
        ("#!lua name=x10 flags=no-writes\nreturn 1",
         "ERR Invalid metadata value given: flags=no-writes"),
        ("#!lua name=lib3\nredis.register_function{function_name='h3', callback=function() "
         "return 1 end, extra=1}",
         "ERR Error registering functions: ERR unknown argument given to redis.register_function"),
        ("#!lua name=lib4\nredis.register_function{callback=function() return 1 end}",
         "ERR Error registering functions: ERR redis.register_function must get a function "
         "name argument"),
        ("#!lua name=lib5\nredis.register_function('a', 'b')", "ERR Error registering functions: "
         "ERR second argument to redis.register_function must be a function"),
        ("#!lua name=lib6\nredis.register_function('a', function() return 1 end, 3)",
         "ERR Error registering functions: ERR wrong number of arguments to "
         "redis.register_function"),
        ("#!lua name=lib7\nlocal t = {} for k in pairs(redis) do end",
         "ERR Error registering functions: ERR user_function:2: Script attempted to access "
         "nonexistent global variable 'pairs'"),
    ])
    def test_load_errors(self, raw, code, error):
        raw.call("FUNCTION", "FLUSH")
        assert_err(raw.call("FUNCTION", "LOAD", code), error)

    def test_load_time_api(self, raw):
        raw.call("FUNCTION", "FLUSH")
        code = ("#!lua name=lib8\nredis.log(redis.LOG_WARNING, 'loading')\n"
                "local v = redis.REDIS_VERSION\n"
                "redis.register_function('l8', function() return v end)")
        assert raw.call("FUNCTION", "LOAD", code) == b"lib8"
        assert raw.call("FCALL", "l8", "0") == b"7.0.15"

    def test_replace_and_conflicts(self, raw):
        raw.call("FUNCTION", "FLUSH")
        raw.call("FUNCTION", "LOAD", LIB)
        assert_err(raw.call("FUNCTION", "LOAD", "#!lua name=mylib\nredis.register_function("
                            "'f3', function() return 1 end)"), "ERR Library 'mylib' already exists")
        assert_err(raw.call("FUNCTION", "LOAD", "#!lua name=other\nredis.register_function("
                            "'f1', function() return 1 end)"), "ERR Function f1 already exists")
        assert raw.call("FUNCTION", "LOAD", "REPLACE", "#!lua name=mylib\n"
                        "redis.register_function('f3', function() return 3 end)") == b"mylib"
        assert raw.call("FCALL", "f3", "0") == 3
        assert_err(raw.call("FCALL", "f1", "0"), "ERR Function not found")
        assert_err(raw.call("FUNCTION", "LOAD", "REPLACEX", "#!lua name=mylib\n"),
                   "ERR Unknown option given: REPLACEX")

    def test_fcall_errors(self, raw):
        raw.call("FUNCTION", "FLUSH")
        raw.call("FUNCTION", "LOAD", LIB)
        assert_err(raw.call("FCALL", "nope", "0"), "ERR Function not found")
        assert_err(raw.call("FCALL_RO", "f1", "1", "x"),
                   "ERR Can not execute a script with write flag using *_ro command.")
        assert_err(raw.call("FCALL", "f1", "5", "x"),
                   "ERR Number of keys can't be greater than number of args")
        assert_err(raw.call("FCALL", "f1", "-1"), "ERR Number of keys can't be negative")


class TestPipelined:
    def test_pipelined_fcalls_keep_order_and_values(self, r):
        load(r, "#!lua name=plf\nredis.register_function('bump', function(keys, args) "
                "local v = redis.call('incr', keys[1]) redis.call('set', keys[2], v) return v end)"
                "\nredis.register_function{function_name='peek', callback=function(keys) "
                "return redis.call('get', keys[1]) end, flags={'no-writes'}}")
        keys = ["{pf%d}:n" % i for i in range(8)]
        r.delete(*keys)
        r.fcall("bump", 2, keys[0], "{pf0}:copy")  # the first run learns the keys
        r.fcall_ro("peek", 1, keys[0])
        p = r.pipeline(transaction=False)
        for _ in range(4):
            for i, k in enumerate(keys):
                p.fcall("bump", 2, k, "{pf%d}:copy" % i)
                p.fcall_ro("peek", 1, k)
        replies = p.execute()
        for round_ in range(4):
            for i in range(8):
                n = round_ + 1 + (1 if i == 0 else 0)
                base = (round_ * 8 + i) * 2
                assert replies[base] == n and replies[base + 1] == str(n).encode()
        p = r.pipeline(transaction=False)
        p.fcall_ro("bump", 2, keys[1], "{pf1}:copy")
        p.fcall("nosuch", 1, keys[1])
        out = p.execute(raise_on_error=False)
        assert "write flag" in str(out[0]) and "Function not found" in str(out[1])


class TestManage:
    def test_list(self, r):
        load(r, LIB)
        libs = r.function_list()
        assert len(libs) == 1
        lib = as_dict(libs[0])
        assert lib[b"library_name"] == b"mylib" and lib[b"engine"] == b"LUA"
        fns = {as_dict(f)[b"name"]: as_dict(f) for f in lib[b"functions"]}
        assert set(fns) == {b"f1", b"f2", b"ferr"}
        assert fns[b"f2"][b"description"] == b"desc"
        assert fns[b"f2"][b"flags"] == [b"no-writes"]
        assert fns[b"f1"][b"description"] is None and fns[b"f1"][b"flags"] == []
        assert b"library_code" not in lib
        coded = as_dict(r.function_list(withcode=True)[0])
        assert coded[b"library_code"] == LIB.encode()
        assert r.function_list(library="my*") != [] and r.function_list(library="MY*") != []
        assert r.function_list(library="zz*") == []

    @pytest.mark.parametrize("args,error", [
        (["LIST", "LIBRARYNAME"], "ERR library name argument was not given"),
        (["LIST", "foo"], "ERR Unknown argument foo"),
        (["FLUSH", "x"], "ERR FUNCTION FLUSH only supports SYNC|ASYNC option"),
        (["DELETE", "nolib"], "ERR Library not found"),
        (["RESTORE", "abc"], "ERR DUMP payload version or checksum are wrong"),
        (["KILL"], "NOTBUSY No scripts in execution right now."),
    ])
    def test_errors(self, raw, args, error):
        assert_err_prefix(raw.call("FUNCTION", *args), error)

    def test_delete_and_flush(self, r):
        load(r, LIB)
        assert r.function_delete("mylib") is True
        with pytest.raises(redis.exceptions.ResponseError, match="Function not found"):
            r.fcall("f1", 1, "x")
        load(r, LIB)
        assert r.function_flush("ASYNC") is True
        assert r.function_list() == []

    def test_dump_and_restore(self, r):
        load(r, LIB)
        payload = r.function_dump()
        assert payload[0] == 0xF5
        with pytest.raises(redis.exceptions.ResponseError, match="already exists"):
            r.function_restore(payload)
        assert r.function_restore(payload, "REPLACE") is True
        r.function_flush()
        assert r.function_restore(payload) is True
        assert r.fcall("f2", 1, "k", "a") == [b"k", b"a", 1, 1]
        with pytest.raises(redis.exceptions.ResponseError, match="Wrong restore policy"):
            r.function_restore(payload, "BAD")
        assert r.function_restore(payload, "FLUSH") is True

    def test_restore_of_a_redis_payload(self, r):
        # FUNCTION DUMP of LIB made by redis-server 7.0.15 (LZF-compressed code).
        payload = bytes.fromhex(REDIS_DUMP_HEX)
        assert r.function_restore(payload) is True
        assert r.fcall("f2", 1, "k", "a") == [b"k", b"a", 1, 1]

    def test_stats(self, raw):
        raw.call("FUNCTION", "FLUSH")
        raw.call("FUNCTION", "LOAD", LIB)
        assert raw.call("FUNCTION", "STATS") == [b"running_script", None, b"engines",
                                                [b"LUA", [b"libraries_count", 1,
                                                          b"functions_count", 3]]]

    def test_help(self, raw):
        assert raw.call("FUNCTION", "HELP")[0].startswith("FUNCTION <subcommand>")


REDIS_DUMP_HEX = (
    "f5c340e541571f23216c7561206e616d653d6d796c69620a72656469732e72656769737465725f0e66756e63"
    "74696f6e28276631272c20e0000e116b6579732c2061726773292072657475726e200640390963616c6c2827"
    "696e6372202e4025085b315d2920656e6429e00f5a007bc054005f60860227663220394046046261636b3dc0"
    "1ce00371010a20206c6073007ba061808a206a022c202340122006409b007d407820b51a6c6167733d7b276e"
    "6f2d777269746573277d2c206465736372697040dc013d27400c01277de00fa120fc01657240cfe00e8c201c"
    "086f722827626f6f6d2740eb0164290a00066bfb116d7a0725")


def test_info_counts_scripts_and_functions(r):
    r.script_flush()
    r.script_load("return 'info-a'")
    r.script_load("return 'info-b'")
    load(r, LIB)
    mem = r.info("memory")
    assert mem["number_of_cached_scripts"] == 2
    assert mem["number_of_functions"] == 3
    assert mem["number_of_libraries"] == 1
    assert int(mem["used_memory_lua"]) > 0
