"""HyperLogLog commands: PFADD, PFCOUNT, PFMERGE, PFDEBUG, PFSELFTEST and hll-sparse-max-bytes.

A HyperLogLog is a string in Redis's byte representation, so the expected values include exact
bytes (GET) taken from redis-server 7.0.15: these tests pass against both targets. Keys without
a hash tag spread over the shards (PFCOUNT and PFMERGE across shards); "{t}" keys share one.
TestAgainstRedis starts a redis-server beside the server under test and compares GET bytes and
replies for random elements, merges and hostile values.
"""

import hashlib
import os
import random
import shutil

import pytest
import redis

from conftest import Server
from helpers import WRONGTYPE, arity, assert_err, dirties
from resp_client import Error

NOT_HLL = "WRONGTYPE Key is not a valid HyperLogLog string value."
CORRUPT = "INVALIDOBJ Corrupted HLL object detected"


def header(encoding, card=b"\x00" * 8):
    return b"HYLL" + bytes([encoding]) + b"\x00\x00\x00" + card


STALE = b"\x00" * 7 + b"\x80"
EMPTY = header(1, STALE) + b"\x7f\xff"  # PFADD of a new key without elements
ABC = header(1, STALE) + bytes.fromhex("60f38050b1844bfb80425a")  # PFADD k a b c


def dense_of(registers):
    """A dense value from 16384 register values (6 bits each, least significant bits first)."""
    acc, bits, out = 0, 0, bytearray()
    for v in registers:
        acc |= v << bits
        bits += 6
        while bits >= 8:
            out.append(acc & 0xFF)
            acc >>= 8
            bits -= 8
    return header(0, STALE) + bytes(out)


class TestPfAdd:
    def test_new_key_bytes(self, rb):
        assert rb.pfadd("k") == 1
        assert rb.get("k") == EMPTY
        assert rb.pfadd("k") == 0
        assert rb.pfadd("h", "a", "b", "c") == 1
        assert rb.get("h") == ABC
        assert rb.pfadd("h", "a", "c") == 0
        assert rb.pfadd("h", "a", "d") == 1
        assert rb.object("encoding", "h") == b"raw"

    def test_count_caches_in_the_header(self, rb):
        rb.pfadd("h", "a", "b", "c")
        assert rb.pfcount("h") == 3
        assert rb.get("h") == header(1, b"\x03" + b"\x00" * 7) + ABC[16:]
        rb.pfadd("h", "a")  # unchanged: the cache stays valid
        assert rb.get("h")[8:16] == b"\x03" + b"\x00" * 7
        rb.pfadd("h", "zz")
        assert rb.get("h")[15] == 0x80

    def test_keeps_ttl(self, r):
        r.pfadd("h", "a")
        r.expire("h", 100)
        r.pfadd("h", "b", "c")
        assert 0 < r.ttl("h") <= 100
        r.pfmerge("h", "other")
        assert 0 < r.ttl("h") <= 100

    def test_errors(self, raw):
        assert_err(raw.call("PFADD"), arity("pfadd"))
        raw.call("RPUSH", "l", "x")
        assert_err(raw.call("PFADD", "l", "a"), WRONGTYPE)
        for value in [b"hello", b"12345678901234567890", b"HYLL", header(1)[:15],
                      header(2) + b"\x7f\xff", header(0) + b"\x00" * 100,
                      header(0) + b"\x00" * 12289, b"hyll" + EMPTY[4:]]:
            raw.call("SET", "s", value)
            assert_err(raw.call("PFADD", "s", "a"), NOT_HLL)
            assert raw.call("GET", "s") == value

    def test_sparse_max_bytes(self, r):
        assert r.config_get("hll-sparse-max-bytes") == {"hll-sparse-max-bytes": "3000"}
        try:
            r.config_set("hll-sparse-max-bytes", "0")
            r.pfadd("d", "a")
            assert r.execute_command("PFDEBUG", "ENCODING", "d") == "dense"
            assert r.strlen("d") == 12304
            assert r.pfcount("d") == 1
            r.config_set("hll-sparse-max-bytes", "1kb")
            assert r.config_get("hll-sparse-max-bytes")["hll-sparse-max-bytes"] == "1024"
            r.pfadd("s", *["e%d" % i for i in range(2000)])
            assert r.execute_command("PFDEBUG", "ENCODING", "s") == "dense"
            r.config_set("hll-sparse-max-bytes", "100000")
            r.pfadd("t", *["e%d" % i for i in range(2000)])
            assert r.execute_command("PFDEBUG", "ENCODING", "t") == "sparse"
            assert r.strlen("t") > 3000
        finally:
            r.config_set("hll-sparse-max-bytes", "3000")

    @pytest.mark.parametrize("value,error", [
        ("-1", "argument must be a memory value"),
        ("abc", "argument must be a memory value"),
        ("1.5", "argument must be a memory value"),
        ("9223372036854775808", "argument must be between 0 and 9223372036854775807 inclusive"),
    ])
    def test_sparse_max_bytes_errors(self, raw, value, error):
        assert_err(raw.call("CONFIG", "SET", "hll-sparse-max-bytes", value),
                   "ERR CONFIG SET failed (possibly related to argument 'hll-sparse-max-bytes') "
                   "- " + error)


