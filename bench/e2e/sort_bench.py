#!/usr/bin/env python3
"""SORT, dashkv vs redis-server side by side (issue 21).

For each server:
  1. throughput and server CPU per operation (utime+stime from /proc/<pid>/stat) of
     redis-benchmark runs of SORT on a 100-element list of random integers: plain, BY a weight
     pattern (100 weight keys, spread over every shard), BY + GET pattern, and LIMIT 0 10;
  2. a SORT of a --big element list (plain, and BY a pattern whose keys mostly do not exist):
     its wall time, and the worst latency another client saw meanwhile for a GET and a SET of
     keys elsewhere (dashkv: on other shards) — what "stalling the other shards" costs.
Prints a markdown table; --out writes it to a file. Standard library only (plus redis-benchmark).

Usage: bench/e2e/sort_bench.py --dashkv build/dashkv [--threads 2] [--requests 100000]
       [--big 1000000]
"""

import argparse
import os
import random
import subprocess
import sys
import tempfile
import threading
import time


sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sets_zsets import Conn, cpu_seconds, free_port  # noqa: E402


def start(kind, exe, threads, workdir):
    port = free_port()
    if kind == "redis":
        argv = ["redis-server", "--port", str(port), "--save", "", "--appendonly", "no",
                "--dir", workdir]
    else:
        argv = [exe, "--port", str(port), "--threads", str(threads), "--save", "", "--dir",
                workdir]
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(200):
        try:
            c = Conn(port)
            c.call("PING")
            return proc, port, c
        except OSError:
            time.sleep(0.05)
    raise RuntimeError("%s did not start" % kind)


def bench(port, pid, requests, args):
    cpu0 = cpu_seconds(pid)
    out = subprocess.run(["redis-benchmark", "-p", str(port), "-n", str(requests), "-c", "50",
                          "-q"] + args, capture_output=True, text=True, check=True).stdout
    cpu = cpu_seconds(pid) - cpu0
    rps = float(out.split("requests per second")[0].rsplit(":", 1)[1].strip().split()[0])
    return rps, cpu / requests * 1e6


def big_sort(port, c, n, args):
    """Times SORT big <args> on `c` while another client GETs and SETs keys (other shards);
    returns (seconds, worst GET latency, worst SET latency) in ms."""
    stop = threading.Event()
    worst = {"GET": 0.0, "SET": 0.0}

    def prober():
        p = Conn(port)
        i = 0
        while not stop.is_set():
            for cmd in ("GET", "SET"):
                args2 = [cmd, "probe%d" % (i % 64)] + (["v"] if cmd == "SET" else [])
                t0 = time.perf_counter()
                p.call(*args2)
                worst[cmd] = max(worst[cmd], (time.perf_counter() - t0) * 1e3)
            i += 1
            time.sleep(0.001)

    th = threading.Thread(target=prober)
    th.start()
    time.sleep(0.05)
    t0 = time.perf_counter()
    reply = c.call("SORT", "big", *args)
    secs = time.perf_counter() - t0
    stop.set()
    th.join()
    assert reply is not None
    return secs, worst["GET"], worst["SET"]


def run(kind, exe, threads, requests, big):
    with tempfile.TemporaryDirectory() as d:
        proc, port, c = start(kind, exe, threads, d)
        try:
            rnd = random.Random(1)
            vals = [rnd.randrange(1 << 30) for _ in range(100)]
            c.call("RPUSH", "l", *vals)
            for v in vals:
                c.call("SET", "w_%d" % v, rnd.randrange(1000))
                c.call("SET", "g_%d" % v, "value%d" % v)
            rows = []
            for name, args in (("SORT l", ["SORT", "l"]),
                               ("SORT l BY w_*", ["SORT", "l", "BY", "w_*"]),
                               ("SORT l BY w_* GET g_*", ["SORT", "l", "BY", "w_*", "GET",
                                                          "g_*"]),
                               ("SORT l LIMIT 0 10", ["SORT", "l", "LIMIT", "0", "10"])):
                rps, us = bench(port, proc.pid, requests, args)
                rows.append((name, rps, us))
            for start_i in range(0, big, 10000):
                c.send("RPUSH", "big", *[rnd.randrange(1 << 40)
                                         for _ in range(min(10000, big - start_i))])
            for start_i in range(0, big, 10000):
                c.read()
            bigs = []
            for name, args in (("SORT big LIMIT 0 10", ["LIMIT", "0", "10"]),
                               ("SORT big BY w_* LIMIT 0 10", ["BY", "w_*", "LIMIT", "0", "10"])):
                bigs.append((name,) + big_sort(port, c, big, args))
            return rows, bigs
        finally:
            proc.terminate()
            proc.wait()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dashkv", required=True)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--requests", type=int, default=100000)
    ap.add_argument("--big", type=int, default=1000000)
    ap.add_argument("--out")
    a = ap.parse_args()
    mine = run("dashkv", a.dashkv, a.threads, a.requests, a.big)
    ref = run("redis", None, 1, a.requests, a.big)
    lines = ["| command (100-element list, 50 clients) | dashkv t%d ops/s | redis ops/s | "
             "dashkv CPU µs/op | redis CPU µs/op |" % a.threads, "|---|---|---|---|---|"]
    for (name, rps, us), (_, rrps, rus) in zip(mine[0], ref[0]):
        lines.append("| %s | %.0f | %.0f | %.1f | %.1f |" % (name, rps, rrps, us, rus))
    lines += ["", "| %d-element list | dashkv s | redis s | dashkv worst GET / SET ms | "
              "redis worst GET / SET ms |" % a.big, "|---|---|---|---|---|"]
    for (name, s, g, w), (_, rs, rg, rw) in zip(mine[1], ref[1]):
        lines.append("| %s | %.2f | %.2f | %.0f / %.0f | %.0f / %.0f |" % (name, s, rs, g, w,
                                                                           rg, rw))
    text = "\n".join(lines)
    print(text)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
