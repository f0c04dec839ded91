"""Snapshots on disk (PERSISTENCE.md §4 and §7): RDB files written by the server under test are
accepted by redis-check-rdb and load into redis-server 7.0 with the same content, files written
by redis-server load into the server under test at start, with and without compression and
checksum; SAVE, BGSAVE, LASTSAVE, the save schedule, SHUTDOWN [SAVE|NOSAVE], SIGTERM, DEBUG
RELOAD, FLUSHALL with a schedule, CONFIG SET dir/dbfilename, INFO persistence, damaged files
refused at start, and stop-writes-on-bgsave-error with Redis's MISCONF error.

Every expectation was checked against redis-server 7.0.15 (DASHKV_TEST_TARGET=redis); there
"the server under test" is itself a redis-server. Each test starts its own servers
(server_factory), so each is parametrized over the thread counts like the rest of the suite.
"""

import random
import re
import shutil
import signal
import subprocess
import time

import pytest
import redis

import persistence_helpers as ph
from conftest import Server, _free_port
from helpers import wait_until
from resp_client import Closed, Error


def start(server_factory, server, **kw):
    """A fresh server of the kind under test with persistence arguments `kw` (see
    ph.persistence_args) and a bytes client on it."""
    redis_extra = kw.pop("redis_extra", ())
    srv = server_factory(extra_args=ph.persistence_args(server.kind, redis_extra=redis_extra,
                                                        **kw))
    return srv, ph.bclient(srv)


def dump_path(srv):
    return srv.workdir / "dump.rdb"


def shutdown(srv, *args):
    """Sends SHUTDOWN [args]; returns the error reply, or None when the server closed the
    connection (then the process has exited with status 0)."""
    c = srv.raw(timeout=60)
    try:
        reply = c.call("SHUTDOWN", *args)
    except Closed:
        reply = None
    finally:
        c.close()
    if reply is None:
        rc = srv.proc.wait(timeout=60)
        assert rc == 0, "exit status %s; log:\n%s" % (rc, ph.server_log(srv)[-3000:])
    return reply


# ---- ours -> file -> redis-check-rdb -> redis-server, and back --------------------------------

VARIANTS = {
    "default": {},
    "nocompression": {"rdbcompression": False},
    "nochecksum": {"rdbchecksum": False},
}


@pytest.mark.needs_lists
@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_our_file_is_valid_and_loads_into_redis(server, server_factory, tmp_path, variant):
    srv, c = start(server_factory, server, **VARIANTS[variant])
    ph.populate_dataset(c, random.Random(1001))
    before = ph.capture(c)
    assert c.execute_command("SAVE") in (True, b"OK")
    assert ph.temp_files(srv.workdir) == []
    data = dump_path(srv).read_bytes()
    assert data.startswith(b"REDIS0010"), data[:9]

    check = ph.check_rdb(dump_path(srv))
    assert check.rc == 0, check.output[-3000:]
    keys, expires = ph.capture_counts(before)
    assert (check.keys, check.expires, check.already_expired) == (keys, expires, 0), \
        check.output[-3000:]
    if variant == "nochecksum":
        assert data[-8:] == b"\0" * 8
        assert "checksum disabled" in check.output
    else:
        assert data[-8:] != b"\0" * 8
        assert "Checksum OK" in check.output
    # Compression is on by default: the 380-byte repetitive string is stored LZF-compressed.
    assert (ph.COMPRESSIBLE_MARKER in data) == (variant == "nocompression")

    with ph.RedisOnFile(dump_path(srv), tmp_path / "redis") as peer:
        pc = peer.client()
        ph.assert_captures_equal(before, ph.capture(pc), "ours vs redis loading our file")
        assert "Done loading RDB, keys loaded: %d, keys expired: 0." % keys in peer.log()
        # Redis is happy to save and reload our data (PERSISTENCE.md §4.2).
        assert pc.execute_command("DEBUG", "RELOAD") in (True, b"OK")
        ph.assert_captures_equal(before, ph.capture(pc), "after DEBUG RELOAD in redis")


REDIS_VARIANTS = {
    "default": [],
    "nocompression": ["--rdbcompression", "no"],
    "nochecksum": ["--rdbchecksum", "no"],
    "list-compress-depth-1": ["--list-compress-depth", "1"],
}


