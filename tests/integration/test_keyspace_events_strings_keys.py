"""Keyspace notifications and WATCH for the string, bitmap and key commands.

Each test asserts the exact events Redis 7.0 raises (names, classes, order, and none where it
raises none) and whether a write dirties WATCH (only writes that changed their key do). Every test
also runs against redis-server 7.0 (DASHKV_TEST_TARGET=redis), which is where the expected values
come from.

Events are read by a PSUBSCRIBE '__key*' client; after the commands, a PUBLISH on a sync channel
marks the end of what they raised. An event is written "name key" (database 0) or
"name key@db". With --threads 2, commands whose keys fan out to several shards in parallel (MSET,
DEL, MGET, BITOP sources) raise each key's events in order but may interleave keys differently:
those sequences are compared key by key there."""

import pytest
import redis

from helpers import IS_DASHKV, dirties

SYNC = "kse:sync"
PAST_MS = "1"  # a PXAT deadline in the past

# The class letter of every event these commands raise (notify-keyspace-events letters).
EVENT_CLASS = {
    "new": "n", "keymiss": "m", "expired": "x",
    "set": "$", "append": "$", "setrange": "$", "incrby": "$", "incrbyfloat": "$",
    "setbit": "$",
    "del": "g", "expire": "g", "persist": "g", "rename_from": "g", "rename_to": "g",
    "move_from": "g", "move_to": "g", "copy_to": "g",
}


def wanted(events, flags):
    """The events of `events` that the notify-keyspace-events setting `flags` publishes."""
    out = []
    for e in events:
        cls = EVENT_CLASS[e.split(" ", 1)[0]]
        if cls in flags or (cls not in "mn" and "A" in flags):
            out.append(e)
    return out


def event_text(db, name, key):
    return "%s %s" % (name, key) if db == 0 else "%s %s@%d" % (name, key, db)


class Events:
    """A subscriber to every keyspace/keyevent channel, and the client that runs commands."""

    def __init__(self, server, r, flags):
        self.server = server
        self.r = r
        self.flags = flags
        r.config_set("notify-keyspace-events", flags)
        self.conn = redis.Redis(host=server.host, port=server.port, decode_responses=True,
                                socket_timeout=20)
        # Commands run on a client that returns replies as sent (no redis-py conversions).
        self.cmd = redis.Redis(host=server.host, port=server.port, decode_responses=True,
                               socket_timeout=20)
        self.cmd.response_callbacks.clear()
        self.sub = self.conn.pubsub()
        self.sub.psubscribe("__key*")
        self.sub.subscribe(SYNC)
        confirmed = 0
        while confirmed < 2:
            m = self.sub.get_message(timeout=5)
            assert m is not None, "no subscription confirmation"
            if m["type"] in ("psubscribe", "subscribe"):
                confirmed += 1

    def close(self):
        self.sub.close()
        self.conn.close()
        self.cmd.close()

    def run(self, *cmds):
        """Runs `cmds` (tuples) on the command client; returns the replies (errors as
        ResponseError objects)."""
        replies = []
        for c in cmds:
            try:
                replies.append(self.cmd.execute_command(*c))
            except redis.ResponseError as e:
                replies.append(e)
        return replies

    def collect(self):
        """Returns the events raised since the last collect, in arrival order."""
        self.r.publish(SYNC, "x")
        space, event = [], []
        while True:
            m = self.sub.get_message(timeout=10)
            assert m is not None, "sync message not received; got %r / %r" % (space, event)
            if m["type"] != "pmessage":
                if m["type"] == "message" and m["channel"] == SYNC:
                    break
                continue
            prefix, rest = m["channel"].split("@", 1)
            db_text, name = rest.split("__:", 1)
            db = int(db_text)
            if prefix == "__keyspace":
                space.append(event_text(db, m["data"], name))
            else:
                event.append(event_text(db, name, m["data"]))
        if "K" in self.flags and "E" in self.flags:
            assert space == event, "keyspace and keyevent channels disagree"
        return event if "E" in self.flags else space


