"""The snapshot file writer: the thread that compresses, checksums and writes a save's file runs
at a lower priority than the threads serving clients (dashkv only: a fork-based Redis has no
such thread); values LZF shortens are stored compressed (Redis's rdbcompression yes), also
where the writer gives up early on values whose first bytes do not compress (RdbLzf::kProbe),
and the file stays one redis-check-rdb accepts."""

import os
import random
import threading

import pytest

import persistence_helpers as ph


def thread_nice(pid):
    """{thread id: niceness} of every thread of process `pid` (/proc/PID/task/TID/stat field
    19)."""
    out = {}
    for tid in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/stat" % (pid, tid)) as f:
                stat = f.read()
        except OSError:
            continue  # the thread ended meanwhile
        fields = stat[stat.rindex(")") + 2:].split()  # field 3 (state) onwards
        out[int(tid)] = int(fields[19 - 3])
    return out


def test_only_the_writer_thread_is_niced(server):
    if server.kind != "dashkv":
        pytest.skip("a dashkv thread")
    nice = thread_nice(server.proc.pid)
    own = nice[server.proc.pid]  # the main thread's: what the process was started with
    if own >= 10:
        pytest.skip("started at nice %d: no room below it" % own)
    lowered = [tid for tid, n in nice.items() if n == min(own + 10, 19)]
    assert len(lowered) == 1, nice
    # Every other thread (engines, the background engine, main) keeps the process's priority.
    assert all(n == own for tid, n in nice.items() if tid not in lowered), nice


KEYS = 20000
VALUE_BYTES = 1000


def json_value(i):
    """About 1 KB of JSON records, the kind of value an application caches: field names repeat
    in every record, the values differ."""
    out, n = [], 0
    while n < VALUE_BYTES:
        rec = '{"id":%d,"name":"user%d","email":"user%d@example.com","active":%s,"score":%d}' % (
            i * 1000 + n, i + n, i * 7 + n, "true" if (i + n) % 3 else "false", (i * 31 + n) % 997)
        out.append(rec)
        n += len(rec) + 1
    return ("[" + ",".join(out) + "]")[:VALUE_BYTES].encode()


def random_value(i):
    return random.Random(i).randbytes(VALUE_BYTES)


# The file's size against the keys' and values' bytes (measured with SAVE, the same with
# redis-server 7.0.15 as with dashkv): a 1000-byte run 0.03x (LZF stores it in ~15 bytes), these
# JSON records 0.39x; random bytes stay raw (1.004x: the encoding's lengths and the file's
# framing).
VALUES = {"run": (lambda i: b"x" * VALUE_BYTES, 0.05), "json": (json_value, 0.5),
          "random": (random_value, None)}


def fill(c, make):
    pipe = c.pipeline(transaction=False)
    raw = 0
    for i in range(KEYS):
        k, v = b"key:%d" % i, make(i)
        pipe.set(k, v)
        raw += len(k) + len(v)
        if i % 1000 == 999:
            pipe.execute()
    pipe.execute()
    return raw


def bgsave_under_writes(srv, c, make):
    """BGSAVE while a client overwrites the keys with values of the same kind, so that writes
    hand the entries they change to the writer uncompressed (its deferred LZF)."""
    stop = threading.Event()

    def overwrite():
        w = ph.bclient(srv)
        rng = random.Random(7)
        while not stop.is_set():
            i = rng.randrange(KEYS)
            w.set(b"key:%d" % i, make(i))
        w.close()

    t = threading.Thread(target=overwrite)
    t.start()
    try:
        ph.bgsave_and_wait(c)
    finally:
        stop.set()
        t.join()


@pytest.mark.parametrize("how", ["SAVE", "BGSAVE under writes"])
@pytest.mark.parametrize("kind", sorted(VALUES))
def test_values_lzf_shortens_are_compressed(server, server_factory, kind, how):
    make, limit = VALUES[kind]
    srv = server_factory(extra_args=ph.persistence_args(server.kind))
    c = ph.bclient(srv)
    raw = fill(c, make)
    if how == "SAVE":
        assert c.execute_command("SAVE") in (True, b"OK")
    else:
        bgsave_under_writes(srv, c, make)
    path = srv.workdir / "dump.rdb"
    size = path.stat().st_size
    if limit is None:
        assert size > raw, (size, raw)
    else:
        assert size < limit * raw, (size, raw)
    check = ph.check_rdb(path)
    assert check.rc == 0, check.output[-3000:]
    assert check.keys == KEYS, check.output[-3000:]
