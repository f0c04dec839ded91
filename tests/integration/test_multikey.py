"""Multi-key writes: MSET, MSETNX, RENAME, RENAMENX, COPY, MOVE, BITOP.

Keys are spread over many names so that, with --threads 2, some pairs share a shard and some do
not; `{tag}` keys always share one. Every test also passes against redis-server 7.0."""

import pytest

from helpers import ERR_NOT_INT, ERR_SYNTAX, IS_DASHKV, WRONGTYPE, arity, assert_err
from resp_client import Simple

N_PAIRS = 40  # enough key pairs that both same-shard and cross-shard pairs occur

ERR_NO_SUCH_KEY = "ERR no such key"
ERR_SAME = "ERR source and destination objects are the same"
ERR_DB_RANGE = "ERR DB index is out of range"
ERR_INT_RANGE = "ERR value is out of range, value must between -2147483648 and 2147483647"


def pairs(prefix):
    """Source/destination key pairs: N_PAIRS untagged ones plus one hash-tagged pair."""
    out = [("%s:src:%d" % (prefix, i), "%s:dst:%d" % (prefix, i)) for i in range(N_PAIRS)]
    out.append(("{%s}src" % prefix, "{%s}dst" % prefix))
    return out


# ------------------------------------------------------------------ MSET MSETNX


class TestMSet:
    def test_mset_many_keys(self, r, raw):
        keys = ["ms:%d" % i for i in range(300)]
        r.set(keys[0], "old", ex=100)
        r.rpush(keys[1], "x")
        args = []
        for i, k in enumerate(keys):
            args += [k, "v%d" % i]
        assert raw.call("MSET", *args) == Simple("OK")
        assert r.mget(keys) == ["v%d" % i for i in range(len(keys))]
        assert r.ttl(keys[0]) == -1
        assert r.type(keys[1]) == "string"

    def test_mset_repeated_key_last_wins(self, raw):
        assert raw.call("MSET", "a", "1", "b", "2", "a", "3") == Simple("OK")
        assert raw.call("MGET", "a", "b") == [b"3", b"2"]

    def test_mset_arity(self, raw):
        for args in (["a"], ["a", "1", "b"], ["{t}a", "1", "{t}b"]):
            assert_err(raw.call("MSET", *args), arity("mset"))
            assert_err(raw.call("MSETNX", *args), arity("msetnx"))
        assert raw.call("EXISTS", "a", "{t}a") == 0

    def test_msetnx(self, r, raw):
        keys = ["nx:%d" % i for i in range(100)]
        args = []
        for k in keys:
            args += [k, "x" + k]
        r.set(keys[-1], "there")
        assert raw.call("MSETNX", *args) == 0
        assert r.exists(*keys) == 1
        r.delete(keys[-1])
        assert raw.call("MSETNX", *args) == 1
        assert r.mget(keys) == ["x" + k for k in keys]
        assert raw.call("MSETNX", *args) == 0
        assert raw.call("MSETNX", "{t}a", "1", "{t}b", "2") == 1
        assert raw.call("MSETNX", "{t}b", "3", "{t}c", "4") == 0
        assert raw.call("MGET", "{t}a", "{t}b", "{t}c") == [b"1", b"2", None]

    def test_mset_resp3(self, r3):
        assert r3.execute_command("MSET", "a", "1", "b", "2") is True
        assert r3.execute_command("MSETNX", "a", "1", "c", "2") == 0


# ------------------------------------------------------------------ RENAME RENAMENX


class TestRename:
    def test_rename_moves_value_and_ttl(self, r):
        for src, dst in pairs("rn"):
            r.set(src, "v-" + src, px=100000)
            r.hset(dst, "f", "old")
            assert r.rename(src, dst) is True
            assert r.exists(src) == 0
            assert r.get(dst) == "v-" + src
            assert 90000 < r.pttl(dst) <= 100000

    def test_rename_aggregates_and_persist(self, r):
        for src, dst in pairs("ra"):
            r.zadd(src, {"a": 1, "b": 2})
            r.set(dst, "old", ex=100)
            assert r.rename(src, dst) is True
            assert r.zrange(dst, 0, -1, withscores=True) == [("a", 1.0), ("b", 2.0)]
            assert r.ttl(dst) == -1

    def test_rename_errors(self, raw):
        assert_err(raw.call("RENAME", "nokey", "x"), ERR_NO_SUCH_KEY)
        assert_err(raw.call("RENAME", "nokey", "nokey"), ERR_NO_SUCH_KEY)
        assert_err(raw.call("RENAMENX", "nokey", "x"), ERR_NO_SUCH_KEY)
        assert_err(raw.call("RENAME", "a"), arity("rename"))
        raw.call("SET", "k", "v")
        assert raw.call("RENAME", "k", "k") == Simple("OK")
        assert raw.call("RENAMENX", "k", "k") == 0
        assert raw.call("GET", "k") == b"v"

    def test_renamenx(self, r, raw):
        for src, dst in pairs("rx"):
            r.set(src, "1")
            r.set(dst, "2")
            assert raw.call("RENAMENX", src, dst) == 0
            assert r.mget(src, dst) == ["1", "2"]
            r.delete(dst)
            assert raw.call("RENAMENX", src, dst) == 1
            assert r.mget(src, dst) == [None, "1"]


