"""CLIENT LIST / CLIENT INFO fields as Redis 7.0.15 prints them, with real values: qbuf and
argv-mem of a client whose command is running, parked, held by CLIENT PAUSE or only partly
received; multi and multi-mem of a MULTI queue; flags b, d, x; obl/oll/omem and events of a
client that stops reading its pub/sub output. Also runs against redis-server 7.0
(DASHKV_TEST_TARGET=redis)."""
import socket

from helpers import wait_until
from resp_client import encode

# Redis 7.0.15's fields, in its order.
REDIS_FIELDS = ["id", "addr", "laddr", "fd", "name", "age", "idle", "flags", "db", "sub", "psub",
                "ssub", "multi", "qbuf", "qbuf-free", "argv-mem", "multi-mem", "rbs", "rbp",
                "obl", "oll", "omem", "tot-mem", "events", "cmd", "user", "redir", "resp"]
# What dashkv prints after them: CLIENT SETINFO's fields (Redis 7.2 prints them there too).
EXTRA_FIELDS = [[], ["lib-name", "lib-ver"]]


def parse_line(line):
    fields = {}
    for part in line.split(" "):
        k, _, v = part.partition("=")
        fields[k] = v
    return fields


def as_text(reply):
    return reply.decode() if isinstance(reply, bytes) else str(reply)


def client_line(r, cid):
    """The CLIENT LIST fields of client `cid` (None when it is not connected)."""
    for line in r.execute_command("CLIENT", "LIST").splitlines():
        if line.startswith("id=%d " % cid):
            return parse_line(line)
    return None


def client_id(raw):
    return raw.call("CLIENT", "ID")


def test_fields_in_redis_order(raw):
    line = as_text(raw.call("CLIENT", "INFO")).rstrip("\n")
    keys = [part.partition("=")[0] for part in line.split(" ")]
    assert keys[:len(REDIS_FIELDS)] == REDIS_FIELDS
    assert keys[len(REDIS_FIELDS):] in EXTRA_FIELDS


def test_own_line_counts_the_running_command(raw):
    # "*2\r\n$6\r\nclient\r\n$4\r\ninfo\r\n" is 26 bytes; its arguments 10.
    f = parse_line(as_text(raw.call("CLIENT", "INFO")).rstrip("\n"))
    assert (f["qbuf"], f["argv-mem"], f["multi"], f["multi-mem"]) == ("26", "10", "-1", "0")
    assert (f["obl"], f["oll"], f["omem"], f["events"]) == ("0", "0", "0", "r")
    assert f["cmd"] == "client|info" and f["flags"] == "N"
    cid = client_id(raw)
    req = encode("CLIENT", "LIST", "ID", cid, "123456")
    raw.send(req)
    f = parse_line(as_text(raw.read()).rstrip("\n"))
    assert f["qbuf"] == str(len(req))
    assert f["argv-mem"] == str(len("client") + len("list") + len("id") + len(str(cid)) + 6)
    assert f["cmd"] == "client|list"


def test_multi_mem_grows_with_the_queue(raw, r):
    cid = client_id(raw)
    assert raw.call("MULTI") == "OK"
    f = client_line(r, cid)
    assert (f["multi"], f["multi-mem"], f["flags"]) == ("0", "0", "x")
    assert raw.call("SET", "k", "v") == "QUEUED"
    # Redis's measure: each queued argument's bytes plus one pointer (8 bytes) per argument.
    f = client_line(r, cid)
    assert (f["multi"], f["multi-mem"]) == ("1", str(5 + 3 * 8))
    assert raw.call("SET", "k2", "v" * 81) == "QUEUED"
    f = client_line(r, cid)
    assert (f["multi"], f["multi-mem"]) == ("2", str(29 + 86 + 3 * 8))
    assert int(f["tot-mem"]) > 0
    assert raw.call("EXEC") == ["OK", "OK"]
    f = client_line(r, cid)
    assert (f["multi"], f["multi-mem"], f["flags"]) == ("-1", "0", "N")


