"""Smoke tests with the stock redis-cli (and netcat-style inline input)."""

import shutil
import socket
import subprocess

import pytest

pytestmark = pytest.mark.skipif(shutil.which("redis-cli") is None,
                                reason="redis-cli not installed")


def cli(server, *args, stdin=None, check=True):
    proc = subprocess.run(["redis-cli", "-h", server.host, "-p", str(server.port), *args],
                          input=stdin, capture_output=True, timeout=60)
    if check:
        assert proc.returncode == 0, proc.stderr
    return proc


def out(server, *args, **kw):
    return cli(server, *args, **kw).stdout.decode()


def test_ping(server, r):
    assert out(server, "ping") == "PONG\n"
    assert out(server, "ping", "hello") == "hello\n"


def test_set_get(server, r):
    assert out(server, "set", "cli:k", "some value") == "OK\n"
    assert out(server, "get", "cli:k") == "some value\n"
    assert r.get("cli:k") == "some value"
    assert out(server, "--no-raw", "get", "missing") == "(nil)\n"
    assert out(server, "--no-raw", "incr", "n") == "(integer) 1\n"
    assert out(server, "--no-raw", "incrbyfloat", "f", "1.5") == '"1.5"\n'
    assert out(server, "--no-raw", "get") == (
        "(error) ERR wrong number of arguments for 'get' command\n")


def test_select_db(server, r):
    assert out(server, "-n", "3", "set", "x", "y") == "OK\n"
    assert out(server, "-n", "3", "dbsize") == "1\n"
    assert out(server, "dbsize") == "0\n"


def test_stdin_commands(server, r):
    assert out(server, stdin=b"set k v\nget k\nexists k\n") == "OK\nv\n1\n"


def test_resp3(server, r):
    assert out(server, "-3", "config", "get", "maxmemory") == "maxmemory 0\n"
    assert out(server, "-3", "--no-raw", "get", "missing") == "(nil)\n"


def test_pipe(server, r):
    n = 5000
    data = b"".join(b"SET pipe:%d %d\r\n" % (i, i) for i in range(n))
    data += b"".join(b"*2\r\n$4\r\nINCR\r\n$7\r\ncounter\r\n" for _ in range(n))
    text = out(server, "--pipe", stdin=data)
    assert "errors: 0, replies: %d" % (2 * n) in text
    assert r.dbsize() == n + 1
    assert r.get("pipe:4999") == "4999"
    assert r.get("counter") == str(n)


def test_pipe_reports_errors(server, r):
    proc = cli(server, "--pipe", stdin=b"SET a 1\r\nGET\r\nSET b 2\r\n", check=False)
    assert proc.returncode == 1
    assert "errors: 1, replies: 3" in proc.stdout.decode()
    assert r.get("b") == "2"


def test_inline_over_plain_socket(server, r):
    """The `printf 'PING\\r\\nPING\\r\\n' | nc host port` smoke test."""
    with socket.create_connection((server.host, server.port), timeout=5) as s:
        s.sendall(b"PING\r\nPING\r\n")
        s.shutdown(socket.SHUT_WR)
        data = b""
        while data != b"+PONG\r\n+PONG\r\n":
            chunk = s.recv(4096)
            if not chunk:
                break
            data += chunk
    assert data == b"+PONG\r\n+PONG\r\n"


def test_info_and_dbsize(server, r):
    r.set("a", "b")
    assert "redis_version:7." in out(server, "info", "server")
    assert out(server, "dbsize") == "1\n"
