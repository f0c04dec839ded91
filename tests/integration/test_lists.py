"""List commands: replies, reply types and error texts as Redis 7.0 (checked against
redis-server 7.0 with DASHKV_TEST_TARGET=redis)."""

import pytest

from helpers import ERR_NOT_INT, ERR_SYNTAX, IS_DASHKV, WRONGTYPE, arity, assert_err

ERR_POSITIVE = "ERR value is out of range, must be positive"
VALUE = "in-memory data structure store."


@pytest.fixture
def strkey(r):
    r.set("astring", "x")
    return "astring"


def hello3(raw):
    raw.call("HELLO", "3")
    return raw


class TestPushPop:
    def test_push_and_range(self, raw):
        assert raw.call("RPUSH", "l", "a", "b", "c") == 3
        assert raw.call("LPUSH", "l", "z", "y") == 5
        assert raw.call("LRANGE", "l", "0", "-1") == [b"y", b"z", b"a", b"b", b"c"]
        assert raw.call("LLEN", "l") == 5
        assert raw.call("LLEN", "missing") == 0

    def test_pushx(self, raw):
        assert raw.call("LPUSHX", "l", "a") == 0
        assert raw.call("RPUSHX", "l", "a", "b") == 0
        assert raw.call("EXISTS", "l") == 0
        raw.call("RPUSH", "l", "x")
        assert raw.call("LPUSHX", "l", "a", "b") == 3
        assert raw.call("RPUSHX", "l", "c") == 4
        assert raw.call("LRANGE", "l", "0", "-1") == [b"b", b"a", b"x", b"c"]

    def test_pop_single(self, raw):
        raw.call("RPUSH", "l", "a", "b", "c")
        assert raw.call("LPOP", "l") == b"a"
        assert raw.call("RPOP", "l") == b"c"
        assert raw.call("LPOP", "l") == b"b"
        assert raw.call("EXISTS", "l") == 0  # empty lists are deleted
        assert raw.call("LPOP", "l") is None
        assert raw.call("RPOP", "l") is None

    def test_pop_count(self, raw):
        raw.call("RPUSH", "l", "a", "b", "c", "d")
        assert raw.call("LPOP", "l", "2") == [b"a", b"b"]
        assert raw.call("RPOP", "l", "5") == [b"d", b"c"]
        assert raw.call("EXISTS", "l") == 0
        assert raw.call("LPOP", "l", "2") is None  # nil array for a missing key
        raw.call("RPUSH", "l", "a")
        assert raw.call("LPOP", "l", "0") == []
        assert_err(raw.call("LPOP", "l", "-1"), ERR_POSITIVE)
        assert_err(raw.call("RPOP", "l", "x"), ERR_POSITIVE)
        assert_err(raw.call("LPOP", "l", "1", "2"), arity("lpop"))

    def test_pop_count_resp3_null(self, raw):
        hello3(raw)
        assert raw.call("LPOP", "missing", "3") is None
        assert raw.call("LPOP", "missing") is None

    def test_integers_round_trip(self, raw):
        vals = ["0", "-1", "127", "128", "-4096", "4095", "32767", "-32768", "8388607",
                "2147483647", "-2147483648", "9223372036854775807", "-9223372036854775808",
                "007", "+1", "1.5", " 1", ""]
        raw.call("RPUSH", "l", *vals)
        assert raw.call("LRANGE", "l", "0", "-1") == [v.encode() for v in vals]

    def test_arity(self, raw):
        assert_err(raw.call("LPUSH", "l"), arity("lpush"))
        assert_err(raw.call("RPUSH"), arity("rpush"))
        assert_err(raw.call("LLEN"), arity("llen"))


