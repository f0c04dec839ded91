"""SORT and SORT_RO: options, patterns, errors and RESP3 reply types as Redis 7.0.15; STORE;
scripts and MULTI; hostile input; a randomized comparison with a live redis-server; keys on
several shards (--threads 2 and 4) and the atomicity of SORT ... BY/GET against concurrent
writers on other shards.

Redis's SORT without sorting (BY nosort) keeps a set's iteration order, which differs between
implementations: such replies are compared by length only. ALPHA with BY leaves ties (missing
or equal BY values) in an unspecified order: the randomized cases give ALPHA BY distinct values.
"""

import os
import random
import shutil
import threading

import pytest
import redis

from conftest import Server
from helpers import ERR_NOT_INT, ERR_SYNTAX, WRONGTYPE, arity, assert_err, wait_until
from resp_client import Map, Set, encode

ERR_NOT_DOUBLE = "ERR One or more scores can't be converted into double"
HAVE_REDIS = shutil.which(os.environ.get("REDIS_SERVER_BIN", "redis-server")) is not None


def client(srv, **kw):
    return redis.Redis(host=srv.host, port=srv.port, socket_timeout=60, **kw)


@pytest.fixture
def c(srv):
    """A bytes client on a flushed server (session or --threads 4)."""
    cl = client(srv)
    cl.flushall()
    yield cl
    cl.close()


def sort(c, *args):
    return c.execute_command("SORT", *args)


class TestBasics:
    def test_numeric_alpha_desc(self, c):
        c.rpush("l", 3, 10, 1, "2.5", "-inf", " 7", "0x10")
        assert sort(c, "l") == [b"-inf", b"1", b"2.5", b"3", b" 7", b"10", b"0x10"]
        assert sort(c, "l", "DESC") == [b"0x10", b"10", b" 7", b"3", b"2.5", b"1", b"-inf"]
        assert sort(c, "l", "ALPHA") == [b" 7", b"-inf", b"0x10", b"1", b"10", b"2.5", b"3"]
        assert c.execute_command("SORT_RO", "l", "alpha", "desc", "limit", 0, 2) == [b"3",
                                                                                   b"2.5"]

    def test_equal_scores_order_by_element_bytes(self, c):
        c.rpush("l", "b", "a", "c")
        c.mset({"w_a": 1, "w_b": 1, "w_c": 0})
        assert sort(c, "l", "BY", "w_*") == [b"c", b"a", b"b"]
        assert sort(c, "l", "BY", "w_*", "DESC") == [b"b", b"a", b"c"]
        c.rpush("n", "01", "1", "1.0")
        assert sort(c, "n") == [b"01", b"1", b"1.0"]

    def test_score_parsing_as_strtod(self, c):
        for good in ("", " 1", "0x10", "inf", "-inf", "infinity", "0x1p3", ".5", "5.", "+3"):
            c.delete("l")
            c.rpush("l", good, 7)
            assert len(sort(c, "l")) == 2, good
        c.delete("l")
        c.rpush("l", b"12\x00ab", 7)  # strtod stops at the NUL
        assert sort(c, "l") == [b"7", b"12\x00ab"]
        # (Redis leaves errno as an ERANGE left it, which can fail a later valid SORT on the
        # same connection: the out-of-range cases come last.)
        for bad in ("1 ", "nan", "abc", "1_0", "1e500", "1e-400", "1e-310"):
            c.delete("l")
            c.rpush("l", bad, 7)
            with pytest.raises(redis.ResponseError, match="can't be converted into double"):
                sort(c, "l")

    def test_empty_string_sorts_as_zero(self, c):
        c.rpush("l", 1, "", -1)
        assert sort(c, "l") == [b"-1", b"", b"1"]

    def test_missing_key_and_wrong_type(self, c):
        assert sort(c, "nokey") == []
        assert sort(c, "nokey", "STORE", "dst") == 0
        c.set("s", "x")
        c.hset("h", "a", 1)
        for k in ("s", "h"):
            with pytest.raises(redis.ResponseError, match="WRONGTYPE"):
                sort(c, k)
            with pytest.raises(redis.ResponseError, match="WRONGTYPE"):
                c.execute_command("SORT_RO", k)

    def test_sets_and_sorted_sets(self, c):
        c.sadd("s", 5, 3, 9)
        c.zadd("z", {"x": 3, "y": 1, "z": 2})
        assert sort(c, "s") == [b"3", b"5", b"9"]
        assert sort(c, "z", "ALPHA", "DESC") == [b"z", b"y", b"x"]
        assert sort(c, "z", "BY", "nosort") == [b"y", b"z", b"x"]
        assert sort(c, "z", "BY", "nosort", "DESC") == [b"x", b"z", b"y"]
        assert sort(c, "z", "BY", "nosort", "LIMIT", 1, 1) == [b"z"]
        assert sort(c, "z", "BY", "nosort", "DESC", "LIMIT", 1, 5) == [b"z", b"y"]


