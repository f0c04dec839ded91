"""Command metadata: subcommand tables of the container commands (CLIENT, CONFIG, COMMAND,
MEMORY, PUBSUB, OBJECT) as COMMAND INFO / DOCS / LIST / GETKEYS show them, subcommand
dispatch errors, and maxmemory-policy.

The expected values are redis-server 7.0.15's (these tests pass against both targets). With
dashkv as the target, TestSideBySide also starts a redis-server and compares the replies of
both servers directly, entry by entry.
"""

import os
import shutil

import pytest

from helpers import assert_err
from resp_client import Map, Set

# Subcommands dashkv implements that Redis 7.0 does not have (7.2 added them; clients send
# CLIENT SETINFO when they connect).
NEWER_THAN_7_0 = {b"client|setinfo", b"client|no-touch"}

CONTAINERS = ["client", "config", "command", "memory", "pubsub", "object"]


def info_of(raw, name):
    reply = raw.call("COMMAND", "INFO", name)
    assert len(reply) == 1
    return reply[0]


class TestCommandInfo:
    def test_container_lists_its_subcommands(self, raw):
        info = info_of(raw, "client")
        assert len(info) == 10
        assert info[:6] == [b"client", -2, [], 0, 0, 0]
        assert info[6] == ["@slow"]
        subs = info[9]
        names = {s[0] for s in subs}
        assert {b"client|list", b"client|kill", b"client|id", b"client|getname",
                b"client|setname", b"client|info", b"client|unblock", b"client|help"} <= names
        for s in subs:
            assert len(s) == 10
            assert s[9] == []

    def test_subcommand_by_full_name(self, raw):
        info = info_of(raw, "CLIENT|LIST")
        assert info[:6] == [b"client|list", -2, ["admin", "noscript", "loading", "stale"],
                            0, 0, 0]
        assert info[6] == ["@admin", "@slow", "@dangerous", "@connection"]
        assert info[7] == [b"nondeterministic_output"]

    def test_unknown_full_names_are_null(self, raw):
        assert raw.call("COMMAND", "INFO", "client|nosuch", "get|x", "client|list|x",
                        "client|") == [None, None, None, None]

    def test_subcommand_with_a_key(self, raw):
        info = info_of(raw, "object|encoding")
        assert info[:6] == [b"object|encoding", 3, ["readonly"], 2, 2, 1]
        assert info[7] == [b"nondeterministic_output"]
        assert info[8] == [[b"flags", ["RO"],
                            b"begin_search", [b"type", b"index", b"spec", [b"index", 2]],
                            b"find_keys", [b"type", b"range", b"spec",
                                           [b"lastkey", 0, b"keystep", 1, b"limit", 0]]]]
        usage = info_of(raw, "memory|usage")
        assert usage[:7] == [b"memory|usage", -3, ["readonly"], 2, 2, 1, ["@read", "@slow"]]

    def test_resp3_types(self, raw):
        raw.call("HELLO", "3")
        info = info_of(raw, "object")
        assert isinstance(info[2], Set) and isinstance(info[6], Set)
        assert isinstance(info[7], Set) and isinstance(info[8], Set)
        assert type(info[9]) is list  # the subcommands: an array when there are some
        enc = [s for s in info[9] if s[0] == b"object|encoding"][0]
        assert isinstance(enc[8][0], Map)
        assert isinstance(enc[9], Set) and enc[9] == []

    @pytest.mark.parametrize("container", CONTAINERS)
    def test_containers_shape(self, raw, container):
        info = info_of(raw, container)
        assert info[0] == container.encode()
        prefix = container.encode() + b"|"
        assert info[9] and all(s[0].startswith(prefix) for s in info[9])

    def test_debug_is_one_command(self, raw):
        info = info_of(raw, "debug")
        assert info[:6] == [b"debug", -2, ["admin", "noscript", "loading", "stale"], 0, 0, 0]
        assert info[9] == []


