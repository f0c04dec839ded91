"""Connection and server commands: PING ECHO QUIT HELLO SELECT DBSIZE FLUSH*
COMMAND CLIENT INFO CONFIG TIME DEBUG MEMORY."""

import re
import time

import pytest

from helpers import (ERR_NOT_INT, ERR_SYNTAX, IS_DASHKV, active_expiry_off, arity, assert_err,
                     wait_until)
from resp_client import Map, Simple, Verbatim


def fill(r, keys, value="v"):
    with r.pipeline(transaction=False) as p:
        for k in keys:
            p.set(k, value)
        p.execute()


class TestConnection:
    def test_ping(self, raw):
        reply = raw.call("PING")
        assert reply == "PONG" and isinstance(reply, Simple)
        reply = raw.call("PING", "hello world")
        assert reply == b"hello world"  # a bulk string, not a simple string
        assert raw.call("PING", "") == b""
        assert_err(raw.call("PING", "a", "b"), arity("ping"))

    def test_command_names_case_insensitive(self, raw):
        assert raw.call("ping") == "PONG"
        assert raw.call("PiNg") == "PONG"

    def test_echo(self, raw):
        assert raw.call("ECHO", "hi") == b"hi"
        assert raw.call("ECHO", b"\x00\r\n\xff") == b"\x00\r\n\xff"
        assert_err(raw.call("ECHO"), arity("echo"))
        assert_err(raw.call("ECHO", "a", "b"), arity("echo"))

    def test_quit(self, server, raw):
        raw.call("SET", "k", "v")
        reply = raw.call("QUIT")
        assert reply == "OK" and isinstance(reply, Simple)
        assert raw.is_closed()
        server.assert_alive()

    def test_quit_discards_pipelined_commands(self, server, r, raw):
        raw.send(b"*1\r\n$4\r\nQUIT\r\n*3\r\n$3\r\nSET\r\n$5\r\nafter\r\n$1\r\nx\r\n")
        assert raw.read() == "OK"
        assert raw.is_closed()
        assert r.exists("after") == 0


class TestHello:
    def test_hello2(self, raw):
        reply = raw.call("HELLO", "2")
        assert isinstance(reply, list) and len(reply) == 14
        fields = dict(zip(reply[::2], reply[1::2]))
        assert list(fields) == [b"server", b"version", b"proto", b"id", b"mode", b"role",
                                b"modules"]
        assert fields[b"proto"] == 2
        assert fields[b"version"].startswith(b"7.")
        assert fields[b"mode"] == b"standalone"
        assert fields[b"role"] == b"master"
        assert fields[b"modules"] == []
        assert fields[b"id"] == raw.call("CLIENT", "ID")

    def test_hello3_map(self, server, raw):
        reply = raw.call("HELLO", "3")
        assert isinstance(reply, Map)
        fields = reply.to_dict()
        assert [k for k, _ in reply] == [b"server", b"version", b"proto", b"id", b"mode",
                                          b"role", b"modules"]
        assert fields[b"proto"] == 3
        assert fields[b"version"].startswith(b"7.")
        if server.is_redis:
            assert fields[b"server"] == b"redis"
        assert fields[b"mode"] == b"standalone"
        assert fields[b"role"] == b"master"
        assert fields[b"modules"] == []
        assert fields[b"id"] == raw.call("CLIENT", "ID")
        # The connection now speaks RESP3: a null is "_".
        raw.send(b"*2\r\n$3\r\nGET\r\n$7\r\nmissing\r\n")
        assert raw.read_raw(3) == b"_\r\n"
        # And back to RESP2.
        assert isinstance(raw.call("HELLO", "2"), list)
        raw.send(b"*2\r\n$3\r\nGET\r\n$7\r\nmissing\r\n")
        assert raw.read_raw(5) == b"$-1\r\n"

    def test_hello_no_args_keeps_protocol(self, raw):
        reply = raw.call("HELLO")
        assert isinstance(reply, list) and reply[5] == 2

    def test_hello_setname(self, raw):
        raw.call("HELLO", "3", "SETNAME", "myname")
        assert raw.call("CLIENT", "GETNAME") == b"myname"

    def test_hello_errors(self, raw):
        assert_err(raw.call("HELLO", "4"), "NOPROTO unsupported protocol version")
        assert_err(raw.call("HELLO", "1"), "NOPROTO unsupported protocol version")
        assert_err(raw.call("HELLO", "abc"),
                   "ERR Protocol version is not an integer or out of range")
        assert_err(raw.call("HELLO", "3", "FOO"), "ERR Syntax error in HELLO option 'FOO'")
        # The failed HELLO did not switch the protocol.
        raw.send(b"*2\r\n$3\r\nGET\r\n$7\r\nmissing\r\n")
        assert raw.read_raw(5) == b"$-1\r\n"