class TestNosortAndLimit:
    def test_list_keeps_its_order_and_desc_reverses_it(self, c):
        c.rpush("l", 5, 3, 1, 4, 2)
        assert sort(c, "l", "BY", "nosort") == [b"5", b"3", b"1", b"4", b"2"]
        assert sort(c, "l", "BY", "nosort", "DESC") == [b"2", b"4", b"1", b"3", b"5"]
        assert sort(c, "l", "BY", "nosort", "DESC", "LIMIT", 1, 2) == [b"4", b"1"]
        assert sort(c, "l", "BY", "nokey", "LIMIT", 3, 9) == [b"4", b"2"]

    def test_a_constant_by_stops_sorting_even_before_another_by(self, c):
        c.rpush("l", "b", "a")
        c.mset({"w_a": 1, "w_b": 2})
        assert sort(c, "l", "BY", "nosort", "BY", "w_*") == [b"b", b"a"]
        assert sort(c, "l", "BY", "w_*", "BY", "nosort") == [b"b", b"a"]
        assert sort(c, "l", "BY", "w_*") == [b"a", b"b"]

    @pytest.mark.parametrize("start,count,expected,nosort", [
        (0, -1, [1, 2, 3, 4, 5], [5, 3, 1, 4, 2]),
        (-5, 2, [1, 2], [5, 3]),
        (2, 9223372036854775807, [3, 4, 5], [1, 4, 2]),
        (1, 9223372036854775806, [2, 3, 4, 5], [3, 1, 4, 2]),
        (3, -9223372036854775808, [4, 5], [4, 2]),
        (9223372036854775807, 9223372036854775807, [], []),
        (9223372036854775806, 2, [], []),
        (5, 1, [], []),
        (4, 1, [5], [2]),
        (4, 0, [], []),
        (-1, -1, [1, 2, 3, 4, 5], [5, 3, 1, 4, 2]),
    ])
    def test_limit_edges(self, c, start, count, expected, nosort):
        c.rpush("l", 5, 3, 1, 4, 2)
        assert sort(c, "l", "LIMIT", start, count) == [b"%d" % v for v in expected]
        assert sort(c, "l", "BY", "nosort", "LIMIT", start, count) == [b"%d" % v
                                                                        for v in nosort]

    def test_set_nosort_sorted_when_stored_or_in_a_script(self, c):
        members = [b"b", b"a", b"c", b"d", b"e", b"f", b"g", b"h"]
        c.sadd("s", *members)
        assert sorted(sort(c, "s", "BY", "nosort")) == sorted(members)
        assert sort(c, "s", "BY", "nosort", "DESC", "STORE", "d") == 8
        assert c.lrange("d", 0, -1) == sorted(members, reverse=True)
        script = "return redis.call('sort', KEYS[1], 'by', 'nosort', 'limit', 1, 3)"
        for _ in range(3):  # dashkv: a first run that learns the script's keys, then others
            assert c.eval(script, 1, "s") == [b"b", b"c", b"d"]
        c.sadd("i", 30, 10, 20)  # an intset's own order is ascending
        assert sort(c, "i", "BY", "nosort", "DESC") == [b"10", b"20", b"30"]


