"""Protected mode (Redis 7.0): with protected-mode yes and no password for the default user,
clients that connect from other than a loopback address get -DENIED and are closed.

The non-loopback client connects to this machine's own non-loopback address (the tests skip when
the machine has none)."""

import socket

import pytest
import redis

from helpers import non_loopback_ipv4, wait_until

DENIED = (
    "-DENIED Redis is running in protected mode because protected mode is enabled and no "
    "password is set for the default user. In this mode connections are only accepted from the "
    "loopback interface. If you want to connect from external computers to Redis you may adopt "
    "one of the following solutions: 1) Just disable protected mode sending the command 'CONFIG "
    "SET protected-mode no' from the loopback interface by connecting to Redis from the same "
    "host the server is running, however MAKE SURE Redis is not publicly accessible from "
    "internet if you do so. Use CONFIG REWRITE to make this change permanent. 2) Alternatively "
    "you can just disable the protected mode by editing the Redis configuration file, and "
    "setting the protected mode option to 'no', and then restarting the server. 3) If you "
    "started the server manually just for testing, restart it with the '--protected-mode no' "
    "option. 4) Setup a an authentication password for the default user. NOTE: You only need to "
    "do one of the above things in order for the server to start accepting connections from the "
    "outside.\r\n").encode()




@pytest.fixture
def remote_ip():
    ip = non_loopback_ipv4()
    if ip is None:
        pytest.skip("this machine has no non-loopback IPv4 address")
    return ip


def flag(kind, name, value):
    """A server argument in the target's syntax (Redis: --name value; dashkv: --name_x=value)."""
    if kind == "redis":
        return ["--" + name, value]
    return ["--%s=%s" % (name.replace("-", "_"), value)]


def read_all(ip, port, timeout=5.0):
    """Connects to ip:port and returns every byte the server sends until it closes (nothing is
    sent: a refused client that had sent bytes could see a reset instead of the error)."""
    with socket.create_connection((ip, port), timeout=timeout) as s:
        data = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                return data
            data += chunk


def first_reply(ip, port):
    """Sends PING from a raw socket and returns the first reply line."""
    with socket.create_connection((ip, port), timeout=5.0) as s:
        s.sendall(b"PING\r\n")
        return s.makefile("rb").readline()


def ping_from(ip, port, password=None):
    c = redis.Redis(host=ip, port=port, password=password, socket_timeout=5,
                    decode_responses=True)
    try:
        return c.ping()
    finally:
        c.close()


def test_remote_client_denied_loopback_served(server_factory, remote_ip):
    srv = server_factory(["--bind", "0.0.0.0"])
    # The error comes at accept, without a command, then the close.
    assert read_all(remote_ip, srv.port) == DENIED
    assert ping_from("127.0.0.1", srv.port) is True
    c = redis.Redis(host="127.0.0.1", port=srv.port, decode_responses=True)
    assert c.config_get("protected-mode") == {"protected-mode": "yes"}
    c.close()


def test_password_lets_remote_clients_in(server_factory, remote_ip):
    srv = server_factory(["--bind", "0.0.0.0"])
    c = redis.Redis(host="127.0.0.1", port=srv.port, decode_responses=True)
    assert c.config_set("requirepass", "s3cret") is True
    c.close()
    assert first_reply(remote_ip, srv.port).startswith(b"-NOAUTH")
    assert ping_from(remote_ip, srv.port, password="s3cret") is True


def test_config_set_protected_mode(server_factory, remote_ip):
    srv = server_factory(["--bind", "0.0.0.0"])
    c = redis.Redis(host="127.0.0.1", port=srv.port, decode_responses=True)
    with pytest.raises(redis.ResponseError) as e:
        c.config_set("protected-mode", "maybe")
    assert str(e.value) == ("CONFIG SET failed (possibly related to argument 'protected-mode') "
                            "- argument must be 'yes' or 'no'")
    assert c.config_set("protected-mode", "no") is True
    assert c.config_get("protected-mode") == {"protected-mode": "no"}
    assert ping_from(remote_ip, srv.port) is True
    assert c.config_set("protected-mode", "yes") is True
    assert read_all(remote_ip, srv.port) == DENIED
    # Setting a password (requirepass) lifts protection; clearing it restores it.
    assert c.config_set("requirepass", "pw") is True
    assert first_reply(remote_ip, srv.port).startswith(b"-NOAUTH")
    c.execute_command("AUTH", "pw")
    assert c.config_set("requirepass", "") is True
    wait_until(lambda: read_all(remote_ip, srv.port) == DENIED, what="protection back")
    c.close()


def test_protected_mode_off_at_start(server_factory, server, remote_ip):
    srv = server_factory(["--bind", "0.0.0.0"] + flag(server.kind, "protected-mode", "no"))
    assert ping_from(remote_ip, srv.port) is True
