"""EVAL, EVALSHA, EVAL_RO, EVALSHA_RO and SCRIPT (Redis 7.0): the Lua API, the conversions
between replies and Lua values, error texts, the sandbox, and atomicity across shards.
Expected values are Redis 7.0.15's (the suite also runs against redis-server)."""

import threading
import time

import pytest
import redis

from helpers import assert_err, assert_err_prefix
from resp_client import Error, Simple, Map, Double

SHA_EMPTY = "da39a3ee5e6b4b0d3255bfef95601890afd80709"


@pytest.fixture
def r(rb):
    """Replies as bytes: scripts return binary-safe strings."""
    return rb


class TestReplyConversion:
    def test_lua_values_to_resp2(self, raw):
        reply = raw.call("EVAL", "return {1,2,3,'ciao',{1,2},3.99,true,false,nil,5}", "0")
        assert reply == [1, 2, 3, b"ciao", [1, 2], 3, 1, None]

    @pytest.mark.parametrize("body,expected", [
        ("return 3.99", 3),
        ("return -2.7", -2),
        ("return true", 1),
        ("return false", None),
        ("return nil", None),
        ("return 'x'", b"x"),
        ("return {ok='fine'}", Simple("fine")),
        ("return redis.status_reply('x')", Simple("x")),
        ("return {a=1}", []),
        ("local t = {1,2}; t[4]=4; return t", [1, 2]),
        ("return 'x', 'y'", b"x"),
        ("return 1e20", -9223372036854775808),
    ])
    def test_single_values(self, raw, body, expected):
        assert raw.call("EVAL", body, "0") == expected

    @pytest.mark.parametrize("body,error", [
        ("return {err='X y'}", "X y"),
        ("return redis.error_reply('MYERR z')", "MYERR z"),
        ("return redis.error_reply('z')", "ERR z"),
        ("return redis.error_reply()", "ERR wrong number or type of arguments"),
        ("return redis.status_reply(1)", "ERR wrong number or type of arguments"),
    ])
    def test_error_tables(self, raw, body, error):
        assert_err(raw.call("EVAL", body, "0"), error)

    def test_nested_error_inside_array(self, raw):
        reply = raw.call("EVAL", "return {1, {err='in'}, {ok='k'}}", "0")
        assert reply[0] == 1 and isinstance(reply[1], Error) and reply[1] == "in"
        assert reply[2] == Simple("k")

    def test_resp2_replies_to_lua(self, r):
        r.set("conv:s", "v")
        r.rpush("conv:l", "a", "b")
        body = """
            local out = {}
            out[1] = type(redis.call('get', 'conv:s'))
            out[2] = tostring(redis.call('get', 'conv:missing'))
            out[3] = type(redis.call('lrange', 'conv:l', 0, -1))
            out[4] = redis.call('set', 'conv:t', 1)['ok']
            out[5] = type(redis.call('incr', 'conv:n'))
            out[6] = redis.pcall('incr', 'conv:s')['err']
            return out"""
        assert r.eval(body, 0) == [b"string", b"false", b"table", b"OK", b"number",
                                   b"ERR value is not an integer or out of range"]

    def test_resp3_replies_to_lua(self, r, r3):
        r.delete("conv:h")
        r.hset("conv:h", "a", "1")
        body = """
            redis.setresp(3)
            local m = redis.call('hgetall', KEYS[1])
            local n = redis.call('get', 'conv:none')
            local s = redis.call('smembers', 'conv:noset')
            return {type(m.map), m.map.a, tostring(n), type(s.set)}"""
        assert r.eval(body, 1, "conv:h") == [b"table", b"1", b"nil", b"table"]

    def test_resp3_results(self, raw_factory):
        c = raw_factory()
        c.call("HELLO", "3")
        assert c.call("EVAL", "return {double=3.5}", "0") == Double(3.5)
        assert c.call("EVAL", "return {map={a=1}}", "0").to_dict() == {b"a": 1}
        assert c.call("EVAL", "redis.setresp(3); return true", "0") is True
        assert c.call("EVAL", "redis.setresp(3); return false", "0") is False
        assert c.call("EVAL", "return false", "0") is None
        assert c.call("EVAL", "return {big_number='123'}", "0") == 123
        c.close()

    def test_numbers_become_arguments_with_17_digits(self, r):
        body = """redis.call('set','n1',3.0); redis.call('set','n2',0.1)
                  redis.call('set','n3',1e20)
                  return {redis.call('get','n1'), redis.call('get','n2'), redis.call('get','n3')}"""
        assert r.eval(body, 3, "n1", "n2", "n3") == [b"3", b"0.10000000000000001", b"1e+20"]


