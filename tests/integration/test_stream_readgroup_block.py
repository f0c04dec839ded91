"""XREADGROUP BLOCK (Redis 7.0 semantics): when it answers at once (history ids, entries there,
errors, hostile arguments), wake-ups by XADD (each new entry to exactly one consumer of a group,
FIFO, consumers created and pending lists filled when served, other groups and XREAD readers
served from the same entries), the errors that end a wait (stream deleted, retyped, flushed,
renamed, expired, swapped away; group destroyed), CLIENT UNBLOCK, disconnects, MULTI/EXEC and
scripts, and a stress test where consumers on several shards share the entries of concurrent
producers exactly once. Checked against redis-server 7.0 too (DASHKV_TEST_TARGET=redis). Tests
wait for INFO blocked_clients, never for a fixed time."""

import threading

import pytest
import redis

from helpers import WRONGTYPE, assert_err, wait_until
from resp_client import encode

UNBLOCKED = "UNBLOCKED client unblocked via CLIENT UNBLOCK"
KEY_GONE = "UNBLOCKED the stream key no longer exists"
GROUP_GONE = "NOGROUP the consumer group this client was blocked on no longer exists"
ERR_TIMEOUT_INT = "ERR timeout is not an integer or out of range"
ERR_NOT_INT = "ERR value is not an integer or out of range"

# Enough keys that some live on every shard of a 4-thread server.
KEYS = ["rg:%d" % i for i in range(8)]


def blocked_clients(r):
    return int(r.info("clients")["blocked_clients"])


def wait_blocked(r, n):
    wait_until(lambda: blocked_clients(r) == n, timeout=10, what="%d blocked clients" % n)


def park(c, r, n, *cmd):
    """Sends `cmd` on raw client `c` without reading and waits until `n` clients are blocked."""
    c.send(encode(*cmd))
    wait_blocked(r, n)


def xrg(consumer, *keys, group="g", opts=()):
    """An XREADGROUP BLOCK 0 call of `consumer` reading ">" from `keys`."""
    return ("XREADGROUP", "GROUP", group, consumer, *opts, "BLOCK", "0", "STREAMS", *keys,
            *[">"] * len(keys))


def entry(eid, *fields):
    return [eid.encode(), [f.encode() for f in fields]]


def groups(r, *keys, name="g"):
    for k in keys:
        r.xgroup_create(k, name, id="$", mkstream=True)


def pending_of(r, key, group="g"):
    """{consumer: [ids]} of the group's pending list."""
    out = {}
    for p in r.xpending_range(key, group, "-", "+", 1000):
        out.setdefault(p["consumer"], []).append(p["message_id"])
    return out


def consumers_of(r, key, group="g"):
    return sorted(c["name"] for c in r.xinfo_consumers(key, group))