class TestPfCount:
    def test_missing_and_single(self, r):
        assert r.pfcount("nokey") == 0
        assert r.pfcount("a", "b", "c") == 0
        r.pfadd("h", *["x%d" % i for i in range(1000)])
        assert r.pfcount("h") == 1001  # Redis's estimate for these elements
        assert r.exists("a", "b", "c") == 0

    def test_union_across_shards_changes_no_key(self, rb):
        keys = ["u%d" % i for i in range(12)]
        for n, k in enumerate(keys):
            rb.pfadd(k, *["e%d" % j for j in range(n * 50, n * 50 + 100)])
        before = [rb.get(k) for k in keys]
        assert rb.pfcount(*keys) == 656
        assert rb.pfcount(*keys, "missing") == 656
        assert [rb.get(k) for k in keys] == before  # no cache written
        same = ["{t}%d" % i for i in range(12)]
        for k, v in zip(same, before):
            rb.set(k, v)
        assert rb.pfcount(*same) == 656

    def test_hostile_cache_is_believed(self, rb):
        rb.set("h", header(1, (12345).to_bytes(8, "little")) + b"\x7f\xff")
        assert rb.pfcount("h") == 12345
        assert rb.pfcount("h", "h") == 0  # a union ignores caches

    def test_estimate_past_63_bits(self, rb):
        # Every register at 63: none is in the estimator's range, the estimate is infinite and
        # Redis's llroundl makes it 2^63, which reads negative and leaves the cache stale.
        rb.set("h", dense_of([63] * 16384))
        assert rb.pfcount("h") == -(1 << 63)
        assert rb.get("h")[8:16] == b"\x00" * 7 + b"\x80"
        assert rb.pfcount("h") == -(1 << 63)

    def test_errors_in_argument_order(self, raw):
        assert_err(raw.call("PFCOUNT"), arity("pfcount"))
        raw.call("RPUSH", "l", "x")
        raw.call("SET", "s", "not an hll")
        raw.call("PFADD", "h", "a")
        for keys, err in [(["l"], WRONGTYPE), (["s"], NOT_HLL), (["h", "s"], NOT_HLL),
                          (["s", "h", "l"], NOT_HLL), (["l", "s"], WRONGTYPE),
                          (["h", "x1", "x2", "x3", "x4", "l", "x5", "s"], WRONGTYPE)]:
            assert_err(raw.call("PFCOUNT", *keys), err)

    def test_corrupt_sparse(self, raw):
        stale = header(1, STALE)
        bad = [stale, stale + b"\x7f\xfe", stale + b"\x7f\xff\x00", stale + b"\x7f\xfe\x81",
               stale + b"\x7f"]
        raw.call("PFADD", "h", "a")
        for value in bad:
            raw.call("SET", "c", value)
            assert_err(raw.call("PFCOUNT", "c"), CORRUPT)
            assert_err(raw.call("PFCOUNT", "h", "c"), CORRUPT)
            assert_err(raw.call("PFMERGE", "dest", "h", "c"), CORRUPT)
            assert raw.call("EXISTS", "dest") == 0
            assert_err(raw.call("PFDEBUG", "GETREG", "c"), CORRUPT)
            assert_err(raw.call("PFDEBUG", "TODENSE", "c"), CORRUPT)
            assert raw.call("GET", "c") == value

    def test_cut_xzero_reads_a_zero_byte(self, raw):
        # XZERO(255), then an XZERO missing its second byte: Redis reads its NUL terminator
        # there (16129 registers), so the runs cover all 16384 registers.
        raw.call("SET", "c", header(1) + b"\x40\xfe\x7f")
        assert raw.call("PFDEBUG", "DECODE", "c") == b"Z:255 Z:16129"
        assert raw.call("PFCOUNT", "c", "c") == 0
        raw.call("SET", "c", header(1, STALE) + b"\x40\xfe\x7f")
        assert raw.call("PFCOUNT", "c") == 0

    def test_corrupt_sparse_add(self, raw):
        raw.call("SET", "c", header(1) + b"\x6e\xdf")  # XZERO(12000): registers 0..11999
        assert raw.call("PFADD", "c", "abcdefgh") == 1  # register 1383
        assert raw.call("PFDEBUG", "DECODE", "c") == b"Z:1383 v:1,1 Z:10616"
        assert_err(raw.call("PFADD", "c", "a"), CORRUPT)  # register 12711
        # The elements before the failing one stay added, as in Redis.
        assert_err(raw.call("PFADD", "c", "hello world", "a"), CORRUPT)
        assert raw.call("PFDEBUG", "DECODE", "c") == b"Z:1383 v:1,1 Z:8015 v:4,1 Z:2600"
        assert raw.call("GET", "c")[15] == 0x80