class TestCommandDocsListCount:
    def test_docs_of_a_container(self, raw):
        reply = raw.call("COMMAND", "DOCS", "pubsub")
        assert reply[0] == b"pubsub"
        doc = dict(zip(reply[1][::2], reply[1][1::2]))
        assert doc[b"group"] == b"pubsub"
        subs = dict(zip(doc[b"subcommands"][::2], doc[b"subcommands"][1::2]))
        assert set(subs) == {b"pubsub|channels", b"pubsub|numpat", b"pubsub|numsub",
                             b"pubsub|shardchannels", b"pubsub|shardnumsub", b"pubsub|help"}
        channels = dict(zip(subs[b"pubsub|channels"][::2], subs[b"pubsub|channels"][1::2]))
        assert channels[b"group"] == b"pubsub" and channels[b"since"] == b"2.8.0"

    def test_docs_of_a_subcommand(self, raw):
        reply = raw.call("COMMAND", "DOCS", "config|get", "config|nosuch")
        assert reply[0] == b"config|get" and len(reply) == 2

    def test_list_names_subcommands_count_does_not(self, raw):
        count = raw.call("COMMAND", "COUNT")
        names = raw.call("COMMAND", "LIST")
        assert len(raw.call("COMMAND")) == count
        subs = [n for n in names if b"|" in n]
        assert len(names) == count + len(subs)
        assert b"client|list" in names and b"config|get" in names
        assert sorted(raw.call("COMMAND", "LIST", "FILTERBY", "PATTERN", "config|*")) == [
            b"config|get", b"config|help", b"config|resetstat", b"config|rewrite",
            b"config|set"]

    def test_getkeys_of_subcommands(self, raw):
        assert raw.call("COMMAND", "GETKEYS", "object", "encoding", "k") == [b"k"]
        assert raw.call("COMMAND", "GETKEYS", "memory", "usage", "k") == [b"k"]
        assert_err(raw.call("COMMAND", "GETKEYS", "client", "list", "x"),
                   "ERR The command has no key arguments")
        assert_err(raw.call("COMMAND", "GETKEYS", "object", "foo", "k"),
                   "ERR Invalid command specified")
        assert_err(raw.call("COMMAND", "GETKEYS", "client|list", "a"),
                   "ERR Invalid command specified")