@pytest.mark.needs_lists
@pytest.mark.parametrize("variant", sorted(REDIS_VARIANTS))
def test_redis_file_loads_at_start(server, server_factory, tmp_path_factory, variant):
    peer = Server("redis", 1, tmp_path_factory.mktemp("peer"), REDIS_VARIANTS[variant])
    peer.start()
    try:
        pc = ph.bclient(peer)
        ph.populate_dataset(pc, random.Random(2002))
        expected = ph.capture(pc)
        assert pc.execute_command("SAVE") in (True, b"OK")
        pc.close()
    finally:
        peer.stop()
    if variant == "nochecksum":
        assert (peer.workdir / "dump.rdb").read_bytes()[-8:] == b"\0" * 8
    srv = server_factory(start=False)
    shutil.copyfile(peer.workdir / "dump.rdb", dump_path(srv))
    c = ph.restart(srv)
    ph.assert_captures_equal(expected, ph.capture(c), "redis vs ours loading redis's file")


def test_info_counts_loaded_keys(server, server_factory, tmp_path_factory):
    """INFO persistence reports the keys of the last load (Redis 7.0's field names)."""
    peer = Server("redis", 1, tmp_path_factory.mktemp("peer"), [])
    peer.start()
    try:
        pc = ph.bclient(peer)
        pc.execute_command("DEBUG", "POPULATE", 1000)
        # Saved while logically expired (nothing touched it), dropped at load.
        pc.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", 0)
        expire_at = int(time.time() * 1000) + 2
        pc.set("gone", "x", pxat=expire_at)
        wait_until(lambda: time.time() * 1000 > expire_at + 5, what="the clock")
        assert pc.execute_command("SAVE") in (True, b"OK")
    finally:
        peer.stop()
    assert ph.check_rdb(peer.workdir / "dump.rdb").keys == 1001
    srv = server_factory(start=False)
    shutil.copyfile(peer.workdir / "dump.rdb", dump_path(srv))
    c = ph.restart(srv)
    info = ph.info_persistence(c)
    assert info["rdb_last_load_keys_loaded"] == "1000", info
    assert info["rdb_last_load_keys_expired"] == "1", info
    assert c.dbsize() == 1000


# ---- SAVE, restart, SHUTDOWN, SIGTERM -----------------------------------------------------------

@pytest.mark.needs_lists
def test_save_then_restart_keeps_the_data(server, server_factory):
    srv, c = start(server_factory, server)
    ph.populate_dataset(c, random.Random(3003), big=False)
    expected = ph.capture(c)
    assert c.execute_command("SAVE") in (True, b"OK")
    c.set("after-save", "lost: no save schedule, so SIGTERM does not save")
    c.close()
    c = ph.restart(srv)
    ph.assert_captures_equal(expected, ph.capture(c), "before SAVE vs after restart")


def test_shutdown_with_a_schedule_saves(server, server_factory):
    srv, c = start(server_factory, server, save="3600 1")
    c.set("k", "v")
    c.execute_command("DEBUG", "POPULATE", 1000)
    assert shutdown(srv) is None
    assert dump_path(srv).exists()
    c = ph.restart(srv)
    assert c.get("k") == b"v" and c.dbsize() == 1001


def test_shutdown_nosave_does_not_save(server, server_factory):
    srv, c = start(server_factory, server, save="3600 1")
    c.set("saved", "1")
    assert c.execute_command("SAVE") in (True, b"OK")
    c.set("unsaved", "1")
    assert shutdown(srv, "NOSAVE") is None
    c = ph.restart(srv)
    assert c.get("saved") == b"1"
    assert c.exists("unsaved") == 0


def test_shutdown_save_without_a_schedule(server, server_factory):
    srv, c = start(server_factory, server)
    c.set("k", "v")
    assert not dump_path(srv).exists()
    assert shutdown(srv, "SAVE") is None
    c = ph.restart(srv)
    assert c.get("k") == b"v"


def test_shutdown_without_a_schedule_does_not_save(server, server_factory):
    srv, c = start(server_factory, server)
    c.set("k", "v")
    assert shutdown(srv) is None
    assert not dump_path(srv).exists()


def test_sigterm_with_a_schedule_saves(server, server_factory):
    srv, c = start(server_factory, server, save="3600 1")
    c.set("k", "v")
    c.close()
    srv.proc.send_signal(signal.SIGTERM)
    assert srv.proc.wait(timeout=60) == 0
    c = ph.restart(srv)
    assert c.get("k") == b"v"


