#!/usr/bin/env python3
"""Cache-mode benchmark (issue 17): dashkv against redis-server under the same maxmemory, with
allkeys-lru and then allkeys-lfu.

For each server and policy: start it with --maxmemory and the policy, fill it past the limit with
uniformly random keys (redis-benchmark, 100-byte values), then drive it with Zipf-distributed keys
(exponent 0.99 over a key space about 10x what fits) from several processes, each one connection
sending pipelined raw RESP:
  warm-up   SET:GET 1:10, not measured (the policy learns the hot set)
  mixed     SET:GET 1:10, measured
  read      GET only, measured
Per measured phase: hit ratio (keyspace_hits / (hits + misses), deltas of INFO stats), keys held
(DBSIZE), used_memory, RSS (/proc), ops/s, evicted keys, and the server's CPU time per operation
(utime+stime from /proc/<pid>/stat). Prints a markdown report; --out writes it to a file.

Python 3 standard library only (the Zipf sampler is an exact inverse-CDF table for the most
popular ranks and the continuous approximation of the tail). Reuses compare.py's RESP client,
server runner and /proc helpers.
"""

import argparse
import bisect
import math
import multiprocessing as mp
import os
import random
import shlex
import shutil
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare import (HOST, REDIS_ARGS, BenchError, Server, info_field,  # noqa: E402
                     machine_info, proc_cpu_seconds, proc_rss_bytes)

KEY_FORMAT = b"key:%012d"  # what redis-benchmark's -r substitutes for __rand_int__
KEY_LEN = 16
HEAD_RANKS = 1 << 16  # ranks sampled from the exact table; the rest from the continuous tail


# ---- Zipf keys -----------------------------------------------------------------------------------

class Zipf:
    """Ranks 1..n with P(k) proportional to k^-s; sample() returns a key id in [0, n), the rank
    scattered over the id space (so hot keys are spread over every shard)."""

    def __init__(self, n, s, seed):
        self.n, self.s = n, s
        head = min(n, HEAD_RANKS)
        cum, acc = [], 0.0
        for k in range(1, head + 1):
            acc += k ** -s
            cum.append(acc)
        self.cum, self.head, self.head_mass = cum, head, acc
        self.e = 1.0 - s
        self.lo = (head + 0.5) ** self.e
        tail = ((n + 0.5) ** self.e - self.lo) / self.e if n > head else 0.0
        self.total = acc + tail
        self.mult = 2654435761
        while math.gcd(self.mult, n) != 1:
            self.mult += 2
        self.rng = random.Random(seed)

    def sample(self):
        u = self.rng.random() * self.total
        if u < self.head_mass:
            rank = bisect.bisect_left(self.cum, u)  # 0-based
        else:
            x = (self.lo + (u - self.head_mass) * self.e) ** (1.0 / self.e)
            rank = min(self.n - 1, max(self.head, int(x + 0.5) - 1))
        return rank * self.mult % self.n


# ---- load workers --------------------------------------------------------------------------------

def worker(port, keys, exponent, seed, set_every, pipeline, value_size, t_start, t_end, out):
    """One connection: pipelines of `pipeline` commands, a SET every `set_every` commands
    (0: GETs only), until t_end; counts from t_start on. Puts (ops, get_hits, get_misses) to
    `out`."""
    zipf = Zipf(keys, exponent, seed)
    value = b"v" * value_size
    set_head = b"*3\r\n$3\r\nSET\r\n$%d\r\n" % KEY_LEN
    set_tail = b"\r\n$%d\r\n%s\r\n" % (value_size, value)
    get_head = b"*2\r\n$3\r\nGET\r\n$%d\r\n" % KEY_LEN
    hit_len = len(b"$%d\r\n" % value_size) + value_size + 2
    sock = socket.create_connection((HOST, port))
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    ops = hits = misses = 0
    rng = random.Random(seed ^ 0x5EED)
    counter = rng.randrange(set_every) if set_every else 0
    try:
        while True:
            now = time.time()
            if now >= t_end:
                break
            counting = now >= t_start
            parts = []
            for _ in range(pipeline):
                key = KEY_FORMAT % zipf.sample()
                counter += 1
                if set_every and counter % set_every == 0:
                    parts.append(set_head + key + set_tail)
                else:
                    parts.append(get_head + key + b"\r\n")
            sock.sendall(b"".join(parts))
            buf = b""
            pos = 0
            left = pipeline
            h = m = 0
            while left:
                # Replies: +OK, $-1 (miss), $<size> value (hit), or an error line.
                while True:
                    end = buf.find(b"\r\n", pos)
                    if end >= 0:
                        break
                    chunk = sock.recv(1 << 20)
                    if not chunk:
                        raise BenchError("server closed the connection")
                    buf = buf[pos:] + chunk
                    pos = 0
                c = buf[pos:pos + 1]
                if c == b"$" and buf[pos + 1:pos + 2] != b"-":
                    while len(buf) - pos < hit_len:
                        chunk = sock.recv(1 << 20)
                        if not chunk:
                            raise BenchError("server closed the connection")
                        buf = buf[pos:] + chunk
                        pos = 0
                    pos += hit_len
                    h += 1
                else:
                    if c == b"-":
                        raise BenchError("server error: %r" % buf[pos:end])
                    if c == b"$":
                        m += 1
                    pos = end + 2
                left -= 1
            if counting:
                ops += pipeline
                hits += h
                misses += m
    finally:
        sock.close()
    out.put((ops, hits, misses))


