"""Atomicity of multi-key commands under concurrency, with keys spread over every shard.

Many clients run transfers between keys while observers check an invariant that only holds if
every multi-key command is atomic. Runs against the session server (dashkv --threads 1 and 2,
or redis) and against a dashkv with more threads than cores (--threads 4). Every loop is
bounded in count; nothing is timed.
"""

import random

import pytest
import redis

from helpers import run_threads

MEMBERS = 60
SETS = 8
MOVES_PER_WORKER = 3000
CHECKS_PER_OBSERVER = 300
PIPELINE = 50  # pipelined batches keep the server busy with back-to-back transfers


def client(srv):
    return redis.Redis(host=srv.host, port=srv.port, decode_responses=True, socket_timeout=30)


def test_smove_between_shards_never_loses_or_duplicates_a_member(srv):
    c = client(srv)
    c.flushall()
    keys = ["set:%d" % i for i in range(SETS)]
    for m in range(MEMBERS):
        c.sadd(keys[m % SETS], "m%d" % m)
    expected = {"m%d" % m for m in range(MEMBERS)}

    def mover(seed):
        def run():
            rnd = random.Random(seed)
            w = client(srv)
            for _ in range(MOVES_PER_WORKER // PIPELINE):
                pipe = w.pipeline(transaction=False)
                for _ in range(PIPELINE):
                    src, dst = rnd.sample(keys, 2)
                    pipe.smove(src, dst, "m%d" % rnd.randrange(MEMBERS))
                pipe.execute()
        return run

    def observer():
        w = client(srv)
        for _ in range(CHECKS_PER_OBSERVER // 10):
            pipe = w.pipeline(transaction=False)
            for _ in range(10):
                pipe.sunion(keys)
            for union in pipe.execute():
                assert union == expected, "members lost mid-move: %s" % (expected - union)

    run_threads([mover(s) for s in range(4)] + [observer, observer])
    total = sum(c.scard(k) for k in keys)
    assert total == MEMBERS
    assert c.sunion(keys) == expected


def test_zunion_across_shards_reads_one_moment(srv):
    """Movers shift points between sorted sets with ZINCRBY pairs (at most one half-done
    transfer per mover at any time); ZUNION, one atomic read of every set, therefore always
    sums to within 2 of the total. A non-atomic read could see a set before and another after
    any number of transfers."""
    c = client(srv)
    c.flushall()
    srcs = ["z:%d" % i for i in range(4)]
    for k in srcs:
        c.zadd(k, {"x": 10})
    total = 10 * len(srcs)

    def mover(seed):
        def run():
            rnd = random.Random(seed)
            w = client(srv)
            for _ in range(800):
                a, b = rnd.sample(srcs, 2)
                w.zincrby(a, -1, "x")
                w.zincrby(b, 1, "x")
        return run

    def observer():
        w = client(srv)
        for _ in range(300):
            res = w.zunion(srcs, withscores=True)
            assert len(res) == 1 and res[0][0] == "x"
            # Two movers each have at most one transfer half-done.
            assert total - 2 <= res[0][1] <= total + 2

    run_threads([mover(1), mover(2), observer])
    assert c.zunion(srcs, withscores=True) == [("x", float(total))]


ACCOUNTS = ["acct:%d" % i for i in range(12)]
START_BALANCE = 1000


def test_multi_exec_transfers_keep_the_total(srv):
    """Transfers between accounts on every shard inside MULTI/EXEC; MGET of all accounts (one
    atomic read) and EXECs that read every account always see the same total."""
    c = client(srv)
    c.flushall()
    c.mset({a: START_BALANCE for a in ACCOUNTS})
    total = START_BALANCE * len(ACCOUNTS)

    def mover(seed):
        def run():
            rnd = random.Random(seed)
            w = client(srv)
            for _ in range(400):
                a, b = rnd.sample(ACCOUNTS, 2)
                n = rnd.randrange(1, 50)
                pipe = w.pipeline(transaction=True)
                pipe.decrby(a, n)
                pipe.incrby(b, n)
                assert pipe.execute() is not None
        return run

    def observer():
        w = client(srv)
        for i in range(300):
            if i % 2:
                values = w.mget(ACCOUNTS)
            else:
                pipe = w.pipeline(transaction=True)
                for a in ACCOUNTS:
                    pipe.get(a)
                values = pipe.execute()
            assert sum(int(v) for v in values) == total

    run_threads([mover(s) for s in range(4)] + [observer, observer])
    assert sum(int(v) for v in c.mget(ACCOUNTS)) == total


def test_mset_group_is_never_seen_half_applied(srv):
    """Writers MSET a group of keys (spread over every shard) to one value per round; MGET of
    the group never sees two different values."""
    c = client(srv)
    c.flushall()
    keys = ["grp:%d" % i for i in range(10)]
    c.mset({k: "w0-0" for k in keys})

    def writer(wid):
        def run():
            w = client(srv)
            for i in range(500):
                w.mset({k: "w%d-%d" % (wid, i) for k in keys})
        return run

    def observer():
        w = client(srv)
        for _ in range(600):
            values = w.mget(keys)
            assert len(set(values)) == 1, values

    run_threads([writer(1), writer(2), observer, observer])


def test_watch_increments_are_never_lost(srv):
    """Optimistic increments with WATCH/MULTI/EXEC from several clients on counters spread
    over the shards: every successful EXEC counts, none is lost or doubled."""
    c = client(srv)
    c.flushall()
    counters = ["ctr:%d" % i for i in range(4)]
    per_worker = 150

    def worker(seed):
        def run():
            rnd = random.Random(seed)
            w = client(srv)
            for _ in range(per_worker):
                key = rnd.choice(counters)
                while True:
                    with w.pipeline(transaction=True) as pipe:
                        try:
                            pipe.watch(key)
                            cur = int(pipe.get(key) or 0)
                            pipe.multi()
                            pipe.set(key, cur + 1)
                            pipe.execute()
                            break
                        except redis.WatchError:
                            continue
        return run

    run_threads([worker(s) for s in range(4)])
    assert sum(int(c.get(k) or 0) for k in counters) == 4 * per_worker
