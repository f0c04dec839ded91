#!/usr/bin/env python3
"""Writes the golden RDB files of tests/data/rdb/ with a real redis-server (7.0.15) and the
expected content of each (expected_<name>.txt), then checks damaged copies with redis-check-rdb
(damaged.txt). Usage: make_golden.py OUT_DIR  (needs redis-server and redis-check-rdb on PATH).

Expected line: db <TAB> hex(key) <TAB> type <TAB> pexpiretime (-1: none) <TAB> fnv1a64 of the
canonical value (string: bytes; list: elements in order; set: sorted members; zset: ZRANGE
order, member then score as %.17g; hash: pairs sorted by field; each item as
"<decimal len>:<bytes>")."""
import os, random, shutil, socket, subprocess, sys, tempfile, time

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
FAR = 4102444800000  # 2100-01-01 in ms


class Resp:
    def __init__(self, port):
        self.s = socket.create_connection(("127.0.0.1", port))
        self.f = self.s.makefile("rb")

    def cmd(self, *args):
        out = b"*%d\r\n" % len(args)
        for a in args:
            a = a if isinstance(a, bytes) else str(a).encode()
            out += b"$%d\r\n%s\r\n" % (len(a), a)
        self.s.sendall(out)
        return self.read()

    def read(self):
        line = self.f.readline()[:-2]
        t, rest = line[:1], line[1:]
        if t == b"+":
            return rest
        if t == b"-":
            raise RuntimeError(rest.decode())
        if t == b":":
            return int(rest)
        if t == b"$":
            n = int(rest)
            if n < 0:
                return None
            data = self.f.read(n + 2)[:-2]
            return data
        if t == b"*":
            n = int(rest)
            return None if n < 0 else [self.read() for _ in range(n)]
        raise RuntimeError("bad reply %r" % line)


def fill(r, rng):
    """Every type and encoding Redis 7.0 writes (no streams, no functions)."""
    r.cmd("DEBUG", "SET-ACTIVE-EXPIRE", "0")
    r.cmd("SELECT", 0)
    for k, v in [("s_empty", ""), ("s_int8", "100"), ("s_int16", "-30000"),
                 ("s_int32", "2000000000"), ("s_int64", "123456789012"), ("s_007", "007"),
                 ("s_plus", "+1"), ("s_lzf", "a" * 200 + "b" * 100 + "abc" * 30)]:
        r.cmd("SET", k, v)
    r.cmd("SET", b"s_bin", b"\x00\r\n\xff binary \x00")
    r.cmd("SET", "s_rand", bytes(rng.randrange(256) for _ in range(300)))
    r.cmd("SET", b"\x00bin\xffkey", b"binary key")
    r.cmd("SET", "12345", "int-encoded key")
    r.cmd("SET", "-1", "negative int key")
    r.cmd("RPUSH", "l_small", "a", "b", "c", "1", "2", "3", "-100000", "9999999999")
    r.cmd("RPUSH", "l_big", *["item:%05d" % i for i in range(2000)])
    r.cmd("DEBUG", "QUICKLIST-PACKED-THRESHOLD", "1K")
    r.cmd("RPUSH", "l_plain", "small", "x" * 1500, "tail")
    r.cmd("SADD", "set_i16", *range(1, 101))
    r.cmd("SADD", "set_i32", 70000, -70000, 1 << 30)
    r.cmd("SADD", "set_i64", 5000000000, -5000000000, 1)
    r.cmd("SADD", "set_ht", "apple", "banana", "cherry", "1")
    r.cmd("SADD", "set_bigint", *range(1000, 1600))
    r.cmd("ZADD", "z_lp", "-inf", "neg", "0", "zero", "1.5", "x", "1.5", "a", "inf", "pos")
    args = []
    for i in range(200):
        args += [repr(i * 0.25 - 7), "m%03d" % i]
    args += ["inf", "top", "-inf", "bottom", "1e-300", "tiny"]
    r.cmd("ZADD", "z_skip", *args)
    r.cmd("HSET", "h_lp", "f1", "v1", "f2", "2", "f3", "")
    hargs = []
    for i in range(600):
        hargs += ["field:%d" % i, "value:%d" % (i * 7)]
    r.cmd("HSET", "h_ht", *hargs)
    r.cmd("HSET", "h_bigval", "k", "v" * 100)
    r.cmd("SET", "ttl_far", "x")
    r.cmd("PEXPIREAT", "ttl_far", FAR)
    r.cmd("RPUSH", "ttl_list", "a", "b")
    r.cmd("PEXPIREAT", "ttl_list", FAR + 1)
    r.cmd("SET", "ttl_past", "gone", "PX", 50)  # saved with a passed deadline
    r.cmd("SELECT", 1)
    r.cmd("SET", "s_int8", "db1 value")
    r.cmd("HSET", "h_lp", "only", "db1")
    r.cmd("SELECT", 3)
    r.cmd("SADD", "set_ht", "x", "y")
    r.cmd("SELECT", 15)
    r.cmd("SET", "last_db", "15")
    time.sleep(0.2)  # ttl_past's deadline passes (active expiry is off, nothing reads it)


