"""CLIENT NO-TOUCH (Redis 7.2): a client in that mode leaves the access record (OBJECT IDLETIME
under LRU policies, OBJECT FREQ under LFU) of the keys it reads or writes as it was; TOUCH
still updates it. redis-server 7.0.15 has no CLIENT NO-TOUCH (it answers an error), so these
tests are dashkv_only."""

import pytest
import redis

from helpers import assert_err, keys_on_every_shard, keys_per_shard

pytestmark = pytest.mark.dashkv_only  # CLIENT NO-TOUCH is Redis 7.2's; 7.0.15 refuses it


@pytest.fixture
def policy(r):
    """Returns set_policy(name); the policy and lfu-log-factor are restored at teardown."""
    saved = {k: r.config_get(k)[k] for k in ("maxmemory-policy", "lfu-log-factor")}

    def set_policy(name):
        r.config_set("maxmemory-policy", name)

    yield set_policy
    for k, v in saved.items():
        r.config_set(k, v)


@pytest.fixture
def nt(server, r):
    """A second redis-py client with CLIENT NO-TOUCH on."""
    c = redis.Redis(host=server.host, port=server.port, decode_responses=True, socket_timeout=20)
    assert c.execute_command("CLIENT", "NO-TOUCH", "ON") == "OK"
    yield c
    c.close()


def flags(c):
    line = c.execute_command("CLIENT", "INFO")
    return dict(kv.split("=", 1) for kv in line.split())["flags"]


def restore_idle(r, key, value, idle):
    r.set("src", value)
    r.restore(key, 0, r.dump("src"), idletime=idle, replace=True)
    r.delete("src")


def test_flag_and_reset(r, server):
    c = redis.Redis(host=server.host, port=server.port, decode_responses=True)
    try:
        assert flags(c) == "N"
        assert c.execute_command("CLIENT", "NO-TOUCH", "on") == "OK"
        assert "T" in flags(c)
        assert c.execute_command("CLIENT", "NO-EVICT", "ON") == "OK"
        assert flags(c) == "eT"  # Redis's order
        my_id = c.client_id()
        listed = [ln for ln in c.execute_command("CLIENT", "LIST").splitlines()
                  if ("id=%d " % my_id) in ln]
        assert len(listed) == 1 and " flags=eT " in listed[0]
        assert c.execute_command("CLIENT", "NO-TOUCH", "OFF") == "OK"
        assert flags(c) == "e"
        c.execute_command("CLIENT", "NO-TOUCH", "ON")
        assert c.execute_command("RESET") == "RESET"
        assert flags(c) == "N"
    finally:
        c.close()


def test_errors(raw):
    assert_err(raw.call("CLIENT", "NO-TOUCH", "maybe"), "ERR syntax error")
    assert_err(raw.call("CLIENT", "NO-TOUCH"),
               "ERR wrong number of arguments for 'client|no-touch' command")


def test_lru_reads_and_writes_do_not_touch(r, nt, policy):
    policy("allkeys-lru")
    restore_idle(r, "s", "value", 1000)
    r.hset("h", "f", "v")
    r.restore("h", 0, r.dump("h"), idletime=1000, replace=True)
    hits = r.info("stats")["keyspace_hits"]
    assert nt.get("s") == "value"
    assert nt.mget("s") == ["value"]
    assert nt.strlen("s") == 5
    assert nt.hget("h", "f") == "v"
    assert nt.append("s", "!") == 6  # a write's lookup of an existing key
    assert nt.hset("h", "f", "w") == 0
    assert nt.eval("return redis.call('get', KEYS[1])", 1, "s") == "value!"
    p = nt.pipeline(transaction=True)
    p.get("s")
    p.hget("h", "f")
    assert p.execute() == ["value!", "w"]
    # Reads are still counted as hits.
    assert r.info("stats")["keyspace_hits"] >= hits + 7
    assert r.object("idletime", "s") >= 1000
    assert r.object("idletime", "h") >= 1000
    # TOUCH does update the record, NO-TOUCH or not.
    assert nt.touch("s") == 1
    assert r.object("idletime", "s") <= 2
    # Another client's read updates it; turning the mode off restores the usual behaviour.
    r.restore("h", 0, r.dump("h"), idletime=1000, replace=True)
    assert r.hget("h", "f") == "w"
    assert r.object("idletime", "h") <= 2
    r.restore("h", 0, r.dump("h"), idletime=1000, replace=True)
    nt.execute_command("CLIENT", "NO-TOUCH", "OFF")
    assert nt.hget("h", "f") == "w"
    assert r.object("idletime", "h") <= 2


