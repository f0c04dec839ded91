"""Pipelines of multi-key commands whose keys span shards (MGET, MSET, DEL, UNLINK, EXISTS,
TOUCH), mixed with single-key commands, MULTI/EXEC, WATCH, blocking commands and errors.

dashkv runs consecutive such calls of one pipeline as one group (one message per shard per
step, server/tx/multi_part.h): every reply must still come back in request order, every call
must stay atomic (no other client sees half of it), and every error must answer in its place.
Expected values follow Redis semantics (the suite also runs against redis-server). Loops are
bounded in count; nothing is timed.
"""

import socket
import threading

import pytest
import redis

from helpers import run_threads
from resp_client import encode

KEYS = ["mk:%s" % c for c in "abcdefghij"]  # ten keys: they land on several shards


def client(srv, **kw):
    return redis.Redis(host=srv.host, port=srv.port, decode_responses=True, socket_timeout=30,
                       **kw)


def test_mixed_pipeline_answers_in_order(srv):
    c = client(srv)
    c.flushall()
    p = c.pipeline(transaction=False)
    p.set("mk:a", "1")
    p.mset({k: "v" + k[-1] for k in KEYS})
    p.mget(KEYS)
    p.get("mk:c")
    p.mget(["mk:j", "nokey:1", "mk:a", "mk:a"])
    p.exists(*KEYS, "nokey:2", "mk:a")
    p.delete("mk:a", "mk:b", "nokey:3", "mk:a")
    p.mget(KEYS[:3])
    p.incr("ctr")
    p.unlink("mk:c", "mk:d", "mk:e")
    p.exists(*KEYS)
    p.touch("mk:f", "mk:g", "mk:z")
    p.mset({"mk:a": "A", "mk:j": "J"})
    p.msetnx({"mk:a": "x", "mk:new": "y"})
    p.mget("mk:a", "mk:j", "mk:new")
    p.incr("ctr")
    assert p.execute() == [
        True, True, ["v" + k[-1] for k in KEYS], "vc", ["vj", None, "va", "va"], 11, 2,
        [None, None, "vc"], 1, 3, 5, 2, True, False, ["A", "J", None], 2]


def test_same_keys_twice_in_one_group_run_in_order(srv):
    c = client(srv)
    c.flushall()
    p = c.pipeline(transaction=False)
    for i in range(20):
        p.mset({k: "%s-%d" % (k, i) for k in KEYS})
        p.mget(KEYS)
        if i % 5 == 4:
            p.delete(*KEYS)
            p.exists(*KEYS)
    out = p.execute()
    pos = 0
    for i in range(20):
        assert out[pos] is True
        assert out[pos + 1] == ["%s-%d" % (k, i) for k in KEYS]
        pos += 2
        if i % 5 == 4:
            assert out[pos:pos + 2] == [10, 0]
            pos += 2
    assert c.dbsize() == 0


def test_errors_inside_a_group_answer_in_place(srv):
    c = client(srv)
    c.flushall()
    c.rpush("mk:list", "x")
    raw = socket.create_connection((srv.host, srv.port), timeout=30)
    try:
        cmds = [
            ("MSET", "mk:a", "1", "mk:b", "2"),
            ("MGET", "mk:a", "mk:list", "mk:b"),  # a list reads as nil
            ("MSET", "mk:a", "1", "mk:c"),  # a key without a value
            ("DEL",),  # wrong arity
            ("MGET",),  # wrong arity
            ("INCR", "mk:list"),  # wrong type
            ("EXISTS", "mk:a", "mk:list", "mk:b", "mk:c"),
            ("MSET", "mk:c", "3", "mk:d", "4", "mk:e", "5"),
            ("MGET", "mk:a", "mk:b", "mk:c", "mk:d", "mk:e"),
            ("NOSUCHCOMMAND", "mk:a"),
            ("DEL", "mk:a", "mk:list", "mk:e"),
            ("MGET", "mk:a", "mk:b", "mk:list", "mk:e"),
        ]
        raw.sendall(b"".join(encode(*cmd) for cmd in cmds))
        f = raw.makefile("rb")
        replies = [read_reply(f) for _ in cmds]
    finally:
        raw.close()
    assert replies[0] == "OK"
    assert replies[1] == ["1", None, "2"]
    assert replies[2].startswith("-ERR wrong number of arguments for 'mset'")
    assert replies[3].startswith("-ERR wrong number of arguments for 'del'")
    assert replies[4].startswith("-ERR wrong number of arguments for 'mget'")
    assert replies[5].startswith("-WRONGTYPE")
    assert replies[6] == 3
    assert replies[7] == "OK"
    assert replies[8] == ["1", "2", "3", "4", "5"]
    assert replies[9].startswith("-ERR unknown command")
    assert replies[10] == 3
    assert replies[11] == [None, "2", None, None]