def run_load(port, a, set_every, seconds, warmup, seed):
    """Runs a.procs workers for warmup+seconds; returns (ops, client hits, client misses, the
    measured window's wall seconds)."""
    ctx = mp.get_context("fork")
    out = ctx.Queue()
    t_start = time.time() + 1.0 + warmup  # 1 s for the workers to build their tables
    t_end = t_start + seconds
    procs = [ctx.Process(target=worker, args=(port, a.keys, a.zipf, seed * 1000 + i, set_every,
                                              a.pipeline, a.value_size, t_start, t_end, out))
             for i in range(a.procs)]
    for p in procs:
        p.start()
    results = [out.get(timeout=warmup + seconds + 120) for _ in procs]
    for p in procs:
        p.join(timeout=30)
        if p.exitcode != 0:
            raise BenchError("a load worker failed (exit code %s)" % p.exitcode)
    return (sum(r[0] for r in results), sum(r[1] for r in results),
            sum(r[2] for r in results), seconds)


# ---- one server, one policy ----------------------------------------------------------------------

def stats(server):
    c = server.client(timeout=60)
    try:
        info = c.call("INFO", "all")
        dbsize = c.call("DBSIZE")
    finally:
        c.close()
    return {
        "hits": int(info_field(info, "keyspace_hits")),
        "misses": int(info_field(info, "keyspace_misses")),
        "evicted": int(info_field(info, "evicted_keys")),
        "used_memory": int(info_field(info, "used_memory")),
        "dbsize": int(dbsize),
        "rss": proc_rss_bytes(server.proc.pid),
        "cpu": proc_cpu_seconds(server.proc.pid),
    }


def measure_phase(server, a, name, set_every, seconds, warmup, seed):
    s0 = stats(server)
    # The warm-up's work is not counted: take the counters again when the window opens.
    if warmup:
        run_load(server.port, a, set_every, 0, warmup, seed + 7)
        s0 = stats(server)
    ops, chits, cmisses, wall = run_load(server.port, a, set_every, seconds, 0, seed)
    s1 = stats(server)
    server.check_alive()
    hits, misses = s1["hits"] - s0["hits"], s1["misses"] - s0["misses"]
    # The server also counted the requests sent just outside the window (the workers' first
    # and last pipelines): CPU per op uses the server's own count of reads and writes.
    served = (hits + misses) * (1 + (1.0 / (set_every - 1) if set_every else 0.0))
    return {
        "phase": name,
        "ops_s": ops / wall,
        "hit_ratio": hits / (hits + misses) if hits + misses else 0.0,
        "client_hit_ratio": chits / (chits + cmisses) if chits + cmisses else 0.0,
        "cpu_us_op": (s1["cpu"] - s0["cpu"]) * 1e6 / served if served else 0.0,
        "evicted": s1["evicted"] - s0["evicted"],
        "dbsize": s1["dbsize"],
        "used_memory": s1["used_memory"],
        "rss": s1["rss"],
    }


def fill(server, a):
    """Sets uniformly random keys of the Zipf key space until the server has evicted for a
    while (2x the limit's worth of values)."""
    n = 2 * a.maxmemory_bytes // a.value_size
    argv = [a.redis_benchmark, "-h", HOST, "-p", str(server.port), "-t", "set", "-n", str(n),
            "-r", str(a.keys), "-d", str(a.value_size), "-P", "50", "-c", "8", "-q"]
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, timeout=1800)


def bench_one(label, argv_fn, a, policy, seed):
    workdir = tempfile.mkdtemp(prefix="cache-bench-")
    server = Server(label, lambda port, wd: argv_fn(port, wd, policy), a.server_cpus, workdir,
                    60).start()
    try:
        fill(server, a)
        filled = stats(server)
        rows = [measure_phase(server, a, "mixed 1:10", 11, a.seconds, a.warmup, seed),
                measure_phase(server, a, "GET only", 0, a.seconds, 0, seed + 1)]
        for r in rows:
            r.update(server=label, policy=policy, filled_dbsize=filled["dbsize"])
        return rows
    finally:
        server.stop()
        shutil.rmtree(workdir, ignore_errors=True)


# ---- report --------------------------------------------------------------------------------------

def mib(n):
    return "%.1f" % (n / 1048576.0)