class TestImmediate:
    def test_history_id_answers_at_once(self, r, raw):
        groups(r, "s", "t")
        assert raw.call("XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "s", "0") == [
            [b"s", []]]
        # One history id among ">" ids: no blocking either; only the history key answers.
        assert raw.call("XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "s", "t",
                        ">", "0") == [[b"t", []]]
        r.xadd("s", {"a": "1"}, id="1-1")
        assert raw.call(*xrg("c", "s")) == [[b"s", [entry("1-1", "a", "1")]]]
        assert raw.call("XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "s", "0") == [
            [b"s", [entry("1-1", "a", "1")]]]
        assert blocked_clients(r) == 0

    def test_entries_already_there_answer_at_once(self, r, raw):
        groups(r, *KEYS)
        r.xadd(KEYS[3], {"x": "1"}, id="3-1")
        r.xadd(KEYS[6], {"y": "2"}, id="6-1")
        assert raw.call(*xrg("c", *KEYS)) == [[KEYS[3].encode(), [entry("3-1", "x", "1")]],
                                               [KEYS[6].encode(), [entry("6-1", "y", "2")]]]
        assert pending_of(r, KEYS[3]) == {"c": ["3-1"]}

    def test_errors(self, r, raw):
        groups(r, "s")
        r.set("str", "x")
        head = ("XREADGROUP", "GROUP", "g", "c")
        tail = ("STREAMS", "s", ">")
        assert_err(raw.call(*head, "BLOCK", "-1", *tail), "ERR timeout is negative")
        for bad in ("abc", "1.5", "", "+5", " 5", "-0", "0x10", "9223372036854775808",
                    "99999999999999999999"):
            assert_err(raw.call(*head, "BLOCK", bad, *tail), ERR_TIMEOUT_INT)
        for bad in ("x", "1.5", "99999999999999999999"):
            assert_err(raw.call(*head, "COUNT", bad, "BLOCK", "10", *tail), ERR_NOT_INT)
        # BLOCK without its value takes the next argument as the timeout.
        assert_err(raw.call(*head, "BLOCK", *tail), ERR_TIMEOUT_INT)
        # COUNT after BLOCK takes STREAMS as its value.
        assert_err(raw.call(*head, "BLOCK", "10", "COUNT", *tail), ERR_NOT_INT)
        # The first bad option wins.
        assert_err(raw.call(*head, "BLOCK", "x", "BLOCK", "20", *tail), ERR_TIMEOUT_INT)
        assert_err(raw.call(*head, "BLOCK", "-1", "COUNT", "x", *tail), "ERR timeout is negative")
        assert_err(raw.call(*head, "BLOCK", "0", "STREAMS", "s", "$"),
                   "ERR The $ ID is meaningless in the context of XREADGROUP: you want to read "
                   "the history of this consumer by specifying a proper ID, or use the > ID to "
                   "get new messages. The $ ID would just return an empty result set.")
        assert_err(raw.call(*head, "BLOCK", "0", "STREAMS", "s", "zz"),
                   "ERR Invalid stream ID specified as stream command argument")
        assert_err(raw.call(*head, "BLOCK", "0", "STREAMS", "s"),
                   "ERR Unbalanced XREAD list of streams: for each stream key an ID or '$' "
                   "must be specified.")
        assert_err(raw.call(*head, "BLOCK", "0", "STREAMS", "s", "t", ">", ">"),
                   "NOGROUP No such key 't' or consumer group 'g' in XREADGROUP with GROUP "
                   "option")
        assert_err(raw.call("XREADGROUP", "GROUP", "nog", "c", "BLOCK", "0", *tail),
                   "NOGROUP No such key 's' or consumer group 'nog' in XREADGROUP with GROUP "
                   "option")
        assert_err(raw.call(*head, "BLOCK", "0", "STREAMS", "str", ">"), WRONGTYPE)
        assert_err(raw.call(*head, *tail, "BLOCK", "0"),
                   "ERR Invalid stream ID specified as stream command argument")
        assert_err(raw.call("XREADGROUP", "BLOCK", "0", *tail),
                   "ERR wrong number of arguments for 'xreadgroup' command")
        # Nothing was left blocked, and no consumer was created by the refused calls.
        assert raw.call("PING") == "PONG"
        assert blocked_clients(r) == 0
        assert consumers_of(r, "s") == []

    @pytest.mark.parametrize("opts", [
        ("BLOCK", "10"), ("COUNT", "-1", "BLOCK", "10"), ("COUNT", "0", "BLOCK", "10"),
        ("COUNT", "9223372036854775807", "BLOCK", "10"), ("BLOCK", "500000", "BLOCK", "10"),
        ("BLOCK", "10", "NOACK", "NOACK"), ("block", "10", "count", "3")])
    def test_timeout_reply(self, r, raw, opts):
        groups(r, "s")
        raw.send(encode("XREADGROUP", "GROUP", "g", "c", *opts, "STREAMS", "s", ">"))
        assert raw.read_raw(5) == b"*-1\r\n"
        assert blocked_clients(r) == 0
        # A call that timed out created no consumer.
        assert consumers_of(r, "s") == []

    def test_timeout_reply_resp3_and_max_id(self, r, raw):
        groups(r, *KEYS)
        raw.call("HELLO", "3")
        raw.send(encode("XREADGROUP", "GROUP", "g", "c", "BLOCK", "1", "STREAMS", *KEYS,
                        *[">"] * len(KEYS)))
        assert raw.read_raw(3) == b"_\r\n"
        # The largest id reads as ">": it blocks.
        raw.send(encode("XREADGROUP", "GROUP", "g", "c", "BLOCK", "5", "STREAMS", "rg:0",
                        "18446744073709551615-18446744073709551615"))
        assert raw.read_raw(3) == b"_\r\n"
        assert raw.call("PING") == "PONG"

    def test_huge_block_and_count(self, r, raw_factory):
        groups(r, "s")
        c = raw_factory()
        huge = "9223372036854775807"
        park(c, r, 1, "XREADGROUP", "GROUP", "g", "c", "COUNT", huge, "BLOCK", huge, "STREAMS",
             "s", ">")
        r.xadd("s", {"f": "v"}, id="5-5")
        assert c.read() == [[b"s", [entry("5-5", "f", "v")]]]
        wait_blocked(r, 0)


