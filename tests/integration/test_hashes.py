"""Hash commands: replies, reply types and error texts as Redis 7.0 (checked against
redis-server 7.0 with DASHKV_TEST_TARGET=redis)."""

import pytest

from helpers import (ERR_NOT_FLOAT, ERR_NOT_INT, ERR_SYNTAX, IS_DASHKV, WRONGTYPE, arity,
                     assert_err, assert_uniform)
from resp_client import Map


@pytest.fixture
def strkey(r):
    r.set("astring", "x")
    return "astring"


def hello3(raw):
    raw.call("HELLO", "3")
    return raw


def pairs_to_dict(flat):
    return dict(zip(flat[0::2], flat[1::2]))


class TestSetGet:
    def test_hset_hget(self, raw):
        assert raw.call("HSET", "h", "a", "1", "b", "2") == 2
        assert raw.call("HSET", "h", "a", "10", "c", "3") == 1
        assert raw.call("HGET", "h", "a") == b"10"
        assert raw.call("HGET", "h", "zz") is None
        assert raw.call("HGET", "missing", "a") is None
        assert raw.call("HLEN", "h") == 3
        assert raw.call("HLEN", "missing") == 0

    def test_hmset_hmget(self, raw):
        assert raw.call("HMSET", "h", "a", "1", "b", "2") == "OK"
        assert raw.call("HMGET", "h", "a", "zz", "b") == [b"1", None, b"2"]
        assert raw.call("HMGET", "missing", "a", "b") == [None, None]

    def test_hsetnx(self, raw):
        assert raw.call("HSETNX", "h", "a", "1") == 1
        assert raw.call("HSETNX", "h", "a", "2") == 0
        assert raw.call("HGET", "h", "a") == b"1"

    def test_arity(self, raw):
        assert_err(raw.call("HSET", "h", "a"), arity("hset"))
        assert_err(raw.call("HSET", "h", "a", "1", "b"), arity("hset"))
        assert_err(raw.call("HMSET", "h", "a"), arity("hmset"))
        assert_err(raw.call("HGET", "h"), arity("hget"))
        assert_err(raw.call("HSETNX", "h", "a"), arity("hsetnx"))

    def test_hdel_deletes_empty(self, raw):
        raw.call("HSET", "h", "a", "1", "b", "2")
        assert raw.call("HDEL", "h", "a", "zz", "a") == 1
        assert raw.call("HDEL", "h", "b") == 1
        assert raw.call("EXISTS", "h") == 0
        assert raw.call("HDEL", "h", "b") == 0

    def test_hexists_hstrlen(self, raw):
        raw.call("HSET", "h", "a", "hello", "n", "-123")
        assert raw.call("HEXISTS", "h", "a") == 1
        assert raw.call("HEXISTS", "h", "b") == 0
        assert raw.call("HEXISTS", "missing", "a") == 0
        assert raw.call("HSTRLEN", "h", "a") == 5
        assert raw.call("HSTRLEN", "h", "n") == 4
        assert raw.call("HSTRLEN", "h", "zz") == 0
        assert raw.call("HSTRLEN", "missing", "a") == 0

    def test_binary_fields(self, raw):
        f, v = b"f\x00\r\n", bytes(range(256))
        assert raw.call("HSET", "h", f, v) == 1
        assert raw.call("HGET", "h", f) == v


class TestGetAll:
    def test_keys_vals_getall(self, raw):
        raw.call("HSET", "h", "a", "1", "b", "2", "c", "3")
        assert sorted(raw.call("HKEYS", "h")) == [b"a", b"b", b"c"]
        assert sorted(raw.call("HVALS", "h")) == [b"1", b"2", b"3"]
        assert pairs_to_dict(raw.call("HGETALL", "h")) == {b"a": b"1", b"b": b"2", b"c": b"3"}
        assert raw.call("HKEYS", "missing") == []
        assert raw.call("HVALS", "missing") == []
        assert raw.call("HGETALL", "missing") == []

    def test_getall_resp3_map(self, raw):
        hello3(raw)
        raw.call("HSET", "h", "a", "1", "b", "2")
        reply = raw.call("HGETALL", "h")
        assert isinstance(reply, Map)
        assert reply.to_dict() == {b"a": b"1", b"b": b"2"}
        empty = raw.call("HGETALL", "missing")
        assert isinstance(empty, Map) and len(empty) == 0

    def test_large_hash_hashtable(self, raw):
        for i in range(0, 1000, 250):
            args = []
            for j in range(i, i + 250):
                args += ["f%d" % j, "v%d" % j]
            raw.call("HSET", "h", *args)
        assert raw.call("OBJECT", "ENCODING", "h") == b"hashtable"
        assert raw.call("HLEN", "h") == 1000
        assert raw.call("HGET", "h", "f777") == b"v777"
        d = pairs_to_dict(raw.call("HGETALL", "h"))
        assert len(d) == 1000 and d[b"f999"] == b"v999"
        for j in range(0, 1000, 2):
            raw.call("HDEL", "h", "f%d" % j)
        assert raw.call("HLEN", "h") == 500
        assert raw.call("OBJECT", "ENCODING", "h") == b"hashtable"  # one-way
        assert raw.call("HGET", "h", "f1") == b"v1"


