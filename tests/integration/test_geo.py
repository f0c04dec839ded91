"""GEO commands: replies (exact bytes of distances and coordinates in RESP2 and RESP3), option
and error texts, keyspace events, WATCH, COMMAND INFO, STORE forms across shards, hostile input,
and a randomized comparison of GEOSEARCH / GEORADIUS against a redis-server started here.
Expected values are Redis 7.0.15's (checked with DASHKV_TEST_TARGET=redis)."""

import os
import random
import shutil

import pytest
import redis

from conftest import Server
from helpers import ERR_NOT_FLOAT, ERR_NOT_INT, ERR_SYNTAX, WRONGTYPE, arity, assert_err, dirties
from resp_client import encode

SICILY = ("13.361389", "38.115556", "Palermo", "15.087269", "37.502669", "Catania")


@pytest.fixture
def sicily(r):
    assert r.execute_command("GEOADD", "Sicily", *SICILY) == 2
    r.set("str", "x")
    return "Sicily"


def exact(raw, args, expected):
    """Sends one command and checks the reply's bytes."""
    raw.send(encode(*args))
    assert raw.read_raw(len(expected)) == expected


class TestReplies:
    def test_geoadd_scores(self, r, sicily):
        assert r.zscore("Sicily", "Palermo") == 3479099956230698
        assert r.zscore("Sicily", "Catania") == 3479447370796909
        # The top edges: bits above the 52 (latitude's bit 52, longitude's bit 53).
        assert r.execute_command("GEOADD", "e", "-180", "85.05112878", "a",
                                 "180", "-85.05112878", "b") == 2
        assert r.zscore("e", "a") == 4503599627370496
        assert r.zscore("e", "b") == 9007199254740992

    def test_exact_bytes_resp2(self, raw, sicily):
        exact(raw, ("GEODIST", "Sicily", "Palermo", "Catania"), b"$11\r\n166274.1516\r\n")
        exact(raw, ("GEODIST", "Sicily", "Palermo", "Catania", "km"), b"$8\r\n166.2742\r\n")
        exact(raw, ("GEODIST", "Sicily", "Palermo", "Catania", "MI"), b"$8\r\n103.3182\r\n")
        exact(raw, ("GEODIST", "Sicily", "Palermo", "Catania", "ft"), b"$11\r\n545518.8700\r\n")
        exact(raw, ("GEODIST", "Sicily", "Palermo", "nope"), b"$-1\r\n")
        exact(raw, ("GEOPOS", "Sicily", "Palermo", "nope"),
              b"*2\r\n*2\r\n$20\r\n13.36138933897018433\r\n$20\r\n38.11555639549629859\r\n"
              b"*-1\r\n")
        exact(raw, ("GEOHASH", "Sicily", "Palermo", "Catania", "nope"),
              b"*3\r\n$11\r\nsqc8b49rny0\r\n$11\r\nsqdtr74hyu0\r\n$-1\r\n")
        exact(raw, ("GEOSEARCH", "Sicily", "FROMLONLAT", "15", "37", "BYRADIUS", "200", "km",
                    "ASC", "WITHCOORD", "WITHDIST", "WITHHASH"),
              b"*2\r\n*4\r\n$7\r\nCatania\r\n$7\r\n56.4413\r\n:3479447370796909\r\n"
              b"*2\r\n$20\r\n15.08726745843887329\r\n$20\r\n37.50266842333162032\r\n"
              b"*4\r\n$7\r\nPalermo\r\n$8\r\n190.4424\r\n:3479099956230698\r\n"
              b"*2\r\n$20\r\n13.36138933897018433\r\n$20\r\n38.11555639549629859\r\n")
        exact(raw, ("GEOPOS", "nokey", "a"), b"*1\r\n*-1\r\n")
        exact(raw, ("GEOPOS", "nokey"), b"*0\r\n")
        exact(raw, ("GEOHASH", "nokey", "a"), b"*1\r\n$-1\r\n")
        exact(raw, ("GEOSEARCH", "nokey", "FROMLONLAT", "15", "37", "BYRADIUS", "200", "km"),
              b"*0\r\n")

    def test_exact_bytes_resp3(self, raw, sicily):
        raw.call("HELLO", "3")
        exact(raw, ("GEOPOS", "Sicily", "Palermo", "nope"),
              b"*2\r\n*2\r\n,13.36138933897018433\r\n,38.11555639549629859\r\n_\r\n")
        exact(raw, ("GEODIST", "Sicily", "Palermo", "Catania", "km"), b"$8\r\n166.2742\r\n")
        exact(raw, ("GEOSEARCH", "Sicily", "FROMMEMBER", "Catania", "BYBOX", "400", "400", "km",
                    "DESC", "WITHCOORD", "WITHDIST"),
              b"*2\r\n*3\r\n$7\r\nPalermo\r\n$8\r\n166.2742\r\n"
              b"*2\r\n,13.36138933897018433\r\n,38.11555639549629859\r\n"
              b"*3\r\n$7\r\nCatania\r\n$6\r\n0.0000\r\n"
              b"*2\r\n,15.08726745843887329\r\n,37.50266842333162032\r\n")
        exact(raw, ("GEOHASH", "nokey", "a"), b"*1\r\n_\r\n")
        # Limits: an integer prints bare, trailing zeros go.
        raw.call("GEOADD", "e", "-180", "85.05112878", "a", "180", "-85.05112878", "b")
        exact(raw, ("GEOPOS", "e", "a", "b"),
              b"*2\r\n*2\r\n,-179.99999731779098511\r\n,85.0511287799999991\r\n"
              b"*2\r\n,180\r\n,-85.05112751263942528\r\n")

    def test_scores_no_geoadd_wrote(self, raw):
        raw.call("ZADD", "z", "-5", "neg", "1e300", "huge", "9.3e18", "big")
        assert raw.call("GEOHASH", "z", "neg", "huge", "big") == \
            [b"bp05b5048p0", b"00bh0hbj200", b"bp05b5048p0"]
        assert raw.call("GEOPOS", "z", "neg", "huge") == \
            [[b"180", b"85.0511287799999991"],
             [b"-179.99999731779098511", b"-85.05112751263942528"]]

    def test_search_orders_and_count(self, r, sicily):
        r.execute_command("GEOADD", "Sicily", "13.583333", "37.316667", "Agrigento")
        q = ("GEOSEARCH", "Sicily", "FROMLONLAT", "15", "37", "BYRADIUS", "400", "km")
        assert r.execute_command(*q, "ASC") == ["Catania", "Agrigento", "Palermo"]
        assert r.execute_command(*q, "DESC") == ["Palermo", "Agrigento", "Catania"]
        assert r.execute_command(*q, "COUNT", "2") == ["Catania", "Agrigento"]  # COUNT sorts
        assert r.execute_command(*q, "COUNT", "2", "DESC") == ["Palermo", "Agrigento"]
        assert len(r.execute_command(*q, "COUNT", "2", "ANY")) == 2
        assert r.execute_command(*q, "COUNT", "9223372036854775807", "ASC") == \
            ["Catania", "Agrigento", "Palermo"]
        assert r.execute_command("GEORADIUS", "Sicily", "15", "37", "150", "km", "ASC") == \
            ["Catania", "Agrigento"]
        assert r.execute_command("GEORADIUSBYMEMBER_RO", "Sicily", "Agrigento", "50", "km") == \
            ["Agrigento"]
        assert r.execute_command("GEORADIUS_RO", "Sicily", "15", "37", "100", "km",
                                 "WITHDIST") == [["Catania", "56.4413"]]

    def test_geoadd_flags(self, r, sicily):
        assert r.execute_command("GEOADD", "Sicily", "XX", "1", "1", "new") == 0
        assert r.execute_command("GEOADD", "Sicily", "XX", "CH", *SICILY[:3],
                                 "15", "37", "Catania") == 1
        assert r.execute_command("GEOADD", "Sicily", "NX", "1", "1", "Catania", "1", "1",
                                 "x") == 1
        assert abs(r.execute_command("GEOPOS", "Sicily", "Catania")[0][0] - 15) < 1e-5
        assert r.execute_command("GEOADD", "Sicily", "CH", "2", "2", "Catania") == 1
        assert r.execute_command("GEOADD", "Sicily", "2", "2", "Catania") == 0
        assert r.execute_command("GEOADD", "gone", "XX", "1", "1", "a") == 0
        assert r.exists("gone") == 0


