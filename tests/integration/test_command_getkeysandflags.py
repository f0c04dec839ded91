"""COMMAND GETKEYSANDFLAGS: each key of a call with the access flags of the key spec that finds
it, as redis-server 7.0.15 answers (SET and BITFIELD's flags depend on their arguments, SORT
and MIGRATE are answered by their own key finders).

The expected values are Redis's (these tests pass against both targets); the side-by-side test
also starts a redis-server and compares the replies of both servers for many calls.
"""

import pytest

from helpers import assert_err


def keys_and_flags(raw, *call):
    reply = raw.call("COMMAND", "GETKEYSANDFLAGS", *call)
    assert isinstance(reply, list), reply
    return [(k.decode(), sorted(str(f) for f in flags)) for k, flags in reply]


class TestGetKeysAndFlags:
    def test_single_key_write_and_read(self, raw):
        assert keys_and_flags(raw, "get", "k") == [("k", ["RO", "access"])]
        assert keys_and_flags(raw, "incr", "k") == [("k", ["RW", "access", "update"])]
        assert keys_and_flags(raw, "del", "a", "b") == [("a", ["RM", "delete"]),
                                                        ("b", ["RM", "delete"])]

    def test_set_flags_depend_on_get(self, raw):
        assert keys_and_flags(raw, "set", "k", "v") == [("k", ["OW", "update"])]
        assert keys_and_flags(raw, "set", "k", "v", "EX", "10", "get") == \
            [("k", ["RW", "access", "update"])]

    def test_bitfield_flags_depend_on_its_operations(self, raw):
        assert keys_and_flags(raw, "bitfield", "k", "GET", "u8", "0") == [("k", ["RO", "access"])]
        assert keys_and_flags(raw, "bitfield", "k", "GET", "u8", "0", "SET", "u8", "0", "1") == \
            [("k", ["RW", "access", "update"])]
        # A malformed operation is taken as a write, as Redis does.
        assert keys_and_flags(raw, "bitfield", "k", "GET", "u8") == \
            [("k", ["RW", "access", "update"])]

    def test_destination_and_sources(self, raw):
        assert keys_and_flags(raw, "lmove", "a", "b", "left", "right") == \
            [("a", ["RW", "access", "delete"]), ("b", ["RW", "insert"])]
        assert keys_and_flags(raw, "zunionstore", "d", "2", "a", "b") == \
            [("d", ["OW", "update"]), ("a", ["RO", "access"]), ("b", ["RO", "access"])]

    def test_sort_store_and_migrate_keys(self, raw):
        assert keys_and_flags(raw, "sort", "a", "store", "b") == \
            [("a", ["RO", "access"]), ("b", ["OW", "update"])]
        assert keys_and_flags(raw, "migrate", "h", "1", "", "0", "5", "keys", "a", "b") == \
            [("a", ["RW", "access", "delete"]), ("b", ["RW", "access", "delete"])]

    def test_a_long_call_answers_at_once(self, server):
        # Each key's flags are found in one pass over the call; walking the call again for
        # every key (400,000 keys here) takes well over the client's 20 s timeout.
        n = 400000
        args = [a for i in range(n) for a in ("k%d" % i, "v")]
        c = server.raw(timeout=20)
        try:
            reply = c.call("COMMAND", "GETKEYSANDFLAGS", "mset", *args)
        finally:
            c.close()
        assert len(reply) == n
        assert reply[-1][0] == b"k%d" % (n - 1)
        assert sorted(str(f) for f in reply[-1][1]) == ["OW", "update"]

    def test_errors_as_getkeys(self, raw):
        assert_err(raw.call("COMMAND", "GETKEYSANDFLAGS", "nosuch", "a"),
                   "ERR Invalid command specified")
        assert_err(raw.call("COMMAND", "GETKEYSANDFLAGS", "ping", "a"),
                   "ERR The command has no key arguments")
        assert_err(raw.call("COMMAND", "GETKEYSANDFLAGS", "get", "a", "b"),
                   "ERR Invalid number of arguments specified for command")
        assert_err(raw.call("COMMAND", "GETKEYSANDFLAGS", "zunionstore", "d", "x", "a"),
                   "ERR Invalid arguments specified for command")
        assert_err(raw.call("COMMAND", "GETKEYSANDFLAGS", "get"),
                   "ERR wrong number of arguments for 'command|getkeysandflags' command")


class TestGetKeysEdgeCases:
    """COMMAND GETKEYS of calls whose keys are malformed or optional, as Redis 7.0 answers."""

    def test_store_form_with_a_bad_key_count_names_no_key(self, raw):
        for count in ("0", "2", "x", "-1"):
            assert_err(raw.call("COMMAND", "GETKEYS", "zunionstore", "d", count, "a"),
                       "ERR Invalid arguments specified for command")

    def test_optional_keys_answer_an_empty_array(self, raw):
        assert raw.call("COMMAND", "GETKEYS", "eval", "s", "0") == []
        assert raw.call("COMMAND", "GETKEYS", "eval", "s", "3", "a") == []
        assert raw.call("COMMAND", "GETKEYS", "fcall", "f", "2", "a") == []
        assert raw.call("COMMAND", "GETKEYSANDFLAGS", "eval", "s", "0") == []

    def test_xread_with_an_odd_number_of_ids_gets_the_first_half(self, raw):
        assert raw.call("COMMAND", "GETKEYS", "xread", "streams", "a", "b", "0") == [b"a"]
        assert raw.call("COMMAND", "GETKEYS", "xread", "streams", "a", "b", "c", "d", "e") == \
            [b"a", b"b"]
        assert raw.call("COMMAND", "GETKEYS", "xreadgroup", "group", "g", "c", "streams", "a",
                        "b", "0") == [b"a"]


