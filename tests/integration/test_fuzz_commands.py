"""Bounded fuzzing of every command in the command table (issue 13, "Done when").

The test reads COMMAND from the server (names, arity, key positions) and, for a fixed time per
server (--threads 1 and --threads 2), sends random calls of random commands: edge-case numbers
(INT64_MIN/MAX, huge negatives, NaN, inf, 1e300 ...), empty and binary strings, long strings
(bounded), option keywords followed by edge values, and keys of every type and encoding created
beforehand (recreated every SETUP_EVERY calls, after a FLUSHALL, so that nothing grows without
bound). After each call it checks that the server answered (any reply or error) within
REPLY_TIMEOUT; at the end that the process is alive and answers PING. It fails on a crash, a
hang or a closed connection (no command it sends closes one by design).

Reproducible: the sequence of calls depends only on the seed (never on replies), printed on
failure with the last calls sent. Environment:
  DASHKV_FUZZ_SEED     seed (default: random)
  DASHKV_FUZZ_SECONDS  time budget per server (default 35: ~70 s for both thread counts)
Under ASan/UBSan (DASHKV_BIN=build-asan/dashkv) run with
  ASAN_OPTIONS=allocator_may_return_null=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
so that a huge client-sized allocation fails as in a release build (operator new throws and the
command gets "-ERR out of memory") instead of ASan stopping the process, and UB stops it.

Only meaningful on dashkv (Redis has commands this exclusion list does not know about).
"""

import collections
import os
import random
import socket
import time

import pytest

from resp_client import Closed, RawClient

pytestmark = pytest.mark.dashkv_only

FUZZ_SECONDS = float(os.environ.get("DASHKV_FUZZ_SECONDS", "35"))
BASE_SEED = int(os.environ.get("DASHKV_FUZZ_SEED", str(random.SystemRandom().randrange(1 << 32))))
REPLY_TIMEOUT = 5.0
# Resident memory the server may reach (checked after each FLUSHALL and re-creation of the keys,
# which are small): far above what the bounded arguments can make it hold, so only unbounded
# growth trips it.
MAX_RSS_BYTES = 4 << 30
SETUP_EVERY = 150
HISTORY = 25

# Commands never sent: they end the test's connection or server, switch the connection into a
# mode where replies stop or change meaning, or wait for something that never comes.
EXCLUDED = {
    "shutdown", "quit", "monitor", "sync", "psync", "replicaof", "slaveof", "failover",
    "subscribe", "unsubscribe", "psubscribe", "punsubscribe", "ssubscribe", "sunsubscribe",
    "wait", "waitaof", "migrate", "cluster", "module", "acl", "save", "bgsave", "bgrewriteaof",
    "eval", "evalsha", "eval_ro", "evalsha_ro", "fcall", "fcall_ro", "function", "script",
    "readonly", "readwrite", "asking", "xread", "xreadgroup",
}

# Subcommands sent for container commands (others: a random word, to reach the error path).
SUBCOMMANDS = {
    # Not KILL / PAUSE / REPLY: they close or silence connections (the test's own included).
    "client": ["GETNAME", "ID", "INFO", "LIST", "NO-EVICT", "NO-TOUCH", "SETINFO", "SETNAME",
               "UNBLOCK", "HELP", "UNPAUSE", "TRACKINGINFO", "GETREDIR"],
    # Not SET / REWRITE: settings (maxmemory, requirepass, maxclients ...) change every later
    # reply; fuzzing CONFIG SET is left to the config tests.
    "config": ["GET", "RESETSTAT", "HELP"],
    "debug": ["OBJECT", "POPULATE", "SLEEP", "HELP", "DIGEST", "CHANGE-REPL-ID", "JMAP"],
    "object": ["ENCODING", "FREQ", "IDLETIME", "REFCOUNT", "HELP"],
    "memory": ["USAGE", "STATS", "DOCTOR", "MALLOC-STATS", "PURGE", "HELP"],
    "pubsub": ["CHANNELS", "NUMPAT", "NUMSUB", "SHARDCHANNELS", "SHARDNUMSUB", "HELP"],
    "command": ["COUNT", "LIST", "INFO", "DOCS", "GETKEYS", "GETKEYSANDFLAGS", "HELP"],
    "xinfo": ["STREAM", "GROUPS", "CONSUMERS", "HELP"],
}