class TestIndexSetRange:
    def test_lindex(self, raw):
        raw.call("RPUSH", "l", "a", "b", "c")
        assert raw.call("LINDEX", "l", "0") == b"a"
        assert raw.call("LINDEX", "l", "-1") == b"c"
        assert raw.call("LINDEX", "l", "3") is None
        assert raw.call("LINDEX", "l", "-4") is None
        assert raw.call("LINDEX", "missing", "0") is None
        assert_err(raw.call("LINDEX", "l", "x"), ERR_NOT_INT)

    def test_lset(self, raw):
        raw.call("RPUSH", "l", "a", "b", "c")
        assert raw.call("LSET", "l", "1", "B") == "OK"
        assert raw.call("LSET", "l", "-1", "C") == "OK"
        assert raw.call("LRANGE", "l", "0", "-1") == [b"a", b"B", b"C"]
        assert_err(raw.call("LSET", "l", "3", "x"), "ERR index out of range")
        assert_err(raw.call("LSET", "missing", "0", "x"), "ERR no such key")
        assert_err(raw.call("LSET", "l", "x", "x"), ERR_NOT_INT)

    def test_lrange_bounds(self, raw):
        raw.call("RPUSH", "l", *"abcdef")
        assert raw.call("LRANGE", "l", "1", "3") == [b"b", b"c", b"d"]
        assert raw.call("LRANGE", "l", "-2", "100") == [b"e", b"f"]
        assert raw.call("LRANGE", "l", "-100", "0") == [b"a"]
        assert raw.call("LRANGE", "l", "4", "2") == []
        assert raw.call("LRANGE", "l", "10", "20") == []
        assert raw.call("LRANGE", "missing", "0", "-1") == []
        assert_err(raw.call("LRANGE", "l", "a", "b"), ERR_NOT_INT)

    def test_ltrim(self, raw):
        raw.call("RPUSH", "l", *"abcdef")
        assert raw.call("LTRIM", "l", "1", "-2") == "OK"
        assert raw.call("LRANGE", "l", "0", "-1") == [b"b", b"c", b"d", b"e"]
        assert raw.call("LTRIM", "l", "5", "10") == "OK"
        assert raw.call("EXISTS", "l") == 0
        assert raw.call("LTRIM", "missing", "0", "1") == "OK"
        assert_err(raw.call("LTRIM", "l", "x", "1"), ERR_NOT_INT)


class TestInsertRemPos:
    def test_linsert(self, raw):
        raw.call("RPUSH", "l", "a", "c")
        assert raw.call("LINSERT", "l", "BEFORE", "c", "b") == 3
        assert raw.call("LINSERT", "l", "after", "c", "d") == 4
        assert raw.call("LINSERT", "l", "BEFORE", "zz", "x") == -1
        assert raw.call("LINSERT", "missing", "BEFORE", "a", "x") == 0
        assert raw.call("LRANGE", "l", "0", "-1") == [b"a", b"b", b"c", b"d"]
        assert_err(raw.call("LINSERT", "l", "MIDDLE", "a", "x"), ERR_SYNTAX)

    def test_lrem(self, raw):
        raw.call("RPUSH", "l", "a", "b", "a", "c", "a")
        assert raw.call("LREM", "l", "-2", "a") == 2
        assert raw.call("LRANGE", "l", "0", "-1") == [b"a", b"b", b"c"]
        assert raw.call("LREM", "l", "1", "b") == 1
        assert raw.call("LREM", "l", "0", "zz") == 0
        assert raw.call("LREM", "l", "0", "a") == 1
        assert raw.call("LREM", "l", "0", "c") == 1
        assert raw.call("EXISTS", "l") == 0
        assert raw.call("LREM", "missing", "0", "a") == 0
        assert_err(raw.call("LREM", "l", "x", "a"), ERR_NOT_INT)

    def test_lpos(self, raw):
        raw.call("RPUSH", "l", "a", "b", "c", "a", "b", "a")
        assert raw.call("LPOS", "l", "a") == 0
        assert raw.call("LPOS", "l", "a", "RANK", "2") == 3
        assert raw.call("LPOS", "l", "a", "RANK", "-1") == 5
        assert raw.call("LPOS", "l", "a", "RANK", "-9223372036854775808") == 5  # as RANK -1
        assert raw.call("LPOS", "l", "a", "COUNT", "0") == [0, 3, 5]
        assert raw.call("LPOS", "l", "a", "COUNT", "2", "RANK", "-1") == [5, 3]
        assert raw.call("LPOS", "l", "a", "COUNT", "0", "MAXLEN", "4") == [0, 3]
        assert raw.call("LPOS", "l", "a", "RANK", "-1", "MAXLEN", "2") == 5
        assert raw.call("LPOS", "l", "zz") is None
        assert raw.call("LPOS", "l", "zz", "COUNT", "1") == []
        assert raw.call("LPOS", "missing", "a") is None
        assert raw.call("LPOS", "missing", "a", "COUNT", "0") == []

    def test_lpos_errors(self, raw):
        raw.call("RPUSH", "l", "a")
        assert_err(raw.call("LPOS", "l", "a", "RANK", "0"),
                   "ERR RANK can't be zero: use 1 to start from the first match, 2 from the "
                   "second ... or use negative to start from the end of the list")
        assert_err(raw.call("LPOS", "l", "a", "COUNT", "-1"), "ERR COUNT can't be negative")
        assert_err(raw.call("LPOS", "l", "a", "MAXLEN", "-1"), "ERR MAXLEN can't be negative")
        assert_err(raw.call("LPOS", "l", "a", "FOO"), ERR_SYNTAX)
        assert_err(raw.call("LPOS", "l", "a", "RANK"), ERR_SYNTAX)
        assert_err(raw.call("LPOS", "l", "a", "RANK", "x"), ERR_NOT_INT)


