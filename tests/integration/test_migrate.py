"""MIGRATE: keys moved (or copied) to another server with their TTLs, every option, Redis
7.0's replies and error texts, key positions (COMMAND GETKEYS), and hostile targets (down,
silent, garbage, endless or 1 GB replies) that must cost a bounded wait and bounded memory.

Targets: a redis-server 7.0 (requirepass + an ACL user) and a second dashkv (requirepass),
both started for this module; fake targets are Python socket servers. The source is the
server under test (dashkv --threads 1/2, or redis-server with DASHKV_TEST_TARGET=redis, which
checks every expectation against Redis); a redis-server source also migrates into dashkv, and
the error replies of both sources are compared call by call.
"""

import socket
import threading
import time

import pytest
import redis

from conftest import TARGET, Server
from resp_client import Error, RawClient

PW = "pw"
TARGET_ERR = "ERR Target instance replied with error: "
IOERR_CONNECT = "IOERR error or timeout connecting to the client"
IOERR_WRITE = "IOERR error or timeout writing to target instance"
IOERR_READ = "IOERR error or timeout reading to target instance"
KEYS_NEED_EMPTY = ("When using MIGRATE KEYS option, the key argument must be set to the "
                   "empty string")
BUSYKEY = "BUSYKEY Target key name already exists."
NOAUTH = "NOAUTH Authentication required."
WRONGPASS = "WRONGPASS invalid username-password pair or user is disabled."


def _start(kind, threads, tmp_path_factory, password=None):
    """Starts a server; sets `password` after start (the start-up check PINGs without AUTH)."""
    srv = Server(kind, threads, tmp_path_factory.mktemp("migrate-" + kind))
    srv.start()
    if password:
        c = redis.Redis(host=srv.host, port=srv.port)
        c.config_set("requirepass", password)
        c.close()
    return srv


@pytest.fixture(scope="module")
def redis_target(tmp_path_factory):
    """redis-server 7.0 with requirepass pw and an ACL user alice (password apw)."""
    srv = _start("redis", 1, tmp_path_factory, PW)
    c = redis.Redis(host=srv.host, port=srv.port, password=PW)
    c.execute_command("ACL", "SETUSER", "alice", "on", ">apw", "~*", "&*", "+@all")
    c.close()
    yield srv
    srv.stop()


@pytest.fixture(scope="module")
def dashkv_target(tmp_path_factory):
    """A second dashkv (--threads 2, requirepass pw)."""
    srv = _start("dashkv", 2, tmp_path_factory, PW)
    yield srv
    srv.stop()


@pytest.fixture(scope="module")
def redis_source(tmp_path_factory):
    """A redis-server 7.0 without password: a reference source."""
    srv = _start("redis", 1, tmp_path_factory)
    yield srv
    srv.stop()


TARGET_KINDS = ["redis"] if TARGET == "redis" else ["redis", "dashkv"]


@pytest.fixture(params=TARGET_KINDS)
def tgt(request):
    """(server, client) of a flushed password-protected target."""
    srv = request.getfixturevalue(request.param + "_target")
    c = redis.Redis(host=srv.host, port=srv.port, password=PW, decode_responses=True,
                    socket_timeout=20)
    c.flushall()
    yield srv, c
    c.close()


def call(c, *args):
    """Runs a command on a fresh raw connection with the settings of the redis-py client `c`
    (password, database); returns the reply with exact texts: Simple("OK"), or the Error's
    full text ("ERR ...", "IOERR ...")."""
    kw = c.connection_pool.connection_kwargs
    raw = RawClient(kw["host"], kw["port"], timeout=20)
    try:
        if kw.get("password"):
            assert raw.call("AUTH", kw["password"]) == "OK"
        if kw.get("db"):
            assert raw.call("SELECT", kw["db"]) == "OK"
        return raw.call(*args)
    finally:
        raw.close()


def err(text):
    return Error(text)


