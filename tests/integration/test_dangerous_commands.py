"""enable-debug-command, enable-protected-configs (no / yes / local) and rename-command, as
redis-server 7.0.15 has them: who may run DEBUG and CONFIG SET dir/dbfilename, from loopback
(127.0.0.1, ::1) and other addresses (127.0.0.2, and this machine's own non-loopback address
when it has one), the refusal texts, immutability at run time, and renamed or disabled commands
in dispatch, COMMAND INFO/LIST/DOCS/COUNT and start-up errors."""

import socket
import subprocess

import pytest
import redis

from config_helpers import conf_server  # noqa: F401 (fixture)
from resp_client import Error, RawClient
from helpers import non_loopback_ipv4

DEBUG_REFUSED = ('ERR DEBUG command not allowed. If the enable-debug-command option is set to '
                 '"local", you can run it from a local connection, otherwise you need to set '
                 'this option in the configuration file, and then restart the server.')


def protected(name):
    return ("ERR CONFIG SET failed (possibly related to argument '%s') - can't set protected "
            "config"
            % name)


def immutable(name):
    return ("ERR CONFIG SET failed (possibly related to argument '%s') - can't set immutable "
            "config"
            % name)




def _client(host, port, source):
    """A RawClient connected to host:port from the address `source`."""
    c = RawClient.__new__(RawClient)
    c.sock = socket.create_connection((host, port), timeout=10, source_address=(source, 0))
    c.timeout = 10
    c.buf = b""
    return c


def _peers(srv, extra):
    """(name, server address, source address, is local) of each kind of client."""
    peers = [("loopback", "127.0.0.1", "127.0.0.1", True),
             ("127.0.0.2", "127.0.0.1", "127.0.0.2", False)]
    if extra:
        peers.append(("non-loopback", extra, extra, False))
    return peers


@pytest.mark.parametrize("setting", ["no", "yes", "local"])
def test_debug_and_protected_configs_by_setting(conf_server, setting):
    extra = non_loopback_ipv4()
    # protected-mode no: Redis's would close the connections from other addresses first.
    conf = ("protected-mode no\nenable-debug-command %s\nenable-protected-configs %s\n"
            % (setting, setting))
    if extra:
        conf += "bind 127.0.0.1 %s\n" % extra
    srv = conf_server(conf)
    for name, host, source, local in _peers(srv, extra):
        allowed = setting == "yes" or (setting == "local" and local)
        c = _client(host, srv.port, source)
        replies = c.pipeline([("DEBUG", "SLEEP", "0"),
                              ("CONFIG", "SET", "dir", str(srv.workdir)),
                              ("CONFIG", "SET", "hz", "11", "dbfilename", "x.rdb"),
                              ("CONFIG", "SET", "hz", "12")])
        if allowed:
            assert replies == ["OK", "OK", "OK", "OK"], (name, replies)
        else:
            assert replies == [DEBUG_REFUSED, protected("dir"), protected("dbfilename"), "OK"], \
                (name, replies)
            assert all(isinstance(x, Error) for x in replies[:3])
        got = c.call("CONFIG", "GET", "enable-debug-command", "enable-protected-configs")
        assert dict(zip(got[::2], got[1::2])) == {b"enable-debug-command": setting.encode(),
                                                  b"enable-protected-configs": setting.encode()}
        # Neither setting changes at run time, whoever asks.
        assert c.call("CONFIG", "SET", "enable-debug-command", "yes") == \
            immutable("enable-debug-command")
        assert c.call("CONFIG", "SET", "enable-protected-configs", "yes") == \
            immutable("enable-protected-configs")
        c.close()


def test_refused_inside_multi(conf_server):
    srv = conf_server("protected-mode no\nenable-debug-command local\n"
                      "enable-protected-configs local\n")
    c = _client("127.0.0.1", srv.port, "127.0.0.2")
    # DEBUG is refused when queued and aborts the transaction.
    assert c.pipeline([("MULTI",), ("DEBUG", "SLEEP", "0"), ("EXEC",)]) == [
        "OK", DEBUG_REFUSED,
        "EXECABORT Transaction discarded because of previous errors."]
    # CONFIG SET dir is queued and fails inside EXEC.
    assert c.pipeline([("MULTI",), ("CONFIG", "SET", "dir", str(srv.workdir)), ("EXEC",)]) == [
        "OK", "QUEUED", [protected("dir")]]
    c.close()


@pytest.mark.parametrize("setting,expected", [("no", DEBUG_REFUSED),
                                              ("yes", "NOAUTH Authentication required.")])
