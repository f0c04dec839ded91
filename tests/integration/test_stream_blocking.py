"""XREAD BLOCK (Redis 7.0 semantics): immediate replies and errors, wake-ups by XADD (every
waiter of a key, each from its own id), waits on keys of several shards, "$", COUNT, timeouts,
CLIENT UNBLOCK, disconnects, MULTI/EXEC and scripts, and a producer/consumer stress test where
every consumer must see every entry exactly once and in order. Checked against redis-server 7.0
too (DASHKV_TEST_TARGET=redis). Tests wait for INFO blocked_clients, never for a fixed time."""

import threading
import time

import pytest
import redis

from helpers import WRONGTYPE, assert_err, wait_until
from resp_client import Error

UNBLOCKED = "UNBLOCKED client unblocked via CLIENT UNBLOCK"
ERR_TIMEOUT_INT = "ERR timeout is not an integer or out of range"
ERR_INVALID_ID = "ERR Invalid stream ID specified as stream command argument"

# Enough keys that some live on every shard of a 4-thread server.
KEYS = ["stream:%d" % i for i in range(8)]


def blocked_clients(r):
    return int(r.info("clients")["blocked_clients"])


def wait_blocked(r, n):
    wait_until(lambda: blocked_clients(r) == n, timeout=10, what="%d blocked clients" % n)


def _encode(*args):
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        a = a if isinstance(a, bytes) else str(a).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)


def park(c, r, n, *cmd):
    """Sends `cmd` on raw client `c` without reading and waits until `n` clients are blocked."""
    c.send(_encode(*cmd))
    wait_blocked(r, n)


def entry(eid, *fields):
    return [eid.encode(), [f.encode() for f in fields]]


class TestImmediate:
    def test_answers_at_once_when_entries_are_there(self, r, raw):
        r.xadd("s", {"a": "1"}, id="1-1")
        r.xadd("s", {"b": "2"}, id="2-1")
        assert raw.call("XREAD", "BLOCK", "0", "STREAMS", "s", "0") == [
            [b"s", [entry("1-1", "a", "1"), entry("2-1", "b", "2")]]]
        assert raw.call("XREAD", "COUNT", "1", "BLOCK", "0", "STREAMS", "s", "1-1") == [
            [b"s", [entry("2-1", "b", "2")]]]
        # Only the streams with entries after their id are in the reply.
        assert raw.call("XREAD", "BLOCK", "0", "STREAMS", "nosuch", "s", "0", "1-5") == [
            [b"s", [entry("2-1", "b", "2")]]]

    def test_errors(self, r, raw):
        r.set("str", "x")
        assert_err(raw.call("XREAD", "BLOCK", "-1", "STREAMS", "s", "0"), "ERR timeout is negative")
        for bad in ("abc", "1.5", "", "99999999999999999999"):
            assert_err(raw.call("XREAD", "BLOCK", bad, "STREAMS", "s", "0"), ERR_TIMEOUT_INT)
        assert_err(raw.call("XREAD", "BLOCK", "0", "STREAMS", "str", "0"), WRONGTYPE)
        assert_err(raw.call("XREAD", "BLOCK", "0", "STREAMS", "str", "$"), WRONGTYPE)
        assert_err(raw.call("XREAD", "BLOCK", "0", "STREAMS", "s", ">"),
                   "ERR The > ID can be specified only when calling XREADGROUP using the GROUP "
                   "<group> <consumer> option.")
        for bad in ("abc", "1-x", "-", "+", "18446744073709551616-0", "1-18446744073709551616"):
            assert_err(raw.call("XREAD", "BLOCK", "0", "STREAMS", "s", bad), ERR_INVALID_ID)
        assert_err(raw.call("XREAD", "BLOCK", "0", "STREAMS", "s", "t", "0"),
                   "ERR Unbalanced XREAD list of streams: for each stream key an ID or '$' "
                   "must be specified.")
        assert_err(raw.call("XREAD", "BLOCK", "0", "s", "0"), "ERR syntax error")
        assert_err(raw.call("XREAD", "COUNT", "x", "BLOCK", "0", "STREAMS", "s", "0"),
                   "ERR value is not an integer or out of range")
        # Nothing was left blocked by the refused calls.
        assert raw.call("PING") == "PONG"
        assert blocked_clients(r) == 0

    def test_timeout_replies(self, raw):
        raw.send(_encode("XREAD", "BLOCK", "10", "STREAMS", "s", "$"))
        assert raw.read_raw(5) == b"*-1\r\n"
        raw.call("HELLO", "3")
        raw.send(_encode("XREAD", "COUNT", "5", "BLOCK", "1", "STREAMS", *KEYS,
                         *["0"] * len(KEYS)))
        assert raw.read_raw(3) == b"_\r\n"
        assert raw.call("PING") == "PONG"

    def test_huge_count_and_block(self, r, raw_factory):
        r.xadd("s", {"f": "v"}, id="5-5")
        c = raw_factory()
        huge = "9223372036854775807"
        assert c.call("XREAD", "COUNT", huge, "BLOCK", huge, "STREAMS", "s", "0") == [
            [b"s", [entry("5-5", "f", "v")]]]
        cid = c.call("CLIENT", "ID")
        park(c, r, 1, "XREAD", "COUNT", huge, "BLOCK", huge, "STREAMS", "s", "5-5")
        r.xadd("s", {"g": "w"}, id="6-0")
        assert c.read() == [[b"s", [entry("6-0", "g", "w")]]]
        park(c, r, 1, "XREAD", "BLOCK", huge, "STREAMS", "s", "$")
        assert r.execute_command("CLIENT", "UNBLOCK", cid) == 1
        assert c.read() is None


