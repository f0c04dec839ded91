"""Keyspace notifications and WATCH for the hash, list, set, sorted-set and blocking commands:
the exact events (names, classes, order, and when none is raised) of each write, and which
writes dirty a WATCH (Redis signals only real modifications). Expected values are Redis 7.0.15's
(checked with DASHKV_TEST_TARGET=redis). Tests wait for messages and INFO, never for a time."""

import threading

import pytest
import redis

from helpers import dirties, wait_until

SENTINEL = "kev-sentinel"


def _client(server):
    return redis.Redis(host=server.host, port=server.port, decode_responses=True,
                       socket_timeout=20)


class Events:
    """A PSUBSCRIBE '__key*' connection; collect() returns the events raised since the last
    call as (event, key) pairs, checking that the keyspace and keyevent channels agree."""

    def __init__(self, server):
        self.client = _client(server)
        self.pubsub = self.client.pubsub()
        self.pubsub.psubscribe("__key*")
        self.pubsub.subscribe(SENTINEL)
        for _ in range(2):
            assert self.pubsub.get_message(timeout=10)["type"] in ("psubscribe", "subscribe")

    def collect(self, r):
        # Messages of one publisher arrive in order: the sentinel comes after every event
        # raised before it.
        r.publish(SENTINEL, "end")
        space, event = [], []
        while True:
            m = self.pubsub.get_message(timeout=10)
            assert m is not None, "no sentinel: events so far %r" % event
            if m["type"] == "message" and m["channel"] == SENTINEL:
                break
            assert m["type"] == "pmessage", m
            channel = m["channel"]
            if channel.startswith("__keyspace@0__:"):
                space.append((m["data"], channel[len("__keyspace@0__:"):]))
            else:
                assert channel.startswith("__keyevent@0__:"), channel
                event.append((channel[len("__keyevent@0__:"):], m["data"]))
        assert space == event
        return event

    def close(self):
        self.pubsub.close()
        self.client.close()


@pytest.fixture
def ev(server, r):
    r.config_set("notify-keyspace-events", "KEA")
    e = Events(server)
    yield e
    e.close()
    r.config_set("notify-keyspace-events", "")


def run(r, ev, setup, cmds):
    for c in setup:
        r.execute_command(*c)
    ev.collect(r)
    for c in cmds:
        try:
            r.execute_command(*c)
        except redis.ResponseError:
            pass  # the failed command's events (none) are what is checked
    return ev.collect(r)