@pytest.fixture(params=["KEAnm", "KEA", "E$gn", "Kgm"])
def ev(request, server, r):
    e = Events(server, r, request.param)
    yield e
    e.close()
    r.config_set("notify-keyspace-events", "")


@pytest.fixture
def ev_all(server, r):
    e = Events(server, r, "KEAnm")
    yield e
    e.close()
    r.config_set("notify-keyspace-events", "")


def multi_shard(server):
    return server.kind == "dashkv" and server.threads > 1


def by_key(events):
    keyed = {}
    for e in events:
        keyed.setdefault(e.split(" ", 1)[1], []).append(e)
    return keyed


def check(ev, setup, cmds, events, replies=None, parallel=False):
    """Runs `setup` with notifications off, then `cmds`, and asserts that they raise `events`
    (the full list, filtered by the fixture's classes) and reply `replies` (when given).
    `parallel`: the keys may be on several shards served in parallel (see the module comment)."""
    ev.r.config_set("notify-keyspace-events", "")
    ev.run(*setup)
    ev.r.config_set("notify-keyspace-events", ev.flags)
    got_replies = ev.run(*cmds)
    got = ev.collect()
    want = wanted(events, ev.flags)
    if parallel and multi_shard(ev.server):
        assert by_key(got) == by_key(want)
    else:
        assert got == want
    if replies is not None:
        assert [str(x) if isinstance(x, Exception) else x for x in got_replies] == replies


def S(*args):
    return args


# ------------------------------------------------------------------ strings


