"""MULTI / EXEC / DISCARD / WATCH / UNWATCH against Redis 7.0 semantics.

The cases follow Redis's own tests/unit/multi.tcl and the documented behaviour; every expected
reply was checked against redis-server 7.0 (DASHKV_TEST_TARGET=redis). Exact reply types and
error texts go through the raw RESP client; "another client" is a second connection. Keys
k0..k31 spread over every shard of a multi-threaded dashkv.

"""

import time

import pytest

from helpers import WRONGTYPE, arity, assert_err, assert_err_prefix, dirties, wait_until
from resp_client import Double, Error, Map, Simple

EXECABORT = "EXECABORT Transaction discarded because of previous errors."
KEYS = ["k%d" % i for i in range(32)]


def exec_(c):
    """EXEC on raw client `c`; returns the reply (None for a null reply)."""
    return c.call("EXEC")


def exec_raw(c):
    """EXEC on raw client `c`; returns the exact reply bytes of a short reply."""
    c.send(b"*1\r\n$4\r\nEXEC\r\n")
    line = c.read_raw(3)
    while not line.endswith(b"\r\n"):
        line += c.read_raw(1)
    return line


def run_tx(c, *cmds):
    """MULTI, queues `cmds` (each must reply QUEUED), returns EXEC's reply."""
    assert c.call("MULTI") == "OK"
    for cmd in cmds:
        q = c.call(*cmd)
        assert isinstance(q, Simple) and q == "QUEUED", (cmd, q)
    return c.call("EXEC")


# ---- queueing and EXEC replies -------------------------------------------------------------

def test_queued_replies_and_exec_results(raw):
    assert raw.call("MULTI") == Simple("OK")
    for cmd in (("SET", "a", "1"), ("INCR", "a"), ("GET", "a"), ("DEL", "a", "b")):
        reply = raw.call(*cmd)
        assert isinstance(reply, Simple) and reply == "QUEUED"
    assert raw.call("EXEC") == ["OK", 2, b"2", 1]
    assert raw.call("EXISTS", "a") == 0


def test_runtime_errors_are_embedded_and_do_not_stop_exec(raw):
    raw.call("SET", "s", "foo")
    reply = run_tx(raw, ("INCR", "s"), ("SADD", "s", "m"), ("SET", "b", "2"), ("INCR", "b"),
                   ("GET", "b"))
    assert isinstance(reply[0], Error) and reply[0] == "ERR value is not an integer or out of range"
    assert isinstance(reply[1], Error) and reply[1] == WRONGTYPE
    assert reply[2:] == ["OK", 3, b"3"]
    assert raw.call("GET", "s") == b"foo"


def test_syntax_error_at_run_time_is_embedded(raw):
    # Arity is checked at queue time; option syntax only when the command runs.
    reply = run_tx(raw, ("SET", "a", "1", "BADOPT"), ("SET", "b", "1"))
    assert reply[0] == Error("ERR syntax error") and reply[1] == "OK"
    assert raw.call("GET", "b") == b"1"


def test_redis_py_pipeline(r):
    p = r.pipeline(transaction=True)
    p.set("a", "1").incrby("a", 5).get("a").sadd("s", "x", "y").smembers("s")
    assert p.execute() == [True, 6, "6", 2, {"x", "y"}]


def test_empty_multi(raw):
    assert raw.call("MULTI") == "OK"
    assert raw.call("EXEC") == []
    raw.call("HELLO", "3")
    assert raw.call("MULTI") == "OK"
    assert exec_raw(raw) == b"*0\r\n"


def test_exec_and_discard_without_multi(raw):
    assert_err(raw.call("EXEC"), "ERR EXEC without MULTI")
    assert_err(raw.call("DISCARD"), "ERR DISCARD without MULTI")


def test_nested_multi_is_an_error_that_keeps_the_transaction(raw):
    assert raw.call("MULTI") == "OK"
    assert_err(raw.call("MULTI"), "ERR MULTI calls can not be nested")
    assert raw.call("SET", "a", "1") == "QUEUED"
    assert raw.call("EXEC") == ["OK"]
    assert raw.call("GET", "a") == b"1"