# (setup, commands, events): Redis 7.0.15's sequences.
CASES = {
    # hashes
    "hset": ([], [("HSET", "h", "a", "1", "b", "2"), ("HSET", "h", "a", "1"),
                  ("HMSET", "h", "c", "3")],
             [("hset", "h")] * 3),
    "hsetnx": ([], [("HSETNX", "h", "a", "1"), ("HSETNX", "h", "a", "2")], [("hset", "h")]),
    "hdel": ([("HSET", "h", "a", "1", "b", "2")],
             [("HDEL", "h", "x"), ("HDEL", "h", "a", "x"), ("HDEL", "h", "b"), ("HDEL", "h", "b")],
             [("hdel", "h"), ("hdel", "h"), ("del", "h")]),
    "hincrby": ([("HSET", "h", "s", "x")],
                [("HINCRBY", "h", "a", "0"), ("HINCRBYFLOAT", "h", "b", "1.5"),
                 ("HINCRBY", "h", "s", "1"), ("HINCRBYFLOAT", "h", "s", "1")],
                [("hincrby", "h"), ("hincrbyfloat", "h")]),
    "hash-wrongtype": ([("SET", "str", "1")],
                       [("HSET", "str", "a", "1"), ("HDEL", "str", "a")], []),
    # lists
    "push": ([], [("LPUSH", "l", "a", "b"), ("RPUSH", "l", "c"), ("LPUSHX", "m", "a"),
                  ("RPUSHX", "m", "a"), ("RPUSHX", "l", "z"), ("LPUSHX", "l", "y")],
             [("lpush", "l"), ("rpush", "l"), ("rpush", "l"), ("lpush", "l")]),
    "linsert-lset": ([("RPUSH", "l", "a", "b", "c")],
                     [("LINSERT", "l", "BEFORE", "b", "x"), ("LINSERT", "l", "AFTER", "q", "x"),
                      ("LSET", "l", "0", "y"), ("LSET", "l", "99", "y"), ("LINSERT", "m", "BEFORE",
                                                                          "a", "b")],
                     [("linsert", "l"), ("lset", "l")]),
    "pop": ([("RPUSH", "l", "a", "b", "c", "d")],
            [("LPOP", "l"), ("LPOP", "l", "0"), ("RPOP", "l", "2"), ("RPOP", "m"), ("LPOP", "l")],
            [("lpop", "l"), ("rpop", "l"), ("lpop", "l"), ("del", "l")]),
    "ltrim": ([("RPUSH", "l", "a", "b", "c")],
              [("LTRIM", "l", "0", "-1"), ("LTRIM", "m", "0", "1"), ("LTRIM", "l", "5", "10")],
              [("ltrim", "l"), ("ltrim", "l"), ("del", "l")]),
    "lrem": ([("RPUSH", "l", "a", "b", "a")],
             [("LREM", "l", "0", "q"), ("LREM", "l", "0", "a"), ("LREM", "l", "0", "b")],
             [("lrem", "l"), ("lrem", "l"), ("del", "l")]),
    "lmove": ([("RPUSH", "{t}s", "a", "b")],
              [("LMOVE", "{t}s", "{t}d", "LEFT", "RIGHT"), ("RPOPLPUSH", "{t}s", "{t}d"),
               ("RPOPLPUSH", "{t}s", "{t}d")],
              [("rpush", "{t}d"), ("lpop", "{t}s"), ("lpush", "{t}d"), ("rpop", "{t}s"),
               ("del", "{t}s")]),
    "lmove-same-key": ([("RPUSH", "s", "a")], [("RPOPLPUSH", "s", "s")],
                       [("lpush", "s"), ("rpop", "s")]),
    "lmove-wrongtype": ([("RPUSH", "s", "a"), ("SET", "str", "1")],
                        [("LMOVE", "s", "str", "LEFT", "LEFT")], []),
    "lmpop": ([("RPUSH", "{t}b", "a", "b")],
              [("LMPOP", "2", "{t}a", "{t}b", "RIGHT", "COUNT", "1"),
               ("LMPOP", "2", "{t}a", "{t}b", "LEFT", "COUNT", "5"),
               ("LMPOP", "1", "{t}b", "LEFT")],
              [("rpop", "{t}b"), ("lpop", "{t}b"), ("del", "{t}b")]),
    # sets
    "sadd-srem": ([], [("SADD", "s", "a", "b"), ("SADD", "s", "a"), ("SREM", "s", "x"),
                       ("SREM", "s", "a", "x"), ("SREM", "s", "b")],
                  [("sadd", "s"), ("srem", "s"), ("srem", "s"), ("del", "s")]),
    "spop": ([("SADD", "s", "a", "b", "c")],
             [("SPOP", "s"), ("SPOP", "s", "0"), ("SPOP", "s", "1"), ("SPOP", "m"),
              ("SADD", "s", "x"), ("SPOP", "s", "5")],
             [("spop", "s"), ("spop", "s"), ("sadd", "s"), ("spop", "s"), ("del", "s")]),
    "smove": ([("SADD", "{t}s", "a", "b"), ("SADD", "{t}d", "b")],
              [("SMOVE", "{t}s", "{t}d", "a"), ("SMOVE", "{t}s", "{t}d", "x"),
               ("SMOVE", "{t}d", "{t}d", "a"), ("SMOVE", "{t}s", "{t}d", "b")],
              [("srem", "{t}s"), ("sadd", "{t}d"), ("srem", "{t}s"), ("del", "{t}s")]),
    "smove-new-destination": ([("SADD", "{t}s", "a")], [("SMOVE", "{t}s", "{t}n", "a")],
                              [("srem", "{t}s"), ("del", "{t}s"), ("sadd", "{t}n")]),
    "set-store": ([("SADD", "{t}a", "1", "2"), ("SADD", "{t}b", "2"), ("SET", "{t}str", "x")],
                  [("SINTERSTORE", "{t}d", "{t}a", "{t}b"), ("SUNIONSTORE", "{t}d", "{t}a"),
                   ("SDIFFSTORE", "{t}d", "{t}b", "{t}a"), ("SDIFFSTORE", "{t}d", "{t}b", "{t}a"),
                   ("SINTERSTORE", "{t}d", "{t}a", "{t}none"),
                   ("SUNIONSTORE", "{t}str", "{t}a"), ("SINTERSTORE", "{t}str", "{t}none")],
                  [("sinterstore", "{t}d"), ("sunionstore", "{t}d"), ("del", "{t}d"),
                   ("sunionstore", "{t}str"), ("del", "{t}str")]),
    # sorted sets
    "zadd": ([], [("ZADD", "z", "1", "a"), ("ZADD", "z", "1", "a"), ("ZADD", "z", "XX", "1", "b"),
                  ("ZADD", "m", "XX", "1", "b"), ("ZADD", "z", "NX", "5", "a"),
                  ("ZADD", "z", "GT", "0", "a"), ("ZADD", "z", "CH", "2", "a"),
                  ("ZADD", "z", "INCR", "0", "a"), ("ZADD", "z", "INCR", "2", "a"),
                  ("ZINCRBY", "z", "0", "a"), ("ZINCRBY", "z", "1", "b")],
             [("zadd", "z"), ("zadd", "z"), ("zincr", "z"), ("zincr", "z")]),
    "zrem": ([("ZADD", "z", "1", "a", "2", "b", "3", "c", "4", "d")],
             [("ZREM", "z", "x"), ("ZREM", "z", "a"), ("ZREMRANGEBYSCORE", "z", "9", "10"),
              ("ZREMRANGEBYSCORE", "z", "2", "2"), ("ZREMRANGEBYLEX", "z", "[x", "[y"),
              ("ZREMRANGEBYLEX", "z", "[c", "[c"), ("ZREMRANGEBYRANK", "z", "5", "6"),
              ("ZREMRANGEBYRANK", "z", "0", "0")],
             [("zrem", "z"), ("zremrangebyscore", "z"), ("zremrangebylex", "z"),
              ("zremrangebyrank", "z"), ("del", "z")]),
    "zpop": ([("ZADD", "z", "1", "a", "2", "b", "3", "c")],
             [("ZPOPMIN", "z", "0"), ("ZPOPMIN", "z"), ("ZPOPMAX", "m"), ("ZPOPMAX", "z", "5")],
             [("zpopmin", "z"), ("zpopmax", "z"), ("del", "z")]),
    "zmpop": ([("ZADD", "z", "1", "a", "2", "b")],
              [("ZMPOP", "2", "q", "z", "MAX", "COUNT", "1"), ("ZMPOP", "1", "q", "MIN"),
               ("ZMPOP", "1", "z", "MIN")],
              [("zpopmax", "z"), ("zpopmin", "z"), ("del", "z")]),
    "zset-store": ([("ZADD", "{t}a", "1", "x", "2", "y")],
                   [("ZUNIONSTORE", "{t}d", "1", "{t}a"),
                    ("ZINTERSTORE", "{t}d", "2", "{t}a", "{t}q"),
                    ("ZINTERSTORE", "{t}d", "2", "{t}a", "{t}q"),
                    ("ZDIFFSTORE", "{t}d", "1", "{t}a"),
                    ("ZRANGESTORE", "{t}e", "{t}a", "0", "0"),
                    ("ZRANGESTORE", "{t}e", "{t}a", "5", "6"),
                    ("ZRANGESTORE", "{t}e", "{t}missing", "0", "-1")],
                   [("zunionstore", "{t}d"), ("del", "{t}d"), ("zdiffstore", "{t}d"),
                    ("zrangestore", "{t}e"), ("del", "{t}e")]),
    # blocking commands that find their data at once
    "blocking-at-once": ([("RPUSH", "{t}l", "a", "b"), ("ZADD", "{t}z", "1", "a", "2", "b")],
                         [("BLPOP", "{t}l", "0"), ("BLMOVE", "{t}l", "{t}d", "RIGHT", "LEFT", "0"),
                          ("BZPOPMIN", "{t}z", "0"), ("BZMPOP", "0", "1", "{t}z", "MAX"),
                          ("BLMPOP", "0", "1", "{t}d", "LEFT")],
                         [("lpop", "{t}l"), ("lpush", "{t}d"), ("rpop", "{t}l"), ("del", "{t}l"),
                          ("zpopmin", "{t}z"), ("zpopmax", "{t}z"), ("del", "{t}z"),
                          ("lpop", "{t}d"), ("del", "{t}d")]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_events(r, ev, name):
    setup, cmds, expected = CASES[name]
    assert run(r, ev, setup, cmds) == expected


# Destinations on both shards of a 2-thread server (some of them differ from the source's).
DESTINATIONS = ["dst:%d" % i for i in range(6)]


def test_lmove_across_shards_keeps_redis_order(r, ev):
    for d in DESTINATIONS:
        r.rpush("src", "a", "b")
        ev.collect(r)
        assert r.lmove("src", d, "LEFT", "RIGHT") == "a"
        assert r.rpoplpush("src", d) == "b"
        assert ev.collect(r) == [("rpush", d), ("lpop", "src"), ("lpush", d), ("rpop", "src"),
                                 ("del", "src")]
        assert r.lrange(d, 0, -1) == ["b", "a"]


def test_smove_and_stores_across_shards(r, ev):
    for d in DESTINATIONS:
        r.sadd("src", "a")
        r.zadd("zsrc", {"a": 1})
        ev.collect(r)
        assert r.smove("src", d, "a") == 1
        assert r.execute_command("SUNIONSTORE", d + ":s", d) == 1
        assert r.execute_command("ZUNIONSTORE", d + ":z", 1, "zsrc") == 1
        assert r.execute_command("ZRANGESTORE", d + ":r", "zsrc", 0, -1) == 1
        assert r.execute_command("SINTERSTORE", d + ":s", d, "none") == 0
        assert ev.collect(r) == [("srem", "src"), ("del", "src"), ("sadd", d),
                                 ("sunionstore", d + ":s"), ("zunionstore", d + ":z"),
                                 ("zrangestore", d + ":r"), ("del", d + ":s")]


def test_new_event_comes_first(r, server):
    r.config_set("notify-keyspace-events", "KEAn")
    e = Events(server)
    try:
        r.hset("h", "a", "1")
        r.rpush("{t}s", "a")
        r.lmove("{t}s", "{t}d", "LEFT", "RIGHT")
        r.sadd("a", "1")
        r.sunionstore("st", "a")
        r.sunionstore("st", "a")
        r.zincrby("z", 1, "a")
        assert e.collect(r) == [
            ("new", "h"), ("hset", "h"), ("new", "{t}s"), ("rpush", "{t}s"), ("new", "{t}d"),
            ("rpush", "{t}d"), ("lpop", "{t}s"), ("del", "{t}s"), ("new", "a"), ("sadd", "a"),
            ("new", "st"), ("sunionstore", "st"), ("sunionstore", "st"), ("new", "z"),
            ("zincr", "z")]
    finally:
        e.close()
        r.config_set("notify-keyspace-events", "")


def blocked_clients(r):
    return int(r.info("clients")["blocked_clients"])


def serve_blocked(server, r, block_cmd, push_cmd):
    """Runs block_cmd on its own connection, waits until it blocks, runs push_cmd; returns the
    blocked command's reply."""
    other = _client(server)
    result = {}
    t = threading.Thread(target=lambda: result.setdefault("reply",
                                                          other.execute_command(*block_cmd)))
    t.start()
    try:
        wait_until(lambda: blocked_clients(r) == 1, timeout=10, what="a blocked client")
        r.execute_command(*push_cmd)
    finally:
        t.join(20)
        other.close()
    assert not t.is_alive()
    return result["reply"]


BLOCKED_CASES = [
    (("BLPOP", "l", "0"), ("RPUSH", "l", "a"), [("rpush", "l"), ("lpop", "l"), ("del", "l")]),
    (("BRPOP", "l", "0"), ("RPUSH", "l", "a", "b"), [("rpush", "l"), ("rpop", "l")]),
    (("BLMPOP", "0", "1", "l", "LEFT", "COUNT", "5"), ("RPUSH", "l", "a", "b"),
     [("rpush", "l"), ("lpop", "l"), ("del", "l")]),
    (("BLMOVE", "{t}l", "{t}d", "LEFT", "RIGHT", "0"), ("RPUSH", "{t}l", "a"),
     [("rpush", "{t}l"), ("rpush", "{t}d"), ("lpop", "{t}l"), ("del", "{t}l")]),
    (("BZPOPMIN", "z", "0"), ("ZADD", "z", "1", "a"),
     [("zadd", "z"), ("zpopmin", "z"), ("del", "z")]),
    (("BZMPOP", "0", "1", "z", "MAX", "COUNT", "5"), ("ZADD", "z", "1", "a", "2", "b"),
     [("zadd", "z"), ("zpopmax", "z"), ("del", "z")]),
] + [
    # BLMOVE with the destination on either shard (served across shards by a retry)
    (("BLMOVE", "src", d, "RIGHT", "LEFT", "0"), ("RPUSH", "src", "a"),
     [("rpush", "src"), ("lpush", d), ("rpop", "src"), ("del", "src")]) for d in DESTINATIONS
]


@pytest.mark.parametrize("block_cmd,push_cmd,expected", BLOCKED_CASES,
                         ids=lambda v: " ".join(v) if isinstance(v, tuple) else None)
def test_blocked_command_served_later(server, r, ev, block_cmd, push_cmd, expected):
    serve_blocked(server, r, block_cmd, push_cmd)
    assert ev.collect(r) == expected


# (setup, watched key, command, dirtied)
WATCH_CASES = [
    # writes that change their key dirty the watch
    ([], "h", ("HSET", "h", "a", "1"), True),
    ([("HSET", "h", "a", "1")], "h", ("HSET", "h", "a", "1"), True),  # same value: Redis signals
    ([], "h", ("HSETNX", "h", "a", "1"), True),
    ([("HSET", "h", "a", "1", "b", "2")], "h", ("HDEL", "h", "a"), True),
    ([("HSET", "h", "a", "1")], "h", ("HINCRBY", "h", "a", "0"), True),
    ([], "l", ("LPUSH", "l", "a"), True),
    ([("RPUSH", "l", "a")], "l", ("LTRIM", "l", "0", "-1"), True),  # no-op trim: Redis signals
    ([("RPUSH", "l", "a")], "l", ("LSET", "l", "0", "a"), True),
    ([("RPUSH", "l", "a", "b")], "l", ("RPOP", "l"), True),
    ([("RPUSH", "{t}s", "a")], "{t}d", ("LMOVE", "{t}s", "{t}d", "LEFT", "LEFT"), True),
    ([("RPUSH", "{t}s", "a")], "{t}s", ("LMOVE", "{t}s", "{t}d", "LEFT", "LEFT"), True),
    ([], "s", ("SADD", "s", "a"), True),
    ([("SADD", "s", "a", "b")], "s", ("SPOP", "s"), True),
    ([("SADD", "{t}s", "a")], "{t}d", ("SMOVE", "{t}s", "{t}d", "a"), True),
    ([("SADD", "{t}a", "1")], "{t}d", ("SUNIONSTORE", "{t}d", "{t}a"), True),
    ([("SADD", "{t}d", "1")], "{t}d", ("SINTERSTORE", "{t}d", "{t}none"), True),
    ([], "z", ("ZADD", "z", "1", "a"), True),
    ([("ZADD", "z", "1", "a")], "z", ("ZINCRBY", "z", "1", "a"), True),
    ([("ZADD", "z", "1", "a", "2", "b")], "z", ("ZPOPMIN", "z"), True),
    ([("ZADD", "z", "1", "a")], "z", ("ZREMRANGEBYRANK", "z", "0", "0"), True),
    ([("ZADD", "{t}a", "1", "a")], "{t}d", ("ZRANGESTORE", "{t}d", "{t}a", "0", "-1"), True),
    # writes that leave their key as it was do not
    ([("SADD", "s", "a")], "s", ("SADD", "s", "a"), False),
    ([("SADD", "s", "a")], "s", ("SREM", "s", "x"), False),
    ([("SADD", "s", "a")], "s", ("SPOP", "s", "0"), False),
    ([("SADD", "s", "a")], "s", ("SMOVE", "s", "s", "a"), False),
    ([("SADD", "{t}s", "a")], "{t}s", ("SMOVE", "{t}s", "{t}d", "x"), False),
    ([("SADD", "{t}a", "1")], "{t}d", ("SINTERSTORE", "{t}d", "{t}a", "{t}none"), False),
    ([("HSET", "h", "a", "1")], "h", ("HSETNX", "h", "a", "2"), False),
    ([("HSET", "h", "a", "1")], "h", ("HDEL", "h", "x"), False),
    ([("HSET", "h", "a", "x")], "h", ("HINCRBY", "h", "a", "1"), False),  # error
    ([("ZADD", "z", "1", "a")], "z", ("ZADD", "z", "XX", "1", "b"), False),
    ([], "z", ("ZADD", "z", "XX", "1", "b"), False),
    ([("ZADD", "z", "1", "a")], "z", ("ZADD", "z", "1", "a"), False),
    ([("ZADD", "z", "1", "a")], "z", ("ZINCRBY", "z", "0", "a"), False),
    ([("ZADD", "z", "1", "a")], "z", ("ZREM", "z", "x"), False),
    ([("ZADD", "z", "1", "a")], "z", ("ZPOPMIN", "z", "0"), False),
    ([("ZADD", "z", "1", "a")], "z", ("ZREMRANGEBYSCORE", "z", "5", "6"), False),
    ([], "z", ("ZMPOP", "1", "z", "MIN"), False),
    ([], "l", ("LPUSHX", "l", "a"), False),
    ([("RPUSH", "l", "a")], "l", ("LINSERT", "l", "BEFORE", "x", "y"), False),
    ([("RPUSH", "l", "a")], "l", ("LREM", "l", "0", "x"), False),
    ([("RPUSH", "l", "a")], "l", ("LPOP", "l", "0"), False),
    ([], "l", ("LMPOP", "1", "l", "LEFT"), False),
    ([("SET", "l", "x")], "l", ("LPUSH", "l", "a"), False),  # WRONGTYPE
]


@pytest.mark.parametrize("setup,key,cmd,dirtied", WATCH_CASES,
                         ids=lambda v: " ".join(v) if isinstance(v, tuple) else None)
def test_watch(server, r, setup, key, cmd, dirtied):
    assert dirties(server, r, [key], cmd, setup) == dirtied


@pytest.mark.parametrize("block_cmd,push_cmd,watched", [
    (("BLMOVE", "{t}l", "{t}d", "LEFT", "RIGHT", "0"), ("RPUSH", "{t}l", "a"), "{t}d"),
    (("BLMOVE", "l", "dst:1", "LEFT", "RIGHT", "0"), ("RPUSH", "l", "a"), "dst:1"),
    (("BLMOVE", "l", "dst:2", "LEFT", "RIGHT", "0"), ("RPUSH", "l", "a"), "dst:2"),
    (("BLPOP", "l", "0"), ("RPUSH", "l", "a"), "l"),
    (("BZPOPMIN", "z", "0"), ("ZADD", "z", "1", "a"), "z"),
])
def test_blocked_serve_dirties_watch(server, r, block_cmd, push_cmd, watched):
    # The watched destination is written only by the serve of the blocked command.
    assert dirties(server, r, [watched], push_cmd,
                   run=lambda: serve_blocked(server, r, block_cmd, push_cmd))


def test_no_events_when_off(r, server):
    r.config_set("notify-keyspace-events", "")
    e = Events(server)
    try:
        r.hset("h", "a", "1")
        r.rpush("l", "a")
        r.lpop("l")
        r.sadd("s", "a")
        r.zadd("z", {"a": 1})
        r.zpopmin("z")
        assert e.collect(r) == []
    finally:
        e.close()


# Redis 7.0.15 looks up the sources of the STORE forms as reads: each counts a keyspace hit or
# miss, and a missing one raises `keymiss`. The sources of SMOVE and LMOVE are looked up as
# writes: no hit, no miss. Keys without a tag: with --threads 2 some commands span shards.
# (command, keyspace hits, keyspace misses, keys that raise keymiss)
SOURCE_LOOKUPS = [
    (("SUNIONSTORE", "lk:d", "lk:s", "lk:miss"), 1, 1, ["lk:miss"]),
    (("SINTERSTORE", "lk:d", "lk:s", "lk:miss"), 1, 1, ["lk:miss"]),
    (("SINTERSTORE", "lk:d", "lk:miss", "lk:s"), 1, 1, ["lk:miss"]),
    (("SDIFFSTORE", "lk:d", "lk:s", "lk:miss"), 1, 1, ["lk:miss"]),
    (("SINTERCARD", "2", "lk:s", "lk:miss"), 1, 1, ["lk:miss"]),
    (("SMOVE", "lk:s", "lk:d", "a"), 0, 0, []),
    (("SMOVE", "lk:miss", "lk:d", "a"), 0, 0, []),
    (("ZUNIONSTORE", "lk:d", "2", "lk:z", "lk:miss"), 1, 1, ["lk:miss"]),
    (("ZINTERSTORE", "lk:d", "2", "lk:z", "lk:miss"), 1, 1, ["lk:miss"]),
    (("ZDIFFSTORE", "lk:d", "2", "lk:z", "lk:miss"), 1, 1, ["lk:miss"]),
    (("ZINTERCARD", "2", "lk:z", "lk:miss"), 1, 1, ["lk:miss"]),
    (("ZRANGESTORE", "lk:d", "lk:z", "0", "-1"), 1, 0, []),
    (("ZRANGESTORE", "lk:d", "lk:miss", "0", "-1"), 0, 1, ["lk:miss"]),
    (("LMOVE", "lk:l", "lk:d", "LEFT", "LEFT"), 0, 0, []),
    (("LMOVE", "lk:miss", "lk:d", "LEFT", "LEFT"), 0, 0, []),
    (("RPOPLPUSH", "lk:miss", "lk:d"), 0, 0, []),
]


@pytest.mark.parametrize("cmd,hits,misses,keymiss", SOURCE_LOOKUPS,
                         ids=lambda v: " ".join(v) if isinstance(v, tuple) else None)
def test_source_lookups(server, r, cmd, hits, misses, keymiss):
    r.sadd("lk:s", "a", "b")
    r.zadd("lk:z", {"a": 1})
    r.rpush("lk:l", "a")

    def stats():
        info = r.info("stats")
        return info["keyspace_hits"], info["keyspace_misses"]

    r.config_set("notify-keyspace-events", "KEm")
    e = Events(server)
    try:
        before = stats()
        r.execute_command(*cmd)
        after = stats()
        assert (after[0] - before[0], after[1] - before[1]) == (hits, misses)
        assert e.collect(r) == [("keymiss", k) for k in keymiss]
    finally:
        e.close()
        r.config_set("notify-keyspace-events", "")
