#!/usr/bin/env python3
"""PUBLISH fan-out, dashkv vs redis-server side by side.

For each server (redis-server once, dashkv once per --threads value), on 127.0.0.1 and a free
port, pinned with taskset (--server-cpus):
  1. --subscribers connections (100) each SUBSCRIBE to one channel; a reader thread in this
     script drains all of them (epoll, large recv_into) and counts the bytes, so the number of
     delivered messages is bytes / frame size (every frame has the same size);
  2. one PUBLISH is checked to reach every subscriber (its reply is the receiver count);
  3. redis-benchmark (pinned to --client-cpus) sends --requests PUBLISH commands from
     --clients connections at each --pipelines depth; when it ends we wait until every message
     has been read, then report: publishes/s (redis-benchmark), messages delivered/s (all
     messages / time from the start of the run until the last one was read), and the server's
     CPU time (utime+stime from /proc/<pid>/stat) per publish.
Prints a markdown table; --out writes it to a file with the command line. Standard library
only; needs redis-server, redis-benchmark and taskset.

Usage: bench/e2e/pubsub.py --dashkv build/dashkv [--threads 1 2] [--requests 200000]
"""

import argparse
import os
import platform
import selectors
import shlex
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

CLK_TCK = os.sysconf("SC_CLK_TCK")
CHANNEL = b"bench:ch"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cpu_seconds(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def encode(*args):
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        a = a if isinstance(a, bytes) else str(a).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)


def read_reply(sock, n_bytes):
    """Reads exactly n_bytes (a reply of known size)."""
    data = b""
    while len(data) < n_bytes:
        chunk = sock.recv(n_bytes - len(data))
        if not chunk:
            raise RuntimeError("server closed the connection")
        data += chunk
    return data


def call(port, *args):
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(encode(*args))
        return s.recv(1 << 16)


class Reader(threading.Thread):
    """Drains every subscriber socket and counts bytes."""

    def __init__(self, socks):
        super().__init__(daemon=True)
        self.socks, self.bytes, self.closed, self.stop = socks, 0, 0, False
        self.sel = selectors.DefaultSelector()
        for s in socks:
            s.setblocking(False)
            self.sel.register(s, selectors.EVENT_READ)

    def run(self):
        buf = bytearray(4 << 20)
        view = memoryview(buf)
        while not self.stop:
            for key, _ in self.sel.select(timeout=0.05):
                try:
                    n = key.fileobj.recv_into(view)
                except (BlockingIOError, InterruptedError):
                    continue
                except ConnectionResetError:
                    n = 0
                if n == 0:
                    self.closed += 1
                    self.sel.unregister(key.fileobj)
                    continue
                self.bytes += n


def start_server(label, argv, cpus):
    argv = (["taskset", "-c", cpus] + argv) if cpus else argv
    print("# starting %s: %s" % (label, shlex.join(argv)), file=sys.stderr)
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            stdin=subprocess.DEVNULL, start_new_session=True)
    return proc


def wait_ping(port, proc):
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError("server exited at start-up")
        try:
            if call(port, "PING").startswith(b"+PONG"):
                return
        except OSError:
            pass
        time.sleep(0.05)
    raise RuntimeError("server did not answer PING")