class TestEncoding:
    def test_listpack_then_hashtable_by_entries(self, raw):
        raw.call("HSET", "h", "a", "1")
        assert raw.call("OBJECT", "ENCODING", "h") == b"listpack"
        raw.call("HSET", "h", *sum((["f%d" % i, "v"] for i in range(511)), []))
        assert raw.call("OBJECT", "ENCODING", "h") == b"listpack"  # 512 fields: the default
        raw.call("HSET", "h", "one-more", "v")
        assert raw.call("OBJECT", "ENCODING", "h") == b"hashtable"

    def test_hashtable_by_value_length(self, raw):
        raw.call("HSET", "h", "a", "x" * 64)
        assert raw.call("OBJECT", "ENCODING", "h") == b"listpack"
        raw.call("HSET", "h", "b", "x" * 65)
        assert raw.call("OBJECT", "ENCODING", "h") == b"hashtable"
        raw.call("HSET", "h2", "y" * 65, "1")
        assert raw.call("OBJECT", "ENCODING", "h2") == b"hashtable"

    def test_config_threshold(self, raw, r):
        old = r.config_get("hash-max-listpack-entries")["hash-max-listpack-entries"]
        try:
            r.config_set("hash-max-listpack-entries", "2")
            raw.call("HSET", "h", "a", "1", "b", "2")
            assert raw.call("OBJECT", "ENCODING", "h") == b"listpack"
            raw.call("HSET", "h", "c", "3")
            assert raw.call("OBJECT", "ENCODING", "h") == b"hashtable"
        finally:
            r.config_set("hash-max-listpack-entries", old)

    def test_type_and_wrongtype(self, raw, strkey):
        raw.call("HSET", "h", "a", "1")
        assert raw.call("TYPE", "h") == "hash"
        for cmd in (("HSET", strkey, "a", "1"), ("HGET", strkey, "a"), ("HMGET", strkey, "a"),
                    ("HDEL", strkey, "a"), ("HLEN", strkey), ("HGETALL", strkey),
                    ("HINCRBY", strkey, "a", "1"), ("HINCRBYFLOAT", strkey, "a", "1"),
                    ("HRANDFIELD", strkey), ("HSCAN", strkey, "0"), ("HSETNX", strkey, "a", "1"),
                    ("HSTRLEN", strkey, "a"), ("HEXISTS", strkey, "a"), ("HKEYS", strkey),
                    ("GET", "h"), ("LPUSH", "h", "x"), ("INCR", "h")):
            assert_err(raw.call(*cmd), WRONGTYPE)

    @pytest.mark.dashkv_only
    def test_memory_usage(self, raw):
        raw.call("HSET", "h", "a", "1")
        small = raw.call("MEMORY", "USAGE", "h")
        raw.call("HSET", "h", *sum((["field%d" % i, "value%d" % i] for i in range(500)), []))
        # 500 listpack pairs of ~8-byte strings: at least 16 bytes each, whatever the allocator.
        assert raw.call("MEMORY", "USAGE", "h") > small + 500 * 16


