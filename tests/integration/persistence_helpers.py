"""Shared helpers for the snapshot (RDB) tests: server arguments per server kind, a seeded
dataset of every type and encoding Redis 7.0 writes (no streams: dashkv has none yet), a
portable capture of a server's whole dataset and a readable comparison of two captures,
redis-server started on a given RDB file, redis-check-rdb, and BGSAVE bookkeeping.

See /work/shared/PERSISTENCE.md §4 (round-trip protocol) and §6 (point-in-time tests).
The capture does not use DEBUG DIGEST (dashkv may not have it): per key it takes TYPE, a
canonical read (GET, LRANGE, sorted SMEMBERS, sorted HGETALL, ZRANGE WITHSCORES) and PTTL,
hashes the content, and keeps the absolute expiry, which is compared with a tolerance.
"""

import collections
import hashlib
import os
import pathlib
import re
import shutil
import signal
import subprocess
import time

import redis

from conftest import Server
from resp_client import RawClient

# Seconds a redis-server may take to load a file, a BGSAVE may take to finish.
LOAD_TIMEOUT = 60.0
BGSAVE_TIMEOUT = 60.0
# Absolute expiry times of two captures (taken on different servers, at different moments) may
# differ by the time between reading PTTL and reading the local clock: a few milliseconds.
EXPIRE_TOLERANCE_MS = 1500

MISCONF = ("MISCONF Redis is configured to save RDB snapshots, but it's currently unable to "
           "persist to disk. Commands that may modify the data set are disabled, because this "
           "instance is configured to report errors during writes if RDB snapshotting fails "
           "(stop-writes-on-bgsave-error option). Please check the Redis logs for details "
           "about the RDB error.")
BGSAVE_STARTED = "Background saving started"
BGSAVE_SCHEDULED = "Background saving scheduled"
ERR_BGSAVE_IN_PROGRESS = "ERR Background save already in progress"
ERR_SHUTDOWN = "ERR Errors trying to SHUTDOWN. Check logs."
ERR_PROTECTED_DIR = ("ERR CONFIG SET failed (possibly related to argument 'dir') - can't set "
                     "protected config")

# Redis's default quicklist packed threshold (DEBUG QUICKLIST-PACKED-THRESHOLD).
_PACKED_THRESHOLD_DEFAULT = "1G"


# ---- server arguments ---------------------------------------------------------------------

def _yes_no(v):
    return "yes" if v else "no"


def persistence_args(kind, save=None, rdbcompression=None, rdbchecksum=None, protected=None,
                     dbfilename=None, redis_extra=()):
    """Command-line arguments for a server of `kind` ("dashkv" or "redis"), appended after
    conftest's (which already pass --dir <workdir> and --save ""): `save` a schedule such as
    "3600 1" ("" for none), `rdbcompression`/`rdbchecksum` booleans, `protected` the value of
    enable-protected-configs ("yes"/"no"/"local"), `dbfilename`. `redis_extra` is passed to
    redis-server only (settings dashkv has no flag for, e.g. list-compress-depth)."""
    a = []
    if kind == "redis":
        if save is not None:
            a += ["--save", save]
        if rdbcompression is not None:
            a += ["--rdbcompression", _yes_no(rdbcompression)]
        if rdbchecksum is not None:
            a += ["--rdbchecksum", _yes_no(rdbchecksum)]
        if protected is not None:
            a += ["--enable-protected-configs", protected]
        if dbfilename is not None:
            a += ["--dbfilename", dbfilename]
        return a + list(redis_extra)
    if save is not None:
        a.append("--save=" + save)
    if rdbcompression is not None:
        a.append("--rdbcompression=" + ("true" if rdbcompression else "false"))
    if rdbchecksum is not None:
        a.append("--rdbchecksum=" + ("true" if rdbchecksum else "false"))
    if protected is not None:
        a.append("--enable_protected_configs=" + protected)
    if dbfilename is not None:
        a.append("--dbfilename=" + dbfilename)
    return a


