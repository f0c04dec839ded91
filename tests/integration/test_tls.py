"""TLS (Redis 7.0's tls-* settings): a TLS port beside the plain one, client certificates
(tls-auth-clients yes / optional / no), CONFIG SET reloads, Redis's errors for bad files, and
hostile input on both ports. Certificates come from the `openssl` command line."""

import socket
import ssl
import subprocess
import threading

import pytest
import redis

from helpers import IS_DASHKV, non_loopback_ipv4, wait_until
from tls_helpers import certs, free_port, refused, server_args, tls_factory  # noqa: F401


def test_commands_pipelines_and_large_values(tls_factory, certs):
    t = tls_factory()
    c = t.client(certs)
    assert c.ping() is True
    assert c.set("k", "v") is True
    assert c.get("k") == "v"
    p = c.pipeline(transaction=False)
    for i in range(300):
        p.set("key:%d" % i, "x" * i)
        p.get("key:%d" % i)
    out = p.execute()
    assert out[1::2] == ["x" * i for i in range(300)]
    big = "y" * (8 << 20)  # many TLS records each way; the socket fills up on the way back
    assert c.set("big", big) is True
    assert c.get("big") == big
    assert c.mget(["big"] * 4) == [big] * 4
    assert t.plain().get("k") == "v"  # one keyspace behind both ports
    with c.pipeline(transaction=True) as tx:
        tx.incr("n").incr("n")
        assert tx.execute() == [1, 2]
    c.close()


def test_resp3_and_client_list(tls_factory, certs):
    t = tls_factory()
    c = t.client(certs, protocol=3)
    assert c.ping() is True
    c.client_setname("tlsclient")
    names = [x["name"] for x in t.plain().client_list()]
    assert "tlsclient" in names
    # CLIENT KILL of a TLS client from a plain one.
    cid = c.client_id()
    assert t.plain().client_kill_filter(_id=cid) == 1
    wait_until(lambda: "tlsclient" not in [x["name"] for x in t.plain().client_list()],
               what="killed TLS client gone")
    c.close()


def test_pubsub_over_tls(tls_factory, certs):
    t = tls_factory()
    sub = t.client(certs).pubsub()
    sub.subscribe("ch")
    assert sub.get_message(timeout=5)["type"] == "subscribe"
    plain = t.plain()
    for i in range(100):
        plain.publish("ch", "m%d" % i)
    got = []
    wait_until(lambda: got.extend(
        [m["data"] for m in iter(lambda: sub.get_message(timeout=0.1), None)]) or
        len(got) >= 100, timeout=10, what="100 messages")
    assert got == ["m%d" % i for i in range(100)]
    sub.close()


def test_blocking_over_tls(tls_factory, certs):
    t = tls_factory()
    c = t.client(certs)
    plain = t.plain()
    result = []
    th = threading.Thread(target=lambda: result.append(c.blpop("q", 10)))
    th.start()
    wait_until(lambda: int(plain.info("clients")["blocked_clients"]) == 1, what="blocked")
    plain.rpush("q", "a")
    th.join(10)
    assert result == [("q", "a")]
    c.close()


def _tls_socket(t, certs, cert="client"):
    ctx = ssl.create_default_context(cafile=certs["ca.crt"])
    ctx.check_hostname = False
    if cert:
        ctx.load_cert_chain(certs[cert + ".crt"], certs[cert + ".key"])
    raw = socket.create_connection(("127.0.0.1", t.port), timeout=10)
    return ctx.wrap_socket(raw)


def test_blocked_tls_client_that_leaves_is_noticed(tls_factory, certs):
    t = tls_factory()
    plain = t.plain()
    s = _tls_socket(t, certs)
    s.sendall(b"*3\r\n$5\r\nBLPOP\r\n$1\r\nq\r\n$1\r\n0\r\n")
    wait_until(lambda: int(plain.info("clients")["blocked_clients"]) == 1, what="blocked")
    s.close()  # close_notify, then FIN
    wait_until(lambda: int(plain.info("clients")["blocked_clients"]) == 0, what="unblocked")
    plain.rpush("q", "a")
    assert plain.llen("q") == 1  # the gone client took nothing


def test_output_limit_disconnects_slow_tls_subscriber(tls_factory, certs):
    t = tls_factory()
    plain = t.plain()
    assert plain.config_set("client-output-buffer-limit", "pubsub 65536 0 0") is True
    s = _tls_socket(t, certs)
    s.sendall(b"*2\r\n$9\r\nSUBSCRIBE\r\n$2\r\nch\r\n")
    wait_until(lambda: plain.pubsub_numsub("ch") == [("ch", 1)], what="subscribed")
    payload = "x" * 32768

    def publish_batch():  # returns the receivers of the batch's last message
        p = plain.pipeline(transaction=False)
        for _ in range(32):
            p.publish("ch", payload)
        return p.execute()[-1]

    # The subscriber never reads: once the kernel buffers are full, output waits in the server.
    wait_until(lambda: publish_batch() == 0, timeout=30, what="slow subscriber disconnected")
    s.close()