class TestPatterns:
    def test_get_and_by_patterns(self, c):
        c.rpush("l", "a", "b", "c")
        c.mset({"w_a": 3, "w_b": 1, "x_a_y": "XA"})
        c.hset("h_c", "f", 2)
        c.lpush("w_c", 1)  # a list where a string is looked for: missing
        assert sort(c, "l", "BY", "w_*", "GET", "#", "GET", "x_*_y", "GET", "h_*->f",
                    "GET", "w_*", "GET", "nostar", "GET", "h_*->", "GET", "*->f") == [
            b"c", None, b"2", None, None, None, None,
            b"b", None, None, b"1", None, None, None,
            b"a", b"XA", None, b"3", None, None, None]

    def test_by_hash_field(self, c):
        c.rpush("l", "a", "b", "c")
        c.hset("h_a", "f", 10)
        c.hset("h_b", "f", 2)
        c.hset("h_c", "g", 1)  # no field f: weight 0
        assert sort(c, "l", "BY", "h_*->f") == [b"c", b"b", b"a"]
        assert sort(c, "l", "BY", "h_*->f", "ALPHA") == [b"c", b"a", b"b"]
        c.set("h_b", "str")  # a string where a hash is looked for: missing
        assert sort(c, "l", "BY", "h_*->f", "DESC", "GET", "h_*->f") == [b"10", None, None]

    def test_only_the_first_star_is_replaced(self, c):
        c.rpush("l", "a")
        c.set("k_a_*", "v1")
        c.hset("h_a*", "f*", "v2")
        assert sort(c, "l", "BY", "nosort", "GET", "k_*_*", "GET", "h_**->f*") == [b"v1", b"v2"]

    def test_arrow_before_the_star_is_part_of_the_key(self, c):
        c.rpush("l", "a")
        c.set("x->ya", "v")
        c.set("ya->", "w")
        assert sort(c, "l", "BY", "nosort", "GET", "x->y*", "GET", "y*->") == [b"v", b"w"]

    def test_by_missing_keys_sort_as_zero(self, c):
        c.rpush("l", 2, -1, 1)
        c.mset({"w_2": -5, "w_1": 0.5})
        assert sort(c, "l", "BY", "w_*") == [b"2", b"-1", b"1"]
        c.set("w_-1", "notanumber")
        with pytest.raises(redis.ResponseError, match="can't be converted into double"):
            sort(c, "l", "BY", "w_*")
        assert sort(c, "l", "BY", "w_*", "ALPHA") == [b"2", b"1", b"-1"]

    def test_expired_pattern_keys_read_as_missing(self, c):
        c.rpush("l", "a")
        c.set("g_a", "v", px=1)
        c.set("k", "x", px=1)
        wait_until(lambda: c.pttl("k") == -2, what="k to expire")  # so has g_a, set before it
        assert sort(c, "l", "ALPHA", "GET", "g_*") == [None]


