#!/usr/bin/env python3
"""Lists and hashes, dashkv against redis-server side by side (bench/e2e/LISTS_HASHES_RESULTS.md).

Throughput: redis-benchmark LPUSH, LPOP, HSET and HGET (HGET on a 10,000-field hash, custom
command `HGET myhash field:__rand_int__`), server pinned to CPU 0, load to CPU 1; server CPU
time per operation from /proc/<pid>/stat.
Memory: growth of INFO used_memory after 100,000 LPUSH of the 31-byte value
"in-memory data structure store." into one list, with list-compress-depth 0 and 1.

    python3 bench/e2e/compare_types.py --dashkv build/dashkv [--requests 1000000] [--pipeline 1]

Python 3 standard library only; every server is stopped at the end.
"""

import argparse
import os
import re
import socket
import subprocess
import sys
import time

CLK_TCK = os.sysconf("SC_CLK_TCK")
HOST = "127.0.0.1"
VALUE = b"in-memory data structure store."


def free_port():
    s = socket.socket()
    s.bind((HOST, 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Resp:
    """A minimal blocking RESP2 client (setup, INFO, pipelined fills)."""

    def __init__(self, port):
        self.sock = socket.create_connection((HOST, port), timeout=30)
        self.f = self.sock.makefile("rb")

    @staticmethod
    def encode(*args):
        out = [b"*%d\r\n" % len(args)]
        for a in args:
            b = a if isinstance(a, bytes) else str(a).encode()
            out.append(b"$%d\r\n%s\r\n" % (len(b), b))
        return b"".join(out)

    def read(self):
        line = self.f.readline()
        t, rest = line[:1], line[1:-2]
        if t in (b"+", b":"):
            return rest
        if t == b"-":
            raise RuntimeError(rest.decode())
        if t == b"$":
            n = int(rest)
            return None if n < 0 else self.f.read(n + 2)[:-2]
        if t == b"*":
            return [self.read() for _ in range(int(rest))]
        raise RuntimeError("bad reply %r" % line)

    def call(self, *args):
        self.sock.sendall(self.encode(*args))
        return self.read()

    def pipeline(self, cmds):
        self.sock.sendall(b"".join(self.encode(*c) for c in cmds))
        return [self.read() for _ in cmds]


def start(kind, binary, port):
    if kind == "redis":
        argv = ["redis-server", "--port", str(port), "--save", "", "--appendonly", "no"]
    else:
        argv = [binary, "--port", str(port), "--threads", "1", "--save", ""]
    proc = subprocess.Popen(["taskset", "-c", "0"] + argv, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    for _ in range(100):
        try:
            Resp(port).call("PING")
            return proc
        except OSError:
            time.sleep(0.05)
    proc.kill()
    raise SystemExit("%s did not start" % kind)


def cpu_seconds(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def used_memory(c):
    info = c.call("INFO", "memory").decode()
    return int(re.search(r"used_memory:(\d+)", info).group(1))


def bench(port, pid, args, requests, pipeline):
    argv = ["taskset", "-c", "1", "redis-benchmark", "-p", str(port), "-n", str(requests),
            "-P", str(pipeline), "-c", "50", "--csv", "-q"] + args
    cpu0 = cpu_seconds(pid)
    t0 = time.monotonic()
    out = subprocess.run(argv, capture_output=True, text=True, timeout=600).stdout
    wall = time.monotonic() - t0
    cpu = cpu_seconds(pid) - cpu0
    rps = 0.0
    for line in out.splitlines():
        cells = [x.strip('"') for x in line.split(",")]
        if len(cells) > 1 and cells[0] != "test":
            rps = float(cells[1])
    return rps, cpu * 1e6 / requests, wall


def run_server(kind, binary, requests, pipeline):
    port = free_port()
    proc = start(kind, binary, port)
    res = {}
    try:
        c = Resp(port)
        c.call("FLUSHALL")
        res["lpush"] = bench(port, proc.pid, ["-t", "lpush"], requests, pipeline)
        res["lpop"] = bench(port, proc.pid, ["-t", "lpop"], requests, pipeline)
        res["hset"] = bench(port, proc.pid, ["-t", "hset", "-r", "10000"], requests, pipeline)
        c.call("DEL", "myhash")
        for base in range(0, 10000, 1000):
            c.pipeline([("HSET", "myhash", "field:%012d" % i, "value:%d" % i)
                        for i in range(base, base + 1000)])
        res["hget (10k fields)"] = bench(
            port, proc.pid, ["-r", "10000", "hget", "myhash", "field:__rand_int__"],
            requests, pipeline)
        res["encoding myhash"] = c.call("OBJECT", "ENCODING", "myhash").decode()
        for depth in (0, 1):
            c.call("FLUSHALL")
            c.call("CONFIG", "SET", "list-compress-depth", str(depth))
            time.sleep(0.2)
            before = used_memory(c)
            for _ in range(100):
                c.pipeline([("LPUSH", "mylist", VALUE)] * 1000)
            after = used_memory(c)
            res["memory depth %d" % depth] = after - before
            res["encoding depth %d" % depth] = c.call("OBJECT", "ENCODING", "mylist").decode()
        c.call("FLUSHALL")
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dashkv", default="build/dashkv")
    ap.add_argument("--requests", type=int, default=1000000)
    ap.add_argument("--pipeline", type=int, default=1)
    a = ap.parse_args()
    results = {k: run_server(k, a.dashkv, a.requests, a.pipeline) for k in ("dashkv", "redis")}
    print("Throughput: %d requests, 50 clients, pipeline %d; server on CPU 0 (dashkv --threads 1)"
          ", redis-benchmark on CPU 1.\n" % (a.requests, a.pipeline))
    print("| test | dashkv ops/s | redis ops/s | dashkv CPU us/op | redis CPU us/op |")
    print("|---|---:|---:|---:|---:|")
    for t in ("lpush", "lpop", "hset", "hget (10k fields)"):
        d, r = results["dashkv"][t], results["redis"][t]
        print("| %s | %.0f | %.0f | %.2f | %.2f |" % (t, d[0], r[0], d[1], r[1]))
    print("\nMemory: used_memory growth after 100,000 LPUSH of %r into one list.\n" % VALUE.decode())
    print("| list-compress-depth | dashkv KB | redis KB | dashkv encoding | redis encoding |")
    print("|---|---:|---:|---|---|")
    for depth in (0, 1):
        d, r = results["dashkv"], results["redis"]
        print("| %d | %.0f | %.0f | %s | %s |" % (depth, d["memory depth %d" % depth] / 1024,
                                                 r["memory depth %d" % depth] / 1024,
                                                 d["encoding depth %d" % depth],
                                                 r["encoding depth %d" % depth]))
    print("\nHash encoding after the HGET prefill: dashkv %s, redis %s." %
          (results["dashkv"]["encoding myhash"], results["redis"]["encoding myhash"]))


if __name__ == "__main__":
    sys.exit(main())
