"""Config files (`dashkv file.conf --flags`, as `redis-server file.conf --flags`): directives,
include, quoting, units, flags over the file, start-up errors with the line, CONFIG REWRITE;
and CONFIG GET / SET with several names, CONFIG RESETSTAT. Expected values are redis-server
7.0.15's; both servers read the same files."""

import redis
import pytest

from config_helpers import conf_server  # noqa: F401 (fixture)


def _get(c, *names):
    return c.config_get(*names)


def test_file_settings_units_quotes_and_include(conf_server):
    inc_dir = None
    srv = conf_server(start=False)
    inc_dir = srv.workdir
    (inc_dir / "extra.conf").write_text("hz 17\nmaxmemory 2gb\n")
    srv.conf_path.write_text(srv.conf_path.read_text() + (
        "# a comment\n"
        "  maxmemory 100mb  \n"
        "HASH-MAX-ZIPLIST-ENTRIES 99\n"
        "save 900 1\n"
        "save \"300 10\"\n"
        "dbfilename \"my dump.rdb\"\n"
        "requirepass 'it\\'s \"secret\"'\n"
        "hll-sparse-max-bytes 3k\n"
        "stream-node-max-bytes 4kb\n"
        "client-output-buffer-limit pubsub 1mb 2mb 3\n"
        "notify-keyspace-events \"Kx\"\n"
        "include %s/extra.conf\n"
        "timeout 7\n" % inc_dir))
    srv.start()
    c = redis.Redis(host=srv.host, port=srv.port, password="it's \"secret\"",
                    decode_responses=True)
    cfg = c.config_get("*")
    assert cfg["maxmemory"] == str(2 << 30)  # the include came later
    assert cfg["hz"] == "17"
    assert cfg["hash-max-listpack-entries"] == "99"
    assert cfg["save"] == "900 1 300 10"
    assert cfg["dbfilename"] == "my dump.rdb"
    assert cfg["hll-sparse-max-bytes"] == "3000"
    assert cfg["stream-node-max-bytes"] == "4096"
    assert cfg["client-output-buffer-limit"].endswith("pubsub 1048576 2097152 3")
    assert cfg["notify-keyspace-events"] == "xK"
    assert cfg["timeout"] == "7"
    info = c.info("server")
    assert info["config_file"] == str(srv.conf_path)
    c.close()


def test_flags_override_the_file(conf_server):
    srv = conf_server("hz 33\ntimeout 7\nmaxmemory 1mb\n", extra_args=["--hz", "20"])
    c = redis.Redis(host=srv.host, port=srv.port, decode_responses=True)
    assert c.config_get("hz", "timeout", "maxmemory") == {
        "hz": "20", "timeout": "7", "maxmemory": "1048576"}
    c.close()


@pytest.mark.parametrize("line,reason", [
    ("foo bar", "Bad directive or wrong number of arguments"),
    ("port 70000", "argument must be between 0 and 65535 inclusive"),
    ("port", "wrong number of arguments"),
    ("timeout 1 2", "wrong number of arguments"),
    ("save 1", "Invalid save parameters"),
    ("rdbcompression maybe", "argument must be 'yes' or 'no'"),
    ("maxmemory 10zb", "argument must be a memory value"),
    ("hz abc", "argument couldn't be parsed into an integer"),
    ("dbfilename \"abc", "Unbalanced quotes in configuration line"),
    ("dbfilename \"abc\"def", "Unbalanced quotes in configuration line"),
    ("maxmemory-policy foo", "argument(s) must be one of the following: volatile-lru, "
     "volatile-lfu, volatile-random, volatile-ttl, allkeys-lru, allkeys-lfu, allkeys-random, "
     "noeviction"),
    ("dir /nonexistent-dashkv-dir", "No such file or directory"),
])
def test_bad_directive_stops_start_with_line(conf_server, line, reason):
    srv = conf_server("# comment\n\n" + line + "\n", start=False)
    rc, out = srv.start_failure()
    assert rc != 0
    assert "*** FATAL CONFIG FILE ERROR" in out, out
    assert ", at line 6\n" in out, out  # base_conf has 3 lines
    assert ">>> '%s'\n%s" % (line, reason) in out, out


def test_binary_bytes_are_a_bad_directive(conf_server):
    srv = conf_server(b"\xff\xfe\x01 value\n", start=False)
    rc, out = srv.start_failure()
    assert rc != 0
    assert "Bad directive or wrong number of arguments" in out, out


def test_missing_include_stops_start(conf_server):
    srv = conf_server(start=False)
    missing = srv.workdir / "missing.conf"
    srv.conf_path.write_text(srv.conf_path.read_text() + "include %s\n" % missing)
    rc, out = srv.start_failure()
    assert rc != 0
    assert "Fatal error, can't open config file '%s': No such file or directory" % missing in out