def render(a, rows):
    lines = ["# Cache benchmark: dashkv vs redis-server (issue 17)", ""]
    lines += machine_info()
    lines += ["- maxmemory: %s, values %d bytes, key space %d keys (Zipf exponent %.2f), "
              "%d load processes x pipeline %d, %d s per measured phase (+%d s warm-up)"
              % (a.maxmemory, a.value_size, a.keys, a.zipf, a.procs, a.pipeline, a.seconds,
                 a.warmup),
              "- dashkv: --threads %d; server pinned to CPUs %s, load unpinned"
              % (a.threads, a.server_cpus or "(none)"), ""]
    lines += ["| policy | phase | server | keys held | used_memory MiB | RSS MiB | hit ratio | "
              "ops/s | CPU us/op | evicted |",
              "|---|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        lines.append("| %s | %s | %s | %d | %s | %s | %.4f | %.0f | %.2f | %d |" % (
            r["policy"], r["phase"], r["server"], r["dbsize"], mib(r["used_memory"]),
            mib(r["rss"]), r["hit_ratio"], r["ops_s"], r["cpu_us_op"], r["evicted"]))
    lines += ["", "Ratios (dashkv / redis):", ""]
    by = {(r["policy"], r["phase"], r["server"]): r for r in rows}
    for (policy, phase, server), r in sorted(by.items()):
        if server != "dashkv" or (policy, phase, "redis") not in by:
            continue
        q = by[(policy, phase, "redis")]
        lines.append("- %s, %s: keys held %.2fx, hit ratio %.4f vs %.4f, CPU/op %.2fx, "
                     "ops/s %.2fx" % (policy, phase, r["dbsize"] / max(1, q["dbsize"]),
                                      r["hit_ratio"], q["hit_ratio"],
                                      r["cpu_us_op"] / q["cpu_us_op"] if q["cpu_us_op"] else 0,
                                      r["ops_s"] / q["ops_s"] if q["ops_s"] else 0))
    return "\n".join(lines) + "\n"


def parse_size(s):
    s = s.strip().lower()
    for suffix, mult in (("gb", 1 << 30), ("mb", 1 << 20), ("kb", 1 << 10), ("b", 1)):
        if s.endswith(suffix):
            return int(s[:-len(suffix)]) * mult
    return int(s)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--dashkv", default="build/dashkv")
    p.add_argument("--redis", default="redis-server")
    p.add_argument("--redis-benchmark", default="redis-benchmark")
    p.add_argument("--threads", type=int, default=1, help="dashkv --threads")
    p.add_argument("--maxmemory", default="256mb")
    p.add_argument("--keys", type=int, default=0,
                   help="key space (default: 10x the 100-byte values maxmemory holds in Redis, "
                        "~200 bytes a key)")
    p.add_argument("--value-size", type=int, default=100)
    p.add_argument("--zipf", type=float, default=0.99)
    p.add_argument("--policies", default="allkeys-lru,allkeys-lfu")
    p.add_argument("--servers", default="redis,dashkv")
    p.add_argument("--procs", type=int, default=4, help="load processes (one connection each)")
    p.add_argument("--pipeline", type=int, default=32)
    p.add_argument("--seconds", type=int, default=30, help="measured seconds per phase")
    p.add_argument("--warmup", type=int, default=30, help="unmeasured mixed-load seconds")
    p.add_argument("--server-cpus", default="0", help="taskset CPU list for the server")
    p.add_argument("--out")
    a = p.parse_args(argv)
    a.maxmemory_bytes = parse_size(a.maxmemory)
    a.dashkv = os.path.abspath(a.dashkv)  # the servers run in their own directories
    if a.keys == 0:
        a.keys = 10 * a.maxmemory_bytes // (100 + a.value_size)
    a.redis_benchmark = shutil.which(a.redis_benchmark) or a.redis_benchmark

    def dashkv_argv(port, workdir, policy):
        return [a.dashkv, "--port", str(port), "--bind", HOST, "--dir", workdir, "--save", "",
                "--threads", str(a.threads), "--maxmemory", a.maxmemory,
                "--maxmemory_policy", policy]

    def redis_argv(port, workdir, policy):
        return [a.redis, "--port", str(port), "--bind", HOST, "--dir", workdir] + REDIS_ARGS + \
            ["--maxmemory", a.maxmemory, "--maxmemory-policy", policy]

    argv_of = {"dashkv": dashkv_argv, "redis": redis_argv}
    rows = []
    for i, policy in enumerate(a.policies.split(",")):
        for server in a.servers.split(","):
            print("# %s %s" % (server, policy), file=sys.stderr)
            rows += bench_one(server, argv_of[server], a, policy, seed=100 + i)
    report = render(a, rows)
    print(report)
    if a.out:
        with open(a.out, "w") as f:
            f.write(report)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BenchError as e:
        print("error: %s" % e, file=sys.stderr)
        sys.exit(1)
