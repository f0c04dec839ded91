"""String and bitmap commands: replies, reply types and error texts as Redis 7."""

import random
import time

import pytest
import redis

from helpers import (ERR_NOT_FLOAT, ERR_NOT_INT, ERR_SYNTAX, WRONGTYPE, arity, assert_err,
                     wait_until)
from resp_client import Map, Simple

INT64_MAX = 2**63 - 1
INT64_MIN = -(2**63)


@pytest.fixture
def listkey(r):
    """A key holding a list (WRONGTYPE target)."""
    r.lpush("alist", "x")
    return "alist"


# ---------------------------------------------------------------- SET / GET


class TestSet:
    def test_set_get_reply_types(self, raw):
        reply = raw.call("SET", "k", "v")
        assert reply == "OK" and isinstance(reply, Simple)
        assert raw.call("GET", "k") == b"v"
        assert raw.call("GET", "missing") is None

    def test_binary_and_empty_values(self, rb):
        value = bytes(range(256)) * 4 + b"\r\n\x00"
        assert rb.set(b"bin\x00key\r\n", value)
        assert rb.get(b"bin\x00key\r\n") == value
        assert rb.set("empty", b"")
        assert rb.get("empty") == b""
        assert rb.exists("empty") == 1

    def test_large_value(self, rb):
        value = b"x" * (3 * 1024 * 1024 + 7)
        assert rb.set("big", value)
        assert rb.get("big") == value
        assert rb.strlen("big") == len(value)

    def test_overwrite(self, r):
        r.set("k", "1")
        r.set("k", "two")
        assert r.get("k") == "two"

    def test_nx_xx(self, raw):
        assert raw.call("SET", "k", "v", "XX") is None
        assert raw.call("GET", "k") is None
        assert raw.call("SET", "k", "v1", "NX") == "OK"
        assert raw.call("SET", "k", "v2", "NX") is None
        assert raw.call("GET", "k") == b"v1"
        assert raw.call("SET", "k", "v3", "XX") == "OK"
        assert raw.call("GET", "k") == b"v3"

    def test_options_case_insensitive(self, raw):
        assert raw.call("set", "k", "v", "nx", "ex", "100") == "OK"
        assert 0 < raw.call("ttl", "k") <= 100

    def test_get_option(self, raw):
        assert raw.call("SET", "k", "v1", "GET") is None
        assert raw.call("SET", "k", "v2", "GET") == b"v1"
        assert raw.call("GET", "k") == b"v2"

    def test_get_with_nx_and_xx(self, raw):
        # Redis 7.0 allows NX together with GET.
        assert raw.call("SET", "k", "a", "NX", "GET") is None
        assert raw.call("GET", "k") == b"a"
        assert raw.call("SET", "k", "b", "NX", "GET") == b"a"
        assert raw.call("GET", "k") == b"a"
        assert raw.call("SET", "x", "a", "XX", "GET") is None
        assert raw.call("EXISTS", "x") == 0
        assert raw.call("SET", "k", "c", "XX", "GET") == b"a"
        assert raw.call("GET", "k") == b"c"

    def test_get_with_expiry(self, raw):
        raw.call("SET", "k", "old")
        assert raw.call("SET", "k", "new", "GET", "EX", "100") == b"old"
        assert 98 <= raw.call("TTL", "k") <= 100
        assert raw.call("SET", "k", "newer", "KEEPTTL", "GET") == b"new"
        assert 98 <= raw.call("TTL", "k") <= 100

    def test_ex_px(self, raw):
        assert raw.call("SET", "k", "v", "EX", "100") == "OK"
        assert 98 <= raw.call("TTL", "k") <= 100
        assert raw.call("SET", "k", "v", "PX", "100000") == "OK"
        assert 98000 <= raw.call("PTTL", "k") <= 100000

    def test_exat_pxat(self, raw):
        at = int(time.time()) + 100
        assert raw.call("SET", "k", "v", "EXAT", str(at)) == "OK"
        assert raw.call("EXPIRETIME", "k") == at
        pat = int(time.time() * 1000) + 100000
        assert raw.call("SET", "k", "v", "PXAT", str(pat)) == "OK"
        assert raw.call("PEXPIRETIME", "k") == pat

    def test_exat_in_the_past_deletes(self, raw):
        assert raw.call("SET", "k", "v", "EXAT", "1") == "OK"
        assert raw.call("GET", "k") is None
        assert raw.call("EXISTS", "k") == 0
        assert raw.call("SET", "k", "v", "PXAT", "1") == "OK"
        assert raw.call("EXISTS", "k") == 0

    def test_plain_set_clears_ttl_and_keepttl_keeps_it(self, raw):
        raw.call("SET", "k", "v", "EX", "100")
        raw.call("SET", "k", "v2", "KEEPTTL")
        assert 0 < raw.call("TTL", "k") <= 100
        assert raw.call("GET", "k") == b"v2"
        raw.call("SET", "k", "v3")
        assert raw.call("TTL", "k") == -1

    def test_px_expires(self, raw):
        assert raw.call("SET", "k", "v", "PX", "30") == "OK"
        wait_until(lambda: raw.call("GET", "k") is None, what="key to expire")

    @pytest.mark.parametrize("args", [
        ("NX", "XX"),
        ("EX", "10", "PX", "100"),
        ("EX", "10", "EXAT", "10"),
        ("PX", "10", "PXAT", "10"),
        ("EX", "10", "KEEPTTL"),
        ("KEEPTTL", "PX", "10"),
        ("EX",),
        ("PX",),
        ("FOO",),
        ("NX", "NX", "XX"),
        ("GET", "FOO"),
    ])
    def test_syntax_errors(self, raw, args):
        assert_err(raw.call("SET", "k", "v", *args), ERR_SYNTAX)
        assert raw.call("EXISTS", "k") == 0

    @pytest.mark.parametrize("opt", ["EX", "PX", "EXAT", "PXAT"])
    @pytest.mark.parametrize("val", ["0", "-1"])
    def test_invalid_expire_time(self, raw, opt, val):
        assert_err(raw.call("SET", "k", "v", opt, val), "ERR invalid expire time in 'set' command")
        assert raw.call("EXISTS", "k") == 0

    @pytest.mark.parametrize("opt", ["EX", "PX"])
    @pytest.mark.parametrize("val", ["abc", "1.5", "", "99999999999999999999"])
    def test_expire_not_integer(self, raw, opt, val):
        assert_err(raw.call("SET", "k", "v", opt, val), ERR_NOT_INT)

    def test_ex_overflow(self, raw):
        # EX seconds * 1000 overflows.
        assert_err(raw.call("SET", "k", "v", "EX", str(INT64_MAX // 10)),
                   "ERR invalid expire time in 'set' command")

    def test_arity(self, raw):
        assert_err(raw.call("SET", "k"), arity("set"))
        assert_err(raw.call("GET"), arity("get"))
        assert_err(raw.call("GET", "a", "b"), arity("get"))

    @pytest.mark.needs_lists
    def test_wrongtype(self, raw, listkey):
        assert_err(raw.call("GET", listkey), WRONGTYPE)
        assert_err(raw.call("SET", listkey, "v", "GET"), WRONGTYPE)
        assert raw.call("TYPE", listkey) == "list"
        # Plain SET overwrites any type.
        assert raw.call("SET", listkey, "v") == "OK"
        assert raw.call("TYPE", listkey) == "string"


# ---------------------------------------------------- GETSET GETDEL GETEX


class TestGetVariants:
    def test_getset(self, raw):
        assert raw.call("GETSET", "k", "a") is None
        assert raw.call("GETSET", "k", "b") == b"a"
        assert raw.call("GET", "k") == b"b"
        raw.call("EXPIRE", "k", "100")
        raw.call("GETSET", "k", "c")
        assert raw.call("TTL", "k") == -1
        assert_err(raw.call("GETSET", "k"), arity("getset"))

    def test_getdel(self, raw):
        raw.call("SET", "k", "v")
        assert raw.call("GETDEL", "k") == b"v"
        assert raw.call("EXISTS", "k") == 0
        assert raw.call("GETDEL", "k") is None
        assert_err(raw.call("GETDEL"), arity("getdel"))

    def test_getex(self, raw):
        assert raw.call("GETEX", "missing", "EX", "10") is None
        assert raw.call("EXISTS", "missing") == 0
        raw.call("SET", "k", "v")
        assert raw.call("GETEX", "k") == b"v"
        assert raw.call("TTL", "k") == -1
        assert raw.call("GETEX", "k", "EX", "100") == b"v"
        assert 98 <= raw.call("TTL", "k") <= 100
        assert raw.call("GETEX", "k", "PX", "200000") == b"v"
        assert 198000 <= raw.call("PTTL", "k") <= 200000
        at = int(time.time()) + 500
        assert raw.call("GETEX", "k", "EXAT", str(at)) == b"v"
        assert raw.call("EXPIRETIME", "k") == at
        pat = int(time.time() * 1000) + 600000
        assert raw.call("GETEX", "k", "PXAT", str(pat)) == b"v"
        assert raw.call("PEXPIRETIME", "k") == pat
        assert raw.call("GETEX", "k", "PERSIST") == b"v"
        assert raw.call("TTL", "k") == -1

    def test_getex_past_deletes(self, raw):
        raw.call("SET", "k", "v")
        assert raw.call("GETEX", "k", "PXAT", "1") == b"v"
        assert raw.call("EXISTS", "k") == 0

    @pytest.mark.parametrize("args", [
        ("EX", "10", "PX", "10"),
        ("PERSIST", "EX", "10"),
        ("EX", "10", "PERSIST"),
        ("EX",),
        ("FOO",),
        ("KEEPTTL",),
        ("NX",),
    ])
    def test_getex_syntax(self, raw, args):
        raw.call("SET", "k", "v")
        assert_err(raw.call("GETEX", "k", *args), ERR_SYNTAX)

    @pytest.mark.parametrize("opt", ["EX", "PX", "EXAT", "PXAT"])
    def test_getex_invalid_expire(self, raw, opt):
        raw.call("SET", "k", "v")
        assert_err(raw.call("GETEX", "k", opt, "0"), "ERR invalid expire time in 'getex' command")
        assert_err(raw.call("GETEX", "k", opt, "-5"),
                   "ERR invalid expire time in 'getex' command")
        assert_err(raw.call("GETEX", "k", opt, "x"), ERR_NOT_INT)
        assert raw.call("TTL", "k") == -1

    @pytest.mark.needs_lists
    def test_wrongtype(self, raw, listkey):
        assert_err(raw.call("GETSET", listkey, "v"), WRONGTYPE)
        assert_err(raw.call("GETDEL", listkey), WRONGTYPE)
        assert_err(raw.call("GETEX", listkey), WRONGTYPE)


class TestSetVariants:
    def test_setnx(self, raw):
        assert raw.call("SETNX", "k", "a") == 1
        assert raw.call("SETNX", "k", "b") == 0
        assert raw.call("GET", "k") == b"a"
        assert_err(raw.call("SETNX", "k"), arity("setnx"))

    def test_setex_psetex(self, raw):
        reply = raw.call("SETEX", "k", "100", "v")
        assert reply == "OK" and isinstance(reply, Simple)
        assert 98 <= raw.call("TTL", "k") <= 100
        assert raw.call("PSETEX", "p", "100000", "v") == "OK"
        assert 98000 <= raw.call("PTTL", "p") <= 100000
        assert raw.call("GET", "p") == b"v"

    def test_setex_errors(self, raw):
        for bad in ("0", "-1"):
            assert_err(raw.call("SETEX", "k", bad, "v"),
                       "ERR invalid expire time in 'setex' command")
            assert_err(raw.call("PSETEX", "k", bad, "v"),
                       "ERR invalid expire time in 'psetex' command")
        assert_err(raw.call("SETEX", "k", "abc", "v"), ERR_NOT_INT)
        assert_err(raw.call("SETEX", "k", "10"), arity("setex"))
        assert raw.call("EXISTS", "k") == 0

    def test_mget(self, raw):
        raw.call("SET", "a", "1")
        raw.call("SET", "c", "3")
        assert raw.call("MGET", "a", "b", "c", "a") == [b"1", None, b"3", b"1"]
        assert_err(raw.call("MGET"), arity("mget"))

    def test_mget_many_keys_across_shards(self, r):
        keys = ["mk:%d" % i for i in range(500)]
        with r.pipeline(transaction=False) as p:
            for i, k in enumerate(keys):
                if i % 3:
                    p.set(k, str(i))
            p.execute()
        got = r.mget(keys + ["nope"])
        assert got == [str(i) if i % 3 else None for i in range(500)] + [None]

    @pytest.mark.needs_lists
    def test_mget_wrongtype_is_nil(self, raw, listkey):
        raw.call("SET", "a", "1")
        assert raw.call("MGET", "a", listkey) == [b"1", None]

    def test_append_strlen(self, raw):
        assert raw.call("STRLEN", "k") == 0
        assert raw.call("APPEND", "k", "Hello") == 5
        assert raw.call("APPEND", "k", " World") == 11
        assert raw.call("GET", "k") == b"Hello World"
        assert raw.call("STRLEN", "k") == 11
        raw.call("SET", "n", "12")
        assert raw.call("APPEND", "n", "34") == 4
        assert raw.call("INCR", "n") == 1235
        assert raw.call("APPEND", "e", "") == 0
        assert raw.call("EXISTS", "e") == 1
        assert_err(raw.call("APPEND", "k"), arity("append"))
        assert_err(raw.call("STRLEN"), arity("strlen"))

    def test_strlen_integer_encoded(self, raw):
        raw.call("SET", "k", "-12345")
        assert raw.call("STRLEN", "k") == 6

    def test_append_keeps_ttl(self, raw):
        raw.call("SET", "k", "a", "EX", "100")
        raw.call("APPEND", "k", "b")
        assert 0 < raw.call("TTL", "k") <= 100

    @pytest.mark.needs_lists
    def test_wrongtype(self, raw, listkey):
        assert_err(raw.call("APPEND", listkey, "x"), WRONGTYPE)
        assert_err(raw.call("STRLEN", listkey), WRONGTYPE)
        assert raw.call("SETNX", listkey, "x") == 0


# ---------------------------------------------------------- INCR family


class TestIncr:
    def test_incr_decr(self, raw):
        assert raw.call("INCR", "n") == 1
        assert raw.call("INCR", "n") == 2
        assert raw.call("DECR", "n") == 1
        assert raw.call("DECR", "d") == -1
        assert raw.call("INCRBY", "n", "10") == 11
        assert raw.call("INCRBY", "n", "-20") == -9
        assert raw.call("DECRBY", "n", "-9") == 0
        assert raw.call("DECRBY", "n", "5") == -5
        assert raw.call("GET", "n") == b"-5"

    def test_incr_keeps_ttl(self, raw):
        raw.call("SET", "n", "1", "EX", "100")
        raw.call("INCR", "n")
        assert 0 < raw.call("TTL", "n") <= 100

    def test_incr_on_big_values(self, raw):
        raw.call("SET", "n", str(INT64_MAX - 1))
        assert raw.call("INCR", "n") == INT64_MAX
        assert_err(raw.call("INCR", "n"), "ERR increment or decrement would overflow")
        assert raw.call("GET", "n") == str(INT64_MAX).encode()
        raw.call("SET", "m", str(INT64_MIN + 1))
        assert raw.call("DECR", "m") == INT64_MIN
        assert_err(raw.call("DECR", "m"), "ERR increment or decrement would overflow")
        assert_err(raw.call("INCRBY", "n", "1"), "ERR increment or decrement would overflow")
        assert_err(raw.call("DECRBY", "m", "1"), "ERR increment or decrement would overflow")

    def test_decrby_min_int(self, raw):
        raw.call("SET", "n", "0")
        assert_err(raw.call("DECRBY", "n", str(INT64_MIN)), "ERR decrement would overflow")
        assert raw.call("INCRBY", "n", str(INT64_MIN)) == INT64_MIN

    @pytest.mark.parametrize("value", ["abc", "1.5", " 1", "1 ", "01", "+1", "",
                                       "9223372036854775808", "0x10", "1e3"])
    def test_incr_non_integer_value(self, raw, value):
        raw.call("SET", "n", value)
        assert_err(raw.call("INCR", "n"), ERR_NOT_INT)
        assert_err(raw.call("DECRBY", "n", "1"), ERR_NOT_INT)
        assert raw.call("GET", "n") == value.encode()

    @pytest.mark.parametrize("arg", ["abc", "1.5", "", "9223372036854775808", " 1"])
    def test_incrby_non_integer_argument(self, raw, arg):
        assert_err(raw.call("INCRBY", "n", arg), ERR_NOT_INT)
        assert_err(raw.call("DECRBY", "n", arg), ERR_NOT_INT)
        assert raw.call("EXISTS", "n") == 0

    def test_negative_zero_string(self, raw):
        raw.call("SET", "n", "-0")
        assert_err(raw.call("INCR", "n"), ERR_NOT_INT)

    def test_arity(self, raw):
        assert_err(raw.call("INCR"), arity("incr"))
        assert_err(raw.call("INCR", "a", "b"), arity("incr"))
        assert_err(raw.call("INCRBY", "a"), arity("incrby"))
        assert_err(raw.call("DECRBY", "a"), arity("decrby"))
        assert_err(raw.call("DECR"), arity("decr"))
        assert_err(raw.call("INCRBYFLOAT", "a"), arity("incrbyfloat"))

    @pytest.mark.needs_lists
    def test_wrongtype(self, raw, listkey):
        for cmd in (("INCR", listkey), ("DECR", listkey), ("INCRBY", listkey, "1"),
                    ("DECRBY", listkey, "1"), ("INCRBYFLOAT", listkey, "1")):
            assert_err(raw.call(*cmd), WRONGTYPE)


class TestIncrByFloat:
    def test_documented_examples(self, raw):
        raw.call("SET", "k", "10.50")
        assert raw.call("INCRBYFLOAT", "k", "0.1") == b"10.6"
        assert raw.call("INCRBYFLOAT", "k", "-5") == b"5.6"
        raw.call("SET", "k", "5.0e3")
        assert raw.call("INCRBYFLOAT", "k", "2.0e2") == b"5200"
        assert raw.call("GET", "k") == b"5200"

    def test_formatting(self, raw):
        assert raw.call("INCRBYFLOAT", "k", "10.5") == b"10.5"
        assert raw.call("INCRBYFLOAT", "k", "-10.5") == b"0"
        assert raw.call("INCRBYFLOAT", "k", "3") == b"3"
        assert raw.call("INCRBYFLOAT", "k", "0.0000001") == b"3.0000001"
        raw.call("SET", "i", "17")
        assert raw.call("INCRBYFLOAT", "i", "1.5") == b"18.5"
        assert raw.call("INCRBYFLOAT", "e", "1e2") == b"100"
        assert raw.call("INCRBYFLOAT", "h", "0.1") == b"0.1"
        assert raw.call("INCRBYFLOAT", "h", "0.2") == b"0.3"

    def test_reply_is_bulk_in_resp3(self, raw):
        raw.call("HELLO", "3")
        reply = raw.call("INCRBYFLOAT", "k", "1.5")
        assert reply == b"1.5"

    def test_keeps_ttl(self, raw):
        raw.call("SET", "k", "1", "EX", "100")
        raw.call("INCRBYFLOAT", "k", "1.5")
        assert 0 < raw.call("TTL", "k") <= 100

    @pytest.mark.parametrize("arg", ["abc", "", "1.5x", "nan"])
    def test_bad_increment(self, raw, arg):
        assert_err(raw.call("INCRBYFLOAT", "k", arg), ERR_NOT_FLOAT)
        assert raw.call("EXISTS", "k") == 0

    @pytest.mark.parametrize("value", ["abc", "1.5.5", " 1"])
    def test_bad_value(self, raw, value):
        raw.call("SET", "k", value)
        assert_err(raw.call("INCRBYFLOAT", "k", "1"), ERR_NOT_FLOAT)

    def test_infinity(self, raw):
        assert_err(raw.call("INCRBYFLOAT", "k", "inf"),
                   "ERR increment would produce NaN or Infinity")
        # Redis computes in long double: 1e308 + 1e308 is still finite and printed
        # in full (no exponent), 1e4932 + 1e4932 overflows.
        raw.call("SET", "k", "1e308")
        reply = raw.call("INCRBYFLOAT", "k", "1e308")
        assert len(reply) == 309 and reply.startswith(b"1999999999999999999")
        raw.call("SET", "k", "1e4932")
        assert_err(raw.call("INCRBYFLOAT", "k", "1e4932"),
                   "ERR increment would produce NaN or Infinity")
        assert raw.call("GET", "k") == b"1e4932"


# ---------------------------------------------------- GETRANGE SETRANGE


class TestRanges:
    @pytest.mark.parametrize("cmd", ["GETRANGE", "SUBSTR"])
    def test_getrange(self, raw, cmd):
        raw.call("SET", "k", "This is a string")
        assert raw.call(cmd, "k", "0", "3") == b"This"
        assert raw.call(cmd, "k", "-3", "-1") == b"ing"
        assert raw.call(cmd, "k", "0", "-1") == b"This is a string"
        assert raw.call(cmd, "k", "10", "100") == b"string"
        assert raw.call(cmd, "k", "5", "3") == b""
        assert raw.call(cmd, "k", "-100", "3") == b"This"
        # Redis 7.0 clamps both negative indexes to 0 and returns the first byte.
        assert raw.call(cmd, "k", "-100", "-50") == b"T"
        assert raw.call(cmd, "k", "100", "200") == b""
        assert raw.call(cmd, "k", "-1", "-2") == b""
        assert raw.call(cmd, "missing", "0", "-1") == b""
        assert_err(raw.call(cmd, "k", "a", "1"), ERR_NOT_INT)
        assert_err(raw.call(cmd, "k", "0"), arity(cmd))

    def test_getrange_integer_encoded(self, raw):
        raw.call("SET", "k", "1234")
        assert raw.call("GETRANGE", "k", "1", "2") == b"23"

    def test_setrange(self, raw):
        raw.call("SET", "k", "Hello World")
        assert raw.call("SETRANGE", "k", "6", "Redis") == 11
        assert raw.call("GET", "k") == b"Hello Redis"
        assert raw.call("SETRANGE", "k", "11", "!") == 12
        assert raw.call("GET", "k") == b"Hello Redis!"

    def test_setrange_pads_with_zero_bytes(self, raw):
        assert raw.call("SETRANGE", "k", "6", "Redis") == 11
        assert raw.call("GET", "k") == b"\x00" * 6 + b"Redis"
        raw.call("SET", "s", "ab")
        assert raw.call("SETRANGE", "s", "4", "c") == 5
        assert raw.call("GET", "s") == b"ab\x00\x00c"

    def test_setrange_large_offset(self, raw):
        assert raw.call("SETRANGE", "k", str(1 << 20), "end") == (1 << 20) + 3
        assert raw.call("GETRANGE", "k", "0", "3") == b"\x00" * 4
        assert raw.call("GETRANGE", "k", "-3", "-1") == b"end"

    def test_setrange_empty_value(self, raw):
        assert raw.call("SETRANGE", "k", "0", "") == 0
        assert raw.call("EXISTS", "k") == 0
        assert raw.call("SETRANGE", "k", "10", "") == 0
        assert raw.call("EXISTS", "k") == 0
        raw.call("SET", "s", "abc")
        assert raw.call("SETRANGE", "s", "10", "") == 3
        assert raw.call("GET", "s") == b"abc"

    def test_setrange_errors(self, raw):
        assert_err(raw.call("SETRANGE", "k", "-1", "x"), "ERR offset is out of range")
        assert_err(raw.call("SETRANGE", "k", "x", "x"), ERR_NOT_INT)
        limit_err = "ERR string exceeds maximum allowed size (proto-max-bulk-len)"
        assert_err(raw.call("SETRANGE", "k", str(512 * 1024 * 1024), "x"), limit_err)
        assert_err(raw.call("SETRANGE", "k", str(512 * 1024 * 1024 - 1), "xy"), limit_err)
        assert raw.call("EXISTS", "k") == 0
        assert_err(raw.call("SETRANGE", "k", "1"), arity("setrange"))

    def test_setrange_integer_encoded(self, raw):
        raw.call("SET", "k", "1234")
        assert raw.call("SETRANGE", "k", "1", "x") == 4
        assert raw.call("GET", "k") == b"1x34"

    @pytest.mark.needs_lists
    def test_wrongtype(self, raw, listkey):
        assert_err(raw.call("GETRANGE", listkey, "0", "1"), WRONGTYPE)
        assert_err(raw.call("SETRANGE", listkey, "0", "x"), WRONGTYPE)


# --------------------------------------------------------------- bitmaps


class TestBits:
    def test_setbit_getbit(self, raw):
        assert raw.call("SETBIT", "b", "7", "1") == 0
        assert raw.call("SETBIT", "b", "7", "1") == 1
        assert raw.call("GETBIT", "b", "7") == 1
        assert raw.call("GETBIT", "b", "6") == 0
        assert raw.call("GETBIT", "b", "1000") == 0
        assert raw.call("GETBIT", "missing", "0") == 0
        assert raw.call("GET", "b") == b"\x01"
        assert raw.call("SETBIT", "b", "0", "1") == 0
        assert raw.call("GET", "b") == b"\x81"
        assert raw.call("SETBIT", "b", "7", "0") == 1
        assert raw.call("GET", "b") == b"\x80"
        assert raw.call("SETBIT", "b", "23", "1") == 0
        assert raw.call("GET", "b") == b"\x80\x00\x01"

    def test_setbit_large_offset(self, raw):
        assert raw.call("SETBIT", "b", str(1 << 20), "1") == 0
        assert raw.call("STRLEN", "b") == (1 << 17) + 1
        assert raw.call("BITCOUNT", "b") == 1
        assert raw.call("BITPOS", "b", "1") == 1 << 20

    def test_bits_on_integer_encoded(self, raw):
        raw.call("SET", "n", "1")  # the byte '1' is 0x31 = 00110001
        assert raw.call("BITCOUNT", "n") == 3
        assert raw.call("GETBIT", "n", "2") == 1
        assert raw.call("BITPOS", "n", "1") == 2
        assert raw.call("SETBIT", "n", "6", "1") == 0
        assert raw.call("GET", "n") == b"3"

    def test_setbit_errors(self, raw):
        bit_err = "ERR bit is not an integer or out of range"
        off_err = "ERR bit offset is not an integer or out of range"
        assert_err(raw.call("SETBIT", "b", "0", "2"), bit_err)
        assert_err(raw.call("SETBIT", "b", "0", "-1"), bit_err)
        assert_err(raw.call("SETBIT", "b", "0", "x"), bit_err)
        assert_err(raw.call("SETBIT", "b", "-1", "1"), off_err)
        assert_err(raw.call("SETBIT", "b", str(2**32), "1"), off_err)
        assert_err(raw.call("SETBIT", "b", "x", "1"), off_err)
        assert_err(raw.call("GETBIT", "b", "-1"), off_err)
        assert_err(raw.call("GETBIT", "b", str(2**32)), off_err)
        assert raw.call("EXISTS", "b") == 0
        assert_err(raw.call("SETBIT", "b", "1"), arity("setbit"))
        assert_err(raw.call("GETBIT", "b"), arity("getbit"))

    def test_bitcount(self, raw):
        raw.call("SET", "k", "foobar")
        assert raw.call("BITCOUNT", "k") == 26
        assert raw.call("BITCOUNT", "k", "0", "0") == 4
        assert raw.call("BITCOUNT", "k", "1", "1") == 6
        assert raw.call("BITCOUNT", "k", "1", "1", "BYTE") == 6
        assert raw.call("BITCOUNT", "k", "5", "30", "BIT") == 17
        assert raw.call("BITCOUNT", "k", "-2", "-1") == 7
        assert raw.call("BITCOUNT", "k", "-1", "-2") == 0
        assert raw.call("BITCOUNT", "k", "0", "-1", "bit") == 26
        assert raw.call("BITCOUNT", "k", "100", "200") == 0
        assert raw.call("BITCOUNT", "missing") == 0
        assert raw.call("BITCOUNT", "missing", "0", "10") == 0

    def test_bitcount_errors(self, raw):
        raw.call("SET", "k", "foobar")
        assert_err(raw.call("BITCOUNT", "k", "0"), ERR_SYNTAX)
        assert_err(raw.call("BITCOUNT", "k", "0", "1", "WORD"), ERR_SYNTAX)
        assert_err(raw.call("BITCOUNT", "k", "0", "1", "BIT", "x"), ERR_SYNTAX)
        assert_err(raw.call("BITCOUNT", "k", "a", "1"), ERR_NOT_INT)
        assert_err(raw.call("BITCOUNT"), arity("bitcount"))

    def test_bitpos(self, raw):
        raw.call("SET", "k", b"\xff\xf0\x00")
        assert raw.call("BITPOS", "k", "0") == 12
        raw.call("SET", "k", b"\x00\xff\xf0")
        assert raw.call("BITPOS", "k", "1", "0") == 8
        assert raw.call("BITPOS", "k", "1", "2") == 16
        assert raw.call("BITPOS", "k", "1", "2", "-1", "BYTE") == 16
        assert raw.call("BITPOS", "k", "1", "7", "15", "BIT") == 8
        assert raw.call("BITPOS", "k", "1", "7", "-3", "BIT") == 8
        raw.call("SET", "z", b"\x00\x00\x00")
        assert raw.call("BITPOS", "z", "1") == -1
        raw.call("SET", "f", b"\xff\xff\xff")
        # Looking for 0 with no end given: the string is padded with zeros on the right.
        assert raw.call("BITPOS", "f", "0") == 24
        assert raw.call("BITPOS", "f", "0", "0") == 24
        assert raw.call("BITPOS", "f", "0", "0", "-1") == -1
        assert raw.call("BITPOS", "f", "0", "0", "-1", "BIT") == -1

    def test_bitpos_start_beyond_end(self, raw):
        raw.call("SET", "k", b"\xff")
        assert raw.call("BITPOS", "k", "1", "5") == -1
        assert raw.call("BITPOS", "k", "0", "5") == -1
        assert raw.call("BITPOS", "k", "1", "3", "1") == -1

    def test_bitpos_missing_key(self, raw):
        assert raw.call("BITPOS", "missing", "0") == 0
        assert raw.call("BITPOS", "missing", "1") == -1

    def test_bitpos_errors(self, raw):
        raw.call("SET", "k", "a")
        assert_err(raw.call("BITPOS", "k", "2"), "ERR The bit argument must be 1 or 0.")
        assert_err(raw.call("BITPOS", "k", "x"), ERR_NOT_INT)
        assert_err(raw.call("BITPOS", "k", "1", "x"), ERR_NOT_INT)
        assert_err(raw.call("BITPOS", "k", "1", "0", "1", "FOO"), ERR_SYNTAX)
        assert_err(raw.call("BITPOS", "k"), arity("bitpos"))

    @pytest.mark.needs_lists
    def test_wrongtype(self, raw, listkey):
        assert_err(raw.call("SETBIT", listkey, "0", "1"), WRONGTYPE)
        assert_err(raw.call("GETBIT", listkey, "0"), WRONGTYPE)
        assert_err(raw.call("BITCOUNT", listkey), WRONGTYPE)
        assert_err(raw.call("BITPOS", listkey, "1"), WRONGTYPE)
        assert_err(raw.call("BITFIELD", listkey, "GET", "u8", "0"), WRONGTYPE)


class TestBitfield:
    def test_set_get(self, raw):
        assert raw.call("BITFIELD", "bf", "SET", "u8", "0", "255", "GET", "u8", "0") == [0, 255]
        assert raw.call("BITFIELD", "bf", "GET", "i8", "0") == [-1]
        assert raw.call("BITFIELD", "bf", "GET", "u4", "0", "GET", "u4", "4") == [15, 15]
        assert raw.call("GET", "bf") == b"\xff"
        assert raw.call("BITFIELD", "bf", "SET", "i8", "8", "-2") == [0]
        assert raw.call("GET", "bf") == b"\xff\xfe"
        assert raw.call("BITFIELD", "bf") == []
        assert raw.call("BITFIELD", "missing", "GET", "u8", "0") == [0]
        assert raw.call("EXISTS", "missing") == 0

    def test_hash_offsets(self, raw):
        assert raw.call("BITFIELD", "bf", "SET", "u8", "#1", "100") == [0]
        assert raw.call("BITFIELD", "bf", "GET", "u8", "8") == [100]
        assert raw.call("BITFIELD", "bf", "SET", "i16", "#2", "-300", "GET", "i16", "#2") == [
            0, -300]
        assert raw.call("BITFIELD", "bf", "GET", "i16", "32") == [-300]
        assert raw.call("STRLEN", "bf") == 6

    def test_i64_and_u63(self, raw):
        assert raw.call("BITFIELD", "bf", "SET", "i64", "0", str(INT64_MIN)) == [0]
        assert raw.call("BITFIELD", "bf", "GET", "i64", "0") == [INT64_MIN]
        assert raw.call("BITFIELD", "bf", "SET", "u63", "0", str(2**63 - 1)) == [2**62]
        assert raw.call("BITFIELD", "bf", "GET", "u63", "0") == [2**63 - 1]

    def test_incrby_overflow_modes(self, raw):
        assert raw.call("BITFIELD", "bf", "INCRBY", "u2", "100", "1") == [1]
        assert raw.call("BITFIELD", "bf", "INCRBY", "u2", "100", "1") == [2]
        assert raw.call("BITFIELD", "bf", "INCRBY", "u2", "100", "1") == [3]
        # Default mode is WRAP.
        assert raw.call("BITFIELD", "bf", "INCRBY", "u2", "100", "1") == [0]
        assert raw.call("BITFIELD", "bf", "OVERFLOW", "SAT", "INCRBY", "u2", "100", "10") == [3]
        assert raw.call("BITFIELD", "bf", "OVERFLOW", "FAIL", "INCRBY", "u2", "100", "1") == [
            None]
        assert raw.call("BITFIELD", "bf", "GET", "u2", "100") == [3]
        assert raw.call("BITFIELD", "bf", "OVERFLOW", "WRAP", "INCRBY", "u2", "100", "2") == [1]

    def test_signed_overflow(self, raw):
        assert raw.call("BITFIELD", "bf", "SET", "i8", "0", "127") == [0]
        assert raw.call("BITFIELD", "bf", "INCRBY", "i8", "0", "1") == [-128]
        assert raw.call("BITFIELD", "bf", "OVERFLOW", "SAT", "INCRBY", "i8", "0", "-1") == [-128]
        assert raw.call("BITFIELD", "bf", "OVERFLOW", "SAT", "INCRBY", "i8", "0", "1000") == [127]
        assert raw.call("BITFIELD", "bf", "OVERFLOW", "FAIL", "INCRBY", "i8", "0", "1") == [None]
        assert raw.call("BITFIELD", "bf", "OVERFLOW", "SAT", "SET", "i8", "0", "300") == [127]
        assert raw.call("BITFIELD", "bf", "GET", "i8", "0") == [127]
        assert raw.call("BITFIELD", "bf", "OVERFLOW", "FAIL", "SET", "i8", "0", "300") == [None]
        assert raw.call("BITFIELD", "bf", "SET", "i8", "0", "300") == [127]
        assert raw.call("BITFIELD", "bf", "GET", "i8", "0") == [44]

    def test_overflow_applies_to_following_ops(self, raw):
        reply = raw.call("BITFIELD", "bf", "INCRBY", "u8", "0", "300", "OVERFLOW", "SAT",
                         "INCRBY", "u8", "8", "300", "OVERFLOW", "FAIL", "INCRBY", "u8", "16",
                         "300")
        assert reply == [44, 255, None]

    @pytest.mark.parametrize("args,err", [
        (("GET", "u64", "0"), "ERR Invalid bitfield type. Use something like i16 u8. Note that "
                              "u64 is not supported but i64 is."),
        (("GET", "i65", "0"), "ERR Invalid bitfield type. Use something like i16 u8. Note that "
                              "u64 is not supported but i64 is."),
        (("GET", "x8", "0"), "ERR Invalid bitfield type. Use something like i16 u8. Note that "
                             "u64 is not supported but i64 is."),
        (("GET", "u0", "0"), "ERR Invalid bitfield type. Use something like i16 u8. Note that "
                             "u64 is not supported but i64 is."),
        (("GET", "u8", "-1"), "ERR bit offset is not an integer or out of range"),
        (("GET", "u8", "#x"), "ERR bit offset is not an integer or out of range"),
        (("GET", "u8", "a"), "ERR bit offset is not an integer or out of range"),
        (("GET", "u8", str(2**32)), "ERR bit offset is not an integer or out of range"),
        (("SET", "u8", "0", "x"), ERR_NOT_INT),
        (("INCRBY", "u8", "0", "x"), ERR_NOT_INT),
        (("OVERFLOW", "FOO"), "ERR Invalid OVERFLOW type specified"),
        (("GET", "u8"), ERR_SYNTAX),
        (("SET", "u8", "0"), ERR_SYNTAX),
        (("FOO", "u8", "0"), ERR_SYNTAX),
        (("OVERFLOW",), ERR_SYNTAX),
    ])
    def test_errors(self, raw, args, err):
        assert_err(raw.call("BITFIELD", "bf", *args), err)
        assert raw.call("EXISTS", "bf") == 0

    def test_error_means_nothing_applied(self, raw):
        reply = raw.call("BITFIELD", "bf", "SET", "u8", "0", "1", "GET", "u64", "0")
        assert_err(reply, "ERR Invalid bitfield type. Use something like i16 u8. Note that u64 "
                          "is not supported but i64 is.")
        assert raw.call("EXISTS", "bf") == 0

    def test_bitfield_ro(self, raw):
        raw.call("SET", "bf", b"\xff\x01")
        assert raw.call("BITFIELD_RO", "bf", "GET", "u8", "0", "GET", "u8", "#1") == [255, 1]
        assert raw.call("BITFIELD_RO", "missing", "GET", "i4", "0") == [0]
        assert raw.call("BITFIELD_RO", "bf") == []
        ro_err = "ERR BITFIELD_RO only supports the GET subcommand"
        assert_err(raw.call("BITFIELD_RO", "bf", "SET", "u8", "0", "1"), ro_err)
        assert_err(raw.call("BITFIELD_RO", "bf", "INCRBY", "u8", "0", "1"), ro_err)
        # OVERFLOW alone is accepted (it only modifies write subcommands).
        assert raw.call("BITFIELD_RO", "bf", "OVERFLOW", "SAT") == []
        assert raw.call("GET", "bf") == b"\xff\x01"
        assert_err(raw.call("BITFIELD_RO"), arity("bitfield_ro"))


# ---------------------------------------------------------------- LCS


def lcs_reference(a, b, min_match_len=0, with_match_len=False):
    """LCS as Redis 7 reports it: (subsequence, matches), the matches from the end of the strings
    backward. Walks back through the prefix table stepping up only when that keeps a strictly
    longer LCS; bytes adjacent in both strings extend the current range."""
    n, m = len(a), len(b)
    dp = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            dp[i][j] = (dp[i - 1][j - 1] + 1 if a[i - 1] == b[j - 1]
                        else max(dp[i - 1][j], dp[i][j - 1]))
    seq, matches, run = [], [], None

    def close():
        if run is not None and run[1] - run[0] + 1 >= min_match_len:
            item = [[run[0], run[1]], [run[2], run[3]]]
            if with_match_len:
                item.append(run[1] - run[0] + 1)
            matches.append(item)

    i, j = n, m
    while i > 0 and j > 0:
        if a[i - 1] == b[j - 1]:
            seq.append(a[i - 1])
            if run is not None and run[0] == i and run[2] == j:
                run[0], run[2] = i - 1, j - 1
            else:
                close()
                run = [i - 1, i - 1, j - 1, j - 1]
            i, j = i - 1, j - 1
        elif dp[i - 1][j] > dp[i][j - 1]:
            i -= 1
        else:
            j -= 1
    close()
    return bytes(reversed(seq)), matches


class TestLcs:
    def test_documentation_example(self, r):
        r.set("key1", "ohmytext")
        r.set("key2", "mynewtext")
        assert r.execute_command("LCS", "key1", "key2") == "mytext"
        assert r.execute_command("LCS", "key1", "key2", "LEN") == 6
        assert r.execute_command("LCS", "key1", "key2", "IDX") == [
            "matches", [[[4, 7], [5, 8]], [[2, 3], [0, 1]]], "len", 6]
        assert r.execute_command("LCS", "key1", "key2", "IDX", "MINMATCHLEN", 4,
                                 "WITHMATCHLEN") == ["matches", [[[4, 7], [5, 8], 4]], "len", 6]
        # WITHMATCHLEN and MINMATCHLEN only shape IDX replies.
        assert r.execute_command("LCS", "key1", "key2", "LEN", "WITHMATCHLEN",
                                 "MINMATCHLEN", 3) == 6
        assert r.execute_command("lcs", "key1", "key2", "idx", "minmatchlen", -5) == [
            "matches", [[[4, 7], [5, 8]], [[2, 3], [0, 1]]], "len", 6]

    def test_resp3_idx_reply_is_a_map(self, raw):
        raw.call("HELLO", "3")
        raw.call("SET", "{t}a", "ohmytext")
        raw.call("SET", "{t}b", "mynewtext")
        reply = raw.call("LCS", "{t}a", "{t}b", "IDX", "WITHMATCHLEN")
        assert isinstance(reply, Map)
        assert list(reply) == [(b"matches", [[[4, 7], [5, 8], 4], [[2, 3], [0, 1], 2]]),
                               (b"len", 6)]

    def test_missing_keys_read_as_empty_strings(self, r):
        r.set("k", "abc")
        assert r.execute_command("LCS", "k", "nokey") == ""
        assert r.execute_command("LCS", "nokey", "nokey2", "LEN") == 0
        assert r.execute_command("LCS", "nokey", "k", "IDX") == ["matches", [], "len", 0]
        r.set("n", 12345)  # int-encoded strings compare as their digits
        r.set("m", "a2b4c")
        assert r.execute_command("LCS", "n", "m") == "24"

    def test_errors(self, raw, listkey):
        raw.call("SET", "k1", "abc")
        raw.call("SET", "k2", "abd")
        not_strings = "ERR The specified keys must contain string values"
        assert_err(raw.call("LCS", "k1", listkey), not_strings)
        assert_err(raw.call("LCS", listkey, "nokey"), not_strings)
        # The operands' types are checked before the options.
        assert_err(raw.call("LCS", "k1", listkey, "BOGUS"), not_strings)
        assert_err(raw.call("LCS", "k1", "k2", "BOGUS"), ERR_SYNTAX)
        assert_err(raw.call("LCS", "k1", "k2", "MINMATCHLEN"), ERR_SYNTAX)
        assert_err(raw.call("LCS", "k1", "k2", "MINMATCHLEN", "x"), ERR_NOT_INT)
        assert_err(raw.call("LCS", "k1", "k2", "MINMATCHLEN", "99999999999999999999"), ERR_NOT_INT)
        assert_err(raw.call("LCS", "k1", "k2", "IDX", "LEN"),
                   "ERR If you want both the length and indexes, please just use IDX.")
        assert_err(raw.call("LCS", "k1"), arity("lcs"))

    def test_transient_table_is_bounded_by_proto_max_bulk_len(self, r):
        old = r.config_get("proto-max-bulk-len")["proto-max-bulk-len"]
        try:
            r.config_set("proto-max-bulk-len", 1024 * 1024)
            r.set("{t}a", "a" * 600)
            r.set("{t}b", "b" * 600)  # a 601 x 601 table of 4-byte cells: 1.4 MB
            with pytest.raises(redis.ResponseError) as e:
                r.execute_command("LCS", "{t}a", "{t}b", "LEN")
            assert str(e.value) == ("Insufficient memory, transient memory for LCS exceeds "
                                    "proto-max-bulk-len")
            r.set("{t}b", "b" * 400)  # 601 x 401 cells: 0.96 MB
            assert r.execute_command("LCS", "{t}a", "{t}b", "LEN") == 0
        finally:
            r.config_set("proto-max-bulk-len", old)

    @pytest.mark.parametrize("same_shard", [True, False])
    def test_random_strings_match_the_reference(self, rb, same_shard):
        rng = random.Random(11 + same_shard)
        for it in range(300):
            alphabet = b"abcd"[:rng.randint(1, 4)]
            a = bytes(rng.choice(alphabet) for _ in range(rng.randint(0, 30)))
            b = bytes(rng.choice(alphabet) for _ in range(rng.randint(0, 30)))
            # Hash-tagged keys share a shard; plain names land on either.
            ka, kb = ("{t}a", "{t}b") if same_shard else ("a%d" % it, "b%d" % it)
            rb.set(ka, a)
            rb.set(kb, b)
            mml = rng.randint(0, 4)
            seq, matches = lcs_reference(a, b, mml, True)
            assert rb.execute_command("LCS", ka, kb) == seq, (a, b)
            assert rb.execute_command("LCS", ka, kb, "LEN") == len(seq)
            assert rb.execute_command("LCS", ka, kb, "IDX", "MINMATCHLEN", mml,
                                      "WITHMATCHLEN") == [b"matches", matches, b"len", len(seq)]


@pytest.mark.dashkv_only  # Redis 7.0 has no bound: these commands make it run out of memory
class TestDebugPopulateBounds:
    TOO_LONG = "ERR string exceeds maximum allowed size (proto-max-bulk-len)"
    TOO_MANY = ("ERR value is out of range, DEBUG POPULATE would need more memory than maxmemory "
                "(or, without maxmemory, the system's memory)")

    @pytest.mark.parametrize("size", ["1000000000000000", "9223372036854775807", "536870913"])
    def test_value_size_bounded_by_proto_max_bulk_len(self, server, raw, size):
        assert_err(raw.call("DEBUG", "POPULATE", "1", "k", size), self.TOO_LONG)
        assert raw.call("DBSIZE") == 0
        server.assert_alive()

    def test_value_size_follows_config(self, raw):
        assert raw.call("CONFIG", "SET", "proto-max-bulk-len", "1mb") == "OK"
        try:
            assert_err(raw.call("DEBUG", "POPULATE", "1", "k", "1048577"), self.TOO_LONG)
            assert raw.call("DEBUG", "POPULATE", "1", "k", "1048576") == "OK"
            assert raw.call("STRLEN", "k:0") == 1048576
        finally:
            raw.call("CONFIG", "SET", "proto-max-bulk-len", "512mb")

    @pytest.mark.parametrize("args", [["9223372036854775807"], ["2000000000000"],
                                      ["100000000000", "k", "1000"]])
    def test_count_bounded_by_memory(self, server, raw, args):
        assert_err(raw.call("DEBUG", "POPULATE", *args), self.TOO_MANY)
        assert raw.call("DBSIZE") == 0
        server.assert_alive()

    def test_count_bounded_by_maxmemory(self, server_factory):
        srv = server_factory(extra_args=["--maxmemory", "10mb"])
        c = srv.raw()
        try:
            # 1M values of 100 bytes cannot fit 10 MB; 100 of them can.
            assert_err(c.call("DEBUG", "POPULATE", "1000000", "k", "100"), self.TOO_MANY)
            assert c.call("DBSIZE") == 0
            assert c.call("DEBUG", "POPULATE", "100", "k", "100") == "OK"
            assert c.call("DBSIZE") == 100
        finally:
            c.close()