def bclient(srv, db=0, timeout=60):
    """A redis-py client returning bytes, on server `srv` (a conftest.Server)."""
    return redis.Redis(host=srv.host, port=srv.port, db=db, socket_timeout=timeout)


def restart(srv):
    """Starts server `srv` (again) on its directory; returns a bytes client once loaded."""
    if srv.proc is not None and srv.proc.poll() is None:
        srv.stop()
    srv.start()
    c = bclient(srv)
    wait_until_loaded(c)
    return c


def server_log(srv):
    """Everything the server logged: Redis logs to stdout, dashkv to stderr."""
    text = ""
    for name in ("server.stdout", "server.stderr"):
        try:
            text += (srv.workdir / name).read_text(errors="replace")
        except OSError:
            pass
    return text


# ---- the seeded dataset -----------------------------------------------------------------

BINARY_KEY = b"bin\x00\xff\x80\r\nkey"
INT_BOUNDARIES = [0, 1, -1, 127, 128, -128, -129, 32767, 32768, -32768, -32769,
                  2147483647, 2147483648, -2147483648, -2147483649,
                  9223372036854775807, -9223372036854775808, 123456789012]
# Far future: 2100-01-01 in ms.
FAR_FUTURE_MS = 4102444800000
# A value whose raw bytes appear in the file only when rdbcompression is off.
COMPRESSIBLE_MARKER = b"compress-me-please!" * 20


def _rand_bytes(rng, n):
    return rng.getrandbits(8 * n).to_bytes(n, "little") if n else b""


