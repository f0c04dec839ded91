"""A BGSAVE is a point-in-time snapshot (PERSISTENCE.md §6), however the dataset changes while
it is being written. Every snapshot is loaded into a redis-server 7.0, which also checks its
format.

Test A: writers with their own key sequences; each snapshot holds a prefix of every writer's
sequence (no holes, one cut for all shards), includes every write acknowledged before BGSAVE
was sent, excludes every write sent after its reply, and is one cut across writers.
Test B: MULTI/EXEC transfers between accounts on all shards; every snapshot's sum is exact.
Test C: big containers mutated while being serialized equal their content at the cut; new
keys inserted (the table grows and splits), keys expiring, FLUSHDB, FLUSHALL (which aborts
the BGSAVE in Redis 7.0), keys deleted and re-created during the save.

The checkers are unit-tested on synthetic data first (TestCheckers), so that they can fail.
DASHKV_PIT_KEYS sets the size of the background dataset (default 200000 keys: a BGSAVE then
takes tens of milliseconds at least); tests warn when no write overlapped a BGSAVE.
"""

import bisect
import os
import random
import shutil
import threading
import time
import warnings

import pytest

import persistence_helpers as ph
from helpers import wait_until
from resp_client import Error

FILLER = int(os.environ.get("DASHKV_PIT_KEYS", "200000"))


class CutError(AssertionError):
    pass


# ---- the checkers (pure functions) -------------------------------------------------------------

def writer_cut(i, m, values, pad=b""):
    """Checks writer i's keys in a snapshot and returns its cut S (-1: none of its writes).

    Writer i wrote SET w{i}:{s mod m} "{i}:{s}{pad}" for s = 0, 1, ...; `values` maps k (0..m-1) to
    the value of w{i}:{k} in the snapshot (bytes) or None when absent. The snapshot must hold
    a prefix of the sequence: with S the largest s present, every key holds the latest s <= S
    written to it, and keys first written after S are absent. Raises CutError otherwise."""
    seqs = {}
    for k, v in values.items():
        if v is None:
            continue
        if pad:
            if not v.endswith(pad):
                raise CutError("w%d:%d holds %r..., not ending in the writer's padding" % (
                    i, k, v[:40]))
            v = v[:-len(pad)]
        try:
            wi, s = (int(x) for x in v.decode().split(":"))
        except ValueError:
            raise CutError("w%d:%d holds %r, not a value of writer %d" % (i, k, v, i))
        if wi != i or s % m != k:
            raise CutError("w%d:%d holds %r, which writer %d never wrote there" % (i, k, v, i))
        seqs[k] = s
    cut = max(seqs.values(), default=-1)
    for k in range(m):
        want = None if cut < k else cut - (cut - k) % m
        if seqs.get(k) != want:
            raise CutError("writer %d: the snapshot holds its write %d, so w%d:%d should hold "
                           "write %s, but it holds %s: a hole in the cut" % (
                               i, cut, i, k, want, seqs.get(k)))
    return cut