class TestWakeUps:
    def test_xadd_serves_creates_consumer_and_fills_pel(self, r, raw_factory):
        groups(r, "s")
        c = raw_factory()
        park(c, r, 1, *xrg("alice", "s"))
        assert consumers_of(r, "s") == []  # created when served, not when blocked
        r.xadd("s", {"k": "v"}, id="1-0")
        assert c.read() == [[b"s", [entry("1-0", "k", "v")]]]
        wait_blocked(r, 0)
        assert consumers_of(r, "s") == ["alice"]
        assert pending_of(r, "s") == {"alice": ["1-0"]}
        info = r.xinfo_groups("s")[0]
        assert info["last-delivered-id"] == "1-0"
        assert info["pending"] == 1
        assert r.xack("s", "g", "1-0") == 1

    def test_noack_leaves_pel_empty(self, r, raw_factory):
        groups(r, "s")
        c = raw_factory()
        park(c, r, 1, *xrg("c", "s", opts=("NOACK",)))
        r.xadd("s", {"k": "v"}, id="1-0")
        assert c.read() == [[b"s", [entry("1-0", "k", "v")]]]
        assert pending_of(r, "s") == {}
        assert consumers_of(r, "s") == ["c"]
        assert r.xinfo_groups("s")[0]["last-delivered-id"] == "1-0"

    def test_each_entry_goes_to_one_consumer_in_fifo_order(self, r, raw_factory):
        groups(r, "s")
        a, b, c = raw_factory(), raw_factory(), raw_factory()
        park(a, r, 1, *xrg("a", "s"))
        park(b, r, 2, *xrg("b", "s"))
        park(c, r, 3, *xrg("c", "s"))
        r.xadd("s", {"n": "1"}, id="1-0")
        assert a.read() == [[b"s", [entry("1-0", "n", "1")]]]
        wait_blocked(r, 2)
        r.xadd("s", {"n": "2"}, id="2-0")
        assert b.read() == [[b"s", [entry("2-0", "n", "2")]]]
        wait_blocked(r, 1)
        r.xadd("s", {"n": "3"}, id="3-0")
        assert c.read() == [[b"s", [entry("3-0", "n", "3")]]]
        assert pending_of(r, "s") == {"a": ["1-0"], "b": ["2-0"], "c": ["3-0"]}

    def test_count_splits_a_batch_between_consumers(self, r, raw_factory):
        groups(r, "s")
        a, b, c = raw_factory(), raw_factory(), raw_factory()
        park(a, r, 1, *xrg("a", "s", opts=("COUNT", "2")))
        park(b, r, 2, *xrg("b", "s", opts=("COUNT", "2")))
        park(c, r, 3, *xrg("c", "s"))
        tx = raw_factory()
        assert tx.call("MULTI") == "OK"
        for i in range(1, 4):
            assert tx.call("XADD", "s", "%d-0" % i, "n", str(i)) == "QUEUED"
        assert tx.call("EXEC") == [b"1-0", b"2-0", b"3-0"]
        assert a.read() == [[b"s", [entry("1-0", "n", "1"), entry("2-0", "n", "2")]]]
        assert b.read() == [[b"s", [entry("3-0", "n", "3")]]]
        wait_blocked(r, 1)  # c: nothing left for the group
        r.xadd("s", {"n": "4"}, id="4-0")
        assert c.read() == [[b"s", [entry("4-0", "n", "4")]]]

    def test_other_groups_and_readers_behind_a_consumer_are_served(self, r, raw_factory):
        groups(r, "s")
        groups(r, "s", name="g2")
        a, b, reader, other = (raw_factory() for _ in range(4))
        park(a, r, 1, *xrg("a", "s"))
        park(b, r, 2, *xrg("b", "s"))  # same group: nothing left for it after a
        park(reader, r, 3, "XREAD", "BLOCK", "0", "STREAMS", "s", "$")
        park(other, r, 4, *xrg("o", "s", group="g2", opts=("COUNT", "1")))
        r.xadd("s", {"f": "1"}, id="1-0")
        got = [[b"s", [entry("1-0", "f", "1")]]]
        assert a.read() == got
        assert reader.read() == got
        assert other.read() == got
        wait_blocked(r, 1)
        assert pending_of(r, "s", "g2") == {"o": ["1-0"]}
        r.xadd("s", {"f": "2"}, id="2-0")
        assert b.read() == [[b"s", [entry("2-0", "f", "2")]]]

    def test_fifo_holds_for_a_consumer_waiting_on_several_shards(self, r, raw_factory):
        """The first consumer of a group in line gets the entry even when it waits on keys of
        several shards (it is woken and retries under locks): the consumer of the same group
        behind it does not take it meanwhile; another group and a reader are served at once."""
        groups(r, *KEYS)
        groups(r, KEYS[0], name="g2")
        cross, single, other, reader = (raw_factory() for _ in range(4))
        park(cross, r, 1, *xrg("x", *KEYS))
        park(single, r, 2, *xrg("s", KEYS[0]))
        park(other, r, 3, *xrg("o", KEYS[0], group="g2"))
        park(reader, r, 4, "XREAD", "BLOCK", "0", "STREAMS", KEYS[0], "$")
        r.xadd(KEYS[0], {"f": "1"}, id="1-0")
        got = [[KEYS[0].encode(), [entry("1-0", "f", "1")]]]
        assert cross.read() == got
        assert other.read() == got
        assert reader.read() == got
        wait_blocked(r, 1)
        assert pending_of(r, KEYS[0]) == {"x": ["1-0"]}
        r.xadd(KEYS[0], {"f": "2"}, id="2-0")
        assert single.read() == [[KEYS[0].encode(), [entry("2-0", "f", "2")]]]

    def test_setid_does_not_wake_but_counts_at_the_next_xadd(self, r, raw_factory):
        groups(r, "s")
        r.xadd("s", {"a": "1"}, id="1-1")
        r.xgroup_setid("s", "g", "$")
        c = raw_factory()
        park(c, r, 1, *xrg("c", "s"))
        assert r.xgroup_setid("s", "g", "0") is True
        # A later XADD serves it from the group's new position: both entries in one reply.
        r.xadd("s", {"b": "2"}, id="2-2")
        assert c.read() == [[b"s", [entry("1-1", "a", "1"), entry("2-2", "b", "2")]]]

    @pytest.mark.parametrize("change", [
        ("XGROUP", "DELCONSUMER", "s", "g", "c"), ("XGROUP", "CREATECONSUMER", "s", "g", "d"),
        ("XTRIM", "s", "MAXLEN", "0"), ("XGROUP", "CREATE", "s", "g2", "0"),
        ("EXPIRE", "s", "100"), ("XSETID", "s", "5-0")])
    def test_other_changes_keep_it_waiting(self, r, raw_factory, change):
        groups(r, "s")
        r.xadd("s", {"a": "1"}, id="1-1")
        r.xgroup_setid("s", "g", "$")
        r.xgroup_createconsumer("s", "g", "c")
        c = raw_factory()
        park(c, r, 1, *xrg("c", "s"))
        r.execute_command(*change)
        assert blocked_clients(r) == 1
        r.xadd("s", {"b": "2"}, id="9-9")
        assert c.read() == [[b"s", [entry("9-9", "b", "2")]]]
        assert pending_of(r, "s") == {"c": ["9-9"]}

    def test_keys_on_several_shards(self, r, raw_factory):
        groups(r, *KEYS)
        c = raw_factory()
        for i, k in enumerate(KEYS):
            park(c, r, 1, *xrg("c", *KEYS))
            r.xadd(k, {"i": str(i)}, id="%d-1" % (i + 1))
            # Only the stream that got the entry is in the reply.
            assert c.read() == [[k.encode(), [entry("%d-1" % (i + 1), "i", str(i))]]]
            assert pending_of(r, k) == {"c": ["%d-1" % (i + 1)]}
        wait_blocked(r, 0)

    def test_many_consumers_across_shards_share_entries(self, r, raw_factory):
        """Each entry to one consumer. Redis serves a woken consumer the key that woke it only;
        a dashkv consumer waiting on several shards retries on all its keys and may take the
        entries of several (blocking.h), leaving another consumer waiting."""
        groups(r, *KEYS)
        clients = [raw_factory() for _ in range(4)]
        cids = [c.call("CLIENT", "ID") for c in clients]
        for n, c in enumerate(clients):
            park(c, r, n + 1, *xrg("c%d" % n, *KEYS))
        for i, k in enumerate(KEYS[:4]):
            r.xadd(k, {"x": "y"}, id="7-%d" % i)
        wait_until(lambda: sum(g["pending"] for k in KEYS[:4] for g in r.xinfo_groups(k)) == 4,
                   timeout=10, what="4 entries delivered")
        served = {c for k in KEYS[:4] for c in consumers_of(r, k)}
        wait_blocked(r, 4 - len(served))
        got = {}
        for n, c in enumerate(clients):
            if r.execute_command("CLIENT", "UNBLOCK", cids[n]) == 1:
                assert c.read() is None  # still waiting: nothing was left for it
                continue
            for key, entries in c.read():
                for e in entries:
                    got[(key.decode(), e[0].decode())] = "c%d" % n
        assert sorted(got) == [(k, "7-%d" % i) for i, k in enumerate(KEYS[:4])]
        for (k, eid), consumer in got.items():
            assert pending_of(r, k) == {consumer: [eid]}
        wait_blocked(r, 0)

    def test_pipelined_commands_after_blocked_call(self, r, raw_factory):
        groups(r, "s")
        c = raw_factory()
        c.send(encode(*xrg("c", "s")) + encode("PING"))
        wait_blocked(r, 1)
        r.xadd("s", {"a": "b"}, id="1-0")
        assert c.read() == [[b"s", [entry("1-0", "a", "b")]]]
        assert c.read() == "PONG"

    def test_resp3_reply_is_a_map(self, r, raw_factory):
        groups(r, "s")
        c = raw_factory()
        c.call("HELLO", "3")
        park(c, r, 1, *xrg("c", "s"))
        r.xadd("s", {"a": "b"}, id="1-0")
        assert c.read() == [(b"s", [entry("1-0", "a", "b")])]  # a map: key -> entries

    @pytest.mark.parametrize("other", ["s", "t", "t{s}"])
    def test_xadd_in_multi_serves_after_exec(self, r, raw_factory, other):
        groups(r, "s")
        c = raw_factory()
        park(c, r, 1, *xrg("c", "s"))
        tx = raw_factory()
        assert tx.call("MULTI") == "OK"
        for cmd in (("XADD", "s", "1-0", "a", "1"), ("SET", other + ":k", "x"),
                    ("XADD", "s", "2-0", "b", "2")):
            assert tx.call(*cmd) == "QUEUED"
        assert tx.call("EXEC") == [b"1-0", "OK", b"2-0"]
        assert c.read() == [[b"s", [entry("1-0", "a", "1"), entry("2-0", "b", "2")]]]
        wait_blocked(r, 0)


