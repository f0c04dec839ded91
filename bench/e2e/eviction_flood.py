#!/usr/bin/env python3
"""Memory under an eviction flood: how far used_memory and RSS go above maxmemory while a write
load far beyond the limit runs (issue 17: RSS at most 10% above maxmemory for the whole run).

Each server starts empty with `maxmemory` and `allkeys-lru` (or --policy), then
`redis-benchmark -t set -n N -r 1000000000 -d 100 -P 30 -c 20` writes about --factor times the
limit's worth of new keys while this script samples INFO used_memory and the process's RSS
(/proc/pid/status) every --interval seconds. Reported per server: the largest used_memory and
RSS seen, as a percentage over maxmemory, the RSS at the end, how far used_memory is under RSS
at the end (as a share of RSS), keys held and keys evicted. --trace writes every sample.

    python3 bench/e2e/eviction_flood.py --dashkv build-test/dashkv --threads 1 2 4
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare import (HOST, REDIS_ARGS, Server, info_field, machine_info,  # noqa: E402
                     proc_rss_bytes)


def sample_until(server, done, interval, samples):
    c = server.client()
    t0 = time.monotonic()
    try:
        while not done.is_set():
            mem = c.call("INFO", "memory")
            used = int(info_field(mem, "used_memory"))
            tables = info_field(mem, "used_memory_tables")
            samples.append((used, proc_rss_bytes(server.proc.pid), time.monotonic() - t0,
                            int(tables) if tables is not None else 0))
            time.sleep(interval)
    finally:
        c.close()


def flood(server, a):
    n = int(a.factor * a.maxmemory_bytes / a.value_size)
    argv = [a.redis_benchmark, "-h", HOST, "-p", str(server.port), "-t", "set", "-n", str(n),
            "-r", "1000000000", "-d", str(a.value_size), "-P", "30", "-c", "20", "-q"]
    samples, done = [], threading.Event()
    sampler = threading.Thread(target=sample_until, args=(server, done, a.interval, samples))
    sampler.start()
    try:
        subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, timeout=3600)
    finally:
        done.set()
        sampler.join()
    c = server.client()
    try:
        stats = c.call("INFO", "stats")
        dbsize = c.call("DBSIZE")
        used = int(info_field(c.call("INFO", "memory"), "used_memory"))
    finally:
        c.close()
    return {"max_used": max(s[0] for s in samples), "max_rss": max(s[1] for s in samples),
            "end_used": used, "end_rss": proc_rss_bytes(server.proc.pid), "keys": dbsize,
            "evicted": int(info_field(stats, "evicted_keys")), "samples": samples}


def run(label, argv, a):
    workdir = tempfile.mkdtemp(prefix="evict-flood-")
    server = Server(label, lambda port, wd: argv(port, wd), None, workdir, 60).start()
    try:
        r = flood(server, a)
        server.check_alive()
        return r
    finally:
        server.stop()
        shutil.rmtree(workdir, ignore_errors=True)


def pct_over(x, limit):
    return f"{100.0 * (x - limit) / limit:+.1f}%"


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--dashkv", required=True)
    p.add_argument("--redis", default=shutil.which("redis-server"))
    p.add_argument("--redis-benchmark", default=shutil.which("redis-benchmark"))
    p.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    p.add_argument("--maxmemory", default="100mb")
    p.add_argument("--policy", default="allkeys-lru")
    p.add_argument("--value-size", type=int, default=100)
    p.add_argument("--factor", type=float, default=2.5,
                   help="writes this many times the limit's worth of values")
    p.add_argument("--interval", type=float, default=0.1)
    p.add_argument("--runs", type=int, default=1)
    p.add_argument("--skip-redis", action="store_true")
    p.add_argument("--trace", help="writes every sample (seconds, used_memory, RSS, "
                   "used_memory_tables) of each run to TRACE-<server>-<run>.csv")
    a = p.parse_args(argv)
    a.dashkv = os.path.abspath(a.dashkv)
    units = {"kb": 1 << 10, "mb": 1 << 20, "gb": 1 << 30}
    m = a.maxmemory.lower()
    a.maxmemory_bytes = int(m[:-2]) * units[m[-2:]] if m[-2:] in units else int(m)

    common = ["--maxmemory", a.maxmemory, "--maxmemory-policy", a.policy]
    dashkv_common = ["--maxmemory", a.maxmemory, "--maxmemory_policy", a.policy]
    servers = []
    if not a.skip_redis:
        servers.append(("redis 7.0", lambda port, wd: [a.redis, "--port", str(port), "--bind",
                                                        HOST, "--dir", wd] + REDIS_ARGS + common))
    for t in a.threads:
        servers.append((f"dashkv --threads {t}",
                        lambda port, wd, t=t: [a.dashkv, "--port", str(port), "--bind", HOST,
                                               "--dir", wd, "--threads", str(t), "--save", ""]
                        + dashkv_common))
    for line in machine_info():
        print(f"# {line}")
    print(f"# maxmemory {a.maxmemory} {a.policy}, {a.value_size}-byte values, "
          f"{a.factor}x the limit written, sampled every {a.interval} s")
    print("| server | run | max used_memory | max RSS | RSS at end | RSS - used at end | keys held "
          "| evicted |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for label, argv_fn in servers:
        for run_no in range(1, a.runs + 1):
            r = run(label, argv_fn, a)
            lim = a.maxmemory_bytes
            if a.trace:
                name = f"{a.trace}-{label.replace(' ', '').replace('--', '-')}-{run_no}.csv"
                with open(name, "w") as f:
                    f.write("seconds,used_memory,rss,used_memory_tables\n")
                    for used, rss, t, tables in r["samples"]:
                        f.write(f"{t:.3f},{used},{rss},{tables}\n")
            print(f"| {label} | {run_no} | {pct_over(r['max_used'], lim)} | "
                  f"{pct_over(r['max_rss'], lim)} | {pct_over(r['end_rss'], lim)} | "
                  f"{100.0 * (r['end_rss'] - r['end_used']) / r['end_rss']:.1f}% | "
                  f"{r['keys']} | {r['evicted']} |", flush=True)


if __name__ == "__main__":
    main()