def check_cut(logs, cuts, bgsave_sent, bgsave_replied):
    """Checks the writers' cuts against real time; returns the violations (empty: fine).

    logs[i][s] = (t_send, t_ack) of writer i's write s (monotonic clock, one process);
    cuts[i] = S_i from writer_cut. A point-in-time snapshot taken between `bgsave_sent` and
    `bgsave_replied` includes every write acknowledged before BGSAVE was sent, no write sent
    after its reply, and is one cut across writers: when it holds writer j's write S_j, it
    holds every write acknowledged before S_j was sent; when it lacks j's write S_j + 1, it
    lacks every write sent after S_j + 1 was acknowledged."""
    problems = []
    sends = [[t for t, _ in log] for log in logs]
    acks = [[t for _, t in log] for log in logs]
    for i, cut in enumerate(cuts):
        if cut >= len(logs[i]):
            problems.append("writer %d: the snapshot holds write %d, never sent" % (i, cut))
            continue
        last_done = bisect.bisect_left(acks[i], bgsave_sent) - 1
        if last_done > cut:
            problems.append("writer %d: write %d was acknowledged before BGSAVE was sent but "
                            "the snapshot stops at %d" % (i, last_done, cut))
        first_after = bisect.bisect_right(sends[i], bgsave_replied)
        if first_after <= cut:
            problems.append("writer %d: write %d was sent after BGSAVE replied but the "
                            "snapshot holds up to %d" % (i, first_after, cut))
    for j, cut_j in enumerate(cuts):
        if cut_j >= len(logs[j]):
            continue
        for i, cut_i in enumerate(cuts):
            if i == j:
                continue
            if cut_j >= 0:
                # Writes of i acknowledged before j's included write was sent.
                done = bisect.bisect_left(acks[i], sends[j][cut_j]) - 1
                if done > cut_i:
                    problems.append("holds writer %d's write %d but not writer %d's write %d, "
                                    "acknowledged before it was sent" % (j, cut_j, i, done))
            if cut_j + 1 < len(logs[j]):
                # Writes of i sent after j's excluded write was acknowledged.
                later = bisect.bisect_right(sends[i], acks[j][cut_j + 1])
                if later <= cut_i:
                    problems.append("lacks writer %d's write %d but holds writer %d's write %d, "
                                    "sent after it was acknowledged" % (j, cut_j + 1, i, later))
    return problems


class TestCheckers:
    """The checkers catch broken snapshots (synthetic data, no server)."""

    M = 4

    def values(self, i, cut, m=M, override=None):
        out = {}
        for k in range(m):
            out[k] = None if cut < k else b"%d:%d" % (i, cut - (cut - k) % m)
        out.update(override or {})
        return out

    def test_a_prefix_passes(self):
        assert writer_cut(0, self.M, self.values(0, 9)) == 9
        assert writer_cut(3, self.M, self.values(3, 2)) == 2
        assert writer_cut(1, self.M, self.values(1, -1)) == -1

    def test_padded_values_pass_and_damaged_padding_fails(self):
        pad = b"p" * 10
        vals = {k: None if v is None else v + pad for k, v in self.values(0, 5).items()}
        assert writer_cut(0, self.M, vals, pad) == 5
        vals[1] = vals[1][:-1]
        with pytest.raises(CutError, match="padding"):
            writer_cut(0, self.M, vals, pad)

    def test_a_hole_fails(self):
        # Write 8 (w:0) is missing: w0:0 still holds write 4 while write 9 is in.
        with pytest.raises(CutError, match="hole"):
            writer_cut(0, self.M, self.values(0, 9, override={0: b"0:4"}))
        # A key written before the cut is absent.
        with pytest.raises(CutError, match="hole"):
            writer_cut(0, self.M, self.values(0, 9, override={2: None}))
        # One shard cut earlier than the other: keys 0 and 2 at write 5, keys 1 and 3 at 9.
        with pytest.raises(CutError, match="hole"):
            writer_cut(0, self.M, {0: b"0:4", 1: b"0:9", 2: b"0:2", 3: b"0:7"})

    def test_foreign_values_fail(self):
        with pytest.raises(CutError, match="never wrote"):
            writer_cut(0, self.M, self.values(0, 9, override={1: b"1:5"}))
        with pytest.raises(CutError, match="never wrote"):
            writer_cut(0, self.M, self.values(0, 9, override={1: b"0:6"}))
        with pytest.raises(CutError, match="not a value"):
            writer_cut(0, self.M, self.values(0, 9, override={1: b"junk"}))

    @staticmethod
    def log(times):
        return [(t, t + 0.5) for t in times]

    def test_real_time_bounds(self):
        logs = [self.log([1, 2, 3, 3.7, 5, 6])]
        # BGSAVE sent at 3.6, replied at 3.9: writes 0..2 (acked by 3.5) are in, write 3
        # (sent at 3.7, acked at 4.2) may be in or out, writes 4 and 5 are out.
        assert check_cut(logs, [2], 3.6, 3.9) == []
        assert check_cut(logs, [3], 3.6, 3.9) == []
        assert "acknowledged before BGSAVE" in check_cut(logs, [1], 3.6, 3.9)[0]
        assert "sent after BGSAVE replied" in check_cut(logs, [4], 3.6, 3.9)[0]
        assert "never sent" in check_cut(logs, [6], 3.6, 3.9)[0]

    def test_one_cut_across_writers(self):
        # Writer 0 at t = 10, 20, 30; writer 1 at t = 12, 22, 32 (acks 0.5 later).
        logs = [self.log([10, 20, 30]), self.log([12, 22, 32])]
        assert check_cut(logs, [1, 1], 0, 1e9) == []  # both cut after their 2nd write
        # Holds writer 1's write 2 (sent at 32) but not writer 0's write 2 (acked at 30.5).
        problems = check_cut(logs, [1, 2], 0, 1e9)
        assert any("holds writer 1's write 2 but not writer 0's write 2" in p
                   for p in problems), problems
        # Lacks writer 0's write 1 (acked 20.5) but holds writer 1's write 1 (sent 22).
        problems = check_cut(logs, [0, 1], 0, 1e9)
        assert any("lacks writer 0's write 1 but holds writer 1's write 1" in p
                   for p in problems), problems


