"""Cache mode: maxmemory eviction policies, the access record behind OBJECT IDLETIME / FREQ,
and their settings. Every limit is set a few MB above the server's own baseline (used_memory
right after FLUSHALL), so the tests work at any thread count and against redis-server."""

import os
import re
import shutil
import subprocess
import time
import urllib.request

import pytest
import redis

import persistence_helpers as ph
from helpers import assert_err, keys_on_every_shard, wait_until

# redis-py drops the "OOM" prefix of the error (its class says it).
OOM = "command not allowed when used memory > 'maxmemory'."
VALUE = "v" * 1000  # values large enough that their memory dominates a key's cost
ROOM_MB = 4


def info(r, section, field):
    return int(r.info(section)[field])


@pytest.fixture
def limited(r):
    """Returns set_limit(policy, room_mb=ROOM_MB): maxmemory = used_memory + room; the
    settings are restored at teardown."""
    saved = {k: r.config_get(k)[k] for k in ("maxmemory", "maxmemory-policy",
                                              "maxmemory-samples", "lfu-log-factor",
                                              "lfu-decay-time", "notify-keyspace-events")}

    def set_limit(policy, room_mb=ROOM_MB):
        r.config_resetstat()
        r.config_set("maxmemory-policy", policy)
        limit = info(r, "memory", "used_memory") + room_mb * 1024 * 1024
        r.config_set("maxmemory", limit)
        return limit

    yield set_limit
    r.config_set("maxmemory", 0)
    for k, v in saved.items():
        r.config_set(k, v)
    r.flushall()


def write_keys(r, prefix, n, ttl=None, start=0, batch=100):
    """Writes n keys prefix0..; returns the number refused with -OOM."""
    refused = 0
    for b in range(start, start + n, batch):
        p = r.pipeline(transaction=False)
        for i in range(b, min(b + batch, start + n)):
            if ttl is None:
                p.set("%s%d" % (prefix, i), VALUE)
            else:
                p.set("%s%d" % (prefix, i), VALUE, ex=ttl)
        for res in p.execute(raise_on_error=False):
            if isinstance(res, redis.ResponseError):
                assert isinstance(res, redis.exceptions.OutOfMemoryError) and str(res) == OOM
                refused += 1
    return refused


def existing(r, keys):
    p = r.pipeline(transaction=False)
    for k in keys:
        p.exists(k)
    return [k for k, e in zip(keys, p.execute()) if e]


def keys_to_fill(room_mb=ROOM_MB):
    return room_mb * 1024 * 1024 // len(VALUE)


class TestSettings:
    def test_defaults(self, r):
        assert r.config_get("maxmemory-samples") == {"maxmemory-samples": "5"}
        assert r.config_get("maxmemory-eviction-tenacity") == {
            "maxmemory-eviction-tenacity": "10"}
        assert r.config_get("lfu-log-factor") == {"lfu-log-factor": "10"}
        assert r.config_get("lfu-decay-time") == {"lfu-decay-time": "1"}

    def test_set_and_bad_values(self, r, raw, limited):
        r.config_set("maxmemory-samples", 10)
        assert r.config_get("maxmemory-samples") == {"maxmemory-samples": "10"}
        r.config_set("lfu-decay-time", 0)
        assert r.config_get("lfu-decay-time") == {"lfu-decay-time": "0"}
        r.config_set("maxmemory-eviction-tenacity", 100)
        r.config_set("maxmemory-eviction-tenacity", 10)
        for name, bad, why in (
                ("maxmemory-samples", "0", "argument must be between 1 and 2147483647 inclusive"),
                ("maxmemory-eviction-tenacity", "101",
                 "argument must be between 0 and 100 inclusive"),
                ("lfu-log-factor", "-1", "argument must be between 0 and 2147483647 inclusive"),
                ("lfu-decay-time", "x", "argument couldn't be parsed into an integer")):
            assert_err(raw.call("CONFIG", "SET", name, bad),
                       "ERR CONFIG SET failed (possibly related to argument '%s') - %s"
                       % (name, why))
        assert_err(raw.call("CONFIG", "SET", "maxmemory-policy", "lru"),
                   "ERR CONFIG SET failed (possibly related to argument 'maxmemory-policy') - "
                   "argument(s) must be one of the following: volatile-lru, volatile-lfu, "
                   "volatile-random, volatile-ttl, allkeys-lru, allkeys-lfu, allkeys-random, "
                   "noeviction")

    def test_info_fields(self, r, limited):
        limit = limited("allkeys-lru")
        mem = r.info("memory")
        assert mem["maxmemory"] == limit
        assert mem["maxmemory_policy"] == "allkeys-lru"
        assert "maxmemory_human" in mem
        stats = r.info("stats")
        for f in ("evicted_keys", "keyspace_hits", "keyspace_misses"):
            assert isinstance(stats[f], int)