def test_watch_inside_multi_is_an_error_that_keeps_the_transaction(raw):
    assert raw.call("MULTI") == "OK"
    assert_err(raw.call("WATCH", "x"), "ERR WATCH inside MULTI is not allowed")
    assert raw.call("SET", "x", "1") == "QUEUED"
    assert raw.call("EXEC") == ["OK"]


# ---- EXECABORT -----------------------------------------------------------------------------

def test_execabort_after_unknown_command(raw):
    assert raw.call("MULTI") == "OK"
    assert raw.call("SET", "a", "1") == "QUEUED"
    assert_err(raw.call("NOSUCHCMD", "x"),
               "ERR unknown command 'NOSUCHCMD', with args beginning with: 'x' ")
    assert raw.call("SET", "b", "1") == "QUEUED"  # queueing goes on until EXEC
    assert_err(raw.call("EXEC"), EXECABORT)
    assert raw.call("EXISTS", "a", "b") == 0
    # The MULTI state is cleared.
    assert raw.call("PING") == "PONG"
    assert_err(raw.call("EXEC"), "ERR EXEC without MULTI")


def test_execabort_after_wrong_arity(raw):
    assert raw.call("MULTI") == "OK"
    assert raw.call("SET", "a", "1") == "QUEUED"
    assert_err(raw.call("GET"), arity("get"))
    assert_err(raw.call("SET", "x"), arity("set"))
    assert_err(raw.call("EXEC"), EXECABORT)
    assert raw.call("EXISTS", "a") == 0


def test_execabort_discards_watch(raw, raw_factory):
    other = raw_factory()
    raw.call("WATCH", "x")
    raw.call("MULTI")
    raw.call("NOSUCHCMD")
    assert_err(raw.call("EXEC"), EXECABORT)
    other.call("SET", "x", "1")
    assert run_tx(raw, ("PING",)) == ["PONG"]


def test_execabort_pipelined(raw):
    replies = raw.pipeline([("MULTI",), ("SET", "a", "1"), ("INCR",), ("EXEC",), ("GET", "a")])
    assert replies[:2] == ["OK", "QUEUED"]
    assert_err(replies[2], arity("incr"))
    assert_err(replies[3], EXECABORT)
    assert replies[4] is None


def test_command_not_allowed_in_multi(raw):
    assert raw.call("MULTI") == "OK"
    assert raw.call("SET", "foo", "bar") == "QUEUED"
    reply = raw.call("SHUTDOWN")
    if reply == "QUEUED":  # never run it: that would stop the session's server
        raw.call("DISCARD")
    assert_err(reply, "ERR Command not allowed inside a transaction")
    assert_err(raw.call("EXEC"), EXECABORT)
    assert raw.call("GET", "foo") is None


# ---- DISCARD, RESET, QUIT, SELECT ----------------------------------------------------------

def test_discard_clears_queue(raw):
    raw.call("SET", "a", "0")
    assert raw.call("MULTI") == "OK"
    raw.call("SET", "a", "1")
    raw.call("SET", "b", "1")
    assert raw.call("DISCARD") == "OK"
    assert raw.call("GET", "a") == b"0"
    assert raw.call("EXISTS", "b") == 0
    assert_err(raw.call("EXEC"), "ERR EXEC without MULTI")


def test_discard_unwatches(raw, raw_factory):
    other = raw_factory()
    raw.call("SET", "x", "1")
    raw.call("WATCH", "x")
    raw.call("MULTI")
    assert raw.call("DISCARD") == "OK"
    other.call("SET", "x", "2")
    assert run_tx(raw, ("GET", "x")) == [b"2"]


def test_discard_clears_the_dirty_flag(raw):
    raw.call("SET", "x", "10")
    raw.call("WATCH", "x")
    raw.call("SET", "x", "10")  # the client's own write outside MULTI dirties it
    raw.call("MULTI")
    raw.call("DISCARD")
    assert run_tx(raw, ("INCR", "x")) == [11]