# ---- shared pieces ----------------------------------------------------------------------------

class Worker(threading.Thread):
    """A thread running step(raw) in a loop on its own connection until stopped; step returns
    nothing and raises on a wrong reply. pause()/resume() hold it between two steps."""

    def __init__(self, srv, step):
        super().__init__(daemon=True)
        self.raw = srv.raw(timeout=60)
        self.step = step
        self.ops = 0
        self.error = None
        self._stop_ev = threading.Event()
        self._run_ev = threading.Event()
        self._run_ev.set()
        self._paused = threading.Event()

    def run(self):
        try:
            while not self._stop_ev.is_set():
                if not self._run_ev.is_set():
                    self._paused.set()
                    self._run_ev.wait()
                    self._paused.clear()
                    continue
                self.step(self.raw)
                self.ops += 1
        except Exception as e:  # reported by finish()
            self.error = e
        finally:
            self._paused.set()
            self.raw.close()

    def pause(self):
        self._run_ev.clear()
        assert self._paused.wait(30), "worker did not pause"

    def resume(self):
        self._run_ev.set()

    def finish(self):
        self._stop_ev.set()
        self._run_ev.set()
        self.join(60)
        assert not self.is_alive(), "worker did not stop"
        if self.error is not None:
            raise self.error


def fill(c, n=FILLER):
    assert c.execute_command("DEBUG", "POPULATE", n) in (True, b"OK")


def bgsave_started(srv, *then):
    """Sends BGSAVE and the commands `then` in one write (so that they reach the server while
    the BGSAVE runs); checks the BGSAVE reply; returns (t_sent, t_replied, replies of then)."""
    raw = srv.raw(timeout=120)
    try:
        t_sent = time.monotonic()
        if then:
            replies = raw.pipeline([("BGSAVE",)] + list(then))
        else:
            replies = [raw.call("BGSAVE")]
        t_replied = time.monotonic()
    finally:
        raw.close()
    assert replies[0] == ph.BGSAVE_STARTED, replies[0]
    return t_sent, t_replied, replies[1:]


def finish_bgsave(c, srv, copy_to):
    info = ph.wait_bgsave_done(c)
    assert info["rdb_last_bgsave_status"] == "ok", info
    shutil.copyfile(srv.workdir / "dump.rdb", copy_to)
    return time.monotonic()


def warn_if_idle(ops_during, what):
    if ops_during == 0:
        warnings.warn("no %s overlapped the BGSAVE: this round proved nothing" % what)