class TestDatabases:
    def test_select_isolates(self, raw):
        assert raw.call("SELECT", "0") == "OK"
        raw.call("SET", "k", "zero")
        assert raw.call("SELECT", "15") == "OK"
        assert raw.call("GET", "k") is None
        raw.call("SET", "k", "fifteen")
        assert raw.call("DBSIZE") == 1
        raw.call("SELECT", "0")
        assert raw.call("GET", "k") == b"zero"

    def test_select_errors(self, raw):
        assert_err(raw.call("SELECT", "16"), "ERR DB index is out of range")
        assert_err(raw.call("SELECT", "-1"), "ERR DB index is out of range")
        assert_err(raw.call("SELECT", "x"), ERR_NOT_INT)
        assert_err(raw.call("SELECT"), arity("select"))

    def test_select_is_per_connection(self, raw, raw_factory):
        other = raw_factory()
        raw.call("SELECT", "3")
        raw.call("SET", "k", "v")
        assert other.call("GET", "k") is None
        other.call("SELECT", "3")
        assert other.call("GET", "k") == b"v"

    def test_dbsize(self, r, raw):
        assert raw.call("DBSIZE") == 0
        fill(r, ["d:%d" % i for i in range(500)])
        assert raw.call("DBSIZE") == 500
        assert_err(raw.call("DBSIZE", "x"), arity("dbsize"))

    def test_flushdb(self, r, raw):
        fill(r, ["f:%d" % i for i in range(300)])
        raw.call("SELECT", "1")
        raw.call("SET", "k1", "v")
        reply = raw.call("FLUSHDB")
        assert reply == "OK" and isinstance(reply, Simple)
        assert raw.call("DBSIZE") == 0
        raw.call("SELECT", "0")
        assert raw.call("DBSIZE") == 300
        assert raw.call("FLUSHDB", "ASYNC") == "OK"
        assert raw.call("DBSIZE") == 0
        assert raw.call("FLUSHDB", "sync") == "OK"
        assert_err(raw.call("FLUSHDB", "foo"), ERR_SYNTAX)

    @pytest.mark.parametrize("mode", [(), ("SYNC",), ("ASYNC",), ("async",)])
    def test_flushall(self, r, raw, mode):
        fill(r, ["f:%d" % i for i in range(300)])
        raw.call("SELECT", "5")
        raw.call("SET", "k", "v")
        assert raw.call("FLUSHALL", *mode) == "OK"
        assert raw.call("DBSIZE") == 0
        assert raw.call("EXISTS", "k") == 0
        raw.call("SELECT", "0")
        assert raw.call("DBSIZE") == 0
        assert raw.call("KEYS", "*") == []

    def test_flushall_errors(self, raw):
        assert_err(raw.call("FLUSHALL", "foo"), ERR_SYNTAX)
        assert_err(raw.call("FLUSHALL", "SYNC", "ASYNC"), ERR_SYNTAX)


