"""Small shared helpers for the integration tests."""

import contextlib
import os
import socket
import threading
import time
import urllib.request

import redis

from resp_client import Error, Map
from shard_hash import shard_of


# True when the suite runs against dashkv (not redis-server). Used only where dashkv documents a
# deliberate difference from Redis (see README "Differences from Redis").
IS_DASHKV = os.environ.get("DASHKV_TEST_TARGET", "dashkv").lower() == "dashkv"


def wait_until(pred, timeout=5.0, interval=0.01, what="condition"):
    """Polls pred() until it returns a truthy value, which is returned; raises
    AssertionError after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        v = pred()
        if v:
            return v
        if time.monotonic() > deadline:
            raise AssertionError("timed out after %.1fs waiting for %s" % (timeout, what))
        time.sleep(interval)


@contextlib.contextmanager
def active_expiry_off(c):
    """Turns the server's active expiry cycle off (DEBUG SET-ACTIVE-EXPIRE 0) for the block, so
    that expired keys stay until accessed; `c` is a RawClient or redis-py client. The server
    is shared by the session: the cycle is turned back on however the block ends."""
    call = c.call if hasattr(c, "call") else c.execute_command
    assert call("DEBUG", "SET-ACTIVE-EXPIRE", "0") == "OK"
    try:
        yield
    finally:
        call("DEBUG", "SET-ACTIVE-EXPIRE", "1")


def dirties(server, r, watch, cmd, setup=(), watch_db=0, run=None):
    """Returns whether a write aborts a transaction that WATCHes the keys `watch` (a list) in
    database `watch_db`: runs the commands `setup` on redis-py client `r`, WATCHes on a fresh
    connection, has `r` run `cmd` (an error reply counts as run) or, when given, calls `run()`
    to make the write instead, then EXECs."""
    for c in setup:
        r.execute_command(*c)
    w = redis.Redis(host=server.host, port=server.port, db=watch_db, decode_responses=True,
                    socket_timeout=20)
    try:
        with w.pipeline() as p:
            p.watch(*watch)
            if run is not None:
                run()
            else:
                try:
                    r.execute_command(*cmd)
                except redis.ResponseError:
                    pass
            p.multi()
            p.ping()
            try:
                p.execute()
                return False
            except redis.WatchError:
                return True
    finally:
        w.close()


def assert_err(reply, text):
    """Asserts `reply` (from RawClient) is an error with exactly `text`
    (full text without the leading '-', e.g. 'ERR syntax error')."""
    assert isinstance(reply, Error), "expected error %r, got %r" % (text, reply)
    assert reply == text


def assert_err_prefix(reply, prefix):
    """Asserts `reply` is an error starting with `prefix`."""
    assert isinstance(reply, Error), "expected error %r..., got %r" % (prefix, reply)
    assert reply.startswith(prefix), reply


ERR_SYNTAX = "ERR syntax error"
ERR_NOT_INT = "ERR value is not an integer or out of range"
ERR_NOT_FLOAT = "ERR value is not a valid float"
WRONGTYPE = "WRONGTYPE Operation against a key holding the wrong kind of value"


def arity(cmd):
    """The wrong-arity error text for `cmd` (lower-case as Redis prints it)."""
    return "ERR wrong number of arguments for '%s' command" % cmd.lower()


def chi_square_critical(dof):
    """The value a chi-square variable with `dof` degrees of freedom exceeds with probability
    below 1e-9 (Wilson-Hilferty approximation with z = 6, checked against the exact tail:
    3e-10..8e-10 for 9..99 dof): a fair draw fails a check against it once in a billion runs."""
    t = 1.0 - 2.0 / (9.0 * dof) + 6.0 * (2.0 / (9.0 * dof)) ** 0.5
    return dof * t ** 3


def assert_uniform(samples, population, what):
    """Asserts `samples` (draws from `population`, a collection of distinct values) look uniform:
    Pearson's chi-square statistic stays below chi_square_critical(len(population) - 1). For
    draws without replacement (several distinct members per reply) the statistic is smaller
    than a chi-square variable, so the check only gets stricter on the fair side."""
    population = list(population)
    counts = dict.fromkeys(population, 0)
    for s in samples:
        assert s in counts, "%s: %r is not in the population" % (what, s)
        counts[s] += 1
    expected = len(samples) / len(population)
    stat = sum((c - expected) ** 2 / expected for c in counts.values())
    crit = chi_square_critical(len(population) - 1)
    assert stat < crit, "%s: chi-square %.1f >= %.1f (%d dof, p < 1e-9); counts %s" % (
        what, stat, crit, len(population) - 1, sorted(counts.values()))


def dec(x):
    """A raw reply with its bulk strings decoded (errors, maps and nesting kept)."""
    if isinstance(x, Error) or x is None or isinstance(x, (int, str)):
        return x
    if isinstance(x, bytes):
        return x.decode(errors="surrogateescape")
    if isinstance(x, Map):
        return Map((dec(k), dec(v)) for k, v in x)
    return [dec(i) for i in x]


class Decoded:
    """A RawClient whose replies come back decoded (see dec)."""

    def __init__(self, client):
        self.client = client

    def call(self, *args):
        return dec(self.client.call(*args))

    def close(self):
        self.client.close()


def non_loopback_ipv4():
    """This machine's IPv4 address on its default route, or None."""
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        s.connect(("198.51.100.1", 9))  # no packet is sent: this only picks the route
        ip = s.getsockname()[0]
    except OSError:
        return None
    finally:
        s.close()
    return None if ip.startswith("127.") or ip == "0.0.0.0" else ip


def keys_on_every_shard(prefix, shards, per_shard=1):
    """`per_shard` keys prefix0, prefix1, ... owned by each of the `shards` shards, shard 0's
    first: [[keys of shard 0], [keys of shard 1], ...]."""
    out = [[] for _ in range(shards)]
    i = 0
    while any(len(keys) < per_shard for keys in out):
        key = "%s%d" % (prefix, i)
        keys = out[shard_of(key, shards)]
        if len(keys) < per_shard:
            keys.append(key)
        i += 1
    return out


def keys_per_shard(server):
    """{thread: keys its shard holds} from the server's /metrics (dashkv_shard_keys)."""
    url = "http://%s:%d/metrics" % (server.host, server.port)
    with urllib.request.urlopen(url, timeout=20) as resp:
        text = resp.read().decode()
    out = {}
    for line in text.splitlines():
        if line.startswith("dashkv_shard_keys{"):
            labels, value = line.rsplit(" ", 1)
            thread = int(labels.split('thread="', 1)[1].split('"', 1)[0])
            out[thread] = int(float(value))
    return out


def run_threads(targets):
    """Runs each callable on its own thread, waits for all (a worker still running after 300 s
    fails the test) and re-raises the first exception a worker raised."""
    errors = []

    def wrap(fn):
        def run():
            try:
                fn()
            except Exception as e:  # re-raised below, once every worker has ended
                errors.append(e)
        return run

    threads = [threading.Thread(target=wrap(t)) for t in targets]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
        assert not t.is_alive(), "a worker hung"
    if errors:
        raise errors[0]