# ------------------------------------------------------------------ COPY


def fill_value(r, kind, key):
    """Creates `key` holding a value of `kind` ("type/encoding" as Redis 7.2 and dashkv name
    it; Redis 7.0 has no listpack lists or sets); returns its type."""
    t, enc = kind.split("/")
    big = enc in ("quicklist", "hashtable", "skiplist")
    n = 700 if big else 5
    if t == "list":
        r.rpush(key, *["m%d%s" % (i, "x" * 40 if big else "") for i in range(n)])
    elif t == "hash":
        r.hset(key, mapping={"f%d" % i: "v%d" % i for i in range(n)})
    elif t == "set":
        r.sadd(key, *[str(i * 3) if enc == "intset" else "m%d" % i for i in range(n)])
    elif t == "zset":
        r.zadd(key, {"m%d" % i: i % 7 + 0.5 for i in range(n)})
    else:
        r.set(key, {"int": "12345", "embstr": "short", "raw": "z" * 100}[enc])
    return t


def content(r, t, key):
    if t == "list":
        return r.lrange(key, 0, -1)
    if t == "hash":
        return r.hgetall(key)
    if t == "set":
        return r.smembers(key)
    if t == "zset":
        return r.zrange(key, 0, -1, withscores=True)
    return r.get(key)


KINDS = ["string/int", "string/embstr", "string/raw", "list/listpack", "list/quicklist",
         "hash/listpack", "hash/hashtable", "set/intset", "set/listpack", "set/hashtable",
         "zset/listpack", "zset/skiplist"]


class TestCopy:
    @pytest.mark.parametrize("kind", KINDS)
    def test_copy_type_and_encoding(self, r, kind):
        for src, dst in pairs("c")[::8]:
            t = fill_value(r, kind, src)
            r.expire(src, 100)
            before = content(r, t, src)
            encoding = r.object("encoding", src)
            if IS_DASHKV:
                assert encoding == kind.split("/")[1]
            assert r.copy(src, dst) is True
            assert r.type(dst) == t
            assert r.object("encoding", dst) == encoding
            assert content(r, t, dst) == before
            assert 90 < r.ttl(dst) <= 100
            r.delete(src)  # a deep copy: the copy stays
            assert content(r, t, dst) == before
            r.delete(dst)

    def test_copy_exists_replace(self, r, raw):
        for src, dst in pairs("cr"):
            assert raw.call("COPY", src, dst) == 0
            r.set(src, "new")
            r.set(dst, "old", ex=100)
            assert raw.call("COPY", src, dst) == 0
            assert r.get(dst) == "old"
            assert raw.call("COPY", src, dst, "REPLACE") == 1
            assert r.get(dst) == "new"
            assert r.ttl(dst) == -1

    def test_copy_to_another_db(self, r, raw):
        for src, dst in pairs("cd"):
            r.set(src, "v", ex=100)
            assert raw.call("COPY", src, dst, "DB", "5") == 1
            assert raw.call("COPY", src, dst, "db", "5") == 0
            assert raw.call("COPY", src, dst, "REPLACE", "DB", "5") == 1
            assert raw.call("COPY", src, src, "DB", "5") == 1
            assert r.exists(dst) == 0
        raw.call("SELECT", "5")
        for src, dst in pairs("cd"):
            assert raw.call("MGET", src, dst) == [b"v", b"v"]
            assert 90 < raw.call("TTL", dst) <= 100
        raw.call("SELECT", "0")

    def test_copy_errors(self, raw):
        raw.call("SET", "a", "v")
        assert_err(raw.call("COPY", "a", "a"), ERR_SAME)
        assert_err(raw.call("COPY", "a", "a", "DB", "0"), ERR_SAME)
        assert_err(raw.call("COPY", "a", "b", "DB", "abc"), ERR_NOT_INT)
        assert_err(raw.call("COPY", "a", "b", "DB", "99999999999"), ERR_INT_RANGE)
        assert_err(raw.call("COPY", "a", "b", "DB", "16"), ERR_DB_RANGE)
        assert_err(raw.call("COPY", "a", "b", "DB", "-1"), ERR_DB_RANGE)
        assert_err(raw.call("COPY", "a", "b", "DB"), ERR_SYNTAX)
        assert_err(raw.call("COPY", "a", "b", "REPLACE", "FOO"), ERR_SYNTAX)
        assert_err(raw.call("COPY", "a"), arity("copy"))
        assert raw.call("EXISTS", "b") == 0


# ------------------------------------------------------------------ MOVE


