#!/usr/bin/env python3
"""GEO commands, dashkv vs redis-server side by side (issue 21).

For each server (pinned to CPU 0 with taskset, --threads 1; the load generator on CPU 1): fills
a geo set of --members points spread uniformly over a 2x2 degree square (about 220 km wide;
pipelined GEOADD of 1000 points per command), then measures ops/s and server CPU per operation
(utime+stime from /proc/<pid>/stat) of redis-benchmark runs at pipeline 1 and 16:
GEOADD of random members, GEOSEARCH around a random member (radius 5 km, COUNT 10, and a
10x10 km box), GEORADIUSBYMEMBER, GEOPOS and GEODIST. Prints a markdown table; --out writes it.

Usage: bench/e2e/geo.py --dashkv build/dashkv [--members 100000] [--requests 100000]
"""

import argparse
import os
import random
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sets_zsets import Conn, cpu_seconds, free_port, start  # noqa: E402


def fill(c, members, batch=1000):
    rng = random.Random(1)
    pending = 0
    for first in range(0, members, batch):
        args = ["GEOADD", "geo"]
        for i in range(first, min(members, first + batch)):
            args += ["%.6f" % rng.uniform(1, 3), "%.6f" % rng.uniform(40, 42), "m:%d" % i]
        c.send(*args)
        pending += 1
        if pending == 32:
            for _ in range(pending):
                c.read()
            pending = 0
    for _ in range(pending):
        c.read()


def run_bench(port, pid, requests, keyspace, pipeline, cmd):
    before = cpu_seconds(pid)
    out = subprocess.run(["taskset", "-c", "1", "redis-benchmark", "-p", str(port), "-n",
                          str(requests), "-c", "50", "-P", str(pipeline), "-r", str(keyspace),
                          "--csv"] + cmd.split(),
                         capture_output=True, text=True, timeout=600).stdout
    cpu = cpu_seconds(pid) - before
    rps = float(out.strip().splitlines()[-1].split(",")[1].strip('"'))
    return rps, cpu / requests * 1e6


# The queries name members "p:<12 digits>", the form __rand_int__ produces (fill_padded adds
# them); GEOADD adds or moves "n:<12 digits>" members.
COMMANDS = [
    ("GEOADD (new and existing members)",
     "GEOADD geo 2.__rand_int__ 41.__rand_int__ n:__rand_int__"),
    ("GEOSEARCH FROMMEMBER BYRADIUS 5 km ASC COUNT 10",
     "GEOSEARCH geo FROMMEMBER p:__rand_int__ BYRADIUS 5 km ASC COUNT 10"),
    ("GEOSEARCH FROMMEMBER BYBOX 10 10 km",
     "GEOSEARCH geo FROMMEMBER p:__rand_int__ BYBOX 10 10 km"),
    ("GEORADIUSBYMEMBER 5 km WITHDIST",
     "GEORADIUSBYMEMBER geo p:__rand_int__ 5 km WITHDIST"),
    ("GEOPOS", "GEOPOS geo p:__rand_int__"),
    ("GEODIST", "GEODIST geo p:__rand_int__ m:1 km"),
]


def fill_padded(c, count):
    """Adds members p:<12-digit i> for i < count (the names __rand_int__ produces)."""
    rng = random.Random(2)
    for first in range(0, count, 1000):
        args = ["GEOADD", "geo"]
        for i in range(first, min(count, first + 1000)):
            args += ["%.6f" % rng.uniform(1, 3), "%.6f" % rng.uniform(40, 42), "p:%012d" % i]
        c.call(*args)


def measure(kind, binary, members, requests):
    port = free_port()
    with tempfile.TemporaryDirectory() as wd:
        proc = start(kind, binary, port, wd)
        try:
            c = Conn(port)
            fill(c, members)
            padded = min(members, 10000)
            fill_padded(c, padded)
            res = {}
            for pipeline in (1, 16):
                for name, cmd in COMMANDS:
                    res[(name, pipeline)] = run_bench(port, proc.pid, requests, padded, pipeline,
                                                      cmd)
            return res
        finally:
            proc.terminate()
            proc.wait(timeout=10)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dashkv", default="build/dashkv")
    ap.add_argument("--redis", default="redis-server")
    ap.add_argument("--members", type=int, default=100000)
    ap.add_argument("--requests", type=int, default=100000)
    ap.add_argument("--out")
    a = ap.parse_args()
    results = {k: measure(k, b, a.members, a.requests)
               for k, b in (("dashkv", a.dashkv), ("redis", a.redis))}
    d, r = results["dashkv"], results["redis"]
    lines = ["| command (%d points) | pipeline | dashkv ops/s, CPU us/op | redis 7.0 ops/s, "
             "CPU us/op |" % a.members, "|---|---|---|---|"]
    for pipeline in (1, 16):
        for name, _ in COMMANDS:
            dk, rk = d[(name, pipeline)], r[(name, pipeline)]
            lines.append("| %s | %d | %.0f, %.2f | %.0f, %.2f |"
                         % (name, pipeline, dk[0], dk[1], rk[0], rk[1]))
    text = "\n".join(lines)
    print(text)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    sys.exit(main())
