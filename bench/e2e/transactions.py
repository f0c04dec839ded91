#!/usr/bin/env python3
"""Atomic multi-key commands and MULTI/EXEC, dashkv vs redis-server side by side.

For redis-server (once) and dashkv (once per --threads value), each started on 127.0.0.1 and a
free port, pinned with taskset (--server-cpus), the keyspace key:%012d (--keys, 100k) is prefilled
with 16..64-byte values, then for each test and pipeline depth:
  mset   redis-benchmark -r KEYS ... MSET key:__rand_int__ v0 ... key:__rand_int__ v9
         (10 keys, every placeholder gets its own random key, values of 16..64 bytes)
  mget   redis-benchmark -r KEYS ... MGET key:__rand_int__ x 10
  multi  txload (bench/e2e/txload.cc): MULTI, INCR, INCR, SET, GET, LPUSH, EXEC over random keys,
         pipelined --pipelines deep on each connection; every reply is checked (EXEC must return
         an array of 5); one transaction is one operation
The load generator runs pinned to --client-cpus. Reported per run: ops/s, p50/p99 latency (as the
load generator measures it), the server's CPU (utime+stime from /proc/<pid>/stat, all threads)
per million operations, the load generator's CPU %, and for dashkv the cross-shard messages per
operation (INFO stats dashkv_shard_hops). Each cell is run --repeat times; the median by ops/s is
reported. Prints a markdown table; --out writes it with machine info and the command line.

Python 3 standard library only; needs redis-server, redis-benchmark, taskset and the txload
binary (cmake --build build --target txload). Shares its server and RESP helpers with compare.py.

Usage: bench/e2e/transactions.py --dashkv build/dashkv --threads 1 2 [--repeat 3]
"""

import argparse
import csv
import io
import os
import resource
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

CLK_TCK = os.sysconf("SC_CLK_TCK")

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare import (REDIS_ARGS, BenchError, Resp, Server, info_field, machine_info,  # noqa: E402
                     pinned, server_version)