class TestCommand:
    def test_count_matches_command(self, raw):
        count = raw.call("COMMAND", "COUNT")
        assert isinstance(count, int) and count > 50
        assert len(raw.call("COMMAND")) == count

    @pytest.mark.parametrize("name,arity_,flags,first,last,step", [
        ("get", 2, ["readonly", "fast"], 1, 1, 1),
        ("set", -3, ["write", "denyoom"], 1, 1, 1),
        ("del", -2, ["write"], 1, -1, 1),
        ("mget", -2, ["readonly", "fast"], 1, -1, 1),
        ("incr", 2, ["write", "denyoom", "fast"], 1, 1, 1),
        ("expire", -3, ["write", "fast"], 1, 1, 1),
        ("ping", -1, ["fast"], 0, 0, 0),
        ("scan", -2, ["readonly"], 0, 0, 0),
        ("bitfield_ro", -2, ["readonly", "fast"], 1, 1, 1),
    ])
    def test_info(self, raw, name, arity_, flags, first, last, step):
        reply = raw.call("COMMAND", "INFO", name)
        assert len(reply) == 1
        info = reply[0]
        assert info[0] == name.encode()
        assert info[1] == arity_
        assert info[2] == flags
        assert info[3:6] == [first, last, step]
        # ACL categories, tips, key specs, subcommands.
        assert len(info) == 10

    def test_info_case_and_unknown(self, raw):
        reply = raw.call("COMMAND", "INFO", "GET", "nosuchcmd", "Set")
        assert [x[0] if x else None for x in reply] == [b"get", None, b"set"]

    def test_docs(self, raw):
        reply = raw.call("COMMAND", "DOCS", "get")
        assert reply[0] == b"get"
        doc = dict(zip(reply[1][::2], reply[1][1::2]))
        assert doc[b"group"] == b"string"
        assert doc[b"since"] == b"1.0.0"
        assert isinstance(doc[b"summary"], bytes) and doc[b"summary"]
        assert raw.call("COMMAND", "DOCS", "nosuchcmd") == []

    def test_docs_resp3_map(self, raw):
        raw.call("HELLO", "3")
        reply = raw.call("COMMAND", "DOCS", "set")
        assert isinstance(reply, Map)
        doc = reply.to_dict()[b"set"]
        assert isinstance(doc, Map)
        assert doc.to_dict()[b"group"] == b"string"

    def test_list(self, raw):
        names = set(raw.call("COMMAND", "LIST"))
        for c in (b"get", b"set", b"del", b"scan", b"hello", b"command", b"bitfield",
                  b"incrbyfloat", b"getex", b"expiretime"):
            assert c in names
        top = {x[0] for x in raw.call("COMMAND")}
        assert {n for n in names if b"|" not in n} == top
        assert raw.call("COMMAND", "LIST", "FILTERBY", "PATTERN", "getra*") == [b"getrange"]

    def test_errors(self, raw):
        assert_err(raw.call("COMMAND", "FOO"),
                   "ERR unknown subcommand 'FOO'. Try COMMAND HELP.")
        assert_err(raw.call("COMMAND", "COUNT", "x"),
                   "ERR wrong number of arguments for 'command|count' command")


