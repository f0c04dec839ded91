"""A minimal raw-socket RESP2/RESP3 client for protocol-level tests.

Unlike redis-py it keeps the exact reply type (simple string vs bulk string,
double vs bulk, map vs array, ...) and the full error text including its
prefix ("ERR ...", "WRONGTYPE ..."), so tests can check byte-level parity with
Redis. Also lets tests send arbitrary (malformed) bytes and observe whether
the server closes the connection.
"""

import socket
import time


class Simple(str):
    """A simple-string reply (+OK)."""


class Error(str):
    """An error reply, full text without the leading '-' (e.g. 'ERR ...')."""


class Double(float):
    """A RESP3 double reply (','); .raw keeps the text as sent."""

    raw = ""


class BigNumber(int):
    """A RESP3 big number reply ('(')."""


class Verbatim(str):
    """A RESP3 verbatim string reply ('='); .fmt holds the 3-letter format."""

    fmt = ""


class Map(list):
    """A RESP3 map reply ('%') as a list of (key, value) pairs, order kept."""

    def to_dict(self):
        return {k: v for k, v in self}


class Set(list):
    """A RESP3 set reply ('~')."""


class Push(list):
    """A RESP3 push reply ('>')."""


class Closed(Exception):
    """The server closed the connection."""


def encode(*args):
    """Encodes one command as a RESP multibulk request."""
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        if isinstance(a, str):
            a = a.encode()
        elif isinstance(a, (int, float)):
            a = str(a).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)


class RawClient:
    """One TCP connection speaking raw RESP."""

    def __init__(self, host, port, timeout=10.0):
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.timeout = timeout
        self.buf = b""

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass

    # ---- sending -----------------------------------------------------------
    def send(self, data):
        """Sends raw bytes as they are."""
        self.sock.sendall(data)

    def call(self, *args):
        """Sends one command and returns its parsed reply."""
        self.send(encode(*args))
        return self.read()

    def pipeline(self, cmds):
        """Sends all commands in a single write; returns the list of replies."""
        self.send(b"".join(encode(*c) for c in cmds))
        return [self.read() for _ in cmds]

    # ---- receiving ---------------------------------------------------------
    def _fill(self):
        try:
            chunk = self.sock.recv(1 << 16)
        except ConnectionResetError:
            chunk = b""
        if not chunk:
            raise Closed()
        self.buf += chunk

    def _line(self):
        while True:
            i = self.buf.find(b"\r\n")
            if i >= 0:
                line, self.buf = self.buf[:i], self.buf[i + 2:]
                return line
            self._fill()

    def _exact(self, n):
        while len(self.buf) < n + 2:
            self._fill()
        data, self.buf = self.buf[:n], self.buf[n + 2:]
        return data

    def read(self):
        """Reads and parses exactly one reply. Bulk strings come back as bytes."""
        line = self._line()
        t, rest = line[:1], line[1:]
        if t == b"+":
            return Simple(rest.decode())
        if t == b"-":
            return Error(rest.decode(errors="replace"))
        if t == b":":
            return int(rest)
        if t == b"$":
            n = int(rest)
            return None if n < 0 else self._exact(n)
        if t in (b"*", b"~", b">"):
            n = int(rest)
            if n < 0:
                return None
            items = [self.read() for _ in range(n)]
            return {b"*": list, b"~": Set, b">": Push}[t](items)
        if t == b"%":
            n = int(rest)
            return Map((self.read(), self.read()) for _ in range(n))
        if t == b"_":
            return None
        if t == b"#":
            return rest == b"t"
        if t == b",":
            d = Double(float(rest.decode()))
            d.raw = rest.decode()
            return d
        if t == b"(":
            return BigNumber(int(rest))
        if t == b"=":
            data = self._exact(int(rest))
            v = Verbatim(data[4:].decode())
            v.fmt = data[:3].decode()
            return v
        if t == b"!":
            return Error(self._exact(int(rest)).decode())
        raise AssertionError("unexpected reply line: %r" % line)

    def read_raw(self, n):
        """Reads exactly n raw bytes of reply stream."""
        while len(self.buf) < n:
            self._fill()
        data, self.buf = self.buf[:n], self.buf[n:]
        return data

    def expect_no_reply(self, wait=0.2):
        """Asserts that nothing arrives within `wait` seconds (e.g. partial frame)."""
        self.sock.settimeout(wait)
        try:
            chunk = self.sock.recv(1 << 16)
        except socket.timeout:
            chunk = None
        finally:
            self.sock.settimeout(self.timeout)
        assert chunk is None, "unexpected data from server: %r" % chunk

    def is_closed(self, timeout=5.0):
        """Returns True when the server closes the connection within `timeout`
        (pending reply bytes are read and discarded)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.sock.settimeout(max(0.01, deadline - time.monotonic()))
            try:
                chunk = self.sock.recv(1 << 16)
            except socket.timeout:
                continue
            except (ConnectionResetError, BrokenPipeError):
                return True
            finally:
                self.sock.settimeout(self.timeout)
            if not chunk:
                return True
            self.buf += chunk
        return False
