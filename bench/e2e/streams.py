#!/usr/bin/env python3
"""Streams, dashkv vs redis-server side by side: memory per entry and XADD/XRANGE/XREADGROUP/XACK
throughput.

For redis-server and dashkv (--threads 1 by default), each started on 127.0.0.1 and a free port
(pinned with taskset to --server-cpus when given):
  memory  --entries (1M) XADD s * f1 <8 bytes> f2 <8 bytes> over one connection, pipelined 1000
          deep; reported: used_memory after minus before, per entry (and RSS growth per entry)
  xadd    redis-benchmark -c 50 -P <p> XADD bench:<n> * f1 v1 f2 v2 (10 streams via -r)
  xrange  redis-benchmark -c 50 -P <p> XRANGE s - + COUNT 10 on the 1M-entry stream, from a
          random start id (__rand_int__ as the ms part: ids are "<ms>-<seq>" with ms the server
          clock, so most starts fall before the first entry and return the first 10)
  xreadgroup  redis-benchmark -c 50 -P <p> XREADGROUP GROUP g c<0..49> COUNT 1 STREAMS s >
          (group g created at 0 on the 1M-entry stream: each call delivers the next entry and adds
          it to the PEL)
  xack    redis-benchmark -c 50 -P <p> XACK q g <random n>-0 on a stream q of --entries entries
          with ids 1-0 .. N-0, every one delivered to group g beforehand (a repeated id misses)
at pipeline depths --pipelines (1 and 16). Reported per run: ops/s and the server's CPU time
(utime+stime of every thread) per operation in microseconds. Prints a markdown table.

Python 3 standard library only; needs redis-server, redis-benchmark and taskset.
Usage: bench/e2e/streams.py --dashkv build/dashkv [--entries 1000000] [--requests 200000]
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare import REDIS_ARGS, Resp, Server, info_field, machine_info  # noqa: E402


def fill(server, entries):
    c = Resp(server.port, timeout=120)
    try:
        before = int(info_field(c.call("INFO", "memory"), "used_memory"))
        rss_before = server_rss(server)
        batch = 1000
        for start in range(0, entries, batch):
            n = min(batch, entries - start)
            c.sock.sendall(b"".join(Resp.encode("XADD", "s", "*", "f1", "%08d" % (start + i),
                                                "f2", "value-%02d" % (i % 100))
                                    for i in range(n)))
            for _ in range(n):
                c.read()
        assert c.call("XLEN", "s") == entries
        after = int(info_field(c.call("INFO", "memory"), "used_memory"))
        return (after - before) / entries, (server_rss(server) - rss_before) / entries
    finally:
        c.close()


def fill_acks(server, entries):
    """Stream q with ids 1-0 .. N-0, all delivered to group g (pending, waiting for XACK)."""
    c = Resp(server.port, timeout=120)
    try:
        batch = 1000
        for start in range(1, entries + 1, batch):
            n = min(batch, entries + 1 - start)
            c.sock.sendall(b"".join(Resp.encode("XADD", "q", "%d-0" % (start + i), "f", "v")
                                    for i in range(n)))
            for _ in range(n):
                c.read()
        c.call("XGROUP", "CREATE", "q", "g", "0")
        for _ in range(0, entries, batch):
            c.call("XREADGROUP", "GROUP", "g", "c", "COUNT", str(batch), "STREAMS", "q", ">")
        c.call("XGROUP", "CREATE", "s", "g", "0")
    finally:
        c.close()


def server_rss(server):
    with open(f"/proc/{server.proc.pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


def run_benchmark(server, args, pipeline, requests, a):
    argv = ["redis-benchmark", "-h", "127.0.0.1", "-p", str(server.port), "-c", str(a.clients),
            "-n", str(requests), "-P", str(pipeline), "-q", "--csv"] + args
    if a.client_cpus:
        argv = ["taskset", "-c", a.client_cpus] + argv
    cpu0 = server.cpu_seconds()
    out = subprocess.run(argv, capture_output=True, text=True, timeout=600).stdout
    cpu = server.cpu_seconds() - cpu0
    m = re.search(r'^"[^"]*","([0-9.]+)"', out, re.M)
    if not m:
        raise RuntimeError("redis-benchmark output not understood: %r" % out[-500:])
    return float(m.group(1)), cpu * 1e6 / requests


def measure(label, argv_fn, a, workdir):
    srv = Server(label, argv_fn, a.server_cpus, workdir, 30).start()
    try:
        res = {}
        res["memory"] = fill(srv, a.entries)
        fill_acks(srv, a.entries)
        for p in a.pipelines:
            res[("xadd", p)] = run_benchmark(
                srv, ["-r", "10", "XADD", "bench:__rand_int__", "*", "f1", "v1", "f2", "v2"], p,
                a.requests, a)
            res[("xrange", p)] = run_benchmark(
                srv, ["-r", "1000000", "XRANGE", "s", "__rand_int__", "+", "COUNT", "10"], p,
                a.requests, a)
            res[("xreadgroup", p)] = run_benchmark(
                srv, ["-r", "50", "XREADGROUP", "GROUP", "g", "c__rand_int__", "COUNT", "1",
                      "STREAMS", "s", ">"], p, a.requests, a)
            res[("xack", p)] = run_benchmark(
                srv, ["-r", str(a.entries), "XACK", "q", "g", "__rand_int__-0"], p, a.requests, a)
        return res
    finally:
        srv.stop()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dashkv", required=True)
    ap.add_argument("--redis", default="redis-server")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--entries", type=int, default=1000000)
    ap.add_argument("--requests", type=int, default=200000)
    ap.add_argument("--clients", type=int, default=50)
    ap.add_argument("--pipelines", type=int, nargs="+", default=[1, 16])
    ap.add_argument("--server-cpus", default="")
    ap.add_argument("--client-cpus", default="")
    a = ap.parse_args()
    a.dashkv = os.path.abspath(a.dashkv)
    work = tempfile.mkdtemp(prefix="streams-bench-")

    def redis_argv(port, workdir):
        return [a.redis, "--port", str(port), "--bind", "127.0.0.1", "--dir", workdir] + REDIS_ARGS

    def dashkv_argv(port, workdir):
        return [a.dashkv, "--port", str(port), "--bind", "127.0.0.1", "--dir", workdir,
                "--threads", str(a.threads), "--save", ""]

    results = {"redis": measure("redis", redis_argv, a, work),
               "dashkv": measure("dashkv", dashkv_argv, a, work)}
    print("\n".join(machine_info()))
    print(f"\n{a.entries} entries of 2 fields (8-byte and 8-byte values); "
          f"{a.requests} requests per cell, {a.clients} clients, dashkv --threads {a.threads}\n")
    print("| measure | redis-server | dashkv |")
    print("|---|---|---|")
    r, d = results["redis"]["memory"], results["dashkv"]["memory"]
    print(f"| used_memory per entry (bytes) | {r[0]:.1f} | {d[0]:.1f} |")
    print(f"| RSS growth per entry (bytes) | {r[1]:.1f} | {d[1]:.1f} |")
    for test in ("xadd", "xrange", "xreadgroup", "xack"):
        for p in a.pipelines:
            (ro, rc), (do, dc) = results["redis"][(test, p)], results["dashkv"][(test, p)]
            print(f"| {test.upper()} P{p}: ops/s, server CPU us/op | {ro:,.0f}, {rc:.2f} | "
                  f"{do:,.0f}, {dc:.2f} |")


if __name__ == "__main__":
    main()