class TestWakeUps:
    def test_xadd_wakes_blocked_reader(self, r, raw_factory):
        r.xadd("s", {"old": "1"}, id="1-0")
        c = raw_factory()
        park(c, r, 1, "XREAD", "BLOCK", "0", "STREAMS", "s", "$")
        r.xadd("s", {"new": "2"}, id="2-0")
        assert c.read() == [[b"s", [entry("2-0", "new", "2")]]]  # "$": not the old entry
        wait_blocked(r, 0)

    def test_dollar_on_missing_stream_is_0_0(self, r, raw_factory):
        c = raw_factory()
        park(c, r, 1, "XREAD", "BLOCK", "0", "STREAMS", "fresh", "$")
        r.xadd("fresh", {"a": "1"}, id="0-1")
        assert c.read() == [[b"fresh", [entry("0-1", "a", "1")]]]

    def test_every_waiter_is_served_from_its_own_id(self, r, raw_factory):
        r.xadd("s", {"f": "1"}, id="1-0")
        r.xadd("s", {"f": "2"}, id="2-0")
        a, b, c, d = (raw_factory() for _ in range(4))
        # d is ahead (stays blocked) and first in line: it does not hold back the others.
        park(d, r, 1, "XREAD", "BLOCK", "0", "STREAMS", "s", "9-0")
        park(a, r, 2, "XREAD", "BLOCK", "0", "STREAMS", "s", "$")
        park(b, r, 3, "XREAD", "BLOCK", "0", "STREAMS", "s", "2-0")
        park(c, r, 4, "XREAD", "COUNT", "1", "BLOCK", "0", "STREAMS", "s", "2-0")
        r.execute_command("MULTI")
        r.execute_command("XADD", "s", "3-0", "f", "3")
        r.execute_command("XADD", "s", "4-0", "f", "4")
        r.execute_command("EXEC")
        both = [[b"s", [entry("3-0", "f", "3"), entry("4-0", "f", "4")]]]
        assert a.read() == both
        assert b.read() == both
        assert c.read() == [[b"s", [entry("3-0", "f", "3")]]]
        wait_blocked(r, 1)
        r.xadd("s", {"f": "10"}, id="10-0")
        assert d.read() == [[b"s", [entry("10-0", "f", "10")]]]

    def test_keys_on_several_shards(self, r, raw_factory):
        c = raw_factory()
        for i, k in enumerate(KEYS):
            park(c, r, 1, "XREAD", "BLOCK", "0", "STREAMS", *KEYS, *["$"] * len(KEYS))
            r.xadd(k, {"i": str(i)}, id="%d-1" % (i + 1))
            # Only the stream that got the entry is in the reply.
            assert c.read() == [[k.encode(), [entry("%d-1" % (i + 1), "i", str(i))]]]
        # From explicit ids: every stream with newer entries at once, in argument order.
        ids = ["%d-0" % (i + 1) for i in range(len(KEYS))]
        got = c.call("XREAD", "BLOCK", "0", "STREAMS", *KEYS, *ids)
        assert [g[0] for g in got] == [k.encode() for k in KEYS]

    def test_many_waiters_across_shards_one_xadd_each(self, r, raw_factory):
        clients = [raw_factory() for _ in range(6)]
        for n, c in enumerate(clients):
            park(c, r, n + 1, "XREAD", "BLOCK", "0", "STREAMS", *KEYS, *["0"] * len(KEYS))
        r.xadd(KEYS[5], {"x": "y"}, id="7-7")
        for c in clients:
            assert c.read() == [[KEYS[5].encode(), [entry("7-7", "x", "y")]]]
        wait_blocked(r, 0)

    def test_block_0_waits_until_woken(self, r, raw_factory):
        c = raw_factory()
        park(c, r, 1, "XREAD", "BLOCK", "0", "STREAMS", "s", "$")
        r.set("other", "x")  # other keys do not wake it
        assert blocked_clients(r) == 1
        r.xadd("s", {"k": "v"}, id="1-0")
        assert c.read() == [[b"s", [entry("1-0", "k", "v")]]]

    def test_deleted_or_overwritten_stream_keeps_waiting(self, r, raw_factory):
        """As Redis 7.0: a DEL, another type, or a stream re-created with smaller ids do not end
        the wait; an entry after the client's id does."""
        r.xadd("s", {"a": "1"}, id="5-0")
        c = raw_factory()
        park(c, r, 1, "XREAD", "BLOCK", "0", "STREAMS", "s", "$")
        r.delete("s")
        r.set("s", "string")
        r.delete("s")
        r.lpush("s", "list")
        r.delete("s")
        r.xadd("s", {"b": "2"}, id="3-0")
        r.xdel("s", "3-0")
        assert blocked_clients(r) == 1
        r.xadd("s", {"c": "3"}, id="6-0")
        assert c.read() == [[b"s", [entry("6-0", "c", "3")]]]

    def test_other_key_retyped_while_waiting_on_several_shards(self, r, raw_factory):
        """A key of the call that now holds another type does not turn the wake-up by another
        key into an error (Redis serves the key that got the entry)."""
        c = raw_factory()
        for k in KEYS[2:]:
            r.delete(*KEYS)
            park(c, r, 1, "XREAD", "BLOCK", "0", "STREAMS", *KEYS, *["$"] * len(KEYS))
            r.set(KEYS[0], "x")
            r.rpush(KEYS[1], "y")
            assert blocked_clients(r) == 1
            r.xadd(k, {"a": "b"}, id="1-0")
            assert c.read() == [[k.encode(), [entry("1-0", "a", "b")]]]

    def test_pipelined_commands_after_blocked_xread(self, r, raw_factory):
        c = raw_factory()
        c.send(_encode("XREAD", "BLOCK", "0", "STREAMS", "s", "$") + _encode("PING"))
        wait_blocked(r, 1)
        r.xadd("s", {"a": "b"}, id="1-0")
        assert c.read() == [[b"s", [entry("1-0", "a", "b")]]]
        assert c.read() == "PONG"

    def test_resp3_reply_is_a_map(self, r, raw_factory):
        c = raw_factory()
        c.call("HELLO", "3")
        park(c, r, 1, "XREAD", "BLOCK", "0", "STREAMS", "s", "$")
        r.xadd("s", {"a": "b"}, id="1-0")
        assert c.read() == [(b"s", [entry("1-0", "a", "b")])]  # a map: key -> entries