def migrate(c, srv, key, db=0, timeout=5000, *opts):
    return call(c, "MIGRATE", srv.host, fresh_port(srv.port), key, db, timeout, *opts)


def target_error(srv, *cmd):
    """The error the target itself answers to `cmd` after AUTH (unauthenticated for an AUTH
    command), as MIGRATE forwards it."""
    raw = srv.raw()
    try:
        if cmd[0] != "AUTH":
            assert raw.call("AUTH", PW) == "OK"
        reply = raw.call(*cmd)
    finally:
        raw.close()
    assert isinstance(reply, Error), reply
    return err(TARGET_ERR + reply)


_fresh = [0]


def fresh_port(port):
    """`port` spelled anew each time ("<port>xx..."; Redis reads it with atoi): Redis caches
    its connection to a target by host and port text, and a cached connection stays
    authenticated, so a comparison with Redis needs a new spelling per call."""
    _fresh[0] += 1
    return "%d%s" % (port, "x" * _fresh[0])


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rss_kb(srv):
    with open("/proc/%d/status" % srv.proc.pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


class FakeTarget:
    """A TCP server on 127.0.0.1 whose connections run `handler(conn)` in threads."""

    def __init__(self, handler):
        self.handler = handler
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.host, self.port = self.sock.getsockname()
        self.conns = []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    def _accept(self):
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.conns.append(conn)
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn):
        try:
            self.handler(conn, self)
        except OSError:
            pass

    def close(self):
        self.stop.set()
        self.sock.close()
        for c in self.conns:
            try:
                c.close()
            except OSError:
                pass


def read_commands(conn, n):
    """Reads `n` RESP commands from `conn`; returns them as lists of bytes."""
    buf = b""
    cmds = []

    def need(k):
        nonlocal buf
        while len(buf) < k:
            chunk = conn.recv(65536)
            if not chunk:
                raise OSError("closed")
            buf += chunk

    pos = 0
    while len(cmds) < n:
        def line():
            nonlocal pos
            while b"\r\n" not in buf[pos:]:
                need(len(buf) + 1)
            end = buf.index(b"\r\n", pos)
            out = buf[pos:end]
            pos = end + 2
            return out
        count = int(line()[1:])
        args = []
        for _ in range(count):
            size = int(line()[1:])
            need(pos + size + 2)
            args.append(buf[pos:pos + size])
            pos += size + 2
        cmds.append(args)
    return cmds


@pytest.fixture
def fake():
    made = []

    def make(handler):
        f = FakeTarget(handler)
        made.append(f)
        return f

    yield make
    for f in made:
        f.close()


# --- moving keys ------------------------------------------------------------------------


def test_moves_key_with_its_ttl(r, tgt):
    srv, t = tgt
    r.set("k", "v")
    r.pexpire("k", 100000)
    assert migrate(r, srv, "k", 0, 5000, "AUTH", PW) == "OK"
    assert r.exists("k") == 0
    assert t.get("k") == "v"
    assert 90000 < t.pttl("k") <= 100000
    r.set("p", "persistent")
    assert migrate(r, srv, "p", 0, 5000, "AUTH", PW) == "OK"
    assert t.get("p") == "persistent" and t.pttl("p") == -1


@pytest.mark.needs_lists
def test_every_type_arrives_intact(r, tgt):
    srv, t = tgt
    r.set("s", "x" * 1000)
    r.set("i", 12345)
    r.rpush("l", *["e%d" % i for i in range(300)])
    r.hset("h", mapping={"f%d" % i: i for i in range(200)})
    r.sadd("set", *range(100))
    r.sadd("sset", "a", "b")
    r.zadd("z", {"m%d" % i: i / 3 for i in range(150)})
    keys = ["s", "i", "l", "h", "set", "sset", "z"]
    assert migrate(r, srv, "", 0, 5000, "AUTH", PW, "KEYS", *keys) == "OK"
    assert r.exists(*keys) == 0
    assert t.get("s") == "x" * 1000 and t.get("i") == "12345"
    assert t.lrange("l", 0, -1) == ["e%d" % i for i in range(300)]
    assert t.hgetall("h") == {"f%d" % i: str(i) for i in range(200)}
    assert t.smembers("set") == {str(i) for i in range(100)}
    assert t.zrange("z", 0, -1, withscores=True) == [("m%d" % i, i / 3) for i in range(150)]