class TestClient:
    def test_id(self, raw, raw_factory):
        a = raw.call("CLIENT", "ID")
        b = raw_factory().call("CLIENT", "ID")
        assert isinstance(a, int) and isinstance(b, int) and a > 0 and b > a
        assert raw.call("CLIENT", "ID") == a

    def test_name(self, raw):
        assert raw.call("CLIENT", "GETNAME") is None
        reply = raw.call("CLIENT", "SETNAME", "worker-1")
        assert reply == "OK" and isinstance(reply, Simple)
        assert raw.call("CLIENT", "GETNAME") == b"worker-1"
        assert raw.call("CLIENT", "SETNAME", "") == "OK"
        assert raw.call("CLIENT", "GETNAME") is None

    @pytest.mark.parametrize("name", ["a b", "a\nb", "a\x01b"])
    def test_bad_name(self, raw, name):
        assert_err(raw.call("CLIENT", "SETNAME", name),
                   "ERR Client names cannot contain spaces, newlines or special characters.")

    def test_list(self, raw, raw_factory):
        other = raw_factory()
        other_id = other.call("CLIENT", "ID")
        other.call("CLIENT", "SETNAME", "other-conn")
        other.call("SELECT", "7")
        my_id = raw.call("CLIENT", "ID")
        text = raw.call("CLIENT", "LIST")
        assert isinstance(text, bytes)
        lines = text.decode().split("\n")
        assert lines[-1] == ""
        entries = {}
        for line in lines[:-1]:
            fields = dict(kv.split("=", 1) for kv in line.split(" "))
            entries[int(fields["id"])] = fields
        for k in ("id", "addr", "laddr", "fd", "name", "age", "idle", "flags", "db", "cmd"):
            assert k in entries[my_id]
        assert entries[my_id]["cmd"] == "client|list"
        assert entries[other_id]["name"] == "other-conn"
        assert entries[other_id]["db"] == "7"
        assert entries[other_id]["cmd"] == "select"
        assert re.fullmatch(r"127\.0\.0\.1:\d+", entries[my_id]["addr"])

    def test_list_by_id(self, raw, raw_factory):
        other_id = raw_factory().call("CLIENT", "ID")
        text = raw.call("CLIENT", "LIST", "ID", str(other_id)).decode()
        assert text.startswith("id=%d " % other_id) and text.count("\n") == 1
        assert_err(raw.call("CLIENT", "LIST", "ID", "abc"), "ERR Invalid client ID")

    def test_info(self, raw):
        raw.call("CLIENT", "SETNAME", "me")
        text = raw.call("CLIENT", "INFO").decode()
        assert text.endswith("\n") and text.count("\n") == 1
        assert text.startswith("id=%d " % raw.call("CLIENT", "ID"))
        assert " name=me " in text
        assert " cmd=client|info " in text

    def test_info_verbatim_in_resp3(self, raw):
        raw.call("HELLO", "3")
        reply = raw.call("CLIENT", "INFO")
        assert isinstance(reply, Verbatim) and reply.fmt == "txt"
        assert reply.startswith("id=")

    def test_errors(self, raw):
        assert_err(raw.call("CLIENT", "FOO"), "ERR unknown subcommand 'FOO'. Try CLIENT HELP.")
        assert_err(raw.call("CLIENT"), arity("client"))
        assert_err(raw.call("CLIENT", "SETNAME"),
                   "ERR wrong number of arguments for 'client|setname' command")


def parse_info(text):
    sections = {}
    current = None
    for line in text.split("\r\n"):
        if not line:
            continue
        if line.startswith("# "):
            current = line[2:]
            sections[current] = {}
            continue
        key, _, value = line.partition(":")
        sections[current][key] = value
    return sections


def stat_fields(value):
    return dict(kv.split("=", 1) for kv in value.split(","))


