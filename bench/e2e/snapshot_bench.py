#!/usr/bin/env python3
"""Snapshot benchmark: dashkv against Debian's redis-server, side by side in one run.

Subcommands:
  save-load      DEBUG POPULATE N key 16, SAVE (wall time, file size), then restart on the file
                 and time the start-up load; dashkv also loads Redis's file (and Redis dashkv's).
  bgsave-memory  a dataset of 1 KB values under a SET load; RSS/PSS of the process tree and
                 INFO used_memory sampled every 50 ms from 2 s before BGSAVE to 2 s after it ends;
                 the load's throughput and p99 during the snapshot against a run without one.

Servers run one after the other, never two loaded at once. Python 3 standard library only (plus
redis-server, redis-benchmark, redis-cli, stdbuf). See bench/e2e/README.md.
"""

import argparse
import datetime
import os
import platform
import random
import select
import re
import shlex
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare import BenchError, Resp, info_field, pinned  # noqa: E402  (same directory)

HOST = "127.0.0.1"
REDIS_ARGS = ["--save", "", "--appendonly", "no", "--enable-debug-command", "yes"]


# ---- helpers -------------------------------------------------------------------------------------

def log(msg):
    print(f"# [{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def loadavg():
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


def high_port(lo=30000, hi=40000):
    """A free port in [lo, hi) (other engineers' servers use the low ranges)."""
    for _ in range(200):
        port = random.randrange(lo, hi)
        with socket.socket() as s:
            try:
                s.bind((HOST, port))
                return port
            except OSError:
                continue
    raise BenchError("no free port in 30000-40000")


def proc_tree(pid):
    """pid and all its descendants (Redis: the server and its fork child)."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        try:
            for tid in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{tid}/children") as f:
                    todo += [int(x) for x in f.read().split()]
        except OSError:
            pass
    return out


def smaps_rollup(pid):
    """(Rss, Pss) bytes of one process from /proc/PID/smaps_rollup; (0, 0) if it is gone."""
    rss = pss = 0
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith("Rss:"):
                    rss = int(line.split()[1]) * 1024
                elif line.startswith("Pss:"):
                    pss = int(line.split()[1]) * 1024
    except OSError:
        pass
    return rss, pss


def mb(x):
    return x / 1e6


def gib(x):
    return x / 2**30


# ---- servers -------------------------------------------------------------------------------------

class Server:
    """redis-server or dashkv in its own --dir, on a random high port. stop() by pid only."""

    def __init__(self, kind, a, dirpath, threads=None, dbfilename="dump.rdb", label=None):
        self.kind, self.a, self.dir, self.threads = kind, a, dirpath, threads
        self.dbfilename = dbfilename
        self.label = label or (f"dashkv --threads {threads}" if kind == "dashkv" else "redis")
        self.proc = self.port = None
        self.log_path = os.path.join(dirpath, "server.log")
        self.t_start = None
        self.sigterm_ignored = False

    @property
    def rdb_path(self):
        return os.path.join(self.dir, self.dbfilename)

    def argv(self):
        if self.kind == "redis":
            v = [self.a.redis, "--port", str(self.port), "--bind", HOST, "--dir", self.dir,
                 "--dbfilename", self.dbfilename] + REDIS_ARGS + shlex.split(self.a.redis_args)
        else:
            v = [self.a.dashkv, "--port", str(self.port), "--bind", HOST, "--dir", self.dir,
                 "--dbfilename", self.dbfilename, "--save", "", "--threads", str(self.threads)] \
                + shlex.split(self.a.dashkv_args)
        return pinned(self.a.server_cpus, v)

    def spawn(self):
        os.makedirs(self.dir, exist_ok=True)
        self.port = high_port()
        argv = self.argv()
        log(f"starting {self.label}: {shlex.join(argv)}")
        self.log_offset = os.path.getsize(self.log_path) if os.path.exists(self.log_path) else 0
        logf = open(self.log_path, "ab")
        try:
            self.t_start = time.monotonic()
            self.proc = subprocess.Popen(argv, stdout=logf, stderr=subprocess.STDOUT,
                                         stdin=subprocess.DEVNULL, cwd=self.dir,
                                         start_new_session=True)
        finally:
            logf.close()
        return self

    def start(self, timeout=None):
        """Spawns and waits until PING answers +PONG (not -LOADING)."""
        self.spawn()
        deadline = time.monotonic() + (timeout or self.a.start_timeout)
        last = "no answer"
        while time.monotonic() < deadline:
            self.check_alive()
            try:
                c = Resp(self.port, timeout=2)
                try:
                    if c.call("PING") == "PONG":
                        return self
                finally:
                    c.close()
            except (OSError, BenchError) as e:
                last = str(e)
            time.sleep(0.05)
        self.stop()
        raise BenchError(f"{self.label} did not answer PING (last: {last})\n{self.log_tail()}")

    def log_tail(self, n=15):
        try:
            with open(self.log_path, errors="replace") as f:
                return "\n".join("    " + l for l in f.read().splitlines()[-n:])
        except OSError:
            return "    (no log)"

    def log_text(self):
        """This run's part of the log (the directory's log is appended to by every start)."""
        try:
            with open(self.log_path, "rb") as f:
                f.seek(getattr(self, "log_offset", 0))
                return f.read().decode(errors="replace")
        except OSError:
            return ""

    def check_alive(self):
        if self.proc.poll() is not None:
            raise BenchError(f"{self.label} exited with code {self.proc.returncode}\n"
                             f"{self.log_tail()}")

    def client(self, timeout=600.0):
        return Resp(self.port, timeout)

    def call(self, *args, timeout=600.0):
        c = self.client(timeout)
        try:
            return c.call(*args)
        finally:
            c.close()

    def stop(self):
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            log(f"{self.label} ignored SIGTERM for 30 s; killing pid {self.proc.pid}")
            self.sigterm_ignored = True
            self.proc.kill()
            self.proc.wait()

    def version(self):
        info = self.call("INFO", "server")
        for f in ("dashkv_version", "redis_version"):
            v = info_field(info, f)
            if v:
                return f"{f}={v}"
        return "?"

    def log_problems(self):
        """Log lines that look like warnings or errors (dashkv) / warnings (redis '#')."""
        out = []
        benign = r"Redis is starting|Redis version=|Configuration loaded|Server initialized|" \
                 r"User requested shutdown|ready to exit|overcommit"
        for line in self.log_text().splitlines():
            if re.search(benign, line):
                continue
            if re.search(r"\b(error|fail|warn|abort|assert|oom|misconf)", line, re.I) or \
                    re.search(r":[MC] .* # ", line):
                out.append(line.strip())
        return out


# ---- save-load -----------------------------------------------------------------------------------

def save_progress(s):
    c = s.client(timeout=10)
    try:
        info = c.call("INFO", "persistence")
    finally:
        c.close()
    return {f: info_field(info, f) for f in ("rdb_bgsave_in_progress",
                                              "current_save_keys_processed",
                                              "current_save_keys_total")}


def timed_save(s, a):
    """SAVE's wall time. Meanwhile INFO persistence is polled from a second connection; a save
    whose current_save_keys_processed does not move for --stall-seconds is reported as stalled."""
    la = loadavg()
    c = s.client(timeout=3600)
    try:
        t0 = time.monotonic()
        c.sock.sendall(Resp.encode("SAVE"))
        last, last_t, prog = None, t0, {}
        while True:
            r, _, _ = select.select([c.sock], [], [], 0.02 if time.monotonic() - t0 < 2 else 0.5)
            if r:
                reply = c.read()
                secs = time.monotonic() - t0
                break
            s.check_alive()
            try:
                prog = save_progress(s)
            except (BenchError, OSError) as e:
                prog = {"info": f"{type(e).__name__}: {e}"}
            now = time.monotonic()
            if prog != last:
                last, last_t = prog, now
            elif now - last_t > a.stall_seconds:
                return {"save_s": None, "size": None, "load_avg": la,
                        "note": f"SAVE stalled: no progress for {a.stall_seconds:.0f} s after "
                                f"{now - t0:.0f} s ({prog})"}
    finally:
        c.close()
    if reply != "OK":
        return {"save_s": None, "size": None, "load_avg": la, "note": f"SAVE replied {reply!r}"}
    return {"save_s": secs, "size": os.path.getsize(s.rdb_path), "load_avg": la, "note": ""}


def wait_loaded(s, expect_keys, timeout):
    """From process start until INFO persistence says loading:0 and DBSIZE == expect_keys.
    Returns (seconds, dbsize, note)."""
    deadline = s.t_start + timeout
    zero_since = None
    while time.monotonic() < deadline:
        s.check_alive()
        try:
            c = Resp(s.port, timeout=5)
        except OSError:
            time.sleep(0.01)
            continue
        try:
            while time.monotonic() < deadline:
                loading = info_field(c.call("INFO", "persistence"), "loading")
                if loading == "0":
                    n = c.call("DBSIZE")
                    now = time.monotonic()
                    if n == expect_keys:
                        return now - s.t_start, n, ""
                    # Not loading and not all keys: a build without loading stays at 0 keys.
                    zero_since = zero_since or now
                    if now - zero_since > 3.0:
                        return None, n, f"loading:0 but DBSIZE {n} != {expect_keys}"
                time.sleep(0.01)
        except BenchError as e:
            if "LOADING" not in str(e):
                raise
            time.sleep(0.01)
        except OSError:
            time.sleep(0.01)
        finally:
            c.close()
    return None, None, f"not loaded within {timeout:.0f} s"


def redis_log_load(text):
    """Redis 7: '... Done loading RDB, keys loaded: N, ...' and 'DB loaded from disk: X seconds'."""
    keys = secs = None
    m = re.search(r"Done loading RDB, keys loaded: (\d+)", text)
    if m:
        keys = int(m.group(1))
    m = re.search(r"DB loaded from disk: ([\d.]+) seconds", text)
    if m:
        secs = float(m.group(1))
    return keys, secs


def timed_load(kind, a, dirpath, threads, expect_keys, src_label):
    s = Server(kind, a, dirpath, threads,
               label=(f"dashkv --threads {threads}" if kind == "dashkv" else "redis"))
    la = loadavg()
    s.spawn()
    try:
        secs, n, note = wait_loaded(s, expect_keys, a.load_timeout)
        r = {"loader": s.label, "file": src_label, "load_s": secs, "dbsize": n, "note": note,
             "load_avg": la}
        if kind == "redis":
            k, logsecs = redis_log_load(s.log_text())
            r["log_s"], r["log_keys"] = logsecs, k
        r["log_lines"] = [l for l in s.log_text().splitlines() if re.search(r"load", l, re.I)][-4:]
        r["problems"] = s.log_problems()
        return r
    finally:
        s.stop()


def cmd_save_load(a, work):
    results, loads, versions = {}, [], {}
    configs = [("redis", None)] + [("dashkv", t) for t in a.threads]
    for kind, t in configs:
        key = "redis" if kind == "redis" else f"dashkv{t}"
        d = os.path.join(work, key)
        s = Server(kind, a, d, t).start()
        try:
            versions[s.label] = s.version()
            s.call("FLUSHALL")
            t0 = time.monotonic()
            s.call("DEBUG", "POPULATE", a.keys, "key", a.value_size, timeout=3600)
            populate = time.monotonic() - t0
            n = s.call("DBSIZE")
            if n != a.keys:
                raise BenchError(f"{s.label}: DBSIZE {n} after DEBUG POPULATE {a.keys}")
            used = int(info_field(s.call("INFO", "memory"), "used_memory"))
            saves = []
            for i in range(a.repeat):
                r = timed_save(s, a)
                if r["save_s"] is None:
                    log(f"{s.label}: {r['note']}")
                    saves = [r]
                    break
                log(f"{s.label}: SAVE {r['save_s']:.2f} s, file {mb(r['size']):.1f} MB, "
                    f"load avg {r['load_avg']:.2f}")
                saves.append(r)
            r = sorted(saves, key=lambda x: x["save_s"] or 0)[len(saves) // 2]
            r.update(label=s.label, populate_s=populate, used_memory=used,
                     all_save_s=[x["save_s"] or float("nan") for x in saves],
                     all_load_avg=[x["load_avg"] for x in saves])
            results[key] = r
        finally:
            s.stop()
        results[key]["problems"] = s.log_problems()
    if a.no_load:
        return results, loads, versions
    # Start-up loads: each server on its own file, dashkv on Redis's file, Redis on dashkv's.
    jobs = [(kind, t, key, key) for kind, t, key in
            [("redis", None, "redis")] + [("dashkv", t, f"dashkv{t}") for t in a.threads]]
    jobs += [("dashkv", t, f"dashkv{t}-on-redis", "redis") for t in a.threads]
    saved = [t for t in a.threads if results[f"dashkv{t}"]["save_s"] is not None]
    t_src = saved[-1] if saved else a.threads[-1]  # a dashkv file that exists, if any
    jobs += [("redis", None, f"redis-on-dashkv{t_src}", f"dashkv{t_src}")]
    for kind, t, key, src in jobs:
        if results[src]["save_s"] is None:
            loads.append({"loader": "redis" if t is None else f"dashkv --threads {t}",
                          "file": results[src]["label"], "load_s": None, "dbsize": None,
                          "note": "no file (its SAVE failed)", "load_avg": loadavg(),
                          "problems": [], "log_lines": [], "run": 0})
            continue
        d = os.path.join(work, key)
        if key != src:  # a fresh directory holding a copy of the other server's file
            os.makedirs(d, exist_ok=True)
            shutil.copyfile(os.path.join(work, src, "dump.rdb"), os.path.join(d, "dump.rdb"))
        src_label = results[src]["label"]
        for i in range(a.repeat):
            try:
                r = timed_load(kind, a, d, t, a.keys, src_label)
            except BenchError as e:
                r = {"loader": kind if t is None else f"dashkv --threads {t}", "file": src_label,
                     "load_s": None, "dbsize": None, "note": str(e).splitlines()[0],
                     "load_avg": loadavg(), "problems": [], "log_lines": []}
            r["run"] = i
            loads.append(r)
            ls = f"{r['load_s']:.2f} s" if r["load_s"] is not None else f"FAILED ({r['note']})"
            log(f"{r['loader']} loading {src_label}'s file: {ls}, load avg {r['load_avg']:.2f}")
            if r["load_s"] is None:
                break
    return results, loads, versions


def render_save_load(a, results, loads, versions):
    out = [f"## save-load: DEBUG POPULATE {a.keys:,} key {a.value_size}, SAVE, restart and load",
           ""]

    def load_of(loader, file_label):
        rs = [r for r in loads if r["loader"] == loader and r["file"] == file_label]
        ok = [r for r in rs if r["load_s"] is not None]
        if not rs:
            return None, "not run"
        if not ok:
            return None, rs[-1]["note"]
        ok.sort(key=lambda r: r["load_s"])
        return ok[len(ok) // 2], ""

    out += ["| server | SAVE s | file MB | load s (own file) | load avg (save / load) | "
            "populate s | used_memory GiB |", "|---|---:|---:|---:|---|---:|---:|"]
    for key, r in results.items():
        lr, note = load_of(r["label"], r["label"])
        load_s = f"{lr['load_s']:.2f}" if lr else f"n/a ({note})"
        if lr and lr.get("log_s") is not None:
            load_s += f" (log: {lr['log_s']:.3f})"
        la_load = f"{lr['load_avg']:.2f}" if lr else "-"
        if r["save_s"] is None:
            out.append(f"| {r['label']} | FAILED: {r['note']} | - | {load_s} | "
                       f"{r['load_avg']:.2f} / {la_load} | {r['populate_s']:.2f} | "
                       f"{gib(r['used_memory']):.2f} |")
            continue
        out.append(f"| {r['label']} | {r['save_s']:.2f} | {mb(r['size']):.1f} | {load_s} | "
                   f"{r['load_avg']:.2f} / {la_load} | {r['populate_s']:.2f} | "
                   f"{gib(r['used_memory']):.2f} |")
    if a.repeat > 1:
        out += ["", f"SAVE and load figures are the median of {a.repeat} runs. All SAVE runs: " +
                "; ".join(f"{r['label']}: " + ", ".join(f"{x:.2f}" for x in r["all_save_s"])
                          for r in results.values())]
    cross = [r for r in loads if r["loader"] != r["file"]]
    if cross:
        out += ["", "Cross loads (one server's file loaded by the other):", "",
                "| loader | file written by | load s | DBSIZE | load avg | note |",
                "|---|---|---:|---:|---:|---|"]
        for r in cross:
            s = f"{r['load_s']:.2f}" if r["load_s"] is not None else "n/a"
            if r.get("log_s") is not None:
                s += f" (log: {r['log_s']:.3f})"
            out.append(f"| {r['loader']} | {r['file']} | {s} | {r['dbsize']} | "
                       f"{r['load_avg']:.2f} | {r['note']} |")
    rd = results.get("redis")
    if rd:
        out += ["", "Against the aim (dashkv at most 0.5x Redis's time):", ""]
        rl, _ = load_of("redis", "redis")
        for key, r in results.items():
            if key == "redis":
                continue
            if r["save_s"] is None or rd["save_s"] is None:
                line = f"- {r['label']}: SAVE: n/a ({r['note'] or rd['note']})"
            else:
                line = f"- {r['label']}: SAVE {r['save_s'] / rd['save_s']:.2f}x Redis " \
                       f"({'met' if r['save_s'] <= 0.5 * rd['save_s'] else 'NOT met'})"
            dl, note = load_of(r["label"], r["label"])
            if dl and rl:
                ratio = dl["load_s"] / rl["load_s"]
                line += f"; load {ratio:.2f}x Redis ({'met' if ratio <= 0.5 else 'NOT met'})"
            else:
                line += f"; load: n/a ({note})"
            out.append(line)
    probs = {k: r["problems"] for k, r in results.items() if r.get("problems")}
    for r in loads:
        if r.get("problems"):
            probs[f"{r['loader']} loading {r['file']}"] = r["problems"]
    if probs:
        out += ["", "Server log lines mentioning errors/warnings:", ""]
        for k, lines in probs.items():
            out += [f"- {k}:"] + [f"  - `{l[:200]}`" for l in lines[:8]]
    out += ["", "Servers: " + "; ".join(f"{k}: {v}" for k, v in versions.items()), ""]
    return "\n".join(out)


# ---- bgsave-memory -------------------------------------------------------------------------------

def prefill_pipe(s, a):
    """SET key:%012d (redis-benchmark's -r format) for every key of the load's keyspace, through
    redis-cli --pipe, so the load overwrites existing keys and the dataset does not grow."""
    value = b"x" * a.value_size  # redis-benchmark -d fills values with 'x' as well
    head = b"*3\r\n$3\r\nSET\r\n$16\r\n"
    tail = b"\r\n$%d\r\n%s\r\n" % (len(value), value)
    p = subprocess.Popen([a.redis_cli, "-h", HOST, "-p", str(s.port), "--pipe"],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    batch = 2000
    try:
        for start in range(0, a.keys, batch):
            p.stdin.write(b"".join(head + b"key:%012d" % i + tail
                                   for i in range(start, min(a.keys, start + batch))))
        p.stdin.close()
        out = p.stdout.read().decode(errors="replace")
        p.wait(timeout=600)
    except BaseException:
        p.kill()
        p.wait()
        raise
    if p.returncode != 0 or "errors: 0" not in out:
        raise BenchError(f"{s.label}: redis-cli --pipe prefill failed:\n{out[-500:]}")


class Load:
    """redis-benchmark -l: the same -n chunk run again and again, one CSV line per chunk. Each
    line is time-stamped on arrival, so a chunk covers [t - n/rps, t]."""

    def __init__(self, s, a):
        self.argv = pinned(a.client_cpus, ["stdbuf", "-oL", a.redis_benchmark, "-h", HOST,
                                           "-p", str(s.port), "-t", "set", "-r", str(a.keys),
                                           "-d", str(a.value_size), "-c", str(a.clients),
                                           "-P", "1", "-n", str(a.chunk), "-l", "--csv"])
        self.chunks, self.raw = [], []
        self.proc = self.thread = None

    def start(self):
        self.proc = subprocess.Popen(self.argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL, start_new_session=True, text=True)
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()
        return self

    def _read(self):
        for line in self.proc.stdout:
            t = time.monotonic()
            self.raw.append(line.rstrip())
            f = [x.strip('"') for x in line.strip().split(",")]
            if len(f) >= 8 and f[0] == "SET":
                rps = float(f[1])
                self.chunks.append({"end": t, "start": t - self.n() / rps, "rps": rps,
                                    "p50": float(f[4]), "p99": float(f[6]), "max": float(f[7])})

    def n(self):
        return int(self.argv[self.argv.index("-n") + 1])

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.thread:
            self.thread.join(timeout=5)

    def summary(self, t_lo=None, t_hi=None):
        """Chunks whose midpoint lies in [t_lo, t_hi]: ops/s = requests / chunk time; p99 of
        the pooled window lies between the min and the max chunk p99."""
        cs = [c for c in self.chunks
              if (t_lo is None or (c["start"] + c["end"]) / 2 >= t_lo) and
              (t_hi is None or (c["start"] + c["end"]) / 2 <= t_hi)]
        if not cs:
            return None
        secs = sum(c["end"] - c["start"] for c in cs)
        p99s = sorted(c["p99"] for c in cs)
        return {"chunks": len(cs), "ops_s": len(cs) * self.n() / secs,
                "p99_median": statistics.median(p99s), "p99_max": p99s[-1], "p99_min": p99s[0],
                "p50_median": statistics.median(c["p50"] for c in cs),
                "max_ms": max(c["max"] for c in cs), "secs": secs}


class Sampler:
    """Every `interval` s: RSS and PSS of the server's process tree, INFO used_memory and
    rdb_bgsave_in_progress."""

    def __init__(self, s, interval):
        self.s, self.interval = s, interval
        self.samples, self.stop_flag, self.errors = [], threading.Event(), []
        self.thread = None

    def start(self):
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()
        return self

    def _run(self):
        c = self.s.client(timeout=10)
        try:
            nxt = time.monotonic()
            while not self.stop_flag.is_set():
                t = time.monotonic()
                pids = proc_tree(self.s.proc.pid)
                per = [(p,) + smaps_rollup(p) for p in pids]
                try:
                    info = c.call("INFO", "memory", "persistence")
                    used = int(info_field(info, "used_memory") or 0)
                    inprog = info_field(info, "rdb_bgsave_in_progress")
                    keys = info_field(info, "current_save_keys_processed")
                except (BenchError, OSError, ValueError) as e:
                    self.errors.append(f"{t:.2f}: {e}")
                    used, inprog, keys = None, None, None
                self.samples.append({"t": t, "info_s": time.monotonic() - t,
                                     "rss": sum(x[1] for x in per), "pss": sum(x[2] for x in per),
                                     "procs": per, "used": used, "bgsave": inprog, "keys": keys})
                nxt += self.interval
                self.stop_flag.wait(max(0.0, nxt - time.monotonic()))
        finally:
            c.close()

    def stop(self):
        self.stop_flag.set()
        self.thread.join(timeout=10)


def sampled_bgsave(s, a):
    """Samples for --margin s, BGSAVE, waits for rdb_bgsave_in_progress:0 (or a stall), samples
    --margin s more. Returns the memory figures; "error" is set when the BGSAVE did not end."""
    smp = Sampler(s, a.interval).start()
    out = {}
    try:
        time.sleep(a.margin)
        t_bg = time.monotonic()
        out["bgsave_reply"] = s.call("BGSAVE", timeout=30)
        t_end, last, last_t = None, None, t_bg
        c = s.client(timeout=a.stall_seconds)
        try:
            while time.monotonic() - t_bg < a.bgsave_timeout:
                s.check_alive()
                info = c.call("INFO", "persistence")
                now = time.monotonic()
                if info_field(info, "rdb_bgsave_in_progress") == "0":
                    t_end = now
                    break
                prog = (info_field(info, "current_save_keys_processed"),
                        info_field(info, "current_save_keys_total"))
                if prog != last:
                    last, last_t = prog, now
                elif now - last_t > a.stall_seconds:
                    out["error"] = (f"BGSAVE stalled: current_save_keys_processed/total "
                                    f"{prog[0]}/{prog[1]} unchanged for {a.stall_seconds:.0f} s "
                                    f"({now - t_bg:.0f} s after BGSAVE)")
                    break
                time.sleep(0.02)
            else:
                out["error"] = f"BGSAVE still running after {a.bgsave_timeout:.0f} s ({last})"
            out["bgsave_status"] = info_field(c.call("INFO", "persistence"),
                                              "rdb_last_bgsave_status")
        except (BenchError, OSError) as e:
            out["error"] = f"INFO persistence during BGSAVE failed: {type(e).__name__}: {e} " \
                           f"({time.monotonic() - t_bg:.1f} s after BGSAVE; last progress {last})"
        finally:
            c.close()
        if "error" not in out:
            time.sleep(a.margin)
    finally:
        smp.stop()
    t_end = t_end or time.monotonic()
    out.update(bgsave_s=t_end - t_bg if "error" not in out else None, t_bg=t_bg, t_end=t_end,
               samples=smp.samples, sampler_errors=smp.errors,
               rdb_size=os.path.getsize(s.rdb_path) if os.path.exists(s.rdb_path) else None)
    base = [x for x in smp.samples if x["t"] < t_bg]
    for f in ("rss", "pss", "used"):
        vals = [x[f] for x in smp.samples if x[f] is not None]
        bvals = [x[f] for x in base if x[f] is not None]
        out[f"{f}_base"] = statistics.median(bvals) if bvals else None
        out[f"{f}_peak"] = max(vals) if vals else None
    out["max_procs"] = max(len(x["procs"]) for x in smp.samples)
    out["child_peak"] = max((sum(p[1] for p in x["procs"][1:]), sum(p[2] for p in x["procs"][1:]))
                            for x in smp.samples)
    out["info_max_s"] = max(x["info_s"] for x in smp.samples)
    out["n_samples"] = len(smp.samples)
    msg = f"BGSAVE {out['bgsave_s']:.2f} s" if out["bgsave_s"] else out["error"]
    log(f"{s.label}: {msg}; RSS {gib(out['rss_base']):.2f} -> {gib(out['rss_peak']):.2f} GiB, "
        f"PSS {gib(out['pss_base']):.2f} -> {gib(out['pss_peak']):.2f} GiB")
    return out


def bgsave_run(s, a):
    """Prefilled server: (1) BGSAVE without load, sampled; (2) load without BGSAVE for
    --load-seconds; (3) load + BGSAVE, sampled from --margin s before to --margin s after it."""
    r = {"label": s.label}
    if a.idle_bgsave:
        r["load_avg_idle"] = loadavg()
        log(f"{s.label}: BGSAVE without load (load avg {r['load_avg_idle']:.2f})")
        r["idle"] = sampled_bgsave(s, a)
        if "error" in r["idle"]:
            r["error"] = "idle BGSAVE: " + r["idle"]["error"]
            return r
        os.remove(s.rdb_path)
    r["load_avg_base"] = loadavg()
    log(f"{s.label}: load without BGSAVE for {a.load_seconds:.0f} s "
        f"(load avg {r['load_avg_base']:.2f})")
    ld = Load(s, a).start()
    # The sampler runs here too (figures discarded): reading smaps_rollup of a multi-GB process
    # takes tens of ms of CPU, and both windows of the comparison must pay for it alike.
    smp = Sampler(s, a.interval).start() if a.sample_baseline else None
    try:
        time.sleep(a.load_seconds)
    finally:
        if smp:
            smp.stop()
        ld.stop()
    s.check_alive()
    t0 = ld.chunks[0]["end"] if ld.chunks else None  # skip the first chunk (warm-up)
    r["without"] = ld.summary(t_lo=t0)
    r["load_cmd"] = shlex.join(ld.argv)
    time.sleep(1.0)
    r["load_avg_snap"] = loadavg()
    log(f"{s.label}: load + BGSAVE (load avg {r['load_avg_snap']:.2f})")
    ld2 = Load(s, a).start()
    try:
        time.sleep(a.warmup)  # steady load before the base window
        snap = sampled_bgsave(s, a)
    finally:
        ld2.stop()
    r.update(snap)
    if "error" in snap:
        r["error"] = "BGSAVE under load: " + snap["error"]
    if s.kind == "dashkv":  # how each shard's save went (its log line at the end of its part)
        with open(s.log_path, errors="replace") as f:
            r["shard_log"] = [l.strip() for l in f if "Snapshot shard" in l]
    r["during"] = ld2.summary(snap["t_bg"], snap["t_end"])
    r["snap_run_all"] = ld2.summary()
    r["chunks_snap"] = [dict(c, start=c["start"] - snap["t_bg"], end=c["end"] - snap["t_bg"])
                        for c in ld2.chunks]
    return r


def write_samples(path, r):
    with open(path, "w") as f:
        f.write("t_rel_bgsave_s,rss_bytes,pss_bytes,used_memory,rdb_bgsave_in_progress,"
                "current_save_keys_processed,processes,info_ms\n")
        for x in r["samples"]:
            f.write(f"{x['t'] - r['t_bg']:.3f},{x['rss']},{x['pss']},{x['used']},{x['bgsave']},"
                    f"{x['keys']},{len(x['procs'])},{1000 * x['info_s']:.1f}\n")


def cmd_bgsave_memory(a, work):
    results, versions = [], {}
    configs = ([] if a.skip_redis else [("redis", None)]) + [("dashkv", t) for t in a.threads]
    for kind, t in configs:
        key = "redis" if kind == "redis" else f"dashkv{t}"
        d = os.path.join(work, key)
        s = Server(kind, a, d, t).start()
        try:
            versions[s.label] = s.version()
            s.call("FLUSHALL")
            t0 = time.monotonic()
            if a.prefill == "populate":
                s.call("DEBUG", "POPULATE", a.keys, "key", a.value_size, timeout=3600)
            else:
                prefill_pipe(s, a)
            n = s.call("DBSIZE")
            log(f"{s.label}: prefilled {n:,} keys in {time.monotonic() - t0:.1f} s")
            if n != a.keys:
                raise BenchError(f"{s.label}: DBSIZE {n} after prefill of {a.keys}")
            time.sleep(2)
            r = bgsave_run(s, a)
            r["prefill_s"] = time.monotonic() - t0
            results.append(r)
            if a.samples_dir:
                os.makedirs(a.samples_dir, exist_ok=True)
                for part, x in (("idle", r.get("idle")), ("load", r)):
                    if x and x.get("samples"):
                        write_samples(os.path.join(a.samples_dir,
                                                   f"bgsave_samples_{key}_{part}.csv"), x)
        except (BenchError, OSError) as e:  # OSError: e.g. a reply timed out
            e = f"{type(e).__name__}: {e}" if isinstance(e, OSError) else str(e)
            try:
                c = s.client(timeout=5)
                try:
                    info = c.call("INFO", "persistence")
                finally:
                    c.close()
                e += " (then: " + ", ".join(f"{f}={info_field(info, f)}" for f in (
                    "rdb_bgsave_in_progress", "current_save_keys_processed",
                    "current_save_keys_total")) + ")"
            except (BenchError, OSError) as e2:
                e += f" (then INFO persistence failed: {type(e2).__name__}: {e2})"
            log(f"{s.label}: FAILED: {e}")
            results.append({"label": s.label, "error": e.splitlines()[0]})
        finally:
            s.stop()
            results[-1]["problems"] = s.log_problems() + (
                ["(script) did not exit within 30 s of SIGTERM; SIGKILLed"]
                if s.sigterm_ignored else [])
            results[-1]["log_tail"] = s.log_tail(12)
            try:
                os.remove(s.rdb_path)
            except OSError:
                pass
    return results, versions


def _mem_row(label, phase, m, la):
    if m.get("bgsave_s") is None and not m.get("samples"):
        return f"| {label} | {phase} | FAILED: {m.get('error')} | | | | | | | | | |"
    bg = f"{m['bgsave_s']:.2f}" if m.get("bgsave_s") is not None else \
        f"did not end ({m.get('error')})"
    return (f"| {label} | {phase} | {bg} | {gib(m['rss_base']):.2f} | {gib(m['rss_peak']):.2f} | "
            f"{m['rss_peak'] / m['rss_base']:.3f}x | {gib(m['pss_base']):.2f} | "
            f"{gib(m['pss_peak']):.2f} | {m['pss_peak'] / m['pss_base']:.3f}x | "
            f"{gib(m['used_base']):.2f} | {m['used_peak'] / m['used_base']:.3f}x | {la} |")


def render_bgsave(a, results, versions):
    pre = ("redis-cli --pipe of SET key:%012d (redis-benchmark's -r key format) with 'x' values, "
           "so the load overwrites existing keys" if a.prefill == "pipe"
           else f"DEBUG POPULATE {a.keys} key {a.value_size}")
    out = [f"## bgsave-memory: {a.keys:,} keys x {a.value_size} B, BGSAVE idle and under a SET "
           f"load", "",
           f"Prefill: {pre}. Load: redis-benchmark -t set -r {a.keys} -d {a.value_size} "
           f"-c {a.clients} -P 1, chunks of -n {a.chunk} looped (-l). Sampling every "
           f"{1000 * a.interval:.0f} ms from {a.margin:.0f} s before BGSAVE to {a.margin:.0f} s "
           f"after it ends (RSS and PSS summed over the server's process tree: Redis's fork "
           f"child included); base = median of the samples before BGSAVE, peak = max of all.", "",
           "| server | BGSAVE | BGSAVE s | RSS base GiB | RSS peak GiB | RSS peak/base | "
           "PSS base GiB | PSS peak GiB | PSS peak/base | used_memory base GiB | "
           "used_memory peak/base | load avg |",
           "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in results:
        if r.get("idle"):
            out.append(_mem_row(r["label"], "idle", r["idle"], f"{r['load_avg_idle']:.2f}"))
        if r.get("samples"):
            out.append(_mem_row(r["label"], "under load", r, f"{r['load_avg_snap']:.2f}"))
        elif "idle" not in r:
            out.append(f"| {r['label']} | - | FAILED: {r.get('error')} | | | | | | | | | |")
    out += ["", "Write load (ops/s over whole chunks; p99 in ms: median chunk p99 / max chunk "
            "p99 — the p99 of the pooled window lies between the min and max chunk p99):", "",
            "| server | ops/s without | ops/s during BGSAVE | ratio | p99 without (med / max) | "
            "p99 during (med / max) | p99 ratio (med / max) | max latency ms without / during | "
            "chunks without / during | load avg without / with |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for r in results:
        w, d = r.get("without"), r.get("during")
        if not w or not d:
            if w:
                out.append(f"| {r['label']} | {w['ops_s']:,.0f} | n/a | | {w['p99_median']:.3f} "
                           f"/ {w['p99_max']:.3f} | n/a | | {w['max_ms']:.1f} / - | "
                           f"{w['chunks']} / 0 | {r['load_avg_base']:.2f} / "
                           f"{r.get('load_avg_snap', float('nan')):.2f} |")
            continue
        out.append(f"| {r['label']} | {w['ops_s']:,.0f} | {d['ops_s']:,.0f} | "
                   f"{d['ops_s'] / w['ops_s']:.2f}x | {w['p99_median']:.3f} / {w['p99_max']:.3f} | "
                   f"{d['p99_median']:.3f} / {d['p99_max']:.3f} | "
                   f"{d['p99_median'] / w['p99_median']:.2f}x / {d['p99_max'] / w['p99_max']:.2f}x | "
                   f"{w['max_ms']:.1f} / {d['max_ms']:.1f} | {w['chunks']} / {d['chunks']} | "
                   f"{r['load_avg_base']:.2f} / {r['load_avg_snap']:.2f} |")
    out += ["", "Details:", ""]
    for r in results:
        for phase, m in (("idle", r.get("idle")), ("under load", r if r.get("samples") else None)):
            if not m:
                continue
            cr, cp = m["child_peak"]
            out.append(f"- {r['label']}, {phase}: BGSAVE reply `{m.get('bgsave_reply')}`, status "
                       f"{m.get('bgsave_status')}, file {mb(m['rdb_size'] or 0):.0f} MB; "
                       f"{m['n_samples']} samples, at most {m['max_procs']} process(es) in the "
                       f"tree (child peak RSS {gib(cr):.2f} GiB, PSS {gib(cp):.2f} GiB); slowest "
                       f"sample (smaps_rollup reads + INFO) {1000 * m['info_max_s']:.0f} ms; "
                       f"sampler errors: {len(m['sampler_errors'])}")
        out += [f"  - server log: `{l[l.find('Snapshot shard'):][:240]}`"
                for l in r.get("shard_log", [])[-8:]]
        if r.get("error"):
            out.append(f"- {r['label']}: **{r['error']}**")
        if r.get("problems"):
            out += [f"  - log: `{l[:200]}`" for l in r["problems"][:8]]
    out += ["", "Servers: " + "; ".join(f"{k}: {v}" for k, v in versions.items()), ""]
    return "\n".join(out)


def aims_bgsave(results):
    out = ["Against the aims (dashkv under load: PSS peak/base <= 1.05x, throughput during >= "
           "0.9x, p99 during <= 2x):", ""]
    for r in results:
        if not r["label"].startswith("dashkv"):
            continue
        if not r.get("samples") or not r.get("during") or not r.get("without") or \
                r.get("bgsave_s") is None:
            out.append(f"- {r['label']}: not measurable: {r.get('error')}")
            continue
        pss = r["pss_peak"] / r["pss_base"]
        thr = r["during"]["ops_s"] / r["without"]["ops_s"]
        p99m = r["during"]["p99_median"] / r["without"]["p99_median"]
        p99x = r["during"]["p99_max"] / r["without"]["p99_max"]
        verdict = "met" if p99x <= 2 and p99m <= 2 else "NOT met" if p99x > 2 and p99m > 2 \
            else "unclear: the median and max chunk ratios disagree"
        out.append(f"- {r['label']}: PSS {pss:.3f}x ({'met' if pss <= 1.05 else 'NOT met'}); "
                   f"throughput {thr:.2f}x ({'met' if thr >= 0.9 else 'NOT met'}); p99 "
                   f"{p99m:.2f}x median chunk, {p99x:.2f}x max chunk ({verdict})")
    return "\n".join(out) + "\n"


# ---- main ----------------------------------------------------------------------------------------

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
    dirty = " (uncommitted changes)" if git("status", "--porcelain", "--untracked-files=no") \
        not in ("", "?") else ""
    with open("/proc/meminfo") as f:
        memtotal = int(re.search(r"MemTotal:\s+(\d+)", f.read()).group(1)) * 1024
    return [f"- date: {datetime.datetime.now().astimezone().isoformat(timespec='seconds')}",
            f"- git: {git('rev-parse', 'HEAD')}{dirty}",
            f"- machine: {os.cpu_count()} CPUs, {model}, {gib(memtotal):.1f} GiB RAM",
            f"- kernel: {platform.system()} {platform.release()}",
            f"- command: `{shlex.join(sys.argv)}`"]


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("mode", choices=["save-load", "bgsave-memory"])
    p.add_argument("--dashkv", default="build/dashkv")
    p.add_argument("--dashkv-args", default="", help="extra dashkv flags (one shell string)")
    p.add_argument("--redis", default="redis-server")
    p.add_argument("--redis-args", default="")
    p.add_argument("--threads", type=int, nargs="+", default=None,
                   help="dashkv --threads values (save-load: 1 2; bgsave-memory: 2)")
    p.add_argument("--keys", type=int, default=None,
                   help="save-load: 10,000,000; bgsave-memory: 5,000,000")
    p.add_argument("--value-size", type=int, default=None, help="save-load: 16; bgsave: 1024")
    p.add_argument("--repeat", type=int, default=1, help="save-load: SAVEs and loads per server "
                   "(median reported)")
    p.add_argument("--no-load", action="store_true",
                   help="save-load: SAVE only (for builds that do not load at start)")
    p.add_argument("--load-timeout", type=float, default=600.0)
    p.add_argument("--stall-seconds", type=float, default=30.0,
                   help="a SAVE/BGSAVE whose keys-processed counter does not move this long "
                        "is reported as stalled and given up")
    p.add_argument("--prefill", choices=["pipe", "populate"], default="pipe",
                   help="bgsave-memory: 'pipe' writes the load's own key names (key:%%012d) so "
                        "the load overwrites; 'populate' = DEBUG POPULATE N key SIZE (the load "
                        "then adds new keys and the dataset grows during the measurement)")
    p.add_argument("--clients", type=int, default=20)
    p.add_argument("--chunk", type=int, default=50000, help="redis-benchmark -n per loop")
    p.add_argument("--load-seconds", type=float, default=20.0,
                   help="length of the load run without BGSAVE")
    p.add_argument("--warmup", type=float, default=2.0,
                   help="seconds of load before the sampling starts")
    p.add_argument("--margin", type=float, default=2.0,
                   help="sampling before BGSAVE and after it ends, seconds")
    p.add_argument("--interval", type=float, default=0.05, help="sampling interval, seconds")
    p.add_argument("--bgsave-timeout", type=float, default=300.0)
    p.add_argument("--no-idle-bgsave", dest="idle_bgsave", action="store_false",
                   help="bgsave-memory: skip the sampled BGSAVE without load")
    p.add_argument("--no-sample-baseline", dest="sample_baseline", action="store_false",
                   help="bgsave-memory: no sampler during the load run without BGSAVE")
    p.add_argument("--skip-redis", action="store_true", help="bgsave-memory: dashkv only")
    p.add_argument("--keep-workdir", action="store_true",
                   help="keep the servers' directories (logs, files) for inspection")
    p.add_argument("--samples-dir", help="write each server's samples as CSV here")
    p.add_argument("--server-cpus", default="", help="taskset list for servers ('' = no pin)")
    p.add_argument("--client-cpus", default="", help="taskset list for redis-benchmark")
    p.add_argument("--workdir", help="parent of the servers' --dir (default: a temp dir on "
                   "the disk under the current directory's filesystem, /var/tmp)")
    p.add_argument("--start-timeout", type=float, default=30.0)
    p.add_argument("--out", help="append the report (with machine info) to this markdown file")
    a = p.parse_args(argv)
    big = a.mode == "bgsave-memory"
    a.threads = a.threads or ([2] if big else [1, 2])
    a.keys = a.keys or (5_000_000 if big else 10_000_000)
    a.value_size = a.value_size or (1024 if big else 16)
    return a


def check_environment(a):
    for attr, name in (("dashkv", "dashkv"), ("redis", "redis-server")):
        path = getattr(a, attr)
        resolved = shutil.which(path) if os.sep not in path else path
        if not resolved or not os.access(resolved, os.X_OK):
            raise BenchError(f"{name} binary not found: {path}")
        setattr(a, attr, os.path.abspath(resolved))
    a.redis_benchmark = shutil.which("redis-benchmark")
    a.redis_cli = shutil.which("redis-cli")
    if not a.redis_benchmark or not a.redis_cli or not shutil.which("stdbuf"):
        raise BenchError("needs redis-benchmark, redis-cli (redis-tools) and stdbuf (coreutils)")


def main(argv=None):
    a = parse_args(sys.argv[1:] if argv is None else argv)
    try:
        check_environment(a)
        work = tempfile.mkdtemp(prefix="dashkv-snap-", dir=a.workdir or "/var/tmp")
        try:
            if a.mode == "save-load":
                results, loads, versions = cmd_save_load(a, work)
                report = render_save_load(a, results, loads, versions)
            else:
                results, versions = cmd_bgsave_memory(a, work)
                report = render_bgsave(a, results, versions) + "\n" + aims_bgsave(results)
        finally:
            if a.keep_workdir:
                log(f"kept {work}")
            else:
                shutil.rmtree(work, ignore_errors=True)
    except BenchError as e:
        print(f"snapshot_bench.py: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    print(report)
    if a.out:
        with open(a.out, "a") as f:
            f.write("\n".join(machine_info()) + "\n\n" + report + "\n")
        log(f"appended to {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
