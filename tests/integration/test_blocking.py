"""Blocking commands (BLPOP, BRPOP, BLMOVE, BRPOPLPUSH, BLMPOP, BZPOPMIN, BZPOPMAX, BZMPOP) and
CLIENT UNBLOCK: replies, wake-ups, FIFO order, timeouts, disconnects, and a producer/consumer
stress test with exactly-once delivery. Checked against redis-server 7.0 too
(DASHKV_TEST_TARGET=redis). Tests wait for INFO blocked_clients, never for a fixed time."""

import socket
import struct
import threading
import time

import pytest
import redis

from helpers import WRONGTYPE, assert_err, wait_until
from resp_client import Error, encode

ERR_TIMEOUT_FLOAT = "ERR timeout is not a float or out of range"
ERR_TIMEOUT_NEG = "ERR timeout is negative"
UNBLOCKED = "UNBLOCKED client unblocked via CLIENT UNBLOCK"

# Enough keys that some live on every shard of a 2-thread server.
KEYS = ["key:%d" % i for i in range(8)]


def blocked_clients(r):
    return int(r.info("clients")["blocked_clients"])


def wait_blocked(r, n):
    wait_until(lambda: blocked_clients(r) == n, timeout=10, what="%d blocked clients" % n)


def park(raw, r, n, *cmd):
    """Sends `cmd` on `raw` without reading and waits until `n` clients are blocked."""
    raw.send(b"".join([_encode(*cmd)]))
    wait_blocked(r, n)


def _encode(*args):
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        a = a if isinstance(a, bytes) else str(a).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)


class TestImmediate:
    def test_pops_when_data_is_there(self, raw):
        raw.call("RPUSH", "l", "a", "b", "c")
        assert raw.call("BLPOP", "missing", "l", "0") == [b"l", b"a"]
        assert raw.call("BRPOP", "l", "0") == [b"l", b"c"]
        assert raw.call("BLMOVE", "l", "m", "LEFT", "RIGHT", "0") == b"b"
        assert raw.call("EXISTS", "l") == 0
        assert raw.call("BRPOPLPUSH", "m", "l", "0") == b"b"
        assert raw.call("BLMPOP", "0", "2", "x", "l", "LEFT", "COUNT", "5") == [b"l", [b"b"]]
        raw.call("ZADD", "z", "1", "a", "2", "b", "3", "c")
        assert raw.call("BZPOPMIN", "z", "0") == [b"z", b"a", b"1"]
        assert raw.call("BZPOPMAX", "z", "0") == [b"z", b"c", b"3"]
        assert raw.call("BZMPOP", "0", "1", "z", "MIN", "COUNT", "3") == [b"z", [[b"b", b"2"]]]

    def test_errors(self, raw):
        raw.call("SET", "s", "x")
        raw.call("RPUSH", "l", "a")
        assert_err(raw.call("BLPOP", "s", "l", "0"), WRONGTYPE)  # argument order decides
        assert raw.call("BLPOP", "l", "s", "0") == [b"l", b"a"]
        assert_err(raw.call("BZPOPMIN", "s", "0"), WRONGTYPE)
        assert_err(raw.call("BLPOP", "l", "-1"), ERR_TIMEOUT_NEG)
        assert_err(raw.call("BLPOP", "l", "abc"), ERR_TIMEOUT_FLOAT)
        assert_err(raw.call("BLPOP", "l", ""), ERR_TIMEOUT_FLOAT)
        assert_err(raw.call("BZPOPMAX", "l", "nan"), ERR_TIMEOUT_FLOAT)
        assert_err(raw.call("BLMOVE", "a", "b", "UP", "LEFT", "0"), "ERR syntax error")
        assert_err(raw.call("BLMOVE", "a", "b", "LEFT", "LEFT", "-2"), ERR_TIMEOUT_NEG)
        assert_err(raw.call("BLMPOP", "x", "1", "l", "LEFT"), ERR_TIMEOUT_FLOAT)
        assert_err(raw.call("BLMPOP", "0", "0", "l", "LEFT"),
                   "ERR numkeys should be greater than 0")
        assert_err(raw.call("BLMPOP", "0", "2", "l", "LEFT"), "ERR syntax error")
        assert_err(raw.call("BZMPOP", "0", "1", "z", "MID"), "ERR syntax error")
        assert_err(raw.call("BZMPOP", "0", "1", "z", "MIN", "COUNT", "0"),
                   "ERR count should be greater than 0")
        assert_err(raw.call("BLPOP", "l"), "ERR wrong number of arguments for 'blpop' command")
        # A missing source with a wrong-typed destination: nothing to move, no error.
        assert raw.call("BLMOVE", "nothing", "s", "LEFT", "LEFT", "0.01") is None
        raw.call("RPUSH", "src", "v")
        assert_err(raw.call("BLMOVE", "src", "s", "LEFT", "LEFT", "0"), WRONGTYPE)
        assert raw.call("LRANGE", "src", "0", "-1") == [b"v"]

    def test_fractional_timeout_expires(self, raw):
        assert raw.call("BLPOP", *KEYS, "0.05") is None
        assert raw.call("BZPOPMIN", *KEYS, "0.01") is None

    def test_timeout_below_one_millisecond_expires(self, raw):
        # Rounded up to 1 ms (0.001 s is just under 1 ms in binary): not "block forever".
        for t in ("0.001", "1e-3", "0.0001", "1e-300"):
            assert raw.call("BLPOP", *KEYS, t) is None, t
            assert raw.call("BRPOPLPUSH", "k", "d", t) is None, t