class TestSubcommandDispatch:
    @pytest.mark.parametrize("args,text", [
        (("CLIENT", "foo"), "ERR unknown subcommand 'foo'. Try CLIENT HELP."),
        (("client", "KILL"), "ERR wrong number of arguments for 'client|kill' command"),
        (("CLIENT", "ID", "x"), "ERR wrong number of arguments for 'client|id' command"),
        (("CLIENT", "HELP", "x"), "ERR wrong number of arguments for 'client|help' command"),
        (("CLIENT", "UNBLOCK", "1", "TIMEOUT", "x"),
         "ERR unknown subcommand or wrong number of arguments for 'UNBLOCK'. Try CLIENT HELP."),
        (("CLIENT",), "ERR wrong number of arguments for 'client' command"),
        (("config", "foo"), "ERR unknown subcommand 'foo'. Try CONFIG HELP."),
        (("CONFIG", "GET"), "ERR wrong number of arguments for 'config|get' command"),
        (("CONFIG", "SET", "a"), "ERR wrong number of arguments for 'config|set' command"),
        (("CONFIG", "RESETSTAT", "x"),
         "ERR wrong number of arguments for 'config|resetstat' command"),
        (("OBJECT", "foo"), "ERR unknown subcommand 'foo'. Try OBJECT HELP."),
        (("OBJECT", "ENCODING"), "ERR wrong number of arguments for 'object|encoding' command"),
        (("OBJECT", "HELP", "x"), "ERR wrong number of arguments for 'object|help' command"),
        (("MEMORY", "USAGE"), "ERR wrong number of arguments for 'memory|usage' command"),
        (("memory", "foo"), "ERR unknown subcommand 'foo'. Try MEMORY HELP."),
        (("MEMORY", "HELP", "x"), "ERR wrong number of arguments for 'memory|help' command"),
        (("PUBSUB", "foo"), "ERR unknown subcommand 'foo'. Try PUBSUB HELP."),
        (("PUBSUB", "NUMPAT", "x"), "ERR wrong number of arguments for 'pubsub|numpat' command"),
        (("PUBSUB", "CHANNELS", "a", "b"),
         "ERR unknown subcommand or wrong number of arguments for 'CHANNELS'. Try PUBSUB HELP."),
        (("COMMAND", "foo"), "ERR unknown subcommand 'foo'. Try COMMAND HELP."),
        (("COMMAND", "GETKEYS", "get"),
         "ERR wrong number of arguments for 'command|getkeys' command"),
        (("DEBUG", "foo"),
         "ERR unknown subcommand or wrong number of arguments for 'foo'. Try DEBUG HELP."),
        (("DEBUG", "OBJECT"),
         "ERR unknown subcommand or wrong number of arguments for 'OBJECT'. Try DEBUG HELP."),
        (("DEBUG", "HELP", "x"),
         "ERR unknown subcommand or wrong number of arguments for 'HELP'. Try DEBUG HELP."),
        # The subcommand is quoted up to 128 bytes.
        (("object", "x" * 200), "ERR unknown subcommand '%s'. Try OBJECT HELP." % ("x" * 128)),
        (("CLIENT", "x" * 200), "ERR unknown subcommand '%s'. Try CLIENT HELP." % ("x" * 128)),
        (("debug", "x" * 200),
         "ERR unknown subcommand or wrong number of arguments for '%s'. Try DEBUG HELP."
         % ("x" * 128)),
    ])
    def test_errors(self, raw, args, text):
        assert_err(raw.call(*args), text)

    def test_subcommand_stats(self, raw):
        raw.call("CONFIG", "RESETSTAT")
        raw.call("CONFIG", "GET", "hz")
        raw.call("CONFIG", "SET", "a")  # refused: its arity
        raw.call("CLIENT", "nosuch")  # refused: no such subcommand, counted nowhere
        stats = raw.call("INFO", "commandstats").decode()
        lines = {l.split(":")[0]: l.split(":")[1] for l in stats.splitlines() if ":" in l}
        assert lines["cmdstat_config|get"].startswith("calls=1,")
        assert lines["cmdstat_config|set"].startswith("calls=0,")
        assert "rejected_calls=1," in lines["cmdstat_config|set"]
        assert "cmdstat_config" not in lines and "cmdstat_client" not in lines

    def test_client_list_names_the_subcommand(self, raw, raw_factory):
        assert b" cmd=client|info " in raw.call("CLIENT", "INFO")
        my_id = raw.call("CLIENT", "ID")
        other = raw_factory()
        line = other.call("CLIENT", "LIST", "ID", str(my_id))
        assert b" cmd=client|id " in line
        raw.call("DEBUG", "HELP")  # DEBUG is one command: no subcommand in cmd=
        assert b" cmd=debug " in other.call("CLIENT", "LIST", "ID", str(my_id))

    def test_subscribed_mode_names_the_subcommand(self, raw):
        raw.call("SUBSCRIBE", "ch")
        assert_err(raw.call("CLIENT", "ID"),
                   "ERR Can't execute 'client|id': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / "
                   "PING / QUIT / RESET are allowed in this context")
        assert raw.call("PING") == [b"pong", b""]
        assert raw.call("RESET") == "RESET"

    def test_multi_queues_subcommands_and_runs_control_commands(self, raw):
        assert raw.call("MULTI") == "OK"
        assert raw.call("CLIENT", "ID") == "QUEUED"
        assert raw.call("CONFIG", "GET", "hz") == "QUEUED"
        assert raw.call("SELECT", "3") == "QUEUED"
        assert raw.call("SET", "k", "v") == "QUEUED"
        reply = raw.call("EXEC")
        assert isinstance(reply[0], int)
        assert reply[1] == [b"hz", b"10"]
        assert reply[2:] == ["OK", "OK"]
        assert raw.call("GET", "k") == b"v"  # the SELECT inside EXEC stuck
        raw.call("SELECT", "0")
        assert raw.call("EXISTS", "k") == 0