class TestErrors:
    @pytest.mark.parametrize("body,error", [
        ("return redis.call('nosuch')", "ERR Unknown Redis command called from script"),
        ("return redis.call('get')", "ERR Wrong number of args calling Redis command from script"),
        ("return redis.call()", "ERR Please specify at least one argument for this redis lib call"),
        ("return redis.call('get', {})",
         "ERR Lua redis lib command arguments must be strings or integers"),
        ("return redis.call('subscribe', 'x')", "ERR This Redis command is not allowed from script"),
        ("return redis.call('blpop', 'x', 0)", "ERR This Redis command is not allowed from script"),
        ("return redis.call('multi')", "ERR This Redis command is not allowed from script"),
        ("return redis.call('eval', 'return 1', 0)",
         "ERR This Redis command is not allowed from script"),
    ])
    def test_call_errors_raise(self, raw, body, error):
        # In tail position the calling frame is gone (LuaJIT), so only the prefix is compared.
        reply = raw.call("EVAL", body, "0")
        assert_err_prefix(reply, error)

    def test_call_error_suffix_names_script_and_line(self, raw):
        body = "local x = 1\nlocal v = redis.call('nosuch')\nreturn v"
        sha = raw.call("SCRIPT", "LOAD", body).decode()
        assert_err(raw.call("EVAL", body, "0"), "ERR Unknown Redis command called from script "
                   "script: %s, on @user_script:2." % sha)

    def test_runtime_errors(self, raw):
        assert_err(raw.call("EVAL", "error('boom')", "0"),
                   "ERR user_script:1: boom script: 82903a0434f1503e152f89c03c9acd881a0e8150, "
                   "on @user_script:1.")
        assert_err(raw.call("EVAL", "error({err='MY boom'})", "0"),
                   "MY boom script: 4c2ee35ef37c857625d6ec6d812eab72377cfa97, on @user_script:1.")

    def test_compile_error(self, raw):
        assert_err(raw.call("EVAL", "syntax error here", "0"),
                   "ERR Error compiling script (new function): user_script:1: '=' expected "
                   "near 'error'")
        assert_err(raw.call("SCRIPT", "LOAD", "syntax error here"),
                   "ERR Error compiling script (new function): user_script:1: '=' expected "
                   "near 'error'")

    @pytest.mark.parametrize("args,error", [
        (["return 1", "-1"], "ERR Number of keys can't be negative"),
        (["return 1", "3", "a"], "ERR Number of keys can't be greater than number of args"),
        (["return 1", "x"], "ERR value is not an integer or out of range"),
    ])
    def test_numkeys_errors(self, raw, args, error):
        assert_err(raw.call("EVAL", *args), error)

    def test_evalsha_unknown(self, raw):
        for sha in ["f" * 40, "abc"]:
            assert_err(raw.call("EVALSHA", sha, "0"), "NOSCRIPT No matching script. Please use EVAL.")

    @pytest.mark.parametrize("body,error", [
        ("return redis.log(99, 'x')", "ERR Invalid debug level."),
        ("return redis.setresp(4)", "ERR RESP version must be 2 or 3."),
        ("return redis.log(1)", "ERR redis.log() requires two arguments or more."),
    ])
    def test_api_argument_errors(self, raw, body, error):
        assert_err_prefix(raw.call("EVAL", body, "0"), error)