class TestStringEvents:
    def test_set(self, ev):
        check(ev, [], [S("SET", "k", "v")], ["new k", "set k"])
        check(ev, [], [S("SET", "k", "w")], ["set k"])

    def test_set_with_deadline(self, ev):
        for opt in (S("EX", "100"), S("PX", "100000"), S("EXAT", "99999999999"),
                    S("PXAT", "99999999999999")):
            check(ev, [S("DEL", "k")], [S("SET", "k", "v", *opt)], ["new k", "set k", "expire k"])
        check(ev, [S("SET", "k", "v", "EX", "100")], [S("SET", "k", "w", "KEEPTTL")], ["set k"])
        assert ev.r.ttl("k") > 0

    def test_set_over_other_type(self, ev):
        check(ev, [S("HSET", "h", "f", "v")], [S("SET", "h", "1")], ["set h"])

    def test_set_deadline_in_the_past(self, ev):
        # Redis stores the key with its past deadline; it expires on the next access.
        check(ev, [], [S("SET", "k", "v", "PXAT", PAST_MS), S("EXISTS", "k")],
              ["new k", "set k", "expire k", "expired k", "keymiss k"], ["OK", 0])
        # The expired key goes before the write (on access, or earlier in the active cycle).
        check(ev, [], [S("SET", "k", "v", "PXAT", PAST_MS), S("SET", "k", "w")],
              ["new k", "set k", "expire k", "expired k", "new k", "set k"])

    def test_set_conditions(self, ev):
        check(ev, [S("SET", "k", "v")], [S("SET", "k", "w", "NX"), S("SET", "m", "w", "XX")], [],
              [None, None])
        check(ev, [S("SET", "k", "v")], [S("SET", "k", "w", "XX")], ["set k"], ["OK"])

    def test_set_get(self, ev):
        check(ev, [], [S("SET", "k", "v", "GET")], ["keymiss k", "new k", "set k"], [None])
        check(ev, [], [S("SET", "k", "w", "GET", "EX", "10")], ["set k", "expire k"], ["v"])
        check(ev, [], [S("SET", "k", "x", "NX", "GET")], [], ["w"])
        check(ev, [S("HSET", "h", "f", "v")], [S("SET", "h", "x", "GET")], [],
              ["WRONGTYPE Operation against a key holding the wrong kind of value"])

    def test_getset(self, ev):
        check(ev, [], [S("GETSET", "k", "v"), S("GETSET", "k", "w")],
              ["keymiss k", "new k", "set k", "set k"], [None, "v"])

    def test_setnx_setex_psetex(self, ev):
        check(ev, [], [S("SETNX", "a", "1"), S("SETNX", "a", "2")], ["new a", "set a"], [1, 0])
        check(ev, [], [S("SETEX", "b", "10", "v"), S("PSETEX", "c", "10000", "v")],
              ["new b", "set b", "expire b", "new c", "set c", "expire c"])
        check(ev, [], [S("SETEX", "b", "10", "w")], ["set b", "expire b"])

    def test_mset(self, ev):
        check(ev, [S("SET", "a", "0")], [S("MSET", "a", "1", "b", "2", "c", "3")],
              ["set a", "new b", "set b", "new c", "set c"], parallel=True)
        check(ev, [], [S("MSET", "d", "1", "d", "2")], ["new d", "set d", "set d"], ["OK"])

    def test_msetnx(self, ev):
        check(ev, [S("SET", "a", "0")], [S("MSETNX", "b", "1", "a", "2")], [], [0])
        check(ev, [], [S("MSETNX", "b", "1", "c", "2", "d", "3")],
              ["new b", "set b", "new c", "set c", "new d", "set d"], [1], parallel=True)

    def test_append(self, ev):
        check(ev, [], [S("APPEND", "s", "ab"), S("APPEND", "s", "c")],
              ["new s", "append s", "append s"], [2, 3])

    def test_setrange(self, ev):
        check(ev, [], [S("SETRANGE", "s", "0", "")], [], [0])
        check(ev, [], [S("SETRANGE", "s", "2", "x")], ["new s", "setrange s"], [3])
        check(ev, [], [S("SETRANGE", "s", "0", ""), S("SETRANGE", "s", "0", "y")],
              ["setrange s"], [3, 3])

    def test_incr_family(self, ev):
        check(ev, [], [S("INCR", "i"), S("DECR", "i"), S("INCRBY", "i", "5"),
                       S("DECRBY", "i", "2")],
              ["new i", "incrby i", "incrby i", "incrby i", "incrby i"], [1, 0, 5, 3])
        check(ev, [], [S("INCRBYFLOAT", "i", "1.5"), S("INCRBYFLOAT", "f", "2")],
              ["incrbyfloat i", "new f", "incrbyfloat f"], ["4.5", "2"])
        check(ev, [S("SET", "s", "x")], [S("INCR", "s"), S("INCRBYFLOAT", "s", "1"),
                                         S("INCRBYFLOAT", "n", "x")], [])
        assert ev.r.exists("n") == 0

    def test_getdel(self, ev):
        check(ev, [S("SET", "a", "1")], [S("GETDEL", "a"), S("GETDEL", "a")],
              ["del a", "keymiss a"], ["1", None])

    def test_getex(self, ev):
        check(ev, [S("SET", "a", "1")],
              [S("GETEX", "a"), S("GETEX", "a", "PERSIST"), S("GETEX", "a", "EX", "10"),
               S("GETEX", "a", "PXAT", "99999999999999"), S("GETEX", "a", "PERSIST"),
               S("GETEX", "m", "EX", "10")],
              ["expire a", "expire a", "persist a", "keymiss m"])
        check(ev, [], [S("GETEX", "a", "PXAT", PAST_MS)], ["del a"], ["1"])
        assert ev.r.exists("a") == 0

    def test_reads_raise_keymiss_only(self, ev):
        check(ev, [S("SET", "a", "1"), S("SET", "b", "2")],
              [S("GET", "m"), S("GET", "a"), S("STRLEN", "m"), S("GETRANGE", "m", "0", "1"),
               S("SUBSTR", "a", "0", "1"), S("LCS", "m", "a")],
              ["keymiss m", "keymiss m", "keymiss m", "keymiss m"])
        check(ev, [], [S("MGET", "m", "a", "n", "b")], ["keymiss m", "keymiss n"],
              [[None, "1", None, "2"]], parallel=True)


# ------------------------------------------------------------------ bitmaps