class TestErrors:
    @pytest.mark.parametrize("args,text", [
        (("GEOADD", "Sicily", "NX", "XX", "1", "1", "a"), ERR_SYNTAX),
        (("GEOADD", "Sicily", "NX", "XX", "CH"), ERR_SYNTAX),
        (("GEOADD", "Sicily", "NX", "CH", "x"), ERR_SYNTAX),
        (("GEOADD", "Sicily", "1", "1", "a", "2", "2"), ERR_SYNTAX),
        (("GEOADD", "Sicily", "1", "x", "a"), ERR_NOT_FLOAT),
        (("GEOADD", "Sicily", "nan", "1", "a"), ERR_NOT_FLOAT),
        (("GEOADD", "Sicily", "200", "38.115556", "a"),
         "ERR invalid longitude,latitude pair 200.000000,38.115556"),
        (("GEOADD", "Sicily", "inf", "38", "a"),
         "ERR invalid longitude,latitude pair inf,38.000000"),
        (("GEOADD", "Sicily", "-inf", "38", "a"),
         "ERR invalid longitude,latitude pair -inf,38.000000"),
        (("GEOADD", "Sicily", "10", "85.06", "a"),
         "ERR invalid longitude,latitude pair 10.000000,85.060000"),
        (("GEOADD", "str", "200", "1", "a"),
         "ERR invalid longitude,latitude pair 200.000000,1.000000"),
        (("GEOADD", "str", "1", "1", "a"), WRONGTYPE),
        (("GEODIST", "Sicily", "a", "b", "yd"),
         "ERR unsupported unit provided. please use M, KM, FT, MI"),
        (("GEODIST", "Sicily", "a", "b", "km", "x"), ERR_SYNTAX),
        (("GEODIST", "str", "a", "b"), WRONGTYPE),
        (("GEOPOS", "str", "a"), WRONGTYPE),
        (("GEOHASH", "str", "a"), WRONGTYPE),
        (("GEOSEARCH", "Sicily", "FROMLONLAT", "15", "37", "BYRADIUS", "-1", "km"),
         "ERR radius cannot be negative"),
        (("GEOSEARCH", "Sicily", "FROMLONLAT", "15", "37", "BYRADIUS", "x", "km"),
         "ERR need numeric radius"),
        (("GEOSEARCH", "Sicily", "FROMLONLAT", "15", "37", "BYRADIUS", "nan", "km"),
         "ERR need numeric radius"),
        (("GEOSEARCH", "Sicily", "FROMLONLAT", "15", "37", "BYRADIUS", "1", "kmx"),
         "ERR unsupported unit provided. please use M, KM, FT, MI"),
        (("GEOSEARCH", "Sicily", "FROMLONLAT", "15", "37", "BYBOX", "x", "1", "km"),
         "ERR need numeric width"),
        (("GEOSEARCH", "Sicily", "FROMLONLAT", "15", "37", "BYBOX", "1", "x", "km"),
         "ERR need numeric height"),
        (("GEOSEARCH", "Sicily", "FROMLONLAT", "15", "37", "BYBOX", "1", "-1", "km"),
         "ERR height or width cannot be negative"),
        (("GEOSEARCH", "Sicily", "FROMLONLAT", "15", "37", "BYRADIUS", "1", "km", "BYBOX", "1",
          "1", "km"), ERR_SYNTAX),
        (("GEOSEARCH", "Sicily", "FROMLONLAT", "15", "37", "FROMMEMBER", "Palermo", "BYRADIUS",
          "1", "km"), ERR_SYNTAX),
        (("GEOSEARCH", "Sicily", "FROMLONLAT", "15", "95", "BYRADIUS", "1", "km"),
         "ERR invalid longitude,latitude pair 15.000000,95.000000"),
        (("GEOSEARCH", "Sicily", "FROMLONLAT", "x", "37", "BYRADIUS", "1", "km"), ERR_NOT_FLOAT),
        (("GEOSEARCH", "Sicily", "FROMMEMBER", "nope", "BYRADIUS", "1", "km"),
         "ERR could not decode requested zset member"),
        (("geosearch", "Sicily", "BYRADIUS", "1", "km", "ASC", "WITHDIST"),
         "ERR exactly one of FROMMEMBER or FROMLONLAT can be specified for geosearch"),
        (("GeoSearch", "Sicily", "FROMLONLAT", "1", "2", "ASC", "DESC"),
         "ERR exactly one of BYRADIUS and BYBOX can be specified for GeoSearch"),
        (("GEOSEARCH", "Sicily", "FROMLONLAT", "15", "37", "BYRADIUS", "1", "km", "ANY"),
         "ERR the ANY argument requires COUNT argument"),
        (("GEOSEARCH", "Sicily", "FROMLONLAT", "15", "37", "BYRADIUS", "1", "km", "COUNT", "0"),
         "ERR COUNT must be > 0"),
        (("GEOSEARCH", "Sicily", "FROMLONLAT", "15", "37", "BYRADIUS", "1", "km", "COUNT", "-5"),
         "ERR COUNT must be > 0"),
        (("GEOSEARCH", "Sicily", "FROMLONLAT", "15", "37", "BYRADIUS", "1", "km", "COUNT", "x"),
         ERR_NOT_INT),
        (("GEOSEARCH", "Sicily", "FROMLONLAT", "15", "37", "BYRADIUS", "1", "km", "COUNT",
          "99999999999999999999"), ERR_NOT_INT),
        (("GEOSEARCH", "Sicily", "FROMLONLAT", "15", "37", "BYRADIUS", "1", "km", "COUNT"),
         ERR_SYNTAX),
        (("GEOSEARCH", "Sicily", "FROMLONLAT", "15", "37", "BYRADIUS", "1", "km", "STORE", "x"),
         ERR_SYNTAX),
        (("GEOSEARCH", "Sicily", "FROMLONLAT", "15", "37", "BYRADIUS", "1", "km", "STOREDIST"),
         ERR_SYNTAX),
        (("GEOSEARCH", "Sicily", "FROMLONLAT", "1", "2", "BYBOX", "1", "2"), ERR_SYNTAX),
        (("GEOSEARCH", "str", "FROMLONLAT", "15", "37", "BYRADIUS", "1", "km", "x"), WRONGTYPE),
        (("GEOSEARCH", "nokey", "FROMLONLAT", "15", "37", "BYRADIUS", "1", "km", "x"), ERR_SYNTAX),
        (("GEOSEARCH", "nokey", "FROMLONLAT", "15", "37", "BYRADIUS", "-1", "km"),
         "ERR radius cannot be negative"),
        (("GEOSEARCHSTORE", "d", "Sicily", "FROMLONLAT", "15", "37", "BYRADIUS", "1", "km",
          "STOREDIST", "WITHDIST"),
         "ERR GEOSEARCHSTORE is not compatible with WITHDIST, WITHHASH and WITHCOORD options"),
        (("GEOSEARCHSTORE", "d", "Sicily", "FROMLONLAT", "15", "37", "BYRADIUS", "1", "km",
          "STORE", "x"), ERR_SYNTAX),
        (("GEORADIUS", "Sicily", "15", "37", "200", "km", "WITHDIST", "STORE", "x"),
         "ERR STORE option in GEORADIUS is not compatible with WITHDIST, WITHHASH and WITHCOORD "
         "options"),
        (("GEORADIUS_RO", "Sicily", "15", "37", "200", "km", "STORE", "x"), ERR_SYNTAX),
        (("GEORADIUSBYMEMBER_RO", "Sicily", "Palermo", "200", "km", "STOREDIST", "x"), ERR_SYNTAX),
        (("GEORADIUS", "Sicily", "15", "37", "200", "km", "FROMMEMBER", "x"), ERR_SYNTAX),
        (("GEORADIUS", "Sicily", "15", "95", "200", "km"),
         "ERR invalid longitude,latitude pair 15.000000,95.000000"),
        (("GEORADIUS", "Sicily", "15", "37", "-1", "km"), "ERR radius cannot be negative"),
        (("GEORADIUSBYMEMBER", "Sicily", "nope", "200", "km"),
         "ERR could not decode requested zset member"),
        (("GEORADIUSBYMEMBER", "Sicily", "Palermo", "-200", "km"), "ERR radius cannot be negative"),
        (("GEORADIUSBYMEMBER", "str", "Palermo", "200", "km"), WRONGTYPE),
        (("GEORADIUS", "str", "1", "1", "200", "km", "STORE", "d"), WRONGTYPE),
    ])
    def test_error_texts(self, raw, sicily, args, text):
        assert_err(raw.call(*args), text)

    @pytest.mark.parametrize("args", [
        ("GEOADD", "k", "1", "2"), ("GEODIST", "k", "a"), ("GEOHASH",), ("GEOPOS",),
        ("GEOSEARCH", "k", "FROMLONLAT", "1", "2"), ("GEOSEARCHSTORE", "d", "s", "FROMMEMBER",
                                                     "m", "BYRADIUS", "1"),
        ("GEORADIUS", "k", "1", "2", "3"), ("GEORADIUSBYMEMBER", "k", "m", "3"),
        ("GEORADIUS_RO", "k", "1", "2", "3"), ("GEORADIUSBYMEMBER_RO", "k", "m", "3"),
    ])
    def test_arity(self, raw, args):
        assert_err(raw.call(*args), arity(args[0].lower()))

    def test_missing_source_skips_member_checks(self, r):
        # Redis parses on without the set: no member lookup, and GEORADIUSBYMEMBER skips its
        # radius and unit too.
        assert r.execute_command("GEOSEARCH", "nokey", "FROMMEMBER", "x", "BYRADIUS", "1",
                                 "km") == []
        assert r.execute_command("GEORADIUSBYMEMBER", "nokey", "x", "-5", "parsec") == []
        r.set("d", "x")
        assert r.execute_command("GEORADIUSBYMEMBER", "nokey", "x", "1", "km", "STORE", "d") == 0
        assert r.exists("d") == 0