KEY_FORMAT = "key:%012d"  # redis-benchmark's -r substitution of key:__rand_int__; txload's too
N_KEYS_PER_CMD = 10
# Ten values of 16..64 bytes (16, 21, 26, ..., 64): MSET's ten arguments and the prefill cycle.
VALUES = [chr(ord("a") + i) * (16 + i * 48 // 9) for i in range(N_KEYS_PER_CMD)]
TESTS = ("mset", "mget", "multi")


def loadavg():
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


def busy_cpu_seconds():
    """Returns the CPU time all processes of the machine spent busy (from /proc/stat), seconds."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    # user nice system idle iowait irq softirq steal ...: everything but idle and iowait.
    return (sum(v[:8]) - v[3] - v[4]) / CLK_TCK


def wait_quiet(a):
    """Waits (bounded by --quiet-wait s) until the 1-minute load average is below --quiet-load."""
    if a.quiet_load <= 0:
        return
    deadline = time.monotonic() + a.quiet_wait
    while loadavg() >= a.quiet_load and time.monotonic() < deadline:
        time.sleep(5)
    if loadavg() >= a.quiet_load:
        print(f"# load {loadavg():.2f} still >= {a.quiet_load} after {a.quiet_wait:.0f}s; "
              f"running anyway", file=sys.stderr)


# ---- load generators -----------------------------------------------------------------------------

def bench_argv(test, port, pipeline, requests, a):
    if test == "multi":
        return [a.txload, "--host", "127.0.0.1", "--port", str(port), "--connections",
                str(a.clients), "--depth", str(pipeline), "--transactions", str(requests),
                "--keys", str(a.keys)]
    args = ["MSET"] + [x for v in VALUES for x in ("key:__rand_int__", v)] if test == "mset" \
        else ["MGET"] + ["key:__rand_int__"] * N_KEYS_PER_CMD
    return [a.redis_benchmark, "-h", "127.0.0.1", "-p", str(port), "-r", str(a.keys),
            "-n", str(requests), "-c", str(a.clients), "-P", str(pipeline), "--csv"] + args


def parse_output(test, out, requests):
    if test == "multi":
        kv = dict(f.split("=", 1) for f in out.split())
        if int(kv.get("transactions", -1)) != requests:
            raise BenchError(f"txload output not understood:\n{out[-300:]}")
        return {"ops": requests, "ops_s": float(kv["tx_per_s"]), "avg": float(kv["avg_ms"]),
                "p50": float(kv["p50_ms"]), "p99": float(kv["p99_ms"])}
    rows = list(csv.DictReader(io.StringIO(out)))
    if not rows or "rps" not in rows[-1]:
        raise BenchError(f"cannot parse redis-benchmark output:\n{out[-500:]}")
    r = rows[-1]
    return {"ops": requests, "ops_s": float(r["rps"]), "avg": float(r["avg_latency_ms"]),
            "p50": float(r["p50_latency_ms"]), "p99": float(r["p99_latency_ms"])}


def shard_hops(server):
    c = server.client()
    try:
        v = info_field(c.call("INFO", "stats"), "dashkv_shard_hops")
    finally:
        c.close()
    return int(v) if v is not None else None


def run_once(server, test, pipeline, requests, a, client_cpus):
    argv = pinned(client_cpus, bench_argv(test, server.port, pipeline, requests, a))
    hops0 = shard_hops(server)
    load = loadavg()
    ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    busy0 = busy_cpu_seconds()
    cpu0, t0 = server.cpu_seconds(), time.monotonic()
    try:
        p = subprocess.run(argv, capture_output=True, text=True, timeout=a.run_timeout,
                           stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired as e:
        server.check_alive()
        raise BenchError(f"{argv[0]} did not finish within {a.run_timeout}s against "
                         f"{server.label} ({test} P{pipeline} n={requests})") from e
    wall = time.monotonic() - t0
    cpu1 = server.cpu_seconds()
    busy1 = busy_cpu_seconds()
    ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode != 0:
        server.check_alive()
        raise BenchError(f"load generator failed (exit {p.returncode}) against {server.label}:\n"
                         f"  {shlex.join(argv)}\n{(p.stdout + p.stderr)[-800:]}")
    r = parse_output(test, p.stdout, requests)
    hops1 = shard_hops(server)
    cpu = cpu1 - cpu0
    client_cpu = (ru1.ru_utime + ru1.ru_stime) - (ru0.ru_utime + ru0.ru_stime)
    r.update(wall=wall, cpu=cpu, cpu_s_per_mops=cpu * 1e6 / requests, server_util=cpu / wall,
             client_util=client_cpu / wall, load=load, argv=argv,
             other=max(0.0, (busy1 - busy0) - cpu - client_cpu) / wall,
             hops_per_op=None if hops0 is None or hops1 is None else (hops1 - hops0) / requests)
    return r


def requests_for(server, test, pipeline, a, client_cpus):
    if a.requests:
        return a.requests
    probe = max(20_000, a.clients * pipeline * 40)
    r = run_once(server, test, pipeline, probe, a, client_cpus)
    return max(probe, min(int(r["ops_s"] * a.seconds), a.max_requests))


def prefill(server, a):
    c = server.client(timeout=60)
    try:
        c.call("FLUSHALL")
        for start in range(0, a.keys, 1000):
            end = min(a.keys, start + 1000)
            c.sock.sendall(b"".join(Resp.encode("SET", KEY_FORMAT % i, VALUES[i % len(VALUES)])
                                    for i in range(start, end)))
            for _ in range(start, end):
                reply = c.read()
                if reply != "OK":
                    raise BenchError(f"{server.label}: prefill SET replied {reply!r}")
        n = c.call("DBSIZE")
        if n != a.keys:
            raise BenchError(f"{server.label}: DBSIZE {n} after prefilling {a.keys} keys")
    finally:
        c.close()


def check_placeholders(server, a):
    """Checks that redis-benchmark gives each __rand_int__ of one command its own key."""
    c = server.client()
    try:
        c.call("FLUSHALL")
    finally:
        c.close()
    argv = bench_argv("mset", server.port, 1, 1, a)
    argv[argv.index("-r") + 1] = str(10 ** 9)  # 10 keys from 1e9: collisions are negligible
    argv[argv.index("-c") + 1] = "1"
    subprocess.run(argv, capture_output=True, timeout=30, check=True)
    c = server.client()
    try:
        n = c.call("DBSIZE")
    finally:
        c.close()
    if n != N_KEYS_PER_CMD:
        raise BenchError(f"one MSET of {N_KEYS_PER_CMD} __rand_int__ keys created {n} keys: "
                         f"redis-benchmark does not randomize each placeholder")


def bench_server(server, a, key, client_cpus, results):
    check_placeholders(server, a)
    prefill(server, a)
    for test in a.tests:
        for pipeline in a.pipelines:
            n = requests_for(server, test, pipeline, a, client_cpus)
            runs = sorted((run_once(server, test, pipeline, n, a, client_cpus)
                           for _ in range(a.repeat)), key=lambda x: x["ops_s"])
            r = runs[len(runs) // 2]
            r["runs"] = runs
            results[(key, test, pipeline)] = r
            hops = f"  hops/op {r['hops_per_op']:.2f}" if r["hops_per_op"] is not None else ""
            print(f"# {server.label:>18} {test.upper():>5} P{pipeline:<3} n={n:<9} "
                  f"{r['ops_s']:>11,.0f} ops/s  p50 {r['p50']:.3f} p99 {r['p99']:.3f} ms  "
                  f"cpu {r['cpu_s_per_mops']:.2f} s/Mops  srv {100 * r['server_util']:.0f}% "
                  f"gen {100 * r['client_util']:.0f}%{hops}  other {r['other']:.2f} CPUs  "
                  f"all ops/s {[round(x['ops_s']) for x in runs]}", file=sys.stderr)


# ---- report --------------------------------------------------------------------------------------

def ratio(x, y):
    return f"{x / y:.2f}x" if y else "n/a"


def test_name(test):
    return {"mset": "MSET 10 keys", "mget": "MGET 10 keys",
            "multi": "MULTI/EXEC (5 cmds)"}[test]


def render(a, results, versions, cpus_by_key):
    out = [f"## Results ({a.clients} connections, {a.keys:,} keys, 16..64-byte values; median of "
           f"{a.repeat} run(s) by ops/s)", "",
           "| test | pipeline | dashkv threads | dashkv ops/s | redis ops/s | ratio | "
           "dashkv p50/p99 ms | redis p50/p99 ms | dashkv CPU s/Mops | redis CPU s/Mops | "
           "CPU ratio | dashkv hops/op |",
           "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for test in a.tests:
        for p in a.pipelines:
            for t in a.threads:
                d, r = results.get((t, test, p)), results.get(("redis", test, p))
                if not d or not r:
                    continue
                hops = f"{d['hops_per_op']:.2f}" if d["hops_per_op"] is not None else "?"
                out.append(
                    f"| {test_name(test)} | {p} | {t} | {d['ops_s']:,.0f} | {r['ops_s']:,.0f} | "
                    f"{ratio(d['ops_s'], r['ops_s'])} | {d['p50']:.3f} / {d['p99']:.3f} | "
                    f"{r['p50']:.3f} / {r['p99']:.3f} | {d['cpu_s_per_mops']:.2f} | "
                    f"{r['cpu_s_per_mops']:.2f} | "
                    f"{ratio(d['cpu_s_per_mops'], r['cpu_s_per_mops'])} | {hops} |")
    out += ["", "ratio = dashkv ops/s / redis ops/s (above 1: dashkv faster); CPU ratio = dashkv "
            "CPU s/Mops / redis CPU s/Mops (below 1: dashkv spends less CPU per operation); "
            "hops/op = dashkv_shard_hops per operation: hops of single-shard command groups "
            "(a pipeline's, the commands inside EXEC) to another shard; lock acquire/release "
            "messages and MSET/MGET coordinator hops are not counted by that counter.", "",
            "Pinning: " + "; ".join(f"{k}: server CPUs {s or 'any'}, load generator CPUs "
                                    f"{c or 'any'}" for k, (s, c) in cpus_by_key.items()), "",
            "Raw runs (server CPU % = server CPU s / wall s; load generator CPU % near 100 means "
            "the single-threaded load generator set the pace; other CPUs = CPU time the rest of "
            "the machine used during the run (/proc/stat busy time minus server and load "
            "generator) / wall s, out of 2 on this machine; load = 1-minute load average when "
            "the run started, which includes the previous run of this script):", "",
            "| server | test | pipeline | requests | wall s | ops/s | p50 ms | p99 ms | "
            "server CPU s | server CPU % | load generator CPU % | other CPUs | load |",
            "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for (key, test, p), med in results.items():
        name = "redis" if key == "redis" else f"dashkv --threads {key}"
        for r in med["runs"]:
            mark = " (median)" if r is med else ""
            out.append(f"| {name} | {test_name(test)}{mark} | {p} | {r['ops']:,} | "
                       f"{r['wall']:.2f} | {r['ops_s']:,.0f} | {r['p50']:.3f} | {r['p99']:.3f} | "
                       f"{r['cpu']:.2f} | {100 * r['server_util']:.0f} | "
                       f"{100 * r['client_util']:.0f} | {r['other']:.2f} | {r['load']:.2f} |")
    out += ["", "Load generator command lines (one median run each; ports vary):", "", "```"]
    seen = set()
    for (key, test, p), med in results.items():
        if (test, p) not in seen:
            seen.add((test, p))
            out.append(shlex.join(med["argv"]).replace(os.getcwd() + os.sep, ""))
    out += ["```", "", "Servers: " + "; ".join(f"{k}: {v}" for k, v in versions.items()), ""]
    return "\n".join(out)


# ---- main ----------------------------------------------------------------------------------------

def csv_list(s, conv=str):
    return [conv(x.strip()) for x in s.split(",") if x.strip()]


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--dashkv", default="build/dashkv", help="dashkv binary")
    p.add_argument("--txload", default="build/bench/txload", help="txload binary (multi test)")
    p.add_argument("--redis", default="redis-server", help="redis-server binary")
    p.add_argument("--redis-benchmark", default="redis-benchmark")
    p.add_argument("--dashkv-args", default="", help="extra dashkv flags (one shell string)")
    p.add_argument("--threads", type=int, nargs="+", default=[1, 2],
                   help="dashkv --threads values; dashkv runs once per value")
    p.add_argument("--tests", type=lambda s: csv_list(s.lower()), default=list(TESTS))
    p.add_argument("--pipelines", type=lambda s: csv_list(s, int), default=[1, 16])
    p.add_argument("--requests", type=int, default=0,
                   help="operations per run (0: calibrate so a run lasts ~--seconds)")
    p.add_argument("--seconds", type=float, default=6.0, help="target run length when calibrating")
    p.add_argument("--max-requests", type=int, default=20_000_000)
    p.add_argument("--repeat", type=int, default=3, help="runs per cell; the median is reported")
    p.add_argument("--clients", type=int, default=50, help="connections")
    p.add_argument("--keys", type=int, default=100_000, help="keyspace (prefilled)")
    p.add_argument("--server-cpus", default="0", help="taskset CPU list for the servers")
    p.add_argument("--client-cpus", default="1", help="taskset CPU list for the load generator")
    p.add_argument("--wide-cpus", default="0,1",
                   help="for dashkv with more threads than --server-cpus has CPUs: the CPU list "
                        "for both that server and its load generator ('' = no pinning)")
    p.add_argument("--skip-redis", action="store_true")
    p.add_argument("--quiet-load", type=float, default=0.0,
                   help="before the first server, wait until the 1-minute load average is below "
                        "this (0: do not wait)")
    p.add_argument("--quiet-wait", type=float, default=600.0, help="longest wait for --quiet-load")
    p.add_argument("--workdir", default=None,
                   help="parent of the servers' temporary directory (default: system temp)")
    p.add_argument("--out", help="also write the report (with machine info) to this file")
    p.add_argument("--start-timeout", type=float, default=20.0)
    p.add_argument("--run-timeout", type=float, default=180.0, help="seconds per load run")
    return p.parse_args(argv)


def check_environment(a):
    for attr in ("dashkv", "redis", "redis_benchmark", "txload"):
        path = getattr(a, attr)
        resolved = shutil.which(path) if os.sep not in path else path
        if not resolved or not os.access(resolved, os.X_OK):
            if attr == "txload" and "multi" not in a.tests:
                continue
            raise BenchError(f"--{attr.replace('_', '-')} not found or not executable: {path}"
                             + (" (cmake --build build --target txload)" if attr == "txload"
                                else ""))
        setattr(a, attr, os.path.abspath(resolved))
    for t in a.tests:
        if t not in TESTS:
            raise BenchError(f"unknown test {t!r} ({', '.join(TESTS)})")
    if (a.server_cpus or a.client_cpus or a.wide_cpus) and not shutil.which("taskset"):
        raise BenchError("taskset not found (util-linux)")


def run(a):
    check_environment(a)
    results, versions, errors, cpus_by_key = {}, {}, [], {}
    ncpu = len([c for c in a.server_cpus.split(",") if c]) if a.server_cpus else os.cpu_count()
    if a.workdir:
        a.workdir = os.path.abspath(a.workdir)
        os.makedirs(a.workdir, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="dashkv-tx-", dir=a.workdir) as workdir:
        jobs = [] if a.skip_redis else [
            ("redis", "redis-server",
             lambda port, wd: [a.redis, "--port", str(port), "--bind", "127.0.0.1", "--dir", wd]
             + REDIS_ARGS, a.server_cpus, a.client_cpus)]
        for t in a.threads:
            wide = t > ncpu
            jobs.append((t, f"dashkv threads={t}",
                         lambda port, wd, t=t: [a.dashkv, "--port", str(port), "--bind",
                                                "127.0.0.1", "--dir", wd, "--dbfilename",
                                                "dashkv-bench.rdb", "--threads", str(t), "--save", ""]
                         + shlex.split(a.dashkv_args),
                         a.wide_cpus if wide else a.server_cpus,
                         a.wide_cpus if wide else a.client_cpus))
        for key, label, argv_fn, scpus, ccpus in jobs:
            cpus_by_key["redis" if key == "redis" else f"dashkv --threads {key}"] = (scpus, ccpus)
            if len(cpus_by_key) == 1:
                wait_quiet(a)  # before the first server only: later, our own runs count too
            s = Server(label, argv_fn, scpus, workdir, a.start_timeout)
            try:
                s.start()
                try:
                    versions[label] = server_version(s)
                    bench_server(s, a, key, ccpus, results)
                    s.check_alive()
                finally:
                    s.stop()
            except (BenchError, subprocess.SubprocessError) as e:
                print(f"transactions.py: error: {e}", file=sys.stderr)
                errors.append(f"{label}: {str(e).splitlines()[0]}")
    report = render(a, results, versions, cpus_by_key)
    if errors:
        report += "\n**Failed:**\n\n" + "\n".join(f"- {e}" for e in errors) + "\n"
    print(report)
    if a.out:
        with open(a.out, "w") as f:
            f.write("# Atomic multi-key commands and MULTI/EXEC: dashkv vs redis-server\n\n")
            f.write("\n".join(machine_info()) + "\n\n" + report)
        print(f"# wrote {a.out}", file=sys.stderr)
    if errors:
        raise BenchError(f"{len(errors)} server(s) failed")


def main(argv=None):
    a = parse_args(sys.argv[1:] if argv is None else argv)
    try:
        run(a)
    except BenchError as e:
        print(f"transactions.py: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