class TestBitmapEvents:
    def test_setbit(self, ev):
        check(ev, [], [S("SETBIT", "k", "0", "0")], ["new k", "setbit k"], [0])
        # Unchanged bit in place: no event; growing the string or changing the bit: setbit.
        check(ev, [], [S("SETBIT", "k", "1", "0"), S("SETBIT", "k", "100", "0"),
                       S("SETBIT", "k", "3", "1"), S("SETBIT", "k", "3", "1")],
              ["setbit k", "setbit k"], [0, 0, 0, 1])

    def test_bitfield(self, ev):
        check(ev, [S("SET", "k", "\x00")],
              [S("BITFIELD", "k", "SET", "u8", "0", "5"), S("BITFIELD", "k", "SET", "u8", "0", "5"),
               S("BITFIELD", "k", "INCRBY", "u8", "0", "0"),
               S("BITFIELD", "k", "OVERFLOW", "FAIL", "INCRBY", "u8", "100", "1000"),
               S("BITFIELD", "k", "INCRBY", "u8", "0", "256"),
               S("BITFIELD", "k", "GET", "u8", "0"),
               S("BITFIELD", "k", "SET", "u8", "0", "5", "SET", "u8", "0", "6")],
              ["setbit k", "setbit k"], [[0], [5], [5], [None], [5], [5], [5, 5]])
        assert ev.r.strlen("k") == 14  # grown by the FAIL op

    def test_bitfield_fail_creates_key_without_setbit(self, ev):
        check(ev, [], [S("BITFIELD", "k", "OVERFLOW", "FAIL", "INCRBY", "u2", "0", "10")],
              ["new k"], [[None]])

    def test_bitfield_reads(self, ev):
        check(ev, [], [S("BITFIELD", "m", "GET", "u8", "0"),
                       S("BITFIELD_RO", "m", "GET", "u8", "0"), S("GETBIT", "m", "0"),
                       S("BITCOUNT", "m"), S("BITPOS", "m", "1")],
              ["keymiss m"] * 5)

    def test_bitop(self, ev):
        check(ev, [S("SET", "{b}a", "x")], [S("BITOP", "OR", "{b}d", "{b}a", "{b}m")],
              ["keymiss {b}m", "new {b}d", "set {b}d"], [1])
        check(ev, [], [S("BITOP", "AND", "{b}d", "{b}m", "{b}n")],
              ["keymiss {b}m", "keymiss {b}n", "del {b}d"], [0])
        check(ev, [], [S("BITOP", "AND", "{b}d", "{b}m")], ["keymiss {b}m"], [0])

    def test_bitop_across_shards(self, ev):
        check(ev, [S("SET", "src1", "x"), S("SET", "src2", "y")],
              [S("BITOP", "XOR", "dst", "src1", "src2", "miss1")],
              ["keymiss miss1", "new dst", "set dst"], [1], parallel=True)
        check(ev, [], [S("BITOP", "AND", "dst", "miss1", "miss2")],
              ["keymiss miss1", "keymiss miss2", "del dst"], [0], parallel=True)


# ------------------------------------------------------------------ keys