class TestInfo:
    def test_commandstats_and_errorstats(self, raw):
        assert raw.call("CONFIG", "RESETSTAT") == "OK"
        raw.call("SET", "k", "v")
        raw.call("GET", "k")
        raw.call("GET", "k")
        assert_err(raw.call("GET"), arity("get"))  # rejected: never ran
        assert_err(raw.call("INCR", "k"), ERR_NOT_INT)  # ran and failed
        info = parse_info(raw.call("INFO", "commandstats").decode())["Commandstats"]
        get = stat_fields(info["cmdstat_get"])
        assert get["calls"] == "2" and get["rejected_calls"] == "1" and get["failed_calls"] == "0"
        assert float(get["usec_per_call"]) >= 0 and int(get["usec"]) >= 0
        incr = stat_fields(info["cmdstat_incr"])
        assert incr["calls"] == "1" and incr["failed_calls"] == "1"
        assert stat_fields(info["cmdstat_set"])["calls"] == "1"
        assert "cmdstat_lpush" not in info
        errors = parse_info(raw.call("INFO", "errorstats").decode())["Errorstats"]
        assert errors == {"errorstat_ERR": "count=2"}
        default = parse_info(raw.call("INFO").decode())
        assert "Errorstats" in default and "Commandstats" not in default
        assert "Commandstats" in parse_info(raw.call("INFO", "all").decode())
        assert raw.call("CONFIG", "RESETSTAT") == "OK"
        assert parse_info(raw.call("INFO", "errorstats").decode())["Errorstats"] == {}

    def test_default_sections_and_fields(self, raw):
        text = raw.call("INFO")
        assert isinstance(text, bytes)
        info = parse_info(text.decode())
        for section in ("Server", "Clients", "Memory", "Stats", "CPU", "Keyspace"):
            assert section in info
        server = info["Server"]
        assert re.fullmatch(r"7\.\d+\.\d+", server["redis_version"])
        assert server["redis_mode"] == "standalone"
        for field in ("process_id", "tcp_port", "uptime_in_seconds", "run_id"):
            assert field in server
        assert int(info["Clients"]["connected_clients"]) >= 1
        assert int(info["Memory"]["used_memory"]) > 0
        assert "used_memory_human" in info["Memory"]
        for field in ("total_connections_received", "total_commands_processed",
                      "expired_keys", "keyspace_hits", "keyspace_misses"):
            assert int(info["Stats"][field]) >= 0
        for field in ("used_cpu_sys", "used_cpu_user"):
            float(info["CPU"][field])

    def test_tcp_port(self, server, r):
        assert r.info("server")["tcp_port"] == server.port

    def test_single_and_multiple_sections(self, raw):
        text = raw.call("INFO", "server").decode()
        assert text.startswith("# Server\r\n")
        assert "# Clients" not in text
        text = raw.call("INFO", "server", "clients").decode()
        assert "# Server\r\n" in text and "# Clients\r\n" in text
        assert "# Memory" not in text
        assert raw.call("INFO", "nosuchsection") == b""

    def test_keyspace(self, r, raw):
        assert raw.call("INFO", "keyspace") == b"# Keyspace\r\n"
        fill(r, ["k:%d" % i for i in range(10)])
        r.expire("k:0", 100)
        text = raw.call("INFO", "keyspace").decode()
        assert re.search(r"^db0:keys=10,expires=1,avg_ttl=\d+\r$", text, re.M), text
        raw.call("SELECT", "3")
        raw.call("SET", "a", "b")
        text = raw.call("INFO", "keyspace").decode()
        assert re.search(r"^db3:keys=1,expires=0,avg_ttl=0\r$", text, re.M), text

    def test_commands_processed(self, raw):
        before = int(parse_info(raw.call("INFO", "stats").decode())["Stats"][
            "total_commands_processed"])
        for _ in range(10):
            raw.call("PING")
        after = int(parse_info(raw.call("INFO", "stats").decode())["Stats"][
            "total_commands_processed"])
        assert after >= before + 11

    def test_connected_clients(self, r, raw_factory):
        before = r.info("clients")["connected_clients"]
        conns = [raw_factory() for _ in range(3)]
        for c in conns:
            assert c.call("PING") == "PONG"
        wait_until(lambda: r.info("clients")["connected_clients"] == before + 3,
                   what="connected_clients to grow by 3")
        for c in conns:
            c.close()
        wait_until(lambda: r.info("clients")["connected_clients"] == before,
                   what="connected_clients to shrink back")

    def test_net_counters(self, r, raw):
        before = r.info("stats")
        payload = "x" * 10000
        for _ in range(5):
            assert raw.call("SET", "k", payload) == "OK"
            assert raw.call("GET", "k") == payload.encode()
        after = r.info("stats")
        assert after["total_net_input_bytes"] - before["total_net_input_bytes"] >= 50000
        assert after["total_net_output_bytes"] - before["total_net_output_bytes"] >= 50000
        assert after["total_reads_processed"] - before["total_reads_processed"] >= 10
        assert after["total_writes_processed"] - before["total_writes_processed"] >= 10
        for field in ("instantaneous_input_kbps", "instantaneous_output_kbps"):
            assert float(after[field]) >= 0
        assert r.config_resetstat()
        reset = r.info("stats")
        assert reset["total_net_input_bytes"] < 10000
        assert reset["total_reads_processed"] < 10

    def test_replication_of_a_master_without_replicas(self, r):
        repl = r.info("replication")
        assert repl["role"] == "master" and repl["connected_slaves"] == 0
        assert re.fullmatch(r"[0-9a-f]{40}", repl["master_replid"])
        assert repl["master_replid2"] == 0  # forty zeros, parsed by redis-py as a number
        assert repl["master_repl_offset"] == 0 and repl["second_repl_offset"] == -1
        assert repl["repl_backlog_active"] == 0

    def test_expiry_cycle_figures(self, r):
        with r.pipeline(transaction=False) as p:
            for i in range(200):
                p.set("e:%d" % i, "v", px=20)
            p.execute()
        wait_until(lambda: r.info("stats")["expired_keys"] >= 200, what="keys to expire")
        stats = r.info("stats")
        assert stats["expire_cycle_cpu_milliseconds"] >= 0
        assert 0 <= float(stats["expired_stale_perc"]) <= 100

    def test_keyspace_hits_misses(self, r):
        stats = r.info("stats")
        r.set("k", "v")
        r.get("k")
        r.get("missing")
        after = r.info("stats")
        assert after["keyspace_hits"] == stats["keyspace_hits"] + 1
        assert after["keyspace_misses"] == stats["keyspace_misses"] + 1