class TestMove:
    def test_rpoplpush_same_and_rotate(self, raw):
        raw.call("RPUSH", "l", "a", "b", "c")
        assert raw.call("RPOPLPUSH", "l", "l") == b"c"
        assert raw.call("LRANGE", "l", "0", "-1") == [b"c", b"a", b"b"]
        assert raw.call("RPOPLPUSH", "missing", "l") is None

    def test_lmove_directions(self, raw):
        # {t} keeps both keys on one shard; plain names exercise the cross-shard path too.
        for src, dst in (("{t}a", "{t}b"), ("src", "dst"), ("a1", "zz9")):
            raw.call("RPUSH", src, "1", "2", "3")
            assert raw.call("LMOVE", src, dst, "LEFT", "RIGHT") == b"1"
            assert raw.call("LMOVE", src, dst, "RIGHT", "LEFT") == b"3"
            assert raw.call("LMOVE", src, dst, "left", "left") == b"2"
            assert raw.call("EXISTS", src) == 0
            assert raw.call("LRANGE", dst, "0", "-1") == [b"2", b"3", b"1"]
            assert raw.call("LMOVE", src, dst, "LEFT", "LEFT") is None

    def test_lmove_wrongtype_keeps_element(self, raw):
        for src, dst in (("{t}a", "{t}s"), ("src", "str"), ("a1", "zz9")):
            raw.call("SET", dst, "x")
            raw.call("RPUSH", src, "1", "2")
            assert_err(raw.call("LMOVE", src, dst, "LEFT", "RIGHT"), WRONGTYPE)
            assert_err(raw.call("RPOPLPUSH", src, dst), WRONGTYPE)
            assert raw.call("LRANGE", src, "0", "-1") == [b"1", b"2"]
            assert_err(raw.call("RPOPLPUSH", dst, src), WRONGTYPE)
            assert raw.call("RPOPLPUSH", "nosuch", dst) is None
        assert_err(raw.call("LMOVE", "a", "b", "UP", "LEFT"), ERR_SYNTAX)


