#!/usr/bin/env python3
"""Server CPU per operation of MGET/MSET (10 keys) and MULTI/EXEC, with runs interleaved.

The workloads and measurements of transactions.py, but every server (redis-server and one or
more dashkv binaries) is started once and kept running, and the runs go round-robin: redis,
dashkv A, dashkv B, redis, ... --rounds times per workload. On a shared machine whose load
drifts, every server then sees the same drift, and the spread of the runs shows the noise.
Reports per server and workload the median, min and max server CPU s per million operations,
and the ratio of the medians to redis's.

Usage: bench/e2e/tx_interleaved.py --dashkv base=build-main/dashkv new=build/dashkv
         [--threads 2] [--work mget:16 mset:16 multi:1] [--rounds 5] [--seconds 3]
"""

import argparse
import os
import statistics
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare import REDIS_ARGS, BenchError, Server  # noqa: E402
from transactions import prefill, run_once  # noqa: E402


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--dashkv", nargs="+", required=True, help="label=binary ...")
    p.add_argument("--redis", default="redis-server")
    p.add_argument("--redis-benchmark", default="redis-benchmark")
    p.add_argument("--txload", default="build/bench/txload")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--work", nargs="+", default=["mget:16", "mset:16", "multi:1"],
                   help="test:pipeline ...")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--seconds", type=float, default=3.0, help="approximate length of a run")
    p.add_argument("--clients", type=int, default=50)
    p.add_argument("--keys", type=int, default=100_000)
    p.add_argument("--redis-cpus", default="0")
    p.add_argument("--redis-client-cpus", default="1")
    p.add_argument("--dashkv-cpus", default="0,1")
    p.add_argument("--run-timeout", type=float, default=180.0)
    return p.parse_args(argv)


def main(argv=None):
    a = parse_args(sys.argv[1:] if argv is None else argv)
    a.txload = os.path.abspath(a.txload)
    servers = []  # (label, Server, client cpus)
    with tempfile.TemporaryDirectory(prefix="dashkv-txi-") as wd:
        try:
            s = Server("redis", lambda port, d: [a.redis, "--port", str(port), "--bind",
                                                 "127.0.0.1", "--dir", d] + REDIS_ARGS,
                       a.redis_cpus, wd, 20.0)
            s.start()
            servers.append(("redis", s, a.redis_client_cpus))
            for spec in a.dashkv:
                label, binary = spec.split("=", 1)
                s = Server(label, lambda port, d, b=os.path.abspath(binary):
                           [b, "--port", str(port), "--bind", "127.0.0.1", "--dir", d,
                            "--threads", str(a.threads), "--save", ""], a.dashkv_cpus, wd, 20.0)
                s.start()
                servers.append((label, s, a.dashkv_cpus))
            for _, s, _ in servers:
                prefill(s, a)
            results = {}
            for work in a.work:
                test, pipeline = work.split(":")
                pipeline = int(pipeline)
                # Requests per run from a probe of redis (the same count for every server).
                probe = run_once(servers[0][1], test, pipeline, 20_000, a, a.redis_client_cpus)
                n = max(20_000, int(probe["ops_s"] * a.seconds))
                for rnd in range(a.rounds):
                    for label, s, ccpus in servers:
                        r = run_once(s, test, pipeline, n, a, ccpus)
                        results.setdefault((work, label), []).append(r)
                        print(f"# {work:>9} round {rnd} {label:>6}: {r['ops_s']:>10,.0f} ops/s "
                              f"cpu {r['cpu_s_per_mops']:.2f} s/Mops other {r['other']:.2f}",
                              file=sys.stderr)
            print_report(a, servers, results)
        finally:
            for _, s, _ in servers:
                s.stop()


def print_report(a, servers, results):
    print(f"CPU s per million operations, {a.rounds} interleaved rounds per workload, "
          f"dashkv --threads {a.threads}; median [min..max]; ratio = median / redis median\n")
    print("| workload | server | ops/s median | CPU s/Mops median [min..max] | ratio to redis |")
    print("|---|---|---:|---:|---:|")
    for work in a.work:
        redis_med = statistics.median(r["cpu_s_per_mops"] for r in results[(work, "redis")])
        for label, _, _ in servers:
            rs = results[(work, label)]
            cpu = [r["cpu_s_per_mops"] for r in rs]
            med = statistics.median(cpu)
            ops = statistics.median(r["ops_s"] for r in rs)
            print(f"| {work} | {label} | {ops:,.0f} | {med:.2f} [{min(cpu):.2f}..{max(cpu):.2f}]"
                  f" | {med / redis_med:.2f}x |")


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BenchError as e:
        print(f"tx_interleaved.py: error: {e}", file=sys.stderr)
        sys.exit(2)
