"""Stream consumer groups: XGROUP, XREADGROUP (no BLOCK), XACK, XPENDING, XCLAIM, XAUTOCLAIM,
XINFO GROUPS / CONSUMERS / STREAM FULL: exact replies and error texts, keyspace events, hostile
arguments, scripted and randomized comparisons (RESP2 and RESP3) with a redis-server the test
starts, and groups in DUMP payloads. Expected values are Redis 7.0.15's (DASHKV_TEST_TARGET=redis
runs the same tests against redis-server)."""

import random
import shutil

import pytest
import redis

from conftest import Server
from helpers import ERR_NOT_INT, ERR_SYNTAX, WRONGTYPE, Decoded, arity, assert_err, dec
from resp_client import Error, Map, RawClient
from test_keyspace_events_types import Events

ERR_ID = "ERR Invalid stream ID specified as stream command argument"
MAX_ID = "18446744073709551615-18446744073709551615"


@pytest.fixture
def raw(server, r):
    c = Decoded(server.raw())
    yield c
    c.close()


def nogroup(key, group, suffix=""):
    return "NOGROUP No such key '%s' or consumer group '%s'%s" % (key, group, suffix)


def setup_stream(raw, key="s", n=3):
    for i in range(1, n + 1):
        assert raw.call("XADD", key, "%d-1" % i, "f", str(i)) == "%d-1" % i


# ---- replies and errors --------------------------------------------------------------------

def test_create_read_ack_flow(raw):
    setup_stream(raw)
    assert raw.call("XGROUP", "CREATE", "s", "g", "0") == "OK"
    assert_err(raw.call("XGROUP", "CREATE", "s", "g", "0"),
               "BUSYGROUP Consumer Group name already exists")
    assert raw.call("XREADGROUP", "GROUP", "g", "c1", "COUNT", "2", "STREAMS", "s", ">") == [
        ["s", [["1-1", ["f", "1"]], ["2-1", ["f", "2"]]]]]
    assert raw.call("XREADGROUP", "GROUP", "g", "c2", "STREAMS", "s", ">") == [
        ["s", [["3-1", ["f", "3"]]]]]
    assert raw.call("XREADGROUP", "GROUP", "g", "c2", "STREAMS", "s", ">") is None
    # History: the consumer's own pending entries after the id.
    assert raw.call("XREADGROUP", "GROUP", "g", "c1", "STREAMS", "s", "1-1") == [
        ["s", [["2-1", ["f", "2"]]]]]
    assert raw.call("XPENDING", "s", "g") == [3, "1-1", "3-1", [["c1", "2"], ["c2", "1"]]]
    assert raw.call("XACK", "s", "g", "1-1", "1-1", "9-9") == 1
    assert raw.call("XACK", "s", "nog", "1-1") == 0
    assert raw.call("XACK", "nokey", "g", "bad") == 0
    assert_err(raw.call("XACK", "s", "g", "bad"), ERR_ID)
    pend = raw.call("XPENDING", "s", "g", "-", "+", "10")
    assert [(p[0], p[1], p[3]) for p in pend] == [("2-1", "c1", 2), ("3-1", "c2", 1)]
    assert raw.call("XPENDING", "s", "g", "-", "+", "10", "nobody") == []
    assert raw.call("XPENDING", "s", "g", "IDLE", "100000000", "-", "+", "10") == []
    groups = raw.call("XINFO", "GROUPS", "s")
    assert groups == [["name", "g", "consumers", 2, "pending", 2, "last-delivered-id", "3-1",
                       "entries-read", 3, "lag", 0]]
    consumers = raw.call("XINFO", "CONSUMERS", "s", "g")
    assert [c[:4] for c in consumers] == [["name", "c1", "pending", 1],
                                          ["name", "c2", "pending", 1]]
    assert raw.call("XGROUP", "DELCONSUMER", "s", "g", "c1") == 1
    assert raw.call("XPENDING", "s", "g") == [1, "3-1", "3-1", [["c2", "1"]]]
    assert raw.call("XGROUP", "DESTROY", "s", "g") == 1
    assert raw.call("XGROUP", "DESTROY", "s", "g") == 0
    assert raw.call("XINFO", "GROUPS", "s") == []