@pytest.mark.dashkv_only  # redis-server 7.0 recurses until it runs out of file descriptors
def test_include_loop_stops_start(conf_server):
    srv = conf_server(start=False)
    (srv.workdir / "b.conf").write_text("include %s\n" % srv.conf_path)
    srv.conf_path.write_text(srv.conf_path.read_text() + "include %s/b.conf\n" % srv.workdir)
    rc, out = srv.start_failure()
    assert rc != 0
    assert "include loop" in out, out


def test_huge_lines(conf_server):
    # A 1 MiB comment, a 1 MiB line of white space around a value, a 1 MiB quoted value.
    big = 1 << 20
    srv = conf_server("#" + "c" * big + "\nhz" + " " * big + "15\t" * 1 + "\n"
                      "notify-keyspace-events \"" + "K" * big + "\"\n")
    c = redis.Redis(host=srv.host, port=srv.port, decode_responses=True)
    assert c.config_get("hz", "notify-keyspace-events") == {"hz": "15",
                                                            "notify-keyspace-events": "K"}
    c.close()


def test_rewrite_keeps_comments_and_order(conf_server):
    srv = conf_server("# top comment\nmaxmemory 100mb\n# middle comment\n"
                      "hash-max-ziplist-entries 100\nhz 10\ntimeout 0\n")
    c = redis.Redis(host=srv.host, port=srv.port, decode_responses=True)
    assert c.config_set("maxmemory", "1gb") is True
    c.execute_command("CONFIG", "SET", "hash-max-listpack-entries", "512",
                      "maxmemory-policy", "allkeys-lru", "timeout", "30",
                      "notify-keyspace-events", "KEA")
    assert c.execute_command("CONFIG", "REWRITE") == "OK"
    lines = srv.conf_path.read_text().split("\n")
    # Changed settings in place, comments and the rest where they were.
    expected_in_order = ["# top comment", "maxmemory 1gb", "# middle comment",
                         "hash-max-listpack-entries 512", "hz 10", "timeout 30"]
    positions = [lines.index(line) for line in expected_in_order]
    assert positions == sorted(positions), lines
    assert 'save ""' in lines, lines  # base_conf's, rewritten in place
    # New settings below the signature.
    tail = lines[lines.index("# Generated by CONFIG REWRITE"):]
    assert "maxmemory-policy allkeys-lru" in tail, lines
    assert 'notify-keyspace-events "AKE"' in tail, lines
    assert sum(line == "# Generated by CONFIG REWRITE" for line in lines) == 1
    # A second rewrite keeps one signature; the file starts the server with the same settings.
    c.config_set("hz", "20")
    assert c.execute_command("CONFIG", "REWRITE") == "OK"
    text = srv.conf_path.read_text()
    assert text.count("# Generated by CONFIG REWRITE") == 1
    assert "\nhz 20\n" in text
    c.close()
    srv.stop()
    srv.start()
    c = redis.Redis(host=srv.host, port=srv.port, decode_responses=True)
    got = c.config_get("maxmemory", "hash-max-listpack-entries", "maxmemory-policy", "timeout",
                       "notify-keyspace-events", "hz", "save")
    assert got == {"maxmemory": str(1 << 30), "hash-max-listpack-entries": "512",
                   "maxmemory-policy": "allkeys-lru", "timeout": "30",
                   "notify-keyspace-events": "AKE", "hz": "20", "save": ""}
    c.close()


def test_rewrite_when_the_file_cannot_be_written(conf_server, tmp_path):
    # Tests may run as root (permissions do not stop root): the file's directory goes instead.
    conf_dir = tmp_path / "confdir"
    conf_dir.mkdir()
    srv = conf_server(start=False)
    moved = conf_dir / "moved.conf"
    moved.write_text(srv.conf_path.read_text())
    srv.conf_path = moved
    srv.start()
    for f in conf_dir.iterdir():
        f.unlink()
    conf_dir.rmdir()
    c = redis.Redis(host=srv.host, port=srv.port, decode_responses=True)
    with pytest.raises(redis.ResponseError) as e:
        c.execute_command("CONFIG", "REWRITE")
    assert str(e.value) == "Rewriting config file: No such file or directory"
    c.close()


def test_rewrite_without_config_file(r):
    with pytest.raises(redis.ResponseError) as e:
        r.execute_command("CONFIG", "REWRITE")
    assert str(e.value) == "The server is running without a config file"


def test_config_get_several_patterns(r):
    got = r.execute_command("CONFIG", "GET", "maxmemory", "HZ", "hash-max-*-entries",
                            "nosuch*", "maxmemory")
    got = dict(zip(got[::2], got[1::2])) if isinstance(got, list) else got
    assert got["maxmemory"] == "0"
    assert got["HZ"] == "10"
    assert "hash-max-listpack-entries" in got and "hash-max-ziplist-entries" in got
    assert not any(k.startswith("nosuch") for k in got)
    with pytest.raises(redis.ResponseError) as e:
        r.execute_command("CONFIG", "GET")
    assert "wrong number of arguments" in str(e.value)