def test_copy_keeps_the_source(r, tgt):
    srv, t = tgt
    r.set("k", "v")
    assert migrate(r, srv, "k", 0, 5000, "COPY", "AUTH", PW) == "OK"
    assert r.get("k") == "v" and t.get("k") == "v"


def test_busykey_without_replace(r, tgt):
    srv, t = tgt
    r.set("k", "new")
    t.set("k", "old")
    assert migrate(r, srv, "k", 0, 5000, "AUTH", PW) == err(TARGET_ERR + BUSYKEY)
    assert r.get("k") == "new" and t.get("k") == "old"
    assert migrate(r, srv, "k", 0, 5000, "REPLACE", "AUTH", PW) == "OK"
    assert r.exists("k") == 0 and t.get("k") == "new"
    r.set("k", "newer")
    assert migrate(r, srv, "k", 0, 5000, "copy", "replace", "auth", PW) == "OK"
    assert r.get("k") == "newer" and t.get("k") == "newer"


def test_nokey(r, tgt):
    srv, _ = tgt
    assert migrate(r, srv, "missing", 0, 5000, "AUTH", PW) == "NOKEY"
    assert migrate(r, srv, "", 0, 5000, "KEYS", "a", "b") == "NOKEY"
    assert migrate(r, srv, "", 0, 5000, "KEYS") == "NOKEY"
    # NOKEY comes before any connection: a dead target does not matter.
    assert call(r, "MIGRATE", "127.0.0.1", free_port(), "missing", 0, 100) == "NOKEY"


def test_keys_form_across_shards(r, tgt):
    srv, t = tgt
    names = ["key:%d" % i for i in range(60)]
    for n in names:
        r.set(n, n.upper())
    r.expire("key:7", 1000)
    assert migrate(r, srv, "", 3, 5000, "AUTH", PW, "KEYS", *names, "nosuch") == "OK"
    assert r.exists(*names) == 0
    t3 = redis.Redis(host=srv.host, port=srv.port, password=PW, db=3, decode_responses=True)
    assert t3.mget(names) == [n.upper() for n in names]
    assert 990 < t3.ttl("key:7") <= 1000
    assert t.dbsize() == 0
    t3.close()


def test_keys_form_partial_failure(r, tgt):
    """Redis deletes the keys the target accepted and reports the first error."""
    srv, t = tgt
    r.mset({"a": "1", "b": "2", "c": "3"})
    t.set("b", "taken")
    assert migrate(r, srv, "", 0, 5000, "AUTH", PW, "KEYS", "a", "b", "c") == err(
        TARGET_ERR + BUSYKEY)
    assert r.mget("a", "b", "c") == [None, "2", None]
    assert t.mget("a", "b", "c") == ["1", "taken", "3"]


def test_duplicate_keys(r, tgt):
    srv, t = tgt
    r.set("a", "1")
    assert migrate(r, srv, "", 0, 5000, "AUTH", PW, "KEYS", "a", "a") == err(
        TARGET_ERR + BUSYKEY)
    assert r.exists("a") == 0 and t.get("a") == "1"


# --- authentication and databases --------------------------------------------------------