class TestStore:
    DESTS = ["dst:%d" % i for i in range(6)]  # on both shards of a 2-thread server

    def test_geosearchstore(self, r, sicily):
        for d in self.DESTS:
            assert r.execute_command("GEOSEARCHSTORE", d, "Sicily", "FROMLONLAT", "15", "37",
                                     "BYRADIUS", "200", "km", "ASC", "COUNT", "1") == 1
            assert r.zrange(d, 0, -1, withscores=True) == [("Catania", 3479447370796909)]
            assert r.execute_command("GEOSEARCHSTORE", d, "Sicily", "FROMLONLAT", "15", "37",
                                     "BYRADIUS", "200", "km", "STOREDIST") == 2
            got = dict(r.zrange(d, 0, -1, withscores=True))
            assert got.keys() == {"Catania", "Palermo"}
            assert abs(got["Catania"] - 56.441257870158204) < 1e-9
            # An empty result deletes the destination; a missing source too.
            assert r.execute_command("GEOSEARCHSTORE", d, "Sicily", "FROMLONLAT", "0", "0",
                                     "BYRADIUS", "1", "km") == 0
            assert r.exists(d) == 0
            r.set(d, "x")
            assert r.execute_command("GEOSEARCHSTORE", d, "nokey", "FROMLONLAT", "0", "0",
                                     "BYRADIUS", "1", "km") == 0
            assert r.exists(d) == 0

    def test_georadius_store(self, r, sicily):
        for d in self.DESTS:
            r.set(d, "other type")
            r.expire(d, 100)
            assert r.execute_command("GEORADIUS", "Sicily", "15", "37", "200", "km", "STORE",
                                     d) == 2
            assert r.ttl(d) == -1
            assert r.execute_command("GEOHASH", d, "Palermo") == ["sqc8b49rny0"]
            assert r.execute_command("GEORADIUSBYMEMBER", "Sicily", "Palermo", "200", "km",
                                     "STORE", "ignored", "STOREDIST", d, "COUNT", "1") == 1
            assert r.zrange(d, 0, -1, withscores=True) == [("Palermo", 0)]
            assert r.exists("ignored") == 0
            assert r.execute_command("GEORADIUS", "Sicily", "15", "37", "1", "km", "STORE",
                                     d) == 0
            assert r.exists(d) == 0
        assert r.execute_command("GEORADIUS", "Sicily", "15", "37", "1", "km", "STORE",
                                 "Sicily") == 0
        assert r.exists("Sicily") == 0

    def test_store_in_multi(self, r, sicily):
        p = r.pipeline(transaction=True)
        p.execute_command("GEORADIUS", "Sicily", "15", "37", "200", "km", "STORE", "dst:1")
        p.execute_command("GEOSEARCHSTORE", "dst:2", "Sicily", "FROMMEMBER", "Palermo",
                          "BYBOX", "10", "10", "km")
        p.execute_command("GEORADIUS", "Sicily", "15", "37", "200", "km", "DESC")
        p.zcard("dst:1")
        assert p.execute() == [2, 1, ["Palermo", "Catania"], 2]