def test_shutdown_refused_when_the_save_fails(server, server_factory):
    srv, c = start(server_factory, server, save="3600 1")
    c.set("k", "v")
    dump_path(srv).mkdir()  # rename() onto a directory fails, also for root
    reply = shutdown(srv)
    assert reply == Error(ph.ERR_SHUTDOWN)
    srv.assert_alive()
    assert c.get("k") == b"v"
    assert ph.temp_files(srv.workdir) == []
    assert shutdown(srv, "NOSAVE") is None
    assert dump_path(srv).is_dir()


# ---- LASTSAVE, BGSAVE replies, INFO persistence ---------------------------------------------

def test_lastsave_moves_with_save_and_bgsave(server, server_factory):
    srv, c = start(server_factory, server)
    t0 = ph.lastsave(c)
    assert abs(t0 - time.time()) < 60  # the start-up time
    ph.wait_next_second(t0)
    assert c.execute_command("SAVE") in (True, b"OK")
    t1 = ph.lastsave(c)
    assert t1 > t0
    ph.wait_next_second(t1)
    ph.bgsave_and_wait(c)
    assert ph.lastsave(c) > t1


def big_dataset(c, keys=200000):
    """A dataset large enough that a BGSAVE takes more than a few milliseconds."""
    assert c.execute_command("DEBUG", "POPULATE", keys) in (True, b"OK")


def test_bgsave_replies_while_one_runs(server, server_factory):
    srv, c = start(server_factory, server)
    big_dataset(c)
    raw = srv.raw(timeout=60)
    # One write: the second command reaches the server while the first BGSAVE runs.
    replies = raw.pipeline([("BGSAVE",), ("BGSAVE",), ("SAVE",), ("BGSAVE", "SCHEDULE"),
                            ("INFO", "persistence")])
    assert replies[0] == ph.BGSAVE_STARTED
    assert replies[1] == Error(ph.ERR_BGSAVE_IN_PROGRESS)
    assert replies[2] == Error(ph.ERR_BGSAVE_IN_PROGRESS)
    # Redis 7.0 schedules only while another kind of child (an AOF rewrite) runs; with a
    # BGSAVE running, BGSAVE SCHEDULE is refused like BGSAVE.
    assert replies[3] == Error(ph.ERR_BGSAVE_IN_PROGRESS)
    assert "rdb_bgsave_in_progress:1" in replies[4].decode()
    assert "rdb_current_bgsave_time_sec:-1" not in replies[4].decode()
    info = ph.wait_bgsave_done(c)
    assert info["rdb_last_bgsave_status"] == "ok"
    assert int(info["rdb_last_bgsave_time_sec"]) >= 0
    assert info["rdb_current_bgsave_time_sec"] == "-1"
    assert ph.check_rdb(dump_path(srv)).keys == 200000
    # Idle again: BGSAVE SCHEDULE starts one at once.
    assert raw.call("BGSAVE", "SCHEDULE") == ph.BGSAVE_STARTED
    ph.wait_bgsave_done(c)
    assert raw.call("BGSAVE", "NOW") == Error("ERR syntax error")
    raw.close()


def test_bgsave_inside_exec_is_scheduled(server, server_factory):
    srv, c = start(server_factory, server)
    c.set("k", "v")
    raw = srv.raw()
    assert raw.pipeline([("MULTI",), ("BGSAVE",), ("EXEC",)]) == [
        "OK", "QUEUED", [ph.BGSAVE_SCHEDULED]]
    raw.close()
    # The scheduled save runs soon after: the write counter drops to 0 and the file appears.
    wait_until(lambda: ph.info_persistence(c)["rdb_changes_since_last_save"] == "0"
                  and dump_path(srv).exists(), 10, what="the scheduled BGSAVE")
    ph.wait_bgsave_done(c)
    assert ph.check_rdb(dump_path(srv)).keys == 1


INFO_FIELDS = ["loading", "rdb_changes_since_last_save", "rdb_bgsave_in_progress",
               "rdb_last_save_time", "rdb_last_bgsave_status", "rdb_last_bgsave_time_sec",
               "rdb_current_bgsave_time_sec", "rdb_saves", "rdb_last_load_keys_expired",
               "rdb_last_load_keys_loaded"]