def test_xgroup_errors(raw):
    setup_stream(raw)
    raw.call("SET", "str", "x")
    must_exist = ("ERR The XGROUP subcommand requires the key to exist. Note that for CREATE you "
                  "may want to use the MKSTREAM option to create an empty stream automatically.")
    assert_err(raw.call("XGROUP", "CREATE", "nokey", "g", "0"), must_exist)
    assert_err(raw.call("XGROUP", "SETID", "nokey", "g", "0"), must_exist)
    assert_err(raw.call("XGROUP", "DESTROY", "nokey", "g"), must_exist)
    assert_err(raw.call("XGROUP", "CREATE", "str", "g", "0"), WRONGTYPE)
    assert_err(raw.call("XGROUP", "SETID", "s", "nog", "0"),
               "NOGROUP No such consumer group 'nog' for key name 's'")
    assert_err(raw.call("XGROUP", "CREATECONSUMER", "s", "nog", "c"),
               "NOGROUP No such consumer group 'nog' for key name 's'")
    assert_err(raw.call("XGROUP", "CREATE", "s", "g", "bad"), ERR_ID)
    sub_err = "ERR unknown subcommand or wrong number of arguments for 'create'. Try XGROUP HELP."
    assert_err(raw.call("XGROUP", "create", "s", "g", "0", "foo"), sub_err)
    assert_err(raw.call("XGROUP", "create", "s", "g", "0", "MKSTREAM", "MKSTREAM", "MKSTREAM",
                        "MKSTREAM"), sub_err)
    assert_err(raw.call("XGROUP", "CREATE", "s", "g", "0", "ENTRIESREAD", "-2"),
               "ERR value for ENTRIESREAD must be positive or -1")
    assert_err(raw.call("XGROUP", "CREATE", "s", "g", "0", "ENTRIESREAD", "x"), ERR_NOT_INT)
    assert_err(raw.call("XGROUP", "DESTROY", "s"), arity("xgroup|destroy"))
    assert raw.call("XGROUP", "CREATE", "new", "g", "$", "MKSTREAM") == "OK"
    assert raw.call("XLEN", "new") == 0
    assert raw.call("XGROUP", "CREATE", "s", "g", "$", "ENTRIESREAD", "3") == "OK"
    assert raw.call("XGROUP", "CREATECONSUMER", "s", "g", "c") == 1
    assert raw.call("XGROUP", "CREATECONSUMER", "s", "g", "c") == 0
    assert raw.call("XGROUP", "DELCONSUMER", "s", "g", "nobody") == 0
    assert_err(raw.call("XGROUP", "setid", "s", "g", "0", "BOGUS", "5"),
               "ERR unknown subcommand or wrong number of arguments for 'setid'. Try XGROUP HELP.")
    assert raw.call("XGROUP", "SETID", "s", "g", "+") == "OK"
    assert raw.call("XINFO", "GROUPS", "s")[0][7] == MAX_ID
    help_ = raw.call("XGROUP", "HELP")
    assert help_[0].startswith("XGROUP <subcommand>") and len(help_) == 17


def test_xreadgroup_errors(raw):
    setup_stream(raw)
    raw.call("SET", "str", "x")
    raw.call("XGROUP", "CREATE", "s", "g", "0")
    assert_err(raw.call("XREADGROUP", "GROUP", "g", "c", "STREAMS", "nokey", ">"),
               nogroup("nokey", "g", " in XREADGROUP with GROUP option"))
    assert_err(raw.call("XREADGROUP", "GROUP", "nog", "c", "STREAMS", "s", ">"),
               nogroup("s", "nog", " in XREADGROUP with GROUP option"))
    assert_err(raw.call("XREADGROUP", "GROUP", "g", "c", "STREAMS", "str", ">"), WRONGTYPE)
    assert_err(raw.call("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", "$"),
               "ERR The $ ID is meaningless in the context of XREADGROUP: you want to read the "
               "history of this consumer by specifying a proper ID, or use the > ID to get new "
               "messages. The $ ID would just return an empty result set.")
    assert_err(raw.call("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", "bad"), ERR_ID)
    assert_err(raw.call("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", "0", "1"),
               "ERR Unbalanced XREAD list of streams: for each stream key an ID or '$' must be "
               "specified.")
    assert_err(raw.call("XREADGROUP", "COUNT", "1", "STREAMS", "s", "0", "0", "0"),
               "ERR Missing GROUP option for XREADGROUP")
    assert_err(raw.call("XREADGROUP", "GROUP", "g", "c", "COUNT", "x", "STREAMS", "s", ">"),
               ERR_NOT_INT)
    assert_err(raw.call("XREADGROUP", "GROUP", "g", "c", "BLOCK", "-1", "STREAMS", "s", ">"),
               "ERR timeout is negative")
    assert_err(raw.call("XREADGROUP", "GROUP", "g", "c", "BOGUS", "STREAMS", "s", ">"),
               ERR_SYNTAX)
    assert_err(raw.call("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s"), arity("xreadgroup"))
    # A key error comes before the id error of a later key, in argument order.
    assert_err(raw.call("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", "nokey", "bad", ">"),
               ERR_ID)
    # Huge COUNT, negative COUNT (no limit), NOACK, the maximum id read as ">".
    assert raw.call("XREADGROUP", "GROUP", "g", "c", "COUNT", "9223372036854775807", "NOACK",
                    "STREAMS", "s", "1-1") == [["s", []]]
    assert len(raw.call("XREADGROUP", "GROUP", "g", "c", "COUNT", "-5", "NOACK", "STREAMS", "s",
                        ">")[0][1]) == 3
    assert raw.call("XPENDING", "s", "g") == [0, None, None, None]
    assert raw.call("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", MAX_ID) is None


