"""tls-* settings from a config file and from the command line: the command line overrides the
file's lines (Redis applies its arguments after the file). Expected behaviour is
redis-server 7.0.15's; both servers read the same files."""

import socket

import pytest

from config_helpers import conf_server  # noqa: F401 (fixture)
from tls_helpers import TlsServer, certs, free_port, server_args  # noqa: F401 (fixture)


def tls_lines(settings):
    return "".join('%s "%s"\n' % (name, value) for name, value in settings.items())


def test_file_tls_settings(conf_server, certs):
    port = free_port()
    srv = conf_server(tls_lines({
        "tls-port": port, "tls-cert-file": certs["server.crt"],
        "tls-key-file": certs["server.key"], "tls-ca-cert-file": certs["ca.crt"],
        "tls-auth-clients": "optional"}))
    t = TlsServer(srv, port)
    assert t.client(certs, cert=None).ping() is True
    cfg = t.plain().config_get("tls-*")
    assert cfg["tls-port"] == str(port)
    assert cfg["tls-auth-clients"] == "optional"


def test_flags_override_the_file(server, conf_server, certs):
    file_port, flag_port = free_port(), free_port()
    # The file names the other CA's certificates and requires client certificates; the flags
    # name this CA's and turn client certificates off.
    srv = conf_server(
        tls_lines({"tls-port": file_port, "tls-cert-file": certs["server2.crt"],
                   "tls-key-file": certs["server2.key"], "tls-ca-cert-file": certs["ca2.crt"],
                   "tls-auth-clients": "yes", "tls-protocols": "TLSv1.2"}),
        extra_args=server_args(server.kind, {
            "tls-port": flag_port, "tls-cert-file": certs["server.crt"],
            "tls-key-file": certs["server.key"], "tls-ca-cert-file": certs["ca.crt"],
            "tls-auth-clients": "no"}))
    t = TlsServer(srv, flag_port)
    c = t.client(certs, cert=None)
    assert c.ping() is True
    c.close()
    cfg = t.plain().config_get("tls-*")
    assert cfg["tls-port"] == str(flag_port)
    assert cfg["tls-cert-file"] == certs["server.crt"]
    assert cfg["tls-key-file"] == certs["server.key"]
    assert cfg["tls-ca-cert-file"] == certs["ca.crt"]
    assert cfg["tls-auth-clients"] == "no"
    assert cfg["tls-protocols"] == "TLSv1.2"  # set by the file only
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", file_port), timeout=5).close()


def test_protected_mode_flag_overrides_the_file(server, conf_server):
    value = ["--protected-mode", "no"] if server.kind == "redis" else ["--protected_mode=no"]
    srv = conf_server("protected-mode yes\n", extra_args=value)
    c = srv.raw()
    assert [x.decode() if isinstance(x, bytes) else x
            for x in c.call("CONFIG", "GET", "protected-mode")] == ["protected-mode", "no"]
    c.close()