class TestTimeoutReplies:
    def test_resp2(self, raw):
        raw.send(_encode("BLPOP", "k", "0.01"))
        assert raw.read_raw(5) == b"*-1\r\n"
        # Redis 7.0 answers every timed-out blocking command with a null array, BLMOVE too.
        raw.send(_encode("BLMOVE", "k", "d", "LEFT", "LEFT", "0.01"))
        assert raw.read_raw(5) == b"*-1\r\n"
        raw.send(_encode("BRPOPLPUSH", "k", "d", "0.01"))
        assert raw.read_raw(5) == b"*-1\r\n"
        raw.send(_encode("BZMPOP", "0.01", "2", "k", "j", "MAX"))
        assert raw.read_raw(5) == b"*-1\r\n"

    def test_resp3(self, raw):
        raw.call("HELLO", "3")
        raw.send(_encode("BLMPOP", "0.01", "1", "k", "LEFT"))
        assert raw.read_raw(3) == b"_\r\n"
        raw.send(_encode("BLMOVE", "k", "d", "LEFT", "LEFT", "0.01"))
        assert raw.read_raw(3) == b"_\r\n"


class TestWakeUps:
    def test_push_wakes_blocked_client(self, r, raw_factory):
        c = raw_factory()
        park(c, r, 1, "BLPOP", "q", "0")
        assert r.lpush("q", "a") == 1
        assert c.read() == [b"q", b"a"]
        assert r.exists("q") == 0
        wait_blocked(r, 0)

    def test_fifo_order(self, r, raw_factory):
        clients = [raw_factory() for _ in range(3)]
        for i, c in enumerate(clients):
            park(c, r, i + 1, "BRPOP", "q", "0")
        r.rpush("q", "a", "b", "c")  # each BRPOP takes the tail in turn
        assert [c.read() for c in clients] == [[b"q", b"c"], [b"q", b"b"], [b"q", b"a"]]

    def test_fifo_with_multi_key_clients(self, r, raw_factory):
        first, second = raw_factory(), raw_factory()
        park(first, r, 1, "BLPOP", *KEYS, "0")
        park(second, r, 2, "BLPOP", KEYS[3], "0")
        r.rpush(KEYS[3], "a", "b")
        assert first.read() == [KEYS[3].encode(), b"a"]
        assert second.read() == [KEYS[3].encode(), b"b"]

    def test_every_key_wakes_multi_key_client(self, r, raw_factory):
        c = raw_factory()
        for k in KEYS:
            park(c, r, 1, "BLPOP", *KEYS, "0")
            r.rpush(k, "v")
            assert c.read() == [k.encode(), b"v"]
            assert r.exists(*KEYS) == 0

    def test_blmove_across_keys(self, r, raw_factory):
        c = raw_factory()
        for src, dst in zip(KEYS, reversed(KEYS)):
            park(c, r, 1, "BLMOVE", src, dst, "RIGHT", "LEFT", "0")
            r.rpush(src, "x", "y")
            assert c.read() == b"y"
            assert r.lrange(dst, 0, -1)[0] == "y"
            r.delete(*KEYS)

    def test_moved_element_wakes_client_on_destination(self, r, raw_factory):
        mover, waiter = raw_factory(), raw_factory()
        park(mover, r, 1, "BRPOPLPUSH", KEYS[0], KEYS[1], "0")
        park(waiter, r, 2, "BLPOP", KEYS[1], "0")
        r.rpush(KEYS[0], "e")
        assert mover.read() == b"e"
        assert waiter.read() == [KEYS[1].encode(), b"e"]
        assert r.exists(KEYS[0], KEYS[1]) == 0

    def test_sorted_sets(self, r, raw_factory):
        c = raw_factory()
        c.call("HELLO", "3")
        park(c, r, 1, "BZPOPMIN", "z1", "z2", "0")
        r.zadd("z2", {"m": 2.5, "n": 3})
        reply = c.read()
        assert reply[:2] == [b"z2", b"m"] and reply[2] == 2.5 and reply[2].raw == "2.5"
        r.delete("z2")
        park(c, r, 1, "BZMPOP", "0", "2", "z1", "z2", "MAX", "COUNT", "10")
        r.zadd("z1", {"a": 1})
        assert c.read() == [b"z1", [[b"a", 1.0]]]
        # A list does not serve a sorted-set waiter: it stays blocked.
        park(c, r, 1, "BZPOPMAX", "w", "0")
        r.rpush("w", "x")
        r.delete("w")
        r.zadd("w", {"q": 1})
        assert c.read() == [b"w", b"q", 1.0]

    def test_blmpop_count(self, r, raw_factory):
        c = raw_factory()
        park(c, r, 1, "BLMPOP", "0", "2", "a", "b", "RIGHT", "COUNT", "2")
        r.rpush("b", "1", "2", "3")
        assert c.read() == [b"b", [b"3", b"2"]]
        assert r.lrange("b", 0, -1) == ["1"]

    def test_pipelined_commands_after_blocked_one(self, r, raw_factory):
        c = raw_factory()
        c.send(_encode("BLPOP", "q", "0") + _encode("PING"))
        wait_blocked(r, 1)
        r.rpush("q", "a")
        assert c.read() == [b"q", b"a"]
        assert c.read() == "PONG"

    def test_client_list_shows_blocked_flag(self, r, raw_factory):
        c = raw_factory()
        cid = c.call("CLIENT", "ID")
        park(c, r, 1, "BLPOP", "q", "0")
        line = r.execute_command("CLIENT", "LIST", "ID", cid)
        assert " flags=b " in line
        r.rpush("q", "a")
        assert c.read() == [b"q", b"a"]


