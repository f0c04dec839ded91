"""RESP protocol handling: pipelining, inline commands, split frames, protocol
errors (exact text, connection closed, server stays up), RESP3 replies."""

import random
import time

import pytest

from helpers import arity, assert_err, assert_err_prefix
from resp_client import Error, Map, encode


# ------------------------------------------------------------- pipelining


class TestPipelining:
    def test_1000_commands_one_write(self, raw):
        cmds = [("SET", "p:%d" % i, str(i)) for i in range(1000)]
        cmds += [("GET", "p:%d" % i) for i in range(1000)]
        replies = raw.pipeline(cmds)
        assert replies[:1000] == ["OK"] * 1000
        assert replies[1000:] == [str(i).encode() for i in range(1000)]

    def test_order_with_mixed_shards_and_errors(self, raw):
        cmds = []
        want = []
        for i in range(300):
            cmds.append(("INCR", "c:%d" % (i % 37)))
            want.append(i // 37 + 1)
            if i % 50 == 0:
                cmds.append(("GET",))
                want.append(Error(arity("get")))
                cmds.append(("PING",))
                want.append("PONG")
        replies = raw.pipeline(cmds)
        assert replies == want

    def test_pipeline_same_key_read_your_writes(self, raw):
        cmds = []
        for i in range(200):
            cmds.append(("APPEND", "s", "x"))
            cmds.append(("STRLEN", "s"))
        replies = raw.pipeline(cmds)
        assert replies == [n for i in range(1, 201) for n in (i, i)]

    def test_pipelined_multi_db(self, raw):
        replies = raw.pipeline([("SET", "k", "0"), ("SELECT", "1"), ("SET", "k", "1"),
                                ("SELECT", "0"), ("GET", "k"), ("SELECT", "1"), ("GET", "k")])
        assert replies == ["OK", "OK", "OK", "OK", b"0", "OK", b"1"]

    def test_large_values_pipelined(self, raw):
        big = b"v" * (1 << 20)
        cmds = [("SET", "big:%d" % i, big) for i in range(8)] + [("GET", "big:%d" % i)
                                                                   for i in range(8)]
        replies = raw.pipeline(cmds)
        assert replies[:8] == ["OK"] * 8
        assert all(x == big for x in replies[8:])

    def test_many_clients_interleaved(self, raw_factory):
        conns = [raw_factory() for _ in range(8)]
        for n, c in enumerate(conns):
            c.send(b"".join(encode("INCR", "shared") for _ in range(100)) +
                   encode("SET", "own:%d" % n, str(n)))
        for n, c in enumerate(conns):
            replies = [c.read() for _ in range(101)]
            assert replies[-1] == "OK"
            assert replies[:100] == sorted(replies[:100])
        assert conns[0].call("GET", "shared") == b"800"


# ----------------------------------------------------------------- inline


class TestInline:
    def test_two_pings(self, raw):
        raw.send(b"PING\r\nPING\r\n")
        assert raw.read() == "PONG"
        assert raw.read() == "PONG"

    def test_lf_only_and_empty_lines(self, raw):
        raw.send(b"\r\n\r\nPING\n  \r\nECHO hello\r\n")
        assert raw.read() == "PONG"
        assert raw.read() == b"hello"
        raw.expect_no_reply(0.1)

    def test_quotes_and_escapes(self, raw):
        raw.send(b'SET "a\\x41\\n" \'it\\\'s\'\r\nGET "aA\\n"\r\n')
        assert raw.read() == "OK"
        assert raw.read() == b"it's"
        raw.send(b'ECHO "\\t\\r\\a\\b\\"q"\r\n')
        assert raw.read() == b'\t\r\x07\x08"q'
        raw.send(b'ECHO ""\r\n')
        assert raw.read() == b""
        raw.send(b'SET "key with spaces" \'single "quoted"\'\r\n')
        assert raw.read() == "OK"
        assert raw.call("GET", "key with spaces") == b'single "quoted"'

    def test_whitespace(self, raw):
        raw.send(b"  ECHO   x   \r\nset a\tb\r\n")
        assert raw.read() == b"x"
        assert raw.read() == "OK"
        assert raw.call("GET", "a") == b"b"

    def test_inline_errors_keep_connection(self, raw):
        raw.send(b"foo a b\r\n")
        assert_err(raw.read(), "ERR unknown command 'foo', with args beginning with: 'a' 'b' ")
        raw.send(b"GET\r\n")
        assert_err(raw.read(), arity("get"))
        assert raw.call("PING") == "PONG"

    def test_inline_and_multibulk_mixed(self, raw):
        raw.send(b"PING\r\n" + encode("ECHO", "m") + b"ECHO i\r\n")
        assert [raw.read() for _ in range(3)] == ["PONG", b"m", b"i"]

    def test_inline_resp_lookalikes(self, raw):
        # Lines starting with other RESP type bytes are inline commands.
        raw.send(b"+OK\r\n")
        assert_err(raw.read(), "ERR unknown command '+OK', with args beginning with: ")
        raw.send(b"-ERR x\r\n")
        assert_err(raw.read(), "ERR unknown command '-ERR', with args beginning with: 'x' ")
        assert raw.call("PING") == "PONG"


# ------------------------------------------------------------ split input


class TestSplitFrames:
    def test_every_split_point(self, raw):
        msg = encode("SET", "split", "value") + encode("GET", "split") + b"PING\r\n"
        for i in range(1, len(msg)):
            raw.send(msg[:i])
            time.sleep(0.001)
            raw.send(msg[i:])
            assert raw.read() == "OK"
            assert raw.read() == b"value"
            assert raw.read() == "PONG"

    def test_byte_by_byte(self, raw):
        msg = encode("SET", "k", "hello world") + encode("GET", "k")
        for b in msg:
            raw.send(bytes([b]))
        assert raw.read() == "OK"
        assert raw.read() == b"hello world"

    def test_truncated_then_completed(self, raw):
        raw.send(b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$5\r\nhel")
        raw.expect_no_reply(0.2)
        raw.send(b"lo\r")
        raw.expect_no_reply(0.1)
        raw.send(b"\n")
        assert raw.read() == "OK"
        assert raw.call("GET", "k") == b"hello"

    def test_big_value_in_chunks(self, raw):
        value = bytes(random.Random(1).getrandbits(8) for _ in range(1 << 16)) * 40
        msg = encode("SET", "big", value)
        for i in range(0, len(msg), 100000):
            raw.send(msg[i:i + 100000])
        assert raw.read() == "OK"
        assert raw.call("GET", "big") == value

    def test_disconnect_mid_frame(self, server, raw_factory, r):
        c = raw_factory()
        c.send(b"*3\r\n$3\r\nSET\r\n$4\r\nhalf\r\n$100000\r\n" + b"x" * 5000)
        c.close()
        server.assert_alive()
        assert r.exists("half") == 0


# -------------------------------------------------------- protocol errors


PROTOCOL_ERRORS = [
    (b"*abc\r\n", "ERR Protocol error: invalid multibulk length"),
    (b"*+1\r\n$4\r\nPING\r\n", "ERR Protocol error: invalid multibulk length"),
    (b"*2147483648\r\n", "ERR Protocol error: invalid multibulk length"),
    (b"*2\r\nfoo\r\n", "ERR Protocol error: expected '$', got 'f'"),
    (b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n:1\r\n", "ERR Protocol error: expected '$', got ':'"),
    (b"*1\r\n$abc\r\n", "ERR Protocol error: invalid bulk length"),
    (b"*1\r\n$-1\r\n", "ERR Protocol error: invalid bulk length"),
    (b"*1\r\n$-5\r\n", "ERR Protocol error: invalid bulk length"),
    (b"*1\r\n$ 3\r\n", "ERR Protocol error: invalid bulk length"),
    (b"*1\r\n$536870913\r\n", "ERR Protocol error: invalid bulk length"),
    (b"*1\r\n$99999999999999999999\r\n", "ERR Protocol error: invalid bulk length"),
    (b"*" + b"1" * 70000, "ERR Protocol error: too big mbulk count string"),
    (b"*1\r\n$" + b"1" * 70000, "ERR Protocol error: too big bulk count string"),
    (b"A" * 70000, "ERR Protocol error: too big inline request"),
    (b'set "a" "b"c\r\n', "ERR Protocol error: unbalanced quotes in request"),
    (b'"unbalanced\r\n', "ERR Protocol error: unbalanced quotes in request"),
    (b"'x\r\n", "ERR Protocol error: unbalanced quotes in request"),
]


class TestProtocolErrors:
    @pytest.mark.parametrize("data,err", PROTOCOL_ERRORS,
                             ids=[repr(d[:24]) for d, _ in PROTOCOL_ERRORS])
    def test_error_text_and_close(self, server, raw, data, err):
        raw.send(data)
        assert_err(raw.read(), err)
        assert raw.is_closed(), "connection must be closed after a protocol error"
        server.assert_alive()

    def test_commands_before_error_run_after_do_not(self, server, raw, r):
        raw.send(encode("SET", "before", "1") + b"*x\r\n" + encode("SET", "after", "1"))
        assert raw.read() == "OK"
        assert_err(raw.read(), "ERR Protocol error: invalid multibulk length")
        assert raw.is_closed()
        assert r.get("before") == "1"
        assert r.exists("after") == 0
        server.assert_alive()

    def test_empty_multibulk_ignored(self, raw):
        raw.send(b"*0\r\n*-1\r\n*-5\r\n" + encode("PING"))
        assert raw.read() == "PONG"

    def test_empty_command_name(self, raw):
        raw.send(b"*1\r\n$0\r\n\r\n")
        assert_err(raw.read(), "ERR unknown command '', with args beginning with: ")
        assert raw.call("PING") == "PONG"

    @pytest.mark.parametrize("header", [b"*1\r\n$536870912\r\n", b"*1048577\r\n",
                                        b"*2147483647\r\n", b"*3\r\n$3\r\nSET\r\n"])
    def test_huge_declared_sizes_wait_without_crash(self, server, raw_factory, header):
        """Large but legal counts/lengths: the server waits for more data (and must not
        allocate the declared size up front or die)."""
        c = raw_factory()
        c.send(header)
        c.expect_no_reply(0.2)
        assert not c.is_closed(0.05)
        c.close()
        server.assert_alive()

    def test_garbage_bytes(self, server, r, raw_factory):
        r.set("canary", "alive")
        rnd = random.Random(12345)
        for _ in range(30):
            c = raw_factory(timeout=2.0)
            blob = bytes(rnd.getrandbits(8) for _ in range(rnd.randint(1, 3000)))
            try:
                c.send(blob)
            except OSError:
                pass
            c.close()
        server.assert_alive()
        assert r.get("canary") == "alive"

    def test_garbage_prefixes(self, server, raw_factory):
        for blob in (b"\xff\xfe\xfd\r\n", b"$3\r\nabc\r\n", b"*1\r\n*1\r\n$4\r\nPING\r\n",
                     b"*1\r\n$4\r\nPING\r\n\r\n\r\n", b"\r\r\r\n", b"*\r\n", b"$\r\n"):
            c = raw_factory(timeout=2.0)
            c.send(blob)
            c.is_closed(0.05)  # drain whatever reply comes, if any
            c.close()
        server.assert_alive()

    def test_client_survives_after_other_client_protocol_error(self, server, raw,
                                                               raw_factory):
        raw.call("SET", "k", "v")
        bad = raw_factory()
        bad.send(b"*abc\r\n")
        assert_err_prefix(bad.read(), "ERR Protocol error")
        assert raw.call("GET", "k") == b"v"


# --------------------------------------------------- command-level errors


class TestCommandErrors:
    def test_unknown_command(self, raw):
        assert_err(raw.call("foo", "a", "b"),
                   "ERR unknown command 'foo', with args beginning with: 'a' 'b' ")
        assert_err(raw.call("FOO"), "ERR unknown command 'FOO', with args beginning with: ")
        assert raw.call("PING") == "PONG"

    def test_unknown_command_truncation(self, raw):
        assert_err(raw.call("x" * 200),
                   "ERR unknown command '%s', with args beginning with: " % ("x" * 128))
        assert_err(raw.call("foo", "y" * 200),
                   "ERR unknown command 'foo', with args beginning with: '%s' " % ("y" * 128))
        want = "ERR unknown command 'foo', with args beginning with: " + "".join(
            "'a%d' " % i for i in range(23))
        assert_err(raw.call("foo", *["a%d" % i for i in range(60)]), want)

    def test_unknown_command_newlines_sanitized(self, raw):
        assert_err(raw.call("foo", "a\r\nb", "c"),
                   "ERR unknown command 'foo', with args beginning with: 'a  b' 'c' ")

    @pytest.mark.parametrize("cmd", [("GET",), ("GET", "a", "b"), ("get",), ("gEt",),
                                     ("SET", "k"), ("STRLEN",), ("MGET",), ("DEL",),
                                     ("ECHO",), ("SETEX", "k", "1")])
    def test_wrong_arity(self, raw, cmd):
        assert_err(raw.call(*cmd), arity(cmd[0]))
        assert raw.call("PING") == "PONG"

    def test_subcommand_arity(self, raw):
        assert_err(raw.call("CONFIG"), arity("config"))
        assert_err(raw.call("CONFIG", "GET"),
                   "ERR wrong number of arguments for 'config|get' command")
        assert_err(raw.call("config", "foo"), "ERR unknown subcommand 'foo'. Try CONFIG HELP.")


# ------------------------------------------------------------------ RESP3


class TestResp3:
    def test_null_types(self, raw):
        raw.call("HELLO", "3")
        raw.send(encode("GET", "missing"))
        assert raw.read_raw(3) == b"_\r\n"
        raw.call("SET", "k", "v")
        raw.send(encode("MGET", "k", "missing"))
        assert raw.read_raw(14) == b"*2\r\n$1\r\nv\r\n_\r\n"
        raw.send(encode("SET", "k", "v", "NX"))
        assert raw.read_raw(3) == b"_\r\n"
        raw.send(encode("BITFIELD", "bf", "OVERFLOW", "FAIL", "INCRBY", "u2", "0", "9"))
        assert raw.read_raw(7) == b"*1\r\n_\r\n"

    def test_simple_types_unchanged(self, raw):
        raw.call("HELLO", "3")
        raw.send(encode("SET", "k", "v") + encode("INCR", "n") + encode("GET", "k") +
                 encode("TTL", "k") + encode("GET"))
        assert raw.read_raw(5) == b"+OK\r\n"
        assert raw.read_raw(4) == b":1\r\n"
        assert raw.read_raw(7) == b"$1\r\nv\r\n"
        assert raw.read_raw(5) == b":-1\r\n"
        assert raw.read() == arity("get")

    def test_maps(self, raw):
        assert isinstance(raw.call("HELLO", "3"), Map)
        assert raw.call("CONFIG", "GET", "maxmemory") == Map([(b"maxmemory", b"0")])
        assert isinstance(raw.call("CONFIG", "GET", "nosuch"), Map)

    def test_redis_py_resp3(self, r3):
        assert r3.execute_command("HELLO")["proto"] == 3
        assert r3.get("missing") is None
        assert r3.set("k", "v") is True
        assert r3.ttl("k") == -1
        assert r3.config_get("maxmemory") == {"maxmemory": "0"}
        assert r3.incrbyfloat("f", "10.5") == 10.5
        assert r3.mget("k", "missing") == ["v", None]
        assert r3.bitfield("bf").set("u8", 0, 200).get("u8", 0).execute() == [0, 200]
        r3.set("e", "v", ex=100)
        assert 0 < r3.ttl("e") <= 100

    def test_resp3_pipeline(self, r3):
        with r3.pipeline(transaction=False) as p:
            for i in range(200):
                p.set("k%d" % i, i)
                p.get("k%d" % i)
            out = p.execute()
        assert out[1::2] == [str(i) for i in range(200)]