def test_auth(r, tgt):
    srv, t = tgt
    r.set("k", "v")
    assert migrate(r, srv, "k") == err(TARGET_ERR + NOAUTH)
    assert migrate(r, srv, "k", 0, 5000, "AUTH", "wrong") == target_error(srv, "AUTH", "wrong")
    assert migrate(r, srv, "k", 0, 5000, "AUTH", "wrong") == err(TARGET_ERR + WRONGPASS)
    assert r.get("k") == "v"
    assert migrate(r, srv, "k", 0, 5000, "AUTH2", "default", PW) == "OK"
    assert t.get("k") == "v"
    # The last AUTH/AUTH2 given wins.
    r.set("k2", "v2")
    assert migrate(r, srv, "k2", 0, 5000, "AUTH", "x", "AUTH", PW) == "OK"
    r.set("k3", "v3")
    assert migrate(r, srv, "k3", 0, 5000, "AUTH", "x", "AUTH2", "default", PW) == "OK"


def test_auth2_acl_user(r, redis_target):
    t = redis.Redis(host=redis_target.host, port=redis_target.port, password=PW,
                    decode_responses=True)
    t.flushall()
    r.set("k", "v")
    assert migrate(r, redis_target, "k", 0, 5000, "AUTH2", "alice", "bad") == err(
        TARGET_ERR + WRONGPASS)
    assert migrate(r, redis_target, "k", 0, 5000, "AUTH2", "nobody", "apw") == err(
        TARGET_ERR + WRONGPASS)
    assert migrate(r, redis_target, "k", 0, 5000, "AUTH2", "alice", "apw") == "OK"
    assert t.get("k") == "v" and r.exists("k") == 0
    t.close()


def test_destination_db(r, tgt):
    srv, t = tgt
    r.set("k", "v")
    authed = redis.Redis(host=srv.host, port=srv.port, password=PW, decode_responses=True)
    for db in (99, 16, -2, 99999999999):
        assert migrate(r, srv, "k", db, 5000, "AUTH", PW) == target_error(srv, "SELECT", db)
    assert migrate(r, srv, "k", 99, 5000, "AUTH", PW) == err(
        TARGET_ERR + "ERR DB index is out of range")
    assert r.get("k") == "v"
    assert migrate(r, srv, "k", 15, 5000, "AUTH", PW) == "OK"
    authed.select(15)
    assert authed.get("k") == "v"
    # Database -1: no SELECT at all, as Redis's new connection (the key lands in db 0).
    r.set("m", "w")
    assert migrate(r, srv, "m", -1, 5000, "AUTH", PW) == "OK"
    assert t.get("m") == "w"
    authed.close()


# --- argument errors and key positions ------------------------------------------------------

ARG_CASES = [
    (("k", 0, 100, "foo"), "ERR syntax error"),
    (("k", 0, 100, "AUTH"), "ERR syntax error"),
    (("k", 0, 100, "AUTH2", "u"), "ERR syntax error"),
    (("k", 0, 100, "COPY", "REPLACE", "bogus"), "ERR syntax error"),
    (("k", 0, 100, "KEYS", "a"), "ERR " + KEYS_NEED_EMPTY),
    (("k", 0, 100, "keys"), "ERR " + KEYS_NEED_EMPTY),
    (("k", 0, "abc"), "ERR value is not an integer or out of range"),
    (("k", "abc", 100), "ERR value is not an integer or out of range"),
    (("k", 0, "99999999999999999999"), "ERR value is not an integer or out of range"),
    (("k", "1.5", 100), "ERR value is not an integer or out of range"),
    (("k", "x", "y", "foo"), "ERR syntax error"),  # options are checked first
]


@pytest.mark.parametrize("args,text", ARG_CASES)
def test_argument_errors(r, args, text):
    r.set("k", "v")
    reply = call(r, "MIGRATE", "127.0.0.1", free_port(), *args)
    assert reply == err(text)
    assert r.get("k") == "v"


def test_arity(r):
    assert call(r, "MIGRATE", "127.0.0.1", 1, "k", 0) == err(
        "ERR wrong number of arguments for 'migrate' command")


