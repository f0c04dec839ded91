"""CLIENT PAUSE / CLIENT UNPAUSE: which commands a WRITE or ALL pause holds back, how held
clients resume, and that keys neither expire nor get deleted while paused. Every test also runs
against redis-server 7.0 (DASHKV_TEST_TARGET=redis). Tests wait for INFO blocked_clients (held
clients count there, as in Redis), never for a fixed time."""
import time

import pytest
import redis

from helpers import assert_err, wait_until
from resp_client import Error, encode


def encode_all(cmds):
    return b"".join(encode(*c) for c in cmds)


def blocked_clients(r):
    return int(r.info("clients")["blocked_clients"])


def wait_blocked(r, n):
    wait_until(lambda: blocked_clients(r) == n, timeout=10, what="%d blocked clients" % n)


@pytest.fixture
def paused(r):
    """Unpauses at teardown whatever a test left paused."""
    yield r
    r.execute_command("CLIENT", "UNPAUSE")


def test_pause_errors(paused, raw):
    assert_err(raw.call("CLIENT", "PAUSE", "abc"),
               "ERR timeout is not an integer or out of range")
    assert_err(raw.call("CLIENT", "PAUSE", "-1"), "ERR timeout is negative")
    assert_err(raw.call("CLIENT", "PAUSE", "10", "foo"),
               "ERR CLIENT PAUSE mode must be WRITE or ALL")
    assert_err(raw.call("CLIENT", "PAUSE", "10", "write", "x"),
               "ERR unknown subcommand or wrong number of arguments for 'PAUSE'. "
               "Try CLIENT HELP.")
    assert_err(raw.call("CLIENT", "PAUSE"),
               "ERR wrong number of arguments for 'client|pause' command")
    assert_err(raw.call("CLIENT", "UNPAUSE", "x"),
               "ERR wrong number of arguments for 'client|unpause' command")
    # The mode is checked before the timeout, as Redis does.
    assert_err(raw.call("CLIENT", "PAUSE", "abc", "foo"),
               "ERR CLIENT PAUSE mode must be WRITE or ALL")
    assert paused.set("still", "writable")


def test_unpause_without_pause_is_ok(paused):
    assert paused.execute_command("CLIENT", "UNPAUSE") == "OK"


def test_reads_are_not_held_by_write_pause(paused, raw_factory):
    r = paused
    r.set("foo", "bar")
    assert r.execute_command("CLIENT", "PAUSE", "100000", "WRITE") == "OK"
    c = raw_factory()
    assert c.call("GET", "foo") == b"bar"
    assert c.call("PING") == "PONG"
    assert c.call("EXISTS", "foo") == 1
    assert c.call("EVAL_RO", "return 1", "0") == 1
    assert blocked_clients(r) == 0


@pytest.mark.parametrize("cmd", [
    ("SET", "foo", "bar"),
    ("DEL", "foo"),
    ("LPUSH", "l", "x"),
    ("PFCOUNT", "hll"),
    ("PUBLISH", "ch", "msg"),
    ("EVAL", "return 1", "0"),
])
def test_write_pause_holds_writes_and_may_replicate(paused, raw_factory, cmd):
    r = paused
    r.pfadd("hll", "a")
    r.execute_command("CLIENT", "PAUSE", "100000", "WRITE")
    c = raw_factory()
    c.send(encode_all([cmd]))
    wait_blocked(r, 1)
    c.expect_no_reply()
    assert r.execute_command("CLIENT", "UNPAUSE") == "OK"
    reply = c.read()
    assert not isinstance(reply, Error), reply
    wait_blocked(r, 0)


def test_held_write_runs_after_unpause(paused, raw_factory):
    r = paused
    r.execute_command("CLIENT", "PAUSE", "100000", "WRITE")
    c = raw_factory()
    c.send(encode_all([("SET", "foo", "bar"), ("GET", "foo")]))
    wait_blocked(r, 1)
    assert r.get("foo") is None  # the write waits, reads from others go on
    r.execute_command("CLIENT", "UNPAUSE")
    assert c.read() == "OK"
    assert c.read() == b"bar"


