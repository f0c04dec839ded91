#!/usr/bin/env python3
"""SADD of N members in a set's own iteration order vs in random order, against a running server.

Builds `src` with N random members, reads SMEMBERS src (the order a client sees, the table's
iteration order), then times SADD of those members into fresh keys: in that order and in a random
order, BATCH members per SADD, pipelined in groups of 100 commands. Also times SUNIONSTORE and
COPY of src. Prints one markdown table row per measurement. Python 3 standard library only.

  build/dashkv --port 7390 --threads 1 --save "" &
  python3 bench/e2e/set_order.py --port 7390 --members 100000
"""

import argparse
import random
import socket
import time


class Client:
    def __init__(self, host, port):
        self.sock = socket.create_connection((host, port))
        self.sock.settimeout(600)
        self.buf = b""

    def _line(self):
        while b"\r\n" not in self.buf:
            chunk = self.sock.recv(1 << 20)
            if not chunk:
                raise ConnectionError("server closed the connection")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def _exact(self, n):
        while len(self.buf) < n + 2:
            self.buf += self.sock.recv(1 << 20)
        data, self.buf = self.buf[:n], self.buf[n + 2:]
        return data

    def reply(self):
        line = self._line()
        kind, rest = line[:1], line[1:]
        if kind == b"-":
            raise RuntimeError(rest.decode())
        if kind in (b"+", b":"):
            return rest
        if kind == b"$":
            n = int(rest)
            return None if n < 0 else self._exact(n)
        if kind in (b"*", b"~"):
            return [self.reply() for _ in range(int(rest))]
        raise RuntimeError("unexpected reply %r" % line)

    def send(self, commands):
        out = []
        for args in commands:
            out.append(b"*%d\r\n" % len(args))
            for a in args:
                a = a if isinstance(a, bytes) else str(a).encode()
                out.append(b"$%d\r\n%s\r\n" % (len(a), a))
        self.sock.sendall(b"".join(out))

    def call(self, *args):
        self.send([args])
        return self.reply()


def timed_sadd(c, key, members, batch):
    commands = [[b"SADD", key] + members[i:i + batch] for i in range(0, len(members), batch)]
    start = time.perf_counter()
    for i in range(0, len(commands), 100):
        group = commands[i:i + 100]
        c.send(group)
        for _ in group:
            c.reply()
    return time.perf_counter() - start


def timed(c, *args):
    start = time.perf_counter()
    c.call(*args)
    return time.perf_counter() - start


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--members", type=int, default=100000)
    p.add_argument("--batch", type=int, default=100, help="members per SADD")
    args = p.parse_args()

    c = Client(args.host, args.port)
    c.call("FLUSHALL")
    rng = random.Random(1)
    members = [b"m:%d" % rng.getrandbits(48) for _ in range(args.members)]
    members = list(dict.fromkeys(members))
    timed_sadd(c, b"src", members, 1000)
    ordered = c.call("SMEMBERS", "src")
    shuffled = list(ordered)
    rng.shuffle(shuffled)
    n = len(ordered)
    rows = [
        ("SADD in SMEMBERS order", timed_sadd(c, b"dst:ordered", ordered, args.batch)),
        ("SADD in random order", timed_sadd(c, b"dst:random", shuffled, args.batch)),
        ("SUNIONSTORE dst src", timed(c, "SUNIONSTORE", "dst:union", "src")),
        ("COPY src dst", timed(c, "COPY", "src", "dst:copy")),
    ]
    for key in (b"dst:ordered", b"dst:random", b"dst:union", b"dst:copy"):
        assert int(c.call("SCARD", key)) == n, key
    print("| operation (%d members, %d per SADD) | seconds | members/s |" % (n, args.batch))
    print("|---|---:|---:|")
    for name, secs in rows:
        print("| %s | %.3f | %.0f |" % (name, secs, n / secs))


if __name__ == "__main__":
    main()