class TestPfMerge:
    def test_merge_bytes(self, rb):
        rb.pfadd("m1", *["a%d" % i for i in range(300)])
        rb.pfadd("m2", *["b%d" % i for i in range(300)])
        assert rb.pfmerge("m3", "m1", "m2")
        value = rb.get("m3")
        assert len(value) == 1218
        assert hashlib.sha1(value).hexdigest() == "bb3e2931b69e60394e49c40ca237aed6d1d71159"
        assert rb.pfcount("m3") == 603
        assert rb.pfcount("m1", "m2") == 603

    def test_destination_is_a_source(self, rb):
        assert rb.pfmerge("d")
        assert rb.get("d") == EMPTY
        rb.pfadd("x", "a", "b")
        rb.pfadd("d", "c")
        assert rb.pfmerge("d", "x", "missing")
        assert rb.pfcount("d") == 3

    def test_a_dense_source_makes_it_dense(self, r):
        r.pfadd("big", *["e%d" % i for i in range(5000)])
        r.pfadd("small", "a")
        assert r.execute_command("PFDEBUG", "ENCODING", "big") == "dense"
        r.pfmerge("small", "big")
        assert r.execute_command("PFDEBUG", "ENCODING", "small") == "dense"
        assert r.pfcount("small") == r.pfcount("big", "small")

    def test_across_shards(self, rb):
        keys = ["s%d" % i for i in range(10)]
        for i, k in enumerate(keys):
            rb.pfadd(k, *["v%d" % j for j in range(i * 20, i * 20 + 40)])
        assert rb.pfmerge("dest", *keys)
        merged = rb.get("dest")
        assert rb.pfcount("dest") == rb.pfcount(*keys)
        tagged = ["{t}s%d" % i for i in range(10)]
        for k, t in zip(keys, tagged):
            rb.set(t, rb.get(k))
        assert rb.pfmerge("{t}dest", *tagged)
        assert rb.get("{t}dest") == merged

    def test_errors(self, raw):
        assert_err(raw.call("PFMERGE"), arity("pfmerge"))
        raw.call("RPUSH", "l", "x")
        raw.call("SET", "s", "nope")
        raw.call("PFADD", "h", "a")
        assert_err(raw.call("PFMERGE", "d", "h", "s"), NOT_HLL)
        assert_err(raw.call("PFMERGE", "d", "l", "s"), WRONGTYPE)
        assert_err(raw.call("PFMERGE", "s", "h"), NOT_HLL)
        assert_err(raw.call("PFMERGE", "l", "h"), WRONGTYPE)
        assert raw.call("EXISTS", "d") == 0
        assert raw.call("GET", "s") == b"nope"


    def test_in_multi(self, r):
        p = r.pipeline(transaction=True)
        p.pfadd("x1", "a", "b")
        p.pfadd("x2", "b", "c")
        p.pfcount("x1", "x2")
        p.pfmerge("x3", "x1", "x2", "x4")
        p.pfcount("x3")
        p.pfcount("x3")
        assert p.execute() == [1, 1, 3, True, 3, 3]


    def test_survives_a_reload(self, rb):
        rb.pfadd("s", *["e%d" % i for i in range(100)])
        rb.pfadd("d", *["e%d" % i for i in range(5000)])
        rb.pfcount("d")
        before = [rb.get("s"), rb.get("d")]
        assert rb.execute_command("DEBUG", "RELOAD") in (True, b"OK")
        assert [rb.get("s"), rb.get("d")] == before
        assert rb.pfcount("s", "d") == 4968