GETKEYS_CASES = [
    (("h", "1", "k", "0", "100"), ["k"]),
    (("h", "1", "", "0", "100"), [""]),
    (("h", "1", "", "0", "100", "KEYS", "a", "b"), ["a", "b"]),
    (("h", "1", "", "0", "100", "keys"), [""]),
    (("h", "1", "", "0", "100", "COPY", "keys", "a"), ["a"]),
    (("h", "1", "", "0", "100", "foo", "keys", "a"), ["a"]),
    (("h", "1", "", "0", "100", "AUTH", "keys", "a", "b"), [""]),
    (("h", "1", "", "0", "100", "AUTH2", "u", "keys", "a"), [""]),
    (("h", "1", "", "0", "100", "keys", "keys", "a"), ["keys", "a"]),
    (("h", "1", "", "0", "100", "keys", "a", "a"), ["a", "a"]),
    (("h", "1", "x", "0", "100", "keys", "a", "b"), None),
    # The KEYS key spec searches backwards from the last argument but one: a final KEYS is not
    # found, and the key argument is the key.
    (("h", "1", "k", "0", "100", "KEYS"), ["k"]),
    (("h", "1", "k", "0", "100", "AUTH", "KEYS"), ["k"]),
    (("h", "1", "", "0", "100", "AUTH2", "KEYS", "x", "KEYS", "y"), ["y"]),
    (("h", "1", "", "0", "100", "AUTH", "p"), [""]),
]


@pytest.mark.parametrize("args,keys", GETKEYS_CASES)
def test_command_getkeys(server, args, keys):
    c = server.raw()
    try:
        reply = c.call("COMMAND", "GETKEYS", "MIGRATE", *args)
    finally:
        c.close()
    if keys is None:
        assert reply == "ERR Invalid arguments specified for command"
    else:
        assert reply == [k.encode() for k in keys]


def test_command_info(server):
    """Redis 7.0.15's entry, element by element (RESP2: the order of flags too); the RESP3
    form is compared with a live redis-server in test_command_meta.py."""
    c = server.raw()
    try:
        reply = c.call("COMMAND", "INFO", "migrate")
    finally:
        c.close()
    rw = ["RW", "access", "delete"]
    assert reply == [[
        b"migrate", -6, ["write", "movablekeys"], 3, 3, 1,
        ["@keyspace", "@write", "@slow", "@dangerous"], [b"nondeterministic_output"],
        [[b"flags", rw,
          b"begin_search", [b"type", b"index", b"spec", [b"index", 3]],
          b"find_keys", [b"type", b"range", b"spec",
                         [b"lastkey", 0, b"keystep", 1, b"limit", 0]]],
         [b"flags", rw + ["incomplete"],
          b"begin_search", [b"type", b"keyword", b"spec",
                            [b"keyword", b"KEYS", b"startfrom", -2]],
          b"find_keys", [b"type", b"range", b"spec",
                         [b"lastkey", -1, b"keystep", 1, b"limit", 0]]]],
        []]]


# --- unreachable and hostile targets ------------------------------------------------------


def test_target_down(r):
    r.set("k", "v")
    assert call(r, "MIGRATE", "127.0.0.1", free_port(), "k", 0, 1000) == err(IOERR_WRITE)
    assert call(r, "MIGRATE", "127.0.0.1", 0, "k", 0, 1000) == err(IOERR_WRITE)
    assert r.get("k") == "v"


def test_unresolvable_host(r):
    r.set("k", "v")
    assert call(r, "MIGRATE", "no-such-host.invalid", 6379, "k", 0, 1000) == err(IOERR_CONNECT)
    assert r.get("k") == "v"


def test_host_name_and_sloppy_port(r, redis_target):
    """Redis resolves names and reads the port with atoi ("<port>x" is <port>)."""
    t = redis.Redis(host=redis_target.host, port=redis_target.port, password=PW,
                    decode_responses=True)
    t.flushall()
    r.set("k", "v")
    assert call(r, "MIGRATE", "localhost", "%dx" % redis_target.port, "k", 0, 5000, "AUTH",
                PW) == "OK"
    assert t.get("k") == "v"
    t.close()


