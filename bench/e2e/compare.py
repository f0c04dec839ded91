#!/usr/bin/env python3
"""Side-by-side end-to-end benchmark: dashkv against Debian's redis-server.

Starts each server in turn on a random loopback port, pinned with taskset, prefills it, drives it
with memtier_benchmark (when installed) or redis-benchmark, and measures throughput, latency and
the server's own CPU time per operation (from /proc/<pid>/stat). Prints a markdown table and, with
--out, writes it to a file together with machine info. See bench/e2e/README.md.

Python 3 standard library only. Every run is bounded in time; servers are always stopped.
"""

import argparse
import csv
import datetime
import io
import os
import platform
import re
import resource
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

CLK_TCK = os.sysconf("SC_CLK_TCK")
HOST = "127.0.0.1"
PREFILL_BATCH = 1000
REDIS_ARGS = ["--save", "", "--appendonly", "no", "--enable-debug-command", "local"]


class BenchError(Exception):
    """A failure that ends the benchmark with a clear message (server did not start, died, ...)."""


# ---- a tiny RESP client --------------------------------------------------------------------------

class Resp:
    """Minimal blocking RESP2 client for setup commands (PING, INFO, FLUSHALL, DEBUG, prefill)."""

    def __init__(self, port, timeout=10.0):
        self.sock = socket.create_connection((HOST, port), timeout=timeout)
        self.buf = b""

    def close(self):
        self.sock.close()

    @staticmethod
    def encode(*args):
        out = [b"*%d\r\n" % len(args)]
        for a in args:
            b = a if isinstance(a, bytes) else str(a).encode()
            out.append(b"$%d\r\n%s\r\n" % (len(b), b))
        return b"".join(out)

    def _line(self):
        while b"\r\n" not in self.buf:
            chunk = self.sock.recv(1 << 16)
            if not chunk:
                raise BenchError("server closed the connection")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def _exact(self, n):
        while len(self.buf) < n + 2:
            chunk = self.sock.recv(1 << 16)
            if not chunk:
                raise BenchError("server closed the connection")
            self.buf += chunk
        data, self.buf = self.buf[:n], self.buf[n + 2:]
        return data

    def read(self):
        """Reads one reply; errors come back as BenchError instances (not raised)."""
        line = self._line()
        kind, rest = line[:1], line[1:]
        if kind == b"+":
            return rest.decode()
        if kind == b"-":
            return BenchError(rest.decode())
        if kind == b":":
            return int(rest)
        if kind == b"$":
            n = int(rest)
            return None if n < 0 else self._exact(n).decode(errors="replace")
        if kind == b"*":
            n = int(rest)
            return None if n < 0 else [self.read() for _ in range(n)]
        raise BenchError(f"unexpected reply line {line[:60]!r}")

    def call(self, *args):
        self.sock.sendall(self.encode(*args))
        reply = self.read()
        if isinstance(reply, BenchError):
            raise BenchError(f"{' '.join(map(str, args))[:60]}: -{reply}")
        return reply


def info_field(info_text, name):
    m = re.search(rf"^{re.escape(name)}:(.*?)\r?$", info_text, re.M)
    return m.group(1).strip() if m else None


# ---- processes -----------------------------------------------------------------------------------