def test_reset_inside_multi_discards(raw, raw_factory):
    other = raw_factory()
    raw.call("SET", "x", "1")
    raw.call("WATCH", "x")
    raw.call("MULTI")
    raw.call("SET", "a", "1")
    assert raw.call("RESET") == Simple("RESET")
    assert raw.call("EXISTS", "a") == 0
    assert_err(raw.call("EXEC"), "ERR EXEC without MULTI")
    other.call("SET", "x", "2")  # unwatched by RESET
    assert run_tx(raw, ("GET", "x")) == [b"2"]


def test_quit_inside_multi(raw, raw_factory):
    c = raw_factory()
    assert c.call("MULTI") == "OK"
    assert c.call("SET", "a", "1") == "QUEUED"
    assert c.call("QUIT") == "OK"
    assert c.is_closed()
    assert raw.call("EXISTS", "a") == 0


def test_select_inside_multi(raw):
    raw.call("SET", "k", "db0")
    reply = run_tx(raw, ("SELECT", "1"), ("SET", "k", "db1"), ("GET", "k"), ("DBSIZE",))
    assert reply == ["OK", "OK", b"db1", 1]
    assert raw.call("GET", "k") == b"db1"  # the connection stays in db 1 after EXEC
    raw.call("SELECT", "0")
    assert raw.call("GET", "k") == b"db0"
    reply = run_tx(raw, ("SELECT", "1"), ("SELECT", "100000"), ("GET", "k"))
    assert reply[0] == "OK"
    assert_err(reply[1], "ERR DB index is out of range")
    assert reply[2] == b"db1"
    assert raw.call("SELECT", "0") == "OK"


def test_select_inside_multi_across_shards(raw):
    reply = run_tx(raw, ("MSET", *[x for k in KEYS[:8] for x in (k, "a")]), ("SELECT", "2"),
                   ("MSET", *[x for k in KEYS[:8] for x in (k, "b")]), ("MGET", *KEYS[:8]),
                   ("SELECT", "0"), ("MGET", *KEYS[:8]))
    assert reply == ["OK", "OK", "OK", [b"b"] * 8, "OK", [b"a"] * 8]
    raw.call("SELECT", "2")
    assert raw.call("DBSIZE") == 8
    raw.call("FLUSHDB")
    raw.call("SELECT", "0")


# ---- multi-key commands across shards ------------------------------------------------------

def test_cross_shard_commands_in_multi(raw):
    raw.call("SADD", "s1", "a", "b")
    raw.call("SADD", "s2", "b", "c")
    mset = [x for i, k in enumerate(KEYS[:16]) for x in (k, str(i))]
    reply = run_tx(raw, ("MSET", *mset), ("INCR", "k1"), ("INCRBY", "k2", "10"),
                   ("RENAME", "k0", "renamed"), ("MGET", "renamed", "k0", *KEYS[1:16]),
                   ("SUNIONSTORE", "dst", "s1", "s2", "nosuch"), ("DEL", "k3", "k4", "k5"),
                   ("EXISTS", *KEYS[:16]))
    assert reply[0] == "OK" and reply[1] == 2 and reply[2] == 12 and reply[3] == "OK"
    expect = [b"0", None, b"2", b"12"] + [str(i).encode() for i in range(3, 16)]
    assert reply[4] == expect
    assert reply[5:] == [3, 3, 12]
    assert sorted(raw.call("SMEMBERS", "dst")) == [b"a", b"b", b"c"]
    assert raw.call("MGET", "renamed", "k1", "k2", "k3") == [b"0", b"2", b"12", None]


def test_wrongtype_in_cross_shard_multi(raw):
    raw.call("SADD", "k1", "m")
    reply = run_tx(raw, ("MSET", "k0", "a", "k2", "b"), ("GET", "k1"), ("MGET", "k0", "k1", "k2"),
                   ("APPEND", "k0", "x"))
    assert reply[0] == "OK"
    assert_err(reply[1], WRONGTYPE)
    assert reply[2:] == [[b"a", None, b"b"], 2]


# ---- RESP3 reply types ---------------------------------------------------------------------