def collect_events(pubsub, r):
    r.publish("geo-sentinel", "end")
    out = []
    while True:
        m = pubsub.get_message(timeout=10)
        assert m is not None, out
        if m["type"] == "message" and m["channel"] == "geo-sentinel":
            return out
        if m["type"] == "pmessage":
            out.append((m["channel"].split(":", 1)[1], m["data"]))


def test_keyspace_events(server, r, sicily):
    r.config_set("notify-keyspace-events", "KEA")
    sub = redis.Redis(host=server.host, port=server.port, decode_responses=True,
                      socket_timeout=20).pubsub()
    try:
        sub.psubscribe("__keyevent@0__:*")
        sub.subscribe("geo-sentinel")
        for _ in range(2):
            assert sub.get_message(timeout=10)["type"] in ("psubscribe", "subscribe")
        collect_events(sub, r)
        cmds = [("GEOADD", "g", "1", "1", "a"), ("GEOADD", "g", "1", "1", "a"),
                ("GEOADD", "g", "XX", "2", "2", "b"), ("GEOADD", "g", "CH", "2", "2", "a"),
                ("GEOSEARCHSTORE", "dst:1", "Sicily", "FROMLONLAT", "15", "37", "BYRADIUS",
                 "200", "km"),
                ("GEOSEARCHSTORE", "dst:1", "Sicily", "FROMLONLAT", "0", "0", "BYRADIUS", "1",
                 "km"),
                ("GEOSEARCHSTORE", "dst:1", "Sicily", "FROMLONLAT", "0", "0", "BYRADIUS", "1",
                 "km"),
                ("GEORADIUS", "Sicily", "15", "37", "200", "km", "STORE", "dst:2"),
                ("GEORADIUSBYMEMBER", "Sicily", "Palermo", "1", "km", "STOREDIST", "dst:3"),
                ("GEORADIUS", "Sicily", "15", "37", "200", "km", "STOREDIST", "dst:2"),
                ("GEORADIUS", "Sicily", "15", "37", "200", "km"),
                ("GEOSEARCH", "Sicily", "FROMLONLAT", "15", "37", "BYRADIUS", "200", "km")]
        for c in cmds:
            r.execute_command(*c)
        assert collect_events(sub, r) == [
            ("zadd", "g"), ("zadd", "g"), ("geosearchstore", "dst:1"), ("del", "dst:1"),
            ("georadiusstore", "dst:2"), ("georadiusstore", "dst:3"),
            ("georadiusstore", "dst:2")]
    finally:
        sub.close()
        r.config_set("notify-keyspace-events", "")