class TestMaxmemoryPolicy:
    def test_set_get_and_error(self, raw):
        try:
            assert raw.call("CONFIG", "SET", "maxmemory-policy", "ALLKEYS-LRU") == "OK"
            assert raw.call("CONFIG", "GET", "maxmemory-policy") == [b"maxmemory-policy",
                                                                    b"allkeys-lru"]
            assert_err(raw.call("CONFIG", "SET", "maxmemory-policy", "foo"),
                       "ERR CONFIG SET failed (possibly related to argument 'maxmemory-policy')"
                       " - argument(s) must be one of the following: volatile-lru, "
                       "volatile-lfu, volatile-random, volatile-ttl, allkeys-lru, allkeys-lfu, "
                       "allkeys-random, noeviction")
            assert raw.call("CONFIG", "GET", "maxmemory-policy")[1] == b"allkeys-lru"
            assert b"maxmemory_policy:allkeys-lru" in raw.call("INFO", "memory")
        finally:
            raw.call("CONFIG", "SET", "maxmemory-policy", "noeviction")


def _normalize(v):
    """A comparable form of a reply: sets sorted, types kept."""
    if isinstance(v, Set):
        return ("set", sorted((_normalize(x) for x in v), key=repr))
    if isinstance(v, Map):
        return ("map", sorted(((_normalize(k), _normalize(x)) for k, x in v), key=repr))
    if isinstance(v, list):
        return ("array", [_normalize(x) for x in v])
    return (type(v).__name__, v)


def _info_without_subcommands(info):
    return info[:9]


@pytest.mark.dashkv_only
@pytest.mark.skipif(shutil.which(os.environ.get("REDIS_SERVER_BIN", "redis-server")) is None,
                    reason="redis-server not installed")
