#!/usr/bin/env python3
"""Sets and sorted sets, dashkv vs redis-server side by side (issue 5).

For each server (pinned to CPU 0 with taskset; the load generator on CPU 1):
  1. memory per member: used_memory growth after filling a --members zset and set (pipelined
     ZADD/SADD of 1000 members per command), divided by the member count;
  2. throughput and server CPU per operation (utime+stime from /proc/<pid>/stat) of
     redis-benchmark runs: ZADD / ZRANGE (head and middle of the big zset: O(log n) seek) /
     ZRANK / SADD / SISMEMBER on the big keys, random members via __rand_int__.
Prints a markdown table; --out writes it to a file. Standard library only.

Usage: bench/e2e/sets_zsets.py --dashkv build/dashkv [--members 1000000] [--requests 200000]
"""

import argparse
import os
import socket
import subprocess
import sys
import tempfile
import time

CLK_TCK = os.sysconf("SC_CLK_TCK")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cpu_seconds(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


class Conn:
    def __init__(self, port):
        self.s = socket.create_connection(("127.0.0.1", port))
        self.f = self.s.makefile("rb")

    def send(self, *args):
        out = [b"*%d\r\n" % len(args)]
        for a in args:
            a = a if isinstance(a, bytes) else str(a).encode()
            out.append(b"$%d\r\n%s\r\n" % (len(a), a))
        self.s.sendall(b"".join(out))

    def read(self):
        line = self.f.readline()
        t = line[:1]
        if t == b"$":
            n = int(line[1:])
            return None if n < 0 else self.f.read(n + 2)[:-2]
        if t == b"*":
            return [self.read() for _ in range(int(line[1:]))]
        if t == b"-":
            raise RuntimeError(line.decode())
        return line[1:-2]

    def call(self, *args):
        self.send(*args)
        return self.read()


def used_memory(c):
    info = c.call("INFO", "memory").decode()
    for line in info.splitlines():
        if line.startswith("used_memory:"):
            return int(line.split(":")[1])
    return 0


def fill(c, cmd, key, members, batch=1000):
    pending = 0
    for start in range(0, members, batch):
        args = [cmd, key]
        for i in range(start, min(members, start + batch)):
            if cmd == "ZADD":
                args.append(i)
            args.append("m:%d" % i)
        c.send(*args)
        pending += 1
        if pending == 64:
            for _ in range(pending):
                c.read()
            pending = 0
    for _ in range(pending):
        c.read()


def start(kind, binary, port, workdir):
    if kind == "dashkv":
        argv = [binary, "--port", str(port), "--threads", "1", "--save", ""]
    else:
        argv = [binary, "--port", str(port), "--save", "", "--appendonly", "no", "--dir", workdir]
    proc = subprocess.Popen(["taskset", "-c", "0"] + argv, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    for _ in range(100):
        try:
            Conn(port).call("PING")
            return proc
        except OSError:
            time.sleep(0.05)
    proc.kill()
    raise RuntimeError("%s did not start" % kind)


def run_bench(port, pid, requests, cmd):
    before = cpu_seconds(pid)
    out = subprocess.run(["taskset", "-c", "1", "redis-benchmark", "-p", str(port), "-n",
                          str(requests), "-c", "50", "-r", "1000000", "--csv"] + cmd.split(),
                         capture_output=True, text=True, timeout=300).stdout
    cpu = cpu_seconds(pid) - before
    rps = float(out.strip().splitlines()[-1].split(",")[1].strip('"'))
    return rps, cpu / requests * 1e6


COMMANDS = [
    ("ZADD (1M zset)", "ZADD bigz __rand_int__ m:__rand_int__"),
    ("ZRANGE 0 9", "ZRANGE bigz 0 9"),
    ("ZRANGE 500000 500009", "ZRANGE bigz 500000 500009"),
    ("ZRANK", "ZRANK bigz m:__rand_int__"),
    ("SADD (1M set)", "SADD bigs m:__rand_int__"),
    ("SISMEMBER", "SISMEMBER bigs m:__rand_int__"),
]


def measure(kind, binary, members, requests):
    port = free_port()
    with tempfile.TemporaryDirectory() as wd:
        proc = start(kind, binary, port, wd)
        try:
            c = Conn(port)
            base = used_memory(c)
            fill(c, "ZADD", "bigz", members)
            after_z = used_memory(c)
            fill(c, "SADD", "bigs", members)
            after_s = used_memory(c)
            res = {"zset B/member": (after_z - base) / members,
                   "set B/member": (after_s - after_z) / members,
                   "zset encoding": c.call("OBJECT", "ENCODING", "bigz").decode(),
                   "set encoding": c.call("OBJECT", "ENCODING", "bigs").decode()}
            for name, cmd in COMMANDS:
                res[name] = run_bench(port, proc.pid, requests, cmd)
            return res
        finally:
            proc.terminate()
            proc.wait(timeout=10)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dashkv", default="build/dashkv")
    ap.add_argument("--redis", default="redis-server")
    ap.add_argument("--members", type=int, default=1000000)
    ap.add_argument("--requests", type=int, default=200000)
    ap.add_argument("--out")
    a = ap.parse_args()
    results = {k: measure(k, b, a.members, a.requests)
               for k, b in (("dashkv", a.dashkv), ("redis", a.redis))}
    d, r = results["dashkv"], results["redis"]
    lines = ["| metric | dashkv | redis 7.0 |", "|---|---|---|"]
    for k in ("zset B/member", "set B/member"):
        lines.append("| %s (used_memory growth / %d members) | %.1f | %.1f |"
                     % (k, a.members, d[k], r[k]))
    for k in ("zset encoding", "set encoding"):
        lines.append("| %s | %s | %s |" % (k, d[k], r[k]))
    for name, _ in COMMANDS:
        lines.append("| %s: ops/s, server CPU us/op | %.0f, %.2f | %.0f, %.2f |"
                     % (name, d[name][0], d[name][1], r[name][0], r[name][1]))
    text = "\n".join(lines)
    print(text)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    sys.exit(main())
