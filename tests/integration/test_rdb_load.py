"""Loading a snapshot as Redis 7.0 loads one: quietly (DEBUG RELOAD raises no keyspace event,
touches only the WATCHed keys its flush removes, serves no blocked client, counts no change
since the last save) and stoppable (SIGTERM/SIGINT during the load at start exits at once with
status 0, saving nothing).

Every expectation was checked against redis-server 7.0.15 (DASHKV_TEST_TARGET=redis). Each test
starts its own servers (server_factory), parametrized over the thread counts like the suite.
"""

import hashlib
import shutil
import signal
import threading
import time

import pytest
import redis

import persistence_helpers as ph
from conftest import _free_port
from helpers import active_expiry_off, wait_until


def start(server_factory, server, **kw):
    srv = server_factory(extra_args=ph.persistence_args(server.kind, **kw))
    return srv, redis.Redis(host=srv.host, port=srv.port, decode_responses=True,
                            socket_timeout=60)


def reload(c, *options):
    assert c.execute_command("DEBUG", "RELOAD", *options) in (True, "OK")


def drain(p, quiet=0.3, timeout=10.0):
    """Every (channel, data) pmessage until none arrives for `quiet` seconds."""
    out = []
    deadline = time.monotonic() + timeout
    last = time.monotonic()
    while time.monotonic() < deadline and time.monotonic() - last < quiet:
        m = p.get_message(timeout=0.05)
        if m is not None and m["type"] == "pmessage":
            out.append((m["channel"], m["data"]))
            last = time.monotonic()
    return out


def subscribed(c):
    """A pubsub on every keyspace and keyevent channel, its subscriptions confirmed."""
    p = c.pubsub()
    p.psubscribe("__keyspace@*__:*", "__keyevent@*__:*")
    for _ in range(2):
        m = p.get_message(timeout=5)
        assert m is not None and m["type"] == "psubscribe"
    return p


def populate_types(c):
    c.set("s", "v")
    c.set("n", "12345")
    c.set("ttl", "v", px=600000)
    c.rpush("l", "a", "b")
    c.hset("h", mapping={"f": "1", "g": "2"})
    c.sadd("set", "x", "y")
    c.sadd("iset", 1, 2, 3)
    c.zadd("z", {"m": 1.5})
    c.execute_command("SELECT", "3")
    c.set("in3", "v")
    c.execute_command("SELECT", "0")


# ---- quiet: keyspace events -------------------------------------------------------------------

@pytest.mark.needs_lists
def test_debug_reload_raises_no_keyspace_event(server, server_factory):
    srv, c = start(server_factory, server)
    populate_types(c)
    c.config_set("notify-keyspace-events", "KEAn")  # A leaves `new` out
    p = subscribed(c)
    try:
        reload(c)
        assert drain(p) == []
        # NOSAVE NOFLUSH MERGE: every key of the file replaces a key held (Redis deletes and
        # adds without an event).
        reload(c, "NOSAVE", "NOFLUSH", "MERGE")
        assert drain(p) == []
        assert c.dbsize() == 8 and c.lrange("l", 0, -1) == ["a", "b"]
        # The subscription works: a command's change is heard.
        c.set("after", "1")
        assert drain(p) == [("__keyspace@0__:after", "new"), ("__keyevent@0__:new", "after"),
                            ("__keyspace@0__:after", "set"), ("__keyevent@0__:set", "after")]
    finally:
        p.close()


def test_merge_over_an_expired_key_is_silent(server, server_factory):
    """A key whose deadline passed, still in memory, is replaced by the file's: no `expired`
    event, not counted as expired (Redis deletes it as a duplicate, not as an expiry)."""
    srv, c = start(server_factory, server)
    c.set("k", "file")
    assert c.save()
    c.flushall()
    with active_expiry_off(c):
        c.set("k", "mem", px=30)
        time.sleep(0.1)  # the deadline must pass; active expiry is off, so the key stays
        c.config_set("notify-keyspace-events", "KEAn")
        p = subscribed(c)
        try:
            reload(c, "NOSAVE", "NOFLUSH", "MERGE")
            assert drain(p) == []
        finally:
            p.close()
        assert c.get("k") == "file" and c.ttl("k") == -1
        assert c.info("stats")["expired_keys"] == 0


# ---- quiet: WATCH, blocked clients, changes since the last save --------------------------------

def exec_after_reload(srv, c, setup, options):
    """Runs `setup`, WATCHes "k" on a second connection, DEBUG RELOAD with `options`, then
    MULTI/PING/EXEC there; returns whether EXEC ran."""
    c.flushall()
    setup(c)
    w = redis.Redis(host=srv.host, port=srv.port, decode_responses=True, socket_timeout=60)
    try:
        pipe = w.pipeline()
        pipe.watch("k")
        reload(c, *options)
        pipe.multi()
        pipe.ping()
        try:
            return pipe.execute() == [True]
        except redis.WatchError:
            return False
    finally:
        w.close()


def _held(c):
    c.set("k", "v")


def _in_file_only(c):
    c.set("k", "v")
    assert c.save()
    c.delete("k")


def _held_and_in_file(c):
    c.set("k", "v")
    assert c.save()
    c.set("k", "v2")


def _held_not_in_file(c):
    assert c.save()
    c.set("k", "v")