class TestLMPop:
    def test_lmpop(self, raw):
        raw.call("RPUSH", "l2", "a", "b", "c")
        assert raw.call("LMPOP", "3", "l0", "l1", "l2", "LEFT") == [b"l2", [b"a"]]
        assert raw.call("LMPOP", "2", "l0", "l2", "RIGHT", "COUNT", "5") == [b"l2", [b"c", b"b"]]
        assert raw.call("EXISTS", "l2") == 0
        assert raw.call("LMPOP", "2", "l0", "l2", "RIGHT") is None

    def test_lmpop_first_nonempty_wins(self, raw):
        for i in range(8):
            raw.call("RPUSH", "k%d" % i, "v%d" % i)
        keys = ["none%d" % i for i in range(5)] + ["k%d" % i for i in range(8)]
        assert raw.call("LMPOP", str(len(keys)), *keys, "LEFT") == [b"k0", [b"v0"]]
        assert raw.call("LMPOP", str(len(keys)), *keys, "LEFT") == [b"k1", [b"v1"]]

    def test_lmpop_errors(self, raw, strkey):
        assert_err(raw.call("LMPOP", "0", "l", "LEFT"), "ERR numkeys should be greater than 0")
        assert_err(raw.call("LMPOP", "x", "l", "LEFT"), "ERR numkeys should be greater than 0")
        assert_err(raw.call("LMPOP", "1", "l", "LEFT", "COUNT", "0"),
                   "ERR count should be greater than 0")
        assert_err(raw.call("LMPOP", "1", "l", "UP"), ERR_SYNTAX)
        assert_err(raw.call("LMPOP", "2", "l", "LEFT"), ERR_SYNTAX)
        assert_err(raw.call("LMPOP", "5", "l", "LEFT"), ERR_SYNTAX)
        assert_err(raw.call("LMPOP", "1", "l", "LEFT", "COUNT", "1", "x"), ERR_SYNTAX)
        assert_err(raw.call("LMPOP", "2", "nothing", strkey, "LEFT"), WRONGTYPE)
        assert_err(raw.call("LMPOP", "1", "l"), arity("lmpop"))

    @pytest.mark.parametrize("cmd", [("LMPOP",), ("BLMPOP", "0.01")])
    @pytest.mark.parametrize("count", ["a", "", "0", "-1", "1.5", "9223372036854775808",
                                       "-9223372036854775808"])
    def test_lmpop_count_errors_as_redis(self, raw, cmd, count):
        # Redis parses numkeys, LEFT|RIGHT and COUNT with one message for any bad count, before
        # the timeout of BLMPOP.
        count_err = "ERR count should be greater than 0"
        raw.call("RPUSH", "k", "a")
        assert_err(raw.call(*cmd, "1", "k", "LEFT", "COUNT", count), count_err)
        assert_err(raw.call(*cmd, "1", "k", "LEFT", "COUNT", count, "COUNT", "2"), count_err)
        if len(cmd) == 2:
            for timeout in ("-1", "a", "inf"):
                assert_err(raw.call("BLMPOP", timeout, "1", "k", "LEFT", "COUNT", count),
                           count_err)
        assert raw.call("LLEN", "k") == 1

    def test_lmpop_count_syntax(self, raw):
        raw.call("RPUSH", "k", "a")
        for args in (("COUNT",), ("COUNT", "1", "COUNT", "2"), ("COUNT", "1", "x")):
            assert_err(raw.call("LMPOP", "1", "k", "LEFT", *args), ERR_SYNTAX)
            assert_err(raw.call("BLMPOP", "0.01", "1", "k", "LEFT", *args), ERR_SYNTAX)
        assert_err(raw.call("LMPOP", "1", "k", "MIDDLE", "COUNT", "a"), ERR_SYNTAX)
        assert_err(raw.call("BLMPOP", "-1", "0", "k", "LEFT"),
                   "ERR numkeys should be greater than 0")
        assert_err(raw.call("BLMPOP", "-1", "1", "k", "LEFT"), "ERR timeout is negative")
        assert raw.call("LMPOP", "1", "k", "LEFT", "COUNT", "9223372036854775807") == [
            b"k", [b"a"]]

    def test_lmpop_resp3(self, raw):
        hello3(raw)
        assert raw.call("LMPOP", "1", "nothing", "LEFT") is None
        raw.call("RPUSH", "l", "a")
        assert raw.call("LMPOP", "1", "l", "LEFT") == [b"l", [b"a"]]