def stop_server(proc):
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def run_server(label, argv_fn, a):
    port = free_port()
    workdir = tempfile.mkdtemp(prefix="pubsub-bench-")
    proc = start_server(label, argv_fn(port, workdir), a.server_cpus)
    rows = []
    try:
        wait_ping(port, proc)
        payload = b"x" * a.payload
        frame = encode(b"message", CHANNEL, payload)  # a message has the layout of a command
        socks = []
        for _ in range(a.subscribers):
            s = socket.create_connection(("127.0.0.1", port), timeout=10)
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            s.sendall(encode("SUBSCRIBE", CHANNEL))
            want = b"*3\r\n$9\r\nsubscribe\r\n$%d\r\n%s\r\n:1\r\n" % (len(CHANNEL), CHANNEL)
            got = read_reply(s, len(want))
            if got != want:
                raise RuntimeError("unexpected SUBSCRIBE reply %r" % got)
            socks.append(s)
        reader = Reader(socks)
        reader.start()
        reply = call(port, "PUBLISH", CHANNEL, payload)
        if reply != b":%d\r\n" % a.subscribers:
            raise RuntimeError("PUBLISH reached %r, expected %d" % (reply, a.subscribers))
        expected = len(frame)
        total = a.subscribers * expected  # bytes every subscriber gets in all, so far
        for pipeline in a.pipelines:
            # Let earlier messages (the check, the previous run) land before the run.
            deadline = time.monotonic() + 10
            while reader.bytes < total and time.monotonic() < deadline:
                time.sleep(0.01)
            bytes0, cpu0, t0 = reader.bytes, cpu_seconds(proc.pid), time.monotonic()
            bench = ["redis-benchmark", "-h", "127.0.0.1", "-p", str(port), "-n",
                     str(a.requests), "-c", str(a.clients), "-P", str(pipeline), "--csv",
                     "PUBLISH", CHANNEL.decode(), payload.decode()]
            if a.client_cpus:
                bench = ["taskset", "-c", a.client_cpus] + bench
            out = subprocess.run(bench, capture_output=True, text=True, timeout=a.run_timeout)
            if out.returncode != 0:
                raise RuntimeError("redis-benchmark failed: %s" % out.stderr[-500:])
            # CSV: header line, then "name","rps",...
            last = [l for l in out.stdout.strip().splitlines() if l][-1]
            rps = float(last.split(",")[1].strip('"'))
            want_bytes = bytes0 + a.requests * a.subscribers * expected
            deadline = time.monotonic() + a.run_timeout
            while reader.bytes < want_bytes and time.monotonic() < deadline:
                if reader.closed:
                    raise RuntimeError("%d subscribers were disconnected" % reader.closed)
                time.sleep(0.002)
            t1, cpu1 = time.monotonic(), cpu_seconds(proc.pid)
            total = want_bytes
            delivered = (reader.bytes - bytes0) // expected
            if delivered != a.requests * a.subscribers:
                raise RuntimeError("delivered %d messages, expected %d"
                                   % (delivered, a.requests * a.subscribers))
            rows.append({"server": label, "pipeline": pipeline, "pub_rps": rps,
                         "msg_rps": delivered / (t1 - t0),
                         "cpu_us": (cpu1 - cpu0) / a.requests * 1e6})
            print("# %s P%d: %.0f publishes/s, %.0f messages/s, %.2f us CPU/publish"
                  % (label, pipeline, rps, rows[-1]["msg_rps"], rows[-1]["cpu_us"]),
                  file=sys.stderr)
        reader.stop = True
        reader.join()
        for s in socks:
            s.close()
    finally:
        stop_server(proc)
    return rows


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--dashkv", default="build/dashkv")
    p.add_argument("--redis", default="redis-server")
    p.add_argument("--threads", type=int, nargs="+", default=[1])
    p.add_argument("--subscribers", type=int, default=100)
    p.add_argument("--clients", type=int, default=10, help="publishing connections")
    p.add_argument("--pipelines", type=lambda s: [int(x) for x in s.split(",")],
                   default=[1, 16])
    p.add_argument("--requests", type=int, default=200000, help="publishes per run")
    p.add_argument("--payload", type=int, default=64, help="message bytes")
    p.add_argument("--server-cpus", default="0")
    p.add_argument("--client-cpus", default="1",
                   help="redis-benchmark's CPUs (the subscriber reader is this script)")
    p.add_argument("--run-timeout", type=float, default=300)
    p.add_argument("--out")
    a = p.parse_args()

    rows = run_server("redis", lambda port, d: [a.redis, "--port", str(port), "--bind",
                                                 "127.0.0.1", "--save", "", "--appendonly",
                                                 "no", "--dir", d], a)
    for t in a.threads:
        rows += run_server("dashkv --threads %d" % t, lambda port, d, t=t: [
            a.dashkv, "--port", str(port), "--bind", "127.0.0.1", "--threads", str(t),
            "--dir", d, "--save", ""], a)

    redis = {r["pipeline"]: r for r in rows if r["server"] == "redis"}
    lines = ["| server | pipeline | publishes/s | messages delivered/s | vs redis | "
             "server CPU us/publish |", "|---|---:|---:|---:|---:|---:|"]
    for r in rows:
        ref = redis.get(r["pipeline"])
        ratio = "%.2fx" % (r["pub_rps"] / ref["pub_rps"]) if ref else "-"
        lines.append("| %s | %d | %s | %s | %s | %.2f |" % (
            r["server"], r["pipeline"], format(int(r["pub_rps"]), ","),
            format(int(r["msg_rps"]), ","), ratio, r["cpu_us"]))
    report = "\n".join(lines)
    print(report)
    if a.out:
        with open(a.out, "w") as f:
            f.write("Command: `%s`\n\nMachine: %s, %d CPUs, %s\n\n%s\n" % (
                shlex.join(["python3"] + sys.argv), platform.platform(), os.cpu_count(),
                time.strftime("%Y-%m-%d"), report))


if __name__ == "__main__":
    main()