class TestConfig:
    def test_get(self, raw):
        reply = raw.call("CONFIG", "GET", "maxmemory")
        assert reply == [b"maxmemory", b"0"]
        assert raw.call("CONFIG", "GET", "databases") == [b"databases", b"16"]
        assert raw.call("CONFIG", "GET", "nosuchparam") == []
        assert raw.call("CONFIG", "GET", "nosuch*") == []

    def test_get_glob(self, raw):
        reply = raw.call("CONFIG", "GET", "maxmemor?")
        assert reply == [b"maxmemory", b"0"]
        reply = raw.call("CONFIG", "GET", "maxmemory*")
        names = reply[::2]
        assert b"maxmemory" in names and len(names) >= 2
        assert all(n.startswith(b"maxmemory") for n in names)

    def test_get_several(self, server, raw):
        reply = raw.call("CONFIG", "GET", "port", "databases")
        got = dict(zip(reply[::2], reply[1::2]))
        assert got == {b"port": str(server.port).encode(), b"databases": b"16"}

    def test_get_resp3_map(self, raw):
        raw.call("HELLO", "3")
        reply = raw.call("CONFIG", "GET", "maxmemory")
        assert isinstance(reply, Map) and reply == [(b"maxmemory", b"0")]

    def test_set_several(self, raw):
        try:
            assert raw.call("CONFIG", "SET", "maxmemory", "100mb",
                            "maxmemory-policy", "allkeys-lru") == "OK"
            assert raw.call("CONFIG", "GET", "maxmemory") == [b"maxmemory", b"104857600"]
            assert raw.call("CONFIG", "GET", "maxmemory-policy") == [b"maxmemory-policy",
                                                                     b"allkeys-lru"]
            # All or nothing: a bad value rolls back the others.
            reply = raw.call("CONFIG", "SET", "maxmemory", "1gb", "maxmemory-policy", "bogus")
            assert reply.startswith(
                "ERR CONFIG SET failed (possibly related to argument 'maxmemory-policy')")
            assert raw.call("CONFIG", "GET", "maxmemory") == [b"maxmemory", b"104857600"]
        finally:
            raw.call("CONFIG", "SET", "maxmemory", "0", "maxmemory-policy", "noeviction")
        assert raw.call("CONFIG", "GET", "maxmemory") == [b"maxmemory", b"0"]

    def test_set_errors(self, raw):
        assert_err(raw.call("CONFIG", "SET", "nosuch", "1"),
                   "ERR Unknown option or number of arguments for CONFIG SET - 'nosuch'")
        assert_err(raw.call("CONFIG", "SET", "maxmemory", "abc"),
                   "ERR CONFIG SET failed (possibly related to argument 'maxmemory') - "
                   "argument must be a memory value")
        assert_err(raw.call("CONFIG", "SET", "maxmemory", "0", "maxmemory", "1"),
                   "ERR CONFIG SET failed (possibly related to argument 'maxmemory') - "
                   "duplicate parameter")
        assert_err(raw.call("CONFIG", "SET", "maxmemory"),
                   "ERR wrong number of arguments for 'config|set' command")
        assert_err(raw.call("CONFIG", "GET"),
                   "ERR wrong number of arguments for 'config|get' command")
        assert_err(raw.call("CONFIG", "FOO"), "ERR unknown subcommand 'FOO'. Try CONFIG HELP.")
        assert raw.call("CONFIG", "GET", "maxmemory") == [b"maxmemory", b"0"]