class TestStore:
    def test_store_replaces_any_value_and_ttl(self, c):
        c.rpush("l", 3, 1, 2)
        c.hset("dst", "a", 1)
        c.expire("dst", 100)
        assert sort(c, "l", "STORE", "dst") == 3
        assert c.lrange("dst", 0, -1) == [b"1", b"2", b"3"]
        assert c.ttl("dst") == -1 and c.type("dst") == b"list"

    def test_empty_result_deletes_destination(self, c):
        c.rpush("l", 3, 1, 2)
        c.set("dst", "x")
        assert sort(c, "l", "LIMIT", 5, 5, "STORE", "dst") == 0
        assert c.exists("dst") == 0
        c.set("dst", "x")
        assert sort(c, "nokey", "STORE", "dst") == 0
        assert c.exists("dst") == 0

    def test_missing_get_values_stored_as_empty_strings(self, c):
        c.rpush("l", "a", "b")
        c.set("g_a", "A")
        assert sort(c, "l", "ALPHA", "GET", "g_*", "GET", "#", "STORE", "dst") == 4
        assert c.lrange("dst", 0, -1) == [b"A", b"a", b"", b"b"]

    def test_store_into_the_source(self, c):
        c.rpush("l", 3, 1, 2)
        assert sort(c, "l", "DESC", "STORE", "l") == 3
        assert c.lrange("l", 0, -1) == [b"3", b"2", b"1"]

    def test_failed_sort_stores_nothing(self, c):
        c.rpush("l", "x", 1)
        c.set("dst", "keep")
        with pytest.raises(redis.ResponseError, match="can't be converted"):
            sort(c, "l", "STORE", "dst")
        assert c.get("dst") == b"keep"

    def test_last_store_wins(self, c):
        c.rpush("l", 2, 1)
        assert sort(c, "l", "STORE", "d1", "STORE", "d2") == 2
        assert c.exists("d1") == 0 and c.lrange("d2", 0, -1) == [b"1", b"2"]

    def test_store_serves_a_blocked_pop(self, c, srv):
        c.rpush("l", 3, 1, 2)
        b = srv.raw()
        try:
            b.send(encode("BLPOP", "dst", "0"))
            wait_until(lambda: c.info("clients")["blocked_clients"] == 1,
                       what="BLPOP to block")
            assert sort(c, "l", "STORE", "dst") == 3
            assert b.read() == [b"dst", b"1"]
            assert c.lrange("dst", 0, -1) == [b"2", b"3"]
        finally:
            b.close()

    def test_keyspace_events(self, c):
        c.config_set("notify-keyspace-events", "El")
        p = c.pubsub()
        try:
            p.psubscribe("__keyevent@0__:*")
            m = p.get_message(timeout=5)
            assert m is not None and m["type"] == "psubscribe"
            c.config_set("notify-keyspace-events", "Elg")
            c.rpush("l", 2, 1)
            assert sort(c, "l", "STORE", "dst") == 2
            assert sort(c, "nokey", "STORE", "dst") == 0
            assert sort(c, "nokey", "STORE", "dst") == 0  # nothing to delete: no event
            c.set("end", 1)
            c.delete("end")
            seen = []
            while not seen or seen[-1] != (b"__keyevent@0__:del", b"end"):
                m = p.get_message(timeout=5)
                assert m is not None, seen
                if m["type"] == "pmessage":
                    seen.append((m["channel"], m["data"]))
            assert seen == [(b"__keyevent@0__:rpush", b"l"),
                            (b"__keyevent@0__:sortstore", b"dst"),
                            (b"__keyevent@0__:del", b"dst"),
                            (b"__keyevent@0__:del", b"end")]
        finally:
            p.close()
            c.config_set("notify-keyspace-events", "")

    def test_alpha_store_compares_every_byte(self, c):
        c.rpush("l", b"a\x00b", b"a\x00a", b"a")
        assert sort(c, "l", "ALPHA", "STORE", "dst") == 3
        assert c.lrange("dst", 0, -1) == [b"a", b"a\x00a", b"a\x00b"]