class TestUnblockAndDisconnect:
    def test_client_unblock(self, r, raw_factory):
        c = raw_factory()
        cid = c.call("CLIENT", "ID")
        assert r.execute_command("CLIENT", "UNBLOCK", cid) == 0
        park(c, r, 1, "BLPOP", *KEYS, "0")
        assert r.execute_command("CLIENT", "UNBLOCK", cid, "TIMEOUT") == 1
        assert c.read() is None
        park(c, r, 1, "BLMOVE", "a", "b", "LEFT", "LEFT", "0")
        assert r.execute_command("CLIENT", "UNBLOCK", cid, "ERROR") == 1
        assert_err(c.read(), UNBLOCKED)
        wait_blocked(r, 0)
        with pytest.raises(redis.ResponseError, match="reason should be TIMEOUT or ERROR"):
            r.execute_command("CLIENT", "UNBLOCK", cid, "NOW")
        # Nothing left registered: a push stays in the list.
        r.rpush(KEYS[0], "v")
        assert r.llen(KEYS[0]) == 1
        assert c.call("PING") == "PONG"

    def test_disconnect_while_blocked(self, r, raw_factory):
        a, b = raw_factory(), raw_factory()
        park(a, r, 1, "BLPOP", "q", "0")
        park(b, r, 2, "BRPOP", *KEYS, "q", "0")
        a.close()
        b.close()
        wait_blocked(r, 0)
        r.rpush("q", "x")
        for k in KEYS:
            r.rpush(k, "y")
        assert r.lrange("q", 0, -1) == ["x"]
        assert all(r.llen(k) == 1 for k in KEYS)