@pytest.mark.parametrize("setup,key,cmd,dirtied", [
    ([], "g", ("GEOADD", "g", "1", "1", "a"), True),
    ([("GEOADD", "g", "1", "1", "a")], "g", ("GEOADD", "g", "1", "1", "a"), False),
    ([("GEOADD", "g", "1", "1", "a")], "g", ("GEOADD", "g", "NX", "2", "2", "a"), False),
    ([("GEOADD", "g", "1", "1", "a")], "g", ("GEORADIUS", "g", "1", "1", "10", "km"), False),
    ([("GEOADD", "g", "1", "1", "a")], "d", ("GEOSEARCHSTORE", "d", "g", "FROMMEMBER", "a",
                                             "BYRADIUS", "1", "km"), True),
    ([("GEOADD", "g", "1", "1", "a")], "dst:3", ("GEORADIUS", "g", "1", "1", "10", "km", "STORE",
                                                 "dst:3"), True),
    ([("GEOADD", "g", "1", "1", "a")], "d", ("GEOSEARCHSTORE", "d", "g", "FROMLONLAT", "50", "50",
                                             "BYRADIUS", "1", "km"), False),
], ids=lambda v: " ".join(v) if isinstance(v, tuple) else None)
def test_watch(server, r, setup, key, cmd, dirtied):
    assert dirties(server, r, [key], cmd, setup) == dirtied