class TestKeyEvents:
    def test_del_unlink(self, ev):
        check(ev, [S("SET", "a", "1"), S("SET", "b", "1"), S("SET", "c", "1")],
              [S("DEL", "a", "m", "b"), S("UNLINK", "c", "m")], ["del a", "del b", "del c"],
              [2, 1], parallel=True)

    def test_del_of_expired_key(self, ev):
        check(ev, [], [S("SET", "a", "1", "PXAT", PAST_MS), S("DEL", "a")],
              ["new a", "set a", "expire a", "expired a"], ["OK", 0])

    def test_expire(self, ev):
        check(ev, [S("SET", "a", "1")],
              [S("EXPIRE", "a", "100"), S("EXPIRE", "a", "100"), S("EXPIRE", "a", "100", "NX"),
               S("PEXPIRE", "a", "10", "GT"), S("EXPIREAT", "a", "99999999999", "LT"),
               S("EXPIRE", "m", "10"), S("PEXPIREAT", "a", "99999999999999", "XX")],
              ["expire a", "expire a", "expire a"], [1, 1, 0, 0, 0, 0, 1])

    def test_expire_in_the_past_deletes(self, ev):
        check(ev, [S("SET", "a", "1"), S("SET", "b", "1")],
              [S("PEXPIRE", "a", "-1"), S("EXPIREAT", "b", "1")], ["del a", "del b"], [1, 1])

    def test_persist(self, ev):
        check(ev, [S("SET", "a", "1"), S("SET", "b", "1", "EX", "100")],
              [S("PERSIST", "a"), S("PERSIST", "b"), S("PERSIST", "b"), S("PERSIST", "m")],
              ["persist b"], [0, 1, 0, 0])

    def test_key_reads(self, ev):
        # Redis 7.0's EXISTS, TYPE, TTL ... read the key (keymiss); OBJECT raises nothing.
        check(ev, [S("SET", "a", "1")],
              [S("EXISTS", "m"), S("TYPE", "m"), S("TTL", "m"), S("PTTL", "m"),
               S("EXPIRETIME", "m"), S("PEXPIRETIME", "m"), S("TOUCH", "m"),
               S("OBJECT", "ENCODING", "m"), S("EXISTS", "a"), S("TYPE", "a"), S("TTL", "a")],
              ["keymiss m"] * 7)
        check(ev, [], [S("SCAN", "0"), S("KEYS", "*"), S("RANDOMKEY")], [])

    def test_rename(self, ev):
        for i in range(8):  # same-shard and cross-shard pairs
            src, dst = "rs%d" % i, "rd%d" % i
            check(ev, [S("SET", src, "1", "EX", "100")], [S("RENAME", src, dst)],
                  ["new " + dst, "rename_from " + src, "rename_to " + dst], ["OK"])
            # Over an existing destination: Redis deletes it and adds the key anew.
            check(ev, [S("SET", src, "2")], [S("RENAME", src, dst)],
                  ["new " + dst, "rename_from " + src, "rename_to " + dst], ["OK"])
            check(ev, [S("SET", src, "3")], [S("RENAMENX", src, dst)], [], [0])
            check(ev, [S("DEL", dst)], [S("RENAMENX", src, dst)],
                  ["new " + dst, "rename_from " + src, "rename_to " + dst], [1])
        check(ev, [S("SET", "a", "1")], [S("RENAME", "a", "a"), S("RENAME", "m", "n")], [],
              ["OK", "no such key"])

    def test_move(self, ev):
        check(ev, [S("SET", "a", "1", "EX", "100")], [S("MOVE", "a", "1")],
              ["new a@1", "move_from a", "move_to a@1"], [1])
        check(ev, [S("SET", "a", "2")], [S("MOVE", "a", "1"), S("MOVE", "m", "1")], [], [0, 0])

    def test_copy(self, ev):
        for i in range(8):  # same-shard and cross-shard pairs
            src, dst = "cs%d" % i, "cd%d" % i
            check(ev, [S("SET", src, "1")], [S("COPY", src, dst)], ["new " + dst, "copy_to " + dst],
                  [1])
            check(ev, [], [S("COPY", src, dst)], [], [0])
            check(ev, [], [S("COPY", src, dst, "REPLACE")], ["new " + dst, "copy_to " + dst], [1])
            check(ev, [], [S("COPY", src, dst, "DB", "2")],
                  ["new %s@2" % dst, "copy_to %s@2" % dst], [1])
            check(ev, [], [S("COPY", "miss" + src, dst)], ["keymiss miss" + src], [0])


class TestDebugPopulate:
    def test_populate_raises_new_for_added_keys(self, ev_all):
        check(ev_all, [S("SET", "key:1", "x")], [S("DEBUG", "POPULATE", "3")],
              ["new key:0", "new key:2"], parallel=True)