def test_history_of_deleted_entries(raw):
    setup_stream(raw)
    raw.call("XGROUP", "CREATE", "s", "g", "0")
    raw.call("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">")
    raw.call("XDEL", "s", "2-1")
    assert raw.call("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", "0") == [
        ["s", [["1-1", ["f", "1"]], ["2-1", None], ["3-1", ["f", "3"]]]]]
    # A deleted entry's delivery count stays.
    assert [p[3] for p in raw.call("XPENDING", "s", "g", "-", "+", "10")] == [2, 1, 2]
    # XCLAIM and XAUTOCLAIM drop deleted entries from the PEL.
    assert raw.call("XAUTOCLAIM", "s", "g", "c2", "0", "0", "COUNT", "2") == [
        "3-1", [["1-1", ["f", "1"]]], ["2-1"]]
    assert raw.call("XAUTOCLAIM", "s", "g", "c2", "0", "0", "JUSTID") == ["0-0", ["1-1", "3-1"],
                                                                         []]
    assert raw.call("XPENDING", "s", "g") == [2, "1-1", "3-1", [["c2", "2"]]]


def test_xclaim(raw):
    setup_stream(raw)
    raw.call("SET", "str", "x")
    raw.call("XGROUP", "CREATE", "s", "g", "0")
    raw.call("XREADGROUP", "GROUP", "g", "c1", "STREAMS", "s", ">")
    assert_err(raw.call("XCLAIM", "s", "nog", "c", "0", "1-1"), nogroup("s", "nog"))
    assert_err(raw.call("XCLAIM", "str", "g", "c", "0", "1-1"), WRONGTYPE)
    assert_err(raw.call("XCLAIM", "s", "g", "c", "x", "1-1"),
               "ERR Invalid min-idle-time argument for XCLAIM")
    assert_err(raw.call("XCLAIM", "s", "g", "c", "0", "1-1", "IDLE", "x"),
               "ERR Invalid IDLE option argument for XCLAIM")
    assert_err(raw.call("XCLAIM", "s", "g", "c", "0", "1-1", "bogus"),
               "ERR Unrecognized XCLAIM option 'bogus'")
    # Nothing claimable: the consumer is not created.
    assert raw.call("XCLAIM", "s", "g", "c9", "100000000", "1-1") == []
    assert raw.call("XCLAIM", "s", "g", "c9", "0", "9-9") == []
    assert [c[1] for c in raw.call("XINFO", "CONSUMERS", "s", "g")] == ["c1"]
    assert raw.call("XCLAIM", "s", "g", "c2", "0", "1-1", "2-1") == [
        ["1-1", ["f", "1"]], ["2-1", ["f", "2"]]]
    assert raw.call("XCLAIM", "s", "g", "c2", "0", "1-1", "JUSTID") == ["1-1"]
    assert raw.call("XCLAIM", "s", "g", "c3", "0", "2-1", "RETRYCOUNT", "7", "JUSTID",
                    "LASTID", "5-5") == ["2-1"]
    pend = raw.call("XPENDING", "s", "g", "-", "+", "10")
    assert [(p[0], p[1], p[3]) for p in pend] == [("1-1", "c2", 2), ("2-1", "c3", 7),
                                                  ("3-1", "c1", 1)]
    assert raw.call("XINFO", "GROUPS", "s")[0][7] == "5-5"
    raw.call("XACK", "s", "g", "1-1")
    assert raw.call("XCLAIM", "s", "g", "c4", "0", "1-1", "FORCE", "JUSTID") == ["1-1"]
    assert raw.call("XPENDING", "s", "g", "-", "+", "1", "c4")[0][3] == 1
    idle = raw.call("XPENDING", "s", "g", "-", "+", "1")[0][2]
    raw.call("XCLAIM", "s", "g", "c4", "0", "1-1", "IDLE", "500000", "JUSTID")
    assert raw.call("XPENDING", "s", "g", "-", "+", "1")[0][2] >= 500000 > idle


def test_xautoclaim_errors(raw):
    setup_stream(raw)
    raw.call("XGROUP", "CREATE", "s", "g", "0")
    assert_err(raw.call("XAUTOCLAIM", "s", "nog", "c", "0", "0"), nogroup("s", "nog"))
    assert_err(raw.call("XAUTOCLAIM", "s", "g", "c", "x", "0"),
               "ERR Invalid min-idle-time argument for XAUTOCLAIM")
    assert_err(raw.call("XAUTOCLAIM", "s", "g", "c", "0", "bad"), ERR_ID)
    for count in ("0", "-1", "x", "9223372036854775807"):
        assert_err(raw.call("XAUTOCLAIM", "s", "g", "c", "0", "0", "COUNT", count),
                   "ERR COUNT must be > 0")
    assert_err(raw.call("XAUTOCLAIM", "s", "g", "c", "0", "0", "BOGUS"), ERR_SYNTAX)
    assert_err(raw.call("XAUTOCLAIM", "s", "g", "c", "0", "0", "COUNT", "576460752303423487"),
               "ERR Insufficient memory, failed allocating transient memory, COUNT too high.")
    assert raw.call("XAUTOCLAIM", "s", "g", "c", "0", "0", "COUNT", "1000") == ["0-0", [], []]


def test_xpending_errors(raw):
    setup_stream(raw)
    raw.call("XGROUP", "CREATE", "s", "g", "0")
    assert_err(raw.call("XPENDING", "s", "nog"), nogroup("s", "nog"))
    assert_err(raw.call("XPENDING", "nokey", "g"), nogroup("nokey", "g"))
    assert_err(raw.call("XPENDING", "s", "g", "-"), ERR_SYNTAX)
    assert_err(raw.call("XPENDING", "s", "g", "-", "+", "x"), ERR_NOT_INT)
    assert_err(raw.call("XPENDING", "s", "g", "IDLE", "5", "-", "+"), ERR_SYNTAX)
    assert_err(raw.call("XPENDING", "s", "g", "bad", "+", "5"), ERR_ID)
    assert_err(raw.call("XPENDING", "s", "g", "(" + MAX_ID, "+", "5"),
               "ERR invalid start ID for the interval")
    assert raw.call("XPENDING", "s", "g", "-", "+", "9223372036854775807") == []


def test_xinfo_errors(raw):
    raw.call("SET", "str", "x")
    assert_err(raw.call("XINFO", "GROUPS", "nokey"), "ERR no such key")
    assert_err(raw.call("XINFO", "GROUPS", "str"), WRONGTYPE)
    assert_err(raw.call("XINFO", "CONSUMERS", "nokey", "g"), "ERR no such key")
    setup_stream(raw)
    assert_err(raw.call("XINFO", "CONSUMERS", "s", "g"),
               "NOGROUP No such consumer group 'g' for key name 's'")


def test_lag_and_entries_read(raw):
    setup_stream(raw, n=5)
    raw.call("XGROUP", "CREATE", "s", "g", "0")

    def group():
        g = raw.call("XINFO", "GROUPS", "s")[0]
        return g[9], g[11]

    assert group() == (None, 5)
    raw.call("XREADGROUP", "GROUP", "g", "c", "COUNT", "2", "STREAMS", "s", ">")
    assert group() == (2, 3)
    raw.call("XDEL", "s", "4-1")
    assert group() == (2, None)  # a tombstone after the last delivered id
    raw.call("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">")
    assert group() == (5, 0)
    raw.call("XADD", "s", "9-1", "f", "9")
    assert group() == (5, 1)
    raw.call("XGROUP", "SETID", "s", "g", "0", "ENTRIESREAD", "-1")
    assert group() == (None, None)
    raw.call("XGROUP", "SETID", "s", "g", "$")
    assert group() == (None, 0)


def test_xinfo_stream_full_groups(raw):
    setup_stream(raw)
    raw.call("XGROUP", "CREATE", "s", "g", "0")
    raw.call("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">")
    info = raw.call("XINFO", "STREAM", "s")
    assert info[info.index("groups") + 1] == 1
    full = raw.call("XINFO", "STREAM", "s", "FULL", "COUNT", "2")
    g = full[full.index("groups") + 1][0]
    assert g[:10] == ["name", "g", "last-delivered-id", "3-1", "entries-read", 3, "lag", 0,
                      "pel-count", 3]
    assert [p[0] for p in g[11]] == ["1-1", "2-1"] and g[11][0][1] == "c"
    c = g[13][0]
    assert c[0:2] == ["name", "c"] and c[4:6] == ["pel-count", 3]
    assert [p[0] for p in c[7]] == ["1-1", "2-1"] and c[7][0][2] == 1


def test_keyspace_events(server, r):
    r.config_set("notify-keyspace-events", "KEA")
    ev = Events(server)
    try:
        r.xadd("s", {"a": 1}, id="1")
        r.execute_command("XGROUP", "CREATE", "s", "g", "0")
        r.execute_command("XGROUP", "CREATE", "m", "g", "0", "MKSTREAM")
        r.execute_command("XGROUP", "CREATECONSUMER", "s", "g", "c")
        r.execute_command("XGROUP", "CREATECONSUMER", "s", "g", "c")
        r.execute_command("XREADGROUP", "GROUP", "g", "c2", "STREAMS", "s", ">")
        r.execute_command("XACK", "s", "g", "1")
        r.execute_command("XCLAIM", "s", "g", "c3", "0", "1", "FORCE")
        r.execute_command("XGROUP", "SETID", "s", "g", "0")
        r.execute_command("XGROUP", "DELCONSUMER", "s", "g", "c")
        r.execute_command("XGROUP", "DELCONSUMER", "s", "g", "nobody")
        r.execute_command("XGROUP", "DESTROY", "s", "g")
        r.execute_command("XGROUP", "DESTROY", "s", "g")
        assert ev.collect(r) == [
            ("xadd", "s"), ("xgroup-create", "s"), ("xgroup-create", "m"),
            ("xgroup-createconsumer", "s"), ("xgroup-createconsumer", "s"),
            ("xgroup-createconsumer", "s"), ("xgroup-setid", "s"), ("xgroup-delconsumer", "s"),
            ("xgroup-destroy", "s")]
    finally:
        r.config_set("notify-keyspace-events", "")


def test_group_commands_do_not_touch_watch(server, r):
    """Redis signals no WATCH change for group state; XGROUP CREATE MKSTREAM creates the key."""
    other = redis.Redis(host=server.host, port=server.port, decode_responses=True)

    def touches(*cmd):
        p = r.pipeline()
        p.watch("s", "m")
        other.execute_command(*cmd)
        p.multi()
        p.ping()
        try:
            p.execute()
            return False
        except redis.WatchError:
            return True

    try:
        r.xadd("s", {"f": 1}, id="1-1")
        r.xadd("s", {"f": 2}, id="2-1")
        r.execute_command("XGROUP", "CREATE", "s", "g", "0")
        for cmd in (["XGROUP", "CREATE", "s", "g2", "0"], ["XGROUP", "SETID", "s", "g", "0"],
                    ["XGROUP", "CREATECONSUMER", "s", "g", "cc"],
                    ["XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">"],
                    ["XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", "0"],
                    ["XACK", "s", "g", "1-1"], ["XCLAIM", "s", "g", "c2", "0", "2-1"],
                    ["XAUTOCLAIM", "s", "g", "c3", "0", "0"],
                    ["XGROUP", "DELCONSUMER", "s", "g", "c3"], ["XGROUP", "DESTROY", "s", "g"]):
            assert not touches(*cmd), cmd
        assert touches("XGROUP", "CREATE", "m", "g", "$", "MKSTREAM")
    finally:
        other.close()


def test_multi_key_xreadgroup(raw):
    keys = ["k%d" % i for i in range(8)]  # spread over the shards
    for i, k in enumerate(keys):
        raw.call("XADD", k, "%d-1" % (i + 1), "f", str(i))
        raw.call("XGROUP", "CREATE", k, "g", "0")
    got = raw.call("XREADGROUP", "GROUP", "g", "c", "STREAMS", *keys, *([">"] * len(keys)))
    assert got == [[k, [["%d-1" % (i + 1), ["f", str(i)]]]] for i, k in enumerate(keys)]
    # An error on any key leaves every key untouched.
    raw.call("XADD", "k0", "99-1", "f", "x")
    assert_err(raw.call("XREADGROUP", "GROUP", "g", "c", "STREAMS", "k0", "k1", "missing",
                        ">", ">", ">"), nogroup("missing", "g", " in XREADGROUP with GROUP option"))
    assert raw.call("XPENDING", "k0", "g")[0] == 1
    got = raw.call("XREADGROUP", "GROUP", "g", "c", "STREAMS", *keys, *(["0"] * len(keys)))
    assert [len(k[1]) for k in got] == [1] * len(keys)


def test_memory_usage_counts_groups(raw):
    setup_stream(raw, n=50)
    before = raw.call("MEMORY", "USAGE", "s")
    raw.call("XGROUP", "CREATE", "s", "g", "0")
    raw.call("XREADGROUP", "GROUP", "g", "consumer-with-a-long-name", "STREAMS", "s", ">")
    assert raw.call("MEMORY", "USAGE", "s") > before


def test_copy_and_dump_restore_keep_groups(raw):
    setup_stream(raw)
    raw.call("XGROUP", "CREATE", "s", "g", "0")
    raw.call("XREADGROUP", "GROUP", "g", "c", "COUNT", "2", "STREAMS", "s", ">")
    assert raw.call("COPY", "s", "s2") == 1
    raw.call("XACK", "s", "g", "1-1")
    assert raw.call("XPENDING", "s2", "g") == [2, "1-1", "2-1", [["c", "2"]]]
    assert raw.call("XPENDING", "s", "g") == [1, "2-1", "2-1", [["c", "1"]]]
    raw.call("DEL", "s2")


# ---- comparison with redis-server ----------------------------------------------------------

@pytest.fixture(scope="module")
def peer(tmp_path_factory):
    if shutil.which("redis-server") is None:
        pytest.skip("redis-server is not installed")
    srv = Server("redis", 1, tmp_path_factory.mktemp("peer"), [])
    srv.start()
    yield srv
    srv.stop()


def flat(x):
    """A reply with its RESP3 maps flattened to lists."""
    if isinstance(x, Map):
        return [flat(i) for kv in x for i in kv]
    if isinstance(x, list):
        return [flat(i) for i in x]
    return x


def mask_times(cmd, reply):
    """Replaces the time-dependent fields of a reply by 0 (RESP3 maps of XINFO flattened)."""
    name = cmd[0].upper()
    if isinstance(reply, Error) or reply is None:
        return reply
    if name == "XINFO":
        reply = flat(reply)
    if name == "XPENDING" and len(cmd) > 3:
        return [[p[0], p[1], 0, p[3]] for p in reply]
    if name == "XINFO" and cmd[1].upper() == "CONSUMERS":
        return [c[:5] + [0] for c in reply]
    if name == "XINFO" and cmd[1].upper() == "STREAM":
        for field in ("radix-tree-keys", "radix-tree-nodes"):  # dashkv has no radix tree
            reply[reply.index(field) + 1] = 0
    if name == "XINFO" and cmd[1].upper() == "STREAM" and len(cmd) > 3:
        groups = reply[reply.index("groups") + 1]
        for g in groups:
            g[11] = [[p[0], p[1], 0, p[3]] for p in g[11]]
            for c in g[13]:
                c[3] = 0
                c[7] = [[p[0], 0, p[2]] for p in c[7]]
    return reply


def compare(clients, cmd):
    got = [mask_times(cmd, dec(c.call(*cmd))) for c in clients]
    assert got[0] == got[1], (cmd, got)
    return got[0]


@pytest.mark.parametrize("resp", [2, 3])
def test_scripted_match_redis(server, peer, r, resp):
    clients = [server.raw(), RawClient(peer.host, peer.port)]
    try:
        clients[1].call("FLUSHALL")
        if resp == 3:
            for c in clients:
                c.call("HELLO", "3")
        script = [
            ["XADD", "s", "1-1", "a", "1"], ["XADD", "s", "2-1", "a", "2", "b", "3"],
            ["XADD", "s", "3-1", "a", "3"], ["XGROUP", "CREATE", "s", "g", "0"],
            ["XGROUP", "CREATE", "s", "g2", "$", "ENTRIESREAD", "3"],
            ["XREADGROUP", "GROUP", "g", "c1", "COUNT", "1", "STREAMS", "s", ">"],
            ["XREADGROUP", "GROUP", "g", "c2", "STREAMS", "s", ">"],
            ["XREADGROUP", "GROUP", "g", "c2", "STREAMS", "s", ">"],
            ["XREADGROUP", "GROUP", "g", "c1", "STREAMS", "s", "0"],
            ["XINFO", "GROUPS", "s"], ["XPENDING", "s", "g"],
            ["XPENDING", "s", "g", "-", "+", "10"], ["XPENDING", "s", "g", "(1-1", "+", "10", "c2"],
            ["XPENDING", "s", "g", "IDLE", "0", "-", "(3-1", "1"],
            ["XDEL", "s", "2-1"], ["XREADGROUP", "GROUP", "g", "c2", "STREAMS", "s", "0"],
            ["XCLAIM", "s", "g", "c3", "0", "2-1", "3-1"],
            ["XCLAIM", "s", "g", "c4", "0", "1-1", "FORCE", "JUSTID", "LASTID", "5-5"],
            ["XINFO", "GROUPS", "s"], ["XINFO", "CONSUMERS", "s", "g"],
            ["XAUTOCLAIM", "s", "g", "c5", "0", "0", "COUNT", "1"],
            ["XAUTOCLAIM", "s", "g", "c5", "0", "(1-1", "JUSTID"],
            ["XINFO", "STREAM", "s"], ["XINFO", "STREAM", "s", "FULL"],
            ["XINFO", "STREAM", "s", "FULL", "COUNT", "1"],
            ["XREADGROUP", "GROUP", "g", "c1", "STREAMS", "s", "nokey", ">", ">"],
            ["XGROUP", "DELCONSUMER", "s", "g", "c5"], ["XPENDING", "s", "g"],
            ["XGROUP", "DESTROY", "s", "g"], ["XINFO", "GROUPS", "s"],
        ]
        for cmd in script:
            compare(clients, cmd)
    finally:
        for c in clients:
            c.close()


def random_group_command(rng, key, groups, top):
    """One random group-related command (and the new top ms)."""
    g = rng.choice(groups + ["nog"]) if rng.random() < 0.03 else rng.choice(groups)
    c = rng.choice(["a", "b", "c", "d"])
    sid = "%d-%d" % (rng.randrange(top + 2), rng.randrange(3))
    op = rng.random()
    if op < 0.25:
        top += rng.randrange(0, 3)
        return ["XADD", key, "%d-*" % top, "f", str(rng.randrange(100))], top
    if op < 0.45:
        cmd = ["XREADGROUP", "GROUP", g, c, "COUNT", str(rng.randrange(-1, 5))]
        if rng.random() < 0.1:
            cmd.append("NOACK")
        return cmd + ["STREAMS", key, rng.choice([">", ">", sid, "0"])], top
    if op < 0.55:
        return ["XACK", key, g] + [
            "%d-%d" % (rng.randrange(top + 2), rng.randrange(3))
            for _ in range(rng.randrange(1, 4))], top
    if op < 0.65:
        return ["XCLAIM", key, g, c, rng.choice(["0", "-5", "999999999"]), sid] + rng.choice(
            [[], ["JUSTID"], ["FORCE"], ["FORCE", "JUSTID"], ["RETRYCOUNT", "2"],
             ["LASTID", sid], ["IDLE", "5"]]), top
    if op < 0.72:
        return ["XAUTOCLAIM", key, g, c, rng.choice(["0", "999999999"]),
                rng.choice([sid, "-", "(" + sid]), "COUNT",
                str(rng.randrange(1, 6))] + rng.choice([[], ["JUSTID"]]), top
    if op < 0.78:
        return ["XDEL", key, sid], top
    if op < 0.81:
        return ["XTRIM", key, rng.choice(["MAXLEN", "MINID"]), rng.choice(["=", "~"]),
                str(rng.randrange(0, 10))], top
    if op < 0.84:
        return ["XGROUP", "SETID", key, g, rng.choice(["0", "$", sid])] + rng.choice(
            [[], ["ENTRIESREAD", str(rng.randrange(-1, 9))]]), top
    if op < 0.86:
        return ["XGROUP", "DELCONSUMER", key, g, c], top
    if op < 0.88:
        return ["XGROUP", "CREATECONSUMER", key, g, c], top
    if op < 0.90:
        return ["XSETID", key, "%d-%d" % (top + rng.randrange(3), rng.randrange(3))], top
    if op < 0.93:
        return ["XPENDING", key, g] + rng.choice(
            [[], ["-", "+", "5"], ["IDLE", "0", "-", "+", "10", c], ["(0-0", sid, "3"]]), top
    if op < 0.96:
        return ["XINFO", "GROUPS", key], top
    if op < 0.98:
        return ["XINFO", "STREAM", key, "FULL", "COUNT", str(rng.randrange(0, 3))], top
    return ["XINFO", "CONSUMERS", key, g], top


def test_random_groups_match_redis(server, peer, r):
    """Random XADD/XREADGROUP/XACK/XCLAIM/XAUTOCLAIM/XDEL/XTRIM/XSETID/XGROUP sequences, every
    reply compared (RESP2 and RESP3 rounds), then the PELs and XINFO of every group."""
    clients = [server.raw(), RawClient(peer.host, peer.port)]
    rng = random.Random(2122)
    try:
        clients[1].call("FLUSHALL")
        for round_ in range(8):
            for c in clients:
                c.call("HELLO", "3" if round_ % 2 else "2")
            key = "rg%d" % round_
            top = 1
            compare(clients, ["XADD", key, "1-1", "f", "v"])
            groups = ["g%d" % i for i in range(rng.randrange(1, 4))]
            for g in groups:
                compare(clients, ["XGROUP", "CREATE", key, g, rng.choice(["0", "$", "1-0", "1-1"])]
                        + rng.choice([[], ["ENTRIESREAD", str(rng.randrange(-1, 5))]]))
            for _ in range(400):
                cmd, top = random_group_command(rng, key, groups, top)
                compare(clients, cmd)
            for g in groups:
                compare(clients, ["XPENDING", key, g])
                compare(clients, ["XPENDING", key, g, "-", "+", "1000"])
                compare(clients, ["XINFO", "CONSUMERS", key, g])
                for c in "abcd":
                    compare(clients, ["XPENDING", key, g, "-", "+", "1000", c])
            compare(clients, ["XINFO", "GROUPS", key])
            compare(clients, ["XINFO", "STREAM", key, "FULL", "COUNT", "0"])
    finally:
        for c in clients:
            c.close()


# ---- RDB files and DUMP payloads with groups, between the server and redis-server -----------

def make_group_streams(c):
    """Streams with groups: PELs over several consumers, a deleted pending entry, a consumer
    without pending entries, a group with unknown entries-read, an empty stream with a group."""
    for i in range(1, 300):
        c.execute_command("XADD", "gs:big", "%d-1" % i, "f", str(i), "pad", "x" * (i % 40))
    c.execute_command("XGROUP", "CREATE", "gs:big", "g1", "0")
    c.execute_command("XGROUP", "CREATE", "gs:big", "g2", "$")
    c.execute_command("XGROUP", "CREATE", "gs:big", b"\x00bin\xff", "10-1", "ENTRIESREAD", "-1")
    for n, consumer in ((40, "alice"), (7, "bob"), (100, "carol")):
        c.execute_command("XREADGROUP", "GROUP", "g1", consumer, "COUNT", n, "STREAMS", "gs:big",
                          ">")
    c.execute_command("XREADGROUP", "GROUP", b"\x00bin\xff", "dave", "COUNT", 5, "STREAMS",
                      "gs:big", ">")
    c.execute_command("XACK", "gs:big", "g1", "3-1", "4-1")
    c.execute_command("XDEL", "gs:big", "5-1")
    c.execute_command("XCLAIM", "gs:big", "g1", "bob", 0, "50-1", "RETRYCOUNT", 9, "TIME",
                      1700000000000)
    c.execute_command("XGROUP", "CREATECONSUMER", "gs:big", "g2", "idle")
    c.execute_command("XGROUP", "CREATE", "gs:empty", "g", "$", "MKSTREAM")


def group_state(c):
    out = {}
    for k in sorted(c.scan_iter(_type="stream")):
        full = c.execute_command("XINFO", "STREAM", k, "FULL", "COUNT", 0)
        full = dict(zip(full[::2], full[1::2]))
        full.pop(b"radix-tree-nodes")
        full.pop(b"radix-tree-keys")
        out[k] = (full, c.execute_command("XINFO", "GROUPS", k))
    return out


def test_rdb_with_groups_both_directions(server, server_factory, tmp_path):
    import persistence_helpers as ph
    if shutil.which("redis-check-rdb") is None:
        pytest.skip("redis-check-rdb is not installed")
    srv = server_factory()
    c = ph.bclient(srv)
    make_group_streams(c)
    expected = group_state(c)
    assert len(expected) == 2
    assert c.execute_command("SAVE") in (True, b"OK")
    check = ph.check_rdb(srv.workdir / "dump.rdb")
    assert check.rc == 0 and check.keys == 2, check.output[-3000:]
    with ph.RedisOnFile(srv.workdir / "dump.rdb", tmp_path / "redis") as peer:
        pc = peer.client()
        assert group_state(pc) == expected
        assert pc.execute_command("SAVE") in (True, b"OK")
        other = server_factory(start=False)
        shutil.copyfile(peer.workdir / "dump.rdb", other.workdir / "dump.rdb")
    oc = ph.restart(other)
    assert group_state(oc) == expected
    assert oc.execute_command("DEBUG", "RELOAD") in (True, b"OK")
    assert group_state(oc) == expected


def test_dump_payloads_with_groups_both_directions(rb, peer):
    pc = redis.Redis(host=peer.host, port=peer.port, socket_timeout=20)
    pc.flushall()
    try:
        make_group_streams(rb)
        make_group_streams(pc)
        for key in (b"gs:big", b"gs:empty"):
            assert pc.restore(key + b":ours", 0, rb.dump(key)) in (True, b"OK")
            assert rb.restore(key + b":theirs", 0, pc.dump(key)) in (True, b"OK")
        # Each side holds what it restored from the other exactly as the other holds it,
        # times included (they travel in the payload).
        mine, theirs = group_state(rb), group_state(pc)
        for key in (b"gs:big", b"gs:empty"):
            assert mine[key + b":theirs"] == theirs[key]
            assert theirs[key + b":ours"] == mine[key]
    finally:
        pc.close()


@pytest.mark.dashkv_only
def test_damaged_group_payloads_never_crash(server, rb):
    """RESTORE of payloads with groups, randomly damaged (CRC fixed up): refused, or a stream
    whose group replies are all answered."""
    from test_dump_restore import body_of, damage, sign
    make_group_streams(rb)
    body = body_of(rb.dump("gs:big"))
    rng = random.Random(2123)
    c = server.raw()
    try:
        for _ in range(300):
            payload = sign(damage(body, rng))
            c.call("DEL", "victim")
            if isinstance(c.call("RESTORE", "victim", "0", payload), Error):
                continue
            if c.call("TYPE", "victim") != "stream":
                continue
            for g in c.call("XINFO", "GROUPS", "victim"):
                name = g[1]
                for cmd in (["XPENDING", "victim", name], ["XPENDING", "victim", name, "-", "+",
                                                           "1000"],
                            ["XINFO", "CONSUMERS", "victim", name],
                            ["XAUTOCLAIM", "victim", name, "x", "0", "0", "COUNT", "1000"],
                            ["XREADGROUP", "GROUP", name, "y", "STREAMS", "victim", "0"]):
                    assert not isinstance(c.call(*cmd), Error), cmd
            c.call("XINFO", "STREAM", "victim", "FULL")
            c.call("COPY", "victim", "victim2", "REPLACE")
            c.call("DUMP", "victim")
    finally:
        c.close()
    server.assert_alive()