# Blocking commands: where their timeout is (1-based argument index; -1 = last) and the
# timeouts sent (never 0 or anything rounding to "forever": a short wait or an invalid value).
BLOCKING_TIMEOUT_POS = {
    "blpop": -1, "brpop": -1, "brpoplpush": -1, "blmove": -1, "bzpopmin": -1, "bzpopmax": -1,
    "blmpop": 1, "bzmpop": 1,
}
TIMEOUTS = ["0.01", "0.02", "0.001", "-1", "-0.5", "nan", "abc", "", "1e-3",
            "-9223372036854775808", "9223372036854775807", "inf", "-inf", "1e300"]

INTS = [
    "0", "1", "-1", "2", "3", "5", "10", "100", "-2", "-10", "-100", "1000", "-1000",
    "2147483647", "2147483648", "-2147483648", "-2147483649", "4294967296", "4294967295",
    "9007199254740993", "4611686018427387903", "-4611686018427387903", "-4611686018427387904",
    "9223372036854775807", "-9223372036854775808", "-9223372036854775807",
    "9223372036854775808", "-9223372036854775809", "18446744073709551615",
    "18446744073709551616", "-100000000000000000", "-9223372036854770000",
    "9223372036854770000", "99999999999999999999999", "-99999999999999999999999",
    "00", "-0", "+1", " 1", "1 ", "0x10", "1e3", "1.0",
]
FLOATS = [
    "nan", "NaN", "-nan", "inf", "-inf", "+inf", "Infinity", "1e300", "-1e300", "1e-300",
    "1e309", "-1e309", "4.9e-324", "1.7976931348623157e308", "0.5", "-0.0", "3.14", "1.",
    ".5", "(1", "(-inf", "(+inf", "(nan", "[a", "(a", "-", "+", "[", "(", "0x1p3", "1e",
]
KEYWORDS = [
    "COUNT", "LIMIT", "WITHSCORES", "WITHSCORE", "WITHVALUES", "BYSCORE", "BYLEX", "REV", "EX",
    "PX", "EXAT", "PXAT", "NX", "XX", "GT", "LT", "CH", "INCR", "GET", "KEEPTTL", "PERSIST",
    "IDX", "LEN", "MINMATCHLEN", "WITHMATCHLEN", "MATCH", "TYPE", "LEFT", "RIGHT", "BEFORE",
    "AFTER", "RANK", "MAXLEN", "WEIGHTS", "AGGREGATE", "SUM", "MIN", "MAX", "STORE", "BY",
    "ASC", "DESC", "ALPHA", "REPLACE", "DB", "ABSTTL", "IDLETIME", "FREQ", "SAMPLES", "OVERFLOW",
    "WRAP", "SAT", "FAIL", "INCRBY", "SET", "u8", "i64", "u63", "i1", "u1", "i65", "u64", "#1",
    "#-1", "AND", "OR", "XOR", "NOT", "BIT", "BYTE", "FIELDS", "ID", "ADDR", "SKIPME", "LADDR",
    "USER", "TIMEOUT", "ERROR", "ON", "OFF", "LIB-NAME", "LIB-VER", "ASYNC", "SYNC",
]
STRINGS = ["", "a", "b", "f1", "v1", "field", "m", "x", "*", "?", "[a-z]*", "\\", "key:*",
           "0", "-", "+", "\x00", "\r\n", "\xff\xfe", "k\r\nk", " ", "é"]


class Keys:
    """Keys of every type and encoding, on both shards and under one hash tag."""

    def __init__(self):
        self.plain = ["fz:str", "fz:int", "fz:rawstr", "fz:list", "fz:listbig", "fz:hash",
                      "fz:hashbig", "fz:setint", "fz:setlp", "fz:setbig", "fz:zset",
                      "fz:zsetbig", "fz:bits", "fz:ttl", "fz:empty"]
        self.tagged = ["{fz}" + k[2:] for k in self.plain]
        self.all = self.plain + self.tagged + ["fz:missing", "{fz}missing", "key:1", "k"]

    def setup_commands(self):
        # RESET: out of MULTI, WATCH, RESP3, another database (whatever the calls left).
        cmds = [("RESET",), ("FLUSHALL",)]
        for prefix in ("fz:", "{fz}:"):
            p = prefix
            cmds += [
                ("SET", p + "str", "hello world"),
                ("SET", p + "int", "12345"),
                ("SET", p + "rawstr", "r" * 3000),
                ("RPUSH", p + "list", "a", "b", "c", "1", "2", "-3"),
                ("RPUSH", p + "listbig") + tuple("e%d-%s" % (i, "L" * (i % 90)) for i in range(400)),
                ("HSET", p + "hash", "f1", "v1", "f2", "2", "f3", "3.5"),
                ("HSET", p + "hashbig") + sum((("f%d" % i, "v" * 80 + str(i)) for i in range(150)), ()),
                ("SADD", p + "setint", "1", "2", "3", "-100", "9223372036854775807"),
                ("SADD", p + "setlp", "a", "b", "c", "1"),
                ("SADD", p + "setbig") + tuple("m%d" % i for i in range(300)),
                ("ZADD", p + "zset", "1", "a", "2", "b", "2", "c", "-inf", "lo", "inf", "hi"),
                ("ZADD", p + "zsetbig") + sum(((str(i * 0.5), "z%d-%s" % (i, "Z" * 70))
                                               for i in range(200)), ()),
                ("SETBIT", p + "bits", "7", "1"),
                ("SETBIT", p + "bits", "100", "1"),
                ("SET", p + "ttl", "t", "EX", "1000"),
                ("SET", p + "empty", ""),
            ]
        return cmds