class TestIncr:
    def test_hincrby(self, raw):
        assert raw.call("HINCRBY", "h", "n", "5") == 5
        assert raw.call("HINCRBY", "h", "n", "-7") == -2
        raw.call("HSET", "h", "s", "abc", "big", "9223372036854775807")
        assert_err(raw.call("HINCRBY", "h", "s", "1"), "ERR hash value is not an integer")
        assert_err(raw.call("HINCRBY", "h", "big", "1"),
                   "ERR increment or decrement would overflow")
        assert_err(raw.call("HINCRBY", "h", "n", "x"), ERR_NOT_INT)
        assert_err(raw.call("HINCRBY", "h", "n", "1.5"), ERR_NOT_INT)
        assert_err(raw.call("HINCRBY", "fresh", "n", "x"), ERR_NOT_INT)
        assert raw.call("EXISTS", "fresh") == 0

    def test_hincrbyfloat(self, raw):
        assert raw.call("HINCRBYFLOAT", "h", "f", "1.5") == b"1.5"
        assert raw.call("HINCRBYFLOAT", "h", "f", "0.1") == b"1.6"
        assert raw.call("HINCRBYFLOAT", "h", "f", "-1.6") == b"0"
        assert raw.call("HINCRBYFLOAT", "h", "e", "1e3") == b"1000"
        raw.call("HSET", "h", "s", "abc")
        assert_err(raw.call("HINCRBYFLOAT", "h", "s", "1"), "ERR hash value is not a float")
        assert_err(raw.call("HINCRBYFLOAT", "h", "f", "abc"), ERR_NOT_FLOAT)
        assert_err(raw.call("HINCRBYFLOAT", "h", "f", "inf"), "ERR value is NaN or Infinity")
        assert_err(raw.call("HINCRBYFLOAT", "fresh", "f", "x"), ERR_NOT_FLOAT)
        assert raw.call("EXISTS", "fresh") == 0

    def test_hincrbyfloat_resp3_is_bulk(self, raw):
        hello3(raw)
        assert raw.call("HINCRBYFLOAT", "h", "f", "2.5") == b"2.5"