class TestMulti:
    def test_blocking_commands_do_not_block_in_multi(self, r, raw):
        if isinstance(raw.call("MULTI"), Error):
            pytest.skip("MULTI not available")
        raw.call("BLPOP", "q", "0")
        raw.call("BLMOVE", "q", "d", "LEFT", "LEFT", "0")
        raw.call("BZPOPMIN", "z", "0")
        raw.send(_encode("EXEC"))
        # Not blocked: BLMOVE answers a null bulk there (a null array once blocked).
        assert raw.read_raw(19) == b"*3\r\n*-1\r\n$-1\r\n*-1\r\n"


    @pytest.mark.parametrize("keys", [("q", "q"), ("q{t}", "other{t}"), ("q", "other")])
    def test_push_in_multi_serves_after_exec(self, r, raw_factory, keys):
        """A client blocked on a key pushed inside MULTI is served after the EXEC, not between
        two of its commands: the EXEC's own LLEN still sees the element (as Redis)."""
        q, other = keys
        c = raw_factory()
        park(c, r, 1, "BLPOP", q, "0")
        tx = raw_factory()
        assert tx.call("MULTI") == "OK"
        for cmd in (("LPUSH", q, "a"), ("SET", other + ":s", "x"), ("LLEN", q)):
            assert tx.call(*cmd) == "QUEUED"
        assert tx.call("EXEC") == [1, "OK", 1]
        assert c.read() == [q.encode(), b"a"]
        assert r.llen(q) == 0
        wait_blocked(r, 0)


class TestStress:
    PRODUCERS = 4
    CONSUMERS = 4
    PER_PRODUCER = 300

    def test_exactly_once_delivery(self, r, server):
        total = self.PRODUCERS * self.PER_PRODUCER
        received = []
        lock = threading.Lock()
        errors = []
        deadline = time.monotonic() + 60

        def consumer(idx):
            c = redis.Redis(host=server.host, port=server.port, decode_responses=True,
                            socket_timeout=20)
            try:
                while time.monotonic() < deadline:
                    with lock:
                        if len(received) >= total:
                            return
                    keys = KEYS[idx % 2::2] + KEYS[(idx + 1) % 2::2]
                    got = (c.blpop(keys, timeout=0.5) if idx % 2 == 0
                           else c.brpop(keys, timeout=0.5))
                    if got is not None:
                        with lock:
                            received.append(got[1])
            except Exception as e:  # noqa: BLE001 - reported below
                errors.append(e)
            finally:
                c.close()

        def producer(idx):
            c = redis.Redis(host=server.host, port=server.port, decode_responses=True,
                            socket_timeout=20)
            try:
                for i in range(self.PER_PRODUCER):
                    key = KEYS[(i * 7 + idx) % len(KEYS)]
                    (c.lpush if i % 2 else c.rpush)(key, "p%d-%d" % (idx, i))
            except Exception as e:  # noqa: BLE001
                errors.append(e)
            finally:
                c.close()

        consumers = [threading.Thread(target=consumer, args=(i,)) for i in range(self.CONSUMERS)]
        producers = [threading.Thread(target=producer, args=(i,)) for i in range(self.PRODUCERS)]
        for t in consumers + producers:
            t.start()
        for t in producers + consumers:
            t.join(timeout=90)
        assert not errors, errors
        assert not any(t.is_alive() for t in consumers + producers)
        expected = {"p%d-%d" % (p, i) for p in range(self.PRODUCERS)
                    for i in range(self.PER_PRODUCER)}
        assert len(received) == total, "lost %d" % (total - len(received))
        assert set(received) == expected  # no loss, no duplicate (sizes match)
        assert sum(r.llen(k) for k in KEYS) == 0
        wait_blocked(r, 0)