class TestEndedByChanges:
    @pytest.mark.parametrize("change", [
        [("DEL", "s")], [("UNLINK", "s")], [("SET", "s", "x")], [("FLUSHALL",)],
        [("FLUSHDB",)], [("RENAME", "s", "s2")], [("SWAPDB", "0", "1")],
        [("DEL", "s"), ("RPUSH", "s", "x")]])
    def test_stream_gone(self, r, raw_factory, change):
        groups(r, "s")
        c = raw_factory()
        park(c, r, 1, *xrg("c", "s"))
        for cmd in change:
            r.execute_command(*cmd)
        assert_err(c.read(), KEY_GONE)
        wait_blocked(r, 0)
        assert c.call("PING") == "PONG"

    def test_stream_expired(self, r, raw_factory):
        groups(r, "s")
        c = raw_factory()
        park(c, r, 1, *xrg("c", "s"))
        r.pexpire("s", 1)
        assert_err(c.read(), KEY_GONE)  # when the expiry removes it

    def test_group_destroyed(self, r, raw_factory):
        groups(r, "s")
        groups(r, "s", name="g2")
        a, b = raw_factory(), raw_factory()
        park(a, r, 1, *xrg("a", "s"))
        park(b, r, 2, *xrg("b", "s", group="g2"))
        assert r.xgroup_destroy("s", "g") == 1
        assert_err(a.read(), GROUP_GONE)
        wait_blocked(r, 1)  # the other group's consumer waits on
        r.xadd("s", {"a": "1"}, id="1-0")
        assert b.read() == [[b"s", [entry("1-0", "a", "1")]]]

    def test_stream_recreated_without_the_group(self, r, raw_factory):
        groups(r, "s")
        c = raw_factory()
        park(c, r, 1, *xrg("c", "s"))
        p = r.pipeline(transaction=True)
        p.delete("s")
        p.xadd("s", {"a": "1"}, id="5-1")
        p.execute()
        assert_err(c.read(), GROUP_GONE)

    def test_group_recreated_in_the_same_transaction_serves(self, r, raw_factory):
        groups(r, "s")
        c = raw_factory()
        park(c, r, 1, *xrg("c", "s"))
        tx = raw_factory()
        assert tx.call("MULTI") == "OK"
        for cmd in (("XGROUP", "DESTROY", "s", "g"), ("XGROUP", "CREATE", "s", "g", "0"),
                    ("XADD", "s", "5-1", "a", "1")):
            assert tx.call(*cmd) == "QUEUED"
        assert tx.call("EXEC") == [1, "OK", b"5-1"]
        assert c.read() == [[b"s", [entry("5-1", "a", "1")]]]

    @pytest.mark.parametrize("change", [("DEL", 5), ("SET", 2), ("DESTROY", 7)])
    def test_one_key_of_several_shards(self, r, raw_factory, change):
        groups(r, *KEYS)
        c = raw_factory()
        park(c, r, 1, *xrg("c", *KEYS))
        what, i = change
        if what == "DEL":
            r.delete(KEYS[i])
        elif what == "SET":
            r.set(KEYS[i], "x")
        else:
            r.xgroup_destroy(KEYS[i], "g")
        assert_err(c.read(), GROUP_GONE if what == "DESTROY" else KEY_GONE)
        wait_blocked(r, 0)
        # Nothing was delivered from the other keys.
        for k in KEYS:
            if k != KEYS[i]:
                assert consumers_of(r, k) == []