# ---- Test A -----------------------------------------------------------------------------------

WRITERS = 4
KEYS_PER_WRITER = 64


# "compressible": 1 KB values, which a write saving its entry during the save hands to the
# file writer's thread uncompressed (LZF is done there); the file is read by redis-server.
@pytest.mark.heavy
@pytest.mark.parametrize("pad", [b"", b"p" * 1000], ids=["short", "compressible"])
def test_a_consistent_cut(server, server_factory, tmp_path, pad):
    srv = server_factory()
    c = ph.bclient(srv)
    fill(c)
    logs = [[] for _ in range(WRITERS)]

    def writer(i):
        def step(raw):
            s = len(logs[i])
            t_send = time.monotonic()
            reply = raw.call("SET", "w%d:%d" % (i, s % KEYS_PER_WRITER), b"%d:%d" % (i, s) + pad)
            t_ack = time.monotonic()
            assert reply == "OK", reply
            logs[i].append((t_send, t_ack))
        return step

    workers = [Worker(srv, writer(i)) for i in range(WRITERS)]
    for w in workers:
        w.start()
    rounds = []
    try:
        wait_until(lambda: all(len(log) > KEYS_PER_WRITER // 2 for log in logs), 30,
                   what="the writers to start")
        for r in range(2):
            before = [len(log) for log in logs]
            t_sent, t_replied, _ = bgsave_started(srv)
            t_done = finish_bgsave(c, srv, tmp_path / ("snap%d.rdb" % r))
            during = sum(1 for log in logs for ts, ta in log[:] if ts > t_replied and ta < t_done)
            warn_if_idle(during, "write")
            rounds.append((t_sent, t_replied, tmp_path / ("snap%d.rdb" % r), before))
    finally:
        for w in workers:
            w.finish()

    for r, (t_sent, t_replied, snap, before) in enumerate(rounds):
        with ph.RedisOnFile(snap, tmp_path / ("redis%d" % r)) as peer:
            pc = peer.client()
            cuts = []
            present = 0
            for i in range(WRITERS):
                names = ["w%d:%d" % (i, k) for k in range(KEYS_PER_WRITER)]
                values = dict(enumerate(pc.mget(names)))
                present += sum(1 for v in values.values() if v is not None)
                cuts.append(writer_cut(i, KEYS_PER_WRITER, values, pad))
            assert pc.dbsize() == FILLER + present
            problems = check_cut(logs, cuts, t_sent, t_replied)
            assert problems == [], "snapshot %d (cuts %s, writes before BGSAVE %s):\n%s" % (
                r, cuts, before, "\n".join(problems))


# ---- Test B -----------------------------------------------------------------------------------

ACCOUNTS = 32
INITIAL = 1000


@pytest.mark.heavy
def test_b_transfers_keep_the_sum(server, server_factory, tmp_path):
    srv = server_factory()
    c = ph.bclient(srv)
    fill(c)
    names = ["acct:%d" % k for k in range(ACCOUNTS)]
    c.mset({n: INITIAL for n in names})

    def transfer(seed):
        rng = random.Random(seed)

        def step(raw):
            a, b = rng.sample(names, 2)
            x = rng.randrange(1, 100)
            replies = raw.pipeline([("MULTI",), ("INCRBY", a, -x), ("INCRBY", b, x),
                                    ("EXEC",)])
            assert replies[:3] == ["OK", "QUEUED", "QUEUED"], replies
            assert isinstance(replies[3], list) and len(replies[3]) == 2, replies
        return step

    workers = [Worker(srv, transfer(100 + t)) for t in range(3)]
    for w in workers:
        w.start()
    snaps = []
    try:
        wait_until(lambda: all(w.ops > 10 for w in workers), 30, what="the transfers")
        for r in range(4):
            ops = sum(w.ops for w in workers)
            bgsave_started(srv)
            finish_bgsave(c, srv, tmp_path / ("snap%d.rdb" % r))
            warn_if_idle(sum(w.ops for w in workers) - ops, "transfer")
            snaps.append(tmp_path / ("snap%d.rdb" % r))
    finally:
        for w in workers:
            w.finish()
    assert sum(int(v) for v in c.mget(names)) == ACCOUNTS * INITIAL
    for r, snap in enumerate(snaps):
        with ph.RedisOnFile(snap, tmp_path / ("redis%d" % r)) as peer:
            values = peer.client().mget(names)
            assert None not in values, values
            balances = [int(v) for v in values]
            assert sum(balances) == ACCOUNTS * INITIAL, "snapshot %d: %s" % (r, balances)
            assert peer.client().dbsize() == FILLER + ACCOUNTS


# ---- Test C: big containers mutated during the save -------------------------------------------

BIG = 10000
CONTAINERS = [b"big:list", b"big:list2", b"big:hash", b"big:zset", b"big:set", b"big:ints",
              b"big:victim", b"big:small"]


def make_containers(c):
    p = c.pipeline(transaction=False)
    p.rpush("big:list", *[b"e%d" % i for i in range(BIG)])
    p.hset("big:hash", mapping={b"f%d" % i: b"v%d" % i for i in range(BIG)})
    p.zadd("big:zset", {b"m%d" % i: i % 1000 for i in range(BIG)})
    p.sadd("big:set", *[b"s%d" % i for i in range(BIG)])
    p.sadd("big:ints", *range(0, 3 * BIG, 3))
    p.rpush("big:victim", *[b"x%d" % i for i in range(BIG)])
    p.set("big:small", "small")
    p.execute()


def mutator(seed):
    """One random mutation of the containers per step: LPUSH/RPOP/LSET, HSET/HDEL,
    ZADD/ZREM/ZINCRBY, SADD/SREM, RENAME there and back, DEL and re-create with another type,
    EXPIRE/PERSIST."""
    rng = random.Random(seed)
    state = {"renamed": False, "victim": "list"}

    def ok(reply):
        assert not isinstance(reply, Error), reply

    def step(raw):
        op = rng.randrange(12)
        n = rng.randrange(BIG)
        if op == 0:
            ok(raw.call("LPUSH", "big:list2" if state["renamed"] else "big:list", "new%d" % n))
        elif op == 1:
            ok(raw.call("LSET", "big:list2" if state["renamed"] else "big:list",
                        rng.randrange(100), "set%d" % n))
        elif op == 2:
            ok(raw.call("HSET", "big:hash", "f%d" % n, "changed%d" % rng.randrange(10 ** 6)))
        elif op == 3:
            ok(raw.call("HDEL", "big:hash", "f%d" % n))
        elif op == 4:
            ok(raw.call("ZADD", "big:zset", rng.uniform(-10, 10), "m%d" % n))
        elif op == 5:
            ok(raw.call("ZREM", "big:zset", "m%d" % n))
        elif op == 6:
            ok(raw.call("SADD", "big:set", "new%d" % n))
            ok(raw.call("SREM", "big:ints", 3 * n))
        elif op == 7:
            src, dst = ("big:list2", "big:list") if state["renamed"] else ("big:list",
                                                                           "big:list2")
            ok(raw.call("RENAME", src, dst))
            state["renamed"] = not state["renamed"]
        elif op == 8:
            ok(raw.call("DEL", "big:victim"))
            if state["victim"] == "list":
                ok(raw.call("SET", "big:victim", "now a string %d" % n))
                state["victim"] = "string"
            else:
                ok(raw.call("RPUSH", "big:victim", *["y%d" % i for i in range(BIG)]))
                state["victim"] = "list"
        elif op == 9:
            ok(raw.call("EXPIRE", "big:hash", 1000 + rng.randrange(1000)))
        elif op == 10:
            ok(raw.call("PERSIST", "big:hash"))
        else:
            ok(raw.call("SET", "big:small", "small%d" % n, "EX", 5000))
    return step


@pytest.mark.heavy
@pytest.mark.needs_lists
def test_c_containers_equal_their_content_at_the_cut(server, server_factory, tmp_path):
    srv = server_factory()
    c = ph.bclient(srv)
    fill(c)
    make_containers(c)
    w = Worker(srv, mutator(7))
    w.start()
    rounds = []
    try:
        for r in range(3):
            wait_until(lambda: w.ops > 20 * (r + 1), 30, what="mutations")
            w.pause()
            before = ph.capture_keys(c, CONTAINERS)
            bgsave_started(srv)
            ops = w.ops
            w.resume()
            finish_bgsave(c, srv, tmp_path / ("snap%d.rdb" % r))
            warn_if_idle(w.ops - ops, "mutation")
            rounds.append((before, tmp_path / ("snap%d.rdb" % r)))
    finally:
        w.finish()
    for r, (before, snap) in enumerate(rounds):
        with ph.RedisOnFile(snap, tmp_path / ("redis%d" % r)) as peer:
            pc = peer.client()
            ph.assert_captures_equal(before, ph.capture_keys(pc, CONTAINERS),
                                     "snapshot %d vs the containers at BGSAVE" % r)
            present = sum(1 for e in before.values() if e is not None)
            assert pc.dbsize() == FILLER + present


def test_c_table_growth_during_the_save(server, server_factory, tmp_path):
    """New keys inserted while saving (the table grows and splits), keys deleted and
    overwritten: the snapshot holds exactly the keys and values of the cut."""
    srv = server_factory()
    c = ph.bclient(srv)
    fill(c)
    dels = ["key:%d" % i for i in range(1000)]
    sets = []
    for i in range(1000, 2000):
        sets += ["key:%d" % i, "overwritten"]

    counter = [0]

    def inserter(raw):
        n = counter[0]
        counter[0] += 500
        cmd = ["MSET"]
        for i in range(n, n + 500):
            cmd += ["late:%d" % i, "x"]
        assert raw.call(*cmd) == "OK"

    _, _, replies = bgsave_started(srv, ("DEBUG", "POPULATE", FILLER // 2, "new"),
                                   ("DEL", *dels), ("MSET", *sets))
    assert replies == ["OK", 1000, "OK"], replies
    w = Worker(srv, inserter)
    w.start()
    try:
        finish_bgsave(c, srv, tmp_path / "snap.rdb")
    finally:
        w.finish()
    assert c.dbsize() == FILLER + FILLER // 2 - 1000 + counter[0]
    with ph.RedisOnFile(tmp_path / "snap.rdb", tmp_path / "redis") as peer:
        pc = peer.client()
        assert pc.dbsize() == FILLER
        assert ph.check_populated(pc, FILLER) == []
        assert ph.scan_count(pc, "new:*") == 0 and ph.scan_count(pc, "late:*") == 0


def test_c_keys_expiring_during_the_save(server, server_factory, tmp_path):
    """Keys with short TTLs expire (actively) while the save runs; keys given a TTL after the
    cut vanish from the server during the save. In the loaded snapshot: a key given a TTL after
    BGSAVE is present without one; a key with a long TTL is present with the same absolute
    expiry; a key with a short TTL is either present with the same absolute expiry (not
    expired when loaded) or absent, and then its expiry time has passed."""
    srv = server_factory()
    c = ph.bclient(srv)
    fill(c)
    rng = random.Random(11)
    now = int(time.time() * 1000)
    expiry = {}
    p = c.pipeline(transaction=False)
    for i in range(2000):
        expiry[b"exp:short:%d" % i] = now + 30 + rng.randrange(1000)
    for i in range(1000):
        expiry[b"exp:long:%d" % i] = now + 3600 * 1000 + rng.randrange(1000)
    for k, at in expiry.items():
        p.set(k, k, pxat=at)
    later = [b"exp:later:%d" % i for i in range(1000)]
    for k in later:
        p.set(k, k)
    p.execute()
    _, _, replies = bgsave_started(srv, *[("PEXPIRE", k, 1) for k in later])
    assert replies == [1] * len(later)
    finish_bgsave(c, srv, tmp_path / "snap.rdb")
    with ph.RedisOnFile(tmp_path / "snap.rdb", tmp_path / "redis") as peer:
        pc = peer.client()
        got = ph.capture_keys(pc, list(expiry) + later)
        checked_at = time.time() * 1000
        wrong = []
        for k in later:
            e = got[k]
            if e is None or e.expire_at is not None:
                wrong.append((k, e))
        for k, at in expiry.items():
            e = got[k]
            if e is None:
                if k.startswith(b"exp:long:") or at > checked_at:
                    wrong.append((k, "absent, expires at %d, checked at %d" % (at, checked_at)))
            elif e.expire_at is None or abs(e.expire_at - at) > ph.EXPIRE_TOLERANCE_MS:
                wrong.append((k, e, at))
        # Each key holds its own name.
        for k, e in got.items():
            if e is not None and e.digest != ph.content_digest("string", k):
                wrong.append((k, e))
        assert wrong == [], wrong[:10]
        # Short-TTL keys may expire on the peer between the capture and DBSIZE.
        present = sum(1 for e in got.values() if e is not None)
        stable = sum(1 for k, e in got.items()
                     if e is not None and not k.startswith(b"exp:short:"))
        assert FILLER + stable <= pc.dbsize() <= FILLER + present


def test_c_flushdb_during_the_save(server, server_factory, tmp_path):
    srv = server_factory()
    c = ph.bclient(srv)
    fill(c)
    c1 = ph.bclient(srv, db=1)
    c1.mset({"db1:%d" % i: i for i in range(100)})
    _, _, replies = bgsave_started(
        srv, ("FLUSHDB",), ("MSET", *sum((["key:%d" % i, "recreated"] for i in range(1000)), [])))
    assert replies == ["OK", "OK"]
    finish_bgsave(c, srv, tmp_path / "snap.rdb")
    assert c.dbsize() == 1000 and c1.dbsize() == 100
    with ph.RedisOnFile(tmp_path / "snap.rdb", tmp_path / "redis") as peer:
        pc = peer.client()
        assert pc.dbsize() == FILLER
        assert ph.check_populated(pc, FILLER) == []
        assert peer.client(1).dbsize() == 100


@pytest.mark.parametrize("schedule", ["", "3600 1"])
def test_c_flushall_aborts_the_save(server, server_factory, schedule):
    """Redis 7.0 kills its BGSAVE child on FLUSHALL (the old snapshot stays, the save counts
    as neither a success nor a failure), then saves the empty dataset when it has a save
    schedule."""
    srv = server_factory(extra_args=ph.persistence_args(server.kind, save=schedule))
    c = ph.bclient(srv)
    c.set("marker", "old")
    assert c.execute_command("SAVE") in (True, b"OK")
    old = (srv.workdir / "dump.rdb").read_bytes()
    saved_at = ph.lastsave(c)
    fill(c)
    ph.wait_next_second(saved_at)
    _, _, replies = bgsave_started(srv, ("FLUSHALL",))
    assert replies == ["OK"]
    info = ph.wait_bgsave_done(c)
    assert info["rdb_last_bgsave_status"] == "ok", info
    assert ph.temp_files(srv.workdir) == []
    assert c.dbsize() == 0
    if schedule:
        check = ph.check_rdb(srv.workdir / "dump.rdb")
        assert check.rc == 0 and check.keys == 0, check.output[-2000:]
    else:
        assert (srv.workdir / "dump.rdb").read_bytes() == old
        assert ph.lastsave(c) == saved_at
    # The next BGSAVE works.
    ph.bgsave_and_wait(c)