# Hash tags that land on different shards of a 2-thread dashkv (core/hash.h kShardSeed; the
# gtest BlockingCommandsTest.TagsOfTheIntegrationTestsLandOnTwoShards guards this choice).
SHARD0, SHARD1 = "{a}", "{c}"


def _close_now(client, rst):
    """Closes a raw client's socket: an orderly FIN, or an RST (SO_LINGER 0)."""
    if rst:
        client.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    client.sock.close()


def _wait_blocked_fast(r, n, timeout=10.0):
    """wait_blocked without the 10 ms polling step (hundreds of rounds per test)."""
    deadline = time.monotonic() + timeout
    while blocked_clients(r) != n:
        assert time.monotonic() < deadline, "blocked_clients never reached %d" % n


# Each case: the blocking command (keys from a layout), how the pusher feeds it element i, and
# how the test reads back every element still in the keyspace (a list of strings).
def _list_elems(r, *keys):
    return [e for k in keys for e in r.lrange(k, 0, -1)]


def _zset_elems(r, *keys):
    return [m for k in keys for m in r.zrange(k, 0, -1)]


DEPARTED_CASES = {
    # name: (command(src, other, dst), push(r_raw, src, i) command, elements(r, src, other, dst))
    "blpop": (lambda s, o, d: ("BLPOP", s, o, "0"), lambda s, i: ("LPUSH", s, "e%d" % i),
              lambda r, s, o, d: _list_elems(r, s, o)),
    "brpop": (lambda s, o, d: ("BRPOP", o, s, "0"), lambda s, i: ("RPUSH", s, "e%d" % i),
              lambda r, s, o, d: _list_elems(r, s, o)),
    "blmpop": (lambda s, o, d: ("BLMPOP", "0", "2", s, o, "RIGHT", "COUNT", "2"),
               lambda s, i: ("LPUSH", s, "e%d" % i), lambda r, s, o, d: _list_elems(r, s, o)),
    "blmove": (lambda s, o, d: ("BLMOVE", s, d, "LEFT", "RIGHT", "0"),
               lambda s, i: ("RPUSH", s, "e%d" % i), lambda r, s, o, d: _list_elems(r, s, d)),
    "brpoplpush": (lambda s, o, d: ("BRPOPLPUSH", s, d, "0"),
                   lambda s, i: ("LPUSH", s, "e%d" % i), lambda r, s, o, d: _list_elems(r, s, d)),
    "bzpopmin": (lambda s, o, d: ("BZPOPMIN", s, o, "0"), lambda s, i: ("ZADD", s, i, "e%d" % i),
                 lambda r, s, o, d: _zset_elems(r, s, o)),
    "bzpopmax": (lambda s, o, d: ("BZPOPMAX", o, s, "0"), lambda s, i: ("ZADD", s, i, "e%d" % i),
                 lambda r, s, o, d: _zset_elems(r, s, o)),
    "bzmpop": (lambda s, o, d: ("BZMPOP", "0", "2", s, o, "MIN", "COUNT", "3"),
               lambda s, i: ("ZADD", s, i, "e%d" % i), lambda r, s, o, d: _zset_elems(r, s, o)),
}


