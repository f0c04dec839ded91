"""Crash safety of snapshots (PERSISTENCE.md §7): a server killed with SIGKILL at a random moment
of a BGSAVE or SAVE restarts on the same directory with exactly the last complete snapshot,
the previous one or the new one, never a mix, and the dump file is always whole
(redis-check-rdb). dashkv also removes its stale temp files (temp-<pid>-<n>.rdb) at start;
Redis does not (its temp-<pid>.rdb stays), so those checks are dashkv-only.

The kill moments come from a seeded generator (DASHKV_CRASH_SEED) spread over the measured
duration of a BGSAVE; both outcomes are valid, so nothing depends on timing.
"""

import os
import random
import time

import pytest

import persistence_helpers as ph
from conftest import TARGET
from resp_client import encode

BASE = 100000
STEP = 5000
ROUNDS = 4


def kill_during(srv, c, mode, delay):
    """Starts a BGSAVE (or a SAVE, whose reply is not awaited), waits `delay` seconds and
    SIGKILLs the server (with a Redis BGSAVE child)."""
    raw = srv.raw(timeout=60)
    if mode == "bgsave":
        assert raw.call("BGSAVE") == ph.BGSAVE_STARTED
    else:
        raw.send(encode("SAVE"))
    # The random kill moment (not a timing assertion: every outcome is checked as valid).
    time.sleep(delay)
    ph.kill9(srv)
    raw.close()


def verify(c, gens):
    """The server holds exactly the keys of generations `gens` (0: the base keys)."""
    assert c.dbsize() == BASE + 1 + STEP * (len(gens) - 1)
    assert int(c.get("gen")) == gens[-1]
    for g in gens[1:]:
        assert ph.check_populated(c, STEP, prefix="g%d" % g) == [], g


@pytest.mark.heavy
@pytest.mark.parametrize("mode", ["bgsave", "save"])
def test_kill9_during_a_save_keeps_a_whole_snapshot(server, server_factory, mode):
    seed = int(os.environ.get("DASHKV_CRASH_SEED", "424242")) + (mode == "save")
    rng = random.Random(seed)
    srv = server_factory()
    c = ph.bclient(srv)
    assert c.execute_command("DEBUG", "POPULATE", BASE) in (True, b"OK")
    c.set("gen", 0)
    # The kill window: how long a save of this size takes.
    t = time.monotonic()
    if mode == "bgsave":
        ph.bgsave_and_wait(c)
    else:
        assert c.execute_command("SAVE") in (True, b"OK")
    duration = time.monotonic() - t
    saved = [0]
    outcomes = []
    for k in range(1, ROUNDS + 1):
        assert c.execute_command("DEBUG", "POPULATE", STEP, "g%d" % k) in (True, b"OK")
        c.set("gen", k)
        current = saved + [k]
        c.close()
        kill_during(srv, c, mode, rng.uniform(0, duration * 1.5))
        check = ph.check_rdb(srv.workdir / "dump.rdb")
        assert check.rc == 0, "seed %d round %d:\n%s" % (seed, k, check.output[-2000:])
        c = ph.restart(srv)
        gen = int(c.get("gen"))
        assert gen in (saved[-1], k), "seed %d round %d: gen %d" % (seed, k, gen)
        saved = current if gen == k else saved
        verify(c, saved)
        outcomes.append("new" if gen == k else "old")
        if not srv.is_redis:
            assert ph.temp_files(srv.workdir) == [], "seed %d round %d" % (seed, k)
    assert ph.check_populated(c, BASE) == []
    print("kill -9 during %s, seed %d: %s" % (mode, seed, outcomes))


@pytest.mark.dashkv_only
def test_stale_temp_files_are_removed_at_start(server_factory):
    srv = server_factory(start=False)
    stale = ["temp-99999-1.rdb", "temp-12345-7.rdb"]
    kept = ["other.rdb", "mytemp-1-1.rdb", "temp-notes.txt"]
    for name in stale + kept:
        (srv.workdir / name).write_bytes(b"partial snapshot")
    c = ph.restart(srv)
    assert c.dbsize() == 0
    assert ph.temp_files(srv.workdir) == []
    for name in kept:
        assert (srv.workdir / name).read_bytes() == b"partial snapshot", name


@pytest.mark.skipif(TARGET != "redis", reason="documents Redis's behaviour")
def test_redis_keeps_stale_temp_files(server_factory):
    """The reason the temp-file checks above are dashkv-only."""
    srv = server_factory(start=False)
    (srv.workdir / "temp-99999.rdb").write_bytes(b"partial snapshot")
    ph.restart(srv)
    assert ph.temp_files(srv.workdir) == ["temp-99999.rdb"]