class TestMove:
    def test_move(self, r, raw):
        r.hset("h", mapping={"a": "1", "b": "2"})
        r.expire("h", 100)
        assert raw.call("MOVE", "h", "3") == 1
        assert raw.call("MOVE", "h", "3") == 0
        r.set("h", "here")
        assert raw.call("MOVE", "h", "3") == 0
        assert r.get("h") == "here"
        raw.call("SELECT", "3")
        assert sorted(raw.call("HGETALL", "h")) == [b"1", b"2", b"a", b"b"]
        assert 90 < raw.call("TTL", "h") <= 100
        raw.call("SELECT", "0")

    def test_move_many_keys(self, r, raw):
        keys = ["mv:%d" % i for i in range(100)]
        r.mset({k: k for k in keys})
        for k in keys:
            assert raw.call("MOVE", k, "1") == 1
        assert r.dbsize() == 0
        raw.call("SELECT", "1")
        assert raw.call("MGET", *keys) == [k.encode() for k in keys]
        raw.call("SELECT", "0")

    def test_move_errors(self, raw):
        assert_err(raw.call("MOVE", "nokey", "0"), ERR_SAME)
        assert_err(raw.call("MOVE", "k", "x"), ERR_NOT_INT)
        assert_err(raw.call("MOVE", "k", "16"), ERR_DB_RANGE)
        assert_err(raw.call("MOVE", "k", "-1"), ERR_DB_RANGE)
        assert_err(raw.call("MOVE", "k", "4294967296"), ERR_INT_RANGE)
        assert_err(raw.call("MOVE", "k"), arity("move"))


# ------------------------------------------------------------------ BITOP


def ref_bitop(op, values):
    n = max((len(v) for v in values), default=0)
    padded = [v.ljust(n, b"\0") for v in values]
    out = bytearray(padded[0])
    for v in padded[1:]:
        for i in range(n):
            if op == "AND":
                out[i] &= v[i]
            elif op == "OR":
                out[i] |= v[i]
            else:
                out[i] ^= v[i]
    if op == "NOT":
        out = bytearray(~b & 0xFF for b in out)
    return bytes(out)


class TestBitOp:
    @pytest.mark.parametrize("op", ["AND", "OR", "XOR"])
    def test_bitop_many_sources(self, rb, op):
        keys = ["bo:%d" % i for i in range(12)]
        values = [bytes((i * 37 + j * 11) & 0xFF for j in range(3 + 9 * i)) for i in range(12)]
        for k, v in zip(keys, values):
            rb.set(k, v)
        want = ref_bitop(op, values + [b""])
        assert rb.bitop(op, "bo:dest", *keys, "bo:missing") == len(want)
        assert rb.get("bo:dest") == want
        assert rb.bitop(op, "{bo}dest", *keys) == len(ref_bitop(op, values))

    def test_bitop_not_and_destination(self, r, rb):
        rb.set("{b}s", b"\x00\xff\x0f")
        r.set("{b}d", "old", ex=100)
        assert rb.bitop("NOT", "{b}d", "{b}s") == 3
        assert rb.get("{b}d") == b"\xff\x00\xf0"
        assert r.ttl("{b}d") == -1
        assert r.object("encoding", "{b}d") == "raw"
        assert rb.bitop("NOT", "other-dest", "{b}s") == 3
        assert rb.get("other-dest") == b"\xff\x00\xf0"
        assert rb.bitop("AND", "other-dest", "nothere", "nothere2") == 0
        assert r.exists("other-dest") == 0
        r.rpush("other-dest", "x")
        assert rb.bitop("OR", "other-dest", "{b}s") == 3
        assert r.type("other-dest") == "string"

    def test_bitop_errors(self, r, raw):
        r.rpush("l", "x")
        r.set("s", "abc")
        r.set("d", "keep")
        assert_err(raw.call("BITOP", "OR", "d", "s", "l"), WRONGTYPE)
        assert_err(raw.call("BITOP", "OR", "d", "l", "s"), WRONGTYPE)
        assert r.get("d") == "keep"
        assert_err(raw.call("BITOP", "NOT", "d", "s", "s"),
                   "ERR BITOP NOT must be called with a single source key.")
        assert_err(raw.call("BITOP", "NAND", "d", "s"), ERR_SYNTAX)
        assert_err(raw.call("BITOP", "AND", "d"), arity("bitop"))


# ------------------------------------------------------------------ COMMAND INFO


@pytest.mark.parametrize("name,arity_,flags,first,last,step", [
    ("mset", -3, ["write", "denyoom"], 1, -1, 2),
    ("msetnx", -3, ["write", "denyoom"], 1, -1, 2),
    ("rename", 3, ["write"], 1, 2, 1),
    ("renamenx", 3, ["write", "fast"], 1, 2, 1),
    ("copy", -3, ["write", "denyoom"], 1, 2, 1),
    ("move", 3, ["write", "fast"], 1, 1, 1),
    ("bitop", -4, ["write", "denyoom"], 2, -1, 1),
])
def test_command_info(raw, name, arity_, flags, first, last, step):
    info = raw.call("COMMAND", "INFO", name)[0]
    assert info[0] == name.encode()
    assert info[1] == arity_
    assert sorted(info[2]) == sorted(flags)
    assert info[3:6] == [first, last, step]