def test_resp3_exec_reply_types(raw):
    raw.call("HELLO", "3")
    reply = run_tx(raw, ("SET", "a", "1"), ("GET", "a"), ("GET", "nosuch"), ("HSET", "h", "f", "v"),
                   ("HGETALL", "h"), ("ZADD", "z", "1.5", "m"), ("ZSCORE", "z", "m"),
                   ("SADD", "s", "x"), ("SMEMBERS", "s"), ("INCR", "s"))
    assert reply[0] == "OK" and isinstance(reply[0], Simple)
    assert reply[1] == b"1" and reply[2] is None and reply[3] == 1
    assert isinstance(reply[4], Map) and reply[4].to_dict() == {b"f": b"v"}
    assert reply[5] == 1
    assert isinstance(reply[6], Double) and reply[6] == 1.5
    assert reply[7] == 1 and list(reply[8]) == [b"x"]
    assert_err(reply[9], WRONGTYPE)


# ---- WATCH ---------------------------------------------------------------------------------

def test_watch_unmodified_key_execs(raw):
    raw.call("SET", "x", "30")
    assert raw.call("WATCH", "x") == "OK"
    assert run_tx(raw, ("PING",)) == ["PONG"]


@pytest.mark.parametrize("resp", [2, 3])
def test_watch_modified_by_other_client_aborts(raw, raw_factory, resp):
    other = raw_factory()
    if resp == 3:
        raw.call("HELLO", "3")
    raw.call("SET", "x", "30")
    raw.call("WATCH", "a", "b", "x", "k", "z")
    other.call("SET", "x", "40")
    raw.call("MULTI")
    assert raw.call("SET", "x", "50") == "QUEUED"
    assert exec_raw(raw) == (b"*-1\r\n" if resp == 2 else b"_\r\n")
    assert raw.call("GET", "x") == b"40"


def test_watch_missing_key_then_created_aborts(raw, raw_factory):
    other = raw_factory()
    raw.call("WATCH", "x")
    other.call("SET", "x", "1")
    assert run_tx(raw, ("PING",)) is None


def test_watch_own_write_before_multi_aborts(raw):
    raw.call("WATCH", "x")
    raw.call("SET", "x", "1")
    assert run_tx(raw, ("PING",)) is None


def test_watch_own_write_inside_multi_does_not_abort(raw):
    raw.call("SET", "x", "1")
    raw.call("WATCH", "x")
    assert run_tx(raw, ("INCR", "x"), ("INCR", "x")) == [2, 3]


def test_keys_unwatched_after_successful_exec(raw, raw_factory):
    other = raw_factory()
    raw.call("WATCH", "x")
    assert run_tx(raw, ("PING",)) == ["PONG"]
    other.call("SET", "x", "1")
    assert run_tx(raw, ("PING",)) == ["PONG"]


def test_keys_unwatched_after_failed_exec(raw, raw_factory):
    other = raw_factory()
    raw.call("WATCH", "x")
    other.call("SET", "x", "1")
    assert run_tx(raw, ("PING",)) is None
    other.call("SET", "x", "2")
    assert run_tx(raw, ("PING",)) == ["PONG"]


def test_unwatch(raw, raw_factory):
    other = raw_factory()
    assert raw.call("UNWATCH") == "OK"  # nothing watched
    raw.call("SET", "x", "30")
    raw.call("WATCH", "x")
    other.call("SET", "x", "40")
    assert raw.call("UNWATCH") == "OK"
    assert run_tx(raw, ("SET", "x", "50")) == ["OK"]
    assert raw.call("GET", "x") == b"50"


def test_watch_same_key_twice(raw, raw_factory):
    other = raw_factory()
    raw.call("WATCH", "x", "x")
    raw.call("WATCH", "x")
    other.call("SET", "x", "1")
    assert run_tx(raw, ("PING",)) is None
    other.call("SET", "x", "2")
    assert run_tx(raw, ("PING",)) == ["PONG"]