class TestSandbox:
    def test_globals_are_protected(self, raw):
        assert_err_prefix(raw.call("EVAL", "x = 1", "0"),
                          "ERR user_script:1: Attempt to modify a readonly table")
        assert_err_prefix(raw.call("EVAL", "return y", "0"),
                          "ERR user_script:1: Script attempted to access nonexistent global "
                          "variable 'y'")
        assert_err_prefix(raw.call("EVAL", "string.len = nil", "0"),
                          "ERR user_script:1: Attempt to modify a readonly table")
        assert_err_prefix(raw.call("EVAL", "rawset(_G, 'x', 1)", "0"),
                          "ERR Attempt to modify a readonly table script: ")
        assert_err_prefix(raw.call("EVAL", "loadstring('z = 1')()", "0"),
                          "ERR [string \"z = 1\"]:1: Attempt to modify a readonly table")

    @pytest.mark.parametrize("name", ["print", "dofile", "loadfile", "os", "io", "debug",
                                      "require", "setfenv", "getfenv", "newproxy", "jit"])
    def test_removed_globals(self, raw, name):
        assert_err_prefix(raw.call("EVAL", "return type(%s)" % name, "0"),
                          "ERR user_script:1: Script attempted to access nonexistent global")

    @pytest.mark.parametrize("name", ["loadstring", "gcinfo", "unpack", "pcall", "xpcall",
                                      "coroutine", "bit", "cjson", "struct", "cmsgpack", "math",
                                      "table", "string", "_G", "tonumber", "select"])
    def test_kept_globals(self, raw, name):
        assert raw.call("EVAL", "return type(%s) ~= 'nil'" % name, "0") == 1

    def test_redis_table(self, r):
        assert r.eval("return redis.sha1hex('')", 0) == SHA_EMPTY.encode()
        assert r.eval("return {redis.REDIS_VERSION, redis.REDIS_VERSION_NUM}", 0) == [
            b"7.0.15", 458767]
        assert r.eval("return {redis.LOG_DEBUG, redis.LOG_VERBOSE, redis.LOG_NOTICE, "
                      "redis.LOG_WARNING}", 0) == [0, 1, 2, 3]
        assert r.eval("return {redis.REPL_NONE, redis.REPL_AOF, redis.REPL_REPLICA, "
                      "redis.REPL_SLAVE, redis.REPL_ALL}", 0) == [0, 1, 2, 2, 3]
        assert r.eval("return redis.replicate_commands()", 0) == 1
        assert r.eval("redis.set_repl(redis.REPL_ALL); redis.log(redis.LOG_WARNING, 'hi'); "
                      "return 1", 0) == 1
        assert r.eval("return redis.breakpoint()", 0) is None
        assert r.eval("return redis.acl_check_cmd('get', 'x')", 0) == 1

    def test_keys_and_argv(self, r):
        assert r.eval("return {KEYS[1], KEYS[2], ARGV[1], #ARGV}", 2, "ka", "kb", "x", "y") == [
            b"ka", b"kb", b"x", 2]
        assert r.eval("return #KEYS", 0) == 0

    def test_select_is_local_to_the_script(self, r):
        r.delete("sel:k")
        assert r.eval("redis.call('select', 3); return redis.call('set', 'sel:k', 1)", 0) == b"OK"
        assert r.exists("sel:k") == 0
        r3 = redis.Redis(host=r.connection_pool.connection_kwargs["host"],
                         port=r.connection_pool.connection_kwargs["port"], db=3)
        assert r3.exists("sel:k") == 1
        r3.delete("sel:k")
        r3.close()


