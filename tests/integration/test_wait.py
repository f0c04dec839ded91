"""WAIT without replicas, as redis-server 7.0.15 answers it: 0 at once when no replica is asked
for or inside MULTI, else 0 when the timeout passes; the waiting client is blocked (INFO,
CLIENT LIST flag b) until then, CLIENT UNBLOCK or its disconnect."""

import threading
import time

import pytest

from helpers import assert_err, ERR_NOT_INT
from resp_client import encode


def wait_until(pred, timeout=5.0):
    end = time.time() + timeout
    while time.time() < end:
        if pred():
            return True
        time.sleep(0.01)
    return False


def blocked_clients(r):
    return int(r.info("clients")["blocked_clients"])


def test_no_replica_asked_for_answers_at_once(raw):
    assert raw.call("WAIT", "0", "0") == 0
    assert raw.call("WAIT", "-5", "0") == 0
    assert raw.call("WAIT", "0", "100000") == 0


def test_argument_errors(raw):
    assert_err(raw.call("WAIT", "a", "0"), ERR_NOT_INT)
    assert_err(raw.call("WAIT", "1", "x"), "ERR timeout is not an integer or out of range")
    assert_err(raw.call("WAIT", "1", "1.5"), "ERR timeout is not an integer or out of range")
    assert_err(raw.call("WAIT", "0", "-1"), "ERR timeout is negative")
    assert_err(raw.call("WAIT", "1"), "ERR wrong number of arguments for 'wait' command")


def test_timeout_answers_zero_after_it_passes(raw):
    start = time.monotonic()
    assert raw.call("WAIT", "1", "150") == 0
    assert time.monotonic() - start >= 0.14


def test_inside_multi_never_blocks(raw):
    assert raw.call("MULTI") == "OK"
    assert raw.call("WAIT", "3", "0") == "QUEUED"
    assert raw.call("EXEC") == [0]


def test_not_allowed_from_scripts(raw):
    reply = raw.call("EVAL", "return redis.call('wait', 0, 0)", "0")
    assert str(reply).startswith("ERR This Redis command is not allowed from script")


@pytest.mark.parametrize("how", ["timeout", "error"])
def test_client_unblock_ends_the_wait(r, raw_factory, how):
    waiter = raw_factory()
    wid = waiter.call("CLIENT", "ID")
    waiter.send(encode("WAIT", "2", "0"))
    assert wait_until(lambda: blocked_clients(r) == 1)
    entry = [c for c in r.client_list() if int(c["id"]) == wid][0]
    assert "b" in entry["flags"] and entry["cmd"] == "wait"
    assert r.execute_command("CLIENT", "UNBLOCK", wid, how.upper()) == 1
    reply = waiter.read()
    if how == "timeout":
        assert reply == 0
    else:
        assert_err(reply, "UNBLOCKED client unblocked via CLIENT UNBLOCK")
    assert blocked_clients(r) == 0
    assert waiter.call("PING") == "PONG"


def test_disconnect_while_waiting(r, raw_factory):
    waiters = [raw_factory() for _ in range(5)]
    for w in waiters:
        w.send(encode("WAIT", "1", "0"))
    assert wait_until(lambda: blocked_clients(r) == 5)
    for w in waiters:
        w.close()
    assert wait_until(lambda: blocked_clients(r) == 0)
    assert r.ping()


def test_many_concurrent_waits_time_out(r, server):
    results = []

    def one():
        c = server.raw()
        try:
            results.append(c.call("WAIT", "1", "50"))
        finally:
            c.close()

    threads = [threading.Thread(target=one) for _ in range(20)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [0] * 20
    assert blocked_clients(r) == 0