def test_watch_many_keys_over_shards(raw, raw_factory):
    other = raw_factory()
    for k in KEYS:
        other.call("SET", k, "0")
    # Any one of the watched keys, wherever it lives, aborts the EXEC.
    for k in KEYS:
        assert raw.call("WATCH", *KEYS) == "OK"
        other.call("INCR", k)
        assert run_tx(raw, ("MGET", *KEYS)) is None, k
    raw.call("WATCH", *KEYS)
    other.call("SET", "unwatched", "1")
    reply = run_tx(raw, ("MGET", *KEYS), ("MSET", *[x for k in KEYS for x in (k, "2")]))
    assert reply == [[b"1"] * len(KEYS), "OK"]


def test_watch_keys_modified_by_cross_shard_command(raw, raw_factory):
    other = raw_factory()
    raw.call("WATCH", *KEYS[:4])
    other.call("MSET", KEYS[2], "a", "elsewhere", "b", KEYS[20], "c")
    assert run_tx(raw, ("PING",)) is None
    raw.call("SET", KEYS[5], "v")
    raw.call("WATCH", KEYS[5])
    other.call("RENAME", KEYS[5], KEYS[21])
    assert run_tx(raw, ("PING",)) is None
    raw.call("WATCH", KEYS[21])
    other.call("DEL", KEYS[21], KEYS[22], KEYS[23])
    assert run_tx(raw, ("PING",)) is None


def test_rejected_cross_shard_write_does_not_touch_watched_keys(raw, raw_factory):
    # MSET with a key but no value at the end: refused before it writes anything, so the
    # watchers of its keys (spread over the shards) stay clean, as in Redis.
    other = raw_factory()
    raw.call("WATCH", *KEYS[:8])
    assert_err(other.call("MSET", *[x for k in KEYS[:7] for x in (k, "v")], KEYS[7]),
               arity("mset"))
    assert other.call("EXISTS", *KEYS[:8]) == 0
    assert run_tx(raw, ("PING",)) == ["PONG"]


def test_watch_key_modified_by_other_transaction(raw, raw_factory):
    other = raw_factory()
    raw.call("WATCH", "x", "y")
    assert run_tx(other, ("SET", "y", "1"), ("SET", "z", "1")) == ["OK", "OK"]
    assert run_tx(raw, ("PING",)) is None


def test_watch_expire_on_watched_key_aborts(raw, raw_factory):
    other = raw_factory()
    raw.call("SET", "x", "foo")
    raw.call("WATCH", "x")
    assert other.call("EXPIRE", "x", "100") == 1
    assert run_tx(raw, ("PING",)) is None


def test_watch_key_that_expires_aborts(raw):
    raw.call("SET", "x", "foo", "PX", "30")
    raw.call("WATCH", "x")
    # Wait for the deadline to pass without touching the key (reading it from another client
    # would delete it, a modification in its own right).
    time.sleep(0.06)
    assert run_tx(raw, ("PING",)) is None


def test_watch_key_that_expires_and_is_read_aborts(raw, raw_factory):
    other = raw_factory()
    raw.call("SET", "x", "foo", "PX", "30")
    raw.call("WATCH", "x")
    wait_until(lambda: other.call("EXISTS", "x") == 0, what="x to expire")
    assert run_tx(raw, ("PING",)) is None


def _stale_key(raw):
    """Sets x with a 1 ms TTL and waits past it without reading it."""
    raw.call("SET", "x", "foo", "PX", "1")
    time.sleep(0.02)


def test_watch_stale_key_does_not_fail_exec(raw):
    _stale_key(raw)
    raw.call("WATCH", "x")
    assert run_tx(raw, ("PING",)) == ["PONG"]


def test_delete_watched_stale_key_does_not_fail_exec(raw, raw_factory):
    other = raw_factory()
    _stale_key(raw)
    raw.call("WATCH", "x")
    assert other.call("DEL", "x") == 0
    assert run_tx(raw, ("PING",)) == ["PONG"]


def test_flushdb_with_watched_stale_key_does_not_fail_exec(raw, raw_factory):
    other = raw_factory()
    _stale_key(raw)
    raw.call("WATCH", "x")
    other.call("FLUSHDB")
    assert run_tx(raw, ("PING",)) == ["PONG"]


