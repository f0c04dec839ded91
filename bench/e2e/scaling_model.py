#!/usr/bin/env python3
"""The many-core model (issue 16): dashkv's CPU per operation and throughput at 4..64 threads.

Measures on this machine:
  1. instructions per operation under callgrind (every server thread, user space, after a
     warm-up of a fifth of the run on the same connections; the primary,
     load-independent figures), GET and SET at pipeline 1 and 30, driven by this script's own
     load generator (20 connections, 256-byte values, 100,000 prefilled keys):
       - --threads 1 (every key local);
       - --threads 2, keys uniformly spread (about half of them owned by the other thread);
       - --threads 2, every connection using only keys owned by its own thread (the generator
         finds each connection's thread by sending it a GET and reading whether
         INFO stats dashkv_shard_hops moved, and computes each key's shard with the server's
         hash, core/hash.h HashBytes under kShardSeed): the hashtagged case, hop fraction 0;
  2. CPU time per operation (timing-based, secondary): bench/e2e/hop_cost.py's runs
     (redis-benchmark, 20 clients) at --threads 1 and 2, --rounds rounds.

Model, per command and pipeline depth P, with L = instructions per operation at --threads 2 with
local keys, hop fraction f = (N-1)/N and b = max(1, P/N) commands per message to each shard:
    instructions/op(N) = L + f * (M / b + C)
M (per message) and C (per command carried in a message) are solved from the two pipeline depths
at --threads 2 (P1: one command per message, f = 1/2; P30: one message of ~15 commands per 30).
Instructions become CPU time with the CPU time per instruction of the same workload at
--threads 1 (round 1 of the timed runs; model A), or (model B) only the user time scales with
instructions while the system time per operation stays that of --threads 1; throughput =
N / (CPU time per operation): one core per thread, the network stack's cost per request counted
in the local cost (it is in the CPU time at --threads 1), no memory-bandwidth or NIC limit,
clients on other machines. The check: both at --threads 1 and 2 against the CPU per operation
measured in the other timed rounds.

Python 3 standard library plus valgrind (callgrind_control) and redis-benchmark.
See bench/e2e/README.md ("Many-core model") and SCALING_MODEL.md.
"""

import argparse
import glob
import json
import os
import random
import selectors
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare  # noqa: E402  (Resp, Server, prefill, info_field, machine_info)
import hop_cost  # noqa: E402  (run_server: the timed runs)

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests",
                                "integration"))
from shard_hash import shard_of  # noqa: E402  (the server's shard of a key, ported)

KEY_FORMAT = "key:%012d"
CORES = [4, 8, 16, 32, 64]
PEER = "Dragonfly: 3.8M ops/s, GET/SET at pipeline 1, 64 vCPUs (published, not measured here)"

# ---- load generator ------------------------------------------------------------------------------

def shard_hops(c):
    reply = c.call("INFO", "stats")
    text = reply.decode() if isinstance(reply, bytes) else str(reply)
    return int(compare.info_field(text, "dashkv_shard_hops"))


def shard_hops_now(server):
    """dashkv_shard_hops of the whole server (INFO itself does not hop)."""
    c = server.client(timeout=60)
    try:
        return shard_hops(c)
    finally:
        c.close()


def connection_thread(c, keys_by_shard):
    """The thread serving connection `c`: the shard whose key its GET reads without a hop."""
    if len(keys_by_shard) == 1:
        return 0
    for sid, keys in enumerate(keys_by_shard):
        before = shard_hops(c)
        c.call("GET", keys[0])
        if shard_hops(c) == before:
            return sid
    raise compare.BenchError("no shard is local to a connection (dashkv_shard_hops moved for all)")


def command_bytes(test, key, value):
    if test == "get":
        return compare.Resp.encode("GET", key)
    return compare.Resp.encode("SET", key, value)