def test_info_persistence_fields(server, server_factory):
    started = int(time.time())
    srv, c = start(server_factory, server)
    info = ph.info_persistence(c)
    missing = [f for f in INFO_FIELDS if f not in info]
    assert missing == [], info
    assert info["loading"] == "0"
    assert info["rdb_bgsave_in_progress"] == "0"
    assert info["rdb_last_bgsave_status"] == "ok"
    assert info["rdb_changes_since_last_save"] == "0"
    assert info["rdb_last_bgsave_time_sec"] == "-1"
    assert info["rdb_current_bgsave_time_sec"] == "-1"
    assert info["rdb_saves"] == "0"
    assert started - 1 <= int(info["rdb_last_save_time"]) <= time.time() + 1
    assert int(info["rdb_last_save_time"]) == ph.lastsave(c)

    # Writes count, reads and no-op deletes do not.
    c.set("a", 1)
    c.set("b", 2)
    c.set("a", 3)
    c.get("a")
    c.delete("nosuch")
    assert ph.info_persistence(c)["rdb_changes_since_last_save"] == "3"
    assert c.execute_command("SAVE") in (True, b"OK")
    info = ph.info_persistence(c)
    assert info["rdb_changes_since_last_save"] == "0"
    assert info["rdb_saves"] == "1"
    assert int(info["rdb_last_save_time"]) == ph.lastsave(c)

    # A BGSAVE forgets the writes it saved, not those made while it ran.
    big_dataset(c)
    raw = srv.raw(timeout=60)
    replies = raw.pipeline([("BGSAVE",), ("SET", "during1", "x"), ("SET", "during2", "x")])
    raw.close()
    assert replies == [ph.BGSAVE_STARTED, "OK", "OK"]
    info = ph.wait_bgsave_done(c)
    assert info["rdb_last_bgsave_status"] == "ok"
    assert info["rdb_changes_since_last_save"] == "2"
    assert info["rdb_saves"] == "2"
    assert int(info["rdb_last_bgsave_time_sec"]) >= 0


# ---- loading at start: damage, missing file, CRC 0, DEBUG RELOAD --------------------------------