class TestLookupStats:
    @pytest.mark.parametrize("cmd,hits,misses", [
        (S("EXISTS", "m"), 0, 1), (S("TYPE", "m"), 0, 1), (S("TTL", "m"), 0, 1),
        (S("OBJECT", "ENCODING", "m"), 0, 1), (S("TOUCH", "m"), 0, 1),
        (S("COPY", "m", "n"), 0, 1), (S("RENAME", "m", "n"), 0, 0), (S("INCR", "q"), 0, 0),
        (S("SET", "z", "1", "GET"), 0, 1), (S("EXISTS", "e"), 1, 0), (S("TYPE", "e"), 1, 0),
        (S("OBJECT", "ENCODING", "e"), 1, 0), (S("COPY", "e", "n"), 1, 0),
        (S("EXPIRE", "e", "10"), 0, 0), (S("SETRANGE", "e", "0", "x"), 0, 0),
        # BITOP's sources are read lookups, as the other STORE forms' (Redis 7.0.15).
        (S("BITOP", "AND", "d", "e", "m"), 1, 1), (S("BITOP", "NOT", "d", "m"), 0, 1),
    ])
    def test_hits_and_misses(self, r, cmd, hits, misses):
        r.set("e", "1")

        def stats():
            i = r.info("stats")
            return i["keyspace_hits"], i["keyspace_misses"]

        before = stats()
        try:
            r.execute_command(*cmd)
        except redis.ResponseError:
            pass
        after = stats()
        assert (after[0] - before[0], after[1] - before[1]) == (hits, misses)


# ------------------------------------------------------------------ WATCH