@pytest.mark.parametrize("setup,options,runs", [
    (_held, (), False),                                    # the flush removes it
    (_held_not_in_file, ("NOSAVE",), False),               # the flush removes it
    (_in_file_only, ("NOSAVE",), True),                    # loaded: no touch
    (_in_file_only, ("NOSAVE", "NOFLUSH", "MERGE"), True),
    (_held_and_in_file, ("NOSAVE", "NOFLUSH", "MERGE"), True),  # replaced by the load: no touch
    (lambda c: c.set("other", "1"), (), True),             # neither held nor loaded
], ids=["held", "held-not-in-file", "loaded", "loaded-merge", "replaced-merge", "absent"])
def test_watch_across_debug_reload(server, server_factory, setup, options, runs):
    srv, c = start(server_factory, server)
    assert exec_after_reload(srv, c, setup, options) == runs


@pytest.mark.needs_lists
def test_a_loaded_list_does_not_serve_a_blocked_client(server, server_factory):
    srv, c = start(server_factory, server)
    c.rpush("l", "x")
    assert c.save()
    c.delete("l")
    got = {}

    def pop():
        b = redis.Redis(host=srv.host, port=srv.port, decode_responses=True, socket_timeout=60)
        got["reply"] = b.blpop("l", timeout=2)
        b.close()

    t = threading.Thread(target=pop)
    t.start()
    wait_until(lambda: c.info("clients")["blocked_clients"] == 1, what="BLPOP blocks")
    reload(c, "NOSAVE")
    t.join()
    # The load is no push: the client times out, the list stays.
    assert got["reply"] is None and c.llen("l") == 1


def test_reload_nosave_keeps_the_changes_count(server, server_factory):
    srv, c = start(server_factory, server)
    c.set("a", "1")
    c.set("b", "1")
    assert c.save()
    c.set("c", "1")
    assert c.info("persistence")["rdb_changes_since_last_save"] == 1
    reload(c, "NOSAVE")
    assert c.info("persistence")["rdb_changes_since_last_save"] == 1
    c.set("d", "1")
    reload(c, "NOSAVE", "NOFLUSH", "MERGE")
    assert c.info("persistence")["rdb_changes_since_last_save"] == 2
    reload(c)  # saves first
    assert c.info("persistence")["rdb_changes_since_last_save"] == 0


# ---- stoppable: SIGTERM / SIGINT during the load at start --------------------------------------

BIG_KEYS = 8_000_000


def write_big_rdb(path, keys=BIG_KEYS):
    """Writes an RDB v10 file of `keys` strings key:<i> -> 16 bytes, checksum disabled (a CRC
    of 0: both servers then skip the check), faster than DEBUG POPULATE + SAVE would."""
    value = b"\x10" + b"v" * 16
    with open(path, "wb") as f:
        f.write(b"REDIS0010\xfe\x00\xfb\x80" + keys.to_bytes(4, "big") + b"\x00")
        step = 100_000
        for lo in range(0, keys, step):
            parts = []
            for i in range(lo, min(keys, lo + step)):
                k = b"key:%d" % i
                parts.append(b"\x00%c%s%s" % (len(k), k, value))
            f.write(b"".join(parts))
        f.write(b"\xff" + b"\x00" * 8)


@pytest.fixture(scope="session")
def big_rdb(tmp_path_factory):
    path = tmp_path_factory.mktemp("big-rdb") / "dump.rdb"
    write_big_rdb(path)
    return path


def digest(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def wait_loading(srv, timeout=60.0):
    """Polls PING until the server answers -LOADING (returns True); False if it answers PONG
    first (the load ended before the test could see it)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert srv.proc.poll() is None, ph.server_log(srv)[-3000:]
        try:
            c = srv.raw(timeout=5)
        except OSError:
            time.sleep(0.005)
            continue
        try:
            reply = c.call("PING")
        finally:
            c.close()
        if reply == "PONG":
            return False
        if reply.startswith("LOADING"):
            return True
    pytest.fail("the server never answered -LOADING")


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_signal_during_the_load_at_start_exits_without_saving(server, server_factory, big_rdb,
                                                               sig):
    # A schedule: a signal after the load would save. During it, nothing is saved.
    srv = server_factory(extra_args=ph.persistence_args(server.kind, save="3600 1"),
                         start=False)
    dump = srv.workdir / "dump.rdb"
    # On a busy machine the first PING may come only after the load ended: then the server is
    # killed (no save) and started again, a few times at most.
    for _attempt in range(4):
        shutil.copyfile(big_rdb, dump)
        before = digest(dump)
        log_start = len(ph.server_log(srv))
        srv.spawn(_free_port())
        if wait_loading(srv):
            break
        srv.proc.kill()
        srv.proc.wait(timeout=30)
    else:
        pytest.fail("every load ended before the test saw -LOADING: make the file larger")
    sent = time.monotonic()
    srv.proc.send_signal(sig)
    rc = srv.proc.wait(timeout=30)
    took = time.monotonic() - sent
    log = ph.server_log(srv)[log_start:]
    assert rc == 0, log[-3000:]
    assert "Received shutdown signal during loading" in log, log[-3000:]
    assert "Done loading RDB" not in log, log[-3000:]
    # Loading all 8M keys takes seconds; stopping takes a fraction of that.
    assert took < 5.0, took
    assert digest(dump) == before
    assert sorted(p.name for p in srv.workdir.iterdir() if p.name.endswith(".rdb")) == \
        ["dump.rdb"]