class TestUnblockAndDisconnect:
    def test_client_unblock(self, r, raw_factory):
        c = raw_factory()
        cid = c.call("CLIENT", "ID")
        park(c, r, 1, "XREAD", "BLOCK", "0", "STREAMS", *KEYS, *["$"] * len(KEYS))
        assert r.execute_command("CLIENT", "UNBLOCK", cid, "TIMEOUT") == 1
        assert c.read() is None
        park(c, r, 1, "XREAD", "BLOCK", "0", "STREAMS", "s", "$")
        assert r.execute_command("CLIENT", "UNBLOCK", cid, "ERROR") == 1
        assert_err(c.read(), UNBLOCKED)
        wait_blocked(r, 0)
        assert r.execute_command("CLIENT", "UNBLOCK", cid) == 0
        r.xadd("s", {"a": "b"})  # nothing registered any more
        assert c.call("PING") == "PONG"

    def test_timeout(self, r, raw):
        assert raw.call("XREAD", "BLOCK", "20", "STREAMS", *KEYS, *["$"] * len(KEYS)) is None
        assert blocked_clients(r) == 0

    def test_disconnect_while_blocked(self, r, raw_factory):
        a, b, c = raw_factory(), raw_factory(), raw_factory()
        park(a, r, 1, "XREAD", "BLOCK", "0", "STREAMS", "s", "$")
        park(b, r, 2, "XREAD", "BLOCK", "0", "STREAMS", *KEYS, "s", *["$"] * (len(KEYS) + 1))
        park(c, r, 3, "XREAD", "BLOCK", "0", "STREAMS", "s", "0")
        a.close()
        b.close()
        wait_blocked(r, 1)
        r.xadd("s", {"a": "b"}, id="1-0")
        assert c.read() == [[b"s", [entry("1-0", "a", "b")]]]  # the live reader got it
        wait_blocked(r, 0)
        for k in KEYS:
            r.xadd(k, {"x": "y"})
        assert r.xlen("s") == 1