class TestErrors:
    def test_error_texts(self, raw):
        raw.call("RPUSH", "l", "1")
        raw.call("SET", "s", "x")
        assert_err(raw.call("SORT"), arity("sort"))
        assert_err(raw.call("SORT_RO"), arity("sort_ro"))
        assert_err(raw.call("SORT", "l", "BADOPT"), ERR_SYNTAX)
        assert_err(raw.call("SORT", "s", "BADOPT"), ERR_SYNTAX)  # options before the type
        assert_err(raw.call("SORT", "s", "LIMIT", "x", "1"), ERR_NOT_INT)
        assert_err(raw.call("SORT", "l", "LIMIT", "1", "99999999999999999999"), ERR_NOT_INT)
        assert_err(raw.call("SORT", "l", "LIMIT", "1"), ERR_SYNTAX)
        assert_err(raw.call("SORT", "l", "BY"), ERR_SYNTAX)
        assert_err(raw.call("SORT", "l", "GET"), ERR_SYNTAX)
        assert_err(raw.call("SORT", "l", "STORE"), ERR_SYNTAX)
        assert_err(raw.call("SORT_RO", "l", "STORE", "d"), ERR_SYNTAX)
        assert_err(raw.call("SORT", "s"), WRONGTYPE)
        assert_err(raw.call("SORT", "s", "BY", "w_*", "GET", "#", "STORE", "d"), WRONGTYPE)
        raw.call("RPUSH", "bad", "x")
        assert_err(raw.call("SORT", "bad"), ERR_NOT_DOUBLE)
        assert_err(raw.call("SORT", "bad", "GET", "x_*", "STORE", "d"), ERR_NOT_DOUBLE)

    def test_resp3_reply_types(self, raw):
        raw.call("HELLO", "3")
        raw.call("RPUSH", "l", "b", "a")
        raw.call("SET", "g_a", "A")
        assert raw.call("SORT", "l", "ALPHA", "GET", "g_*", "GET", "#") == [b"A", b"a", None,
                                                                          b"b"]
        assert raw.call("SORT", "l", "ALPHA", "STORE", "d") == 2
        assert raw.call("SORT_RO", "nokey") == []

    def test_command_info_and_getkeys(self, raw):
        raw.call("HELLO", "3")
        notes_pattern = (b"For the optional BY/GET keyword. It is marked 'unknown' because "
                         b"the key names derive from the content of the key we sort")
        notes_store = (b"For the optional STORE keyword. It is marked 'unknown' because the "
                       b"keyword can appear anywhere in the argument array")
        unknown = [b"begin_search", [b"type", b"unknown", b"spec", []],
                   b"find_keys", [b"type", b"unknown", b"spec", []]]
        index = [b"begin_search", [b"type", b"index", b"spec", [b"index", 1]],
                 b"find_keys", [b"type", b"range", b"spec",
                                [b"lastkey", 0, b"keystep", 1, b"limit", 0]]]
        for name, flags, cat, specs in (
                ("sort", ["write", "denyoom", "movablekeys"], "@write",
                 [[b"flags", ["RO", "access"]] + index,
                  [b"notes", notes_pattern, b"flags", ["RO", "access"]] + unknown,
                  [b"notes", notes_store, b"flags", ["OW", "update"]] + unknown]),
                ("sort_ro", ["readonly", "movablekeys"], "@read",
                 [[b"flags", ["RO", "access"]] + index,
                  [b"notes", notes_pattern, b"flags", ["RO", "access"]] + unknown])):
            info = raw.call("COMMAND", "INFO", name)[0]
            assert info[:6] == [name.encode(), -2, flags, 1, 1, 1]
            assert isinstance(info[2], Set)
            assert sorted(info[6]) == sorted([cat, "@set", "@sortedset", "@list", "@slow",
                                              "@dangerous"])
            assert info[7] == []
            assert [_plain(s) for s in info[8]] == specs
        assert raw.call("COMMAND", "GETKEYS", "SORT", "a", "STORE", "b", "STORE", "c") == [
            b"a", b"c"]
        assert raw.call("COMMAND", "GETKEYS", "SORT", "a", "LIMIT", "store", "1", "STORE",
                        "x") == [b"a", b"x"]
        assert raw.call("COMMAND", "GETKEYS", "SORT", "a", "GET", "store", "BY", "store") == [
            b"a"]
        assert raw.call("COMMAND", "GETKEYS", "SORT_RO", "a", "STORE", "b") == [b"a"]


def _plain(v):
    """A RESP3 map as a flat list (keys in reply order), recursively."""
    if isinstance(v, Map):
        out = []
        for k, x in v:
            out += [k, _plain(x)]
        return out
    if isinstance(v, list) and not isinstance(v, Set):
        return [_plain(x) for x in v]
    return v


class TestScriptsAndTransactions:
    def test_script_calls_sort_with_patterns_and_store(self, c):
        for i in range(40):
            c.rpush("src", i)
            c.set("w_%d" % i, 40 - i)
            c.set("g_%d" % i, "v%d" % i)
        script = ("local n = redis.call('SORT', KEYS[1], 'BY', 'w_*', 'GET', 'g_*', 'STORE',"
                  " KEYS[2]) return {n, redis.call('SORT_RO', KEYS[1], 'BY', 'w_*', 'LIMIT', 0,"
                  " 3, 'GET', '#', 'GET', 'g_*')}")
        assert c.eval(script, 2, "src", "dst") == [40, [b"39", b"v39", b"38", b"v38", b"37",
                                                        b"v37"]]
        assert c.lrange("dst", 0, -1) == [b"v%d" % i for i in range(39, -1, -1)]
        assert c.eval("return redis.call('SORT', KEYS[1], 'LIMIT', 0, 2)", 1, "src") == [
            b"0", b"1"]
        assert c.execute_command("EVAL_RO", "return redis.call('SORT_RO', KEYS[1], 'DESC',"
                                 " 'LIMIT', 0, 1)", 1, "src") == [b"39"]
        with pytest.raises(redis.ResponseError, match="Write commands are not allowed"):
            c.execute_command("EVAL_RO", "return redis.call('SORT', KEYS[1])", 1, "src")

    def test_multi_exec(self, c):
        c.rpush("src", 2, 1, 3)
        c.mset({"w_1": 3, "w_2": 2, "w_3": 1})
        p = c.pipeline(transaction=True)
        p.sort("src", by="w_*", store="dst")
        p.set("w_1", 0)
        p.sort("src", by="w_*")
        p.execute_command("SORT_RO", "dst", "BY", "nosort", "DESC")
        assert p.execute() == [3, True, [b"1", b"3", b"2"], [b"1", b"2", b"3"]]

    def test_watch_sees_store_but_not_a_plain_sort(self, c, srv):
        c.rpush("src", 2, 1)
        w = client(srv)
        try:
            with w.pipeline() as p:
                p.watch("src", "dst")
                sort(c, "src")
                sort(c, "src", "BY", "nosort", "GET", "x_*")
                p.multi()
                p.ping()
                assert p.execute() == [True]
            with w.pipeline() as p:
                p.watch("dst")
                sort(c, "src", "STORE", "dst")
                p.multi()
                p.ping()
                with pytest.raises(redis.WatchError):
                    p.execute()
        finally:
            w.close()