def exceeded(r):
    """(total_eviction_exceeded_time, current_eviction_exceeded_time) of INFO stats, in ms."""
    s = r.info("stats")
    return s["total_eviction_exceeded_time"], s["current_eviction_exceeded_time"]


def wait_exceeded(r, ms):
    """Polls INFO until the running stretch over maxmemory has lasted `ms`; returns
    exceeded(r) then."""
    return wait_until(lambda: (lambda t: t if t[1] >= ms else None)(exceeded(r)),
                      what="a stretch over maxmemory of %d ms" % ms)


def test_after_flushall_no_shard_admits_a_write_on_evictable_keys_gone(server, r, limited):
    # Every shard held keys an allkeys policy could evict; FLUSHALL takes them all, so a write
    # over the limit with nothing evictable anywhere is refused on every shard at once (not
    # only after each shard's next cron has published its empty count).
    shards = max(server.threads, 1)
    by_shard = keys_on_every_shard("fa", shards, per_shard=50)
    r.config_set("maxmemory-policy", "allkeys-random")
    r.mset({k: "v" * 100 for keys in by_shard for k in keys})
    r.flushall()
    limited("volatile-lru")
    r.config_set("maxmemory", 1)
    for keys in by_shard:
        with pytest.raises(redis.exceptions.OutOfMemoryError):
            r.set(keys[0], "v")
    r.config_set("maxmemory", 0)


def test_after_a_policy_change_no_shard_admits_a_write_on_keys_it_no_longer_counts(
        server, r, limited):
    # Every shard holds keys without a TTL, counted as evictable under an allkeys policy and
    # published by each shard's cron. Under volatile-lru nothing is evictable: a write over the
    # limit is refused on every shard at once, not only after each shard's next cron has
    # published its count under the new policy.
    shards = max(server.threads, 1)
    by_shard = keys_on_every_shard("pc", shards, per_shard=50)
    limited("allkeys-random", room_mb=64)
    r.mset({k: "v" * 100 for keys in by_shard for k in keys})
    time.sleep(0.3)  # a few crons (hz 10) publish the allkeys counts
    r.config_set("maxmemory-policy", "volatile-lru")
    r.config_set("maxmemory", 1)
    for keys in by_shard:
        with pytest.raises(redis.exceptions.OutOfMemoryError):
            r.set(keys[0], "v")
    r.config_set("maxmemory", 0)


def shard_values(server, name):
    """The per-shard values of the /metrics series `name`, in shard order."""
    url = "http://%s:%d/metrics" % (server.host, server.port)
    with urllib.request.urlopen(url, timeout=20) as resp:
        text = resp.read().decode()
    return [int(float(line.rsplit(" ", 1)[1])) for line in text.splitlines()
            if line.split("{", 1)[0] == name]


def shard_metric(server, name):
    """The sum over the shards of the /metrics counter `name`."""
    return sum(shard_values(server, name))


def in_place(server):
    return shard_metric(server, "dashkv_shard_evicted_in_place_total")


def write_small(r, prefix, n, how="set", batch=500):
    """Writes n keys prefix0.. with 8-byte values (inline in the table's slot: a key costs its
    slot only), by pipelined SETs, MSETs of 10 keys or MULTI/EXEC blocks of 10 SETs; returns
    INFO's evicted_keys after."""
    for b in range(0, n, batch):
        keys = ["%s%d" % (prefix, i) for i in range(b, min(b + batch, n))]
        if how == "multi":
            for k in range(0, len(keys), 10):
                p = r.pipeline(transaction=True)
                for key in keys[k:k + 10]:
                    p.set(key, "%08d" % k)
                p.execute()
            continue
        p = r.pipeline(transaction=False)
        if how == "mset":
            for k in range(0, len(keys), 10):
                p.mset({key: "%08d" % k for key in keys[k:k + 10]})
        else:
            for key in keys:
                p.set(key, "%08d" % b)
        p.execute()
    return info(r, "stats", "evicted_keys")