class TestScriptCommands:
    def test_load_exists_evalsha_flush(self, r):
        sha = r.script_load("return 'hello'")
        assert sha == "1b936e3fe509bcbc9cd0664897bbe8fd0cac101b"
        assert r.evalsha(sha, 0) == b"hello"
        assert r.evalsha(sha.upper(), 0) == b"hello"
        assert r.script_exists(sha, "f" * 40) == [True, False]
        assert r.script_flush() is True
        assert r.script_exists(sha) == [False]
        with pytest.raises(redis.exceptions.NoScriptError):
            r.evalsha(sha, 0)

    def test_eval_caches_the_script(self, r):
        r.eval("return 'cached'", 0)
        assert r.script_exists("3b0ec4dbb8c0e5e1e2b1bf8e0e05b3ee5b5d2e2b") == [False]
        sha = r.script_load("return 'cached'")
        assert r.evalsha(sha, 0) == b"cached"

    def test_flush_options(self, raw):
        assert raw.call("SCRIPT", "FLUSH", "ASYNC") == Simple("OK")
        assert raw.call("SCRIPT", "FLUSH", "SYNC") == Simple("OK")
        assert_err(raw.call("SCRIPT", "FLUSH", "X"),
                   "ERR SCRIPT FLUSH only support SYNC|ASYNC option")

    def test_kill_without_script(self, raw):
        assert_err(raw.call("SCRIPT", "KILL"), "NOTBUSY No scripts in execution right now.")

    def test_help(self, raw):
        reply = raw.call("SCRIPT", "HELP")
        assert reply[0].startswith("SCRIPT <subcommand>")

    def test_read_only_forms(self, raw):
        assert_err_prefix(raw.call("EVAL_RO", "return redis.call('set','a',1)", "0"),
                          "ERR Write commands are not allowed from read-only scripts.")
        raw.call("SET", "ro:k", "v")
        assert raw.call("EVAL_RO", "return redis.call('get', KEYS[1])", "1", "ro:k") == b"v"
        sha = raw.call("SCRIPT", "LOAD", "return redis.call('get', KEYS[1])").decode()
        assert raw.call("EVALSHA_RO", sha, "1", "ro:k") == b"v"

    @pytest.mark.parametrize("body,error", [
        ("#!lua flags=bad\nreturn 1", "ERR Unexpected flag in script shebang: bad"),
        ("#!pyth\nreturn 1", "ERR Unexpected engine in script shebang: #!pyth"),
        ("#!lua name=x\nreturn 1", "ERR Unknown lua shebang option: name=x"),
    ])
    def test_shebang_errors(self, raw, body, error):
        assert_err(raw.call("EVAL", body, "0"), error)

    def test_shebang_flags(self, raw):
        assert raw.call("EVAL", "#!lua flags=no-writes,allow-oom\nreturn 1", "0") == 1
        assert raw.call("EVAL", "#!lua\nreturn 2", "0") == 2
        assert_err_prefix(raw.call("EVAL", "#!lua flags=no-writes\nreturn redis.call('set','a',1)",
                                   "0"),
                          "ERR Write commands are not allowed from read-only scripts.")

    def test_inside_multi(self, r):
        r.delete("m:a", "m:b")
        p = r.pipeline(transaction=True)
        p.eval("redis.call('set', KEYS[1], 'x'); return redis.call('set', KEYS[2], 'y')", 2,
               "m:a", "m:b")
        p.get("m:a")
        p.eval("return redis.call('get', 'm:b')", 0)
        assert p.execute() == [b"OK", b"x", b"y"]