class Fuzzer:
    def __init__(self, rng, table):
        self.rng = rng
        self.table = table  # name -> (arity, first, last, step)
        self.names = sorted(table)
        self.keys = Keys()

    # ---- argument pieces -----------------------------------------------------------------
    def key(self):
        return self.rng.choice(self.keys.all)

    def number(self):
        r = self.rng.random()
        if r < 0.6:
            return self.rng.choice(INTS)
        if r < 0.9:
            return self.rng.choice(FLOATS)
        return str(self.rng.randint(-1000, 1000))

    def string(self):
        r = self.rng.random()
        if r < 0.6:
            return self.rng.choice(STRINGS)
        if r < 0.85:
            return bytes(self.rng.getrandbits(8) for _ in range(self.rng.randint(0, 40)))
        # A long string, bounded (64 KiB, sometimes 300 KiB).
        n = self.rng.choice([200, 5000, 65536, 300000])
        return self.rng.choice(["x", "\x00", "ab"]) * (n // 2 + 1)

    def arg(self):
        r = self.rng.random()
        if r < 0.3:
            return self.key()
        if r < 0.6:
            return self.number()
        if r < 0.8:
            return self.rng.choice(KEYWORDS)
        return self.string()

    def tail(self, n):
        """n free-form arguments: often an option keyword followed by an edge value."""
        out = []
        while len(out) < n:
            r = self.rng.random()
            if r < 0.35:
                out += [self.rng.choice(KEYWORDS), self.number()]
            elif r < 0.45:
                out += [self.rng.choice(KEYWORDS), self.number(), self.number()]
            else:
                out.append(self.arg())
        return out[:n] if self.rng.random() < 0.5 else out

    # ---- one call --------------------------------------------------------------------------
    def call(self):
        name = self.rng.choice(self.names)
        arity, first, last, step = self.table[name]
        need = abs(arity) - 1
        if arity < 0:
            need += self.rng.choice([0, 0, 1, 2, 3, 4, 6, 10])
        if self.rng.random() < 0.05:  # wrong arity on purpose
            need = max(0, need + self.rng.choice([-1, 1]))
        args = self.tail(need)
        if name in SUBCOMMANDS and args is not None:
            if need == 0:
                args = [None]
            args[0] = (self.rng.choice(SUBCOMMANDS[name]) if self.rng.random() < 0.9
                       else self.string())
            self.subcommand_args(name, args)
        if first > 0:
            end = len(args) + 1 + last if last < 0 else min(last, len(args))
            for i in range(first, end + 1, max(step, 1)):
                if i - 1 < len(args) and self.rng.random() < 0.85:
                    args[i - 1] = self.key()
        elif self.rng.random() < 0.5:
            # Movable keys (numkeys commands): "<numkeys> key ..." somewhere near the front.
            for i in range(len(args)):
                if self.rng.random() < 0.4:
                    args[i] = self.key()
            if name in ("zunion", "zinter", "zdiff", "sintercard", "zintercard", "lmpop",
                        "zmpop", "zunionstore", "zinterstore", "zdiffstore") and args:
                pos = 1 if name.endswith("store") else 0
                if pos < len(args) and self.rng.random() < 0.7:
                    args[pos] = self.rng.choice(["1", "2", "3"] + INTS[:6])
        if name in BLOCKING_TIMEOUT_POS and args:
            pos = BLOCKING_TIMEOUT_POS[name]
            idx = len(args) - 1 if pos < 0 else min(pos - 1, len(args) - 1)
            args[idx] = self.rng.choice(TIMEOUTS)
        if name == "select":
            args = [self.rng.choice(["0", "0", "1", "15", "16", "-1"] + INTS)]
        return [name.upper()] + args

    def subcommand_args(self, name, args):
        sub = args[0].upper() if isinstance(args[0], str) else ""
        if name == "debug" and sub == "SLEEP":
            # Never a long sleep (a hang by design).
            if len(args) > 1:
                args[1] = self.rng.choice(["0", "0.001", "-1", "abc", "nan", "-inf", "inf", "1e300", ""])
        if name == "debug" and sub == "POPULATE":
            if len(args) > 1:
                args[1] = self.rng.choice(["0", "1", "10", "500", "-1", "abc", "nan"] + INTS)
            if len(args) > 3:
                args[3] = self.rng.choice(["0", "1", "10", "1000", "-1", "abc"] + INTS)
        if name in ("object", "memory") and len(args) > 1:
            args[1] = self.key()
        if name == "client" and sub == "SETNAME" and len(args) > 1:
            args[1] = self.rng.choice(["fuzzer", "", "a b", "x" * 100])


# Bit and byte offsets up to 2^32 are valid (a string of up to 512 MiB, as in Redis); such a
# value is left out for these commands so that the keys stay small (their replies are read by
# this test, in Python).
OFFSET_COMMANDS = ("setbit", "setrange", "bitfield", "bitfield_ro")


def bounded(cmd):
    """Returns cmd with any valid-but-huge offset of OFFSET_COMMANDS replaced by 2^20."""
    if cmd[0].lower() not in OFFSET_COMMANDS:
        return cmd
    out = [cmd[0]]
    for a in cmd[1:]:
        try:
            v = int(str(a).lstrip("#"))
        except ValueError:
            v = None
        out.append("1048576" if v is not None and (1 << 20) < v <= (1 << 35) else a)
    return out


def read_table(c):
    table = {}
    for entry in c.call("COMMAND"):
        name = entry[0].decode() if isinstance(entry[0], bytes) else str(entry[0])
        name = name.lower()
        if name in EXCLUDED or "|" in name:
            continue
        table[name] = (int(entry[1]), int(entry[3]), int(entry[4]), int(entry[5]))
    return table


def rss_bytes(pid):
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def describe(cmd):
    out = []
    for a in cmd:
        s = a if isinstance(a, (bytes, bytearray)) else str(a).encode("utf-8", "surrogateescape")
        out.append(repr(s[:80]) + ("...(%d bytes)" % len(s) if len(s) > 80 else ""))
    return " ".join(out)


def test_fuzz_every_command(server):
    seed = BASE_SEED + server.threads
    rng = random.Random(seed)
    c = server.raw(timeout=REPLY_TIMEOUT)
    table = read_table(c)
    assert len(table) > 100, "COMMAND lists only %d commands" % len(table)
    fuzzer = Fuzzer(rng, table)
    history = collections.deque(maxlen=HISTORY)
    sent = 0
    deadline = time.monotonic() + FUZZ_SECONDS

    def fail(what, cmd):
        last = "\n".join("  #%d %s" % (i, describe(h)) for i, h in history)
        pytest.fail("%s after call #%d: %s\nseed: DASHKV_FUZZ_SEED=%d (threads %d; this server "
                    "used seed %d)\nlast calls:\n%s\nserver stderr:\n%s"
                    % (what, sent, describe(cmd), BASE_SEED, server.threads, seed, last,
                       server.stderr_text(4000)), pytrace=False)

    def run(cmd):
        try:
            c.call(*cmd)
        except (socket.timeout, TimeoutError):
            fail("no reply within %.0f s (hang)" % REPLY_TIMEOUT, cmd)
        except (Closed, ConnectionError, OSError):
            if server.proc.poll() is not None:
                fail("server died (rc=%s)" % server.proc.returncode, cmd)
            fail("server closed the connection", cmd)

    try:
        while time.monotonic() < deadline:
            if sent % SETUP_EVERY == 0:
                for cmd in fuzzer.keys.setup_commands():
                    run(cmd)
                rss = rss_bytes(server.proc.pid)
                if rss > MAX_RSS_BYTES:
                    fail("memory blow-up: %d MiB resident after FLUSHALL" % (rss >> 20),
                         history[-1][1] if history else ("FLUSHALL",))
            cmd = bounded(fuzzer.call())
            history.append((sent, cmd))
            run(cmd)
            sent += 1
        run(("PING",))
    finally:
        c.close()
    server.assert_alive()
    # Sanitizer builds: UBSan reports and goes on unless UBSAN_OPTIONS=halt_on_error=1.
    assert "runtime error:" not in server.stderr_text(1 << 20), (
        "sanitizer report (seed %d); stderr:\n%s" % (seed, server.stderr_text()))
    assert sent > 100, "only %d calls sent in %.0f s" % (sent, FUZZ_SECONDS)
    print("fuzz: threads=%d seed=%d calls=%d" % (server.threads, seed, sent))