class TestHostileInput:
    def test_huge_limits_and_many_gets(self, c):
        c.rpush("l", *range(10))
        for i in range(10):
            c.set("g_%d" % i, "v%d" % i)
        assert sort(c, "l", "LIMIT", 0, 9223372036854775807) == [b"%d" % i for i in range(10)]
        assert sort(c, "l", "LIMIT", 9223372036854775807, -1) == []
        gets = []
        for k in range(3000):
            gets += ["GET", "#" if k % 3 == 0 else ("g_*" if k % 3 == 1 else "missing_*")]
        reply = sort(c, "l", "DESC", "LIMIT", 2, 3, *gets)
        assert len(reply) == 3 * 3000
        row = [b"7", b"v7", None] * 1000
        assert reply[:3000] == row
        assert sort(c, "l", "LIMIT", 0, 2, "STORE", "dst", *gets) == 6000
        assert c.llen("dst") == 6000

    def test_pattern_keys_of_every_type(self, c):
        c.rpush("l", "a", "b", "c", "d", "e")
        c.rpush("w_a", 1)
        c.sadd("w_b", 1)
        c.zadd("w_c", {"x": 1})
        c.hset("w_d", "f", 1)
        c.set("w_e", -1)
        assert sort(c, "l", "BY", "w_*", "GET", "#", "GET", "w_*", "GET", "w_*->f") == [
            b"e", b"-1", None, b"a", None, None, b"b", None, None, b"c", None, None,
            b"d", None, b"1"]

    def test_long_elements_and_keys(self, c):
        big = [b"x" * 300000 + bytes([i]) for i in range(5)]
        c.rpush("l", *reversed(big))
        for i, e in enumerate(big):
            c.set(b"w_" + e, i)
        assert sort(c, "l", "ALPHA") == big
        assert sort(c, "l", "BY", "w_*", "DESC", "GET", "w_*") == [b"4", b"3", b"2", b"1", b"0"]

    def test_large_list_with_by_and_limit(self, c):
        n = 100000
        rnd = random.Random(7)
        vals = [rnd.randrange(1 << 30) for _ in range(n)]
        p = c.pipeline(transaction=False)
        for i in range(0, n, 5000):
            p.rpush("big", *vals[i:i + 5000])
        weights = {}
        for i in range(0, 2000):
            weights["w_%d" % vals[i]] = -i
        p.mset(weights)
        p.execute()
        expected = sorted(vals)
        assert sort(c, "big", "LIMIT", 50000, 5) == [b"%d" % v for v in expected[50000:50005]]
        top = sort(c, "big", "BY", "w_*", "LIMIT", 0, 3)
        assert top == [b"%d" % vals[i] for i in (1999, 1998, 1997)]
        assert sort(c, "big", "STORE", "dst") == n
        assert c.lrange("dst", -2, -1) == [b"%d" % v for v in expected[-2:]]


# ---- cross-shard atomicity ---------------------------------------------------------------

N_ATOMIC = 64


