#!/usr/bin/env python3
"""Regenerates the fuzzers' seed corpus (tests/fuzz/corpus/) from real servers: a dashkv and a
Debian redis-server 7.0.15, each filled with every type and encoding it writes; every key's
DUMP payload becomes a seed of restore_payload_fuzz, and each server's SAVE (a small file and
one with the bigger values) a seed of rdb_load_fuzz, with the hand-made RDB files of
tests/data/rdb beside them.

Usage: make_corpus.py DASHKV_BINARY  (needs redis-server on PATH and redis-py; ports 6420, 6421)
"""
import os, random, shutil, subprocess, sys, tempfile, time

import redis

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "corpus")
DATA = os.path.join(HERE, "..", "data", "rdb")


def start(argv, port, workdir):
    try:
        redis.Redis(port=port).ping()
        raise RuntimeError("port %d is taken: stop that server first" % port)
    except redis.ConnectionError:
        pass
    proc = subprocess.Popen(argv + ["--port", str(port), "--dir", workdir],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    r = redis.Redis(port=port)
    for _ in range(100):
        try:
            r.ping()
            return proc, r
        except redis.ConnectionError:
            time.sleep(0.05)
    proc.kill()
    raise RuntimeError("server on port %d did not start" % port)


def fill_small(r, rng):
    """One key per type and small encoding."""
    for k, v in [("s_int8", "100"), ("s_int16", "-30000"), ("s_int32", "2000000000"),
                 ("s_int64", "123456789012"), ("s_text", "hello"), ("s_empty", ""),
                 ("s_lzf", "a" * 200 + "b" * 100 + "abc" * 30)]:
        r.set(k, v)
    r.set("s_bin", bytes(rng.randrange(256) for _ in range(40)))
    r.rpush("l_small", "a", "bb", 1, -2, 300000, 5000000000, "x" * 70)
    r.hset("h_small", mapping={"f1": "v1", "f2": 2, "f3": "x" * 30})
    r.sadd("set_int16", 1, 2, 3, -7)
    r.sadd("set_int64", 1, 5000000000)
    r.sadd("set_str", "a", "b", "c")
    r.zadd("z_small", {"a": 1, "b": 2.5, "c": -1e-300, "d": float("inf")})
    r.pfadd("hll_sparse", "a", "b", "c")
    r.xadd("st", {"f": "v", "n": 1}, id="1-1")
    r.xadd("st", {"f": "w", "n": 2}, id="1-2")
    r.xadd("st", {"g": "x"}, id="2-0")
    r.xdel("st", "1-2")
    r.xgroup_create("st", "g1", id="0")
    r.xreadgroup("g1", "alice", {"st": ">"}, count=1)
    r.xreadgroup("g1", "bob", {"st": ">"})
    r.xgroup_create("st", "g2", id="$")
    r.xadd("st_empty", {"a": "b"}, id="5-5")
    r.xdel("st_empty", "5-5")


def fill_big(r, rng):
    """The bigger encodings: multi-node quicklist, hashtables, skiplist, dense HLL."""
    r.set("s_big_lzf", "0123456789abcdef" * 400)
    r.rpush("l_big", *["element-%04d-%s" % (i, "y" * (i % 40)) for i in range(700)])
    r.hset("h_big", mapping={"field%d" % i: "value%d" % i for i in range(200)})
    r.hset("h_longval", "f", "v" * 100)
    r.sadd("set_big", *["m%d" % i for i in range(200)])
    r.sadd("set_bigint", *range(600))
    r.zadd("z_big", {"m%d" % i: i * 1.5 for i in range(200)})
    r.pfadd("hll_dense", *["e%d" % i for i in range(3000)])
    for i in range(120):
        r.xadd("st_big", {"i": i, "pad": "p" * (i % 9)}, id="%d-0" % (i + 1))
    r.xgroup_create("st_big", "grp", id="0")
    r.xreadgroup("grp", "c1", {"st_big": ">"}, count=30)


# Encodings only older Redis versions write (from tests/server/persistence/dump_payload_test.cc),
# as value bodies; the footer's CRC is left zero (the fuzzer recomputes it).
ZL3 = "14000000" "0f000000" "0300" "000161" "03fd" "02026263" "ff"
ZL2 = "10000000" "0d000000" "0200" "000161" "03fd" "ff"
LEGACY = {
    "linked_list": "010201610162",
    "zset_text": "03020161" "03312e35" "0162fe",
    "hash_plain": "040101610162",
    "set_plain": "0202c0070161",
    "list_ziplist": "0a14" + ZL3,
    "quicklist_v1": "0e0114" + ZL3,
    "hash_ziplist": "0d10" + ZL2,
    "zset_ziplist": "0c10" + ZL2,
    "hash_zipmap": "0909" "0101" "6602" "01" "7676" "00" "ff",
    "quicklist_plain": "1201" "01" "03616263",
    "stream_v1": "0f00" "00" "0500" "01" "0167" "0000" "00" "00",
}


def write_legacy(out):
    for name, body in LEGACY.items():
        with open(os.path.join(out, "legacy-" + name), "wb") as f:
            f.write(bytes.fromhex(body) + b"\x0a\x00" + bytes(8))


def dump_all(r, tag, out):
    for key in sorted(r.keys("*")):
        payload = r.dump(key)
        with open(os.path.join(out, "%s-%s" % (tag, key.decode())), "wb") as f:
            f.write(payload)


def save(r, workdir, dest):
    r.save()
    shutil.copy(os.path.join(workdir, "dump.rdb"), dest)


def main():
    dashkv = sys.argv[1]
    restore_dir = os.path.join(CORPUS, "restore_payload")
    rdb_dir = os.path.join(CORPUS, "rdb_load")
    for d in (restore_dir, rdb_dir):
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
    servers = [("redis", ["redis-server", "--save", "", "--appendonly", "no",
                          "--enable-debug-command", "yes"], 6421),
               ("dashkv", [dashkv, "--threads", "1"], 6420)]
    for tag, argv, port in servers:
        workdir = tempfile.mkdtemp()
        proc, r = start(argv, port, workdir)
        try:
            rng = random.Random(7)
            fill_small(r, rng)
            save(r, workdir, os.path.join(rdb_dir, tag + "-small.rdb"))
            fill_big(r, rng)
            dump_all(r, tag, restore_dir)
            r.flushall()
            fill_big(r, rng)
            save(r, workdir, os.path.join(rdb_dir, tag + "-big.rdb"))
            if tag == "redis":  # a PLAIN quicklist node (Redis 7.0: elements over the threshold)
                r.flushall()
                r.execute_command("DEBUG", "QUICKLIST-PACKED-THRESHOLD", "100")
                r.rpush("l_plain", "small", "p" * 200, "tail")
                dump_all(r, tag, restore_dir)
                save(r, workdir, os.path.join(rdb_dir, tag + "-plain.rdb"))
        finally:
            proc.terminate()
            proc.wait()
            shutil.rmtree(workdir, ignore_errors=True)
    write_legacy(restore_dir)
    for name in ("golden.rdb", "stream.rdb", "function.rdb"):
        shutil.copy(os.path.join(DATA, name), os.path.join(rdb_dir, "data-" + name))


if __name__ == "__main__":
    main()