def _damage(data, kind):
    if kind == "truncated":
        return data[:len(data) // 2]
    if kind == "no-crc":
        return data[:-8]
    if kind == "crc-flipped":
        return data[:-1] + bytes([data[-1] ^ 1])
    if kind == "version-11":
        return b"REDIS0011" + data[9:]
    if kind == "not-rdb":
        return b"hello world, this is not an RDB file\n"
    raise AssertionError(kind)


@pytest.mark.parametrize("damage", ["truncated", "no-crc", "crc-flipped", "version-11",
                                    "not-rdb"])
def test_a_damaged_file_stops_the_start(server, server_factory, damage):
    src, c = start(server_factory, server)
    c.execute_command("DEBUG", "POPULATE", 2000)
    c.set("ttl", "x", ex=3600)
    assert c.execute_command("SAVE") in (True, b"OK")
    data = dump_path(src).read_bytes()

    srv = server_factory(start=False)
    dump_path(srv).write_bytes(_damage(data, damage))
    proc = srv.spawn(_free_port())
    try:
        rc = proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        pytest.fail("the server started on a damaged file (%s)" % damage)
    log = ph.server_log(srv)
    assert rc != 0, log[-3000:]
    if damage in ("truncated", "no-crc", "crc-flipped"):
        # Redis logs the checker's report, which names the offset of the damage.
        offsets = [int(m) for m in re.findall(r"offset (\d+)", log)]
        assert any(0 < o <= len(data) for o in offsets), log[-3000:]
    if damage == "version-11":
        assert "version 11" in log, log[-3000:]
    # The damaged file is left alone.
    assert dump_path(srv).read_bytes() == _damage(data, damage)


def test_a_missing_file_starts_empty(server, server_factory):
    srv, c = start(server_factory, server, dbfilename="nosuch.rdb")
    assert not (srv.workdir / "nosuch.rdb").exists()
    assert ph.info_persistence(c)["loading"] == "0"
    for db in range(16):
        assert ph.bclient(srv, db).dbsize() == 0


@pytest.mark.needs_lists
def test_a_file_with_crc_zero_loads(server, server_factory):
    src, c = start(server_factory, server)
    ph.populate_dataset(c, random.Random(4004), big=False)
    expected = ph.capture(c)
    assert c.execute_command("SAVE") in (True, b"OK")
    data = dump_path(src).read_bytes()
    assert data[-8:] != b"\0" * 8
    srv = server_factory(start=False)
    dump_path(srv).write_bytes(data[:-8] + b"\0" * 8)
    c = ph.restart(srv)
    ph.assert_captures_equal(expected, ph.capture(c), "before vs loaded with CRC 0")


@pytest.mark.needs_lists
def test_debug_reload_keeps_the_data(server, server_factory):
    srv, c = start(server_factory, server)
    ph.populate_dataset(c, random.Random(5005))
    expected = ph.capture(c)
    assert c.execute_command("DEBUG", "RELOAD") in (True, b"OK")
    ph.assert_captures_equal(expected, ph.capture(c), "before vs after DEBUG RELOAD")
    # DEBUG RELOAD saved the file it reloaded.
    check = ph.check_rdb(dump_path(srv))
    assert check.rc == 0 and check.keys == len(expected), check.output[-2000:]


def test_debug_reload_options(server, server_factory):
    """NOSAVE reloads the file as it is (what was written since is gone); NOFLUSH MERGE adds the
    file's keys to the dataset, the file's values winning; an unknown option is refused."""
    srv, c = start(server_factory, server)
    c.set("a", "1")
    assert c.execute_command("SAVE") in (True, b"OK")
    c.set("a", "2")
    c.set("b", "2")
    assert c.execute_command("DEBUG", "RELOAD", "NOSAVE") in (True, b"OK")
    assert c.get("a") == b"1" and c.get("b") is None
    c.set("a", "3")
    c.set("c", "3")
    assert c.execute_command("DEBUG", "RELOAD", "NOSAVE", "NOFLUSH", "MERGE") in (True, b"OK")
    assert (c.get("a"), c.get("c")) == (b"1", b"3")
    with pytest.raises(redis.ResponseError, match="^DEBUG RELOAD only supports the MERGE, "
                       "NOFLUSH and NOSAVE options.$"):
        c.execute_command("DEBUG", "RELOAD", "NOSAVE", "SOON")


def test_shutdown_argument_errors(server, server_factory):
    srv, c = start(server_factory, server)
    with pytest.raises(redis.ResponseError, match="^No shutdown in progress.$"):
        c.execute_command("SHUTDOWN", "ABORT")
    for args in (("NOSAVE", "SAVE"), ("ABORT", "NOW"), ("LATER",)):
        with pytest.raises(redis.ResponseError, match="^syntax error$"):
            c.execute_command("SHUTDOWN", *args)
    assert c.ping()


# ---- FLUSHALL, CONFIG SET dir/dbfilename -------------------------------------------------------

def test_flushall_with_a_schedule_saves_an_empty_file(server, server_factory):
    srv, c = start(server_factory, server, save="3600 1")
    c.execute_command("DEBUG", "POPULATE", 100)
    assert c.execute_command("SAVE") in (True, b"OK")
    assert ph.check_rdb(dump_path(srv)).keys == 100
    assert c.flushall() is True
    check = ph.check_rdb(dump_path(srv))
    assert check.rc == 0 and check.keys == 0, check.output[-2000:]
    c = ph.restart(srv)
    assert c.dbsize() == 0


def test_flushall_without_a_schedule_leaves_the_file(server, server_factory):
    srv, c = start(server_factory, server)
    c.execute_command("DEBUG", "POPULATE", 100)
    assert c.execute_command("SAVE") in (True, b"OK")
    data = dump_path(srv).read_bytes()
    assert c.flushall() is True
    assert dump_path(srv).read_bytes() == data


def test_config_set_dir_and_dbfilename_then_save(server, server_factory):
    srv, c = start(server_factory, server, protected="yes")
    elsewhere = srv.workdir / "elsewhere"
    elsewhere.mkdir()
    assert c.config_set("dir", str(elsewhere)) is True
    assert ph.raw_call(c, "CONFIG", "GET", "dir") == [b"dir", str(elsewhere).encode()]
    assert c.config_set("dbfilename", "other.rdb") is True
    c.set("k", "v")
    assert c.execute_command("SAVE") in (True, b"OK")
    assert not dump_path(srv).exists()
    assert ph.check_rdb(elsewhere / "other.rdb").keys == 1
    ph.bgsave_and_wait(c)
    assert ph.temp_files(elsewhere) == []
    with pytest.raises(redis.ResponseError, match="No such file or directory"):
        c.config_set("dir", str(srv.workdir / "nosuch"))


def test_dir_is_protected_by_default(server, server_factory):
    srv, c = start(server_factory, server)
    with pytest.raises(redis.ResponseError) as e:
        c.config_set("dir", str(srv.workdir))
    assert "ERR " + str(e.value) == ph.ERR_PROTECTED_DIR
    with pytest.raises(redis.ResponseError, match="can't set protected config"):
        c.config_set("dbfilename", "x.rdb")


# ---- stop-writes-on-bgsave-error ---------------------------------------------------------------

class SaveBreaker:
    """Makes saves fail in a way root cannot bypass, and repairs it. Modes:
    "target-is-dir": a directory sits where the dump file goes, so rename() fails (EISDIR);
    "dir-removed": `dir` is set to a directory that is then removed, so the temp file cannot
    be created (ENOENT)."""

    def __init__(self, srv, c, mode):
        self.srv, self.c, self.mode = srv, c, mode
        self.sub = srv.workdir / "sub"
        self.broken = False

    def __enter__(self):
        self.setup()
        return self

    def __exit__(self, *exc):
        # Leave a server that can save: it saves at shutdown when it has a schedule.
        if self.broken:
            self.repair()
        return False

    def dump_dir(self):
        return self.sub if self.mode == "dir-removed" else self.srv.workdir

    def setup(self):
        if self.mode == "dir-removed":
            self.sub.mkdir()
            assert self.c.config_set("dir", str(self.sub)) is True

    def break_(self):
        self.broken = True
        if self.mode == "target-is-dir":
            (self.srv.workdir / "dump.rdb").mkdir()
        else:
            self.sub.rmdir()

    def repair(self):
        self.broken = False
        if self.mode == "target-is-dir":
            (self.srv.workdir / "dump.rdb").rmdir()
        else:
            self.sub.mkdir()
            assert self.c.config_set("dir", str(self.sub)) is True


def failed_bgsave(c):
    assert ph.raw_call(c, "BGSAVE") == ph.BGSAVE_STARTED
    info = ph.wait_bgsave_done(c)
    assert info["rdb_last_bgsave_status"] == "err", info
    return info


@pytest.mark.parametrize("mode", ["target-is-dir", "dir-removed"])
def test_stop_writes_on_bgsave_error(server, server_factory, mode):
    srv, c = start(server_factory, server, save="3600 1", protected="yes")
    with SaveBreaker(srv, c, mode) as brk:
        c.set("k", "v")
        brk.break_()
        failed_bgsave(c)
        if mode == "target-is-dir":
            assert ph.temp_files(srv.workdir) == []  # the failed save cleaned up
        with pytest.raises(redis.ResponseError) as e:
            c.set("k", "w")
        assert str(e.value) == ph.MISCONF
        with pytest.raises(redis.ResponseError, match="^MISCONF "):
            c.delete("k")
        assert c.get("k") == b"v"  # reads still work
        reply = ph.raw_call(c, "SAVE")
        assert isinstance(reply, Error) and reply.startswith("ERR"), reply  # Redis: "-ERR"
        brk.repair()
        ph.bgsave_and_wait(c)
        assert c.set("k", "w") is True
        assert ph.check_rdb(brk.dump_dir() / "dump.rdb").keys == 1


def test_a_good_save_clears_the_error(server, server_factory):
    srv, c = start(server_factory, server, save="3600 1")
    with SaveBreaker(srv, c, "target-is-dir") as brk:
        c.set("k", "v")
        brk.break_()
        failed_bgsave(c)
        brk.repair()
        assert c.execute_command("SAVE") in (True, b"OK")  # a foreground SAVE clears it too
        assert ph.info_persistence(c)["rdb_last_bgsave_status"] == "ok"
        assert c.set("k", "w") is True


def test_misconf_needs_a_schedule_and_the_option(server, server_factory):
    srv, c = start(server_factory, server, save="3600 1")
    with SaveBreaker(srv, c, "target-is-dir") as brk:
        brk.break_()
        failed_bgsave(c)
        with pytest.raises(redis.ResponseError, match="^MISCONF "):
            c.set("k", "v")
        assert c.config_set("stop-writes-on-bgsave-error", "no") is True
        assert c.set("k", "v") is True
        assert c.config_set("stop-writes-on-bgsave-error", "yes") is True
        with pytest.raises(redis.ResponseError, match="^MISCONF "):
            c.set("k", "v")
        # Without a save schedule Redis does not stop writes, whatever the last status.
        assert c.config_set("save", "") is True
        assert c.set("k", "v2") is True
        assert ph.info_persistence(c)["rdb_last_bgsave_status"] == "err"


def test_misconf_also_refuses_ping(server, server_factory):
    """Redis 7.0 refuses PING with MISCONF too (processCommand treats it like a write), so
    that health checks see the disk error."""
    srv, c = start(server_factory, server, save="3600 1")
    with SaveBreaker(srv, c, "target-is-dir") as brk:
        brk.break_()
        failed_bgsave(c)
        with pytest.raises(redis.ResponseError) as e:
            c.ping()
        assert str(e.value) == ph.MISCONF