def test_watched_stale_key_then_set_fails_exec(raw, raw_factory):
    other = raw_factory()
    _stale_key(raw)
    raw.call("WATCH", "x")
    other.call("SET", "x", "new")
    assert run_tx(raw, ("PING",)) is None


@pytest.mark.parametrize("flush", ["FLUSHALL", "FLUSHDB"])
def test_flush_touches_watched_keys(raw, raw_factory, flush):
    other = raw_factory()
    raw.call("SET", "x", "30")
    raw.call("WATCH", "x")
    other.call(flush)
    assert run_tx(raw, ("PING",)) is None


@pytest.mark.parametrize("flush", ["FLUSHALL", "FLUSHDB"])
def test_flush_does_not_touch_missing_watched_keys(raw, raw_factory, flush):
    other = raw_factory()
    raw.call("WATCH", "x")
    other.call("SET", "y", "1")
    other.call(flush)
    assert run_tx(raw, ("PING",)) == ["PONG"]


def test_flushdb_of_other_db_does_not_touch(raw, raw_factory):
    other = raw_factory()
    raw.call("SET", "x", "30")
    raw.call("WATCH", "x")
    other.call("SELECT", "1")
    other.call("SET", "x", "1")
    other.call("FLUSHDB")
    assert run_tx(raw, ("PING",)) == ["PONG"]


def test_watch_remembers_the_db(raw, raw_factory):
    other = raw_factory()
    raw.call("SELECT", "1")
    raw.call("WATCH", "x")
    raw.call("SELECT", "0")
    other.call("SET", "x", "30")
    assert run_tx(raw, ("PING",)) == ["PONG"]
    raw.call("SELECT", "1")
    raw.call("WATCH", "x")
    raw.call("SELECT", "0")
    other.call("SELECT", "1")
    other.call("SET", "x", "31")
    assert run_tx(raw, ("PING",)) is None
    other.call("FLUSHDB")


def test_move_touches_watched_key_in_both_dbs(raw, raw_factory):
    other = raw_factory()
    raw.call("SET", "x", "v")
    raw.call("SELECT", "1")
    raw.call("WATCH", "x")  # missing in db 1: MOVE creates it there
    raw.call("SELECT", "0")
    assert other.call("MOVE", "x", "1") == 1
    assert run_tx(raw, ("PING",)) is None
    raw.call("WATCH", "x")  # db 0, missing now
    other.call("SELECT", "1")
    assert other.call("MOVE", "x", "0") == 1
    assert run_tx(raw, ("PING",)) is None
    other.call("FLUSHALL")


def test_copy_touches_watched_destination(raw, raw_factory):
    other = raw_factory()
    raw.call("SET", "src", "v")
    raw.call("WATCH", "dst")
    assert other.call("COPY", "src", "dst") == 1
    assert run_tx(raw, ("PING",)) is None
    raw.call("SELECT", "3")
    raw.call("WATCH", "dst")
    raw.call("SELECT", "0")
    assert other.call("COPY", "src", "dst", "DB", "3") == 1
    assert run_tx(raw, ("PING",)) is None
    raw.call("SELECT", "3")
    raw.call("FLUSHDB")
    raw.call("SELECT", "0")


def test_failed_write_does_not_touch(raw, raw_factory):
    # Commands that fail (WRONGTYPE, missing key) modify nothing, in every implementation.
    other = raw_factory()
    raw.call("SADD", "s", "a")
    raw.call("WATCH", "s", "missing")
    assert_err(other.call("INCR", "s"), WRONGTYPE)
    assert other.call("DEL", "missing") == 0
    assert_err_prefix(other.call("RENAME", "missing", "s"), "ERR no such key")
    assert run_tx(raw, ("PING",)) == ["PONG"]