def test_lfu_counter_unchanged(r, nt, policy):
    policy("allkeys-lfu")
    r.config_set("lfu-log-factor", 0)  # every counted access adds one
    r.set("k", "v")
    assert r.object("freq", "k") == 5
    for _ in range(10):
        assert nt.get("k") == "v"
    nt.incr("n")  # a new key starts at the initial counter whoever writes it
    assert nt.incr("n") == 2
    assert r.object("freq", "k") == 5
    assert r.object("freq", "n") == 5
    nt.touch("k")
    assert r.object("freq", "k") == 6
    for _ in range(4):
        r.get("k")
    assert r.object("freq", "k") == 10


def test_mode_is_per_client(r, nt, policy):
    # A no-touch client's commands leave no trace for the next command of another client run
    # on the same shard (the shard's flag is set around the command only).
    policy("allkeys-lru")
    restore_idle(r, "k", "v", 1000)
    p = nt.pipeline(transaction=False)
    for _ in range(20):
        p.get("k")
    p.execute()
    assert r.object("idletime", "k") >= 1000
    assert r.get("k") == "v"
    assert r.object("idletime", "k") <= 2


@pytest.fixture
def spread(server, r):
    """Two keys on each shard ([[shard 0's], [shard 1's], ...]), placed as the server says."""
    by_shard = keys_on_every_shard("nt", server.threads, per_shard=2)
    for keys in by_shard:
        for k in keys:
            r.set(k, "v")
    assert keys_per_shard(server) == {i: 2 for i in range(server.threads)}
    r.delete(*[k for keys in by_shard for k in keys])
    return by_shard


def test_commands_across_shards_do_not_touch(server, r, nt, policy, spread):
    # The keys of each command span every shard (one shard at --threads 1): the multi-shard
    # path runs each shard's part in a hop of its own, which must carry the mode too.
    policy("allkeys-lru")
    strings = [keys[0] for keys in spread]
    sets = [keys[1] for keys in spread]
    for k in strings:
        restore_idle(r, k, "value", 1000)
    for k in sets:
        r.sadd(k, "m")
        r.restore(k, 0, r.dump(k), idletime=1000, replace=True)
    every = strings + sets
    assert nt.mget(strings) == ["value"] * len(strings)
    assert nt.exists(*every) == len(every)
    assert nt.sunion(sets) == {"m"}
    assert nt.sinter(sets) == {"m"}
    assert nt.execute_command("LCS", strings[0], strings[-1]) == "value"
    assert nt.eval("return redis.call('mget', unpack(KEYS))", len(strings), *strings) == \
        ["value"] * len(strings)
    p = nt.pipeline(transaction=True)
    p.mget(strings)
    p.sunion(sets)
    assert p.execute() == [["value"] * len(strings), {"m"}]
    for k in every:
        assert r.object("idletime", k) >= 1000, k
    # TOUCH across shards still touches.
    assert nt.touch(*strings) == len(strings)
    for k in strings:
        assert r.object("idletime", k) <= 2, k
    # Another client's reads across shards do touch (what the first half checks is real).
    assert r.sunion(sets) == {"m"}
    for k in sets:
        assert r.object("idletime", k) <= 2, k


def test_lfu_counters_unchanged_across_shards(r, nt, policy, spread):
    policy("allkeys-lfu")
    r.config_set("lfu-log-factor", 0)  # every counted access adds one
    keys = [k for ks in spread for k in ks]
    for k in keys:
        r.set(k, "v")
    for _ in range(5):
        assert nt.mget(keys) == ["v"] * len(keys)
    for k in keys:
        assert r.object("freq", k) == 5, k
    nt.touch(*keys)
    for k in keys:
        assert r.object("freq", k) == 6, k
    r.mget(keys)
    for k in keys:
        assert r.object("freq", k) == 7, k


def test_mode_is_per_client_across_shards(r, nt, policy, spread):
    # A no-touch client's hops leave no trace for the next task another client runs on the
    # same shards.
    policy("allkeys-lru")
    keys = [k for ks in spread for k in ks]
    for k in keys:
        restore_idle(r, k, "v", 1000)
    for _ in range(5):
        nt.mget(keys)
    for k in keys:
        assert r.object("idletime", k) >= 1000, k
    r.mget(keys)
    for k in keys:
        assert r.object("idletime", k) <= 2, k