class TestAtomicity:
    def test_script_over_keys_of_several_shards(self, r):
        keys = ["at:%d" % i for i in range(16)]
        r.delete(*keys)
        body = """
            for i, k in ipairs(KEYS) do redis.call('set', k, ARGV[1]) end
            local vals = redis.call('mget', unpack(KEYS))
            return #vals"""
        assert r.eval(body, len(keys), *keys, "v") == 16
        assert r.mget(keys) == [b"v"] * 16

    def test_undeclared_keys_before_writing_rerun(self, r):
        r.mset({"ud:%d" % i: str(i) for i in range(20)})
        body = """
            local s = 0
            for i = 0, 19 do s = s + tonumber(redis.call('get', 'ud:' .. i)) end
            redis.call('set', KEYS[1], s)
            return s"""
        assert r.eval(body, 1, "ud:sum") == 190
        assert r.get("ud:sum") == b"190"

    def test_undeclared_keys_after_writing_work_from_the_first_run(self, r):
        r.mset({"uw:%d" % i: "1" for i in range(20)})
        body = """
            redis.call('set', KEYS[1], 'w')
            local n = 0
            for i = 0, 19 do n = n + tonumber(redis.call('get', 'uw:' .. i)) end
            return n"""
        for _ in range(3):
            assert r.eval(body, 1, "uw:dest") == 20

    @pytest.mark.parametrize("first", ["in_multi", "alone"])
    def test_undeclared_keys_inside_multi(self, r, first):
        """A script queued in MULTI that reads keys it did not declare, after writing, works as
        in Redis whether its first run was inside an EXEC or alone."""
        r.mset({"um:%d" % i: "1" for i in range(20)})
        body = """
            redis.call('set', KEYS[1], ARGV[1])
            local n = 0
            for i = 0, 19 do n = n + tonumber(redis.call('get', 'um:' .. i)) end
            return n"""
        if first == "alone":
            assert r.eval(body, 1, "um:dest", "a") == 20
        for i in range(3):
            p = r.pipeline(transaction=True)
            p.eval(body, 1, "um:dest", str(i))
            p.incr("um:7")
            p.get("um:dest")
            assert p.execute() == [20 + i, 2 + i, str(i).encode()]

    def test_declared_keys_scripts_inside_multi(self, r):
        body = "return redis.call('incrby', KEYS[1], ARGV[1])"
        p = r.pipeline(transaction=True)
        p.eval(body, 1, "dm:a", 2)
        p.eval(body, 1, "dm:b", 3)
        assert p.execute() == [2, 3]
        p = r.pipeline(transaction=True)
        p.eval(body, 1, "dm:a", 2)
        p.evalsha(r.script_load(body), 1, "dm:b", 3)
        assert p.execute() == [4, 6]

    def test_learned_scripts_are_counted_when_they_lock_everything(self, server, r):
        if server.kind == "redis":
            pytest.skip("dashkv's INFO field")
        body = "redis.call('set', KEYS[1], 'v'); return redis.call('publish', 'chan', 'm')"
        before = int(r.info("stats")["dashkv_script_runs_undeclared_keys"])
        for _ in range(3):
            assert r.eval(body, 1, "learn:k") == 0
        after = int(r.info("stats")["dashkv_script_runs_undeclared_keys"])
        assert after - before == (2 if server.threads > 1 else 0)

    def test_no_declared_keys(self, r):
        r.mset({"nk:%d" % i: "x" for i in range(20)})
        body = "for i = 0, 19 do redis.call('set', 'nk:' .. i, 'y') end return redis.call('dbsize') > 0"
        assert r.eval(body, 0) == 1
        assert r.mget(["nk:%d" % i for i in range(20)]) == [b"y"] * 20

    def test_transfers_keep_the_total(self, server, r):
        """Scripts move value between keys of different shards while MULTI/EXEC and MGET
        read every key: the total never changes."""
        keys = ["bank:%d" % i for i in range(8)]
        r.mset({k: 100 for k in keys})
        transfer = r.script_load("""
            local a = tonumber(redis.call('get', KEYS[1]))
            local b = tonumber(redis.call('get', KEYS[2]))
            redis.call('set', KEYS[1], a - 1)
            redis.call('set', KEYS[2], b + 1)
            return 1""")
        stop = threading.Event()
        errors = []

        def mover(seed):
            c = redis.Redis(host=server.host, port=server.port)
            i = seed
            try:
                while not stop.is_set():
                    a, b = keys[i % 8], keys[(i * 3 + 1) % 8]
                    if a != b:
                        c.evalsha(transfer, 2, a, b)
                    i += 1
            except Exception as e:  # noqa: BLE001
                errors.append(e)
            finally:
                c.close()

        threads = [threading.Thread(target=mover, args=(s,)) for s in range(3)]
        for t in threads:
            t.start()
        try:
            for _ in range(150):
                assert sum(int(v) for v in r.mget(keys)) == 800
                p = r.pipeline(transaction=True)
                for k in keys:
                    p.get(k)
                assert sum(int(v) for v in p.execute()) == 800
                assert r.eval("local s = 0 for _, k in ipairs(KEYS) do "
                              "s = s + tonumber(redis.call('get', k)) end return s",
                              len(keys), *keys) == 800
        finally:
            stop.set()
            for t in threads:
                t.join()
        assert not errors, errors

    @pytest.mark.parametrize("by", ["evalsha", "eval"])
    def test_pipelined_scripts_keep_their_order(self, r, by):
        body = "local v = redis.call('incr', KEYS[1]) redis.call('set', KEYS[2], v) return v"
        sha = r.script_load(body)
        keys = ["{pl%d}:n" % i for i in range(10)]
        r.delete(*keys, *["{pl%d}:copy" % i for i in range(10)])
        r.evalsha(sha, 2, keys[0], "{pl0}:copy")  # its first run learns its keys
        p = r.pipeline(transaction=False)
        for round_ in range(5):
            for i, k in enumerate(keys):
                if by == "eval":
                    p.eval(body, 2, k, "{pl%d}:copy" % i)
                else:
                    p.evalsha(sha, 2, k, "{pl%d}:copy" % i)
                p.get(k)
            if round_ == 2:
                p.script_flush()  # later calls find (EVAL: add again) the script anew
                if by == "evalsha":
                    p.script_load(body)
        replies = p.execute()
        replies = [x for x in replies if x is not True and x != sha]
        for round_ in range(5):
            for i in range(10):
                n = round_ + 1 + (1 if i == 0 else 0)
                base = (round_ * 10 + i) * 2
                assert replies[base] == n
                assert replies[base + 1] == str(n).encode()
        assert r.mget(["{pl%d}:copy" % i for i in range(10)]) == [b"6"] + [b"5"] * 9

    def test_pipelined_transfers_keep_the_total(self, server, r):
        """Pipelined scripts over hashtagged key pairs (each pair on one shard) while MULTI/EXEC
        reads every key: the total never changes."""
        pairs = [("{acct%d}:a" % i, "{acct%d}:b" % i) for i in range(6)]
        keys = [k for pair in pairs for k in pair]
        r.mset({k: 100 for k in keys})
        move = r.script_load("redis.call('decr', KEYS[1]) return redis.call('incr', KEYS[2])")
        r.evalsha(move, 2, *pairs[0])
        r.evalsha(move, 2, pairs[0][1], pairs[0][0])
        stop = threading.Event()
        errors = []

        def mover():
            c = redis.Redis(host=server.host, port=server.port)
            try:
                while not stop.is_set():
                    p = c.pipeline(transaction=False)
                    for a, b in pairs:
                        p.evalsha(move, 2, a, b)
                        p.evalsha(move, 2, b, a)
                    p.execute()
            except Exception as e:  # noqa: BLE001
                errors.append(e)
            finally:
                c.close()

        t = threading.Thread(target=mover)
        t.start()
        try:
            for _ in range(200):
                p = r.pipeline(transaction=True)
                for k in keys:
                    p.get(k)
                assert sum(int(v) for v in p.execute()) == 1200
        finally:
            stop.set()
            t.join()
        assert not errors, errors

    def test_writes_wake_blocked_clients_after_the_script(self, server, r):
        r.delete("bl:q")
        got = []

        def waiter():
            c = redis.Redis(host=server.host, port=server.port)
            got.append(c.blpop("bl:q", timeout=10))
            c.close()

        t = threading.Thread(target=waiter)
        t.start()
        import time
        deadline = time.time() + 5
        while time.time() < deadline and r.info("clients")["blocked_clients"] == 0:
            time.sleep(0.01)
        assert r.eval("redis.call('rpush', KEYS[1], 'a'); redis.call('rpush', KEYS[1], 'b'); "
                      "return redis.call('lpop', KEYS[1])", 1, "bl:q") == b"a"
        t.join()
        assert got == [(b"bl:q", b"b")]

    def test_watch_is_dirtied_by_script_writes(self, r, server):
        r.set("w:k", "1")
        c = redis.Redis(host=server.host, port=server.port)
        p = c.pipeline(transaction=True)
        p.watch("w:k")
        r.eval("return redis.call('set', KEYS[1], '2')", 1, "w:k")
        p.multi()
        p.get("w:k")
        with pytest.raises(redis.exceptions.WatchError):
            p.execute()
        c.close()