class TestMultiAndScripts:
    def test_xread_block_does_not_block_in_multi(self, r, raw):
        r.xadd("s", {"a": "1"}, id="1-0")
        assert raw.call("MULTI") == "OK"
        assert raw.call("XREAD", "BLOCK", "0", "STREAMS", "s", "1-0") == "QUEUED"
        assert raw.call("XREAD", "BLOCK", "0", "STREAMS", "s", "0") == "QUEUED"
        assert raw.call("XREAD", "BLOCK", "0", "STREAMS", *KEYS, *["$"] * len(KEYS)) == "QUEUED"
        assert raw.call("EXEC") == [None, [[b"s", [entry("1-0", "a", "1")]]], None]
        assert blocked_clients(r) == 0

    @pytest.mark.parametrize("other", ["s", "t", "t{s}"])
    def test_xadd_in_multi_serves_after_exec(self, r, raw_factory, other):
        """Served after the EXEC, not between its commands: the reader gets both entries."""
        c = raw_factory()
        park(c, r, 1, "XREAD", "BLOCK", "0", "STREAMS", "s", "$")
        tx = raw_factory()
        assert tx.call("MULTI") == "OK"
        for cmd in (("XADD", "s", "1-0", "a", "1"), ("SET", other + ":k", "x"),
                    ("XADD", "s", "2-0", "b", "2"), ("XLEN", "s")):
            assert tx.call(*cmd) == "QUEUED"
        assert tx.call("EXEC") == [b"1-0", "OK", b"2-0", 2]
        assert c.read() == [[b"s", [entry("1-0", "a", "1"), entry("2-0", "b", "2")]]]
        wait_blocked(r, 0)

    def test_xread_block_refused_in_scripts(self, r):
        r.xadd("s", {"a": "1"}, id="1-0")
        with pytest.raises(redis.ResponseError,
                           match="^XREAD command is not allowed with BLOCK option from scripts"):
            r.eval("return redis.call('XREAD', 'BLOCK', '0', 'STREAMS', 's', '0')", 0)
        # Named as the script wrote it.
        with pytest.raises(redis.ResponseError,
                           match="^xread command is not allowed with BLOCK option from scripts$"):
            r.eval("return redis.pcall('xread', 'BLOCK', '0', 'STREAMS', 's', '$')", 0)
        # Without BLOCK it reads.
        assert r.eval("return redis.call('XREAD', 'STREAMS', 's', '0')", 0) == [
            ["s", [["1-0", ["a", "1"]]]]]

    def test_xadd_in_script_serves_after_script(self, r, raw_factory):
        c = raw_factory()
        park(c, r, 1, "XREAD", "BLOCK", "0", "STREAMS", "s", "$")
        r.eval("redis.call('XADD', KEYS[1], '1-0', 'a', '1'); "
               "redis.call('XADD', KEYS[1], '2-0', 'b', '2')", 1, "s")
        assert c.read() == [[b"s", [entry("1-0", "a", "1"), entry("2-0", "b", "2")]]]