class TestSideBySide:
    """dashkv's replies against a live redis-server 7.0, for what both implement."""

    @pytest.fixture
    def both(self, raw, redis_beside):
        theirs = redis_beside.raw()
        for c in (raw, theirs):
            c.call("HELLO", "3")
        yield raw, theirs
        theirs.close()

    @pytest.mark.parametrize("container", CONTAINERS)
    def test_command_info_of_containers(self, both, container):
        ours, theirs = both
        mine = info_of(ours, container)
        ref = info_of(theirs, container)
        assert _normalize(_info_without_subcommands(mine)) == \
            _normalize(_info_without_subcommands(ref))
        ref_subs = {s[0]: s for s in ref[9]}
        for sub in mine[9]:
            if sub[0] in NEWER_THAN_7_0:
                continue
            assert sub[0] in ref_subs, sub[0]
            assert _normalize(sub) == _normalize(ref_subs[sub[0]]), sub[0]

    def test_command_info_by_full_name(self, both):
        ours, theirs = both
        names = ["client|list", "config|set", "object|freq", "memory|usage", "pubsub|numsub",
                 "command|docs", "client|nosuch", "get|x", "debug", "select", "multi", "sort",
                 "sort_ro"]
        assert _normalize(ours.call("COMMAND", "INFO", *names)) == \
            _normalize(theirs.call("COMMAND", "INFO", *names))

    def test_docs_shape(self, both):
        ours, theirs = both
        for container in CONTAINERS:
            mine = ours.call("COMMAND", "DOCS", container).to_dict()[container.encode()]
            ref = theirs.call("COMMAND", "DOCS", container).to_dict()[container.encode()]
            mine, ref = mine.to_dict(), ref.to_dict()
            assert isinstance(mine[b"subcommands"], Map)
            for field in (b"summary", b"since", b"group"):
                assert isinstance(mine[field], bytes)
            assert mine[b"group"] == ref[b"group"] and mine[b"since"] == ref[b"since"]
            ref_subs = ref[b"subcommands"].to_dict()
            for name, doc in mine[b"subcommands"]:
                if name in NEWER_THAN_7_0:
                    continue
                ref_doc = ref_subs[name].to_dict()
                doc = doc.to_dict()
                assert doc[b"group"] == ref_doc[b"group"], name
                assert doc[b"since"] == ref_doc[b"since"], name

    def test_list_and_count_rules(self, both):
        for c in both:
            names = c.call("COMMAND", "LIST")
            assert len(names) == c.call("COMMAND", "COUNT") + sum(b"|" in n for n in names)
        ours, theirs = both
        mine = set(ours.call("COMMAND", "LIST")) - NEWER_THAN_7_0
        ref = set(theirs.call("COMMAND", "LIST"))
        assert {n for n in mine if b"|" in n} <= ref

    @pytest.mark.parametrize("args", [
        ("CLIENT", "foo"), ("CLIENT", "KILL"), ("CLIENT", "ID", "x"), ("CLIENT",),
        ("CLIENT", "UNBLOCK", "1", "TIMEOUT", "x"), ("CLIENT", "NO-EVICT", "maybe"),
        ("CONFIG", "foo"), ("CONFIG", "GET"), ("CONFIG", "SET", "a"), ("CONFIG", "SET", "a", "b",
                                                                     "c"),
        ("CONFIG", "SET", "maxmemory-policy", "foo"), ("OBJECT", "foo"), ("OBJECT", "ENCODING"),
        ("OBJECT", "HELP", "x"), ("MEMORY", "USAGE"), ("MEMORY", "foo"), ("PUBSUB", "foo"),
        ("PUBSUB", "NUMPAT", "x"), ("PUBSUB", "CHANNELS", "a", "b"), ("COMMAND", "foo"),
        ("COMMAND", "COUNT", "x"), ("COMMAND", "GETKEYS", "get"),
        ("COMMAND", "GETKEYS", "object", "foo", "k"), ("COMMAND", "GETKEYS", "client", "list",
                                                      "x"),
        ("COMMAND", "LIST", "x"), ("DEBUG", "foo"), ("DEBUG", "SLEEP"),
    ])
    def test_same_errors(self, both, args):
        ours, theirs = both
        assert ours.call(*args) == theirs.call(*args)

    def test_movable_keys_commands(self, both):
        """The whole entries of MIGRATE and the GEO STORE commands (keyword key specs), and the
        movablekeys flag of the commands whose keys follow a numkeys argument or a keyword."""
        ours, theirs = both
        for whole in ("migrate", "georadius", "georadiusbymember", "geosearchstore", "geoadd"):
            assert _normalize(ours.call("COMMAND", "INFO", whole)) == \
                _normalize(theirs.call("COMMAND", "INFO", whole)), whole
        names = ["migrate", "lmpop", "blmpop", "sintercard", "zmpop", "bzmpop", "zunion",
                 "zinter", "zdiff", "zunionstore", "zinterstore", "zdiffstore", "zintercard",
                 "get", "mset", "del", "zrangestore", "georadius", "georadiusbymember",
                 "geosearchstore", "georadius_ro"]
        for c in both:
            c.call("HELLO", "2")  # flags in their order
        mine = ours.call("COMMAND", "INFO", *names)
        ref = theirs.call("COMMAND", "INFO", *names)
        for name, m, t in zip(names, mine, ref):
            assert m[2] == t[2], name

    def test_numkeys_commands_whole_entries(self, both):
        """The keynum key specs (with notes for EVAL and FCALL) and every other field of the
        commands whose keys follow a numkeys argument."""
        ours, theirs = both
        names = ["lmpop", "blmpop", "sintercard", "zmpop", "bzmpop", "zunion", "zinter",
                 "zdiff", "zunionstore", "zinterstore", "zdiffstore", "zintercard", "eval",
                 "evalsha", "eval_ro", "evalsha_ro", "fcall", "fcall_ro"]
        mine = ours.call("COMMAND", "INFO", *names)
        ref = theirs.call("COMMAND", "INFO", *names)
        for name, m, t in zip(names, mine, ref):
            assert _normalize(m) == _normalize(t), name

    def test_same_getkeys(self, both):
        ours, theirs = both
        for args in (("object", "encoding", "k"), ("memory", "usage", "k"),
                     ("memory", "usage", "k", "SAMPLES", "5")):
            assert ours.call("COMMAND", "GETKEYS", *args) == \
                theirs.call("COMMAND", "GETKEYS", *args)