class TestUnblockAndDisconnect:
    def test_client_unblock(self, r, raw_factory):
        groups(r, *KEYS)
        c = raw_factory()
        cid = c.call("CLIENT", "ID")
        park(c, r, 1, *xrg("c", *KEYS))
        assert r.execute_command("CLIENT", "UNBLOCK", cid, "TIMEOUT") == 1
        assert c.read() is None
        park(c, r, 1, *xrg("c", "rg:0"))
        assert r.execute_command("CLIENT", "UNBLOCK", cid, "ERROR") == 1
        assert_err(c.read(), UNBLOCKED)
        wait_blocked(r, 0)
        assert r.execute_command("CLIENT", "UNBLOCK", cid) == 0
        r.xadd("rg:0", {"a": "b"}, id="1-0")  # nothing registered any more
        assert c.call("PING") == "PONG"
        assert consumers_of(r, "rg:0") == []
        assert r.xinfo_groups("rg:0")[0]["last-delivered-id"] == "0-0"

    def test_timeout(self, r, raw):
        groups(r, *KEYS)
        assert raw.call("XREADGROUP", "GROUP", "g", "c", "BLOCK", "20", "STREAMS", *KEYS,
                        *[">"] * len(KEYS)) is None
        assert blocked_clients(r) == 0

    def test_disconnected_consumer_takes_nothing(self, r, raw_factory):
        groups(r, "s", *KEYS)
        a, b, c = raw_factory(), raw_factory(), raw_factory()
        park(a, r, 1, *xrg("a", "s"))
        park(b, r, 2, *xrg("b", *KEYS, "s"))
        park(c, r, 3, *xrg("c", "s"))
        a.close()
        b.close()
        wait_blocked(r, 1)
        r.xadd("s", {"a": "b"}, id="1-0")
        assert c.read() == [[b"s", [entry("1-0", "a", "b")]]]  # the live consumer got it
        wait_blocked(r, 0)
        assert consumers_of(r, "s") == ["c"]
        assert pending_of(r, "s") == {"c": ["1-0"]}


