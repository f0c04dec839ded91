"""Prometheus metrics over HTTP on the RESP port (README "Metrics").

A fresh connection whose first line is an HTTP/1.x request line speaks HTTP; GET /metrics
answers the Prometheus text: redis_exporter's metric names, types, HELP texts and labels for
what both have, plus dashkv's per-thread metrics (dashkv_*, label thread). Everything else on the
port stays RESP, inline commands included ("GET key\\r\\n" is not HTTP: no " HTTP/1.x").

The HTTP tests only make sense on dashkv; the inline-command tests also run against redis-server
(DASHKV_TEST_TARGET=redis) and side by side with it (redis_beside).
"""

import base64
import http.client
import json
import os
import pathlib
import shutil
import socket
import ssl
import stat
import subprocess
import tempfile
import threading
import urllib.error
import urllib.request

import pytest
import redis
from prometheus_client.parser import text_string_to_metric_families

from conftest import TARGET, Server
from helpers import non_loopback_ipv4, wait_until
from resp_client import Error, RawClient
from tls_helpers import certs, tls_factory  # noqa: F401  (fixtures)

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
MAX_HEAD = 8 * 1024  # io/http_request.h kMaxHttpHead


# ---- helpers ---------------------------------------------------------------------------------

class HttpConn:
    """One raw TCP connection speaking HTTP/1.x."""

    def __init__(self, host, port, timeout=10.0):
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = b""

    def close(self):
        self.sock.close()

    def send(self, data):
        self.sock.sendall(data)

    def _fill(self):
        chunk = self.sock.recv(1 << 16)
        if not chunk:
            raise EOFError("connection closed; pending: %r" % self.buf[:200])
        self.buf += chunk

    def response(self, head=False):
        """Reads one response: (status, headers with lower-case names, body bytes)."""
        while b"\r\n\r\n" not in self.buf:
            self._fill()
        raw_head, _, self.buf = self.buf.partition(b"\r\n\r\n")
        lines = raw_head.decode("latin-1").split("\r\n")
        version, status, _reason = lines[0].split(" ", 2)
        assert version == "HTTP/1.1", lines[0]
        headers = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            assert name and name == name.strip(), line
            assert name.lower() not in headers, "repeated header %s" % name
            headers[name.lower()] = value.strip()
        n = 0 if head else int(headers["content-length"])
        while len(self.buf) < n:
            self._fill()
        body, self.buf = self.buf[:n], self.buf[n:]
        return int(status), headers, body

    def is_closed(self, timeout=5.0):
        """True when the server closes the connection (after any pending bytes) in time."""
        self.sock.settimeout(timeout)
        try:
            while True:
                chunk = self.sock.recv(1 << 16)
                if not chunk:
                    return True
                self.buf += chunk
        except (ConnectionResetError, BrokenPipeError):
            return True
        except socket.timeout:
            return False


def get(path="/metrics", host="127.0.0.1", extra=b"", version=b"1.1", method=b"GET"):
    return (b"%s %s HTTP/%s\r\nHost: %s\r\n%s\r\n"
            % (method, path.encode(), version, host.encode(), extra))


def scrape(server, path="/metrics", headers=None, host=None):
    """GET over urllib: (status, headers, body text); HTTP errors are returned, not raised."""
    url = "http://%s:%d%s" % (host or server.host, server.port, path)
    req = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=20) as resp:
            return resp.status, resp.headers, resp.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.headers, e.read().decode()


def families(text):
    """The exposition text parsed by prometheus_client: {name: Family}."""
    return {f.name: f for f in text_string_to_metric_families(text)}


def samples(text):
    """{(sample name, frozenset(labels)): value} of the exposition text."""
    out = {}
    for f in text_string_to_metric_families(text):
        for s in f.samples:
            key = (s.name, frozenset(s.labels.items()))
            assert key not in out, "duplicate sample %s" % (key,)
            out[key] = s.value
    return out


def value(smp, name, **labels):
    return smp[(name, frozenset(labels.items()))]


def metrics(server, **kw):
    status, headers, body = scrape(server, **kw)
    assert status == 200, body
    return samples(body)


def basic(user, password):
    return {"Authorization": "Basic " + base64.b64encode(
        ("%s:%s" % (user, password)).encode()).decode()}


dashkv_only = pytest.mark.dashkv_only


# ---- the scrape ------------------------------------------------------------------------------