class TestDepartedClientTakesNothing:
    """A client blocked in a blocking command disconnects and another client pushes at once (no
    gap): the element is never handed to the departed client, so it stays in the keyspace (or
    goes to the next live waiter), as in Redis. `layout` puts the other key / the destination on
    the source's shard or on the other one (at --threads 2)."""

    ROUNDS = 300
    TIME_LIMIT = 60.0  # seconds per case, a bound for slow machines

    @pytest.mark.parametrize("layout", ["same_shard", "cross_shard"])
    @pytest.mark.parametrize("rst", [False, True], ids=["fin", "rst"])
    @pytest.mark.parametrize("case", sorted(DEPARTED_CASES))
    def test_no_element_vanishes(self, r, server, case, rst, layout):
        make_cmd, make_push, elements = DEPARTED_CASES[case]
        other_tag = SHARD0 if layout == "same_shard" else SHARD1
        # Two pushers (on different threads of dashkv): the push runs on the client's thread
        # or on another one, while the client's own thread handles its close.
        pushers = [server.raw(), server.raw()]
        pushed, keys = [], []
        deadline = time.monotonic() + self.TIME_LIMIT
        try:
            for i in range(self.ROUNDS):
                if time.monotonic() > deadline:
                    break
                # Fresh keys each round: an element left from a round must not serve the next.
                src, other, dst = (SHARD0 + "src%d" % i, other_tag + "other%d" % i,
                                   other_tag + "dst%d" % i)
                _wait_blocked_fast(r, 0)  # the previous round's client is gone
                leaving = server.raw()
                leaving.send(_encode(*make_cmd(src, other, dst)))
                _wait_blocked_fast(r, 1)
                _close_now(leaving, rst)
                pusher = pushers[(i // 2) % 2]
                pusher.send(_encode(*make_push(src, i)))  # right after the close
                pusher.read()
                pushed.append("e%d" % i)
                keys.append((src, other, dst))
            wait_blocked(r, 0)

            def found():
                return [e for k in keys for e in elements(r, *k)]

            # A popped element that could not be delivered is returned asynchronously.
            wait_until(lambda: len(found()) >= len(pushed), timeout=10,
                       what="every element back in the keyspace")
            assert sorted(found()) == sorted(pushed), "lost %s" % sorted(set(pushed) - set(found()))
        finally:
            for p in pushers:
                p.close()

    @pytest.mark.parametrize("rst", [False, True], ids=["fin", "rst"])
    @pytest.mark.parametrize("cmd", ["BLPOP", "BZPOPMIN", "BLMOVE"])
    def test_next_waiter_gets_the_element(self, r, server, raw_factory, cmd, rst):
        """A live client blocked behind the departed one receives every element."""
        key, dst = SHARD0 + "q", SHARD1 + "d"
        block = {"BLPOP": ("BLPOP", key, "0"), "BZPOPMIN": ("BZPOPMIN", key, "0"),
                 "BLMOVE": ("BLMOVE", key, dst, "LEFT", "LEFT", "0")}[cmd]
        waiter, pusher = raw_factory(), raw_factory()
        deadline = time.monotonic() + self.TIME_LIMIT
        for i in range(self.ROUNDS // 2):
            if time.monotonic() > deadline:
                break
            leaving = server.raw()
            leaving.send(_encode(*block))
            _wait_blocked_fast(r, 1)
            waiter.send(_encode(*block))
            _wait_blocked_fast(r, 2)
            _close_now(leaving, rst)
            elem = "e%d" % i
            pusher.send(_encode(*(("ZADD", key, i, elem) if cmd == "BZPOPMIN"
                                  else ("LPUSH", key, elem))))
            pusher.read()
            got = waiter.read()
            if cmd == "BLPOP":
                assert got == [key.encode(), elem.encode()]
            elif cmd == "BZPOPMIN":
                assert got[:2] == [key.encode(), elem.encode()]
            else:
                assert got == elem.encode()
            wait_blocked(r, 0)
        assert r.exists(key) == 0


class TestWatchSeesBlockingWrites:
    """The pops and pushes of blocking commands dirty WATCH like any other write: the source
    key (popped) and the destination (pushed), whether the command is served at once or after
    it blocked (Redis's signalModifiedKey in both paths)."""

    IMMEDIATE = [
        ("BLPOP", lambda s, d: ("BLPOP", s, "0"), "list"),
        ("BRPOP", lambda s, d: ("BRPOP", s, "0"), "list"),
        ("BLMPOP", lambda s, d: ("BLMPOP", "0", "1", s, "LEFT"), "list"),
        ("BLMOVE", lambda s, d: ("BLMOVE", s, d, "LEFT", "LEFT", "0"), "list"),
        ("BRPOPLPUSH", lambda s, d: ("BRPOPLPUSH", s, d, "0"), "list"),
        ("BZPOPMIN", lambda s, d: ("BZPOPMIN", s, "0"), "zset"),
        ("BZPOPMAX", lambda s, d: ("BZPOPMAX", s, "0"), "zset"),
        ("BZMPOP", lambda s, d: ("BZMPOP", "0", "1", s, "MAX"), "zset"),
    ]

    @staticmethod
    def _exec_after(watcher, key, action):
        """WATCH key, run action(), then MULTI/EXEC on the watcher; returns EXEC's reply."""
        assert watcher.call("WATCH", key) == "OK"
        action()
        assert watcher.call("MULTI") == "OK"
        assert watcher.call("PING") == "QUEUED"
        return watcher.call("EXEC")

    @pytest.mark.parametrize("layout", ["same_shard", "cross_shard"])
    @pytest.mark.parametrize("name,make,kind", IMMEDIATE, ids=[c[0] for c in IMMEDIATE])
    def test_served_at_once_dirties_source(self, r, raw_factory, name, make, kind, layout):
        src = SHARD0 + "src"
        dst = (SHARD0 if layout == "same_shard" else SHARD1) + "dst"
        watcher, other = raw_factory(), raw_factory()

        def fill():
            r.rpush(src, "a", "b") if kind == "list" else r.zadd(src, {"a": 1, "b": 2})

        fill()
        assert self._exec_after(watcher, src, lambda: other.call(*make(src, dst))) is None
        if name in ("BLMOVE", "BRPOPLPUSH"):
            assert self._exec_after(watcher, dst, lambda: other.call(*make(src, dst))) is None

    @pytest.mark.parametrize("layout", ["same_shard", "cross_shard"])
    @pytest.mark.parametrize("cmd", ["BRPOPLPUSH", "BLMOVE"])
    def test_served_after_blocking_dirties_destination(self, r, raw_factory, cmd, layout):
        src = SHARD0 + "src"
        dst = (SHARD0 if layout == "same_shard" else SHARD1) + "dst"
        watcher, blocked = raw_factory(), raw_factory()
        block = (("BRPOPLPUSH", src, dst, "0") if cmd == "BRPOPLPUSH"
                 else ("BLMOVE", src, dst, "RIGHT", "LEFT", "0"))

        def serve():
            park(blocked, r, 1, *block)
            r.lpush(src, "element")
            assert blocked.read() == b"element"

        assert self._exec_after(watcher, dst, serve) is None
        assert r.lrange(dst, 0, -1) == ["element"]

    @pytest.mark.parametrize("layout", ["same_shard", "cross_shard"])
    @pytest.mark.parametrize("name,make,kind", IMMEDIATE, ids=[c[0] for c in IMMEDIATE])
    def test_served_after_blocking_dirties_source(self, r, raw_factory, name, make, kind,
                                                  layout):
        """The push that serves a blocked client dirties the source, and so does the pop; the
        watcher of an untouched key still commits."""
        src = SHARD0 + "src"
        dst = (SHARD0 if layout == "same_shard" else SHARD1) + "dst"
        watcher, blocked = raw_factory(), raw_factory()

        def serve():
            park(blocked, r, 1, *make(src, dst))
            r.rpush(src, "a") if kind == "list" else r.zadd(src, {"a": 1})
            assert blocked.read() is not None

        assert self._exec_after(watcher, src, serve) is None
        assert self._exec_after(watcher, SHARD1 + "untouched", lambda: None) == ["PONG"]


def test_earlier_pipelined_replies_go_out_before_a_client_waits(server, r):
    # As Redis: the replies of the commands sent ahead of a blocking one do not wait for it.
    c = server.raw()
    try:
        c.send(encode("SET", "pre", "1") + encode("GET", "pre") + encode("BLPOP", "nolist", 0))
        assert c.read() == "OK"
        assert c.read() == b"1"
        r.rpush("nolist", "x")
        assert c.read() == [b"nolist", b"x"]
    finally:
        c.close()