class TestMultiAndScripts:
    def test_does_not_block_in_multi(self, r, raw):
        groups(r, "s", *KEYS)
        r.xadd("s", {"a": "1"}, id="1-0")
        assert raw.call("MULTI") == "OK"
        assert raw.call(*xrg("c", "s")) == "QUEUED"
        assert raw.call(*xrg("c", "s")) == "QUEUED"
        assert raw.call(*xrg("c", *KEYS)) == "QUEUED"
        assert raw.call("XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "s",
                        "0") == "QUEUED"
        assert raw.call("EXEC") == [[[b"s", [entry("1-0", "a", "1")]]], None, None,
                                    [[b"s", [entry("1-0", "a", "1")]]]]
        assert blocked_clients(r) == 0
        raw.call("HELLO", "3")
        assert raw.call("MULTI") == "OK"
        assert raw.call(*xrg("c", "s")) == "QUEUED"
        raw.send(encode("EXEC"))
        assert raw.read_raw(7) == b"*1\r\n_\r\n"

    def test_block_refused_in_scripts(self, r):
        groups(r, "s")
        r.xadd("s", {"a": "1"}, id="1-0")
        with pytest.raises(redis.ResponseError, match="^XREADGROUP command is not allowed with "
                           "BLOCK option from scripts"):
            r.eval("return redis.call('XREADGROUP', 'GROUP', 'g', 'c', 'BLOCK', '0', "
                   "'STREAMS', KEYS[1], '>')", 1, "s")
        # Named as the script wrote it; refused with a history id too.
        with pytest.raises(redis.ResponseError, match="^xreadgroup command is not allowed with "
                           "BLOCK option from scripts$"):
            r.eval("return redis.pcall('xreadgroup', 'GROUP', 'g', 'c', 'BLOCK', '10', "
                   "'STREAMS', KEYS[1], '0')", 1, "s")
        assert consumers_of(r, "s") == []
        # Without BLOCK it reads.
        assert r.eval("return redis.call('XREADGROUP', 'GROUP', 'g', 'c', 'STREAMS', KEYS[1], "
                      "'>')", 1, "s") == [["s", [["1-0", ["a", "1"]]]]]

    def test_xadd_in_script_serves_after_script(self, r, raw_factory):
        groups(r, "s")
        c = raw_factory()
        park(c, r, 1, *xrg("c", "s"))
        r.eval("redis.call('XADD', KEYS[1], '1-0', 'a', '1'); "
               "redis.call('XADD', KEYS[1], '2-0', 'b', '2')", 1, "s")
        assert c.read() == [[b"s", [entry("1-0", "a", "1"), entry("2-0", "b", "2")]]]