def free_port():
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def proc_cpu_seconds(pid):
    """Returns utime+stime of a whole process (all threads) in seconds, from /proc/<pid>/stat."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    # After the ")" the first field is state (field 3); utime and stime are fields 14 and 15.
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def proc_rss_bytes(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


def pinned(cpus, argv):
    return (["taskset", "-c", cpus] + argv) if cpus else argv


class Server:
    """One server process (dashkv or redis-server) on a random port, pinned to `cpus`."""

    def __init__(self, label, argv_fn, cpus, workdir, start_timeout):
        self.label, self.argv_fn, self.cpus = label, argv_fn, cpus
        self.workdir, self.start_timeout = workdir, start_timeout
        self.proc, self.port, self.log_path = None, None, None

    def start(self):
        self.port = free_port()
        argv = pinned(self.cpus, self.argv_fn(self.port, self.workdir))
        self.log_path = os.path.join(self.workdir, f"{self.label.replace(' ', '_')}.log")
        log = open(self.log_path, "wb")
        print(f"# starting {self.label}: {shlex.join(argv)}", file=sys.stderr)
        try:
            self.proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT,
                                         stdin=subprocess.DEVNULL, cwd=self.workdir,
                                         start_new_session=True)
        except OSError as e:
            raise BenchError(f"{self.label}: cannot execute {argv[0]}: {e}") from e
        finally:
            log.close()
        deadline = time.monotonic() + self.start_timeout
        last = "no answer"
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise BenchError(f"{self.label} exited with code {self.proc.returncode} during "
                                 f"startup.\n  command: {shlex.join(argv)}\n{self.log_tail()}")
            try:
                c = Resp(self.port, timeout=2)
                try:
                    reply = c.call("PING")
                finally:
                    c.close()
                if reply == "PONG":
                    return self
                last = repr(reply)
            except (OSError, BenchError) as e:
                last = str(e)
            time.sleep(0.05)
        self.stop()
        raise BenchError(f"{self.label} did not answer PING on port {self.port} within "
                         f"{self.start_timeout:.0f}s (last: {last}).\n  command: "
                         f"{shlex.join(argv)}\n{self.log_tail()}")

    def log_tail(self, n=15):
        try:
            with open(self.log_path, errors="replace") as f:
                lines = f.read().splitlines()[-n:]
        except OSError:
            lines = []
        return "  log (last lines):\n" + "\n".join("    " + l for l in lines) if lines else \
            "  (empty log)"

    def check_alive(self):
        if self.proc.poll() is not None:
            raise BenchError(f"{self.label} died (exit code {self.proc.returncode}).\n"
                             f"{self.log_tail()}")

    def cpu_seconds(self):
        self.check_alive()
        return proc_cpu_seconds(self.proc.pid)

    def client(self, timeout=10.0):
        return Resp(self.port, timeout)

    def stop(self):
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            print(f"# {self.label} ignored SIGTERM for 15 s; killing it", file=sys.stderr)
            self.proc.kill()
            self.proc.wait()


# ---- load generators -----------------------------------------------------------------------------

class RedisBenchmark:
    name = "redis-benchmark"
    key_format = "key:%012d"  # what `-r N` substitutes for __rand_int__

    def __init__(self, path):
        self.path = path

    def argv(self, port, test, pipeline, requests, a):
        return [self.path, "-h", HOST, "-p", str(port), "-t", test, "-n", str(requests),
                "-c", str(a.clients), "-P", str(pipeline), "-d", str(a.value_size),
                "-r", str(a.keys), "--csv"]

    @staticmethod
    def parse(out, requests):
        rows = list(csv.DictReader(io.StringIO(out)))
        if not rows or "rps" not in rows[-1]:
            raise BenchError(f"cannot parse redis-benchmark output:\n{out[-500:]}")
        r = rows[-1]
        return {"ops": requests, "ops_s": float(r["rps"]), "avg": float(r["avg_latency_ms"]),
                "p50": float(r["p50_latency_ms"]), "p99": float(r["p99_latency_ms"])}


class Memtier:
    name = "memtier_benchmark"
    key_format = "key:%d"  # --key-prefix=key: with --key-minimum/--key-maximum

    def __init__(self, path):
        self.path = path

    def argv(self, port, test, pipeline, requests, a):
        per_client = max(1, requests // a.clients)
        return [self.path, "-s", HOST, "-p", str(port), "--protocol=redis", "-t", "1",
                "-c", str(a.clients), f"--pipeline={pipeline}", f"--data-size={a.value_size}",
                "--key-prefix=key:", "--key-minimum=0", f"--key-maximum={a.keys - 1}",
                "--key-pattern=R:R", "--ratio=" + ("1:0" if test == "set" else "0:1"),
                f"--requests={per_client}", "--hide-histogram", "--print-percentiles=50,99"]

    @staticmethod
    def parse(out, requests):
        lines = out.splitlines()
        header = None
        for line in lines:
            if line.startswith("Type") and "Ops/sec" in line:
                header = re.split(r"\s{2,}", line.strip())
            elif header and line.startswith("Totals"):
                vals = dict(zip(header, line.split()))
                try:
                    return {"ops": requests, "ops_s": float(vals["Ops/sec"]),
                            "avg": float(vals.get("Avg. Latency", vals.get("Latency", "nan"))),
                            "p50": float(vals.get("p50 Latency", "nan")),
                            "p99": float(vals.get("p99 Latency", "nan"))}
                except (KeyError, ValueError):
                    break
        raise BenchError(f"cannot parse memtier_benchmark output:\n{out[-800:]}")


def pick_tool(a):
    if a.tool in ("auto", "memtier"):
        path = shutil.which("memtier_benchmark")
        if path:
            return Memtier(path)
        if a.tool == "memtier":
            raise BenchError("--tool memtier: memtier_benchmark is not installed")
    path = shutil.which("redis-benchmark")
    if not path:
        raise BenchError("neither memtier_benchmark nor redis-benchmark is installed "
                         "(Debian: apt-get install redis-tools)")
    return RedisBenchmark(path)


# ---- measurements --------------------------------------------------------------------------------

def prefill(server, key_format, a):
    """FLUSHALL, then SET `a.keys` keys with `a.value_size`-byte values, pipelined."""
    c = server.client(timeout=60)
    try:
        c.call("FLUSHALL")
        value = b"x" * a.value_size
        for start in range(0, a.keys, PREFILL_BATCH):
            end = min(a.keys, start + PREFILL_BATCH)
            c.sock.sendall(b"".join(Resp.encode("SET", key_format % i, value)
                                    for i in range(start, end)))
            for _ in range(start, end):
                reply = c.read()
                if reply != "OK":
                    raise BenchError(f"{server.label}: prefill SET replied {reply!r}")
        try:
            n = c.call("DBSIZE")
            if n != a.keys:
                print(f"# warning: {server.label} DBSIZE={n} after prefilling {a.keys} keys",
                      file=sys.stderr)
        except BenchError as e:
            print(f"# warning: {server.label} DBSIZE failed: {e}", file=sys.stderr)
    finally:
        c.close()


def run_tool(server, tool, test, pipeline, requests, a):
    argv = pinned(a.client_cpus, tool.argv(server.port, test, pipeline, requests, a))
    ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu0, t0 = server.cpu_seconds(), time.monotonic()
    try:
        p = subprocess.run(argv, capture_output=True, text=True, timeout=a.run_timeout,
                           stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired as e:
        server.check_alive()
        raise BenchError(f"{tool.name} did not finish within {a.run_timeout}s against "
                         f"{server.label} ({test} P{pipeline} n={requests}); raise "
                         f"--run-timeout or lower --requests/--seconds") from e
    wall = time.monotonic() - t0
    cpu1 = server.cpu_seconds()
    ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode != 0:
        server.check_alive()
        raise BenchError(f"{tool.name} failed (exit {p.returncode}) against {server.label}:\n"
                         f"  {shlex.join(argv)}\n{(p.stdout + p.stderr)[-800:]}")
    r = tool.parse(p.stdout, requests)
    cpu = cpu1 - cpu0
    client_cpu = (ru1.ru_utime + ru1.ru_stime) - (ru0.ru_utime + ru0.ru_stime)
    r.update(wall=wall, cpu=cpu, cpu_s_per_mops=cpu * 1e6 / r["ops"],
             server_util=cpu / wall if wall else 0.0,
             client_util=client_cpu / wall if wall else 0.0)
    return r


def requests_for(server, tool, test, pipeline, a):
    """Returns the request count: --requests, else calibrated so a run lasts ~--seconds."""
    if a.requests:
        return a.requests
    probe = a.clients * 400 * pipeline if pipeline > 1 else a.clients * 400
    r = run_tool(server, tool, test, pipeline, probe, a)
    n = int(r["ops_s"] * a.seconds)
    return max(probe, min(n, a.max_requests))


def bench_throughput(server, tool, a, results, key):
    prefill(server, tool.key_format, a)
    for test in a.tests:
        for pipeline in a.pipelines:
            n = requests_for(server, tool, test, pipeline, a)
            runs = sorted((run_tool(server, tool, test, pipeline, n, a) for _ in range(a.repeat)),
                          key=lambda x: x["ops_s"])
            r = runs[len(runs) // 2]  # the median run by ops/s (all its figures from that run)
            results[(key, test, pipeline)] = r
            print(f"# {server.label:>18} {test.upper():>4} P{pipeline:<3} n={n:<9} "
                  f"{r['ops_s']:>12,.0f} ops/s  p50 {r['p50']:.3f} ms  p99 {r['p99']:.3f} ms  "
                  f"cpu {r['cpu_s_per_mops']:.2f} s/Mops  ({r['wall']:.2f} s)", file=sys.stderr)


def bench_memory(server, a):
    c = server.client(timeout=a.run_timeout)
    try:
        c.call("FLUSHALL")
        time.sleep(0.2)
        before = int(info_field(c.call("INFO", "memory"), "used_memory"))
        rss0 = proc_rss_bytes(server.proc.pid)
        t0 = time.monotonic()
        c.call("DEBUG", "POPULATE", a.memory, "key", 16)
        took = time.monotonic() - t0
        after = int(info_field(c.call("INFO", "memory"), "used_memory"))
        rss1 = proc_rss_bytes(server.proc.pid)
        n = c.call("DBSIZE")
        c.call("FLUSHALL")
    except (TypeError, ValueError) as e:
        raise BenchError(f"{server.label}: INFO memory has no usable used_memory: {e}") from e
    finally:
        c.close()
    r = {"keys": n, "used": after - before, "rss": rss1 - rss0, "secs": took,
         "b_per_key": (after - before) / a.memory, "rss_per_key": (rss1 - rss0) / a.memory}
    print(f"# {server.label:>18} memory: {r['b_per_key']:.1f} B/key used_memory, "
          f"{r['rss_per_key']:.1f} B/key RSS, DBSIZE {n}, populate {took:.2f} s", file=sys.stderr)
    return r


# ---- servers -------------------------------------------------------------------------------------

def is_redis_binary(path):
    return os.path.basename(path).startswith("redis-server")


def dashkv_argv_fn(a, threads):
    extra = shlex.split(a.dashkv_args)
    as_redis = is_redis_binary(a.dashkv)  # self-test: redis-server plays dashkv

    def argv(port, workdir):
        v = [a.dashkv, "--port", str(port), "--bind", HOST, "--dir", workdir,
             "--dbfilename", "dashkv-bench.rdb"]
        if as_redis:
            return v + REDIS_ARGS + extra
        return v + ["--threads", str(threads), "--save", ""] + extra
    return argv


def redis_argv_fn(a):
    def argv(port, workdir):
        return [a.redis, "--port", str(port), "--bind", HOST, "--dir", workdir] + REDIS_ARGS + \
            shlex.split(a.redis_args)
    return argv


def server_version(server):
    c = server.client()
    try:
        info = c.call("INFO", "server")
    finally:
        c.close()
    for field in ("dashkv_version", "redis_version"):
        v = info_field(info, field)
        if v:
            return f"{field}={v}"
    return "?"


def with_server(label, argv_fn, a, workdir, body):
    s = Server(label, argv_fn, a.server_cpus, workdir, a.start_timeout).start()
    try:
        version = server_version(s)
        body(s)
        s.check_alive()
        return version
    finally:
        s.stop()


# ---- report --------------------------------------------------------------------------------------

def fmt_ratio(x, y):
    return f"{x / y:.2f}x" if y else "n/a"


def render(a, tool, results, mem, versions):
    out = []
    if results:
        out += [f"## Throughput ({tool.name}, {a.clients} clients, {a.value_size}-byte values, "
                f"{a.keys:,} keys; server CPUs {a.server_cpus or 'any'}, "
                f"load generator CPUs {a.client_cpus or 'any'})", "",
                "| test | pipeline | dashkv threads | dashkv ops/s | redis ops/s | ratio | "
                "dashkv p50/p99 ms | redis p50/p99 ms | dashkv CPU s/Mops | redis CPU s/Mops | "
                "CPU ratio |",
                "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for t in a.threads:
            for test in a.tests:
                for p in a.pipelines:
                    d, r = results.get((t, test, p)), results.get(("redis", test, p))
                    if not d or not r:
                        continue
                    out.append(
                        f"| {test.upper()} | {p} | {t} | {d['ops_s']:,.0f} | {r['ops_s']:,.0f} | "
                        f"{fmt_ratio(d['ops_s'], r['ops_s'])} | {d['p50']:.3f} / {d['p99']:.3f} | "
                        f"{r['p50']:.3f} / {r['p99']:.3f} | {d['cpu_s_per_mops']:.2f} | "
                        f"{r['cpu_s_per_mops']:.2f} | "
                        f"{fmt_ratio(d['cpu_s_per_mops'], r['cpu_s_per_mops'])} |")
        out += ["", "Raw runs (server CPU % = server CPU seconds / wall seconds; load generator "
                "CPU % near 100 means the client, not the server, was the limit):", "",
                "| server | test | pipeline | requests | wall s | ops/s | avg ms | server CPU s | "
                "server CPU % | load generator CPU % |",
                "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for (key, test, p), r in results.items():
            name = "redis" if key == "redis" else f"dashkv --threads {key}"
            out.append(f"| {name} | {test.upper()} | {p} | {r['ops']:,} | {r['wall']:.2f} | "
                       f"{r['ops_s']:,.0f} | {r['avg']:.3f} | {r['cpu']:.2f} | "
                       f"{100 * r['server_util']:.0f} | {100 * r['client_util']:.0f} |")
        out.append("")
    if mem:
        out += [f"## Memory (DEBUG POPULATE {a.memory:,} key 16)", "",
                "| server | keys | used_memory delta | bytes/key (used_memory) | "
                "bytes/key (RSS) | populate s |", "|---|---:|---:|---:|---:|---:|"]
        for key, m in mem.items():
            name = "redis" if key == "redis" else f"dashkv --threads {key}"
            out.append(f"| {name} | {m['keys']:,} | {m['used']:,} | {m['b_per_key']:.1f} | "
                       f"{m['rss_per_key']:.1f} | {m['secs']:.2f} |")
        if "redis" in mem:
            for t in a.threads:
                if t in mem and mem["redis"]["b_per_key"]:
                    out.append(f"\ndashkv --threads {t} uses "
                               f"{fmt_ratio(mem[t]['b_per_key'], mem['redis']['b_per_key'])} "
                               f"the bytes per key of redis (used_memory).")
        out.append("")
    out += ["Servers: " + "; ".join(f"{k}: {v}" for k, v in versions.items()), ""]
    return "\n".join(out)


def machine_info():
    model = "?"
    try:
        with open("/proc/cpuinfo") as f:
            m = re.search(r"^model name\s*:\s*(.*)$", f.read(), re.M)
            model = m.group(1) if m else model
    except OSError:
        pass
    here = os.path.dirname(os.path.abspath(__file__))

    def git(*args):
        p = subprocess.run(["git", "-C", here] + list(args), capture_output=True, text=True)
        return p.stdout.strip() if p.returncode == 0 else "?"
    rev = git("rev-parse", "HEAD")
    dirty = " (uncommitted changes)" if git("status", "--porcelain", "--untracked-files=no") \
        not in ("", "?") else ""
    return [f"- date: {datetime.datetime.now().astimezone().isoformat(timespec='seconds')}",
            f"- git: {rev}{dirty}",
            f"- machine: {os.cpu_count()} CPUs (nproc {len(os.sched_getaffinity(0))}), {model}",
            f"- kernel: {platform.system()} {platform.release()}",
            f"- command: `{shlex.join(sys.argv)}`"]


# ---- main ----------------------------------------------------------------------------------------

def csv_list(s, conv=str):
    return [conv(x.strip()) for x in s.split(",") if x.strip()]


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--dashkv", default="build/dashkv", help="dashkv binary")
    p.add_argument("--dashkv-args", default="", help="extra dashkv flags (one shell string)")
    p.add_argument("--redis", default="redis-server", help="redis-server binary")
    p.add_argument("--redis-args", default="", help="extra redis-server flags")
    p.add_argument("--threads", type=int, nargs="+", default=[1],
                   help="dashkv --threads values; dashkv runs once per value")
    p.add_argument("--tests", type=lambda s: csv_list(s.lower()), default=["get", "set"])
    p.add_argument("--pipelines", type=lambda s: csv_list(s, int), default=[1, 30])
    p.add_argument("--requests", type=int, default=0,
                   help="requests per run (0: calibrate so a run lasts ~--seconds)")
    p.add_argument("--seconds", type=float, default=12.0, help="target run length when calibrating")
    p.add_argument("--repeat", type=int, default=1,
                   help="runs per cell; the median run by ops/s is reported")
    p.add_argument("--max-requests", type=int, default=50_000_000, help="cap on calibrated runs")
    p.add_argument("--clients", type=int, default=50)
    p.add_argument("--keys", type=int, default=100_000, help="keyspace (prefilled)")
    p.add_argument("--value-size", type=int, default=256)
    p.add_argument("--server-cpus", default="0", help="taskset CPU list for servers ('' = no pin)")
    p.add_argument("--client-cpus", default="1", help="taskset CPU list for the load generator")
    p.add_argument("--tool", choices=["auto", "memtier", "redis-benchmark"], default="auto")
    p.add_argument("--memory", type=int, default=0, metavar="N",
                   help="memory mode: DEBUG POPULATE N key 16, report bytes per key "
                        "(skips throughput unless --with-throughput)")
    p.add_argument("--with-throughput", action="store_true", help="with --memory: run both")
    p.add_argument("--skip-redis", action="store_true", help="run dashkv only")
    p.add_argument("--out", help="also write the report (with machine info) to this markdown file")
    p.add_argument("--start-timeout", type=float, default=20.0, help="seconds to wait for PING")
    p.add_argument("--run-timeout", type=float, default=180.0, help="seconds per load run")
    p.add_argument("--self-test", action="store_true",
                   help="quick check of this script: redis-server plays dashkv, short runs, plus "
                        "a server that fails to start")
    return p.parse_args(argv)


def cpu_list(spec):
    """Expands a taskset CPU list such as '0,2-3' into [0, 2, 3]."""
    cpus = []
    try:
        for part in filter(None, spec.split(",")):
            lo, _, hi = part.partition("-")
            cpus += range(int(lo), int(hi or lo) + 1)
    except ValueError as e:
        raise BenchError(f"bad CPU list {spec!r}") from e
    return cpus


def check_environment(a):
    for name, path in (("dashkv", a.dashkv), ("redis", a.redis)):
        if name == "redis" and a.skip_redis:
            continue
        resolved = shutil.which(path) if os.sep not in path else path
        if not resolved or not os.access(resolved, os.X_OK):
            raise BenchError(f"{name} binary not found or not executable: {path}")
        if name == "dashkv":
            a.dashkv = os.path.abspath(resolved)
        else:
            a.redis = resolved
    if a.server_cpus or a.client_cpus:
        if not shutil.which("taskset"):
            raise BenchError("taskset not found (util-linux); pass --server-cpus '' "
                             "--client-cpus '' to run unpinned")
        allowed = os.sched_getaffinity(0)
        for cpus in (a.server_cpus, a.client_cpus):
            for c in cpu_list(cpus):
                if c not in allowed:
                    raise BenchError(f"CPU {c} is not available to this process "
                                     f"(allowed: {sorted(allowed)})")
        ncpu = len(cpu_list(a.server_cpus))
        for t in a.threads:
            if ncpu and t > ncpu:
                print(f"# note: dashkv --threads {t} shares {ncpu} pinned CPU(s) "
                      f"({a.server_cpus}); widen --server-cpus to measure scaling", file=sys.stderr)
    for t in a.tests:
        if t not in ("get", "set"):
            raise BenchError(f"unsupported test {t!r} (get, set)")


def run(a):
    check_environment(a)
    tool = pick_tool(a)
    throughput = not a.memory or a.with_throughput
    results, mem, versions, errors = {}, {}, {}, []
    with tempfile.TemporaryDirectory(prefix="dashkv-e2e-") as workdir:
        jobs = [] if a.skip_redis else [("redis", "redis-server", redis_argv_fn(a))]
        jobs += [(t, f"dashkv threads={t}", dashkv_argv_fn(a, t)) for t in a.threads]
        for key, label, argv_fn in jobs:
            def body(s, key=key):
                if throughput:
                    bench_throughput(s, tool, a, results, key)
                if a.memory:
                    mem[key] = bench_memory(s, a)
            try:
                versions[label] = with_server(label, argv_fn, a, workdir, body)
            except BenchError as e:  # keep going: the other servers' figures are still useful
                print(f"compare.py: error: {e}", file=sys.stderr)
                errors.append(f"{label}: {str(e).splitlines()[0]}")
    report = render(a, tool, results, mem, versions)
    if errors:
        report += "\n**Failed:**\n\n" + "\n".join(f"- {e}" for e in errors) + "\n"
    print(report)
    if a.out:
        with open(a.out, "w") as f:
            f.write("# dashkv vs redis-server: end-to-end benchmark\n\n")
            f.write("\n".join(machine_info()) + "\n\n" + report)
        print(f"# wrote {a.out}", file=sys.stderr)
    if errors:
        raise BenchError(f"{len(errors)} server(s) failed: " + "; ".join(errors))
    return results, mem


def self_test(a):
    """Runs the whole pipeline with redis-server in both roles, then checks the failure path."""
    a.dashkv, a.dashkv_args = a.redis, ""
    a.requests = a.requests or 20_000
    a.memory = a.memory or 100_000
    a.with_throughput = True
    results, mem = run(a)
    expected = (1 + len(a.threads)) * len(a.tests) * len(a.pipelines)
    assert len(results) == expected, f"expected {expected} runs, got {len(results)}"
    for r in results.values():
        assert r["ops_s"] > 0 and r["p99"] >= r["p50"] >= 0 and r["cpu"] > 0, r
    for m in mem.values():
        assert m["keys"] == a.memory and 20 < m["b_per_key"] < 1000, m
    sample = ("Type         Ops/sec     Hits/sec   Misses/sec    Avg. Latency     p50 Latency"
              "     p99 Latency       KB/sec\n" + "-" * 40 + "\n"
              "Gets        500.00          ---          ---         0.50000         0.40000"
              "         0.90000      1.00\n"
              "Totals      510.00          ---          ---         0.51000         0.41000"
              "         0.91000      1.00\n")
    got = Memtier.parse(sample, 1000)
    assert (got["ops_s"], got["p50"], got["p99"]) == (510.0, 0.41, 0.91), got
    # A server that cannot start must fail fast and clearly.
    with tempfile.TemporaryDirectory() as d:
        for bad in (["/bin/false"], [a.redis, "--no-such-option"]):
            s = Server("broken", lambda port, wd, bad=bad: bad, "", d, 5)
            try:
                s.start()
                s.stop()
                raise AssertionError(f"{bad} should not have started")
            except BenchError as e:
                print(f"# expected failure caught: {str(e).splitlines()[0]}", file=sys.stderr)
    print("self-test: 1 passed, 0 failed")


def main(argv=None):
    a = parse_args(sys.argv[1:] if argv is None else argv)
    try:
        if a.self_test:
            self_test(a)
        else:
            run(a)
    except BenchError as e:
        print(f"compare.py: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