def test_debug_refused_before_authentication(conf_server, setting, expected):
    srv = conf_server("requirepass pw\nenable-debug-command %s\n" % setting)
    c = srv.raw()
    assert c.call("DEBUG", "SLEEP", "0") == expected
    assert c.call("AUTH", "pw") == "OK"
    assert c.call("DEBUG", "SLEEP", "0") == ("OK" if setting == "yes" else DEBUG_REFUSED)
    c.close()


def test_defaults(conf_server):
    srv = conf_server()
    c = redis.Redis(host=srv.host, port=srv.port, decode_responses=True)
    # dashkv's default is local (tests and benchmarks on loopback keep DEBUG); Redis's is no.
    expected = "local" if srv.kind == "dashkv" else "no"
    assert c.config_get("enable-debug-command", "enable-protected-configs") == {
        "enable-debug-command": expected, "enable-protected-configs": "no"}
    c.close()


@pytest.mark.dashkv_only
def test_dashkv_default_allows_debug_on_loopback_only(conf_server):
    srv = conf_server("protected-mode no\n")
    c = _client("127.0.0.1", srv.port, "127.0.0.1")
    assert c.call("DEBUG", "SLEEP", "0") == "OK"
    c.close()
    c = _client("127.0.0.1", srv.port, "127.0.0.2")
    assert c.call("DEBUG", "SLEEP", "0") == DEBUG_REFUSED
    c.close()


@pytest.mark.dashkv_only
def test_debug_flag_still_works(conf_server):
    srv = conf_server(extra_args=["--enable_debug_command=no"])
    c = srv.raw()
    assert c.call("DEBUG", "SLEEP", "0") == DEBUG_REFUSED
    c.close()


LONG_NAME = "a_renamed_get_whose_name_is_longer_than_thirty_two_bytes"


def test_rename_command(server, conf_server):
    srv = conf_server("enable-debug-command yes\nrename-command debug mydebug\n"
                      "rename-command flushall \"\"\nrename-command config cfg\n"
                      "rename-command GET %s\n" % LONG_NAME)
    c = srv.raw()
    assert c.call("DEBUG", "SLEEP", "0") == \
        "ERR unknown command 'DEBUG', with args beginning with: 'SLEEP' '0' "
    assert c.call("MYDEBUG", "SLEEP", "0") == "OK"
    assert c.call("FLUSHALL") == "ERR unknown command 'FLUSHALL', with args beginning with: "
    assert c.call("CONFIG", "GET", "port") == \
        "ERR unknown command 'CONFIG', with args beginning with: 'GET' 'port' "
    assert c.call("cfg", "get", "port") == [b"port", str(srv.port).encode()]
    assert c.call("CFG", "SET", "rename-command", "x") == \
        "ERR Unknown option or number of arguments for CONFIG SET - 'rename-command'"
    assert c.call("CFG", "GET", "rename-command") == []
    assert c.call("SET", "k", "v") == "OK"
    assert c.call(LONG_NAME.upper(), "k") == b"v"
    assert c.call("GET", "k") == "ERR unknown command 'GET', with args beginning with: 'k' "
    # Inside MULTI the new names are the ones that exist.
    assert c.pipeline([("MULTI",), ("MYDEBUG", "SLEEP", "0"), (LONG_NAME, "k"), ("EXEC",)]) == [
        "OK", "QUEUED", "QUEUED", ["OK", b"v"]]
    # COMMAND shows a renamed command under its own name; a disabled one is gone.
    info = c.call("COMMAND", "INFO", "mydebug", "flushall", "debug", "cfg")
    assert info[0][0] == b"debug"
    assert info[1] is None and info[2] is None
    assert info[3][0] == b"config"
    names = c.call("COMMAND", "LIST")
    assert b"debug" in names and b"config|get" in names and b"get" in names
    assert b"flushall" not in names and b"mydebug" not in names
    docs = c.call("COMMAND", "DOCS", "mydebug")
    assert docs[0] == b"debug"
    full = server.raw()
    count = full.call("COMMAND", "COUNT")
    full.close()
    assert c.call("COMMAND", "COUNT") == count - 1
    assert len(c.call("COMMAND")) == count - 1
    c.close()


@pytest.mark.parametrize("line,reason", [
    ("rename-command nosuch x", "No such command in rename-command"),
    ("rename-command get set", "Target command name already exists"),
])
def test_rename_command_errors_stop_start(conf_server, line, reason):
    srv = conf_server("# c\n" + line + "\n", start=False)
    rc, out = srv.start_failure()
    assert rc != 0
    assert ", at line 5\n>>> '%s'\n%s" % (line, reason) in out, out