def _version_state(v):
    """The weights and GET values of version v: w_i = (i * 7 + v) % N, g_i = v."""
    state = {}
    for i in range(N_ATOMIC):
        state["w_%d" % i] = (i * 7 + v) % N_ATOMIC
        state["g_%d" % i] = v
    return state


def _expected_order(v):
    return sorted(range(N_ATOMIC), key=lambda i: (i * 7 + v) % N_ATOMIC)


def _check_snapshot(reply):
    """reply: rows of (#, g_*) from SORT l BY w_* GET # GET g_*. Returns the version seen;
    fails when the rows mix versions or their order is not that version's."""
    elems = [int(reply[k]) for k in range(0, len(reply), 2)]
    versions = {reply[k] for k in range(1, len(reply), 2)}
    assert len(versions) == 1, "torn read: versions %s" % sorted(versions)
    v = int(versions.pop())
    assert elems == _expected_order(v), "order of version %d torn" % v
    return v


def test_sort_by_get_is_atomic_against_writers_on_other_shards(srv):
    c = client(srv)
    c.flushall()
    c.rpush("l", *range(N_ATOMIC))
    c.mset(_version_state(0))
    stop = threading.Event()
    errors = []

    def writer():
        w = client(srv)
        try:
            v = 1
            while not stop.is_set():
                w.mset(_version_state(v))
                v += 1
        except Exception as e:  # reported by the main thread
            errors.append(e)
        finally:
            w.close()

    threads = [threading.Thread(target=writer) for _ in range(2)]
    for t in threads:
        t.start()
    try:
        seen = set()
        for k in range(300):
            if k % 3 == 0:
                seen.add(_check_snapshot(sort(c, "l", "BY", "w_*", "GET", "#", "GET", "g_*")))
            elif k % 3 == 1:
                assert sort(c, "l", "BY", "w_*", "GET", "#", "GET", "g_*", "STORE", "dst") == \
                    2 * N_ATOMIC
                seen.add(_check_snapshot(c.lrange("dst", 0, -1)))
            else:
                seen.add(_check_snapshot(c.execute_command(
                    "SORT_RO", "l", "BY", "w_*", "GET", "#", "GET", "g_*")))
        # The writers really ran during the reads.
        assert len(seen) > 1
    finally:
        stop.set()
        for t in threads:
            t.join(timeout=60)
    assert not errors, errors
    c.close()


# ---- randomized comparison with redis-server ---------------------------------------------

@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    if not HAVE_REDIS:
        pytest.skip("redis-server not installed")
    s = Server("redis", 1, tmp_path_factory.mktemp("sort-reference"))
    s.start()
    yield s
    s.stop()


def _random_element(rnd, numeric, allow_nul):
    kind = rnd.randrange(8)
    if numeric or kind < 3:
        return rnd.choice([str(rnd.randint(-50, 50)), "%.3f" % rnd.uniform(-100, 100),
                           str(rnd.randint(-(1 << 62), 1 << 62)), "1e%d" % rnd.randint(-5, 5),
                           "0x%x" % rnd.randrange(256), "inf", "-inf", ""]).encode()
    if kind == 3 and allow_nul:
        return b"n\x00" + bytes([rnd.randrange(97, 100)])
    if kind == 4:
        return bytes(rnd.randrange(1, 256) for _ in range(rnd.randrange(1, 4)))
    return ("".join(rnd.choice("abcdefgXYZ") for _ in range(rnd.randrange(1, 6)))).encode()


def _build_case(rnd):
    """A random source and patterns' keys, and a random SORT call; returns (commands, call,
    store, unordered): `unordered` when the reply's order is the implementation's."""
    tag = rnd.choice([b"", b"{t}"])  # with a tag every key shares the source's shard
    cmds, call, store, unordered = _build_untagged_case(rnd)
    if tag:
        def tagged(a):
            if isinstance(a, str):
                a = a.encode()
            if a in (b"src", b"dst") or a[:2] in (b"w_", b"h_", b"g_") or a[:3] == b"gh_":
                return tag + a
            return a
        cmds = [[c[0]] + [tagged(a) if i == 0 else a for i, a in enumerate(c[1:])]
                for c in cmds]
        call = call[:2] + [tagged(a) if prev in ("BY", "GET", "STORE") and a != "#" else a
                           for prev, a in zip(call[1:], call[2:])]
        call[1] = tag + b"src"
    return cmds, call, store, unordered


