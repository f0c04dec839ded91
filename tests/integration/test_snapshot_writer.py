"""The snapshot file writer: the thread that compresses, checksums and writes a save's file runs
at a lower priority than the threads serving clients (dashkv only: a fork-based Redis has no
such thread)."""

import os

import pytest


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
