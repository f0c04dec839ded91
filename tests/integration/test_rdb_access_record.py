"""The access record in RDB files: under an LRU policy (allkeys-lru, volatile-lru) each key is
preceded by RDB_OPCODE_IDLE (248, its idle seconds), under an LFU policy by RDB_OPCODE_FREQ
(249, its LFU counter), under the others by neither; loading applies them, as RESTORE's
IDLETIME / FREQ. Files go both ways between the server under test and redis-server 7.0.15, and
redis-check-rdb must accept them. Every expectation holds against redis-server
(DASHKV_TEST_TARGET=redis)."""

import shutil

import pytest

import persistence_helpers as ph
from conftest import Server

# Keys of every form the access record has (core/access_record.h): short, 13..17 bytes
# (record beside the value or lossy), long, and with an expiry.
KEYS = ["k", "key:abcdefghi", "key:abcdefghijkl", "key:" + "x" * 40]


def dump_path(srv):
    return srv.workdir / "dump.rdb"


def restore_all(c, **kw):
    """Restores each of KEYS (100-byte and 15-byte values, one with a TTL) with RESTORE's
    IDLETIME / FREQ `kw`."""
    c.set("src", "v" * 100)
    big = c.dump("src")
    c.set("src", "v" * 15)
    small = c.dump("src")
    c.delete("src")
    for i, k in enumerate(KEYS):
        c.restore(k, 0, big if i % 2 == 0 else small, replace=True, **kw)
    c.restore("ttl", 100000000, big, replace=True, **kw)
    return KEYS + ["ttl"]


def policy_args(kind, policy, decay=None):
    if kind == "redis":
        a = ["--maxmemory-policy", policy]
        return a + (["--lfu-decay-time", str(decay)] if decay is not None else [])
    a = ["--maxmemory_policy=" + policy]
    return a + (["--lfu_decay_time=%d" % decay] if decay is not None else [])


# The key of KEYS whose record dashkv keeps in the lossy 4-bit form (a 13-byte key with a
# 15-byte value): LRU in 512 s steps, LFU capped at 15 (core/access_record.h).
LOSSY = "key:abcdefghi"


def idle(c, k):
    return c.object("idletime", k)


def assert_idle(srv, c, k, want):
    slack = 10 + (512 if (not srv.is_redis and k == LOSSY) else 0)
    got = idle(c, k)
    assert want <= got <= want + slack, (k, want, got)


def want_freq(srv, k, freq):
    return min(freq, 15) if (not srv.is_redis and k == LOSSY) else freq


def test_lru_idle_survives_reload(server, server_factory):
    srv = server_factory(extra_args=policy_args(server.kind, "allkeys-lru"))
    c = ph.bclient(srv)
    keys = restore_all(c, idletime=1000)
    assert c.execute_command("DEBUG", "RELOAD") in (True, b"OK")
    for k in keys:
        assert_idle(srv, c, k, 1000)
    check = ph.check_rdb(dump_path(srv))
    assert check.rc == 0 and check.keys == len(keys), check.output[-2000:]


def test_volatile_lru_writes_idle_too(server, server_factory):
    srv = server_factory(extra_args=policy_args(server.kind, "volatile-lru"))
    c = ph.bclient(srv)
    keys = restore_all(c, idletime=5000)
    assert c.execute_command("DEBUG", "RELOAD") in (True, b"OK")
    for k in keys:
        assert_idle(srv, c, k, 5000)


def test_no_record_saved_without_lru_or_lfu_policy(server, server_factory):
    # noeviction tracks LRU (OBJECT IDLETIME answers) but does not save it: a reload starts the
    # keys afresh, as Redis's.
    srv = server_factory()
    c = ph.bclient(srv)
    keys = restore_all(c, idletime=1000)
    assert idle(c, "k") >= 1000
    assert c.execute_command("DEBUG", "RELOAD") in (True, b"OK")
    for k in keys:
        assert_idle(srv, c, k, 0)


def test_lfu_freq_survives_reload(server, server_factory):
    srv = server_factory(extra_args=policy_args(server.kind, "allkeys-lfu", decay=0))
    c = ph.bclient(srv)
    for freq in (0, 100, 255):
        keys = restore_all(c, frequency=freq)
        assert c.execute_command("DEBUG", "RELOAD") in (True, b"OK")
        for k in keys:
            got = c.object("freq", k)
            assert got == want_freq(srv, k, freq), (k, freq, got)
    check = ph.check_rdb(dump_path(srv))
    assert check.rc == 0 and check.keys == len(keys), check.output[-2000:]


def test_our_lru_file_loads_into_redis_with_idle(server, server_factory, tmp_path_factory):
    srv = server_factory(extra_args=policy_args(server.kind, "allkeys-lru"))
    c = ph.bclient(srv)
    keys = restore_all(c, idletime=2000)
    assert c.execute_command("SAVE") in (True, b"OK")
    peer = Server("redis", 1, tmp_path_factory.mktemp("peer"),
                  ["--dbfilename", "dump.rdb", "--maxmemory-policy", "allkeys-lru"])
    shutil.copyfile(dump_path(srv), peer.workdir / "dump.rdb")
    peer.start()
    try:
        pc = ph.bclient(peer)
        for k in keys:
            assert_idle(srv, pc, k, 2000)
        pc.close()
    finally:
        peer.stop()


def test_redis_lfu_file_loads_with_freq(server, server_factory, tmp_path_factory):
    peer = Server("redis", 1, tmp_path_factory.mktemp("peer"),
                  ["--maxmemory-policy", "allkeys-lfu", "--lfu-decay-time", "0"])
    peer.start()
    try:
        pc = ph.bclient(peer)
        keys = restore_all(pc, frequency=200)
        pc.restore("low", 0, pc.dump("k"), frequency=3)
        assert pc.execute_command("SAVE") in (True, b"OK")
        pc.close()
    finally:
        peer.stop()
    srv = server_factory(extra_args=policy_args(server.kind, "allkeys-lfu", decay=0),
                         start=False)
    shutil.copyfile(peer.workdir / "dump.rdb", dump_path(srv))
    c = ph.restart(srv)
    for k in keys:
        assert c.object("freq", k) == want_freq(srv, k, 200), k
    assert c.object("freq", "low") == 3


def test_redis_lru_file_loads_with_idle(server, server_factory, tmp_path_factory):
    peer = Server("redis", 1, tmp_path_factory.mktemp("peer"),
                  ["--maxmemory-policy", "allkeys-lru"])
    peer.start()
    try:
        pc = ph.bclient(peer)
        keys = restore_all(pc, idletime=3000)
        assert pc.execute_command("SAVE") in (True, b"OK")
        pc.close()
    finally:
        peer.stop()
    srv = server_factory(extra_args=policy_args(server.kind, "allkeys-lru"), start=False)
    shutil.copyfile(peer.workdir / "dump.rdb", dump_path(srv))
    c = ph.restart(srv)
    for k in keys:
        assert_idle(srv, c, k, 3000)