class TestPfDebug:
    def test_getreg_converts(self, r):
        r.pfadd("h", "a", "b", "c")
        regs = r.execute_command("PFDEBUG", "GETREG", "h")
        assert len(regs) == 16384
        assert {i: v for i, v in enumerate(regs) if v} == {8436: 1, 12711: 2, 15780: 1}
        assert r.execute_command("PFDEBUG", "ENCODING", "h") == "dense"
        assert r.pfcount("h") == 3

    def test_subcommands(self, raw):
        raw.call("PFADD", "h", "a", "b", "c")
        assert raw.call("PFDEBUG", "DECODE", "h") == \
            b"Z:8436 v:1,1 Z:4274 v:2,1 Z:3068 v:1,1 Z:603"
        assert raw.call("PFDEBUG", "encoding", "h") == "sparse"
        assert raw.call("PFDEBUG", "TODENSE", "h") == 1
        assert raw.call("PFDEBUG", "TODENSE", "h") == 0
        assert raw.call("STRLEN", "h") == 12304
        assert_err(raw.call("PFDEBUG", "DECODE", "h"), "ERR HLL encoding is not sparse")
        assert_err(raw.call("PFDEBUG", "nosuch", "h"), "ERR Unknown PFDEBUG subcommand 'nosuch'")
        assert_err(raw.call("PFDEBUG", "GETREG", "missing"),
                   "ERR The specified key does not exist")
        assert_err(raw.call("PFDEBUG", "nosuch", "missing"),
                   "ERR The specified key does not exist")
        raw.call("RPUSH", "l", "x")
        assert_err(raw.call("PFDEBUG", "ENCODING", "l"), WRONGTYPE)
        raw.call("SET", "s", "x" * 20)
        assert_err(raw.call("PFDEBUG", "ENCODING", "s"), NOT_HLL)
        assert_err(raw.call("PFDEBUG", "GETREG", "h", "x"), arity("pfdebug"))
        assert_err(raw.call("PFDEBUG", "GETREG"), arity("pfdebug"))

    def test_selftest(self, raw):
        assert raw.call("PFSELFTEST") == "OK"
        assert_err(raw.call("PFSELFTEST", "x"), arity("pfselftest"))


class TestEventsAndWatch:
    def test_keyspace_events(self, server, r):
        r.config_set("notify-keyspace-events", "KEA")
        c = redis.Redis(host=server.host, port=server.port, decode_responses=True,
                        socket_timeout=20)
        p = c.pubsub()
        p.psubscribe("__keyevent@0__:*")
        assert p.get_message(timeout=10)["type"] == "psubscribe"
        try:
            r.pfadd("h", "a")   # pfadd ("new" only with the n class, which A leaves out)
            r.pfadd("h", "a")   # nothing
            r.pfcount("h")      # nothing (caches)
            r.pfmerge("m", "h")  # pfadd
            r.execute_command("PFDEBUG", "TODENSE", "m")  # nothing
            r.set("end", "1")
            got = []
            while not got or got[-1] != ("set", "end"):
                m = p.get_message(timeout=10)
                assert m is not None, got
                if m["type"] == "pmessage":
                    got.append((m["channel"].split(":", 1)[1], m["data"]))
            assert got == [("pfadd", "h"), ("pfadd", "m"), ("set", "end")]
        finally:
            p.close()
            c.close()
            r.config_set("notify-keyspace-events", "")

    def test_watch(self, server, r):
        setup = [("PFADD", "h", "a")]
        assert dirties(server, r, ["h"], ("PFADD", "h", "b"), setup)
        assert not dirties(server, r, ["h"], ("PFADD", "h", "a"), setup)
        # PFCOUNT writes a stale cache (Redis signals the key), not a valid one.
        assert dirties(server, r, ["h"], ("PFCOUNT", "h"), [("PFADD", "h", "c")])
        assert not dirties(server, r, ["h"], ("PFCOUNT", "h"), setup)
        assert not dirties(server, r, ["h"], ("PFCOUNT", "h", "x"), setup)
        assert dirties(server, r, ["h"], ("PFMERGE", "h", "x"), setup)
        assert dirties(server, r, ["n"], ("PFMERGE", "n"))
        assert not dirties(server, r, ["h"], ("PFDEBUG", "TODENSE", "h"), setup)
        assert not dirties(server, r, ["h"], ("PFADD", "h", "a"), [("SET", "h", "x")])


