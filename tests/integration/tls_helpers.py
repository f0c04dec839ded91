"""Shared TLS test setup: certificates made with the `openssl` command line, tls-* settings in
each target's command-line syntax, and servers with a TLS port (for test_tls*.py)."""

import os
import socket
import ssl
import subprocess

import pytest
import redis


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _openssl(*args, cwd):
    subprocess.run(["openssl", *args], cwd=cwd, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)


def _make_ca(d, name):
    _openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", name + ".key", "-out",
             name + ".crt", "-days", "30", "-subj", "/CN=" + name, cwd=d)


def _make_cert(d, name, ca, cn, server=False, key_args=()):
    _openssl("req", "-newkey", "rsa:2048", *(key_args or ("-nodes",)), "-keyout", name + ".key",
             "-out", name + ".csr", "-subj", "/CN=" + cn, cwd=d)
    ext = d / (name + ".ext")
    ext.write_text("subjectAltName=DNS:localhost,IP:127.0.0.1\n" if server else
                   "extendedKeyUsage=clientAuth\n")
    _openssl("x509", "-req", "-in", name + ".csr", "-CA", ca + ".crt", "-CAkey", ca + ".key",
             "-CAcreateserial", "-out", name + ".crt", "-days", "30", "-extfile", ext.name, cwd=d)


@pytest.fixture(scope="session")
def certs(tmp_path_factory):
    """CA, server and client certificates; a second CA with its own server and client
    certificates (untrusted by the first); an encrypted copy of the server key."""
    d = tmp_path_factory.mktemp("certs")
    _make_ca(d, "ca")
    _make_ca(d, "ca2")
    _make_cert(d, "server", "ca", "localhost", server=True)
    _make_cert(d, "client", "ca", "client")
    _make_cert(d, "server2", "ca2", "localhost", server=True)
    _make_cert(d, "client2", "ca2", "client2")
    _openssl("rsa", "-in", "server.key", "-aes256", "-passout", "pass:secret", "-out",
             "server-enc.key", cwd=d)
    return {name: str(d / name) for name in os.listdir(d)}


def server_args(kind, settings):
    """Server arguments for tls-* settings in the target's syntax."""
    out = []
    for name, value in settings.items():
        if kind == "redis":
            out += ["--" + name, str(value)]
        else:
            out.append("--%s=%s" % (name.replace("-", "_"), value))
    return out


class TlsServer:
    def __init__(self, srv, tls_port):
        self.srv = srv
        self.port = tls_port

    def client(self, certs, cert="client", ca="ca", **kw):
        """A redis-py client over TLS that trusts `ca` and presents `cert` (None: no cert)."""
        return redis.Redis(
            host="127.0.0.1", port=self.port, ssl=True, ssl_ca_certs=certs[ca + ".crt"],
            ssl_certfile=certs[cert + ".crt"] if cert else None,
            ssl_keyfile=certs[cert + ".key"] if cert else None, ssl_check_hostname=False,
            socket_timeout=20, decode_responses=True, **kw)

    def plain(self):
        return redis.Redis(host="127.0.0.1", port=self.srv.port, socket_timeout=20,
                           decode_responses=True)


@pytest.fixture
def tls_factory(server_factory, server, certs):
    """make(**settings) -> TlsServer: a server of the target's kind with a TLS port and the
    given tls-* settings (defaults: the CA's server certificate, tls-auth-clients yes)."""
    def make(start=True, **settings):
        port = free_port()
        all_settings = {"tls-port": port, "tls-cert-file": certs["server.crt"],
                        "tls-key-file": certs["server.key"],
                        "tls-ca-cert-file": certs["ca.crt"]}
        all_settings.update({k.replace("_", "-"): v for k, v in settings.items()})
        extra = server_args(server.kind, all_settings)
        if server.kind == "dashkv":
            extra.append("--tls_handshake_timeout_ms=1000")
        return TlsServer(server_factory(extra, start=start), port)
    return make


def refused(client):
    """Whether the server refuses the client (the handshake or the first command fails)."""
    try:
        client.ping()
    except (redis.ConnectionError, ssl.SSLError, ConnectionError, OSError):
        return True
    finally:
        client.close()
    return False