@dashkv_only
def test_scrape_is_prometheus_text(server, r):
    status, headers, body = scrape(server)
    assert status == 200
    assert headers["Content-Type"] == CONTENT_TYPE
    assert int(headers["Content-Length"]) == len(body.encode())
    fams = families(body)
    assert fams["redis_up"].type == "gauge"
    assert fams["redis_up"].samples[0].value == 1
    # Every family declared once, HELP before TYPE before its samples.
    lines = body.splitlines()
    helps = [ln.split()[2] for ln in lines if ln.startswith("# HELP ")]
    types = [ln.split()[2] for ln in lines if ln.startswith("# TYPE ")]
    assert helps == types and len(set(types)) == len(types) and helps == sorted(helps)
    for name in types:
        # prometheus_client names a counter family without its "_total".
        fam = fams.get(name) or fams[name[:-len("_total")]]
        i = lines.index("# HELP %s %s" % (name, fam.documentation.replace("\\", "\\\\")))
        assert lines[i + 1] == "# TYPE %s %s" % (name, fam.type)
        assert all(not ln.startswith("# ") for ln in lines[i + 2:i + 2 + len(fam.samples)])
    expected_types = {
        "redis_connected_clients": "gauge", "redis_memory_used_bytes": "gauge",
        "redis_commands_processed": "counter", "redis_commands": "counter",
        "redis_commands_duration_seconds": "counter", "redis_keyspace_hits": "counter",
        "redis_keyspace_misses": "counter", "redis_db_keys": "gauge",
        "redis_db_keys_expiring": "gauge", "redis_uptime_in_seconds": "gauge",
        "redis_evicted_keys": "counter", "redis_expired_keys": "counter",
        "redis_net_input_bytes": "counter", "redis_net_output_bytes": "counter",
        "redis_blocked_clients": "gauge", "redis_instance_info": "gauge",
        "redis_start_time_seconds": "gauge", "redis_config_maxclients": "gauge",
        "redis_config_maxmemory": "gauge", "redis_slowlog_length": "gauge",
        "redis_errors": "counter", "dashkv_threads": "gauge",
        "dashkv_thread_commands_processed": "counter", "dashkv_thread_shard_hops": "counter",
        "dashkv_thread_inbox_depth": "gauge", "dashkv_dashtable_segments": "gauge",
        "dashkv_dashtable_fill_ratio": "gauge",
    }
    with pytest.raises(redis.ResponseError):
        r.execute_command("NOSUCHCOMMAND")  # for redis_errors_total
    fams = families(scrape(server)[2])
    for name, t in expected_types.items():
        assert name in fams, name
        assert fams[name].type == t, name


@dashkv_only
def test_values_match_info(server, r):
    r.mset({"a": 1, "b": 2, "c": 3})
    r.set("t", "x", ex=1000)
    r3 = redis.Redis(host=server.host, port=server.port, db=3, decode_responses=True)
    r3.set("in3", "y")
    r3.close()
    r.get("a")
    r.get("nope")
    info = r.info("all")
    smp = metrics(server)
    assert value(smp, "redis_up") == 1
    assert value(smp, "redis_db_keys", db="db0") == info["db0"]["keys"] == 4
    assert value(smp, "redis_db_keys_expiring", db="db0") == info["db0"]["expires"] == 1
    assert value(smp, "redis_db_keys", db="db3") == info["db3"]["keys"] == 1
    assert value(smp, "redis_db_keys", db="db5") == 0  # padded to the database count
    assert value(smp, "redis_db_keys_expiring", db="db15") == 0
    assert ("redis_db_keys", frozenset({("db", "db16")})) not in smp
    # The scrape runs INFO, CONFIG, SLOWLOG and LATENCY: none reads a key.
    assert value(smp, "redis_keyspace_hits_total") == info["keyspace_hits"]
    assert value(smp, "redis_keyspace_misses_total") == info["keyspace_misses"]
    assert value(smp, "redis_expired_keys_total") == info["expired_keys"]
    assert value(smp, "redis_evicted_keys_total") == info["evicted_keys"]
    assert value(smp, "redis_blocked_clients") == info["blocked_clients"]
    assert value(smp, "redis_commands_total", cmd="mset") == info["cmdstat_mset"]["calls"]
    assert value(smp, "redis_commands_duration_seconds_total", cmd="mset") == pytest.approx(
        info["cmdstat_mset"]["usec"] / 1e6)
    assert value(smp, "redis_commands_total", cmd="get") == info["cmdstat_get"]["calls"]
    # Counters that the scrape itself moves: at least what INFO said just before.
    assert value(smp, "redis_commands_processed_total") > info["total_commands_processed"]
    assert value(smp, "redis_net_input_bytes_total") >= info["total_net_input_bytes"]
    assert value(smp, "redis_net_output_bytes_total") >= info["total_net_output_bytes"]
    assert value(smp, "redis_connections_received_total") >= info["total_connections_received"]
    assert value(smp, "redis_connected_clients") >= 2  # r, and the scraper itself
    assert value(smp, "redis_memory_used_bytes") > 0
    assert value(smp, "redis_uptime_in_seconds") >= info["uptime_in_seconds"]
    assert value(smp, "redis_config_maxclients") == int(r.config_get("maxclients")["maxclients"])
    assert value(smp, "redis_config_maxmemory") == int(r.config_get("maxmemory")["maxmemory"])
    assert value(smp, "redis_process_id") == info["process_id"]
    inst = [k for k in smp if k[0] == "redis_instance_info"]
    assert len(inst) == 1
    labels = dict(inst[0][1])
    assert labels["redis_version"] == info["redis_version"]
    assert labels["role"] == "master"
    assert labels["tcp_port"] == str(server.port)
    assert labels["run_id"] == info["run_id"]