def read_reply(f):
    """Reads one RESP2 reply: errors as '-...' strings, nil as None."""
    line = f.readline()
    assert line.endswith(b"\r\n"), "connection closed"
    kind, body = line[:1], line[1:-2].decode()
    if kind == b"+":
        return body
    if kind == b"-":
        return "-" + body
    if kind == b":":
        return int(body)
    if kind == b"$":
        n = int(body)
        if n < 0:
            return None
        data = f.read(n + 2)
        return data[:-2].decode()
    if kind == b"*":
        n = int(body)
        return None if n < 0 else [read_reply(f) for _ in range(n)]
    raise AssertionError("unexpected reply %r" % line)


def test_resp3_nulls_in_a_group(srv):
    c = client(srv, protocol=3)
    c.flushall()
    p = c.pipeline(transaction=False)
    p.mset({"mk:a": "1", "mk:j": "2"})
    p.mget(KEYS)
    p.mget(["mk:j", "mk:x", "mk:a"])
    assert p.execute() == [True, ["1"] + [None] * 8 + ["2"], ["2", None, "1"]]


def test_commandstats_count_every_call_of_a_group(srv):
    c = client(srv)
    c.flushall()
    c.config_resetstat()
    p = c.pipeline(transaction=False)
    for _ in range(16):
        p.mget(KEYS)
        p.mset({k: "v" for k in KEYS})
        p.exists(*KEYS)
    p.execute()
    stats = c.info("commandstats")
    assert stats["cmdstat_mget"]["calls"] == 16
    assert stats["cmdstat_mset"]["calls"] == 16
    assert stats["cmdstat_exists"]["calls"] == 16


@pytest.mark.dashkv_only
def test_a_pipeline_of_multishard_reads_shares_its_hops(srv):
    # 16 MGETs, then 16 EXISTS, over every shard: one message per other shard for the whole
    # run, not one per call (a path that hops per call fails this). Writes run one call per
    # group (multi_part.h), so only reads are checked here.
    c = client(srv)
    c.flushall()
    c.mset({k: "v" for k in KEYS})
    if srv.threads < 2:
        pytest.skip("one shard: nothing to hop to")

    def hops():
        return int(c.info("stats")["dashkv_shard_hops"])

    for cmd in ("mget", "exists"):
        p = c.pipeline(transaction=False)
        for _ in range(16):
            p.mget(KEYS) if cmd == "mget" else p.exists(*KEYS)
        before = hops()
        out = p.execute()
        used = hops() - before
        assert out == ([["v"] * 10] * 16 if cmd == "mget" else [10] * 16)
        assert 1 <= used <= srv.threads - 1, (cmd, used)