@pytest.mark.dashkv_only  # the Dashtable's segments
@pytest.mark.parametrize("policy", ["allkeys-lru", "allkeys-random"])
def test_at_the_limit_one_key_writes_evict_in_their_full_segment(server, r, limited, policy):
    # Once at the limit, a SET into a full segment evicts there instead of splitting it. MSET
    # and EXEC run several writes as one (an eviction in the middle could take a key an
    # earlier one wrote): they never evict in place, their segments split.
    r.flushall()
    limited(policy, room_mb=16)
    n = 0
    while write_small(r, "ip%d:" % n, 20000) == 0:
        n += 1
        assert n < 40, "no eviction after %d keys" % (20000 * n)
    before, evicted = in_place(server), info(r, "stats", "evicted_keys")
    assert write_small(r, "ip-set:", 60000) > evicted
    if server.threads > 1:
        # One shard's table at a limit this small stops growing at a fill (~0.6) where a full
        # segment is rare (tests/server/storage/evictor_test.cc covers it on one shard); with
        # several, the segments that fill first come within a few rounds.
        rounds = 0
        while in_place(server) == before:
            rounds += 1
            assert rounds < 10, "no eviction in place after %d SETs" % (60000 * rounds)
            write_small(r, "ip-set%d:" % rounds, 60000)
    for how in ("mset", "multi"):
        # Until they evict: first they refill the slots the SETs' evictions emptied.
        before, evicted = in_place(server), info(r, "stats", "evicted_keys")
        rounds = 0
        while write_small(r, "ip-%s%d:" % (how, rounds), 30000, how) == evicted:
            rounds += 1
            assert rounds < 10, "%s: no eviction after %d keys" % (how, 30000 * rounds)
        assert in_place(server) == before, how


def test_a_write_flood_leaves_the_shards_even(server, r, limited):
    # Each shard evicts its share (by keys) of the overage the budget's samples show: the
    # shards of a uniform key space keep like shares of the keys, whichever thread the clients
    # are on and however much their own buffers come and go. (A share counted from each
    # thread's own allocations left one shard of two with 40% of the keys, and RSS 15% over
    # the limit while the other shard's heap grew into new pages.)
    if server.threads == 1:
        pytest.skip("one shard")
    if shutil.which("redis-benchmark") is None:
        pytest.skip("redis-benchmark (redis-tools) not installed")
    r.flushall()
    limited("allkeys-lru", room_mb=64)
    # 20 pipelining clients, spread over the threads: 100-byte values, ~3x what fits.
    subprocess.run(["redis-benchmark", "-h", server.host, "-p", str(server.port), "-t", "set",
                    "-n", "2500000", "-r", "1000000000", "-d", "100", "-P", "30", "-c", "20",
                    "-q"], check=True, stdout=subprocess.DEVNULL, timeout=300)
    assert info(r, "stats", "evicted_keys") > 1_000_000
    counts = shard_values(server, "dashkv_shard_keys")
    assert len(counts) == server.threads
    # More threads than CPUs (4 on a 2-CPU machine) take turns, and who runs when moves the
    # shares by up to ~20% either way.
    spread = 1.15 if server.threads <= (os.cpu_count() or 1) else 1.35
    assert max(counts) <= spread * min(counts), counts