def test_command_info_flags(r):
    info = r.execute_command("COMMAND", "INFO", "XREADGROUP")["xreadgroup"]
    assert info["arity"] == -7
    assert sorted(info["flags"]) == ["blocking", "movablekeys", "write"]


class TestStress:
    """Producers XADD to several streams (on every shard) while consumers of one group block in
    XREADGROUP BLOCK 0 (some on every stream, some on one; one with NOACK). Rounds: after each,
    every entry of the round must have been delivered before the next starts, so a lost wake-up
    leaves an entry undelivered while its consumers wait (bounded wait, then failure). At the
    end every entry was delivered to exactly one consumer, and the group's pending list holds
    exactly the deliveries to the consumers without NOACK."""

    PRODUCERS = 3
    ROUNDS = 12
    PER_ROUND = 12  # entries per producer per round
    STREAMS = KEYS[:6]
    # (name, streams, COUNT, NOACK)
    CONSUMERS = [("all0", KEYS[:6], 2, False), ("all1", KEYS[:6], 5, False),
                 ("all2", KEYS[:6], 1, True), ("one0", KEYS[:1], 3, False),
                 ("one1", KEYS[:1], 1, False), ("two", KEYS[4:6], 4, False)]

    def test_every_entry_delivered_once(self, r, server):
        groups(r, *self.STREAMS)
        delivered = []  # (consumer, key, id, value)
        lock = threading.Lock()
        errors = []
        stop = threading.Event()
        ids = {}

        def consumer(name, keys, count, noack):
            c = redis.Redis(host=server.host, port=server.port, decode_responses=True,
                            socket_timeout=60)
            try:
                with lock:
                    ids[name] = c.client_id()
                opts = ("COUNT", str(count)) + (("NOACK",) if noack else ())
                while not stop.is_set():
                    reply = c.execute_command(*xrg(name, *keys, opts=opts))
                    for key, entries in reply or []:
                        with lock:
                            for eid, fields in entries:
                                delivered.append((name, key, eid, fields["v"]))
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

        threads = [threading.Thread(target=consumer, args=spec) for spec in self.CONSUMERS]
        for t in threads:
            t.start()
        wait_blocked(r, len(self.CONSUMERS))
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
                        return len(delivered) >= total

                wait_until(caught_up, timeout=30,
                           what="every entry of round %d delivered (lost wake-up?)" % rnd)
        finally:
            stop.set()
            # Wake the consumers so that they see the stop flag.
            wait_blocked(r, len(self.CONSUMERS))
            for name in ids:
                r.execute_command("CLIENT", "UNBLOCK", ids[name])
            for t in threads:
                t.join(timeout=30)
        assert not errors, errors
        assert not any(t.is_alive() for t in threads)
        noack = {spec[0] for spec in self.CONSUMERS if spec[3]}
        waits_on = {spec[0]: spec[1] for spec in self.CONSUMERS}
        for name, key, _, _ in delivered:
            assert key in waits_on[name], (name, key)
        for k in self.STREAMS:
            expected = [(eid, f["v"]) for eid, f in r.xrange(k)]
            got = sorted((eid, v) for _, key, eid, v in delivered if key == k)
            assert got == sorted(expected), "stream %s: each entry exactly once" % k
            want = {}
            for name, key, eid, _ in delivered:
                if key == k and name not in noack:
                    want.setdefault(name, []).append(eid)
            pel = pending_of(r, k)
            assert {n: sorted(v) for n, v in pel.items()} == {n: sorted(v)
                                                              for n, v in want.items()}
        assert total == len(delivered)
        wait_blocked(r, 0)
