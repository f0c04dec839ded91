"""CONFIG SET tls-port at run time (Redis 7.0): the TLS listener moves to a new port, closes (0),
or starts on a server started without one; Redis's errors for a port that cannot be bound, for
a TLS context that cannot be built and for bad values, each leaving the old port listening; and
the port moved in a loop while clients connect. Certificates come from the `openssl` command
line (tls_helpers)."""

import os
import socket
import ssl
import threading

import pytest
import redis

from helpers import wait_until
from tls_helpers import TlsServer, certs, free_port, server_args, tls_factory  # noqa: F401

SET_FAILED = "CONFIG SET failed (possibly related to argument '%s') - "
LISTEN_ERROR = SET_FAILED % "tls-port" + "Unable to listen on this port. Check server logs."
TLS_ERROR = "Unable to update TLS configuration. Check server logs."


def closed(port):
    """Whether nothing listens on 127.0.0.1:port (the connect is refused)."""
    try:
        socket.create_connection(("127.0.0.1", port), timeout=10).close()
    except ConnectionRefusedError:
        return True
    return False


def config_set_error(c, *args):
    with pytest.raises(redis.ResponseError) as e:
        c.config_set(*args)
    return str(e.value)


def tls_settings(certs):
    return {"tls-cert-file": certs["server.crt"], "tls-key-file": certs["server.key"],
            "tls-ca-cert-file": certs["ca.crt"]}


def moved(t, port):
    """A TlsServer of the same process with its TLS port at `port`."""
    return TlsServer(t.srv, port)


def test_move_port(tls_factory, certs):
    t = tls_factory()
    plain = t.plain()
    old = t.client(certs)
    assert old.set("k", "1") is True
    port = free_port()
    assert plain.config_set("tls-port", port) is True
    assert plain.config_get("tls-port") == {"tls-port": str(port)}
    assert moved(t, port).client(certs).incr("k") == 2
    assert closed(t.port)
    assert old.incr("k") == 3  # an open TLS connection stays
    # Back and forth, then the same port again (nothing changes).
    assert plain.config_set("tls-port", t.port) is True
    assert t.client(certs).incr("k") == 4
    assert closed(port)
    assert plain.config_set("tls-port", t.port) is True
    assert t.client(certs).incr("k") == 5
    assert plain.config_get("tls-port") == {"tls-port": str(t.port)}
    old.close()


def test_zero_closes_and_a_port_reopens(tls_factory, certs):
    t = tls_factory()
    plain = t.plain()
    old = t.client(certs)
    assert old.ping() is True
    assert plain.config_set("tls-port", 0) is True
    assert plain.config_get("tls-port") == {"tls-port": "0"}
    assert closed(t.port)
    assert old.ping() is True
    assert plain.config_set("tls-port", 0) is True
    port = free_port()
    assert plain.config_set("tls-port", port) is True  # the context built at start serves again
    assert moved(t, port).client(certs).ping() is True
    old.close()


def test_port_in_use_keeps_old_port(tls_factory, certs):
    t = tls_factory()
    plain = t.plain()
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        busy = taken.getsockname()[1]
        assert config_set_error(plain, "tls-port", busy) == LISTEN_ERROR
        assert plain.config_get("tls-port") == {"tls-port": str(t.port)}
        assert t.client(certs).ping() is True
        # The plain port is in use by the server itself.
        assert config_set_error(plain, "tls-port", t.srv.port) == LISTEN_ERROR
        assert plain.config_get("tls-port") == {"tls-port": str(t.port)}
        assert t.client(certs).ping() is True
        assert plain.ping() is True
        # Every value of the call is restored.
        assert plain.config_set("maxmemory-samples", 5) is True
        assert config_set_error(plain, "maxmemory-samples", 7, "tls-port", busy) == LISTEN_ERROR
        assert plain.config_get("maxmemory-samples") == {"maxmemory-samples": "5"}
    # Closed TLS port: a port in use leaves it closed.
    assert plain.config_set("tls-port", 0) is True
    assert config_set_error(plain, "tls-port", t.srv.port) == LISTEN_ERROR
    assert plain.config_get("tls-port") == {"tls-port": "0"}


def test_bad_values(tls_factory, certs):
    t = tls_factory()
    plain = t.plain()
    for value in ["65536", "-1", "9223372036854775807"]:
        assert config_set_error(plain, "tls-port", value) == (
            SET_FAILED % "tls-port" + "argument must be between 0 and 65535 inclusive")
    for value in ["abc", "", " 1234", "+1234", "01234", "1234.0", "0x10",
                  "100000000000000000000"]:
        assert config_set_error(plain, "tls-port", value) == (
            SET_FAILED % "tls-port" + "argument couldn't be parsed into an integer")
    assert config_set_error(plain, "tls-port", 1, "TLS-PORT", 2) == (
        SET_FAILED % "TLS-PORT" + "duplicate parameter")
    assert plain.config_get("tls-port") == {"tls-port": str(t.port)}
    assert t.client(certs).ping() is True


def test_start_tls_at_run_time(server_factory, server, certs):
    # Certificates configured, no TLS port: the context is built by CONFIG SET tls-port.
    srv = server_factory(server_args(server.kind, tls_settings(certs)))
    t = TlsServer(srv, free_port())
    plain = t.plain()
    assert plain.config_get("tls-port") == {"tls-port": "0"}
    assert plain.config_set("tls-port", t.port) is True
    assert t.client(certs).set("k", "v") is True
    assert plain.get("k") == "v"