def open_load(server, a, test, pipeline, local, keys_by_shard):
    """Opens a.clients connections, finds each one's thread and encodes its batches of
    `pipeline` commands: keys uniform over the keyspace or, with `local`, over those of the
    connection's own thread."""
    value = b"x" * a.value_size
    all_keys = [k for ks in keys_by_shard for k in ks]
    rng = random.Random(12345)
    conns = []
    for _ in range(a.clients):
        c = server.client(timeout=60)
        sid = connection_thread(c, keys_by_shard)
        pool = keys_by_shard[sid] if local else all_keys
        batches = [b"".join(command_bytes(test, rng.choice(pool), value) for _ in range(pipeline))
                   for _ in range(max(8, 2048 // pipeline))]
        conns.append(dict(c=c, sid=sid, batches=batches, i=0, want=0))
    return conns


def run_load(a, server, conns, test, pipeline, n, close=True):
    """Sends `n` commands over `conns` (open_load), waiting for every reply of a connection's
    batch before its next; then closes them unless `close` is false. Returns the number sent
    and the threads the connections were on."""
    reply_len = 6 + a.value_size + 2 if test == "get" else 5  # "$256\r\n...\r\n" / "+OK\r\n"
    sel = selectors.DefaultSelector()
    per_conn = n // (a.clients * pipeline)
    sent = 0
    try:
        for st in conns:
            st["left"] = per_conn
            st["c"].sock.setblocking(True)
        def send(st):
            st["c"].sock.sendall(st["batches"][st["i"] % len(st["batches"])])
            st["i"] += 1
            st["left"] -= 1
            st["want"] = pipeline * reply_len
        active = 0
        for st in conns:
            if st["left"] > 0:
                send(st)
                sel.register(st["c"].sock, selectors.EVENT_READ, st)
                active += 1
        first = True
        while active:
            for key, _ in sel.select(timeout=a.run_timeout):
                st = key.data
                data = st["c"].sock.recv(1 << 20)
                if not data:
                    raise compare.BenchError("server closed a connection")
                if first:
                    first = False
                    if not data.startswith(b"$%d\r\n" % a.value_size if test == "get" else b"+OK"):
                        raise compare.BenchError(f"unexpected reply {data[:40]!r}")
                st["want"] -= len(data)
                if st["want"] < 0:
                    raise compare.BenchError("more reply bytes than expected")
                if st["want"] == 0:
                    sent += pipeline
                    if st["left"] > 0:
                        send(st)
                    else:
                        sel.unregister(st["c"].sock)
                        active -= 1
            server.check_alive()
    finally:
        sel.close()
        if close:
            for st in conns:
                st["c"].close()
    threads_used = sorted({st["sid"] for st in conns})
    return sent, threads_used


# ---- callgrind -----------------------------------------------------------------------------------

def callgrind_total(server, outdir):
    """Instructions executed by every server thread since the last zeroing."""
    subprocess.run(["callgrind_control", "-d", str(server.proc.pid)], capture_output=True)
    total = 0
    for f in glob.glob(os.path.join(outdir, "cg.*")):
        last = 0
        with open(f) as fh:
            for line in fh:
                if line.startswith("summary:"):
                    last = int(line.split()[1])
        total += last
    return total


def callgrind_server(a, threads, workdir, cells):
    """One dashkv under callgrind; for each (test, pipeline, local) in `cells`, instructions per
    operation."""
    outdir = tempfile.mkdtemp(prefix=f"cg-t{threads}-", dir=workdir)

    def argv(port, wd):
        return ["valgrind", "--tool=callgrind", f"--callgrind-out-file={outdir}/cg.%p",
                "--dump-line=no", "--dump-instr=no", a.dashkv, "--port", str(port),
                "--bind", compare.HOST, "--dir", wd, "--dbfilename", "model.rdb",
                "--threads", str(threads), "--spin_us", "0", "--save", ""]
    s = compare.Server(f"callgrind-t{threads}", argv, "", workdir, 120).start()
    out = {}
    try:
        compare.prefill(s, KEY_FORMAT, a)
        keys = [(KEY_FORMAT % i).encode() for i in range(a.keys)]
        keys_by_shard = [[] for _ in range(threads)]
        for k in keys:
            keys_by_shard[shard_of(k, threads)].append(k)
        for test, pipeline, local in cells:
            n = a.cg_requests_p1 if pipeline == 1 else a.cg_requests_pn
            load = hop_cost.loadavg()
            conns = open_load(s, a, test, pipeline, local, keys_by_shard)
            # A warm-up on the same connections first: the first operations of a new workload
            # pay one-off costs (coroutine frames, buffers, allocator pages) that would
            # otherwise weigh on the per-operation figure of the shorter runs.
            run_load(a, s, conns, test, pipeline, n // 5, close=False)
            hops0 = shard_hops_now(s)
            subprocess.run(["callgrind_control", "-z", str(s.proc.pid)], capture_output=True)
            for f in glob.glob(os.path.join(outdir, "cg.*")):
                os.unlink(f)
            t0 = time.monotonic()
            sent, used = run_load(a, s, conns, test, pipeline, n)
            ir = callgrind_total(s, outdir)
            r = dict(ir=ir / sent, sent=sent, load=load, threads_used=used,
                     wall=time.monotonic() - t0, hops=(shard_hops_now(s) - hops0) / sent)
            out[(test, pipeline, local)] = r
            print(f"# callgrind t{threads} {test} P{pipeline} {'local' if local else 'uniform'}: "
                  f"{r['ir']:.0f} instructions/op, {r['hops']:.3f} hops/op ({sent} ops, "
                  f"conn threads {used}, "
                  f"{r['wall']:.0f} s, load {load:.2f})", file=sys.stderr)
    finally:
        s.stop()
    return out


# ---- model ---------------------------------------------------------------------------------------

def solve_hop(l1, l30, u1, u30, p_hi):
    """Per-message M and per-command C instructions from --threads 2 (f = 1/2): uniform minus
    local at pipeline 1 is (M + C)/2, at pipeline p_hi it is M/p_hi + C/2 (one message to the
    other shard per batch of p_hi)."""
    e1, ehi = u1 - l1, u30 - l30
    # M + C = 2 e1 ; 2M/p_hi + C = 2 ehi
    m = (2 * e1 - 2 * ehi) / (1 - 2.0 / p_hi)
    return m, 2 * e1 - m


def predict_ir(local_ir, m, c, n, pipeline):
    if n == 1:
        return local_ir
    f = (n - 1) / n
    b = max(1.0, pipeline / n)
    return local_ir + f * (m / b + c)


def fmt_k(x):
    return f"{x / 1e6:.2f}M" if x >= 1e6 else f"{x / 1e3:.0f}k"


SAVED_ARGS = ["dashkv", "tests", "pipeline", "pipelines", "clients", "keys", "value_size",
              "cg_requests_p1", "cg_requests_pn", "rounds", "server_cpus", "client_cpus"]


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--dashkv", default="build/dashkv")
    p.add_argument("--tests", default="get,set")
    p.add_argument("--pipeline", type=int, default=30, help="the deep pipeline (the other is 1)")
    p.add_argument("--clients", type=int, default=20)
    p.add_argument("--keys", type=int, default=100_000)
    p.add_argument("--value-size", type=int, default=256)
    p.add_argument("--cg-requests-p1", type=int, default=40_000)
    p.add_argument("--cg-requests-pn", type=int, default=120_000)
    p.add_argument("--rounds", type=int, default=3, help="timed hop_cost.py rounds (>= 2)")
    p.add_argument("--requests-p1", type=int, default=200_000)
    p.add_argument("--requests-pn", type=int, default=2_000_000)
    p.add_argument("--server-cpus", default="0,1")
    p.add_argument("--client-cpus", default="0,1")
    p.add_argument("--run-timeout", type=float, default=600)
    p.add_argument("--skip-timed", action="store_true",
                   help="instructions only (no CPU time, no prediction in time)")
    p.add_argument("--out", help="also write the report to this file")
    p.add_argument("--json", help="also write the measurements to this file")
    p.add_argument("--from-json", help="report from the measurements of an earlier --json run "
                                       "(with that run's settings)")
    a = p.parse_args(argv)
    a.tests = a.tests.split(",")
    a.pipelines = [1, a.pipeline]
    return a


def measure_timed(a, workdir, timed, failures):
    """hop_cost.py's runs at --threads 1 and 2, a.rounds rounds, into timed[(threads, test, P)]."""
    ha = hop_cost.parse_args([
        "--bin", f"main={a.dashkv}", "--tests", ",".join(a.tests),
        "--pipelines", ",".join(map(str, a.pipelines)), "--clients", str(a.clients),
        "--keys", str(a.keys), "--value-size", str(a.value_size),
        "--requests-p1", str(a.requests_p1), "--requests-pn", str(a.requests_pn),
        "--server-cpus", a.server_cpus, "--client-cpus", a.client_cpus,
        "--rounds", str(a.rounds)])
    for rnd in range(a.rounds):
        for t in (1, 2):
            for _ in range(3):
                res = {}
                try:
                    hop_cost.run_server(ha, "main", a.dashkv, t, workdir, res, rnd)
                    break
                except compare.BenchError as e:
                    # redis-benchmark now and then exits non-zero on this loaded VM.
                    print(f"# round {rnd} t{t} failed ({e}); again", file=sys.stderr)
                    failures.append(f"round {rnd + 1} t{t}: {str(e).splitlines()[0]}")
            else:
                raise compare.BenchError(f"round {rnd + 1} t{t} failed 3 times")
            for (_, th, test, pp), rs in res.items():
                timed.setdefault((th, test, pp), []).append(rs[0])


def measure(a):
    """Runs every measurement; returns the saved form (see --json)."""
    for tool in ("valgrind", "callgrind_control", "redis-benchmark"):
        if shutil.which(tool) is None:
            raise SystemExit(f"{tool} is not on PATH")
    started = time.monotonic()
    cg, timed, failures = {}, {}, []
    with tempfile.TemporaryDirectory(prefix="scaling-model-") as workdir:
        cells1 = [(t, pp, False) for t in a.tests for pp in a.pipelines]
        cells2 = [(t, pp, loc) for t in a.tests for pp in a.pipelines for loc in (False, True)]
        for (test, pp, loc), r in callgrind_server(a, 1, workdir, cells1).items():
            cg[(1, test, pp, loc)] = r
        for (test, pp, loc), r in callgrind_server(a, 2, workdir, cells2).items():
            cg[(2, test, pp, loc)] = r
        if not a.skip_timed:
            measure_timed(a, workdir, timed, failures)
    machine = compare.machine_info()
    if failures:
        machine.append("- timed server runs repeated after a failure: " + "; ".join(failures))
    return dict(cg=list(cg.items()), timed=list(timed.items()),
                elapsed=time.monotonic() - started, machine=machine,
                args={k: getattr(a, k) for k in SAVED_ARGS})


def main(argv=None):
    a = parse_args(argv)
    if a.from_json:
        with open(a.from_json) as f:
            saved = json.load(f)
        for k, v in saved["args"].items():
            setattr(a, k, v)
    else:
        saved = measure(a)
        if a.json:
            with open(a.json, "w") as f:
                json.dump(saved, f, indent=1)
    cg = {tuple(k): v for k, v in saved["cg"]}
    timed = {tuple(k): v for k, v in saved["timed"]}
    text = report(a, cg, timed, saved["elapsed"], saved["machine"])
    print(text)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text + "\n")
    return 0


def report(a, cg, timed, elapsed, machine):
    """The markdown report: instructions, hop cost, the check and the prediction."""
    L = list(machine)
    L.append(f"- dashkv: `{a.dashkv}`; run time of this script: {elapsed / 60:.1f} min")
    L.append("")
    hop = instruction_section(a, cg, L)
    if timed:
        model = check_section(a, cg, timed, L)
        prediction_section(a, cg, hop, model, L)
    return "\n".join(L)


def instruction_section(a, cg, L):
    """Appends the instruction tables to L; returns {test: (M, C)}."""
    hi = a.pipeline
    L.append("## Instructions per operation (callgrind, every server thread, user space)")
    L.append("")
    L.append(f"This script's generator: {a.clients} connections, {a.value_size}-byte values, "
             f"{a.keys} prefilled keys, {a.cg_requests_p1} (P1) / {a.cg_requests_pn} (P{hi}) "
             "operations per cell, `--spin_us 0`. local = every key owned by the connection's "
             "own thread (what hashtagged keys give when the client picks the tag per "
             "connection). hops/op: INFO stats dashkv_shard_hops per operation (messages "
             "to another shard; 0 confirms the local keys are local).")
    L.append("")
    L.append("| test | P | t1 | t2 local | t2 uniform | t2 uniform - t2 local | t2 local - t1 | "
             "hops/op t2 local, uniform | load |")
    L.append("|---|---:|---:|---:|---:|---:|---:|---|---|")
    hop = {}
    for test in a.tests:
        for pp in a.pipelines:
            t1 = cg[(1, test, pp, False)]["ir"]
            lo = cg[(2, test, pp, True)]["ir"]
            un = cg[(2, test, pp, False)]["ir"]
            loads = [cg[(t, test, pp, loc)]["load"]
                     for t, loc in ((1, False), (2, True), (2, False))]
            hops = [cg[(2, test, pp, loc)].get("hops", float("nan")) for loc in (True, False)]
            L.append(f"| {test} | {pp} | {t1:,.0f} | {lo:,.0f} | {un:,.0f} | {un - lo:+,.0f} | "
                     f"{lo - t1:+,.0f} | {hops[0]:.3f}, {hops[1]:.3f} | "
                     f"{min(loads):.2f}-{max(loads):.2f} |")
        m, c = solve_hop(cg[(2, test, 1, True)]["ir"], cg[(2, test, hi, True)]["ir"],
                         cg[(2, test, 1, False)]["ir"], cg[(2, test, hi, False)]["ir"], hi)
        hop[test] = (m, c)
    L.append("")
    L.append(f"Hop cost solved from the two depths (uniform minus local at t2: P1 = (M + C)/2, "
             f"P{hi} = M/{hi} + C/2):")
    L.append("")
    L.append("| test | M: instructions per message | C: instructions per command in a message |")
    L.append("|---|---:|---:|")
    for test in a.tests:
        L.append(f"| {test} | {hop[test][0]:,.0f} | {hop[test][1]:,.0f} |")
    return hop


def check_section(a, cg, timed, L):
    """Appends the timed runs and the check to L; returns {(test, P): (k, k_user, sys_us)}."""
    def cpu(t, test, pp, rounds, key="us"):
        rs = timed[(t, test, pp)]
        rs = [rs[i] for i in rounds if i < len(rs)]
        return statistics.median(r[key] for r in rs), [r["load"] for r in rs]
    calib = [0]
    check = list(range(1, a.rounds)) or [0]
    L.append("")
    L.append("## CPU time per operation (timing-based) and the check at 1 and 2 threads")
    L.append("")
    L.append(f"`hop_cost.py` runs (redis-benchmark, {a.clients} clients, server and client sharing "
             f"CPUs {a.server_cpus}), {a.rounds} rounds; on-CPU time of every server thread per "
             "operation. Calibration: round 1 at t1. A (the model): CPU per instruction = that "
             "CPU per operation / the t1 instructions, predicted = instructions x it. B: only "
             "user time scales with instructions (user/instruction from round 1), the system "
             "time per operation stays that of round 1 at t1. Predictions for t1 use the t1 "
             "instructions, for t2 the t2 uniform ones (redis-benchmark's keys are uniform). "
             "Measured = median of the other rounds; error = (predicted - measured) / measured.")
    L.append("")
    L.append("| test | P | ns/instr (A) | t1 predicted | t1 measured | t1 error | "
             "t2 predicted A | t2 predicted B | t2 measured | t2 error A | t2 error B | "
             "load: calibration; check |")
    L.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    model = {}
    for test in a.tests:
        for pp in a.pipelines:
            c1, l1 = cpu(1, test, pp, calib)
            u1, _ = cpu(1, test, pp, calib, "user_us")
            s1, _ = cpu(1, test, pp, calib, "sys_us")
            ir1 = cg[(1, test, pp, False)]["ir"]
            ir2 = cg[(2, test, pp, False)]["ir"]
            k = c1 * 1000 / ir1
            user_share = u1 / (u1 + s1) if u1 + s1 > 0 else 1.0
            kb, sys_b = c1 * user_share * 1000 / ir1, c1 * (1 - user_share)
            model[(test, pp)] = (k, kb, sys_b)
            p1 = ir1 * k / 1000
            p2a, p2b = ir2 * k / 1000, ir2 * kb / 1000 + sys_b
            m1, lc1 = cpu(1, test, pp, check)
            m2, lc2 = cpu(2, test, pp, check)
            loads = lc1 + lc2
            L.append(f"| {test} | {pp} | {k:.3f} | {p1:.3f} us | {m1:.3f} us | "
                     f"{(p1 - m1) / m1:+.0%} | {p2a:.3f} us | {p2b:.3f} us | {m2:.3f} us | "
                     f"{(p2a - m2) / m2:+.0%} | {(p2b - m2) / m2:+.0%} | "
                     f"{l1[0]:.1f}; {min(loads):.1f}-{max(loads):.1f} |")
    L.append("")
    L.append("Every timed run (on-CPU us per operation; user and sys from the tick counters):")
    L.append("")
    L.append("| round | threads | test | P | CPU us/op | user | sys | ops/s | load |")
    L.append("|---:|---:|---|---:|---:|---:|---:|---:|---:|")
    for (t, test, pp), rs in sorted(timed.items()):
        for i, r in enumerate(rs):
            L.append(f"| {i + 1} | {t} | {test} | {pp} | {r['us']:.3f} | {r['user_us']:.2f} | "
                     f"{r['sys_us']:.2f} | {r['ops_s']:.0f} | {r['load']:.2f} |")
    return model


def prediction_section(a, cg, hop, model, L):
    """Appends the prediction for CORES threads and the README table to L."""
    L.append("")
    L.append("## Prediction")
    L.append("")
    L.append("Per thread count N: uniform keys hop with fraction (N-1)/N in messages of "
             "max(1, P/N) commands; local (hashtagged per connection) keys never hop and cost "
             "the t2 local instructions. CPU per operation = instructions x the t1 CPU per "
             "instruction of the workload (A; B in brackets); throughput = N / CPU per "
             "operation (one core per thread, timing-based through the calibration).")
    L.append("")
    L.append("| test | P | keys | instructions/op at " + ", ".join(map(str, CORES)) + " | " +
             " | ".join(f"N={n}: us/op, ops/s" for n in CORES) + " |")
    L.append("|---|---:|---|---|" + "---:|" * len(CORES))
    pred = {}
    for test in a.tests:
        m, c = hop[test]
        for pp in a.pipelines:
            k, kb, sys_b = model[(test, pp)]
            lo = cg[(2, test, pp, True)]["ir"]
            for label, local in (("uniform", False), ("local", True)):
                irs = [lo if local else predict_ir(lo, m, c, n, pp) for n in CORES]
                cells = []
                for n, ir in zip(CORES, irs):
                    us, usb = ir * k / 1000, ir * kb / 1000 + sys_b
                    pred[(test, pp, local, n)] = n / us * 1e6
                    cells.append(f"{us:.2f} ({usb:.2f}), {fmt_k(n / us * 1e6)} "
                                 f"({fmt_k(n / usb * 1e6)})")
                L.append(f"| {test} | {pp} | {label} | " + ", ".join(f"{x:,.0f}" for x in irs) +
                         " | " + " | ".join(cells) + " |")
    L.append("")
    L.append(f"Peer: {PEER}.")
    L.append("")
    L.append("## README table (model A, ops/s: uniform keys / local keys)")
    L.append("")
    L.append("| workload | " + " | ".join(f"{n} threads" for n in CORES) + " |")
    L.append("|---|" + "---:|" * len(CORES))
    for test in a.tests:
        for pp in a.pipelines:
            L.append(f"| {test.upper()} P{pp} | " + " | ".join(
                f"{fmt_k(pred[(test, pp, False, n)])} / {fmt_k(pred[(test, pp, True, n)])}"
                for n in CORES) + " |")


if __name__ == "__main__":
    try:
        sys.exit(main())
    except compare.BenchError as e:
        print(f"error: {e}", file=sys.stderr)
        sys.exit(2)