# ---- Comparison with a live redis-server ----

REDIS_BIN = os.environ.get("REDIS_SERVER_BIN", "redis-server")


@pytest.fixture(scope="module")
def redis_side(tmp_path_factory):
    """A redis-server 7.0 beside the server under test."""
    srv = Server("redis", 1, tmp_path_factory.mktemp("redis-hll"))
    srv.start()
    yield srv
    srv.stop()


def _element(rng):
    kind = rng.random()
    if kind < 0.6:
        return "el:%d" % rng.randrange(10 ** 6)
    if kind < 0.9:
        return bytes(rng.randrange(256) for _ in range(rng.randrange(0, 24)))
    return bytes(rng.randrange(256) for _ in range(rng.randrange(24, 80)))


def _call(c, *args):
    try:
        return c.execute_command(*args)
    except redis.ResponseError as e:
        return Error(str(e))


@pytest.mark.skipif(shutil.which(REDIS_BIN) is None and not os.path.exists(REDIS_BIN),
                    reason="redis-server not installed")
class TestAgainstRedis:
    @pytest.fixture
    def pair(self, rb, redis_side):
        theirs = redis.Redis(host=redis_side.host, port=redis_side.port, socket_timeout=30)
        theirs.flushall()
        yield rb, theirs
        for c in (rb, theirs):
            c.config_set("hll-sparse-max-bytes", "3000")
        theirs.close()

    def both(self, pair, *args):
        ours, theirs = (_call(c, *args) for c in pair)
        assert ours == theirs, args
        return ours

    def test_command_info(self, raw, redis_side):
        theirs = redis_side.raw()
        try:
            for cmd in [("COMMAND", "INFO", "pfadd", "pfcount", "pfmerge", "pfdebug", "pfselftest"),
                        ("COMMAND", "GETKEYS", "PFMERGE", "d", "a", "b"),
                        ("COMMAND", "GETKEYS", "PFCOUNT", "a", "b"),
                        ("COMMAND", "GETKEYS", "PFDEBUG", "GETREG", "k")]:
                assert raw.call(*cmd) == theirs.call(*cmd), cmd
        finally:
            theirs.close()

    @pytest.mark.parametrize("seed", range(6))
    def test_random_adds_counts_and_merges(self, pair, seed):
        rng = random.Random(seed)
        limit = rng.choice([3000, 3000, 200, 0, 20000])
        for c in pair:
            c.config_set("hll-sparse-max-bytes", limit)
        keys = ["k%d" % i for i in range(6)]
        for k in keys:
            size = rng.choice([0, 1, 5, 50, 400, 2000, 8000])
            elements = [_element(rng) for _ in range(size)]
            self.both(pair, "PFADD", k)
            for i in range(0, size, 97):
                self.both(pair, "PFADD", k, *elements[i:i + 97])
            self.both(pair, "GET", k)
            if rng.random() < 0.5:
                self.both(pair, "PFCOUNT", k)
                self.both(pair, "GET", k)
        for _ in range(4):
            srcs = rng.sample(keys, rng.randrange(1, len(keys) + 1))
            self.both(pair, "PFCOUNT", *srcs)
            dest = rng.choice(keys + ["fresh%d" % rng.randrange(3)])
            self.both(pair, "PFMERGE", dest, *srcs)
            self.both(pair, "GET", dest)
            self.both(pair, "PFCOUNT", dest)
            self.both(pair, "GET", dest)

    def test_dump_restore_both_ways(self, pair):
        ours, theirs = pair
        for n in (3, 1500, 20000):
            elements = ["d%d" % i for i in range(n)]
            theirs.pfadd("r", *elements)
            ours.restore("r", 0, theirs.dump("r"), replace=True)
            assert ours.get("r") == theirs.get("r")
            assert ours.pfcount("r") == theirs.pfcount("r")
            ours.pfadd("o", *elements)
            theirs.restore("o", 0, ours.dump("o"), replace=True)
            assert ours.get("o") == theirs.get("o")
            assert ours.pfcount("o") == theirs.pfcount("o")

    @pytest.mark.parametrize("seed", range(4))
    def test_hostile_values(self, pair, seed):
        """Random damage to valid values: every command answers as Redis does (each starts from
        a fresh SET, so no command reads what another one left behind)."""
        rng = random.Random(1000 + seed)
        ours, theirs = pair
        theirs.pfadd("src", *["h%d" % i for i in range(rng.choice([5, 60, 600]))])
        sparse = theirs.get("src")
        theirs.pfadd("dsrc", *["h%d" % i for i in range(4000)])
        dense = theirs.get("dsrc")
        commands = [("PFCOUNT", "v"), ("PFCOUNT", "v", "ok"), ("PFADD", "v", "a", "b", "zz"),
                    ("PFADD", "v", *["f%d" % i for i in range(30)]), ("PFMERGE", "m", "v", "ok"),
                    ("PFMERGE", "v", "ok"), ("PFDEBUG", "DECODE", "v"),
                    ("PFDEBUG", "TODENSE", "v"), ("PFDEBUG", "ENCODING", "v")]
        for _ in range(150):
            value = bytearray(rng.choice([sparse, sparse, dense]))
            for _ in range(rng.randrange(1, 4)):
                op = rng.random()
                if op < 0.3 and len(value) > 16:
                    del value[rng.randrange(16, len(value)):]
                elif op < 0.6:
                    value[rng.randrange(len(value))] = rng.randrange(256)
                elif op < 0.8:
                    value[rng.randrange(16, len(value) + 1):] = bytes(
                        rng.randrange(256) for _ in range(rng.randrange(1, 6)))
                else:
                    value[rng.randrange(8, 16)] = rng.randrange(256)
            cmd = rng.choice(commands)
            for c in pair:
                c.delete("m")
                c.set("v", bytes(value))
                c.set("ok", sparse)
            assert _call(ours, *cmd) == _call(theirs, *cmd), (cmd, bytes(value).hex())
            self.both(pair, "GET", "v")
            self.both(pair, "GET", "m")
        self.both(pair, "PING")

    @pytest.mark.parametrize("seed", range(3))
    def test_hostile_opcodes(self, pair, seed):
        """Random opcode sequences covering about 16384 registers (some cut short, some with
        random unused and cache bytes), under random sparse limits."""
        rng = random.Random(2000 + seed)
        ours, theirs = pair
        theirs.pfadd("src", *["h%d" % i for i in range(60)])
        sparse = theirs.get("src")
        commands = [("PFCOUNT", "v"), ("PFCOUNT", "v", "ok"),
                    ("PFADD", "v", *["f%d" % i for i in range(60)]), ("PFMERGE", "m", "v", "ok"),
                    ("PFMERGE", "v", "ok"), ("PFDEBUG", "DECODE", "v"),
                    ("PFDEBUG", "TODENSE", "v")]
        for _ in range(100):
            body, total = bytearray(), 0
            target = 16384 + rng.choice([0, 0, 0, -1, 1, -5, 5, -300])
            while total < target:
                k = rng.random()
                if k < 0.3:
                    n = rng.randrange(1, 65)
                    body.append(n - 1)
                elif k < 0.6:
                    n = rng.randrange(1, min(16384, target - total + 50) + 1)
                    body += bytes([0x40 | ((n - 1) >> 8), (n - 1) & 0xFF])
                else:
                    n = rng.randrange(1, 5)
                    body.append(0x80 | (rng.randrange(32) << 2) | (n - 1))
                total += n
            if rng.random() < 0.3:
                del body[-1]
            card = STALE if rng.random() < 0.8 else bytes(rng.randrange(256) for _ in range(8))
            value = (b"HYLL\x01" + bytes(rng.randrange(256) for _ in range(3)) + card +
                     bytes(body))
            cmd = rng.choice(commands)
            limit = rng.choice([3000, 3000, 100, 0, 100000])
            for c in pair:
                c.config_set("hll-sparse-max-bytes", limit)
                c.delete("m")
                c.set("v", value)
                c.set("ok", sparse)
            assert _call(ours, *cmd) == _call(theirs, *cmd), (cmd, limit, value.hex())
            self.both(pair, "GET", "v")
            self.both(pair, "GET", "m")