def fnv(data):
    h = 0xcbf29ce484222325
    for b in data:
        h = ((h ^ b) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return h


def item(b):
    return b"%d:%s" % (len(b), b)


def canonical(r, key, typ):
    if typ == "string":
        return r.cmd("GET", key)
    if typ == "list":
        return b"".join(item(e) for e in r.cmd("LRANGE", key, 0, -1))
    if typ == "set":
        return b"".join(item(e) for e in sorted(r.cmd("SMEMBERS", key)))
    if typ == "zset":
        flat = r.cmd("ZRANGE", key, 0, -1, "WITHSCORES")
        out = b""
        for m, s in zip(flat[0::2], flat[1::2]):
            out += item(m) + item(("%.17g" % float(s)).encode())
        return out
    if typ == "hash":
        flat = r.cmd("HGETALL", key)
        pairs = sorted(zip(flat[0::2], flat[1::2]))
        return b"".join(item(f) + item(v) for f, v in pairs)
    raise RuntimeError(typ)


def capture(r):
    lines = []
    for db in range(16):
        r.cmd("SELECT", db)
        for key in sorted(r.cmd("KEYS", "*")):
            typ = r.cmd("TYPE", key).decode()
            lines.append("%d\t%s\t%s\t%d\t%016x" % (db, key.hex(), typ,
                                                   r.cmd("PEXPIRETIME", key),
                                                   fnv(canonical(r, key, typ))))
    return lines


def run_redis(tmp, extra, body):
    port = random.randrange(20000, 30000)
    log = open(os.path.join(tmp, "redis.log"), "w")
    p = subprocess.Popen(["redis-server", "--port", str(port), "--bind", "127.0.0.1",
                          "--save", "", "--appendonly", "no", "--dir", tmp,
                          "--enable-debug-command", "yes"] + extra, stdout=log, stderr=log)
    try:
        for _ in range(100):
            try:
                r = Resp(port)
                r.cmd("PING")
                break
            except OSError:
                time.sleep(0.05)
        return body(r)
    finally:
        p.terminate()
        p.wait()


def make(name, extra, filler, expect=True):
    tmp = tempfile.mkdtemp()
    try:
        def body(r):
            filler(r)
            r.cmd("SAVE")
        run_redis(tmp, extra + ["--dbfilename", name + ".rdb"], body)
        shutil.copy(os.path.join(tmp, name + ".rdb"), os.path.join(OUT, name + ".rdb"))
        if not expect:
            return
        # The expected content is what Redis itself serves after loading the file (ttl_past is
        # dropped then, as dashkv must drop it).
        lines = run_redis(tmp, extra + ["--dbfilename", name + ".rdb"], capture)
        with open(os.path.join(OUT, "expected_" + name + ".txt"), "w") as f:
            f.write("\n".join(lines) + "\n")
    finally:
        shutil.rmtree(tmp)


def fill_stream(r):
    r.cmd("SET", "before", "1")
    r.cmd("XADD", "events", "1-1", "f", "v")
    r.cmd("XGROUP", "CREATE", "events", "g1", "0")
    r.cmd("XREADGROUP", "GROUP", "g1", "c1", "COUNT", "1", "STREAMS", "events", ">")


def fill_function(r):
    r.cmd("FUNCTION", "LOAD",
          "#!lua name=mylib\nredis.register_function('knock', function() return 'who' end)")
    r.cmd("SET", "k", "v")


def check_damaged():
    """redis-check-rdb's verdict on damaged copies of golden.rdb (damaged.txt)."""
    src = open(os.path.join(OUT, "golden.rdb"), "rb").read()
    cases = []
    for cut in (5, 9, 20, 100, len(src) // 3, len(src) // 2, len(src) - 9, len(src) - 8,
                len(src) - 1):
        cases.append(("cut", cut, src[:cut]))
    for at in (len(src) // 4, len(src) // 2, len(src) - 1):
        b = bytearray(src)
        b[at] ^= 0x10
        cases.append(("flip", at, bytes(b)))
    b = bytearray(src)
    b[5:9] = b"0011"
    cases.append(("version", 11, bytes(b)))
    lines = []
    tmp = tempfile.mkdtemp()
    try:
        for kind, arg, data in cases:
            path = os.path.join(tmp, "d.rdb")
            open(path, "wb").write(data)
            res = subprocess.run(["redis-check-rdb", path], capture_output=True, text=True)
            out = res.stdout + res.stderr
            reason = ""
            for l in out.splitlines():
                if "--- RDB ERROR DETECTED ---" in l:
                    reason = "?"
                elif reason == "?" and l.startswith("[offset"):
                    reason = l.strip()
            lines.append("%s\t%d\t%d\t%s" % (kind, arg, res.returncode, reason))
    finally:
        shutil.rmtree(tmp)
    with open(os.path.join(OUT, "damaged.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    rng = random.Random(15)
    make("golden", [], lambda r: fill(r, rng))
    rng = random.Random(15)
    make("golden_nocompress", ["--rdbcompression", "no", "--list-compress-depth", "1"],
         lambda r: fill(r, rng))
    rng = random.Random(15)
    make("golden_nochecksum", ["--rdbchecksum", "no"], lambda r: fill(r, rng))
    make("stream", [], fill_stream, expect=False)
    make("function", [], fill_function, expect=False)
    check_damaged()