def writer_and_readers(srv, rounds, depth, readers):
    """A writer MSETs every key of KEYS to one value per call, or DELs them all, in pipelines;
    readers MGET and EXISTS them in pipelines and must never see a mix."""
    c = client(srv)
    c.flushall()
    c.mset({k: "0" for k in KEYS})

    def writer():
        w = client(srv)
        n = 0
        for _ in range(rounds):
            p = w.pipeline(transaction=False)
            for _ in range(depth):
                n += 1
                if n % 7 == 0:
                    p.delete(*KEYS)
                else:
                    p.mset({k: str(n) for k in KEYS})
            p.execute()

    def reader():
        rd = client(srv)
        for _ in range(rounds):
            p = rd.pipeline(transaction=False)
            for i in range(depth):
                if i % 3 == 2:
                    p.exists(*KEYS)
                elif i % 3 == 1:
                    p.get("mk:a")  # single-key commands in between
                    p.mget(KEYS)
                else:
                    p.mget(KEYS)
            for out in p.execute():
                if isinstance(out, list):
                    assert len(set(out)) == 1, "a reader saw half of an MSET or DEL: %r" % out
                elif isinstance(out, int):
                    assert out in (0, len(KEYS)), "EXISTS saw half of an MSET or DEL: %r" % out

    run_threads([writer] + [reader] * readers)
    final = c.mget(KEYS)
    assert len(set(final)) == 1


def test_concurrent_writer_never_shows_half_a_group(srv):
    writer_and_readers(srv, rounds=150, depth=20, readers=3)


def test_concurrent_writer_and_transactions_never_show_half(srv):
    # EXECs reading every key and writing a pair, racing pipelined MSETs of every key.
    c = client(srv)
    c.flushall()
    c.mset({k: "0" for k in KEYS})

    def writer():
        w = client(srv)
        for n in range(1, 150):
            p = w.pipeline(transaction=False)
            for j in range(10):
                p.mset({k: "%d.%d" % (n, j) for k in KEYS})
            p.execute()

    def tx():
        t = client(srv)
        for _ in range(150):
            p = t.pipeline(transaction=True)
            p.get("mk:a")
            p.get("mk:j")
            p.mget(KEYS)
            p.get("mk:e")
            a, j, all_keys, e = p.execute()
            assert a == j == e and set(all_keys) == {a}, (a, j, e, all_keys)

    run_threads([writer, tx, tx])


def test_watch_sees_a_write_by_a_group_in_the_same_pipeline(srv):
    c = client(srv)
    c.flushall()
    c.mset({k: "0" for k in KEYS})
    raw = socket.create_connection((srv.host, srv.port), timeout=30)
    try:
        f = raw.makefile("rb")
        cmds = [("WATCH", "mk:c"), ("MSET", "mk:a", "1", "mk:b", "1", "mk:c", "1", "mk:j", "1"),
                ("MGET", *KEYS), ("MULTI",), ("SET", "mk:d", "tx"), ("EXEC",),
                ("GET", "mk:d"),
                # A WATCH no group write touches: its EXEC runs.
                ("WATCH", "mk:e"), ("MSET", "mk:a", "2", "mk:j", "2"), ("MGET", "mk:a", "mk:j"),
                ("MULTI",), ("SET", "mk:d", "tx2"), ("MGET", "mk:a", "mk:e"), ("EXEC",),
                ("DEL", "mk:a", "mk:j"), ("EXISTS", "mk:a", "mk:j")]
        raw.sendall(b"".join(encode(*cmd) for cmd in cmds))
        replies = [read_reply(f) for _ in cmds]
    finally:
        raw.close()
    assert replies[:7] == ["OK", "OK", ["1", "1", "1", "0", "0", "0", "0", "0", "0", "1"],
                           "OK", "QUEUED", None, "0"]
    assert replies[7:] == ["OK", "OK", ["2", "2"], "OK", "QUEUED", "QUEUED",
                           ["OK", ["2", "0"]], 2, 0]