@dashkv_only
def test_blocked_clients_and_errors_follow_info(server, r):
    blocker = redis.Redis(host=server.host, port=server.port, socket_timeout=20)
    t = threading.Thread(target=lambda: blocker.blpop(["blocked-list"], timeout=30))
    t.start()
    try:
        wait_until(lambda: r.info("clients")["blocked_clients"] == 1, what="client blocked")
        assert value(metrics(server), "redis_blocked_clients") == 1
    finally:
        r.rpush("blocked-list", "x")
        t.join()
        blocker.close()
    with pytest.raises(redis.ResponseError):
        r.execute_command("INCR", "a", "b")
    errors = r.info("errorstats")
    smp = metrics(server)
    assert value(smp, "redis_errors_total", err="ERR") == errors["errorstat_ERR"]["count"]


@dashkv_only
def test_head_request(server):
    c = HttpConn(server.host, server.port)
    try:
        c.send(get(method=b"HEAD"))
        status, headers, body = c.response(head=True)
        assert status == 200 and body == b""
        assert headers["content-type"] == CONTENT_TYPE
        assert int(headers["content-length"]) > 1000
        assert headers["connection"] == "keep-alive"
        c.send(get())  # the same connection goes on: nothing was left behind the HEAD
        status, _, body = c.response()
        assert status == 200 and b"redis_up 1" in body
    finally:
        c.close()


@dashkv_only
@pytest.mark.parametrize("path", ["/", "/metric", "/metrics/x", "/favicon.ico"])
def test_unknown_path_is_404(server, path):
    status, headers, body = scrape(server, path=path)
    assert status == 404
    assert int(headers["Content-Length"]) == len(body.encode())


@dashkv_only
def test_query_and_absolute_target_reach_metrics(server):
    assert scrape(server, path="/metrics?name[]=redis_up")[0] == 200
    c = HttpConn(server.host, server.port)
    try:
        c.send(get(path="http://127.0.0.1:%d/metrics" % server.port))
        assert c.response()[0] == 200
    finally:
        c.close()


@dashkv_only
@pytest.mark.parametrize("method", [b"POST", b"PUT", b"DELETE", b"OPTIONS", b"FOO"])
def test_other_methods_are_405(server, method):
    c = HttpConn(server.host, server.port)
    try:
        c.send(get(method=method))
        status, headers, _ = c.response()
        assert status == 405
        assert headers["allow"] == "GET, HEAD"
        assert headers["connection"] == "keep-alive"
        c.send(get())
        assert c.response()[0] == 200
    finally:
        c.close()


@dashkv_only
def test_https_on_the_tls_port(tls_factory, certs):
    """The TLS port answers HTTP inside TLS the same way (the scrape is HTTPS)."""
    t = tls_factory(tls_auth_clients="no")
    ctx = ssl.create_default_context(cafile=certs["ca.crt"])
    ctx.check_hostname = False
    with socket.create_connection(("127.0.0.1", t.port), timeout=10) as raw:
        with ctx.wrap_socket(raw) as s:
            c = HttpConn.__new__(HttpConn)
            c.sock, c.buf = s, b""
            c.send(get())
            status, headers, body = c.response()
            assert status == 200 and headers["content-type"] == CONTENT_TYPE
            assert b"redis_up 1" in body
            c.send(b"*1\r\n$4\r\nPING\r\n")  # still HTTP on this connection
            assert c.response()[0] == 400
    assert t.client(certs, cert=None).ping() is True  # and RESP over TLS as before


