#!/usr/bin/env python3
"""What a hop costs: dashkv's CPU per operation at --threads 2 against --threads 1.

For each binary given (e.g. a base build and a changed one), each --threads value, each test and
pipeline, starts dashkv, prefills the keyspace, runs redis-benchmark and reads, around the run,
from /proc/<pid>/task/*: CPU time on the CPU (schedstat, ns), user and system time (stat), and
voluntary and involuntary context switches (status). With --count, a second run of the same cell
happens under `perf stat -p <pid>` counting the server's syscalls (by name) and context switches
(kept apart from the CPU run: tracing adds to the CPU it would measure). Binaries and thread counts
alternate inside each round (--rounds), so that a change and its base are measured in the same
minutes; the report gives the median of the rounds and the 1-minute load average of each run.
See bench/e2e/README.md ("Hop cost").

Python 3 standard library only, plus `perf` for --count.
"""

import argparse
import glob
import os
import shlex
import signal
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare  # noqa: E402  (Resp, Server, prefill, BenchError)

SYSCALLS = ["epoll_wait", "epoll_pwait", "sched_yield", "read", "write", "recvfrom", "sendto",
            "recvmsg", "sendmsg", "readv", "writev", "futex", "epoll_ctl"]


def task_totals(pid):
    """Sums over the threads of `pid`: on-CPU ns, user and system ticks, context switches."""
    t = dict(ns=0, utime=0, stime=0, vcs=0, ivcs=0)
    for task in glob.glob(f"/proc/{pid}/task/*"):
        try:
            with open(f"{task}/schedstat") as f:
                t["ns"] += int(f.read().split()[0])
            with open(f"{task}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            t["utime"] += int(fields[11])
            t["stime"] += int(fields[12])
            with open(f"{task}/status") as f:
                for line in f:
                    if line.startswith("voluntary_ctxt_switches:"):
                        t["vcs"] += int(line.split()[1])
                    elif line.startswith("nonvoluntary_ctxt_switches:"):
                        t["ivcs"] += int(line.split()[1])
        except (OSError, ValueError, IndexError):
            pass  # a thread that ended meanwhile
    return t


def loadavg():
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


def bench_argv(a, port, test, pipeline, n):
    return compare.pinned(a.client_cpus, [
        "redis-benchmark", "-h", compare.HOST, "-p", str(port), "-t", test, "-n", str(n),
        "-c", str(a.clients), "-P", str(pipeline), "-d", str(a.value_size), "-r", str(a.keys),
        "-q"])


def perf_events():
    ev = [f"syscalls:sys_enter_{s}" for s in SYSCALLS]
    return ev + ["raw_syscalls:sys_enter", "context-switches", "cpu-migrations"]


def run_cell(server, a, test, pipeline, n, count):
    """One measured redis-benchmark run; returns per-operation figures."""
    pid = server.proc.pid
    perf = None
    if count:
        perf_out = tempfile.NamedTemporaryFile(prefix="hop-perf-", suffix=".csv", delete=False)
        perf_out.close()
        perf = subprocess.Popen(["perf", "stat", "-x", ",", "-o", perf_out.name,
                                 "-e", ",".join(perf_events()), "-p", str(pid)],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(0.5)  # perf attaches to every thread
    load = loadavg()
    t0 = task_totals(pid)
    w0 = time.monotonic()
    p = subprocess.run(bench_argv(a, server.port, test, pipeline, n), capture_output=True,
                       text=True, timeout=a.run_timeout, stdin=subprocess.DEVNULL)
    wall = time.monotonic() - w0
    t1 = task_totals(pid)
    if p.returncode != 0:
        server.check_alive()
        raise compare.BenchError(f"redis-benchmark failed: {p.stdout[-400:]}{p.stderr[-400:]}")
    r = {k: (t1[k] - t0[k]) / n for k in t0}
    r["us"] = r.pop("ns") / 1000.0  # CPU microseconds per operation
    r["user_us"] = r.pop("utime") * 1e6 / compare.CLK_TCK
    r["sys_us"] = r.pop("stime") * 1e6 / compare.CLK_TCK
    r["ops_s"] = n / wall
    r["load"] = load
    if perf is not None:
        perf.send_signal(signal.SIGINT)
        perf.wait(timeout=30)
        counts = {}
        with open(perf_out.name) as f:
            for line in f:
                parts = line.strip().split(",")
                if len(parts) < 3 or not parts[0].replace(".", "").isdigit():
                    continue
                name = parts[2].replace("syscalls:sys_enter_", "").replace("raw_syscalls:", "")
                counts[name] = float(parts[0]) / n
        os.unlink(perf_out.name)
        r["perf"] = counts
    return r


def requests_for(a, pipeline):
    return a.requests_p1 if pipeline == 1 else a.requests_pn


def run_server(a, label, path, threads, workdir, results, rnd):
    def argv(port, wd):
        words = shlex.split(path)  # the binary, then flags of this binary only
        return [words[0], "--port", str(port), "--bind", compare.HOST, "--dir", wd,
                "--dbfilename", "hop.rdb", "--threads", str(threads), "--save", ""] + \
            words[1:] + shlex.split(a.dashkv_args)
    s = compare.Server(f"{label}-t{threads}", argv, a.server_cpus, workdir,
                       a.start_timeout).start()
    try:
        compare.prefill(s, "key:%012d", a)
        for test in a.tests:
            for pipeline in a.pipelines:
                n = requests_for(a, pipeline)
                r = run_cell(s, a, test, pipeline, n, count=False)
                if a.count:
                    r["perf"] = run_cell(s, a, test, pipeline, n, count=True)["perf"]
                results.setdefault((label, threads, test, pipeline), []).append(r)
                print(f"# round {rnd} {label} t{threads} {test} P{pipeline}: "
                      f"{r['us']:.2f} us/op (user {r['user_us']:.2f} sys {r['sys_us']:.2f}) "
                      f"vcs {r['vcs']:.3f} ivcs {r['ivcs']:.3f} {r['ops_s']:.0f} ops/s "
                      f"load {r['load']:.2f}", file=sys.stderr)
    finally:
        s.stop()


def med(rs, key):
    return statistics.median(r[key] for r in rs)


def med_perf(rs, name):
    vals = [r["perf"].get(name, 0.0) for r in rs if "perf" in r]
    return statistics.median(vals) if vals else None


def report(a, results):
    lines = []
    labels = [lab for lab, _ in a.bin]
    lines.append("| binary | test | P | threads | CPU us/op | user | sys | t/t1 | vol cs/op | "
                 "invol cs/op | ops/s | load (min-max) |")
    lines.append("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for label in labels:
        for test in a.tests:
            for p in a.pipelines:
                base = results.get((label, min(a.threads), test, p))
                for t in a.threads:
                    rs = results.get((label, t, test, p))
                    if not rs:
                        continue
                    ratio = med(rs, "us") / med(base, "us") if base else float("nan")
                    loads = [r["load"] for r in rs]
                    lines.append(
                        f"| {label} | {test} | {p} | {t} | {med(rs, 'us'):.3f} | "
                        f"{med(rs, 'user_us'):.2f} | {med(rs, 'sys_us'):.2f} | {ratio:.2f}x | "
                        f"{med(rs, 'vcs'):.3f} | {med(rs, 'ivcs'):.3f} | {med(rs, 'ops_s'):.0f} | "
                        f"{min(loads):.2f}-{max(loads):.2f} |")
    if a.count:
        names = SYSCALLS + ["sys_enter", "context-switches", "cpu-migrations"]
        lines.append("")
        lines.append("Per operation, under `perf stat` (sys_enter: every syscall):")
        lines.append("")
        lines.append("| binary | test | P | threads | " + " | ".join(names) + " |")
        lines.append("|---|---|---|---|" + "---|" * len(names))
        for label in labels:
            for test in a.tests:
                for p in a.pipelines:
                    for t in a.threads:
                        rs = results.get((label, t, test, p))
                        if not rs:
                            continue
                        vals = [med_perf(rs, n) for n in names]
                        lines.append(f"| {label} | {test} | {p} | {t} | " + " | ".join(
                            "-" if v is None else f"{v:.3f}" for v in vals) + " |")
    return "\n".join(lines)


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--bin", action="append", required=True, metavar="LABEL=PATH",
                   help="a dashkv binary to measure (repeatable); PATH may carry flags for "
                        "this binary only, e.g. 'spin0=build/dashkv --spin_us 0'")
    p.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    p.add_argument("--tests", default="get,set")
    p.add_argument("--pipelines", default="1,30")
    p.add_argument("--requests-p1", type=int, default=200_000)
    p.add_argument("--requests-pn", type=int, default=2_000_000, help="requests at pipeline > 1")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--clients", type=int, default=20)
    p.add_argument("--keys", type=int, default=100_000)
    p.add_argument("--value-size", type=int, default=256)
    p.add_argument("--server-cpus", default="0,1", help="taskset list ('' = no pinning)")
    p.add_argument("--client-cpus", default="0,1")
    p.add_argument("--dashkv-args", default="")
    p.add_argument("--count", action="store_true",
                   help="also count syscalls and context switches with perf stat (extra run)")
    p.add_argument("--start-timeout", type=float, default=20)
    p.add_argument("--run-timeout", type=float, default=300)
    a = p.parse_args(argv)
    a.bin = [tuple(b.split("=", 1)) for b in a.bin]
    a.tests = a.tests.split(",")
    a.pipelines = [int(x) for x in a.pipelines.split(",")]
    return a


def main(argv=None):
    a = parse_args(argv)
    results = {}
    with tempfile.TemporaryDirectory(prefix="hop-cost-") as workdir:
        for rnd in range(a.rounds):
            for label, path in a.bin:
                for t in a.threads:
                    run_server(a, label, path, t, workdir, results, rnd)
    print(report(a, results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