def test_watch_fails_when_another_client_writes_with_a_group(srv):
    c = client(srv)
    c.flushall()
    other = client(srv)
    for i in range(20):
        p = c.pipeline(transaction=True)
        p.watch("mk:f")
        p.multi()
        p.set("mk:g", str(i))
        if i % 2:
            q = other.pipeline(transaction=False)
            q.mset({k: "o%d" % i for k in KEYS})
            q.mget(KEYS)
            q.execute()
            with pytest.raises(redis.WatchError):
                p.execute()
        else:
            assert p.execute() == [True]
        p.reset()


@pytest.mark.needs_lists
def test_blocking_and_multi_inside_the_same_pipeline(srv):
    c = client(srv)
    c.flushall()
    blocked = client(srv)
    got = []
    t = threading.Thread(target=lambda: got.append(blocked.blpop(["mk:q"], timeout=30)))
    t.start()
    # Wait (bounded in count, no sleep) until the client is parked.
    for _ in range(5000):
        if int(c.info("clients")["blocked_clients"]) == 1:
            break
    assert int(c.info("clients")["blocked_clients"]) == 1
    cmds = [("MSET", *[x for k in KEYS for x in (k, "b")]),
            ("LPUSH", "mk:q", "woken"),  # wakes the parked client
            ("MGET", *KEYS),
            ("BLPOP", "mk:none", "0.05"),  # times out: nil
            ("EXISTS", *KEYS),
            ("LPUSH", "mk:l2", "x"),
            ("BLPOP", "mk:l2", "1"),  # served at once
            ("DEL", *KEYS),
            ("MULTI",), ("MGET", *KEYS), ("MSET", "mk:a", "m", "mk:j", "m"),
            ("BLPOP", "mk:l2", "0"),  # inside MULTI: does not block, nil
            ("EXEC",),
            ("MGET", "mk:a", "mk:j", "mk:b")]
    raw = socket.create_connection((srv.host, srv.port), timeout=30)
    try:
        raw.sendall(b"".join(encode(*cmd) for cmd in cmds))
        f = raw.makefile("rb")
        out = [read_reply(f) for _ in cmds]
    finally:
        raw.close()
    t.join(timeout=60)
    assert got == [("mk:q", "woken")] or got == [["mk:q", "woken"]]
    assert out == ["OK", 1, ["b"] * 10, None, 10, 1, ["mk:l2", "x"], 10,
                   "OK", "QUEUED", "QUEUED", "QUEUED", [[None] * 10, "OK", None],
                   ["m", "m", None]]


def test_client_disconnecting_mid_pipeline_leaves_whole_calls(srv):
    c = client(srv)
    c.flushall()
    cmds = []
    for n in range(1, 1001):
        if n % 11 == 0:
            cmds.append(encode("DEL", *KEYS))
        else:
            args = []
            for k in KEYS:
                args += [k, str(n)]
            cmds.append(encode("MSET", *args))
        cmds.append(encode("MGET", *KEYS))
    payload = b"".join(cmds)
    baseline = int(c.info("clients")["connected_clients"])
    for _ in range(5):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)  # room for the replies
        s.settimeout(10)
        s.connect((srv.host, srv.port))
        try:
            s.sendall(payload)
        except OSError:
            pass  # the server stopped reading (replies unread): the point is to leave mid-way
        s.close()  # without reading a single reply
        vals = c.mget(KEYS)
        assert len(set(vals)) == 1, "a call was cut in half: %r" % vals
    # The server may still be running what it read from the closed connections: wait (bounded
    # in count) until they are gone, then check that no lock was left behind: the same keys take
    # writes and reads from everyone.
    for _ in range(100000):
        if int(c.info("clients")["connected_clients"]) == baseline:
            break
    assert int(c.info("clients")["connected_clients"]) == baseline
    p = c.pipeline(transaction=False)
    p.mset({k: "end" for k in KEYS})
    p.mget(KEYS)
    p.delete(*KEYS)
    assert p.execute() == [True, ["end"] * 10, 10]
    srv.assert_alive()