# ---- connection handling ---------------------------------------------------------------------

@dashkv_only
@pytest.mark.parametrize("version,extra,keep", [
    (b"1.1", b"", True),
    (b"1.1", b"Connection: close\r\n", False),
    (b"1.0", b"", False),
    (b"1.0", b"Connection: keep-alive\r\n", True),
])
def test_keep_alive_as_asked(server, version, extra, keep):
    c = HttpConn(server.host, server.port)
    try:
        c.send(get(version=version, extra=extra))
        status, headers, _ = c.response()
        assert status == 200
        assert headers["connection"] == ("keep-alive" if keep else "close")
        if keep:
            c.send(get(version=version, extra=extra))
            assert c.response()[0] == 200
        else:
            assert c.is_closed()
    finally:
        c.close()


@dashkv_only
def test_pipelined_requests_answered_in_order(server):
    c = HttpConn(server.host, server.port)
    try:
        c.send(get() + get(path="/nope") + get(method=b"HEAD") + get(method=b"POST") +
               get(extra=b"Connection: close\r\n"))
        assert c.response()[0] == 200
        assert c.response()[0] == 404
        status, _, body = c.response(head=True)
        assert status == 200 and body == b""
        assert c.response()[0] == 405
        status, headers, body = c.response()
        assert status == 200 and headers["connection"] == "close" and b"redis_up 1" in body
        assert c.is_closed()
    finally:
        c.close()


@dashkv_only
def test_slow_partial_request(server):
    """A request that arrives a byte at a time is answered once, when complete."""
    c = HttpConn(server.host, server.port)
    try:
        req = get(extra=b"User-Agent: slow\r\n")
        for i in range(len(req) - 1):
            c.send(req[i:i + 1])
        c.sock.settimeout(0.3)
        with pytest.raises(socket.timeout):
            c.sock.recv(1)  # incomplete: no answer yet
        c.sock.settimeout(10)
        c.send(req[-1:])
        status, _, body = c.response()
        assert status == 200 and b"redis_up 1" in body
    finally:
        c.close()


@dashkv_only
def test_long_header_is_cut_with_431(server):
    c = HttpConn(server.host, server.port)
    try:
        c.send(b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * (MAX_HEAD + 100))
        status, headers, _ = c.response()
        assert status == 431
        assert headers["connection"] == "close"
        assert c.is_closed()
    finally:
        c.close()
    server.assert_alive()