def _silent(conn, _fake):
    while conn.recv(65536):
        pass


def test_silent_target_times_out_without_blocking_the_server(server, r, fake):
    f = fake(_silent)
    r.set("k", "v")
    other = redis.Redis(host=server.host, port=server.port, decode_responses=True)
    result = {}

    def run():
        t0 = time.monotonic()
        result["reply"] = call(r, "MIGRATE", f.host, f.port, "k", 0, 700)
        result["elapsed"] = time.monotonic() - t0

    th = threading.Thread(target=run)
    th.start()
    time.sleep(0.1)
    # Meanwhile the server answers other clients (also on a single thread) and the key is free.
    if not server.is_redis:
        t0 = time.monotonic()
        assert other.set("k", "v") and other.ping()
        assert time.monotonic() - t0 < 0.5
    th.join(10)
    assert result["reply"] == err(IOERR_READ)
    assert 0.6 <= result["elapsed"] < 5
    assert r.get("k") == "v"
    other.close()


def test_zero_timeout_means_one_second(r, fake):
    f = fake(_silent)
    r.set("k", "v")
    t0 = time.monotonic()
    assert call(r, "MIGRATE", f.host, f.port, "k", 0, 0) == err(IOERR_READ)
    assert 0.9 <= time.monotonic() - t0 < 5
    t0 = time.monotonic()
    assert call(r, "MIGRATE", f.host, f.port, "k", 0, -5) == err(IOERR_READ)
    assert 0.9 <= time.monotonic() - t0 < 5


def test_target_closing_at_once(r, fake):
    f = fake(lambda conn, _f: conn.close())
    r.set("k", "v")
    reply = call(r, "MIGRATE", f.host, f.port, "k", 0, 1000)
    assert reply in (err(IOERR_READ), err(IOERR_WRITE))
    assert r.get("k") == "v"


def _replies(payload, then=None):
    def handler(conn, _fake):
        read_commands(conn, 2)  # SELECT, RESTORE
        conn.sendall(payload)
        if then:
            then(conn)
        else:
            _silent(conn, _fake)
    return handler


@pytest.mark.dashkv_only
def test_garbage_reply_is_a_read_error(server, r, fake):
    """Redis takes any line not starting with '-' as a success (and deletes the key); dashkv
    reads RESP and refuses what is not, keeping the key."""
    f = fake(_replies(b"+OK\r\nHTTP/1.1 400 Bad Request\r\n\r\n"))
    r.set("k", "v")
    assert call(r, "MIGRATE", f.host, f.port, "k", 0, 1000) == err(IOERR_READ)
    assert r.get("k") == "v"
    server.assert_alive()


@pytest.mark.dashkv_only
def test_huge_declared_bulk_is_refused_at_once(server, r, fake):
    f = fake(_replies(b"+OK\r\n$1073741824\r\n" + b"x" * 65536))
    r.set("k", "v")
    before = rss_kb(server)
    t0 = time.monotonic()
    assert call(r, "MIGRATE", f.host, f.port, "k", 0, 5000) == err(IOERR_READ)
    assert time.monotonic() - t0 < 4  # refused on the header, not at the timeout
    assert rss_kb(server) - before < 64 * 1024
    assert r.get("k") == "v"
    server.assert_alive()


def _endless(conn):
    chunk = b"x" * 65536
    for _ in range(2000):  # 128 MiB at most
        conn.sendall(chunk)


@pytest.mark.dashkv_only
def test_endless_reply_is_cut(server, r, fake):
    f = fake(_replies(b"+OK\r\n-ERR ", then=_endless))
    r.set("k", "v")
    before = rss_kb(server)
    assert call(r, "MIGRATE", f.host, f.port, "k", 0, 5000) == err(IOERR_READ)
    assert rss_kb(server) - before < 64 * 1024
    assert r.get("k") == "v"
    server.assert_alive()