class TestLibraries:
    def test_cjson_roundtrip(self, r):
        assert r.eval("return cjson.encode(cjson.decode('[1,2,{\"a\":3}]'))", 0) in (
            b'[1,2,{"a":3}]',)
        assert r.eval("return cjson.decode('{\"x\": 5}').x", 0) == 5

    def test_bit(self, r):
        assert r.eval("return bit.tohex(bit.bor(0x0f, 0xf0))", 0) == b"000000ff"

    def test_redis_py_lock(self, server, r):
        """redis-py's Lock: acquire, extend, release across connections."""
        lock = r.lock("lock:res", timeout=5)
        assert lock.acquire(blocking=False)
        other = redis.Redis(host=server.host, port=server.port).lock("lock:res", timeout=5)
        assert not other.acquire(blocking=False)
        assert lock.extend(5)
        lock.release()
        assert other.acquire(blocking=False)
        other.release()


class TestBusyScripts:
    """A script running past busy-reply-threshold: -BUSY for the clients that need it, and
    SCRIPT KILL / FUNCTION KILL / SHUTDOWN NOSAVE, at every thread count (the busy script's
    thread serves its clients between Lua instructions)."""

    @pytest.fixture
    def busy_server(self, server, server_factory):
        srv = server_factory(extra_args=["--busy-reply-threshold", "100"]
                             if server.kind == "redis" else ["--busy_reply_threshold", "100"])
        self.spare = []
        yield srv
        for c in self.spare:
            c.close()

    def _run_busy(self, srv, args):
        from resp_client import Closed
        result = {}
        # Connections opened before the script starts: the thread that accepts new ones may be
        # the one the script will hold.
        self.spare = [srv.raw(timeout=2) for _ in range(8)]

        def run():
            c = srv.raw(timeout=60)
            try:
                result["reply"] = c.call(*args)
            except Closed:
                result["reply"] = None  # SHUTDOWN NOSAVE closed it
            c.close()

        t = threading.Thread(target=run)
        t.start()
        return t, result

    def _call_from_another_thread(self, srv, *cmd):
        """Sends `cmd` on new connections until one answers (a connection that lands on the
        busy script's thread waits for the script; it is dropped)."""
        import socket
        import time
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            for c in list(self.spare):
                try:
                    reply = c.call(*cmd)
                except (socket.timeout, TimeoutError):
                    self.spare.remove(c)  # on the script's thread: its reply would come later
                    c.close()
                    continue
                # Until the script has run past busy-reply-threshold there is nothing to kill.
                if reply != "NOTBUSY No scripts in execution right now.":
                    return reply
                break
            else:
                break
            time.sleep(0.02)
        raise AssertionError("no connection answered %r" % (cmd,))

    def _kill(self, srv, *cmd):
        return [self._call_from_another_thread(srv, *cmd)]

    def _wait_busy(self, srv, key):
        """Returns once a command on `key` is answered -BUSY."""
        reply = None
        for _ in range(500):
            reply = self._call_from_another_thread(srv, "GET", key)
            if str(reply).startswith("BUSY"):
                return
            time.sleep(0.01)
        raise AssertionError("never busy: %r" % (reply,))

    BUSY_EVAL = "BUSY Redis is busy running a script. You can only call SCRIPT KILL or " \
                "SHUTDOWN NOSAVE."
    BUSY_FUNCTION = "BUSY Redis is busy running a script. You can only call FUNCTION KILL or " \
                    "SHUTDOWN NOSAVE."

    def test_commands_on_the_scripts_keys_get_busy(self, busy_server):
        t, result = self._run_busy(busy_server, ["EVAL", "local i = 0 while true do i = i + 1 "
                                                 "end", "1", "{busy}:k"])
        self._wait_busy(busy_server, "{busy}:k")
        # Every connection, whatever its thread, is refused a command on the script's shard,
        # also inside MULTI (which then fails), and SHUTDOWN without NOSAVE.
        for c in self.spare:
            assert_err(c.call("SET", "{busy}:other", "v"), self.BUSY_EVAL)
            assert c.call("MULTI") == Simple("OK")
            assert_err(c.call("INCR", "{busy}:n"), self.BUSY_EVAL)
            assert c.call("DISCARD") == Simple("OK")
            assert_err(c.call("SHUTDOWN"), self.BUSY_EVAL)
        assert self._kill(busy_server, "SCRIPT", "KILL")[-1] == Simple("OK")
        t.join(30)
        assert not t.is_alive()
        c = busy_server.raw()
        assert c.call("SET", "{busy}:other", "v") == Simple("OK")
        assert c.call("GET", "{busy}:n") is None
        c.close()

    def test_function_busy_text(self, busy_server):
        c = busy_server.raw()
        c.call("FUNCTION", "LOAD", "#!lua name=busy2\nredis.register_function{function_name="
               "'spin2', callback=function() while true do end end, flags={'no-writes'}}")
        c.close()
        t, result = self._run_busy(busy_server, ["FCALL", "spin2", "1", "{busy}:f"])
        self._wait_busy(busy_server, "{busy}:f")
        for c in self.spare:
            assert_err(c.call("GET", "{busy}:f"), self.BUSY_FUNCTION)
            assert_err(c.call("SCRIPT", "KILL"), self.BUSY_EVAL.replace(
                "SCRIPT KILL", "FUNCTION KILL"))
        assert self._kill(busy_server, "FUNCTION", "KILL")[-1] == Simple("OK")
        t.join(30)
        assert not t.is_alive()

    @pytest.mark.dashkv_only
    def test_other_shards_keep_serving(self, server, busy_server):
        """With several threads, keys on the shards the script does not hold are still served
        (by connections on other threads); Redis answers -BUSY to every client."""
        if server.threads < 2:
            pytest.skip("one thread: every client waits on the script's thread")
        c = busy_server.raw()
        keys = ["free:%d" % i for i in range(32)]
        for k in keys:
            c.call("SET", k, k)
        # Its first run learns that it keeps to its key; later runs hold only that key's shard.
        body = "if ARGV[1] == 'spin' then while true do end end return 1"
        assert c.call("EVAL", body, "1", "{busy}:k", "once") == 1
        c.close()
        t, result = self._run_busy(busy_server, ["EVAL", body, "1", "{busy}:k", "spin"])
        self._wait_busy(busy_server, "{busy}:k")
        served = 0
        for c in self.spare:
            for k in keys:
                reply = c.call("GET", k)
                if reply == k.encode():
                    served += 1
                else:
                    assert_err(reply, self.BUSY_EVAL)
        assert served > 0
        assert self._kill(busy_server, "SCRIPT", "KILL")[-1] == Simple("OK")
        t.join(30)
        assert not t.is_alive()

    def test_script_kill_stops_a_read_only_loop(self, busy_server):
        t, result = self._run_busy(busy_server, ["EVAL", "local i = 0 while true do i = i + 1 end",
                                                 "0"])
        replies = self._kill(busy_server, "SCRIPT", "KILL")
        t.join(30)
        assert not t.is_alive()
        assert replies[-1] == Simple("OK"), replies
        assert_err_prefix(result["reply"], "ERR Script killed by user with SCRIPT KILL...")
        c = busy_server.raw()
        assert_err(c.call("SCRIPT", "KILL"), "NOTBUSY No scripts in execution right now.")
        c.close()

    def test_pcall_cannot_catch_the_kill(self, busy_server):
        body = "while true do pcall(function() local i = 0 while true do i = i + 1 end end) end"
        t, result = self._run_busy(busy_server, ["EVAL", body, "0"])
        replies = self._kill(busy_server, "SCRIPT", "KILL")
        t.join(30)
        assert not t.is_alive() and replies[-1] == Simple("OK"), replies
        assert_err_prefix(result["reply"], "ERR Script killed by user with SCRIPT KILL...")

    def test_function_kill(self, busy_server):
        c = busy_server.raw()
        c.call("FUNCTION", "LOAD", "#!lua name=busy\nredis.register_function{function_name="
               "'spin', callback=function() while true do end end, flags={'no-writes'}}")
        c.close()
        t, result = self._run_busy(busy_server, ["FCALL", "spin", "0"])
        replies = self._kill(busy_server, "FUNCTION", "KILL")
        t.join(30)
        assert replies[-1] == Simple("OK"), replies
        assert_err_prefix(result["reply"], "ERR Script killed by user with SCRIPT KILL...")

    def test_a_script_that_wrote_is_unkillable_until_shutdown_nosave(self, busy_server):
        t, result = self._run_busy(busy_server, ["EVAL", "redis.call('set', KEYS[1], 'x') "
                                                 "while true do end", "1", "busy:k"])
        replies = self._kill(busy_server, "SCRIPT", "KILL")
        assert str(replies[-1]).startswith("UNKILLABLE Sorry the script already executed write "
                                           "commands against the dataset."), replies
        from resp_client import Closed
        try:
            self._call_from_another_thread(busy_server, "SHUTDOWN", "NOSAVE")
        except Closed:
            pass  # the server closed the connection: it is exiting
        assert busy_server.proc.wait(timeout=30) == 0
        t.join(30)