@dashkv_only
def test_endless_header_never_grows_memory(server):
    """A client that sends header bytes forever is cut off: the server never buffers more than
    one bounded head, so the sender soon finds the connection closed (the kernel's socket buffers
    are the only other place the bytes can sit)."""
    c = HttpConn(server.host, server.port)
    sent = 0
    limit = 256 << 20
    chunk = b"X-Endless: " + b"z" * 4000 + b"\r\n"
    try:
        c.send(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")
        with pytest.raises((BrokenPipeError, ConnectionResetError)):
            while sent < limit:
                c.sock.sendall(chunk)
                sent += len(chunk)
    finally:
        c.close()
    assert sent < limit
    server.assert_alive()


@dashkv_only
@pytest.mark.parametrize("method,length,status", [
    (b"GET", b"1000000000000000", 413),
    (b"GET", b"99999999999999999999999999", 413),
    (b"POST", b"1000000000000000", 405),
])
def test_bodies_are_refused_without_reading_them(server, method, length, status):
    c = HttpConn(server.host, server.port)
    try:
        c.send(get(method=method, extra=b"Content-Length: " + length + b"\r\n"))
        got, headers, _ = c.response()
        assert got == status
        assert headers["connection"] == "close"
        assert c.is_closed()  # at once: the announced body is not waited for
    finally:
        c.close()


@dashkv_only
@pytest.mark.parametrize("request_bytes,status", [
    (b"GET /metrics HTTP/1.1\r\n\r\n", 400),                       # no Host
    (b"GET /metrics HTTP/1.1\r\nHost: a\r\n folded\r\n\r\n", 400),  # obs-fold
    (b"GET /metrics HTTP/1.1\r\nBad Header\r\n\r\n", 400),
])
def test_malformed_requests_get_400_and_close(server, request_bytes, status):
    c = HttpConn(server.host, server.port)
    try:
        c.send(request_bytes)
        assert c.response()[0] == status
        assert c.is_closed()
    finally:
        c.close()


@dashkv_only
def test_http_then_resp_on_one_connection(server):
    """Once HTTP, always HTTP: RESP after a response is a malformed request (400, close)."""
    c = HttpConn(server.host, server.port)
    try:
        c.send(get())
        assert c.response()[0] == 200
        c.send(b"*1\r\n$4\r\nPING\r\n")
        status, headers, _ = c.response()
        assert status == 400 and headers["connection"] == "close"
        assert c.is_closed()
    finally:
        c.close()
    server.assert_alive()


@dashkv_only
def test_resp_then_http_stays_resp(server):
    """HTTP is recognised only on a fresh connection: after RESP, a request line is an inline
    command (an inline GET with too many arguments)."""
    c = RawClient(server.host, server.port)
    try:
        assert c.call("PING") == "PONG"
        c.send(b"GET /metrics HTTP/1.1\r\n")
        reply = c.read()
        assert isinstance(reply, Error)
        assert str(reply) == "ERR wrong number of arguments for 'get' command"
        assert c.call("PING") == "PONG"
    finally:
        c.close()


# ---- inline commands stay RESP (also against redis-server) -------------------------------------

INLINE_SESSIONS = [
    # (chunks sent on a fresh connection, the replies Redis gives)
    ([b"SET /metrics v\r\nGET /metrics\r\n"], ["OK", b"v"]),
    ([b"GET /metrics\r\n"], [None]),
    ([b"GE", b"T k", b"ey\r\n"], [None]),
    ([b"GET key HTTP\r\n"], ["ERR wrong number of arguments for 'get' command"]),
    ([b"ECHO HTTP/1.1\r\n"], [b"HTTP/1.1"]),
    ([b"PING\r\nPING\r\n"], ["PONG", "PONG"]),
    ([b"set k \"GET / HTTP/1.1\"\r\nget k\r\n"], ["OK", b"GET / HTTP/1.1"]),
    ([b"\r\nPING\r\n"], ["PONG"]),
]


class LoggingClient(RawClient):
    """A RawClient that keeps every byte it received (for byte-for-byte comparisons)."""

    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self.log = b""

    def _fill(self):
        before = len(self.buf)
        super()._fill()
        self.log += self.buf[before:]

    def replies_raw(self, n):
        """Reads n replies; returns their bytes as received."""
        for _ in range(n):
            self.read()
        return self.log[:len(self.log) - len(self.buf)]


def run_inline(srv, chunks, n):
    """Sends `chunks` on a fresh connection to `srv`; returns (replies, their raw bytes)."""
    RawClient(srv.host, srv.port).call("FLUSHALL")
    c = LoggingClient(srv.host, srv.port)
    try:
        for ch in chunks:
            c.send(ch)
        raw = c.replies_raw(n)
        replies = []
        parser = RawClient.__new__(RawClient)
        parser.buf = raw
        for _ in range(n):
            x = parser.read()
            replies.append(str(x) if isinstance(x, Error) else x)
        assert c.call("PING") == "PONG"  # the connection goes on as RESP
        return replies, raw
    finally:
        c.close()


@pytest.mark.parametrize("chunks,expected", INLINE_SESSIONS, ids=lambda v: repr(v)[:40])
def test_inline_commands_on_a_fresh_connection(server, r, chunks, expected):
    assert run_inline(server, chunks, len(expected))[0] == expected


@dashkv_only
@pytest.mark.parametrize("chunks,expected", INLINE_SESSIONS, ids=lambda v: repr(v)[:40])
def test_inline_commands_as_redis_answers_them(server, r, redis_beside, chunks, expected):
    """Byte for byte what redis-server 7.0 answers to the same inline input."""
    mine = run_inline(server, chunks, len(expected))[1]
    theirs = run_inline(redis_beside, chunks, len(expected))[1]
    assert mine == theirs


# ---- access ----------------------------------------------------------------------------------

@pytest.fixture
def secured(server, server_factory):
    """A dashkv with a password for the default user, an ACL user who may run INFO and one who
    may not."""
    if server.is_redis:
        pytest.skip("dashkv only")
    srv = server_factory()
    c = redis.Redis(host=srv.host, port=srv.port, decode_responses=True)
    c.config_set("requirepass", "s3cret")
    c.execute_command("AUTH", "s3cret")
    c.execute_command("ACL", "SETUSER", "scraper", "on", ">scrape", "+info", "+config|get",
                      "+slowlog", "+latency")
    c.execute_command("ACL", "SETUSER", "noinfo", "on", ">pw", "+get")
    c.close()
    return srv


@dashkv_only
def test_password_required(secured):
    status, headers, body = scrape(secured)
    assert status == 401
    assert headers["WWW-Authenticate"].startswith("Basic realm=")
    assert "NOAUTH" in body
    assert scrape(secured, headers=basic("default", "wrong"))[0] == 401
    assert scrape(secured, headers={"Authorization": "Basic !!!"})[0] == 401
    for auth in (basic("default", "s3cret"), basic("", "s3cret"),
                 {"Authorization": "Bearer s3cret"}, basic("scraper", "scrape")):
        status, _, body = scrape(secured, headers=auth)
        assert status == 200, (auth, body)
        assert "redis_up 1" in body
    status, _, body = scrape(secured, headers=basic("noinfo", "pw"))
    assert status == 403 and "NOPERM" in body


@dashkv_only
def test_restricted_scraper_gets_what_it_may_run(secured):
    """Metrics from commands the user may not run (here SLOWLOG for 'infoonly') are left out,
    as redis_exporter leaves them out."""
    c = redis.Redis(host=secured.host, port=secured.port, password="s3cret")
    c.execute_command("ACL", "SETUSER", "infoonly", "on", ">pw", "+info")
    c.close()
    smp = metrics(secured, headers=basic("infoonly", "pw"))
    assert value(smp, "redis_up") == 1
    assert not any(k[0] == "redis_slowlog_length" for k in smp)
    assert not any(k[0] == "redis_config_maxclients" for k in smp)
    smp = metrics(secured, headers=basic("scraper", "scrape"))
    assert any(k[0] == "redis_slowlog_length" for k in smp)


@dashkv_only
def test_each_request_stands_on_its_own_credentials(secured):
    c = HttpConn(secured.host, secured.port)
    try:
        auth = b"Authorization: Basic " + base64.b64encode(b"default:s3cret") + b"\r\n"
        c.send(get(extra=auth))
        assert c.response()[0] == 200
        c.send(get())  # no credentials on the same connection: refused again
        assert c.response()[0] == 401
        c.send(get(extra=auth))
        assert c.response()[0] == 200
    finally:
        c.close()




@dashkv_only
def test_protected_mode_refuses_remote_scrapes(server, server_factory):
    ip = non_loopback_ipv4()
    if ip is None:
        pytest.skip("this machine has no non-loopback IPv4 address")
    srv = server_factory(["--bind", "0.0.0.0", "--protected_mode=yes"])
    # Refused at accept, before the request is read: Redis's -DENIED line, no HTTP answer.
    with pytest.raises((http.client.HTTPException, OSError)) as e:
        scrape(srv, host=ip)
    assert not isinstance(e.value, urllib.error.HTTPError)
    assert scrape(srv)[0] == 200  # loopback is served
    c = redis.Redis(host="127.0.0.1", port=srv.port)
    c.config_set("requirepass", "pw")
    c.close()
    assert scrape(srv, host=ip)[0] == 401
    assert scrape(srv, host=ip, headers=basic("default", "pw"))[0] == 200


# ---- per-thread metrics ------------------------------------------------------------------------

@pytest.fixture(params=[1, 2, 4], ids=lambda t: "metrics-threads%d" % t)
def threaded(request, tmp_path_factory):
    """A dashkv of its own at 1, 2 and 4 threads (whatever DASHKV_TEST_THREADS says)."""
    if TARGET != "dashkv":
        pytest.skip("dashkv only")
    srv = Server("dashkv", request.param, tmp_path_factory.mktemp("metrics-threads"))
    srv.start()
    yield srv
    srv.stop()


def test_per_thread_metrics(threaded):
    n = threaded.threads
    c = redis.Redis(host=threaded.host, port=threaded.port, decode_responses=True)
    keys = {"key:%d" % i: "v" for i in range(2000)}
    c.mset(keys)
    c.execute_command("SELECT", 2)
    c.set("other-db", "x", ex=100)
    # A pipeline over many keys: with several threads most groups hop to other shards.
    pipe = c.pipeline(transaction=False)
    for i in range(200):
        pipe.get("key:%d" % i)
    pipe.execute()
    info = c.info("all")
    c.close()
    smp = metrics(threaded)
    assert value(smp, "dashkv_threads") == n
    threads = {str(i) for i in range(n)}
    for fam in ("dashkv_thread_commands_processed_total", "dashkv_thread_shard_hops_total",
                "dashkv_thread_inbox_depth", "dashkv_shard_keys", "dashkv_dashtable_segments",
                "dashkv_dashtable_slots", "dashkv_dashtable_fill_ratio",
                "dashkv_thread_connected_clients", "dashkv_shard_commands_total"):
        got = {dict(k[1])["thread"] for k in smp if k[0] == fam}
        assert got == threads, fam
    per = lambda fam: [value(smp, fam, thread=t) for t in sorted(threads)]
    assert sum(per("dashkv_shard_keys")) == 2001
    assert sum(per("dashkv_shard_keys_expiring")) == 1
    assert all(k > 0 for k in per("dashkv_shard_keys"))  # 2000 keys reach every shard
    for t in threads:
        keys_t = value(smp, "dashkv_shard_keys", thread=t)
        slots = value(smp, "dashkv_dashtable_slots", thread=t)
        segments = value(smp, "dashkv_dashtable_segments", thread=t)
        assert segments >= 1 and slots >= 840 * segments
        assert value(smp, "dashkv_dashtable_fill_ratio", thread=t) == pytest.approx(keys_t / slots)
        assert value(smp, "dashkv_thread_inbox_depth", thread=t) >= 0
    # Every command counted by a thread's connections; the scrape's own on top.
    assert sum(per("dashkv_thread_commands_processed_total")) > info["total_commands_processed"]
    assert sum(per("dashkv_thread_connected_clients")) == value(smp, "redis_connected_clients")
    hops = sum(per("dashkv_thread_shard_hops_total"))
    if n == 1:
        assert hops == 0
    else:
        assert hops >= info["dashkv_shard_hops"] > 0


# ---- the stock redis_exporter against dashkv ---------------------------------------------------

EXPORTER_MODULE = "github.com/oliver006/redis_exporter"
EXPORTER_VERSION = "v1.62.0"


def _go():
    return shutil.which("go") or next(
        (p for p in ("/usr/local/go/bin/go", "/usr/lib/go/bin/go") if os.access(p, os.X_OK)),
        None)


def _build_exporter(go, target):
    """Builds redis_exporter into `target` with Go (module download through the Go proxy, or
    from the module cache). Returns None, or why it could not."""
    env = dict(os.environ, GOSUMDB="off", GOFLAGS="-mod=mod")
    with tempfile.TemporaryDirectory() as tmp:
        got = subprocess.run([go, "mod", "download", "-json",
                              "%s@%s" % (EXPORTER_MODULE, EXPORTER_VERSION)],
                             cwd=tmp, env=env, capture_output=True, text=True, timeout=900)
        if got.returncode != 0:
            return "go mod download failed: %s" % (got.stdout + got.stderr)[-2000:]
        src = pathlib.Path(tmp) / "src"
        shutil.copytree(json.loads(got.stdout)["Dir"], src)
        for p in [src, *src.rglob("*")]:
            p.chmod(p.stat().st_mode | stat.S_IWUSR)
        partial = target.with_suffix(".partial")
        built = subprocess.run([go, "build", "-o", str(partial), "."], cwd=src, env=env,
                               capture_output=True, text=True, timeout=1800)
        if built.returncode != 0:
            return "go build failed: %s" % (built.stdout + built.stderr)[-2000:]
        partial.rename(target)  # atomic: a cached binary is always complete
    return None


@pytest.fixture(scope="module")
def exporter_bin():
    """A redis_exporter binary: $REDIS_EXPORTER_BIN, one on PATH, or one built once with Go and
    cached (~/.cache/dashkv-test, or $DASHKV_TEST_CACHE) for later runs."""
    explicit = os.environ.get("REDIS_EXPORTER_BIN") or shutil.which("redis_exporter")
    if explicit:
        return explicit
    cache = pathlib.Path(os.environ.get("DASHKV_TEST_CACHE")
                         or pathlib.Path.home() / ".cache" / "dashkv-test")
    target = cache / ("redis_exporter-" + EXPORTER_VERSION)
    if target.is_file():
        return str(target)
    go = _go()
    if go is None:
        pytest.skip("no redis_exporter binary (REDIS_EXPORTER_BIN, PATH) and no Go to build it")
    cache.mkdir(parents=True, exist_ok=True)
    why = _build_exporter(go, target)
    if why is not None:
        pytest.skip("cannot build redis_exporter: " + why)
    return str(target)


@pytest.fixture
def exporter(exporter_bin, server, tmp_path):
    """redis_exporter scraping the server under test; yields its /metrics URL."""
    if server.is_redis:
        pytest.skip("dashkv only")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    log = open(tmp_path / "exporter.log", "wb")
    proc = subprocess.Popen([exporter_bin, "-redis.addr", "redis://%s:%d" % (server.host,
                                                                             server.port),
                             "-web.listen-address", "127.0.0.1:%d" % port],
                            stdout=log, stderr=subprocess.STDOUT)
    url = "http://127.0.0.1:%d/metrics" % port

    def up():
        try:
            with urllib.request.urlopen(url, timeout=5):
                return True
        except OSError:
            return proc.poll() is not None  # exited: stop waiting, the test reports it

    try:
        wait_until(up, timeout=30, what="redis_exporter listening")
        assert proc.poll() is None, (tmp_path / "exporter.log").read_text()
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        log.close()


def _exporter_scrape(url):
    with urllib.request.urlopen(url, timeout=30) as resp:
        return resp.read().decode()


@dashkv_only
def test_redis_exporter_reads_dashkv(exporter, server, r):
    r.mset({"ex:%d" % i: i for i in range(50)})
    r.expire("ex:1", 1000)
    r.get("ex:2")
    r.get("missing")
    text = _exporter_scrape(exporter)
    smp = samples(text)
    assert value(smp, "redis_up") == 1
    assert value(smp, "redis_exporter_last_scrape_error", err="") == 0
    assert value(smp, "redis_db_keys", db="db0") == 50
    assert value(smp, "redis_db_keys_expiring", db="db0") == 1
    assert value(smp, "redis_commands_total", cmd="mset") >= 1
    assert value(smp, "redis_commands_total", cmd="get") >= 2
    assert value(smp, "redis_keyspace_hits_total") >= 1
    assert value(smp, "redis_keyspace_misses_total") >= 1
    assert value(smp, "redis_connected_clients") >= 2
    assert value(smp, "redis_memory_used_bytes") > 0
    info = r.info("all")
    assert value(smp, "redis_keyspace_hits_total") == info["keyspace_hits"]
    inst = [dict(k[1]) for k in smp if k[0] == "redis_instance_info"]
    assert inst and inst[0]["redis_version"] == info["redis_version"]


@dashkv_only
def test_builtin_metrics_match_redis_exporter(exporter, server, r):
    """For every metric both have: the same name, type, HELP text and label names; for those
    that do not move between two scrapes, the same value."""
    r.mset({"cmp:%d" % i: i for i in range(20)})
    r.get("cmp:1")
    r.get("cmp:none")
    theirs = families(_exporter_scrape(exporter))
    mine = families(scrape(server)[2])
    common = set(theirs) & set(mine)
    # What both have: the INFO-derived metrics redis_exporter exports and dashkv serves.
    for name in ("redis_up", "redis_connected_clients", "redis_memory_used_bytes",
                 "redis_commands", "redis_commands_duration_seconds", "redis_keyspace_hits",
                 "redis_keyspace_misses", "redis_db_keys", "redis_db_keys_expiring",
                 "redis_uptime_in_seconds", "redis_evicted_keys", "redis_expired_keys",
                 "redis_net_input_bytes", "redis_net_output_bytes", "redis_blocked_clients",
                 "redis_instance_info", "redis_start_time_seconds", "redis_config_maxclients",
                 "redis_config_maxmemory", "redis_slowlog_length", "redis_slowlog_last_id",
                 "redis_commands_processed", "redis_cpu_sys_seconds",
                 "redis_rdb_last_bgsave_status", "redis_db_avg_ttl_seconds"):
        assert name in common, name
    for name in sorted(common):
        assert mine[name].type == theirs[name].type, name
        assert mine[name].documentation == theirs[name].documentation, name
        label_names = lambda fam: {frozenset(k for k in s.labels) for s in fam.samples}
        assert label_names(mine[name]) == label_names(theirs[name]), name
    # redis_exporter's families that dashkv does not serve are its own (exporter_*, Go runtime,
    # process) or need options (key checks, streams), none derived from INFO.
    exporters_own = ("redis_exporter_", "go_", "process_", "promhttp_",
                     "redis_target_scrape_request_errors",
                     "redis_last_key_groups_scrape_duration_milliseconds")
    missing = {n for n in set(theirs) - set(mine) if not n.startswith(exporters_own)}
    assert missing == set(), missing
    stable = lambda fam: {tuple(sorted(s.labels.items())): s.value for s in fam.samples}
    for name in ("redis_db_keys", "redis_db_keys_expiring", "redis_keyspace_hits",
                 "redis_keyspace_misses", "redis_config_maxclients", "redis_config_maxmemory"):
        assert stable(mine[name]) == stable(theirs[name]), name