def test_partly_received_command(raw, r):
    cid = client_id(raw)
    raw.send(b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$5\r\nab")
    # Parsed so far: SET and k (4 bytes of arguments); 2 bytes of the third wait.
    wait_until(lambda: client_line(r, cid)["argv-mem"] == "4", what="partial command parsed")
    f = client_line(r, cid)
    assert (f["qbuf"], f["argv-mem"], f["cmd"]) == ("2", "4", "client|id")
    raw.send(b"cde\r\n")
    assert raw.read() == "OK"
    f = client_line(r, cid)
    assert (f["qbuf"], f["argv-mem"], f["cmd"]) == ("0", "0", "set")
    assert r.get("k") == "abcde"


def test_blocked_client_keeps_its_arguments(raw, r):
    cid = client_id(raw)
    raw.send(encode("BLPOP", "somelist", "0"))
    wait_until(lambda: "b" in client_line(r, cid)["flags"], what="client blocked")
    f = client_line(r, cid)
    assert (f["flags"], f["cmd"], f["argv-mem"], f["qbuf"]) == ("b", "blpop", "14", "0")
    r.rpush("somelist", "x")
    assert raw.read() == [b"somelist", b"x"]
    f = client_line(r, cid)
    assert (f["flags"], f["argv-mem"]) == ("N", "0")


def test_paused_client_shows_as_blocked(raw, r):
    cid = client_id(raw)
    assert r.execute_command("CLIENT", "PAUSE", 20000, "WRITE") == "OK"
    try:
        raw.send(encode("SET", "k", "v"))
        wait_until(lambda: client_line(r, cid)["flags"] == "b", what="client held")
        f = client_line(r, cid)
        assert (f["cmd"], f["argv-mem"]) == ("set", "5")
    finally:
        r.execute_command("CLIENT", "UNPAUSE")
    assert raw.read() == "OK"
    assert client_line(r, cid)["argv-mem"] == "0"


def test_dirty_watch_flag(raw, r):
    cid = client_id(raw)
    assert raw.call("WATCH", "a") == "OK"
    assert client_line(r, cid)["flags"] == "N"
    r.set("a", 1)
    assert client_line(r, cid)["flags"] == "d"
    assert raw.call("MULTI") == "OK"
    assert client_line(r, cid)["flags"] == "xd"
    assert raw.call("EXEC") is None
    assert client_line(r, cid)["flags"] == "N"


def test_subscriber_that_stops_reading(server, r):
    r.config_set("client-output-buffer-limit", "pubsub 0 0 0")
    # A small receive buffer, set before connecting (the window it implies stays at least one
    # segment, so that reading later reopens it at once).
    sub = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sub.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
    sub.connect((server.host, server.port))
    try:
        sub.sendall(encode("CLIENT", "ID") + encode("SUBSCRIBE", "ch"))
        cid = None
        data = b""
        while cid is None or not data.endswith(b":1\r\n") or data.count(b"\r\n") < 7:
            data += sub.recv(4096)
            if cid is None and b"\r\n" in data:
                cid = int(data[1:data.index(b"\r\n")])
        payload = "x" * 65536
        # Publish until the server holds a few MB it could not write.
        for _ in range(200):
            r.publish("ch", payload)
            f = client_line(r, cid)
            if int(f["omem"]) > 2 * 1024 * 1024:
                break
        f = client_line(r, cid)
        assert int(f["omem"]) > 2 * 1024 * 1024
        assert int(f["oll"]) > 0
        assert f["events"] == "rw"
        assert f["flags"] == "P" and f["sub"] == "1"
        assert int(f["tot-mem"]) > int(f["omem"])
        # Read it all: the output drains.
        sub.setblocking(False)

        def drained():
            try:
                while sub.recv(1 << 20):
                    pass
            except BlockingIOError:
                pass
            g = client_line(r, cid)
            return g["omem"] == "0" and g["oll"] == "0" and g["events"] == "r"

        wait_until(drained, timeout=20, what="output drained")
    finally:
        sub.close()
        r.config_set("client-output-buffer-limit", "pubsub 32mb 8mb 60")


def test_a_thousand_clients(server, r):
    conns = []
    try:
        for _ in range(1000):
            conns.append(socket.create_connection((server.host, server.port)))
        for c in conns:  # every connection has been accepted and registered
            c.sendall(encode("PING"))
        for c in conns:
            assert c.recv(64) == b"+PONG\r\n"
        lines = r.execute_command("CLIENT", "LIST").splitlines()
        assert len(lines) >= 1001
        for line in lines:
            keys = [part.partition("=")[0] for part in line.split(" ")]
            assert keys[:len(REDIS_FIELDS)] == REDIS_FIELDS
            f = parse_line(line)
            assert int(f["tot-mem"]) > 0 and int(f["qbuf"]) >= 0
        pinged = [parse_line(line) for line in lines if "cmd=ping " in line]
        assert len(pinged) >= 1000
        assert all(f["argv-mem"] == "0" and f["omem"] == "0" for f in pinged)
    finally:
        for c in conns:
            c.close()