class TestTimeOverTheLimit:
    """INFO total_eviction_exceeded_time / current_eviction_exceeded_time: a stretch starts when
    a command finds the server over maxmemory, under any policy, and ends at the first that
    finds it within; the total includes the running stretch."""

    def test_fields_follow_evicted_clients(self, r):
        fields = list(r.info("stats"))
        i = fields.index("evicted_clients")
        assert fields[i + 1:i + 3] == ["total_eviction_exceeded_time",
                                       "current_eviction_exceeded_time"]

    @pytest.mark.parametrize("policy", ["noeviction", "volatile-lru", "allkeys-lru"])
    def test_a_stretch_counts_until_the_server_is_back_under(self, r, limited, policy):
        r.flushall()  # keys earlier tests left on a shared server would be evictable
        limited(policy)
        assert exceeded(r) == (0, 0)  # limited() reset the statistics
        r.config_set("maxmemory", 1)
        with pytest.raises(redis.exceptions.OutOfMemoryError):
            r.set("k", "v")  # nothing to evict: the server stays over
        total, current = wait_exceeded(r, 2)
        assert total >= current
        r.config_set("maxmemory", 1 << 40)
        after, now = exceeded(r)
        assert now == 0
        assert after >= current
        assert exceeded(r) == (after, 0)  # within the limit the total stands still
        # A second stretch adds to the total.
        r.config_set("maxmemory", 1)
        total, current = wait_exceeded(r, 1)
        assert total >= after + current
        r.config_set("maxmemory", 1 << 40)
        assert exceeded(r)[1] == 0

    def test_resetstat(self, r, limited):
        limited("noeviction")
        r.config_set("maxmemory", 1)
        wait_exceeded(r, 2)
        # While over: the total is forgotten and the next command starts a new stretch.
        r.config_resetstat()
        total, current = exceeded(r)
        assert total == current
        r.config_set("maxmemory", 1 << 40)
        assert exceeded(r)[1] == 0
        r.config_resetstat()
        assert exceeded(r) == (0, 0)

    @pytest.mark.dashkv_only  # redis-server 7.0.15 goes on counting until maxmemory is set again
    def test_turning_maxmemory_off_ends_the_stretch(self, r, limited):
        limited("noeviction")
        r.config_set("maxmemory", 1)
        _, current = wait_exceeded(r, 2)
        r.config_set("maxmemory", 0)
        total, now = exceeded(r)
        assert now == 0
        assert total >= current
        assert exceeded(r) == (total, 0)


class TestAccessRecord:
    def test_restore_idletime(self, r, limited):
        r.config_set("maxmemory-policy", "allkeys-lru")
        r.set("src", "value")
        payload = r.dump("src")
        r.restore("k", 0, payload, idletime=1000)
        assert 1000 <= r.object("idletime", "k") <= 1010
        # OBJECT itself, EXISTS and TYPE leave the record; TOUCH and reads update it.
        r.exists("k")
        r.type("k")
        assert r.object("idletime", "k") >= 1000
        r.touch("k")
        assert r.object("idletime", "k") <= 2
        r.restore("k", 0, payload, idletime=1000, replace=True)
        r.get("k")
        assert r.object("idletime", "k") <= 2

    def test_record_kept_through_expire_changes(self, r, limited):
        # Keys of 13..17 bytes move their record when an expiry is set or removed. The LFU
        # counter shows it: with the largest log factor an access practically never adds to it
        # (12: a key and value both of 13..17 bytes keep at most 15, README "Cache mode").
        r.config_set("maxmemory-policy", "allkeys-lfu")
        r.config_set("lfu-log-factor", 2147483647)
        for value in ("v" * 100, "v" * 15, "12"):
            r.set("src", value)
            payload = r.dump("src")
            for key in ("k" * 13, "k" * 15, "k" * 17, "key:12345", "k" * 30):
                r.restore(key, 0, payload, frequency=12, replace=True)
                r.execute_command("PEXPIRE", key, 100000)
                assert r.object("freq", key) == 12, (key, value)
                r.persist(key)
                assert r.object("freq", key) == 12, (key, value)

    def test_restore_freq(self, r, limited):
        r.config_set("maxmemory-policy", "allkeys-lfu")
        r.set("src", "value")
        payload = r.dump("src")
        r.restore("k", 0, payload, frequency=100)
        assert r.object("freq", "k") == 100

    def test_new_key_freq_and_reads(self, r, limited):
        r.config_set("maxmemory-policy", "allkeys-lfu")
        r.config_set("lfu-log-factor", 0)  # every access counts
        r.set("k", "v")
        assert r.object("freq", "k") == 5
        for _ in range(10):
            r.get("k")
        assert r.object("freq", "k") == 15

    def test_policy_errors(self, r, raw, limited):
        r.set("k", "v")
        r.config_set("maxmemory-policy", "allkeys-lfu")
        assert_err(raw.call("OBJECT", "IDLETIME", "k"),
                   "ERR An LFU maxmemory policy is selected, idle time not tracked. Please note "
                   "that when switching between policies at runtime LRU and LFU data will take "
                   "some time to adjust.")
        r.config_set("maxmemory-policy", "volatile-ttl")
        assert_err(raw.call("OBJECT", "FREQ", "k"),
                   "ERR An LFU maxmemory policy is not selected, access frequency not tracked. "
                   "Please note that when switching between policies at runtime LRU and LFU "
                   "data will take some time to adjust.")
        assert isinstance(raw.call("OBJECT", "IDLETIME", "k"), int)

    def test_debug_object_lru_fields(self, r, limited):
        r.config_set("maxmemory-policy", "allkeys-lru")
        r.set("src", "value")
        r.restore("k", 0, r.dump("src"), idletime=300)
        line = r.execute_command("DEBUG", "OBJECT", "k")
        fields = dict(kv.split(":", 1) for kv in line.split(" ")[2:])
        assert 300 <= int(fields["lru_seconds_idle"]) <= 310
        int(fields["lru"])