def test_pipeline_after_pause_command_is_held(paused, raw_factory):
    r = paused
    c = raw_factory()
    c.send(encode_all([("CLIENT", "PAUSE", "100000", "WRITE"), ("GET", "k"), ("SET", "k", "v")]))
    assert c.read() == "OK"
    assert c.read() is None
    wait_blocked(r, 1)
    assert r.get("k") is None
    r.execute_command("CLIENT", "UNPAUSE")
    assert c.read() == "OK"
    assert r.get("k") == "v"


def test_many_clients_held_and_released_together(paused, raw_factory):
    r = paused
    r.execute_command("CLIENT", "PAUSE", "100000", "WRITE")
    clients = [raw_factory() for _ in range(6)]
    for i, c in enumerate(clients):
        c.send(encode_all([("INCR", "counter")]))
    wait_blocked(r, 6)
    r.execute_command("CLIENT", "UNPAUSE")
    assert sorted(c.read() for c in clients) == [1, 2, 3, 4, 5, 6]
    assert r.get("counter") == "6"


def test_pause_ends_by_itself(paused, raw_factory):
    r = paused
    r.execute_command("CLIENT", "PAUSE", "300", "WRITE")
    c = raw_factory()
    start = time.monotonic()
    assert c.call("SET", "foo", "bar") == "OK"
    # Held until the pause ended (the lower bound is the only time this test reads).
    assert time.monotonic() - start >= 0.2
    assert blocked_clients(r) == 0


def test_all_pause_holds_reads_until_its_end(paused, raw_factory):
    r = paused
    c = raw_factory()
    r.execute_command("CLIENT", "PAUSE", "500", "ALL")
    start = time.monotonic()
    assert c.call("GET", "foo") is None
    assert time.monotonic() - start >= 0.3


def test_stronger_and_later_pause_wins(paused, raw_factory):
    r = paused
    # ALL for a while, then a shorter WRITE in the same EXEC: reads stay held, since the
    # stronger kind and the later end are kept.
    replies = raw_factory().pipeline([("MULTI",), ("CLIENT", "PAUSE", "600", "ALL"),
                                      ("CLIENT", "PAUSE", "10", "WRITE"), ("EXEC",)])
    assert replies[-1] == ["OK", "OK"]
    c = raw_factory()
    start = time.monotonic()
    assert c.call("GET", "foo") is None
    assert time.monotonic() - start >= 0.4


def test_shorter_pause_keeps_the_longer_end(paused, raw_factory):
    r = paused
    r.execute_command("CLIENT", "PAUSE", "100000", "WRITE")
    r.execute_command("CLIENT", "PAUSE", "10", "WRITE")
    c = raw_factory()
    c.send(encode_all([("SET", "foo", "bar")]))
    wait_blocked(r, 1)
    r.execute_command("CLIENT", "UNPAUSE")
    assert c.read() == "OK"


def test_write_queued_in_multi_is_held(paused, raw_factory):
    # Redis 7.0 holds a write command even when MULTI would only queue it.
    r = paused
    r.execute_command("CLIENT", "PAUSE", "100000", "WRITE")
    c = raw_factory()
    assert c.call("MULTI") == "OK"
    assert c.call("PING") == "QUEUED"
    c.send(encode_all([("SET", "foo", "bar"), ("EXEC",)]))
    wait_blocked(r, 1)
    r.execute_command("CLIENT", "UNPAUSE")
    assert c.read() == "QUEUED"
    assert c.read() == ["PONG", "OK"]


def test_exec_of_queued_write_is_held(paused, raw_factory):
    r = paused
    c = raw_factory()
    assert c.call("MULTI") == "OK"
    assert c.call("SET", "foo", "bar") == "QUEUED"
    r.execute_command("CLIENT", "PAUSE", "100000", "WRITE")
    c.send(encode_all([("EXEC",)]))
    wait_blocked(r, 1)
    assert r.get("foo") is None
    r.execute_command("CLIENT", "UNPAUSE")
    assert c.read() == ["OK"]