def _spec(ks):
    """A RESP2 key spec (flat name/value lists) as nested dicts."""
    d = dict(zip(ks[::2], ks[1::2]))
    out = {"flags": sorted(x.decode() if isinstance(x, bytes) else x for x in d[b"flags"])}
    bs = dict(zip(d[b"begin_search"][::2], d[b"begin_search"][1::2]))
    out["begin"] = (bs[b"type"], dict(zip(bs[b"spec"][::2], bs[b"spec"][1::2])))
    return out


def test_command_info(raw):
    info = {i[0]: i for i in raw.call("COMMAND", "INFO", "geoadd", "geodist", "geohash",
                                          "geopos", "geosearch", "geosearchstore", "georadius",
                                          "georadiusbymember", "georadius_ro",
                                          "georadiusbymember_ro")}
    expected = {  # arity, flags, first, last, step, write
        b"geoadd": (-5, {"write", "denyoom"}, 1, 1, True),
        b"geodist": (-4, {"readonly"}, 1, 1, False),
        b"geohash": (-2, {"readonly"}, 1, 1, False),
        b"geopos": (-2, {"readonly"}, 1, 1, False),
        b"geosearch": (-7, {"readonly"}, 1, 1, False),
        b"geosearchstore": (-8, {"write", "denyoom"}, 1, 2, True),
        b"georadius": (-6, {"write", "denyoom", "movablekeys"}, 1, 1, True),
        b"georadiusbymember": (-5, {"write", "denyoom", "movablekeys"}, 1, 1, True),
        b"georadius_ro": (-6, {"readonly"}, 1, 1, False),
        b"georadiusbymember_ro": (-5, {"readonly"}, 1, 1, False),
    }
    for name, (ar, flags, first, last, write) in expected.items():
        i = info[name]
        assert i[1] == ar, name
        assert set(i[2]) == flags, name
        assert (i[3], i[4], i[5]) == (first, last, 1), name
        assert set(i[6]) == {"@write" if write else "@read", "@geo", "@slow"}, name
        assert i[7] == [], name
    ro = [{"flags": ["RO", "access"], "begin": (b"index", {b"index": 1})}]
    for name in (b"geodist", b"geohash", b"geopos", b"geosearch", b"georadius_ro",
                 b"georadiusbymember_ro"):
        assert [_spec(k) for k in info[name][8]] == ro, name
    assert [_spec(k) for k in info[b"geoadd"][8]] == \
        [{"flags": ["RW", "update"], "begin": (b"index", {b"index": 1})}]
    assert [_spec(k) for k in info[b"geosearchstore"][8]] == \
        [{"flags": ["OW", "update"], "begin": (b"index", {b"index": 1})},
         {"flags": ["RO", "access"], "begin": (b"index", {b"index": 2})}]
    for name, start in ((b"georadius", 6), (b"georadiusbymember", 5)):
        assert [_spec(k) for k in info[name][8]] == [
            {"flags": ["RO", "access"], "begin": (b"index", {b"index": 1})},
            {"flags": ["OW", "update"],
             "begin": (b"keyword", {b"keyword": b"STORE", b"startfrom": start})},
            {"flags": ["OW", "update"],
             "begin": (b"keyword", {b"keyword": b"STOREDIST", b"startfrom": start})}], name
    assert raw.call("COMMAND", "GETKEYS", "GEORADIUS", "k", "1", "2", "3", "km", "STORE", "a",
                    "STOREDIST", "b") == [b"k", b"a", b"b"]
    assert raw.call("COMMAND", "GETKEYS", "GEORADIUSBYMEMBER", "k", "m", "3", "km", "COUNT",
                    "1", "STORE", "a") == [b"k", b"a"]
    assert raw.call("COMMAND", "GETKEYS", "GEOSEARCHSTORE", "d", "s", "FROMMEMBER", "m",
                    "BYRADIUS", "1", "km") == [b"d", b"s"]


