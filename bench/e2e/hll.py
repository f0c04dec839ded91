#!/usr/bin/env python3
"""HyperLogLog commands, dashkv vs redis-server side by side (issue 21).

For each server (pinned to CPU 0 with taskset; redis-benchmark on CPU 1): two dense
HyperLogLogs of 100000 elements each, then redis-benchmark runs (-c 50) of
  PFADD into one dense key (P1 and P16), PFADD into 10000 small sparse keys, PFCOUNT of the
  dense key (its cache is valid: a header read), PFCOUNT of both dense keys (a union: merge
  and estimate, never cached), PFMERGE of both into a third key;
reporting ops/s and server CPU per operation (utime+stime from /proc/<pid>/stat). Before the
runs it checks that both servers hold the same bytes and give the same union count.
Prints a markdown table; --out writes it to a file. Standard library only.

Usage: bench/e2e/hll.py --dashkv build/dashkv [--requests 200000]
"""

import argparse
import hashlib
import os
import subprocess
import sys
import tempfile
import time


sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sets_zsets import Conn, cpu_seconds, free_port  # noqa: E402


def fill(c, key, start, count, batch=1000):
    for lo in range(start, start + count, batch):
        c.send("PFADD", key, *["e:%d" % i for i in range(lo, min(start + count, lo + batch))])
    for _ in range(0, count, batch):
        c.read()


def start_server(kind, binary, port, workdir):
    if kind == "dashkv":
        argv = [binary, "--port", str(port), "--threads", "1", "--save", ""]
    else:
        argv = [binary, "--port", str(port), "--save", "", "--appendonly", "no", "--dir", workdir]
    proc = subprocess.Popen(["taskset", "-c", "0"] + argv, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    for _ in range(100):
        try:
            Conn(port).call("PING")
            return proc
        except OSError:
            time.sleep(0.05)
    proc.kill()
    raise RuntimeError("%s did not start" % kind)


def run_bench(port, pid, requests, cmd, pipeline, keyspace):
    before = cpu_seconds(pid)
    out = subprocess.run(["taskset", "-c", "1", "redis-benchmark", "-p", str(port), "-n",
                          str(requests), "-c", "50", "-P", str(pipeline), "-r", str(keyspace),
                          "--csv"] + cmd.split(),
                         capture_output=True, text=True, timeout=600).stdout
    cpu = cpu_seconds(pid) - before
    rps = float(out.strip().splitlines()[-1].split(",")[1].strip('"'))
    return rps, cpu / requests * 1e6


# (label, command, pipeline, share of --requests, -r: the range of __rand_int__). The sparse
# keys get ~20 elements each from a range of 10000: they stay sparse.
COMMANDS = [
    ("PFADD dense key, P1", "PFADD hll:a e:__rand_int__", 1, 1, 1000000),
    ("PFADD dense key, P16", "PFADD hll:a e:__rand_int__", 16, 4, 1000000),
    ("PFADD 10000 sparse keys, P1", "PFADD s:__rand_int__ e:__rand_int__", 1, 1, 10000),
    ("PFCOUNT dense key (cached), P1", "PFCOUNT hll:a", 1, 1, 1),
    ("PFCOUNT 2 dense keys (union), P1", "PFCOUNT hll:a hll:b", 1, 0.25, 1),
    ("PFMERGE 2 dense keys, P1", "PFMERGE hll:m hll:a hll:b", 1, 0.25, 1),
]


def measure(kind, binary, requests):
    port = free_port()
    with tempfile.TemporaryDirectory() as wd:
        proc = start_server(kind, binary, port, wd)
        try:
            c = Conn(port)
            fill(c, "hll:a", 0, 100000)
            fill(c, "hll:b", 50000, 100000)
            c.call("PFCOUNT", "hll:a")
            digest = hashlib.sha1(c.call("GET", "hll:a") + c.call("GET", "hll:b"))
            res = {"state": (digest.hexdigest(), int(c.call("PFCOUNT", "hll:a", "hll:b")))}
            for name, cmd, pipeline, share, keyspace in COMMANDS:
                res[name] = run_bench(port, proc.pid, int(requests * share), cmd, pipeline,
                                      keyspace)
            return res
        finally:
            proc.terminate()
            proc.wait(timeout=10)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dashkv", default="build/dashkv")
    ap.add_argument("--redis", default="redis-server")
    ap.add_argument("--requests", type=int, default=200000)
    ap.add_argument("--out")
    a = ap.parse_args()
    results = {k: measure(k, b, a.requests)
               for k, b in (("dashkv", a.dashkv), ("redis", a.redis))}
    d, r = results["dashkv"], results["redis"]
    lines = ["| command | dashkv ops/s, server CPU us/op | redis 7.0 ops/s, server CPU us/op |",
             "|---|---|---|"]
    for name, *_ in COMMANDS:
        lines.append("| %s | %.0f, %.2f | %.0f, %.2f |"
                     % (name, d[name][0], d[name][1], r[name][0], r[name][1]))
    text = "\n".join(lines)
    print(text)
    if d["state"] != r["state"]:
        print("MISMATCH before the runs (sha1 of hll:a hll:b, PFCOUNT hll:a hll:b): dashkv %s, "
              "redis %s" % (d["state"], r["state"]))
        return 1
    if a.out:
        with open(a.out, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    sys.exit(main())