def test_redis_cli_tls(tls_factory, certs):
    t = tls_factory()

    def cli(*args):
        return subprocess.run(
            ["redis-cli", "--tls", "--cacert", certs["ca.crt"], "--cert", certs["client.crt"],
             "--key", certs["client.key"], "-p", str(t.port), *args],
            capture_output=True, text=True, timeout=20).stdout.strip()

    assert cli("PING") == "PONG"
    assert cli("SET", "a", "1") == "OK"
    assert cli("INCR", "a") == "2"
    assert t.plain().get("a") == "2"


def test_auth_clients_yes(tls_factory, certs):
    t = tls_factory(tls_auth_clients="yes")
    assert refused(t.client(certs, cert=None))
    assert refused(t.client(certs, cert="client2"))  # signed by an untrusted CA
    assert t.client(certs).ping() is True


def test_auth_clients_optional(tls_factory, certs):
    t = tls_factory(tls_auth_clients="optional")
    assert t.client(certs, cert=None).ping() is True
    assert refused(t.client(certs, cert="client2"))
    assert t.client(certs).ping() is True


def test_auth_clients_no(tls_factory, certs):
    t = tls_factory(tls_auth_clients="no")
    assert t.client(certs, cert=None).ping() is True
    assert t.client(certs, cert="client2").ping() is True  # not asked for, not checked


def test_client_refuses_server_of_other_ca(tls_factory, certs):
    t = tls_factory()
    assert refused(t.client(certs, ca="ca2"))


def test_encrypted_key_file(tls_factory, certs):
    t = tls_factory(tls_key_file=certs["server-enc.key"], tls_key_file_pass="secret")
    assert t.client(certs).ping() is True


def test_protocols_and_ciphers(tls_factory, certs):
    t = tls_factory(tls_protocols="TLSv1.2", tls_ciphers="ECDHE-RSA-AES128-GCM-SHA256",
                    tls_prefer_server_ciphers="yes", tls_session_caching="no")
    s = _tls_socket(t, certs)
    assert s.version() == "TLSv1.2"
    assert s.cipher()[0] == "ECDHE-RSA-AES128-GCM-SHA256"
    s.close()
    cfg = t.plain().config_get("tls-*")
    assert cfg["tls-protocols"] == "TLSv1.2"
    assert cfg["tls-prefer-server-ciphers"] == "yes"
    assert cfg["tls-session-caching"] == "no"
    assert cfg["tls-session-cache-size"] == "20480"
    assert cfg["tls-session-cache-timeout"] == "300"
    assert cfg["tls-auth-clients"] == "yes"
    assert cfg["tls-port"] == str(t.port)


def _start_fails(tls_factory, text, **settings):
    t = tls_factory(start=False, **settings)
    proc = t.srv.spawn(free_port())
    assert proc.wait(timeout=20) != 0
    err = t.srv.stderr_text() + (t.srv.workdir / "server.stdout").read_text(errors="replace")
    assert text in err
    assert "Failed to configure TLS. Check logs for more info." in err


def test_bad_files_at_start(tls_factory, certs):
    _start_fails(tls_factory, "Failed to load private key: " + certs["client.key"],
                 tls_key_file=certs["client.key"])
    _start_fails(tls_factory, "Failed to load certificate: /nonexistent.crt",
                 tls_cert_file="/nonexistent.crt")
    _start_fails(tls_factory, "Failed to load private key",
                 tls_key_file=certs["server-enc.key"], tls_key_file_pass="wrong")
    _start_fails(tls_factory, "Either tls-ca-cert-file or tls-ca-cert-dir must be specified",
                 tls_ca_cert_file="")


def test_bad_values_at_config_set(tls_factory, certs):
    t = tls_factory()
    plain = t.plain()
    for name, value in [("tls-key-file", certs["client.key"]),
                        ("tls-cert-file", "/nonexistent.crt"),
                        ("tls-protocols", "TLSv1.9"),
                        ("tls-ca-cert-file", "/nonexistent.crt")]:
        with pytest.raises(redis.ResponseError) as e:
            plain.config_set(name, value)
        assert str(e.value) == ("CONFIG SET failed (possibly related to argument '%s') - Unable "
                                "to update TLS configuration. Check server logs." % name)
    with pytest.raises(redis.ResponseError) as e:
        plain.config_set("tls-auth-clients", "maybe")
    assert str(e.value) == ("CONFIG SET failed (possibly related to argument 'tls-auth-clients') "
                            "- argument(s) must be one of the following: no, yes, optional")
    cfg = plain.config_get("tls-*")  # every failed value was rolled back
    assert cfg["tls-key-file"] == certs["server.key"]
    assert cfg["tls-cert-file"] == certs["server.crt"]
    assert cfg["tls-protocols"] == ""
    assert cfg["tls-auth-clients"] == "yes"
    assert t.client(certs).ping() is True