def test_endless_error_line_from_target(server, r, fake):
    """An error reply within the limit is forwarded whole."""
    text = "ERR " + "e" * 500
    f = fake(_replies(b"+OK\r\n-" + text.encode() + b"\r\n"))
    r.set("k", "v")
    assert call(r, "MIGRATE", f.host, f.port, "k", 0, 2000) == err(TARGET_ERR + text)
    assert r.get("k") == "v"


def test_what_the_target_receives(r, fake):
    got = {}

    def handler(conn, _fake):
        got["cmds"] = read_commands(conn, 4)
        conn.sendall(b"+OK\r\n+OK\r\n+OK\r\n+OK\r\n")
        _silent(conn, _fake)

    f = fake(handler)
    r.set("a", "1")
    r.pexpire("a", 50000)
    r.set("b", "2")
    assert call(r, "MIGRATE", f.host, f.port, "", 7, 2000, "REPLACE", "AUTH2", "u", "p",
                "KEYS", "a", "b") == "OK"
    auth, select, ra, rb_ = got["cmds"]
    assert auth == [b"AUTH", b"u", b"p"]
    assert select == [b"SELECT", b"7"]
    assert ra[0] == b"RESTORE" and ra[1] == b"a" and 45000 < int(ra[2]) <= 50000
    assert ra[4] == b"REPLACE" and len(ra) == 5
    assert rb_[:3] == [b"RESTORE", b"b", b"0"] and len(rb_) == 5
    assert r.exists("a", "b") == 0


@pytest.mark.dashkv_only
def test_key_changed_during_the_transfer_is_kept(server, r, fake):
    got = threading.Event()
    go = threading.Event()

    def handler(conn, _fake):
        read_commands(conn, 2)
        got.set()
        go.wait(10)
        conn.sendall(b"+OK\r\n+OK\r\n")
        _silent(conn, _fake)

    f = fake(handler)
    r.set("k", "old")
    r.set("j", "same")
    result = {}
    th = threading.Thread(
        target=lambda: result.setdefault("reply", call(r, "MIGRATE", f.host, f.port, "k", 0,
                                                       5000)))
    th.start()
    assert got.wait(10)
    other = redis.Redis(host=server.host, port=server.port, decode_responses=True)
    other.set("k", "new")  # not blocked: MIGRATE holds no lock while it waits
    go.set()
    th.join(10)
    assert result["reply"] == "OK"
    assert other.get("k") == "new"
    other.close()


def test_inside_multi(r, tgt):
    srv, t = tgt
    r.mset({"a": "1", "b": "2"})
    p = r.pipeline(transaction=True)
    p.execute_command("MIGRATE", srv.host, srv.port, "", 0, 5000, "AUTH", PW, "KEYS", "a", "b")
    p.get("a")
    res = p.execute()
    assert res[0] == "OK" and res[1] is None
    assert t.mget("a", "b") == ["1", "2"]


def test_keyspace_event_del(r, tgt):
    srv, _ = tgt
    r.config_set("notify-keyspace-events", "KEg")
    sub = r.pubsub()
    sub.psubscribe("__keyspace@0__:k")
    assert sub.get_message(timeout=5)["type"] == "psubscribe"
    r.set("k", "v")
    assert migrate(r, srv, "k", 0, 5000, "AUTH", PW) == "OK"
    events = []
    deadline = time.monotonic() + 5
    while "del" not in events and time.monotonic() < deadline:
        m = sub.get_message(timeout=1)
        if m and m["type"] == "pmessage":
            events.append(m["data"])
    assert "del" in events
    sub.close()
    r.config_set("notify-keyspace-events", "")


# --- Redis as the source, and side-by-side error texts ---------------------------------------