def test_start_tls_with_its_settings_in_one_call(server_factory, server, certs):
    srv = server_factory()
    plain = TlsServer(srv, 0).plain()
    port = free_port()
    s = tls_settings(certs)
    # The port comes first, yet the call's certificate settings apply before the listener moves.
    assert plain.config_set("tls-port", port, "tls-cert-file", s["tls-cert-file"],
                            "tls-key-file", s["tls-key-file"],
                            "tls-ca-cert-file", s["tls-ca-cert-file"]) is True
    assert TlsServer(srv, port).client(certs).ping() is True


def test_start_tls_without_certificate_fails(server_factory, server, certs):
    srv = server_factory()
    plain = TlsServer(srv, 0).plain()
    port = free_port()
    assert config_set_error(plain, "tls-port", port) == SET_FAILED % "tls-port" + TLS_ERROR
    assert plain.config_get("tls-port") == {"tls-port": "0"}
    assert closed(port)
    # A certificate that cannot be read: settable while no TLS port exists, refused by it.
    assert plain.config_set("tls-cert-file", "/nonexistent.crt",
                            "tls-key-file", certs["server.key"]) is True
    assert config_set_error(plain, "tls-port", port) == SET_FAILED % "tls-port" + TLS_ERROR
    assert plain.config_get("tls-port") == {"tls-port": "0"}
    assert closed(port)
    assert plain.ping() is True


def test_bad_certificate_at_start_without_port(server_factory, server, certs):
    settings = dict(tls_settings(certs), **{"tls-key-file": certs["client.key"]})
    srv = server_factory(server_args(server.kind, settings))  # starts: no TLS port
    plain = TlsServer(srv, 0).plain()
    port = free_port()
    assert config_set_error(plain, "tls-port", port) == SET_FAILED % "tls-port" + TLS_ERROR
    assert closed(port)
    # Fixed, the port opens.
    assert plain.config_set("tls-key-file", certs["server.key"]) is True
    assert plain.config_set("tls-port", port) is True
    assert TlsServer(srv, port).client(certs).ping() is True


def test_failed_certificate_in_the_same_call_keeps_port(tls_factory, certs):
    t = tls_factory()
    plain = t.plain()
    port = free_port()
    for args in (("tls-port", port, "tls-cert-file", "/nonexistent.crt"),
                 ("tls-cert-file", "/nonexistent.crt", "tls-port", port)):
        assert config_set_error(plain, *args) == SET_FAILED % "tls-cert-file" + TLS_ERROR
        assert plain.config_get("tls-port") == {"tls-port": str(t.port)}
        assert plain.config_get("tls-cert-file") == {"tls-cert-file": certs["server.crt"]}
        assert t.client(certs).ping() is True
        assert closed(port)


def test_port_in_use_restores_certificate_of_the_same_call(tls_factory, certs):
    t = tls_factory()
    plain = t.plain()
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        err = config_set_error(plain, "tls-cert-file", certs["server2.crt"],
                               "tls-key-file", certs["server2.key"],
                               "tls-port", taken.getsockname()[1])
    assert err == LISTEN_ERROR
    assert plain.config_get("tls-cert-file") == {"tls-cert-file": certs["server.crt"]}
    # New connections still get the first certificate.
    assert t.client(certs, ca="ca").ping() is True


def _fd_count(pid):
    return len(os.listdir("/proc/%d/fd" % pid))


def test_moving_in_a_loop_while_clients_connect(tls_factory, certs):
    t = tls_factory(tls_auth_clients="no")
    plain = t.plain()
    pid = t.srv.proc.pid
    ports = [free_port() for _ in range(3)] + [t.port]
    current = [t.port]
    stop = threading.Event()
    served = [0]

    def connect_loop():
        ctx = ssl.create_default_context(cafile=certs["ca.crt"])
        ctx.check_hostname = False
        while not stop.is_set():
            port = current[0]
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=5) as raw:
                    with ctx.wrap_socket(raw) as s:
                        s.sendall(b"PING\r\n")
                        if s.recv(16) == b"+PONG\r\n":
                            served[0] += 1
            except (OSError, ssl.SSLError):
                pass  # the port moved meanwhile, or it is closed

    # Warm up (the server's first TLS connection allocates for good), then count.
    warm = t.client(certs, cert=None)
    assert warm.ping() is True
    warm.close()
    wait_until(lambda: int(plain.info("clients")["connected_clients"]) == 1, timeout=20,
               what="warm-up client gone")
    before = _fd_count(pid)
    threads = [threading.Thread(target=connect_loop) for _ in range(3)]
    for th in threads:
        th.start()
    try:
        for i in range(50):
            port = 0 if i % 10 == 9 else ports[i % len(ports)]
            try:
                plain.config_set("tls-port", port)
            except redis.ResponseError as e:
                # A free port can be taken by a client socket of the loop meanwhile.
                assert str(e) == LISTEN_ERROR
                continue
            current[0] = port or t.port
    finally:
        stop.set()
        for th in threads:
            th.join(30)
    assert plain.config_set("tls-port", t.port) is True
    last = t.client(certs, cert=None)
    assert last.ping() is True
    last.close()
    assert served[0] > 0
    t.srv.assert_alive()
    wait_until(lambda: int(plain.info("clients")["connected_clients"]) == 1, timeout=20,
               what="loop clients gone")
    # One TLS listener (and whatever the plain client holds) beyond the start: no leak.
    wait_until(lambda: _fd_count(pid) <= before + 2, timeout=20,
               what="descriptors back (%d before)" % before)