class TestHostile:
    def test_huge_and_odd_values(self, r, sicily):
        q = ("GEOSEARCH", "Sicily", "FROMLONLAT", "15", "37")
        assert sorted(r.execute_command(*q, "BYRADIUS", "inf", "m")) == ["Catania", "Palermo"]
        assert sorted(r.execute_command(*q, "BYBOX", "inf", "inf", "mi")) == \
            ["Catania", "Palermo"]
        assert r.execute_command(*q, "BYRADIUS", "0", "m") == []
        assert r.execute_command(*q, "BYRADIUS", "1e308", "km", "COUNT",
                                 "9223372036854775807", "ANY") != []
        assert r.execute_command("GEOSEARCH", "Sicily", "FROMMEMBER", "Palermo", "BYRADIUS",
                                 "0", "m", "WITHDIST") == [["Palermo", "0.0000"]]
        assert r.execute_command("GEORADIUS", "Sicily", "-180", "-85.05112878", "1", "m") == []
        assert r.execute_command("GEORADIUS", "Sicily", "180", "85.05112878", "20000", "km",
                                 "COUNT", "1") != []

    def test_empty_keys_and_members(self, raw):
        assert raw.call("GEOADD", "", "0", "0", "") == 1
        assert raw.call("GEOPOS", "", "") == [[b"0.00000268220901489", b"0.00000126736058093"]]
        assert raw.call("GEOSEARCH", "", "FROMMEMBER", "", "BYRADIUS", "1", "m") == [b""]

    def test_many_members_one_call(self, r):
        args = []
        for i in range(5000):
            args += ["%.6f" % (i / 100.0 - 25), "%.6f" % (i / 200.0 - 12), "m%d" % i]
        assert r.execute_command("GEOADD", "big", *args) == 5000
        got = r.execute_command("GEOSEARCH", "big", "FROMMEMBER", "m2500", "BYRADIUS", "50",
                                "km", "ASC", "COUNT", "3")
        assert got[0] == "m2500" and sorted(got[1:]) == ["m2499", "m2501"]  # a tie


# --- randomized comparison with a redis-server started here -----------------------------------

REDIS_BIN = os.environ.get("REDIS_SERVER_BIN", "redis-server")


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    if shutil.which(REDIS_BIN) is None:
        pytest.skip("redis-server not installed")
    srv = Server("redis", 1, tmp_path_factory.mktemp("geo-reference"))
    srv.start()
    c = redis.Redis(host=srv.host, port=srv.port, decode_responses=True, socket_timeout=20)
    yield c
    c.close()
    srv.stop()


def _random_points(rng, n):
    """Points in clusters that exercise the edges: poles, antimeridian, equator, and spread."""
    centres = [(0, 0), (179.5, 10), (-179.5, -10), (10, 84), (-20, -84.5), (13, 38), (0, 70)]
    seen, out = set(), []
    while len(out) < n:
        if rng.random() < 0.25:
            lon, lat = rng.uniform(-180, 180), rng.uniform(-85.05, 85.05)
        else:
            clon, clat = rng.choice(centres)
            lon = clon + rng.uniform(-3, 3)
            lat = clat + rng.uniform(-2, 2)
            if lon > 180:
                lon -= 360
            if lon < -180:
                lon += 360
            lat = max(-85.05, min(85.05, lat))
        key = ("%.6f" % lon, "%.6f" % lat)
        if key in seen:
            continue
        seen.add(key)
        out.append(key)
    return out