def test_reload_by_config_set(tls_factory, certs):
    t = tls_factory()
    old = t.client(certs)
    assert old.set("k", "1") is True
    plain = t.plain()
    # Certificate and key change together in one call (each alone would not match the other).
    assert plain.config_set("tls-cert-file", certs["server2.crt"],
                            "tls-key-file", certs["server2.key"]) is True
    assert old.incr("k") == 2  # the open connection keeps its session
    assert refused(t.client(certs, ca="ca"))  # new connections get the new certificate
    assert t.client(certs, ca="ca2").ping() is True
    # Client certificates from the second CA only, from now on.
    assert plain.config_set("tls-ca-cert-file", certs["ca2.crt"]) is True
    assert refused(t.client(certs, ca="ca2", cert="client"))
    assert t.client(certs, ca="ca2", cert="client2").ping() is True
    assert plain.config_set("tls-auth-clients", "no") is True
    assert t.client(certs, ca="ca2", cert=None).ping() is True
    assert old.incr("k") == 3
    old.close()


def test_plain_text_on_tls_port(tls_factory, certs):
    t = tls_factory()
    with socket.create_connection(("127.0.0.1", t.port), timeout=10) as s:
        s.sendall(b"PING\r\n")
        data = b""
        try:
            while chunk := s.recv(4096):
                data += chunk
        except ConnectionResetError:
            pass
        assert b"PONG" not in data
    assert t.client(certs).ping() is True


def test_tls_hello_on_plain_port(tls_factory, certs):
    t = tls_factory()
    ctx = ssl.create_default_context(cafile=certs["ca.crt"])
    with socket.create_connection(("127.0.0.1", t.srv.port), timeout=10) as raw:
        with pytest.raises((ssl.SSLError, ConnectionError, OSError)):
            ctx.wrap_socket(raw, server_hostname="localhost")
    assert t.plain().ping() is True
    assert t.client(certs).ping() is True


def _client_hello():
    """The first bytes a TLS client sends (a ClientHello record)."""
    ctx = ssl.create_default_context()
    incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
    obj = ctx.wrap_bio(incoming, outgoing, server_hostname="localhost")
    with pytest.raises(ssl.SSLWantReadError):
        obj.do_handshake()
    return outgoing.read()


def test_silent_and_half_handshakes_cost_nothing(tls_factory, certs):
    t = tls_factory()
    hello = _client_hello()
    silent = [socket.create_connection(("127.0.0.1", t.port), timeout=10) for _ in range(20)]
    half = []
    for _ in range(20):
        s = socket.create_connection(("127.0.0.1", t.port), timeout=10)
        s.sendall(hello[: len(hello) // 2])
        half.append(s)
    # Others are served meanwhile, on both ports.
    c = t.client(certs)
    for i in range(50):
        assert c.set("k", i) is True
    assert t.plain().ping() is True
    if IS_DASHKV:  # the handshake timeout (1 s here) closes them all
        def all_closed():
            for s in silent + half:
                s.settimeout(0.05)
                try:
                    if s.recv(1) != b"":
                        return False
                except socket.timeout:
                    return False
                except OSError:
                    pass
            return True
        wait_until(all_closed, timeout=20, what="stalled handshakes closed")
    for s in silent + half:
        s.close()
    c.close()


def test_many_connects_and_disconnects(tls_factory, certs):
    t = tls_factory()
    for _ in range(2000):  # TCP only: connect and leave before any handshake
        socket.create_connection(("127.0.0.1", t.port), timeout=10).close()
    for _ in range(200):  # full handshakes, then a close with or without close_notify
        s = _tls_socket(t, certs)
        s.close()
    hello = _client_hello()
    for _ in range(200):
        s = socket.create_connection(("127.0.0.1", t.port), timeout=10)
        s.sendall(hello)
        s.close()
    plain = t.plain()
    wait_until(lambda: int(plain.info("clients")["connected_clients"]) == 1, timeout=20,
               what="connections released")
    assert t.client(certs).ping() is True


def test_protected_mode_tls_denied(server_factory, server, certs):
    from test_protected_mode import DENIED
    ip = non_loopback_ipv4()
    if ip is None:
        pytest.skip("this machine has no non-loopback IPv4 address")
    port = free_port()
    settings = {"tls-port": port, "tls-cert-file": certs["server.crt"],
                "tls-key-file": certs["server.key"], "tls-ca-cert-file": certs["ca.crt"]}
    srv = server_factory(["--bind", "0.0.0.0"] + server_args(server.kind, settings))
    ctx = ssl.create_default_context(cafile=certs["ca.crt"])
    ctx.check_hostname = False
    ctx.load_cert_chain(certs["client.crt"], certs["client.key"])
    with ctx.wrap_socket(socket.create_connection((ip, port), timeout=10)) as s:
        data = b""
        try:
            while chunk := s.recv(65536):
                data += chunk
        except (ssl.SSLError, ConnectionResetError):
            pass
    assert data == DENIED
    assert srv.proc.poll() is None