def _build_untagged_case(rnd):
    src_type = rnd.choice(["list", "set", "zset"])
    alpha = rnd.random() < 0.5
    by = rnd.choice([None, None, "w_*", "h_*->f", "nosort", "w_*->f"])
    numeric = not alpha and by is None and rnd.random() < 0.9
    allow_nul = not alpha
    n = rnd.choice([0, 1, 3, 10, 40, 150])
    elems = [_random_element(rnd, numeric, allow_nul) for _ in range(n)]
    cmds = []
    if src_type == "list" and elems:
        cmds.append(["RPUSH", "src"] + elems)
    elif src_type == "set" and elems:
        cmds.append(["SADD", "src"] + elems)
    elif src_type == "zset" and elems:
        z = []
        for e in elems:
            z += [rnd.randint(-5, 5), e]
        cmds.append(["ZADD", "src"] + z)
    distinct = list(dict.fromkeys(elems))
    # Distinct weights for ALPHA BY (its ties have no defined order), else any, some missing
    # or of the wrong type.
    weights = rnd.sample(range(100000), len(distinct))
    for e, wv in zip(distinct, weights):
        r = rnd.random()
        value = str(wv if alpha else rnd.randint(-20, 20)).encode()
        if alpha or r < 0.6:
            cmds.append(["SET", b"w_" + e, value])
            cmds.append(["HSET", b"h_" + e, "f", value])
        elif r < 0.7:
            cmds.append(["RPUSH", b"w_" + e, "1"])
            cmds.append(["SET", b"h_" + e, "1"])
        elif r < 0.75 and not numeric:
            cmds.append(["SET", b"w_" + e, "notanumber"])
        if rnd.random() < 0.7:
            cmds.append(["SET", b"g_" + e, b"G" + e])
        if rnd.random() < 0.5:
            cmds.append(["HSET", b"gh_" + e, "x", b"H" + e])
    if alpha and by in ("h_*->f", "w_*->f"):
        by = "w_*"  # every element has a distinct w_ value
    call = ["SORT", "src"]
    if by is not None:
        call += ["BY", by]
    if rnd.random() < 0.5:
        call += ["LIMIT", rnd.choice([0, 1, 2, 5, -3, n, n + 1, 9223372036854775807]),
                 rnd.choice([-1, 0, 1, 3, 10, n, 9223372036854775807, -9223372036854775808])]
    for _ in range(rnd.choice([0, 0, 1, 2, 3])):
        call += ["GET", rnd.choice(["#", "g_*", "gh_*->x", "w_*", "nostar", "h_*->f"])]
    if rnd.random() < 0.5:
        call.append(rnd.choice(["ASC", "DESC"]))
    if alpha:
        call.append("ALPHA")
    store = rnd.random() < 0.3
    if store:
        call += ["STORE", "dst"]
    elif rnd.random() < 0.2:
        call[0] = "SORT_RO"
    unordered = by == "nosort" and src_type == "set" and not store
    return cmds, call, store, unordered


def _run_case(cl, cmds, call, store):
    cl.flushall()
    p = cl.pipeline(transaction=False)
    for cmd in cmds:
        p.execute_command(*cmd)
    p.execute()
    try:
        reply = cl.execute_command(*call)
    except redis.ResponseError as e:
        return ("error", str(e))
    if store:
        dst = call[-1]
        return (reply, cl.lrange(dst, 0, -1), cl.exists(dst))
    return reply


@pytest.mark.dashkv_only
def test_random_calls_match_redis(srv, reference):
    ours = client(srv)
    theirs = client(reference)
    rnd = random.Random(int(os.environ.get("SORT_SEED", "2024")))
    try:
        for case in range(400):
            cmds, call, store, unordered = _build_case(rnd)
            mine = _run_case(ours, cmds, call, store)
            ref = _run_case(theirs, cmds, call, store)
            if unordered and isinstance(ref, list):
                # A set's iteration order is the implementation's: same length only.
                mine, ref = len(mine), len(ref)
            assert mine == ref, "case %d: %r" % (case, call)
    finally:
        ours.close()
        theirs.close()