def _random_query(rng, points, members):
    unit = rng.choice(["m", "km", "ft", "mi", "KM"])
    scale = {"m": 1, "km": 1000, "ft": 0.3048, "mi": 1609.34, "KM": 1000}[unit]
    size_m = rng.choice([5e3, 5e4, 2e5, 5e5, 1.5e6, 4e6, 1.2e7])
    size = "%.3f" % (size_m * rng.uniform(0.2, 1.5) / scale)
    if rng.random() < 0.5:
        lon, lat = rng.choice(points)
        shifted = float(lon) + rng.uniform(-0.5, 0.5) if abs(float(lon)) < 179 else float(lon)
        frm = ["FROMLONLAT", "%.6f" % shifted, lat]
    else:
        frm = ["FROMMEMBER", rng.choice(members)]
    if rng.random() < 0.5:
        by = ["BYRADIUS", size, unit]
    else:
        by = ["BYBOX", size, "%.3f" % (float(size) * rng.uniform(0.3, 3)), unit]
    opts = []
    s = rng.random()
    if s < 0.35:
        opts.append("ASC")
    elif s < 0.7:
        opts.append("DESC")
    if rng.random() < 0.4:
        opts += ["COUNT", str(rng.randint(1, 20))]
        if rng.random() < 0.3:
            opts.append("ANY")
    for w in ("WITHDIST", "WITHCOORD", "WITHHASH"):
        if rng.random() < 0.4:
            opts.append(w)
    return frm, by, opts


def test_random_searches_match_redis(r, reference):
    rng = random.Random(20260521)
    for c in (r, reference):
        c.flushall()
    points = _random_points(rng, 600)
    members = ["p%d" % i for i in range(len(points))]
    args = []
    for (lon, lat), m in zip(points, members):
        args += [lon, lat, m]
    for c in (r, reference):
        assert c.execute_command("GEOADD", "pts", *args) == len(points)
    assert r.execute_command("GEOHASH", "pts", *members) == \
        reference.execute_command("GEOHASH", "pts", *members)
    assert r.execute_command("GEOPOS", "pts", *members) == \
        reference.execute_command("GEOPOS", "pts", *members)
    for i in range(400):
        frm, by, opts = _random_query(rng, points, members)
        cmd = ["GEOSEARCH", "pts"] + frm + by + opts
        mine, theirs = r.execute_command(*cmd), reference.execute_command(*cmd)
        assert mine == theirs, cmd
        if by[0] == "BYRADIUS":
            if frm[0] == "FROMLONLAT":
                old = ["GEORADIUS", "pts", frm[1], frm[2], by[1], by[2]] + opts
            else:
                old = ["GEORADIUSBYMEMBER", "pts", frm[1], by[1], by[2]] + opts
            assert r.execute_command(*old) == reference.execute_command(*old), old
            old_store = [a for a in old if not a.startswith("WITH")] + ["STOREDIST", "dst:%d" % i]
            assert r.execute_command(*old_store) == reference.execute_command(*old_store)
            assert r.zrange("dst:%d" % i, 0, -1, withscores=True) == \
                reference.zrange("dst:%d" % i, 0, -1, withscores=True), old_store
        store = ["GEOSEARCHSTORE", "dst:%d" % (i % 7), "pts"] + frm + by + \
            [o for o in opts if not o.startswith("WITH")]
        assert r.execute_command(*store) == reference.execute_command(*store), store
        assert r.zrange("dst:%d" % (i % 7), 0, -1, withscores=True) == \
            reference.zrange("dst:%d" % (i % 7), 0, -1, withscores=True)
    for c in (r, reference):
        c.flushall()


def test_random_pairwise_distances_match_redis(r, reference):
    rng = random.Random(7)
    for c in (r, reference):
        c.flushall()
    points = _random_points(rng, 200)
    args = []
    for i, (lon, lat) in enumerate(points):
        args += [lon, lat, "p%d" % i]
    # Points on one meridian take Redis's latitude-only path.
    args += ["12.5", "-80", "s0", "12.5", "80", "s1", "12.5", "0.000001", "s2"]
    for c in (r, reference):
        c.execute_command("GEOADD", "pts", *args)
    names = ["p%d" % i for i in range(len(points))] + ["s0", "s1", "s2"]
    for _ in range(500):
        a, b = rng.choice(names), rng.choice(names)
        unit = rng.choice(["m", "km", "ft", "mi"])
        cmd = ("GEODIST", "pts", a, b, unit)
        assert r.execute_command(*cmd) == reference.execute_command(*cmd), cmd
    for c in (r, reference):
        c.flushall()