class TestTimeDebugMemory:
    def test_time(self, raw):
        reply = raw.call("TIME")
        assert isinstance(reply, list) and len(reply) == 2
        secs, usecs = int(reply[0]), int(reply[1])
        assert abs(secs + usecs / 1e6 - time.time()) < 5
        assert 0 <= usecs < 1000000
        assert_err(raw.call("TIME", "x"), arity("time"))

    def test_debug_sleep(self, raw):
        reply = raw.call("DEBUG", "SLEEP", "0")
        assert reply == "OK" and isinstance(reply, Simple)

    def test_debug_object(self, raw):
        raw.call("SET", "k", "hello")
        reply = raw.call("DEBUG", "OBJECT", "k")
        assert isinstance(reply, Simple)
        assert reply.startswith("Value at:")
        fields = dict(kv.split(":", 1) for kv in reply.split(" ")[2:])
        assert fields["refcount"] == "1"
        assert fields["encoding"] == "embstr"
        for f in ("serializedlength", "lru", "lru_seconds_idle"):
            int(fields[f])
        raw.call("SET", "n", "123456789")
        assert " encoding:int " in raw.call("DEBUG", "OBJECT", "n")
        assert_err(raw.call("DEBUG", "OBJECT", "missing"), "ERR no such key")

    def test_debug_errors(self, raw):
        assert_err(raw.call("DEBUG", "FOO"),
                   "ERR unknown subcommand or wrong number of arguments for 'FOO'. "
                   "Try DEBUG HELP.")
        assert_err(raw.call("DEBUG"), arity("debug"))

    def test_debug_set_active_expire(self, raw):
        keys = ["ae%d" % i for i in range(16)]  # spread over every shard
        with active_expiry_off(raw):
            for k in keys:
                raw.call("SET", k, "v", "PX", "1")
            raw.call("SET", "kept", "v")
            # Several cycles' worth of time (hz 10): none of them deletes a key.
            time.sleep(0.5)
            assert raw.call("DBSIZE") == len(keys) + 1
            # An access still deletes the expired key it meets.
            assert raw.call("GET", keys[0]) is None
            assert raw.call("DBSIZE") == len(keys)
        # Back on: the cycle deletes the rest.
        wait_until(lambda: raw.call("DBSIZE") == 1, what="the active cycle to expire the keys")
        # Redis reads the argument with atoi: any text is 0 (off), any other number is on.
        for arg in ("abc", "2", "-1", "1"):
            reply = raw.call("DEBUG", "SET-ACTIVE-EXPIRE", arg)
            assert reply == "OK" and isinstance(reply, Simple), arg
        for args in (("DEBUG", "SET-ACTIVE-EXPIRE"), ("DEBUG", "set-active-expire", "1", "2")):
            assert_err(raw.call(*args),
                       "ERR unknown subcommand or wrong number of arguments for '%s'. "
                       "Try DEBUG HELP." % args[1])

    def test_memory_usage(self, raw):
        raw.call("SET", "small", "v")
        raw.call("SET", "big", "x" * 10000)
        small = raw.call("MEMORY", "USAGE", "small")
        big = raw.call("MEMORY", "USAGE", "big")
        assert isinstance(small, int) and 0 < small < 200
        assert 10000 <= big < 20000
        assert raw.call("MEMORY", "USAGE", "big", "SAMPLES", "5") == big
        assert raw.call("MEMORY", "USAGE", "missing") is None
        assert_err(raw.call("MEMORY", "USAGE"),
                   "ERR wrong number of arguments for 'memory|usage' command")
        assert_err(raw.call("MEMORY", "FOO"), "ERR unknown subcommand 'FOO'. Try MEMORY HELP.")