class TestStress:
    """Producers XADD to several streams (on every shard) while consumers XREAD BLOCK 0 from the
    last id they saw of each stream. Rounds: after each, every consumer must catch up with
    every entry of the round before the next starts, so the last XADD of a round is the only one
    that can wake a consumer: a lost wake-up leaves it blocked and the round never completes
    (bounded wait, then failure). Every consumer must see every entry once, in id order."""

    PRODUCERS = 3
    CONSUMERS = 4
    ROUNDS = 15
    PER_ROUND = 10  # entries per producer per round
    STREAMS = KEYS[:6]

    def test_every_consumer_sees_every_entry_once_in_order(self, r, server):
        seen = [{k: [] for k in self.STREAMS} for _ in range(self.CONSUMERS)]
        lock = threading.Lock()
        errors = []
        stop = threading.Event()

        def consumer(idx):
            c = redis.Redis(host=server.host, port=server.port, decode_responses=True,
                            socket_timeout=60)
            last = {k: "0-0" for k in self.STREAMS}
            try:
                while not stop.is_set():
                    reply = c.execute_command("XREAD", "COUNT", str(3 + idx), "BLOCK", "0",
                                              "STREAMS", *self.STREAMS,
                                              *[last[k] for k in self.STREAMS])
                    for key, entries in reply or []:
                        with lock:
                            for eid, fields in entries:
                                seen[idx][key].append((eid, fields["v"]))
                        last[key] = entries[-1][0]
            except Exception as e:  # noqa: BLE001 - reported below
                if not stop.is_set():
                    errors.append(e)
            finally:
                c.close()

        def producer(idx, rnd):
            c = redis.Redis(host=server.host, port=server.port, decode_responses=True,
                            socket_timeout=20)
            try:
                for i in range(self.PER_ROUND):
                    key = self.STREAMS[(i * 5 + idx + rnd) % len(self.STREAMS)]
                    c.xadd(key, {"v": "p%d-r%d-%d" % (idx, rnd, i)})
            except Exception as e:  # noqa: BLE001
                errors.append(e)
            finally:
                c.close()

        consumers = [threading.Thread(target=consumer, args=(i,)) for i in range(self.CONSUMERS)]
        for t in consumers:
            t.start()
        wait_blocked(r, self.CONSUMERS)
        total = 0
        try:
            for rnd in range(self.ROUNDS):
                producers = [threading.Thread(target=producer, args=(p, rnd))
                             for p in range(self.PRODUCERS)]
                for t in producers:
                    t.start()
                for t in producers:
                    t.join(timeout=60)
                assert not errors, errors
                total += self.PRODUCERS * self.PER_ROUND

                def caught_up():
                    with lock:
                        return all(sum(len(v) for v in s.values()) >= total for s in seen)

                wait_until(caught_up, timeout=30,
                           what="every consumer has every entry of round %d (lost wake-up?)"
                           % rnd)
        finally:
            stop.set()
            # Wake the consumers so that they see the stop flag.
            for k in self.STREAMS:
                r.xadd(k, {"v": "stop"})
            for t in consumers:
                t.join(timeout=30)
        assert not errors, errors
        assert not any(t.is_alive() for t in consumers)
        for k in self.STREAMS:
            expected = [(e[0], e[1]["v"]) for e in r.xrange(k) if e[1]["v"] != "stop"]
            for idx in range(self.CONSUMERS):
                got = [x for x in seen[idx][k] if x[1] != "stop"]
                assert got == expected, "consumer %d on %s" % (idx, k)
        wait_blocked(r, 0)


class TestFlagsAndAtomicity:
    def test_command_info_flags(self, r):
        info = r.execute_command("COMMAND", "INFO", "XREAD")["xread"]
        assert info["arity"] == -4
        assert sorted(info["flags"]) == ["blocking", "movablekeys", "readonly"]

    def test_read_of_several_shards_sees_multi_exec_whole(self, r, server):
        """Flagged blocking, XREAD without BLOCK still reads streams of several shards under
        intent locks: it never sees one XADD of a MULTI/EXEC without the others."""
        keys = KEYS[:4]
        stop = threading.Event()
        errors = []

        def writer():
            c = redis.Redis(host=server.host, port=server.port, socket_timeout=20)
            try:
                n = 0
                while not stop.is_set():
                    n += 1
                    p = c.pipeline(transaction=True)
                    for k in keys:  # each stream holds one entry: id n-1 in every stream
                        p.xdel(k, "%d-1" % (n - 1))
                        p.xadd(k, {"v": "1"}, id="%d-1" % n)
                    p.execute()
            except Exception as e:  # noqa: BLE001
                errors.append(e)
            finally:
                c.close()

        t = threading.Thread(target=writer)
        t.start()
        try:
            deadline = time.monotonic() + 10
            reads = 0
            while reads < 2000 and time.monotonic() < deadline:
                reply = r.execute_command("XREAD", "STREAMS", *keys, *["0"] * len(keys)) or []
                ids = {k: [e[0] for e in entries] for k, entries in reply}
                assert len(set(str(ids.get(k)) for k in keys)) == 1, ids
                reads += 1
        finally:
            stop.set()
            t.join(timeout=30)
        assert not errors, errors
