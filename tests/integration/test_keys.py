"""Generic key commands: DEL/UNLINK/EXISTS/TOUCH, TYPE, expiry, KEYS, SCAN,
RANDOMKEY, OBJECT."""

import time

import pytest

from helpers import (ERR_NOT_INT, ERR_SYNTAX, arity,
                     assert_err, assert_uniform, wait_until)
from resp_client import Simple

N_KEYS = 300  # enough to spread over every shard


def fill(r, keys, value="v"):
    with r.pipeline(transaction=False) as p:
        for k in keys:
            p.set(k, value)
        p.execute()


# ------------------------------------------------- DEL UNLINK EXISTS TOUCH


class TestMultiKey:
    @pytest.mark.parametrize("cmd", ["DEL", "UNLINK"])
    def test_delete_many(self, r, raw, cmd):
        keys = ["key:%d" % i for i in range(N_KEYS)]
        fill(r, keys[::2])
        assert raw.call(cmd, *keys) == N_KEYS // 2
        assert r.dbsize() == 0
        assert raw.call(cmd, *keys) == 0

    @pytest.mark.parametrize("cmd", ["DEL", "UNLINK"])
    def test_delete_single_and_duplicates(self, raw, cmd):
        assert raw.call(cmd, "k") == 0
        raw.call("SET", "k", "v")
        assert raw.call(cmd, "k", "k", "k") == 1
        assert raw.call("GET", "k") is None
        assert_err(raw.call(cmd), arity(cmd))

    def test_exists_counts_duplicates(self, r, raw):
        keys = ["e:%d" % i for i in range(N_KEYS)]
        fill(r, keys[: N_KEYS // 3])
        assert raw.call("EXISTS", *keys) == N_KEYS // 3
        assert raw.call("EXISTS", *(keys + keys)) == 2 * (N_KEYS // 3)
        raw.call("SET", "k", "v")
        assert raw.call("EXISTS", "k", "k", "nope", "k") == 3
        assert raw.call("EXISTS", "nope") == 0
        assert_err(raw.call("EXISTS"), arity("exists"))

    def test_touch(self, r, raw):
        keys = ["t:%d" % i for i in range(N_KEYS)]
        fill(r, keys[:100])
        assert raw.call("TOUCH", *keys) == 100
        assert raw.call("TOUCH", "t:0", "t:0") == 2
        assert raw.call("TOUCH", "missing") == 0
        assert_err(raw.call("TOUCH"), arity("touch"))

    def test_hashtag_keys(self, r, raw):
        keys = ["{user1}:a", "{user1}:b", "{user1}:c", "{}x", "{x", "x}"]
        fill(r, keys)
        assert raw.call("EXISTS", *keys) == len(keys)
        assert raw.call("MGET", *keys) == [b"v"] * len(keys)
        assert raw.call("DEL", *keys) == len(keys)

    def test_delete_does_not_touch_other_db(self, raw):
        raw.call("SET", "k", "db0")
        raw.call("SELECT", "1")
        raw.call("SET", "k", "db1")
        assert raw.call("DEL", "k") == 1
        raw.call("SELECT", "0")
        assert raw.call("GET", "k") == b"db0"


class TestType:
    def test_type(self, raw):
        raw.call("SET", "s", "v")
        raw.call("SET", "i", "123")
        for key, t in (("s", "string"), ("i", "string"), ("missing", "none")):
            reply = raw.call("TYPE", key)
            assert reply == t and isinstance(reply, Simple)
        assert_err(raw.call("TYPE"), arity("type"))

    @pytest.mark.needs_lists
    def test_type_list(self, raw):
        raw.call("LPUSH", "l", "x")
        assert raw.call("TYPE", "l") == "list"


# ---------------------------------------------------------------- expiry


class TestExpire:
    def test_ttl_missing_and_persistent(self, raw):
        assert raw.call("TTL", "missing") == -2
        assert raw.call("PTTL", "missing") == -2
        assert raw.call("EXPIRETIME", "missing") == -2
        assert raw.call("PEXPIRETIME", "missing") == -2
        raw.call("SET", "k", "v")
        assert raw.call("TTL", "k") == -1
        assert raw.call("PTTL", "k") == -1
        assert raw.call("EXPIRETIME", "k") == -1
        assert raw.call("PEXPIRETIME", "k") == -1

    def test_expire_family(self, raw):
        raw.call("SET", "k", "v")
        assert raw.call("EXPIRE", "k", "100") == 1
        assert 98 <= raw.call("TTL", "k") <= 100
        assert raw.call("PEXPIRE", "k", "200000") == 1
        assert 198000 <= raw.call("PTTL", "k") <= 200000
        at = int(time.time()) + 300
        assert raw.call("EXPIREAT", "k", str(at)) == 1
        assert raw.call("EXPIRETIME", "k") == at
        assert raw.call("PEXPIRETIME", "k") == at * 1000
        pat = int(time.time() * 1000) + 400000
        assert raw.call("PEXPIREAT", "k", str(pat)) == 1
        assert raw.call("PEXPIRETIME", "k") == pat
        assert raw.call("EXPIRETIME", "k") == (pat + 500) // 1000
        for cmd in ("EXPIRE", "PEXPIRE", "EXPIREAT", "PEXPIREAT"):
            assert raw.call(cmd, "missing", "100") == 0
        assert raw.call("EXISTS", "missing") == 0

    def test_ttl_rounding(self, raw):
        raw.call("SET", "k", "v", "PX", "1500")
        # TTL rounds to the nearest second.
        assert raw.call("TTL", "k") in (1, 2)

    def test_persist(self, raw):
        raw.call("SET", "k", "v")
        assert raw.call("PERSIST", "k") == 0
        raw.call("EXPIRE", "k", "100")
        assert raw.call("PERSIST", "k") == 1
        assert raw.call("TTL", "k") == -1
        assert raw.call("PERSIST", "missing") == 0
        assert_err(raw.call("PERSIST"), arity("persist"))

    @pytest.mark.parametrize("cmd,arg", [
        ("EXPIRE", "0"), ("EXPIRE", "-10"), ("PEXPIRE", "0"), ("PEXPIREAT", "1"),
        ("EXPIREAT", "1"), ("EXPIREAT", "-1")])
    def test_expire_in_past_deletes(self, raw, cmd, arg):
        raw.call("SET", "k", "v")
        assert raw.call(cmd, "k", arg) == 1
        assert raw.call("EXISTS", "k") == 0
        assert raw.call("TTL", "k") == -2

    def test_expired_key_disappears(self, r, raw):
        raw.call("SET", "k", "v")
        raw.call("SET", "other", "v")
        assert raw.call("PEXPIRE", "k", "50") == 1
        wait_until(lambda: raw.call("EXISTS", "k") == 0, timeout=5, what="k to expire")
        assert raw.call("GET", "k") is None
        assert raw.call("TTL", "k") == -2
        assert raw.call("GET", "other") == b"v"

    def test_active_expiry_without_access(self, r):
        # Keys that are never touched again still vanish (active expiry cycle).
        keys = ["ae:%d" % i for i in range(200)]
        with r.pipeline(transaction=False) as p:
            for k in keys:
                p.set(k, "v", px=30)
            p.set("keep", "v")
            p.execute()
        wait_until(lambda: r.dbsize() == 1, timeout=10, what="active expiry to reclaim keys")

    def test_expired_keys_counted_in_info(self, r):
        before = r.info("stats")["expired_keys"]
        r.set("k", "v", px=10)
        wait_until(lambda: r.exists("k") == 0, what="k to expire")
        assert r.info("stats")["expired_keys"] >= before + 1

    def test_nx_xx(self, raw):
        raw.call("SET", "k", "v")
        assert raw.call("EXPIRE", "k", "100", "XX") == 0
        assert raw.call("TTL", "k") == -1
        assert raw.call("EXPIRE", "k", "100", "NX") == 1
        assert raw.call("EXPIRE", "k", "200", "NX") == 0
        assert 98 <= raw.call("TTL", "k") <= 100
        assert raw.call("EXPIRE", "k", "200", "XX") == 1
        assert 198 <= raw.call("TTL", "k") <= 200

    def test_gt_lt(self, raw):
        raw.call("SET", "k", "v")
        # A key without TTL counts as an infinite TTL.
        assert raw.call("EXPIRE", "k", "100", "GT") == 0
        assert raw.call("TTL", "k") == -1
        assert raw.call("EXPIRE", "k", "100", "LT") == 1
        assert raw.call("EXPIRE", "k", "50", "GT") == 0
        assert raw.call("EXPIRE", "k", "200", "GT") == 1
        assert raw.call("EXPIRE", "k", "300", "LT") == 0
        assert raw.call("PEXPIRE", "k", "100000", "lt") == 1
        assert 98000 <= raw.call("PTTL", "k") <= 100000
        assert raw.call("EXPIRE", "k", "1000", "XX", "GT") == 1
        assert raw.call("EXPIREAT", "k", str(int(time.time()) + 10), "GT") == 0
        assert raw.call("PEXPIREAT", "k", str(int(time.time() * 1000) + 10000), "LT") == 1

    @pytest.mark.parametrize("cmd", ["EXPIRE", "PEXPIRE", "EXPIREAT", "PEXPIREAT"])
    def test_option_errors(self, raw, cmd):
        raw.call("SET", "k", "v")
        nx_err = "ERR NX and XX, GT or LT options at the same time are not compatible"
        assert_err(raw.call(cmd, "k", "100", "NX", "XX"), nx_err)
        assert_err(raw.call(cmd, "k", "100", "NX", "GT"), nx_err)
        assert_err(raw.call(cmd, "k", "100", "LT", "NX"), nx_err)
        assert_err(raw.call(cmd, "k", "100", "GT", "LT"),
                   "ERR GT and LT options at the same time are not compatible")
        assert_err(raw.call(cmd, "k", "100", "FOO"), "ERR Unsupported option FOO")
        assert_err(raw.call(cmd, "k", "abc"), ERR_NOT_INT)
        assert_err(raw.call(cmd, "k", "1.5"), ERR_NOT_INT)
        assert_err(raw.call(cmd, "k"), arity(cmd))
        assert raw.call("TTL", "k") == -1

    @pytest.mark.parametrize("cmd", ["EXPIRE", "PEXPIRE", "EXPIREAT"])
    def test_overflow(self, raw, cmd):
        raw.call("SET", "k", "v")
        assert_err(raw.call(cmd, "k", str(2**63 - 1)),
                   "ERR invalid expire time in '%s' command" % cmd.lower())
        assert raw.call("TTL", "k") == -1

    def test_pexpireat_max(self, raw):
        raw.call("SET", "k", "v")
        assert raw.call("PEXPIREAT", "k", str(2**63 - 1)) == 1
        assert raw.call("PEXPIRETIME", "k") == 2**63 - 1

    def test_expire_negative_huge(self, raw):
        raw.call("SET", "k", "v")
        assert_err(raw.call("EXPIRE", "k", str(-(2**63))),
                   "ERR invalid expire time in 'expire' command")

    def test_ttl_arity(self, raw):
        for cmd in ("TTL", "PTTL", "EXPIRETIME", "PEXPIRETIME"):
            assert_err(raw.call(cmd), arity(cmd))
            assert_err(raw.call(cmd, "a", "b"), arity(cmd))

    def test_set_overwrite_clears_ttl_but_setrange_keeps(self, raw):
        raw.call("SET", "k", "v", "EX", "100")
        raw.call("SETRANGE", "k", "0", "x")
        assert raw.call("TTL", "k") > 0
        raw.call("SETBIT", "k", "0", "1")
        assert raw.call("TTL", "k") > 0
        raw.call("SET", "k", "v")
        assert raw.call("TTL", "k") == -1


# ------------------------------------------------------------------ KEYS


class TestKeysPattern:
    def test_patterns(self, r, raw):
        fill(r, ["hello", "hallo", "hxllo", "hllo", "heeeello", "a*b", "a?b", "ab", "h[a]llo"])
        def keys(p):
            return sorted(k.decode() for k in raw.call("KEYS", p))
        assert keys("*") == sorted(["hello", "hallo", "hxllo", "hllo", "heeeello", "a*b",
                                    "a?b", "ab", "h[a]llo"])
        assert keys("h?llo") == ["hallo", "hello", "hxllo"]
        assert keys("h*llo") == sorted(["hello", "hallo", "hxllo", "hllo", "heeeello",
                                        "h[a]llo"])
        assert keys("h[ae]llo") == ["hallo", "hello"]
        assert keys("h[^e]llo") == ["hallo", "hxllo"]
        assert keys("h[a-e]llo") == ["hallo", "hello"]
        assert keys("a\\*b") == ["a*b"]
        assert keys("a\\?b") == ["a?b"]
        assert keys("h\\[a\\]llo") == ["h[a]llo"]
        assert keys("nothing*") == []
        assert keys("hello") == ["hello"]

    def test_many_keys(self, r, raw):
        keys = ["kk:%d" % i for i in range(N_KEYS)]
        fill(r, keys)
        r.set("other", "v")
        got = raw.call("KEYS", "kk:*")
        assert sorted(got) == sorted(k.encode() for k in keys)

    def test_keys_skips_expired(self, raw):
        raw.call("SET", "live", "v")
        raw.call("SET", "dead", "v", "PX", "1")
        wait_until(lambda: raw.call("PTTL", "dead") == -2, what="dead to expire")
        assert raw.call("KEYS", "*") == [b"live"]

    def test_arity(self, raw):
        assert_err(raw.call("KEYS"), arity("keys"))


# ------------------------------------------------------------------ SCAN


def full_scan(raw, *opts):
    """Iterates SCAN to the end; returns (list of keys with repeats, iterations)."""
    cursor = b"0"
    seen = []
    rounds = 0
    while True:
        reply = raw.call("SCAN", cursor, *opts)
        assert isinstance(reply, list) and len(reply) == 2
        cursor, keys = reply
        assert isinstance(cursor, bytes)
        seen.extend(keys)
        rounds += 1
        assert rounds < 100000
        if cursor == b"0":
            return seen, rounds


class TestScan:
    def test_empty(self, raw):
        assert raw.call("SCAN", "0") == [b"0", []]

    def test_full_iteration(self, r, raw):
        keys = {("s:%d" % i).encode() for i in range(1000)}
        fill(r, keys)
        seen, rounds = full_scan(raw, "COUNT", "50")
        assert set(seen) == keys
        assert rounds > 1
        seen, _ = full_scan(raw)
        assert set(seen) == keys

    def test_match(self, r, raw):
        fill(r, ["a:%d" % i for i in range(200)] + ["b:%d" % i for i in range(200)])
        seen, _ = full_scan(raw, "MATCH", "a:1*", "COUNT", "30")
        want = {("a:%d" % i).encode() for i in range(200) if str(i).startswith("1")}
        assert set(seen) == want

    def test_type(self, r, raw):
        fill(r, ["s:%d" % i for i in range(100)])
        seen, _ = full_scan(raw, "TYPE", "string")
        assert len(set(seen)) == 100
        seen, _ = full_scan(raw, "TYPE", "list")
        assert seen == []
        seen, _ = full_scan(raw, "MATCH", "s:1?", "TYPE", "string", "COUNT", "1000")
        assert set(seen) == {("s:%d" % i).encode() for i in range(10, 20)}

    @pytest.mark.needs_lists
    def test_type_filters_lists(self, r, raw):
        fill(r, ["s:%d" % i for i in range(20)])
        r.lpush("l", "x")
        seen, _ = full_scan(raw, "TYPE", "list")
        assert seen == [b"l"]

    def test_keys_added_during_scan(self, r, raw):
        """Every key present for the whole scan is returned at least once, even when
        the table grows in between."""
        base = {("base:%d" % i).encode() for i in range(500)}
        fill(r, base)
        cursor = b"0"
        seen = set()
        rounds = 0
        while True:
            cursor, keys = raw.call("SCAN", cursor, "COUNT", "20")
            seen.update(keys)
            if rounds < 20:  # grow the table 5x while the scan runs
                fill(r, ["new:%d:%d" % (rounds, i) for i in range(100)])
            rounds += 1
            assert rounds < 10000
            if cursor == b"0":
                break
        assert base <= seen

    def test_keys_deleted_during_scan(self, r, raw):
        keep = {("keep:%d" % i).encode() for i in range(300)}
        doomed = ["doomed:%d" % i for i in range(300)]
        fill(r, keep)
        fill(r, doomed)
        cursor, keys = raw.call("SCAN", "0", "COUNT", "50")
        seen = set(keys)
        r.delete(*doomed)
        while cursor != b"0":
            cursor, keys = raw.call("SCAN", cursor, "COUNT", "50")
            seen.update(keys)
        assert keep <= seen

    def test_errors(self, raw):
        assert_err(raw.call("SCAN", "abc"), "ERR invalid cursor")
        assert_err(raw.call("SCAN", "1x"), "ERR invalid cursor")
        assert_err(raw.call("SCAN", "1.5"), "ERR invalid cursor")
        assert_err(raw.call("SCAN", " 1"), "ERR invalid cursor")
        assert_err(raw.call("SCAN", "99999999999999999999"), "ERR invalid cursor")
        assert_err(raw.call("SCAN", "0", "COUNT", "0"), ERR_SYNTAX)
        assert_err(raw.call("SCAN", "0", "COUNT", "x"), ERR_NOT_INT)
        assert_err(raw.call("SCAN", "0", "COUNT"), ERR_SYNTAX)
        assert_err(raw.call("SCAN", "0", "MATCH"), ERR_SYNTAX)
        assert_err(raw.call("SCAN", "0", "FOO", "bar"), ERR_SYNTAX)
        assert_err(raw.call("SCAN"), arity("scan"))

    def test_large_cursor_is_accepted(self, raw):
        raw.call("SET", "k", "v")
        reply = raw.call("SCAN", str(2**64 - 1))
        assert isinstance(reply, list) and len(reply) == 2


# ------------------------------------------------------- RANDOMKEY OBJECT


class TestRandomKey:
    def test_randomkey(self, r, raw):
        assert raw.call("RANDOMKEY") is None
        keys = {("r:%d" % i).encode() for i in range(50)}
        fill(r, keys)
        got = {raw.call("RANDOMKEY") for _ in range(50)}
        assert got <= keys
        assert len(got) > 1
        assert_err(raw.call("RANDOMKEY", "x"), arity("randomkey"))


    @pytest.mark.dashkv_only  # Redis's dictGetFairRandomKey is only close to uniform
    @pytest.mark.parametrize("n", [20, 300])
    def test_randomkey_uniform(self, r, raw_factory, n):
        # Each key as likely as any other, whatever shard holds it and wherever it sits in its
        # table; the chi-square threshold is exceeded by a fair draw with probability < 1e-9.
        # (150,000 pipelined calls of two hops each: a generous timeout for a loaded machine.)
        keys = [("u:%d" % i).encode() for i in range(n)]
        fill(r, keys)
        raw = raw_factory(timeout=120.0)
        assert_uniform(raw.pipeline([("RANDOMKEY",)] * (n * 500)), keys, "RANDOMKEY")


class TestObject:
    @pytest.mark.parametrize("value,enc", [
        ("12345", "int"), ("-1", "int"), ("9223372036854775807", "int"),
        ("9223372036854775808", "embstr"), ("abc", "embstr"), ("x" * 44, "embstr"),
        ("x" * 45, "raw"), ("1.5", "embstr"), ("012", "embstr"), ("", "embstr")])
    def test_encoding(self, raw, value, enc):
        raw.call("SET", "k", value)
        assert raw.call("OBJECT", "ENCODING", "k") == enc.encode()

    def test_encoding_after_modification(self, raw):
        raw.call("SET", "k", "abc")
        raw.call("APPEND", "k", "d")
        assert raw.call("OBJECT", "ENCODING", "k") == b"raw"
        raw.call("SET", "n", "10")
        raw.call("INCR", "n")
        assert raw.call("OBJECT", "ENCODING", "n") == b"int"
        raw.call("SETRANGE", "s", "0", "abc")
        assert raw.call("OBJECT", "ENCODING", "s") == b"raw"

    def test_missing_key(self, raw):
        for sub in ("ENCODING", "REFCOUNT", "IDLETIME"):
            assert raw.call("OBJECT", sub, "missing") is None

    def test_refcount(self, raw):
        raw.call("SET", "k", "some string")
        assert raw.call("OBJECT", "REFCOUNT", "k") == 1
        # Small integers are shared objects in Redis (refcount INT_MAX).
        raw.call("SET", "n", "100")
        assert raw.call("OBJECT", "REFCOUNT", "n") == 2147483647

    def test_idletime(self, raw):
        raw.call("SET", "k", "v")
        idle = raw.call("OBJECT", "IDLETIME", "k")
        assert isinstance(idle, int) and 0 <= idle <= 2

    def test_freq_without_lfu(self, raw):
        raw.call("SET", "k", "v")
        assert_err(raw.call("OBJECT", "FREQ", "k"),
                   "ERR An LFU maxmemory policy is not selected, access frequency not "
                   "tracked. Please note that when switching between policies at runtime LRU "
                   "and LFU data will take some time to adjust.")

    def test_errors(self, raw):
        assert_err(raw.call("OBJECT", "FOO", "k"),
                   "ERR unknown subcommand 'FOO'. Try OBJECT HELP.")
        assert_err(raw.call("OBJECT"), arity("object"))
        assert_err(raw.call("OBJECT", "ENCODING"),
                   "ERR wrong number of arguments for 'object|encoding' command")
        assert_err(raw.call("OBJECT", "encoding", "a", "b"),
                   "ERR wrong number of arguments for 'object|encoding' command")

    def test_help(self, raw):
        reply = raw.call("OBJECT", "HELP")
        assert isinstance(reply, list) and len(reply) > 4
        assert all(isinstance(line, Simple) for line in reply)
        assert any(line.startswith("ENCODING") for line in reply)


class TestDebugSleep:
    @pytest.mark.parametrize("arg", ["inf", "-inf", "nan", "1e300", "-1e300", "-1", "0", "-0",
                                     "1e-300", "abc", "", "9223372036854.776", "1e19", "0.001x"])
    def test_answers_ok_at_once(self, server, raw, arg):
        # Redis 7.0 reads the seconds with strtod and converts seconds * 1e6 to long long: text
        # reads as 0, and NaN, negative and out-of-range values come out negative (x86), so it
        # answers OK without sleeping. dashkv gives the same replies without the undefined
        # conversion.
        assert raw.call("DEBUG", "SLEEP", arg) == "OK"
        server.assert_alive()