def test_read_only_exec_is_not_held(paused, raw_factory):
    r = paused
    r.set("foo", "bar")
    r.execute_command("CLIENT", "PAUSE", "100000", "WRITE")
    c = raw_factory()
    assert c.call("MULTI") == "OK"
    assert c.call("PING") == "QUEUED"
    assert c.call("GET", "foo") == "QUEUED"
    assert c.call("EXEC") == ["PONG", b"bar"]
    assert blocked_clients(r) == 0


def test_pause_inside_multi_starts_after_exec(paused, raw_factory):
    r = paused
    c = raw_factory()
    replies = c.pipeline([("MULTI",), ("SET", "foo1", "bar1"),
                          ("CLIENT", "PAUSE", "100000", "WRITE"), ("SET", "foo2", "bar2"),
                          ("EXEC",)])
    assert replies[-1] == ["OK", "OK", "OK"]
    assert r.mget("foo1", "foo2") == ["bar1", "bar2"]
    c.send(encode_all([("SET", "foo3", "bar3")]))
    wait_blocked(r, 1)
    r.execute_command("CLIENT", "UNPAUSE")
    assert c.read() == "OK"


def test_syntax_errors_reply_at_once(paused, raw_factory):
    r = paused
    r.execute_command("CLIENT", "PAUSE", "100000", "WRITE")
    c = raw_factory()
    reply = c.call("SET", "foo")
    assert isinstance(reply, Error)
    assert "wrong number of arguments" in reply
    assert isinstance(c.call("NOSUCHCOMMAND"), Error)


def test_keys_do_not_expire_while_paused(paused):
    r = paused
    expired_before = int(r.info("stats")["expired_keys"])
    r.set("foo", "bar", px=50)
    r.set("baz", "qux", px=50)
    r.execute_command("CLIENT", "PAUSE", "100000", "WRITE")
    # They read as missing once their time is up...
    wait_until(lambda: r.get("foo") is None and r.get("baz") is None, what="keys read expired")
    time.sleep(0.3)  # active expiry cycles run meanwhile
    # ...but are not deleted: nothing counts as expired.
    assert int(r.info("stats")["expired_keys"]) == expired_before
    r.execute_command("CLIENT", "UNPAUSE")
    assert r.get("foo") is None
    assert r.get("baz") is None
    assert int(r.info("stats")["expired_keys"]) == expired_before + 2


def test_killed_client_held_by_pause_does_not_write(paused, raw_factory):
    r = paused
    r.execute_command("CLIENT", "PAUSE", "100000", "WRITE")
    c = raw_factory()
    cid = c.call("CLIENT", "ID")
    c.send(encode_all([("SET", "victim", "1")]))
    wait_blocked(r, 1)
    assert r.execute_command("CLIENT", "KILL", "ID", cid) == 1
    r.execute_command("CLIENT", "UNPAUSE")
    wait_blocked(r, 0)
    assert r.get("victim") is None


def test_client_pause_is_refused_in_scripts(r):
    with pytest.raises(redis.ResponseError, match="not allowed from script"):
        r.eval("return redis.call('client', 'pause', '10')", 0)


def test_no_writes_scripts_are_not_held(paused, raw_factory):
    r = paused
    body = "#!lua flags=no-writes\nreturn redis.call('get', 'foo')"
    sha = r.script_load(body)
    r.execute_command("FUNCTION", "LOAD", "REPLACE",
                      "#!lua name=pauselib\n"
                      "redis.register_function{function_name='ro', "
                      "callback=function() return 1 end, flags={'no-writes'}}")
    r.set("foo", "bar")
    r.execute_command("CLIENT", "PAUSE", "100000", "WRITE")
    c = raw_factory()
    assert c.call("EVAL", body, "0") == b"bar"
    assert c.call("EVALSHA", sha, "0") == b"bar"
    assert c.call("FCALL", "ro", "0") == 1
    assert blocked_clients(r) == 0
    # A script with a shebang but no `no-writes` is held.
    c.send(encode_all([("EVAL", "#!lua\nreturn 1", "0")]))
    wait_blocked(r, 1)
    r.execute_command("CLIENT", "UNPAUSE")
    assert c.read() == 1
    r.execute_command("FUNCTION", "DELETE", "pauselib")