WATCH_CASES = [
    # (watched keys, setup, command, dirtied)
    (["k"], [], S("SET", "k", "v"), True),
    (["k"], [S("SET", "k", "v")], S("SET", "k", "v"), True),
    (["k"], [S("SET", "k", "v")], S("SET", "k", "w", "NX"), False),
    (["k"], [], S("SET", "k", "w", "XX"), False),
    (["k"], [S("SET", "k", "v")], S("SETNX", "k", "w"), False),
    (["k"], [], S("SETNX", "k", "w"), True),
    (["k"], [], S("GETSET", "k", "w"), True),
    (["k"], [], S("SETEX", "k", "10", "w"), True),
    (["k"], [], S("PSETEX", "k", "10000", "w"), True),
    (["b"], [], S("MSET", "a", "1", "b", "2"), True),
    (["b"], [S("SET", "a", "0")], S("MSETNX", "a", "1", "b", "2"), False),
    (["b"], [], S("MSETNX", "a", "1", "b", "2"), True),
    (["k"], [], S("APPEND", "k", "x"), True),
    (["k"], [S("SET", "k", "v")], S("SETRANGE", "k", "0", ""), False),
    (["k"], [S("SET", "k", "v")], S("SETRANGE", "k", "0", "x"), True),
    (["k"], [], S("INCR", "k"), True),
    (["k"], [], S("DECRBY", "k", "3"), True),
    (["k"], [], S("INCRBYFLOAT", "k", "1.5"), True),
    (["k"], [S("SET", "k", "x")], S("INCR", "k"), False),
    (["k"], [S("SET", "k", "v")], S("GETDEL", "k"), True),
    (["k"], [], S("GETDEL", "k"), False),
    (["k"], [S("SET", "k", "v")], S("GETEX", "k"), False),
    (["k"], [S("SET", "k", "v")], S("GETEX", "k", "EX", "10"), True),
    (["k"], [S("SET", "k", "v")], S("GETEX", "k", "PERSIST"), False),
    (["k"], [S("SET", "k", "v", "EX", "10")], S("GETEX", "k", "PERSIST"), True),
    (["k"], [S("SET", "k", "v")], S("GETEX", "k", "PXAT", PAST_MS), True),
    (["k"], [S("SET", "k", "\x00")], S("SETBIT", "k", "0", "1"), True),
    (["k"], [S("SET", "k", "\x00")], S("SETBIT", "k", "0", "0"), False),
    (["k"], [S("SET", "k", "\x00")], S("SETBIT", "k", "20", "0"), True),
    (["k"], [S("SET", "k", "\x00")], S("BITFIELD", "k", "SET", "u8", "0", "1"), True),
    (["k"], [S("SET", "k", "\x00")], S("BITFIELD", "k", "SET", "u8", "0", "0"), False),
    (["k"], [], S("BITFIELD", "k", "OVERFLOW", "FAIL", "INCRBY", "u2", "0", "10"), False),
    (["d"], [S("SET", "s", "x")], S("BITOP", "NOT", "d", "s"), True),
    (["d"], [S("SET", "d", "x")], S("BITOP", "AND", "d", "m"), True),
    (["d"], [], S("BITOP", "AND", "d", "m"), False),
    (["k"], [S("SET", "k", "v")], S("DEL", "k"), True),
    (["k"], [], S("DEL", "k"), False),
    (["k"], [S("SET", "k", "v")], S("UNLINK", "k"), True),
    (["k"], [S("SET", "k", "v")], S("EXPIRE", "k", "10"), True),
    (["k"], [S("SET", "k", "v", "EX", "100")], S("EXPIRE", "k", "10", "NX"), False),
    (["k"], [S("SET", "k", "v")], S("PEXPIRE", "k", "10", "GT"), False),
    (["k"], [], S("EXPIRE", "k", "10"), False),
    (["k"], [S("SET", "k", "v")], S("PEXPIRE", "k", "-1"), True),
    (["k"], [S("SET", "k", "v", "EX", "100")], S("PERSIST", "k"), True),
    (["k"], [S("SET", "k", "v")], S("PERSIST", "k"), False),
    (["a"], [S("SET", "a", "v")], S("RENAME", "a", "b"), True),
    (["b"], [S("SET", "a", "v")], S("RENAME", "a", "b"), True),
    (["a", "b"], [S("SET", "a", "v"), S("SET", "b", "v")], S("RENAMENX", "a", "b"), False),
    (["a"], [S("SET", "a", "v")], S("RENAME", "a", "a"), False),
    (["b"], [S("SET", "a", "v")], S("COPY", "a", "b"), True),
    (["b"], [S("SET", "a", "v"), S("SET", "b", "v")], S("COPY", "a", "b"), False),
    (["b"], [S("SET", "a", "v"), S("SET", "b", "v")], S("COPY", "a", "b", "REPLACE"), True),
    (["a"], [S("SET", "a", "v")], S("MOVE", "a", "1"), True),
    (["a"], [S("SET", "a", "v"), S("SELECT", "1"), S("SET", "a", "w"), S("SELECT", "0")],
     S("MOVE", "a", "1"), False),
]


@pytest.mark.parametrize("watch,setup,cmd,dirty", WATCH_CASES,
                         ids=[" ".join(c[2])[:40] + "/%d" % i for i, c in enumerate(WATCH_CASES)])
def test_watch(server, r, watch, setup, cmd, dirty):
    assert dirties(server, r, watch, cmd, setup) is dirty


def test_watch_other_database(server, r):
    # MOVE and COPY ... DB write a key of another database: its watchers there are told.
    assert dirties(server, r, ["a"], S("MOVE", "a", "1"), [S("SET", "a", "v")], watch_db=1)
    r.flushall()
    assert dirties(server, r, ["b"], S("COPY", "a", "b", "DB", "1"), [S("SET", "a", "v")],
                   watch_db=1)
    r.flushall()
    assert not dirties(server, r, ["b"], S("COPY", "a", "b", "DB", "1"),
                       [S("SET", "a", "v"), S("SELECT", "1"), S("SET", "b", "v"),
                        S("SELECT", "0")], watch_db=1)


@pytest.mark.parametrize("watch,setup,cmd", [
    (["a"], [S("SET", "a", "v")], S("COPY", "a", "b")),
    (["s"], [S("SET", "s", "x")], S("BITOP", "NOT", "d", "s")),
])
def test_watch_sources_untouched(server, r, watch, setup, cmd):
    assert not dirties(server, r, watch, cmd, setup)