def test_redis_source_into_dashkv(redis_source, dashkv_target):
    if TARGET == "redis":
        pytest.skip("needs dashkv")
    s = redis.Redis(host=redis_source.host, port=redis_source.port, decode_responses=True)
    t = redis.Redis(host=dashkv_target.host, port=dashkv_target.port, password=PW,
                    decode_responses=True)
    s.flushall()
    t.flushall()
    s.set("s", "v")
    s.pexpire("s", 60000)
    s.hset("h", mapping={"a": "1", "b": "2"})
    s.zadd("z", {"x": 1.5})
    s.rpush("l", "1", "2", "3")
    s.sadd("set", "m")
    port = fresh_port(dashkv_target.port)
    assert call(s, "MIGRATE", "127.0.0.1", port, "", 2, 5000, "AUTH", PW, "KEYS", "s", "h",
                "z", "l", "set") == "OK"
    t.select(2)
    assert t.get("s") == "v" and 50000 < t.pttl("s") <= 60000
    assert t.hgetall("h") == {"a": "1", "b": "2"}
    assert t.zrange("z", 0, -1, withscores=True) == [("x", 1.5)]
    assert t.lrange("l", 0, -1) == ["1", "2", "3"] and t.smembers("set") == {"m"}
    s.set("s", "again")
    assert migrate(s, dashkv_target, "s", 2, 5000, "AUTH", PW) == err(TARGET_ERR + BUSYKEY)
    assert call(s, "MIGRATE", "127.0.0.1", fresh_port(dashkv_target.port), "s", 2,
                5000) == err(TARGET_ERR + NOAUTH)
    s.close()
    t.close()


def test_replies_match_redis(r, redis_source, tgt, fake):
    """The same calls from a redis-server source and from the server under test give the same
    replies and leave the same keys behind."""
    srv, t = tgt
    s = redis.Redis(host=redis_source.host, port=redis_source.port, decode_responses=True)
    silent = fake(_silent)
    down = free_port()
    calls = [
        ("127.0.0.1", srv.port, "k", 0, 5000),
        ("127.0.0.1", srv.port, "k", 0, 5000, "AUTH", "bad"),
        ("127.0.0.1", srv.port, "k", 0, 5000, "AUTH2", "default", "bad"),
        ("127.0.0.1", srv.port, "k", 77, 5000, "AUTH", PW),
        ("127.0.0.1", srv.port, "nokey", 0, 5000, "AUTH", PW),
        ("127.0.0.1", srv.port, "k", 0, 5000, "AUTH", PW, "COPY"),
        ("127.0.0.1", srv.port, "k", 0, 5000, "AUTH", PW),
        ("127.0.0.1", srv.port, "k", 0, 5000, "AUTH", PW, "REPLACE"),
        ("127.0.0.1", srv.port, "", 0, 5000, "AUTH", PW, "KEYS", "k", "k2", "gone"),
        ("127.0.0.1", srv.port, "k", 0, 5000, "KEYS", "k2"),
        ("127.0.0.1", srv.port, "k", 0, "soon"),
        ("127.0.0.1", srv.port, "k", "zero", 10),
        ("127.0.0.1", srv.port, "k", 0, 10, "AUTH"),
        ("127.0.0.1", down, "k", 0, 300),
        ("no-such-host.invalid", 1, "k", 0, 300),
        ("127.0.0.1", silent.port, "k", 0, 300),
    ]
    for args in calls:
        replies = []
        for c in (s, r):
            t.flushall()
            t.set("k2", "there")
            c.flushall()
            c.set("k", "v")
            c.set("k2", "w")
            port = fresh_port(args[1]) if isinstance(args[1], int) else args[1]
            reply = call(c, "MIGRATE", args[0], port, *args[2:])
            replies.append((type(reply).__name__, reply, c.exists("k"), c.exists("k2"),
                            t.get("k")))
        assert replies[0] == replies[1], args
    s.close()