class TestRandField:
    def fill(self, raw, n):
        raw.call("HSET", "h", *sum((["f%d" % i, "v%d" % i] for i in range(n)), []))

    @pytest.mark.parametrize("n", [5, 300])
    def test_hrandfield(self, raw, n):
        self.fill(raw, n)
        fields = {("f%d" % i).encode() for i in range(n)}
        assert raw.call("HRANDFIELD", "h") in fields
        got = raw.call("HRANDFIELD", "h", "3")
        assert len(got) == 3 and len(set(got)) == 3 and set(got) <= fields
        got = raw.call("HRANDFIELD", "h", str(n + 10))
        assert sorted(got) == sorted(fields)
        got = raw.call("HRANDFIELD", "h", "-20")
        assert len(got) == 20 and set(got) <= fields
        got = raw.call("HRANDFIELD", "h", "4", "WITHVALUES")
        d = pairs_to_dict(got)
        assert len(d) == 4 and all(v == b"v" + k[1:] for k, v in d.items())
        got = raw.call("HRANDFIELD", "h", "-6", "withvalues")
        assert len(got) == 12
        assert raw.call("HRANDFIELD", "h", "0") == []
        big = raw.call("HRANDFIELD", "h", str(n // 2 + 1))
        assert len(set(big)) == n // 2 + 1

    def test_hrandfield_missing_and_errors(self, raw):
        assert raw.call("HRANDFIELD", "missing") is None
        assert raw.call("HRANDFIELD", "missing", "3") == []
        raw.call("HSET", "h", "a", "1")
        assert_err(raw.call("HRANDFIELD", "h", "x"), ERR_NOT_INT)
        assert_err(raw.call("HRANDFIELD", "h", "1", "FOO"), ERR_SYNTAX)
        assert_err(raw.call("HRANDFIELD", "h", "-9223372036854775807", "WITHVALUES"),
                   "ERR value is out of range")
        assert_err(raw.call("HRANDFIELD", "h", "-9223372036854775808"),
                   "ERR value is out of range, value must between -9223372036854775807 and "
                   "9223372036854775807")

    def test_hrandfield_count_limits_as_redis(self, raw):
        # Redis 7.0.15's replies at the edges of the count's range (checked with redis-server).
        raw.call("HSET", "h", "f1", "v1", "f2", "v2")
        out_of_range = "ERR value is out of range"
        for count in ("-9223372036854775807", "-4611686018427387904", "4611686018427387904",
                      "9223372036854775807"):
            assert_err(raw.call("HRANDFIELD", "h", count, "WITHVALUES"), out_of_range)
            assert_err(raw.call("HRANDFIELD", "missing", count, "WITHVALUES"), out_of_range)
        assert_err(raw.call("HRANDFIELD", "h", "-9223372036854775808", "WITHVALUES", "x"),
                   "ERR value is out of range, value must between -9223372036854775807 and "
                   "9223372036854775807")
        assert_err(raw.call("HRANDFIELD", "h", "9223372036854775808"), ERR_NOT_INT)
        assert_err(raw.call("HRANDFIELD", "h", "1", "WITHVALUES", "x"), ERR_SYNTAX)
        assert_err(raw.call("HRANDFIELD", "h", "1", "WITHSCORES"), ERR_SYNTAX)
        assert sorted(raw.call("HRANDFIELD", "h", "9223372036854775807")) == [b"f1", b"f2"]
        assert sorted(raw.call("HRANDFIELD", "h", "4611686018427387903", "WITHVALUES")) == [
            b"f1", b"f2", b"v1", b"v2"]
        assert raw.call("HRANDFIELD", "h", "0", "WITHVALUES") == []
        assert raw.call("HRANDFIELD", "missing", "-9223372036854775807") == []

    @pytest.mark.dashkv_only
    @pytest.mark.parametrize("count", [["-9223372036854775807"], ["-100000000000000000"],
                                       ["-4611686018427387903", "WITHVALUES"],
                                       ["-89478486"], ["-44739243", "WITHVALUES"]])
    def test_hrandfield_huge_negative_count_refused(self, server, raw, count):
        # Redis tries to build such a reply and runs out of memory; dashkv refuses counts whose
        # reply cannot fit proto-max-bulk-len (512mb: at least 6 bytes per element).
        raw.call("HSET", "h", "f1", "v1", "f2", "v2")
        assert_err(raw.call("HRANDFIELD", "h", *count),
                   "ERR value is out of range, the reply would exceed proto-max-bulk-len")
        assert raw.call("HLEN", "h") == 2
        server.assert_alive()

    @pytest.mark.dashkv_only
    def test_hrandfield_reply_bounded_by_proto_max_bulk_len(self, raw):
        raw.call("HSET", "h", "f1", "v1", "f2", "v2")  # "$2\r\nf1\r\n": 8 bytes a field
        assert raw.call("CONFIG", "SET", "proto-max-bulk-len", "1mb") == "OK"
        try:
            assert len(raw.call("HRANDFIELD", "h", "-100000")) == 100000
            assert len(raw.call("HRANDFIELD", "h", "-60000", "WITHVALUES")) == 120000
            too_big = "ERR value is out of range, the reply would exceed proto-max-bulk-len"
            # Fits the 6-byte lower bound, overflows while written: rolled back, neighbours kept.
            raw.send(b"MULTI\r\n")
            assert raw.read() == "OK"
            for cmd in (("SET", "a", "1"), ("HRANDFIELD", "h", "-150000"),
                        ("HRANDFIELD", "h", "-80000", "WITHVALUES"), ("GET", "a")):
                assert raw.call(*cmd) == "QUEUED"
            got = raw.call("EXEC")
            assert got[0] == "OK" and got[3] == b"1"
            assert_err(got[1], too_big)
            assert_err(got[2], too_big)
        finally:
            raw.call("CONFIG", "SET", "proto-max-bulk-len", "512mb")

    def test_hrandfield_resp3_pairs(self, raw):
        hello3(raw)
        raw.call("HSET", "h", "a", "1", "b", "2")
        got = raw.call("HRANDFIELD", "h", "2", "WITHVALUES")
        assert sorted(got) == [[b"a", b"1"], [b"b", b"2"]]
        got = raw.call("HRANDFIELD", "h", "-3", "WITHVALUES")
        assert len(got) == 3 and all(len(p) == 2 for p in got)


class TestScan:
    def scan_all(self, raw, key, *opts):
        cursor, out = b"0", []
        for _ in range(10000):
            cursor, items = raw.call("HSCAN", key, cursor, *opts)
            out += items
            if cursor == b"0":
                return out
        raise AssertionError("HSCAN did not finish")

    @pytest.mark.parametrize("n", [10, 2000])
    def test_hscan_all(self, raw, n):
        raw.call("HSET", "h", *sum((["f%d" % i, "v%d" % i] for i in range(n)), []))
        d = pairs_to_dict(self.scan_all(raw, "h"))
        assert len(d) == n and d[b"f7"] == b"v7"
        d = pairs_to_dict(self.scan_all(raw, "h", "MATCH", "f1*", "COUNT", "100"))
        assert set(d) == {("f%d" % i).encode() for i in range(n) if str(i).startswith("1")}

    def test_hscan_survives_growth(self, raw):
        raw.call("HSET", "h", *sum((["f%d" % i, "v"] for i in range(300)), []))
        cursor, seen = b"0", set()
        grow = 300
        while True:
            cursor, items = raw.call("HSCAN", "h", cursor, "COUNT", "20")
            seen.update(items[0::2])
            raw.call("HSET", "h", *sum((["g%d" % i, "v"] for i in range(grow, grow + 50)), []))
            grow += 50
            if cursor == b"0":
                break
        assert {("f%d" % i).encode() for i in range(300)} <= seen

    def test_hscan_missing_and_errors(self, raw):
        assert raw.call("HSCAN", "missing", "0") == [b"0", []]
        raw.call("HSET", "h", "a", "1")
        assert_err(raw.call("HSCAN", "h", "x"), "ERR invalid cursor")
        assert_err(raw.call("HSCAN", "h", "0", "COUNT", "0"), ERR_SYNTAX)
        assert_err(raw.call("HSCAN", "h", "0", "MATCH"), ERR_SYNTAX)
        assert_err(raw.call("HSCAN", "h", "0", "FOO"), ERR_SYNTAX)

    @pytest.mark.dashkv_only
    def test_hscan_novalues(self, raw):
        # NOVALUES arrived in Redis 7.4; Redis 7.0 answers a syntax error.
        raw.call("HSET", "h", "a", "1", "b", "2")
        cursor, items = raw.call("HSCAN", "h", "0", "NOVALUES")
        assert cursor == b"0" and sorted(items) == [b"a", b"b"]


# Values over 64 bytes make a hashtable, short ones a listpack (hash-max-listpack-value 64).
HASH_ENCODINGS = {"listpack": "v", "hashtable": "v" * 100}
# Redis draws from a hashtable with dictGetFairRandomKey, which is only close to uniform (its
# chi-square statistic grows with the number of draws: 338 for 20,000 draws of 20 fields), so
# those checks describe dashkv alone; Redis's listpack draws are uniform and checked on both.
ENCODING_PARAMS = ["listpack", pytest.param("hashtable", marks=pytest.mark.dashkv_only)]


class TestRandFieldUniform:
    """Every draw of HRANDFIELD picks each field with the same probability, on every encoding.
    20 fields (19 degrees of freedom); the chi-square threshold is exceeded by a fair draw with
    probability < 1e-9, while a draw biased by the hash table's layout exceeds it by far."""

    FIELDS = [("field:%d" % i).encode() for i in range(20)]

    def fill(self, raw, encoding):
        args = []
        for f in self.FIELDS:
            args += [f, HASH_ENCODINGS[encoding]]
        raw.call("HSET", "h", *args)
        assert raw.call("OBJECT", "ENCODING", "h") == encoding.encode()

    @pytest.mark.parametrize("encoding", ENCODING_PARAMS)
    def test_negative_count(self, raw, encoding):
        self.fill(raw, encoding)
        assert_uniform(raw.call("HRANDFIELD", "h", "-20000"), self.FIELDS,
                       "HRANDFIELD -20000 (%s)" % encoding)
        flat = raw.call("HRANDFIELD", "h", "-20000", "WITHVALUES")
        assert_uniform(flat[0::2], self.FIELDS, "HRANDFIELD -20000 WITHVALUES (%s)" % encoding)

    @pytest.mark.parametrize("encoding", ENCODING_PARAMS)
    def test_single_and_distinct(self, raw, encoding):
        self.fill(raw, encoding)
        singles = raw.pipeline([("HRANDFIELD", "h")] * 10000)
        assert_uniform(singles, self.FIELDS, "HRANDFIELD (%s)" % encoding)
        picks = []
        for reply in raw.pipeline([("HRANDFIELD", "h", "3")] * 4000):
            assert len(set(reply)) == 3
            picks += reply
        assert_uniform(picks, self.FIELDS, "HRANDFIELD 3 (%s)" % encoding)