def populate_dataset(c, rng, big=True):
    """Fills the server behind redis-py client `c` (bytes, db 0 selected) with the seeded
    dataset of PERSISTENCE.md §4 item 1 (no streams). `rng` is a random.Random. With `big` the
    1 MB string and the largest containers are included. Uses DEBUG QUICKLIST-PACKED-THRESHOLD
    where the server has it (Redis: plain list nodes). Leaves db 0 selected."""
    kw = c.connection_pool.connection_kwargs
    now_ms = int(time.time() * 1000)
    p = c.pipeline(transaction=False)
    # Strings.
    p.set("s:empty", b"")
    p.set(b"", b"the empty key name")
    for v in INT_BOUNDARIES:
        p.set("s:int:%d" % v, str(v))
    for name, v in [("s:007", b"007"), ("s:plus1", b"+1"), ("s:space1", b" 1"),
                    ("s:float", b"1.5"), ("s:minus0", b"-0"),
                    ("s:binary", b"a\x00b\xff\x00\x01"),
                    ("s:c21", b"abc" * 7), ("s:c21x", b"x" * 21), ("s:c20", b"y" * 20),
                    ("s:compressible", COMPRESSIBLE_MARKER),
                    ("s:rand1k", _rand_bytes(rng, 1024))]:
        p.set(name, v)
    if big:
        p.set("s:1mb", _rand_bytes(rng, 1 << 20))
        p.set("s:1mb-compressible", b"0123456789abcdef" * 65536)
    p.set(BINARY_KEY, b"value\x00\x01\xfe")
    # Lists.
    p.rpush("l:small", b"a", b"b", b"1", b"-5", b"x" * 70, BINARY_KEY, b"")
    p.rpush("l:multinode", *[b"element-%d" % i for i in range(5000)])
    p.rpush("l:ints", *[rng.randrange(-2 ** 63, 2 ** 63) for _ in range(300)])
    p.rpush("l:bigelems", b"y" * 9000, b"z", _rand_bytes(rng, 20000), b"w" * 70000)
    # Sets.
    p.sadd("set:int16", 1, 2, 3, -5, 32767, -32768)
    p.sadd("set:int32", 1, 70000, -70000, 2147483647)
    p.sadd("set:int64", 1, 2 ** 40, -2 ** 62, 9223372036854775807)
    p.sadd("set:manyints", *range(0, 700 * 3, 3))
    p.sadd("set:strings", b"a", b"b", BINARY_KEY, b"")
    p.sadd("set:manystrings", *[b"m%d" % i for i in range(1000)])
    p.sadd("set:mixed", 1, 2, b"three")
    # Sorted sets.
    p.zadd("z:small", {b"a": 1, b"b": 1, b"c": 1, b"inf": float("inf"), b"ninf": float("-inf"),
                       b"negzero": -0.0, b"tiny": 1e-300, b"neg": -2.5, BINARY_KEY: 3,
                       b"": 0.1})
    p.zadd("z:big", {b"m%d" % i: (i // 3) * 0.5 for i in range(200)})
    p.zadd("z:longmember", {b"x" * 100: 1, b"y": 2})
    p.zadd("z:randomscores", {b"r%d" % i: rng.uniform(-1e9, 1e9) for i in range(100)})
    # Hashes.
    p.hset("h:small", mapping={b"f1": b"v1", b"n": b"12345", b"neg": b"-1",
                               b"i64": b"9223372036854775807", b"big": b"123456789012",
                               BINARY_KEY: BINARY_KEY, b"": b""})
    p.hset("h:ints", mapping={b"f%d" % i: rng.randrange(-2 ** 40, 2 ** 40) for i in range(50)})
    p.hset("h:many", mapping={b"f%d" % i: b"v%d" % i for i in range(600)})
    p.hset("h:v65", mapping={b"f": b"v" * 65, b"g": b"w"})
    p.hset("h:v64", mapping={b"f": b"v" * 64, b"g": b"w"})
    # TTLs: in an hour, in the far future, on every type.
    p.set("t:string", b"expiring")
    p.rpush("t:list", b"a", b"b")
    p.sadd("t:set", 1, 2, 3)
    p.zadd("t:zset", {b"a": 1})
    p.hset("t:hash", b"f", b"v")
    for name in ["t:string", "t:list", "t:set", "t:zset", "t:hash"]:
        p.pexpireat(name, now_ms + 3600 * 1000 + rng.randrange(1000))
    p.set("t:far", b"far future")
    p.pexpireat("t:far", FAR_FUTURE_MS)
    p.set(b"t:bin\x00", b"binary name, ttl")
    p.pexpireat(b"t:bin\x00", now_ms + 7200 * 1000)
    p.execute()

    if big:
        # Redis writes an element over the packed threshold as a PLAIN quicklist node.
        try:
            c.execute_command("DEBUG", "QUICKLIST-PACKED-THRESHOLD", "1K")
            try:
                c.rpush("l:plain", b"a", b"p" * 2000, b"b", _rand_bytes(rng, 5000))
            finally:
                c.execute_command("DEBUG", "QUICKLIST-PACKED-THRESHOLD",
                                  _PACKED_THRESHOLD_DEFAULT)
        except redis.ResponseError:
            c.rpush("l:plain", b"a", b"p" * 2000, b"b", _rand_bytes(rng, 5000))

    # Other databases.
    for db, n in [(1, 10), (5, 3), (15, 2)]:
        o = redis.Redis(host=kw["host"], port=kw["port"], db=db, socket_timeout=60)
        try:
            q = o.pipeline(transaction=False)
            for i in range(n):
                q.set(b"db%d:k%d" % (db, i), b"v%d" % i)
            q.rpush(b"db%d:list" % db, 1, 2, 3)
            q.hset(b"db%d:hash" % db, b"f", b"v")
            q.set(b"db%d:ttl" % db, b"x")
            q.pexpireat(b"db%d:ttl" % db, now_ms + 3600 * 1000)
            q.set(b"s:empty", b"same name as in db 0, other value")
            q.execute()
        finally:
            o.close()


# ---- capture and comparison ---------------------------------------------------------------

Entry = collections.namedtuple("Entry", "type digest summary expire_at")


def _canonical_score(s):
    # repr(float) keeps -0.0, inf and -inf apart and does not depend on the server's format.
    return repr(float(s))


def content_digest(t, content):
    """The digest capture() keeps for a key of type `t` ("string", ...) with canonical
    `content` (for a string: its bytes)."""
    return hashlib.sha1(repr((t, content)).encode()).hexdigest()


def _read_batch(c, keys):
    """Returns {key: Entry} for the existing keys among `keys` (db already selected)."""
    p = c.pipeline(transaction=False)
    for k in keys:
        p.type(k)
        p.pttl(k)
    t0 = time.time() * 1000
    res = p.execute()
    t1 = time.time() * 1000
    types = res[0::2]
    pttls = res[1::2]
    p = c.pipeline(transaction=False)
    readers = []
    for k, t in zip(keys, types):
        t = t.decode() if isinstance(t, bytes) else t
        if t == "string":
            p.get(k)
        elif t == "list":
            p.lrange(k, 0, -1)
        elif t == "set":
            p.smembers(k)
        elif t == "hash":
            p.hgetall(k)
        elif t == "zset":
            p.zrange(k, 0, -1, withscores=True, score_cast_func=lambda x: x)
        elif t == "none":
            readers.append((k, t, None))
            continue
        else:
            p.type(k)  # streams and others: type only
        readers.append((k, t, len(readers)))
    values = p.execute() if len(p) else []
    out = {}
    vi = 0
    for (k, t, slot), pttl in zip(readers, pttls):
        if t == "none":
            continue
        v = values[vi]
        vi += 1
        if v is None or (t in ("list", "set", "hash", "zset") and not v):
            continue  # expired or deleted between TYPE and the read: absent
        if t == "set":
            content = sorted(v)
        elif t == "hash":
            content = sorted(v.items())
        elif t == "zset":
            content = [(m, _canonical_score(s)) for m, s in v]
        else:
            content = v
        if t == "string":
            summary = "string len=%d %r" % (len(v), v[:24])
        elif t in ("list", "set", "hash", "zset"):
            summary = "%s len=%d first=%r" % (t, len(content), content[:2])
        else:
            summary = t
        digest = content_digest(t, content)
        expire_at = None if pttl is None or pttl < 0 else int((t0 + t1) / 2) + pttl
        out[k] = Entry(t, digest, summary, expire_at)
    return out


def capture_keys(c, keys):
    """Captures the given keys of the selected db of redis-py client `c` (bytes):
    {key: Entry or None when absent}."""
    keys = [k.encode() if isinstance(k, str) else k for k in keys]
    got = {}
    for i in range(0, len(keys), 500):
        got.update(_read_batch(c, keys[i:i + 500]))
    return {k: got.get(k) for k in keys}


def capture(c, dbs=range(16)):
    """Captures the whole dataset of the server behind redis-py client `c`: {(db, key): Entry}
    over databases `dbs`. Keys come from SCAN (duplicates removed); reads are pipelined."""
    kw = c.connection_pool.connection_kwargs
    out = {}
    for db in dbs:
        o = redis.Redis(host=kw["host"], port=kw["port"], db=db, socket_timeout=60)
        try:
            keys = sorted(set(o.scan_iter(count=1000)))
            for i in range(0, len(keys), 500):
                for k, e in _read_batch(o, keys[i:i + 500]).items():
                    out[(db, k)] = e
        finally:
            o.close()
    return out


def capture_counts(cap):
    """(keys, keys with an expiry) of a capture."""
    return len(cap), sum(1 for e in cap.values() if e.expire_at is not None)


def compare_captures(a, b, tolerance_ms=EXPIRE_TOLERANCE_MS, limit=25):
    """Returns the differences between captures `a` and `b` (dicts of Entry or None, as made
    by capture() or capture_keys()) as readable lines; empty when they are equal. Expiry
    times are equal when within `tolerance_ms`."""
    diffs = []
    for k in sorted(set(a) | set(b), key=repr):
        ea, eb = a.get(k), b.get(k)
        if ea is None and eb is None:
            continue
        if ea is None:
            diffs.append("%r: only in second: %s" % (k, eb.summary))
        elif eb is None:
            diffs.append("%r: only in first: %s" % (k, ea.summary))
        elif (ea.type, ea.digest) != (eb.type, eb.digest):
            diffs.append("%r: content differs: %s | %s" % (k, ea.summary, eb.summary))
        elif (ea.expire_at is None) != (eb.expire_at is None):
            diffs.append("%r: expiry %s vs %s" % (k, ea.expire_at, eb.expire_at))
        elif ea.expire_at is not None and abs(ea.expire_at - eb.expire_at) > tolerance_ms:
            diffs.append("%r: expiry differs by %d ms (%d vs %d)" % (
                k, eb.expire_at - ea.expire_at, ea.expire_at, eb.expire_at))
    if len(diffs) > limit:
        diffs = diffs[:limit] + ["... and %d more" % (len(diffs) - limit)]
    return diffs


def assert_captures_equal(a, b, what="captures"):
    diffs = compare_captures(a, b)
    assert not diffs, "%s differ (%d vs %d keys):\n%s" % (what, len(a), len(b),
                                                         "\n".join(diffs))


def check_populated(c, n, prefix="key", start=0):
    """Checks that keys prefix:start..prefix:n-1 (DEBUG POPULATE's names) hold value:i on the
    selected db of client `c`; returns the first few wrong keys as (key, value)."""
    wrong = []
    for lo in range(start, n, 1000):
        names = ["%s:%d" % (prefix, i) for i in range(lo, min(n, lo + 1000))]
        for name, v in zip(names, c.mget(names)):
            want = b"value:" + name.rsplit(":", 1)[1].encode()
            if v != want:
                wrong.append((name, v))
                if len(wrong) >= 10:
                    return wrong
    return wrong


def scan_count(c, match):
    """Number of keys matching `match` in the selected db (SCAN with a large COUNT)."""
    return len(set(c.scan_iter(match=match, count=10000)))


# ---- redis-server on a file, redis-check-rdb ----------------------------------------------

class RedisOnFile:
    """A redis-server 7.0 started on a copy of an RDB file, for checking it: use as a
    context manager; `.client(db)` gives bytes clients. Start-up waits until loading:0."""

    def __init__(self, rdb_path, workdir, extra_args=()):
        self.workdir = pathlib.Path(workdir)
        self.workdir.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(rdb_path, self.workdir / "dump.rdb")
        self.server = Server("redis", 1, self.workdir, list(extra_args))
        self.clients = []

    def __enter__(self):
        self.server.start()
        c = self.client()
        wait_until_loaded(c)
        return self

    def __exit__(self, *exc):
        for c in self.clients:
            c.close()
        self.server.stop()
        return False

    def client(self, db=0):
        c = bclient(self.server, db)
        self.clients.append(c)
        return c

    def log(self):
        return server_log(self.server)


def wait_until_loaded(c, timeout=LOAD_TIMEOUT):
    """Polls INFO persistence until loading:0 (PING already answers during loading on some
    servers)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            if info_persistence(c).get("loading") == "0":
                return
        except redis.BusyLoadingError:
            pass
        if time.monotonic() > deadline:
            raise AssertionError("still loading after %.0fs" % timeout)
        time.sleep(0.01)


CheckResult = collections.namedtuple("CheckResult", "rc output keys expires already_expired")


def check_rdb(path):
    """Runs redis-check-rdb on `path`; returns CheckResult (counts are None when absent)."""
    exe = os.environ.get("REDIS_CHECK_RDB_BIN", "redis-check-rdb")
    p = subprocess.run([exe, str(path)], capture_output=True, timeout=120)
    out = p.stdout.decode(errors="replace") + p.stderr.decode(errors="replace")
    return CheckResult(p.returncode, out, *parse_check_counts(out))


def parse_check_counts(out):
    """(keys read, expires, already expired) from redis-check-rdb's output."""
    def num(what):
        m = re.search(r"\[info\] (\d+) %s" % what, out)
        return int(m.group(1)) if m else None
    return num("keys read"), num("expires"), num("already expired")


# ---- INFO, BGSAVE -------------------------------------------------------------------------

def info_persistence(c):
    """INFO persistence as {field: str value} (raw text, parsed here: redis-py converts
    values)."""
    raw = c.execute_command("INFO", "persistence")
    if isinstance(raw, dict):
        return {k: str(v) for k, v in raw.items()}
    if isinstance(raw, bytes):
        raw = raw.decode()
    out = {}
    for line in raw.splitlines():
        if ":" in line and not line.startswith("#"):
            k, v = line.split(":", 1)
            out[k] = v.strip()
    return out


def wait_bgsave_done(c, timeout=BGSAVE_TIMEOUT):
    """Polls INFO persistence until rdb_bgsave_in_progress:0; returns the INFO fields."""
    deadline = time.monotonic() + timeout
    while True:
        info = info_persistence(c)
        if info.get("rdb_bgsave_in_progress") == "0":
            return info
        if time.monotonic() > deadline:
            raise AssertionError("BGSAVE still in progress after %.0fs" % timeout)
        time.sleep(0.005)


def lastsave(c):
    """LASTSAVE as unix seconds."""
    return int(c.lastsave().timestamp())


def wait_next_second(after):
    """Polls the wall clock until it shows a second later than `after` (unix seconds), so
    that a save that completes from now on moves LASTSAVE past `after`."""
    while int(time.time()) <= after:
        time.sleep(0.01)


def bgsave_and_wait(c, copy_to=None, dump=None):
    """Runs BGSAVE on client `c`, waits until it is done and checks it succeeded; copies the
    dump file `dump` to `copy_to` when given. Returns the INFO persistence fields."""
    issued = int(time.time())
    assert raw_call(c, "BGSAVE") == BGSAVE_STARTED
    info = wait_bgsave_done(c)
    assert info["rdb_last_bgsave_status"] == "ok", info
    assert lastsave(c) >= issued
    if copy_to is not None:
        shutil.copyfile(dump, copy_to)
    return info


def raw_call(c, *args):
    """Runs one command on a new raw connection to the server behind redis-py client `c` and
    returns the reply exactly as sent (redis-py turns some status replies into True)."""
    kw = c.connection_pool.connection_kwargs
    raw = RawClient(kw["host"], kw["port"], timeout=60)
    try:
        if kw.get("db"):
            assert raw.call("SELECT", kw["db"]) == "OK"
        return raw.call(*args)
    finally:
        raw.close()


def temp_files(d):
    """The snapshot temp files (temp-*.rdb) in directory `d`."""
    return sorted(p.name for p in pathlib.Path(d).glob("temp-*.rdb"))


def child_pids(pid):
    """The pids whose parent is `pid` (Redis's BGSAVE child)."""
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % entry) as f:
                stat = f.read()
        except OSError:
            continue
        # The command name may contain spaces: the fields after the last ')'.
        fields = stat[stat.rfind(")") + 2:].split()
        if int(fields[1]) == pid:
            out.append(int(entry))
    return out


def kill9(srv):
    """SIGKILLs the server process of `srv` together with its children (a Redis BGSAVE child
    would otherwise finish the file after its parent died) and waits for it."""
    kids = child_pids(srv.proc.pid)
    for k in kids:
        try:
            os.kill(k, signal.SIGKILL)
        except ProcessLookupError:
            pass
    srv.proc.kill()
    srv.proc.wait(timeout=10)
    for k in kids:
        # Reaped by init; wait until it is gone so that it cannot touch the directory.
        deadline = time.monotonic() + 10
        while os.path.exists("/proc/%d" % k) and time.monotonic() < deadline:
            try:
                with open("/proc/%d/stat" % k) as f:
                    if f.read().split(") ")[-1].startswith("Z"):
                        break
            except OSError:
                break
            time.sleep(0.005)