def test_config_set_several_pairs_atomic(r):
    try:
        assert r.execute_command("CONFIG", "SET", "hz", "25", "maxmemory", "10mb") == "OK"
        assert r.config_get("hz", "maxmemory") == {"hz": "25", "maxmemory": str(10 << 20)}
        # One bad value: nothing changes.
        with pytest.raises(redis.ResponseError) as e:
            r.execute_command("CONFIG", "SET", "hz", "30", "maxmemory", "lots", "timeout", "5")
        assert str(e.value) == ("CONFIG SET failed (possibly related to argument 'maxmemory') - "
                                "argument must be a memory value")
        assert r.config_get("hz", "maxmemory", "timeout") == {
            "hz": "25", "maxmemory": str(10 << 20), "timeout": "0"}
        # A value applied before a later one failed is rolled back too.
        with pytest.raises(redis.ResponseError) as e:
            r.execute_command("CONFIG", "SET", "timeout", "9", "maxmemory-policy", "bogus")
        assert "argument 'maxmemory-policy'" in str(e.value)
        assert r.config_get("timeout")["timeout"] == "0"
        with pytest.raises(redis.ResponseError) as e:
            r.execute_command("CONFIG", "SET", "hz", "11", "HZ", "12")
        assert str(e.value) == ("CONFIG SET failed (possibly related to argument 'HZ') - "
                                "duplicate parameter")
        with pytest.raises(redis.ResponseError) as e:
            r.execute_command("CONFIG", "SET", "hz", "11", "nosuch", "1")
        assert str(e.value) == ("Unknown option or number of arguments for CONFIG SET - "
                                "'nosuch'")
        with pytest.raises(redis.ResponseError) as e:
            r.execute_command("CONFIG", "SET", "hz", "11", "timeout")
        assert "syntax error" in str(e.value)
        assert r.config_get("hz")["hz"] == "25"
    finally:
        r.execute_command("CONFIG", "SET", "hz", "10", "maxmemory", "0", "timeout", "0")


def test_config_resetstat(r):
    r.set("k", "v")
    r.get("k")
    r.get("missing")
    stats = r.info("stats")
    assert stats["keyspace_hits"] >= 1 and stats["keyspace_misses"] >= 1
    assert "cmdstat_get" in r.info("commandstats")
    assert r.execute_command("CONFIG", "RESETSTAT") == "OK"
    stats = r.info("stats")
    assert stats["keyspace_hits"] == 0 and stats["keyspace_misses"] == 0
    assert "cmdstat_get" not in r.info("commandstats")


def test_rewrite_round_trip_of_diagnostics_settings(conf_server):
    # latency-tracking-info-percentiles is written as several words, as Redis writes it, and
    # read back from them.
    srv = conf_server("slowlog-max-len 64\n")
    c = redis.Redis(host=srv.host, port=srv.port, decode_responses=True)
    c.execute_command("CONFIG", "SET", "latency-tracking-info-percentiles", "50 99.5",
                      "slowlog-log-slower-than", "5", "latency-monitor-threshold", "7",
                      "latency-tracking", "no")
    assert c.execute_command("CONFIG", "REWRITE") == "OK"
    assert "\nlatency-tracking-info-percentiles 50 99.5\n" in srv.conf_path.read_text()
    c.close()
    srv.stop()
    srv.start()
    c = redis.Redis(host=srv.host, port=srv.port, decode_responses=True)
    assert c.config_get("latency-tracking-info-percentiles", "slowlog-*", "latency-*") == {
        "latency-tracking-info-percentiles": "50 99.5", "slowlog-log-slower-than": "5",
        "slowlog-max-len": "64", "latency-monitor-threshold": "7", "latency-tracking": "no"}
    c.close()


def test_user_lines_define_acl_users(conf_server):
    srv = conf_server('user bob on >s3cret ~app:* +get +set\nuser default on nopass ~* &* +@all\n')
    c = srv.raw()
    assert c.call("AUTH", "bob", "s3cret") == "OK"
    assert str(c.call("ACL", "WHOAMI")).startswith("NOPERM")  # only GET and SET
    assert c.call("SET", "app:1", "v") == "OK"
    assert str(c.call("SET", "other", "v")).startswith("NOPERM")
    c.close()


@pytest.mark.parametrize("lines", [
    "user bob on >pw ~* +@all badrule\n",
    "user bob on >pw\naclfile \"%(dir)s/users.acl\"\n",
])
def test_bad_user_lines_stop_start(conf_server, lines):
    srv = conf_server(start=False)
    (srv.workdir / "users.acl").write_text("user default on nopass ~* &* +@all\n")
    srv.conf_path.write_text(srv.conf_path.read_text() + lines % {"dir": srv.workdir})
    rc, _ = srv.start_failure()
    assert rc != 0