# Calls covering every shape of key spec: index ranges with steps, keywords searched forwards
# and backwards, key counts, variable flags, unknown and incomplete specs, subcommands.
CALLS = [
    ("get", "k"), ("set", "k", "v"), ("set", "k", "v", "GET"), ("set", "k", "v", "nx", "get"),
    ("getex", "k", "persist"), ("getdel", "k"), ("append", "k", "v"), ("mget", "a", "b", "c"),
    ("mset", "a", "1", "b", "2"), ("msetnx", "a", "1", "b", "2"), ("exists", "a", "b"),
    ("del", "a"), ("unlink", "a", "b"), ("touch", "a", "b"), ("type", "a"), ("expire", "a", "1"),
    ("ttl", "a"), ("rename", "a", "b"), ("renamenx", "a", "b"), ("copy", "a", "b"),
    ("move", "a", "1"), ("dump", "a"), ("restore", "a", "0", "x"), ("object", "encoding", "a"),
    ("memory", "usage", "a"), ("lpush", "l", "x"), ("lpop", "l"), ("rpoplpush", "a", "b"),
    ("blmove", "a", "b", "left", "left", "0"), ("blpop", "a", "b", "0"),
    ("lmpop", "2", "a", "b", "left"), ("blmpop", "0", "2", "a", "b", "left"),
    ("lrange", "l", "0", "-1"), ("sadd", "s", "x"), ("smove", "a", "b", "x"),
    ("sinter", "a", "b"), ("sinterstore", "d", "a", "b"), ("sintercard", "2", "a", "b"),
    ("sunionstore", "d", "a"), ("sdiffstore", "d", "a", "b"), ("hset", "h", "f", "v"),
    ("hget", "h", "f"), ("zadd", "z", "1", "m"), ("zrangestore", "d", "z", "0", "-1"),
    ("zunion", "2", "a", "b"), ("zinterstore", "d", "2", "a", "b", "weights", "1", "2"),
    ("zdiffstore", "d", "1", "a"), ("zmpop", "1", "a", "min"), ("bzmpop", "0", "1", "a", "max"),
    ("bzpopmin", "a", "b", "0"), ("bitop", "and", "d", "a", "b"), ("bitcount", "k"),
    ("bitfield", "k", "get", "u8", "0"), ("bitfield", "k", "incrby", "u8", "0", "1"),
    ("bitfield", "k", "overflow", "sat", "get", "u8", "0"), ("bitfield_ro", "k", "get", "u8", "0"),
    ("setbit", "k", "0", "1"), ("pfadd", "h", "a"), ("pfcount", "a", "b"),
    ("pfmerge", "d", "a", "b"), ("geoadd", "g", "0", "0", "m"),
    ("georadius", "g", "0", "0", "1", "km"), ("georadius", "g", "0", "0", "1", "km", "store", "d"),
    ("georadius", "g", "0", "0", "1", "km", "storedist", "d"),
    ("georadiusbymember", "g", "m", "1", "km", "store", "d"),
    ("geosearchstore", "d", "g", "frommember", "m", "byradius", "1", "km"),
    ("sort", "a"), ("sort", "a", "by", "w_*", "get", "o_*", "store", "d"), ("sort_ro", "a"),
    ("xadd", "s", "*", "f", "v"), ("xrange", "s", "-", "+"),
    ("xread", "count", "2", "streams", "s1", "s2", "0", "0"),
    ("xread", "block", "0", "streams", "s1", "0"),
    ("xreadgroup", "group", "g", "c", "streams", "s1", "s2", ">", ">"),
    ("xgroup", "create", "s", "g", "$"), ("xclaim", "s", "g", "c", "0", "0-1"),
    ("eval", "return 1", "2", "a", "b"), ("evalsha_ro", "x" * 40, "1", "a"),
    ("fcall", "f", "1", "a"), ("fcall_ro", "f", "2", "a", "b"),
    ("migrate", "h", "1", "k", "0", "5"), ("migrate", "h", "1", "", "0", "5", "keys", "a", "b"),
    ("migrate", "h", "1", "", "0", "5", "copy", "replace", "keys", "a"),
    ("watch", "a", "b"), ("lcs", "a", "b"), ("incrbyfloat", "k", "1.5"),
    ("lpos", "l", "x"), ("linsert", "l", "before", "a", "b"), ("spop", "s"),
    ("srandmember", "s"), ("hrandfield", "h"), ("zrandmember", "z"), ("expiretime", "a"),
    ("persist", "a"), ("getrange", "k", "0", "1"), ("setrange", "k", "0", "x"),
]


@pytest.mark.dashkv_only  # compares dashkv with redis-server
@pytest.mark.parametrize("call", CALLS, ids=lambda c: " ".join(c)[:40])
def test_same_keys_and_flags_as_redis(raw, redis_beside, call):
    theirs = redis_beside.raw()
    try:
        ref = theirs.call("COMMAND", "GETKEYSANDFLAGS", *call)
        mine = raw.call("COMMAND", "GETKEYSANDFLAGS", *call)
    finally:
        theirs.close()
    norm = lambda reply: (reply if not isinstance(reply, list)
                          else [(k, sorted(f)) for k, f in reply])
    assert norm(mine) == norm(ref)