# Writes that change nothing. Redis signals a modification only on a real change.
NO_OP_WRITES = [
    ("SADD", "s", "a"),
    ("SREM", "s", "zz"),
    ("SET", "str", "new", "NX"),
    ("SET", "missing", "v", "XX"),
    ("PERSIST", "str"),
    ("EXPIRE", "missing", "100"),
    ("HDEL", "h", "nosuch"),
    ("ZREM", "z", "nosuch"),
    ("SETNX", "str", "x"),
    ("MSETNX", "str", "x", "missing", "y"),
]


@pytest.mark.parametrize("cmd", NO_OP_WRITES, ids=lambda c: " ".join(c))
def test_no_op_write_does_not_touch(raw, raw_factory, cmd):
    other = raw_factory()
    raw.call("SADD", "s", "a")
    raw.call("SET", "str", "v")
    raw.call("HSET", "h", "f", "v")
    raw.call("ZADD", "z", "1", "m")
    raw.call("WATCH", "s", "str", "h", "z", "missing")
    reply = other.call(*cmd)
    assert not isinstance(reply, Error), reply
    assert run_tx(raw, ("PING",)) == ["PONG"]


# Multi-key writes whose keys may span shards and that leave a key they looked up for writing
# as it was: its watchers stay clean, as in Redis (which signals only real modifications).
# Each case runs over key pairs a, b of which some land on different shards at --threads 2;
# (setup, watched keys, command, dirtied).
def _cross_shard_cases(a, b):
    return [
        ([("SET", b, "v")], [a, b], ("MSETNX", a, "x", b, "y"), False),
        ([("SADD", a, "m"), ("SADD", b, "m")], [b], ("SMOVE", a, b, "m"), False),
        ([("SADD", a, "m"), ("SADD", b, "m")], [a], ("SMOVE", a, b, "m"), True),
        ([("SADD", a, "m")], [a, b], ("SMOVE", a, b, "x"), False),
        ([("SADD", a, "m"), ("SET", b, "s")], [a, b], ("SMOVE", a, b, "m"), False),
        ([("SET", a, "v"), ("SET", b, "w")], [a, b], ("RENAMENX", a, b), False),
        ([("SET", a, "v"), ("SET", b, "w")], [a, b], ("COPY", a, b), False),
        ([("SET", b, "w")], [a, b], ("COPY", a, b), False),
        ([("SET", b, "w")], [a, b], ("LMOVE", a, b, "LEFT", "RIGHT"), False),
        ([("RPUSH", a, "x"), ("SET", b, "w")], [a, b], ("LMOVE", a, b, "LEFT", "RIGHT"), False),
        ([("SADD", b, "m")], [a], ("SINTERSTORE", a, b, "nosuch"), False),
        ([("SADD", b, "m")], [a], ("SDIFFSTORE", a, b, b), False),
        ([], [a], ("SUNIONSTORE", a, b), False),
        ([("ZADD", b, "1", "m")], [a], ("ZINTERSTORE", a, "2", b, "nosuch"), False),
        ([], [a], ("ZUNIONSTORE", a, "1", b), False),
        ([("ZADD", b, "1", "m")], [a], ("ZDIFFSTORE", a, "2", b, b), False),
        ([], [a], ("ZRANGESTORE", a, b, "0", "-1"), False),
        ([("ZADD", b, "1", "m")], [a], ("ZRANGESTORE", a, b, "5", "6"), False),
        ([], [a], ("BITOP", "AND", a, b), False),
        ([("SET", b, "v")], [a], ("DEL", a, b), False),
        ([("SET", b, "v")], [b], ("DEL", a, b), True),
    ]


CROSS_SHARD_PAIRS = [("nop:a:%d" % i, "nop:b:%d" % i) for i in range(8)]


@pytest.mark.parametrize("case", range(len(_cross_shard_cases("a", "b"))),
                         ids=[" ".join(c[2][:2]) + "/%d" % i
                              for i, c in enumerate(_cross_shard_cases("a", "b"))])
def test_cross_shard_no_op_write_does_not_touch(server, r, case):
    for a, b in CROSS_SHARD_PAIRS:
        setup, watched, cmd, dirtied = _cross_shard_cases(a, b)[case]
        assert dirties(server, r, watched, cmd, setup) is dirtied, (a, b)
        r.flushall()
