#!/usr/bin/env python3
"""Scripting, dashkv against redis-server side by side (bench/e2e/SCRIPTING_RESULTS.md).

redis-benchmark runs EVALSHA of two one-key scripts over 100,000 random keys, 50 clients,
at pipeline 1 and 16:
  getset  -- redis.call('get', KEYS[1]); return redis.call('set', KEYS[1], ARGV[1])
  extend  -- redis-py Lock's extend script (GET, compare the token, PEXPIRE)
and, as a reference, plain GET. Server CPU time per operation from /proc/<pid>/stat.
Pinning: --threads 1 and redis on CPU 0 with the load on CPU 1; --threads 2 on both CPUs,
sharing them with the load (a 2-vCPU machine has no spare core).

    python3 bench/e2e/scripting.py --dashkv build/dashkv [--requests 300000]

Python 3 standard library only; every server is stopped at the end.
"""

import argparse
import os
import socket
import subprocess
import sys
import time

CLK_TCK = os.sysconf("SC_CLK_TCK")
HOST = "127.0.0.1"
KEYSPACE = 100000

SCRIPTS = {
    "getset": "redis.call('get', KEYS[1]); return redis.call('set', KEYS[1], ARGV[1])",
    # redis-py's Lock.extend (LUA_EXTEND_SCRIPT, replace-ttl form reduced to the common path).
    "extend": ("local token = redis.call('get', KEYS[1]) "
               "if not token or token ~= ARGV[1] then return 0 end "
               "local expiration = redis.call('pttl', KEYS[1]) "
               "if not expiration then expiration = 0 end "
               "if expiration < 0 then return 0 end "
               "redis.call('pexpire', KEYS[1], expiration + ARGV[2]) return 1"),
}


def free_port():
    s = socket.socket()
    s.bind((HOST, 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Resp:
    """A minimal blocking RESP2 client for setup."""

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


def start(kind, binary, port, threads):
    if kind == "redis":
        argv = ["taskset", "-c", "0", "redis-server", "--port", str(port), "--save", "",
                "--appendonly", "no"]
    else:
        cpus = "0" if threads == 1 else "0,1"
        argv = ["taskset", "-c", cpus, binary, "--port", str(port), "--threads", str(threads),
                "--save", ""]
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
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


def bench(port, pid, args, requests, pipeline, load_cpus):
    argv = ["taskset", "-c", load_cpus, "redis-benchmark", "-p", str(port), "-n", str(requests),
            "-P", str(pipeline), "-c", "50", "-r", str(KEYSPACE), "--csv", "-q"] + args
    cpu0 = cpu_seconds(pid)
    out = subprocess.run(argv, capture_output=True, text=True, timeout=900).stdout
    cpu = cpu_seconds(pid) - cpu0
    rps = 0.0
    for line in out.splitlines():
        cells = [x.strip('"') for x in line.split(",")]
        if len(cells) > 1 and cells[0] != "test":
            rps = float(cells[1])
    return rps, cpu * 1e6 / requests


def run_server(kind, binary, threads, requests, pipelines):
    port = free_port()
    proc = start(kind, binary, port, threads)
    load_cpus = "1" if kind == "redis" or threads == 1 else "0,1"
    res = {}
    try:
        c = Resp(port)
        c.call("FLUSHALL")
        for base in range(0, KEYSPACE, 1000):
            c.pipeline([("SET", "key:%012d" % i, "tok") for i in range(base, base + 1000)])
        c.pipeline([("PEXPIRE", "key:%012d" % i, "100000000") for i in range(0, 1000)])
        shas = {name: c.call("SCRIPT", "LOAD", body).decode() for name, body in SCRIPTS.items()}
        for p in pipelines:
            res[("get", p)] = bench(port, proc.pid, ["get", "key:__rand_int__"], requests, p,
                                    load_cpus)
            res[("getset", p)] = bench(port, proc.pid, ["evalsha", shas["getset"], "1",
                                                        "key:__rand_int__", "tok"],
                                       requests, p, load_cpus)
            res[("extend", p)] = bench(port, proc.pid, ["evalsha", shas["extend"], "1",
                                                        "key:__rand_int__", "tok", "1000"],
                                       requests, p, load_cpus)
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dashkv", default="build/dashkv")
    ap.add_argument("--requests", type=int, default=300000)
    ap.add_argument("--pipelines", default="1,16")
    a = ap.parse_args()
    pipelines = [int(p) for p in a.pipelines.split(",")]
    runs = {
        "redis": run_server("redis", None, 1, a.requests, pipelines),
        "dashkv t1": run_server("dashkv", a.dashkv, 1, a.requests, pipelines),
        "dashkv t2": run_server("dashkv", a.dashkv, 2, a.requests, pipelines),
    }
    print("%d requests, 50 clients, %d keys; ops/s and server CPU us/op.\n" % (
        a.requests, KEYSPACE))
    print("| test | P | redis ops/s | CPU | dashkv t1 ops/s | CPU | dashkv t2 ops/s | CPU |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for test in ("get", "getset", "extend"):
        for p in pipelines:
            cells = []
            for run in ("redis", "dashkv t1", "dashkv t2"):
                rps, cpu = runs[run][(test, p)]
                cells += ["%.0f" % rps, "%.2f" % cpu]
            print("| %s | %d | %s |" % (test, p, " | ".join(cells)))


if __name__ == "__main__":
    sys.exit(main())