class TestTypesAndEncodings:
    def test_wrongtype_both_ways(self, raw, strkey):
        raw.call("RPUSH", "l", "a")
        for cmd in (("LPUSH", strkey, "x"), ("RPUSHX", strkey, "x"), ("LPOP", strkey),
                    ("RPOP", strkey, "2"), ("LLEN", strkey), ("LINDEX", strkey, "0"),
                    ("LSET", strkey, "0", "x"), ("LRANGE", strkey, "0", "1"),
                    ("LTRIM", strkey, "0", "1"), ("LINSERT", strkey, "BEFORE", "a", "b"),
                    ("LREM", strkey, "0", "a"), ("LPOS", strkey, "a"),
                    ("GET", "l"), ("APPEND", "l", "x"), ("INCR", "l"), ("STRLEN", "l")):
            assert_err(raw.call(*cmd), WRONGTYPE)
        assert raw.call("TYPE", "l") == "list"
        assert raw.call("SET", "l", "v") == "OK"  # SET overwrites any type
        assert raw.call("TYPE", "l") == "string"

    def test_encoding_grows_to_quicklist(self, raw):
        raw.call("RPUSH", "small", "a", "b")
        assert raw.call("OBJECT", "ENCODING", "small") in (b"listpack", b"quicklist")
        raw.call("RPUSH", "big", *(["x" * 100] * 200))
        assert raw.call("OBJECT", "ENCODING", "big") == b"quicklist"
        assert raw.call("LLEN", "big") == 200

    def test_large_elements(self, raw):
        big = "y" * 20000
        raw.call("RPUSH", "l", "a", big, "b")
        assert raw.call("LINDEX", "l", "1") == big.encode()
        assert raw.call("LRANGE", "l", "0", "-1") == [b"a", big.encode(), b"b"]
        assert raw.call("LREM", "l", "0", big) == 1
        assert raw.call("LRANGE", "l", "0", "-1") == [b"a", b"b"]

    def test_many_elements_and_compression(self, raw, r):
        r.config_set("list-compress-depth", "1")
        try:
            n = 5000
            for i in range(0, n, 500):
                raw.call("RPUSH", "l", *[VALUE + str(j) for j in range(i, i + 500)])
            assert raw.call("LLEN", "l") == n
            assert raw.call("LINDEX", "l", "2500") == (VALUE + "2500").encode()
            assert raw.call("LRANGE", "l", "2498", "2501") == [
                (VALUE + str(j)).encode() for j in range(2498, 2502)]
            assert raw.call("LINSERT", "l", "BEFORE", VALUE + "3000", "mid") == n + 1
            assert raw.call("LPOS", "l", "mid") == 3000
            assert raw.call("LSET", "l", "3000", "MID") == "OK"
            assert raw.call("LREM", "l", "0", "MID") == 1
            assert raw.call("LTRIM", "l", "100", "-101") == "OK"
            assert raw.call("LLEN", "l") == n - 200
            assert raw.call("LPOP", "l") == (VALUE + "100").encode()
        finally:
            r.config_set("list-compress-depth", "0")

    @pytest.mark.dashkv_only
    def test_debug_object_quicklist_fields(self, raw):
        raw.call("RPUSH", "l", *(["x" * 100] * 500))
        line = raw.call("DEBUG", "OBJECT", "l")
        for field in ("encoding:quicklist", "ql_nodes:", "ql_avg_node:", "ql_listpack_max:-2",
                      "ql_compressed:0", "ql_uncompressed_size:"):
            assert field in line, line
        assert raw.call("MEMORY", "USAGE", "l") > 500 * 100

    def test_memory_usage_grows(self, raw):
        raw.call("RPUSH", "l", "a")
        small = raw.call("MEMORY", "USAGE", "l")
        raw.call("RPUSH", "l", *(["z" * 50] * 2000))
        assert raw.call("MEMORY", "USAGE", "l") > small + 50 * 1000

    def test_queue_pattern(self, raw):
        for i in range(0, 20000, 1000):
            raw.call("RPUSH", "q", *[str(j) for j in range(i, i + 1000)])
        for i in range(0, 19000, 1000):
            got = raw.call("LPOP", "q", "1000")
            assert got[0] == str(i).encode() and got[-1] == str(i + 999).encode()
        assert raw.call("LLEN", "q") == 1000

    def test_expire_on_list(self, raw):
        raw.call("RPUSH", "l", "a")
        assert raw.call("PEXPIRE", "l", "100000") == 1
        assert raw.call("TTL", "l") > 0
        raw.call("RPUSH", "l", "b")
        assert raw.call("TTL", "l") > 0