class TestEviction:
    @pytest.mark.parametrize("policy", ["allkeys-lru", "allkeys-random"])
    def test_allkeys_policies_evict_instead_of_refusing(self, r, limited, policy):
        limit = limited(policy)
        n = 3 * keys_to_fill()
        peak = 0
        for start in range(0, n, 500):
            assert write_keys(r, "k", 500, start=start) == 0
            peak = max(peak, info(r, "memory", "used_memory"))
        assert info(r, "stats", "evicted_keys") > 0
        assert r.dbsize() < n
        assert peak <= limit + 1024 * 1024, (peak, limit)

    def test_skewed_keyspace_stays_under_the_limit(self, r, limited):
        # One hash tag: every key on one shard (dashkv), which must still keep the total under
        # the limit.
        limit = limited("allkeys-lru")
        peak = 0
        for start in range(0, 3 * keys_to_fill(), 500):
            assert write_keys(r, "{hot}k", 500, start=start) == 0
            peak = max(peak, info(r, "memory", "used_memory"))
        assert info(r, "stats", "evicted_keys") > 0
        assert peak <= limit + 1024 * 1024, (peak, limit)

    @pytest.mark.parametrize("policy", ["volatile-lru", "volatile-lfu", "volatile-random",
                                        "volatile-ttl"])
    def test_volatile_policies_evict_only_keys_with_ttl(self, r, limited, policy):
        persistent = ["p%d" % i for i in range(200)]
        for k in persistent:
            r.set(k, VALUE)
        limited(policy)
        n = 3 * keys_to_fill()
        assert write_keys(r, "t", n, ttl=100000) == 0
        assert info(r, "stats", "evicted_keys") > 0
        assert existing(r, persistent) == persistent

    @pytest.mark.parametrize("policy", ["volatile-lru", "volatile-random", "noeviction"])
    def test_oom_when_nothing_is_evictable(self, r, limited, policy):
        limited(policy, room_mb=2)
        refused = write_keys(r, "p", 3 * keys_to_fill(2))
        assert refused > 0
        assert info(r, "stats", "evicted_keys") == 0
        size = r.dbsize()
        with pytest.raises(redis.exceptions.OutOfMemoryError,
                           match="^" + OOM.replace(".", r"\.") + "$"):
            r.set("another", VALUE)
        assert r.get("p0") == VALUE
        assert r.delete("p0") == 1
        assert r.dbsize() == size - 1

    def test_volatile_ttl_evicts_soonest_first(self, r, limited):
        n = keys_to_fill() // 2
        for b in range(0, n, 100):
            p = r.pipeline(transaction=False)
            for i in range(b, min(b + 100, n)):
                p.set("t%d" % i, VALUE, ex=10000 + 10 * i)
            p.execute()
        limited("volatile-ttl", room_mb=0)
        write_keys(r, "new", n // 2, ttl=10 ** 7)
        half = n // 2
        soon = len(existing(r, ["t%d" % i for i in range(half)]))
        late = len(existing(r, ["t%d" % i for i in range(half, n)]))
        assert info(r, "stats", "evicted_keys") > 0
        assert soon < late, (soon, late)

    def test_allkeys_lru_keeps_hot_set(self, r, limited):
        r.set("src", VALUE)
        payload = r.dump("src")
        r.delete("src")
        cold = keys_to_fill() // 2
        for b in range(0, cold, 100):
            p = r.pipeline(transaction=False)
            for i in range(b, min(b + 100, cold)):
                p.restore("cold%d" % i, 0, payload, idletime=100000)
            p.execute()
        hot = ["hot%d" % i for i in range(100)]
        for k in hot:
            r.set(k, VALUE)
        limited("allkeys-lru", room_mb=0)
        # A flood of new keys, fewer than the cold ones; the hot set is read between batches.
        for start in range(0, cold // 2, 200):
            write_keys(r, "new", 200, start=start)
            assert existing(r, hot) == hot
        assert info(r, "stats", "evicted_keys") > 0

    def test_allkeys_lfu_keeps_frequent_set(self, r, limited):
        r.config_set("maxmemory-policy", "allkeys-lfu")
        r.config_set("lfu-log-factor", 0)
        hot = ["hot%d" % i for i in range(100)]
        for k in hot:
            r.set(k, VALUE)
        for _ in range(20):
            p = r.pipeline(transaction=False)
            for k in hot:
                p.get(k)
            p.execute()
        scan = keys_to_fill()
        write_keys(r, "scan", scan)
        for b in range(0, scan, 100):  # read once
            p = r.pipeline(transaction=False)
            for i in range(b, min(b + 100, scan)):
                p.get("scan%d" % i)
            p.execute()
        limited("allkeys-lfu", room_mb=0)
        write_keys(r, "new", scan // 2)
        assert info(r, "stats", "evicted_keys") > 0
        assert existing(r, hot) == hot

    def test_watch_on_evicted_key_aborts_exec(self, r, limited):
        r.set("src", VALUE)
        payload = r.dump("src")
        r.restore("watched", 0, payload, idletime=100000)
        limited("allkeys-lru", room_mb=1)
        with r.pipeline() as p:
            p.watch("watched")
            start = 0
            while r.exists("watched") and start < 20 * keys_to_fill(1):
                write_keys(r, "f", 200, start=start)
                start += 200
            assert not r.exists("watched")
            p.multi()
            p.set("x", "1")
            with pytest.raises(redis.WatchError):
                p.execute()

    def test_keys_evicted_during_a_snapshot_are_in_it(self, server, r, raw, limited):
        n = 200000
        r.execute_command("DEBUG", "POPULATE", n)
        r.config_set("maxmemory-policy", "allkeys-random")
        half = info(r, "memory", "used_memory") // 2
        # One read: the snapshot's cut is taken before the write that evicts, while no bucket
        # may have been saved yet.
        replies = raw.pipeline([("BGSAVE",), ("CONFIG", "SET", "maxmemory", str(half)),
                                ("SET", "new", "v"), ("INFO", "stats")])
        assert replies[0] == ph.BGSAVE_STARTED
        assert replies[2] == "OK"
        assert int(re.search(r"evicted_keys:(\d+)", replies[3].decode()).group(1)) > 0
        info_done = ph.wait_bgsave_done(r)
        assert info_done["rdb_last_bgsave_status"] == "ok"
        assert ph.check_rdb(server.workdir / "dump.rdb").keys == n

    def test_evicted_keyspace_events(self, r, limited):
        r.config_set("notify-keyspace-events", "Ee")
        ps = r.pubsub()
        ps.subscribe("__keyevent@0__:evicted")
        assert ps.get_message(timeout=5)["type"] == "subscribe"
        limited("allkeys-random", room_mb=1)
        write_keys(r, "k", 4 * keys_to_fill(1))
        evicted = info(r, "stats", "evicted_keys")
        assert evicted > 0
        got = []
        while len(got) < evicted:
            m = ps.get_message(timeout=5)
            if m is None:
                break
            got.append(m["data"])
        ps.close()
        assert len(got) == evicted
        assert existing(r, got[:100]) == []


def test_client_no_evict_flag(r):
    assert r.execute_command("CLIENT", "NO-EVICT", "on") in (b"OK", "OK", True)
    assert "e" in r.client_info()["flags"]
    r.execute_command("CLIENT", "NO-EVICT", "off")
    assert "e" not in r.client_info()["flags"]