class TestDebugPopulate:
    def test_defaults(self, raw):
        assert raw.call("DEBUG", "POPULATE", "3") == "OK"
        assert sorted(raw.call("KEYS", "*")) == [b"key:0", b"key:1", b"key:2"]
        assert raw.call("GET", "key:2") == b"value:2"

    def test_prefix_and_size(self, raw):
        assert raw.call("DEBUG", "POPULATE", "2", "p", "10") == "OK"
        assert sorted(raw.call("KEYS", "*")) == [b"p:0", b"p:1"]
        # Values are "value:<i>" padded with zero bytes (or cut) to `size`.
        assert raw.call("GET", "p:0") == b"value:0\x00\x00\x00"
        assert raw.call("DEBUG", "POPULATE", "2", "q", "3") == "OK"
        assert raw.call("GET", "q:1") == b"val"

    def test_existing_keys_kept(self, raw):
        raw.call("SET", "key:1", "mine")
        assert raw.call("DEBUG", "POPULATE", "3") == "OK"
        assert raw.call("GET", "key:1") == b"mine"
        assert raw.call("DBSIZE") == 3

    def test_many_keys_all_shards(self, raw):
        assert raw.call("DEBUG", "POPULATE", "20000", "pop", "16") == "OK"
        assert raw.call("DBSIZE") == 20000
        assert raw.call("STRLEN", "pop:19999") == 16
        assert raw.call("EXISTS", *["pop:%d" % i for i in range(0, 20000, 97)]) == len(
            range(0, 20000, 97))
        assert raw.call("EXISTS", "pop:20000") == 0

    def test_selected_db(self, raw):
        raw.call("SELECT", "4")
        raw.call("DEBUG", "POPULATE", "5")
        assert raw.call("DBSIZE") == 5
        raw.call("SELECT", "0")
        assert raw.call("DBSIZE") == 0

    def test_errors(self, raw):
        err = "ERR value is out of range, must be positive"
        assert_err(raw.call("DEBUG", "POPULATE", "-1"), err)
        assert_err(raw.call("DEBUG", "POPULATE", "x"), err)
        assert_err(raw.call("DEBUG", "POPULATE", "1", "p", "-1"), err)
        assert_err(raw.call("DEBUG", "POPULATE"),
                   "ERR unknown subcommand or wrong number of arguments for 'POPULATE'. "
                   "Try DEBUG HELP.")


class TestLolwut:
    VERSION_LINE = b"Redis ver. 7.0.15\n"

    def test_version_line(self, raw):
        assert raw.call("LOLWUT") == self.VERSION_LINE
        assert raw.call("LOLWUT", "VERSION", "7", "anything") == self.VERSION_LINE
        assert raw.call("LOLWUT", "other") == self.VERSION_LINE  # only VERSION is an option
        assert raw.call("LOLWUT", "VERSION") == self.VERSION_LINE

    def test_resp3_verbatim_text(self, raw):
        raw.call("HELLO", "3")
        reply = raw.call("LOLWUT")
        assert isinstance(reply, Verbatim) and reply.fmt == "txt"
        assert reply == self.VERSION_LINE.decode()

    def test_numeric_arguments_checked(self, raw):
        assert_err(raw.call("LOLWUT", "VERSION", "x"), ERR_NOT_INT)
        assert_err(raw.call("LOLWUT", "VERSION", "6", "a"), ERR_NOT_INT)
        assert_err(raw.call("LOLWUT", "VERSION", "5", "1", "b"), ERR_NOT_INT)


def info_field_order(text):
    """{section: [field, ...]} in the order INFO prints them."""
    out, section = {}, None
    for line in text.splitlines():
        if line.startswith("# "):
            section = line[2:]
            out[section] = []
        elif ":" in line and section is not None:
            out[section].append(line.split(":", 1)[0])
    return out


@pytest.mark.dashkv_only  # compares dashkv with redis-server
@pytest.mark.parametrize("section", ["server", "clients", "memory", "persistence", "stats",
                                     "replication", "cpu", "cluster"])
def test_info_has_redis_fields_in_redis_order(raw, redis_beside, section):
    theirs = redis_beside.raw()
    try:
        ref = info_field_order(theirs.call("INFO", section).decode())
    finally:
        theirs.close()
    mine = info_field_order(raw.call("INFO", section).decode())
    assert list(ref) == list(mine)
    for name, fields in ref.items():
        present = [f for f in mine[name] if f in set(fields)]
        assert present == fields, name
