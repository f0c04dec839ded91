"""MONITOR: the feed of the commands the server runs, in Redis's format, which commands are fed
(not admin ones, not refused ones; MULTI's commands at EXEC; script calls as client "lua"),
redacted passwords, escaping, and what a monitor may still do. Also runs against redis-server
7.0 (DASHKV_TEST_TARGET=redis)."""
import re

import pytest

from helpers import assert_err, wait_until
from resp_client import encode

LINE = re.compile(r'^(\d+)\.(\d{6}) \[(\d+) ([^\]]+)\] (.*)$')


class Monitor:
    def __init__(self, raw):
        self.raw = raw
        assert raw.call("MONITOR") == "OK"

    def next(self):
        line = self.raw.read()
        m = LINE.match(line)
        assert m, line
        return {"db": int(m.group(3)), "client": m.group(4), "command": m.group(5)}

    def until(self, command):
        """Reads lines up to the one whose command text is `command`; returns those before."""
        seen = []
        for _ in range(200):
            entry = self.next()
            if entry["command"] == command:
                return seen
            seen.append(entry)
        raise AssertionError("no %r in the feed; saw %r" % (command, seen))


@pytest.fixture
def mon(raw_factory, r):
    return Monitor(raw_factory())


def test_commands_are_fed_with_db_and_address(mon, r):
    r.set("foo", "bar")
    r.execute_command("SELECT", "3")
    r.get("foo")
    entry = mon.next()
    assert entry["command"] == '"SET" "foo" "bar"'
    assert entry["db"] == 0
    assert re.match(r"127\.0\.0\.1:\d+$", entry["client"])
    assert mon.next()["command"] == '"SELECT" "3"'
    entry = mon.next()
    assert entry["command"] == '"GET" "foo"'
    assert entry["db"] == 3


def test_arguments_are_escaped(mon, r):
    r.set('a "b"', 'x\\y\n\r\t\x01\xff'.encode("latin-1"))
    assert mon.next()["command"] == r'"SET" "a \"b\"" "x\\y\n\r\t\x01\xff"'


def test_admin_and_refused_commands_are_not_fed(mon, raw_factory, r):
    c = raw_factory()
    c.call("CONFIG", "GET", "maxmemory")
    c.call("CLIENT", "LIST")
    c.call("GET")                 # wrong arity
    c.call("NOSUCHCOMMAND")       # unknown
    c.call("PING")
    assert mon.next()["command"] == '"PING"'


def test_passwords_are_redacted(mon, raw_factory, r):
    c = raw_factory()
    c.call("AUTH", "secret")
    c.call("AUTH", "someone", "secret")
    c.call("HELLO", "2", "AUTH", "default", "secret")
    c.call("PING")
    lines = mon.until('"PING"')
    assert [e["command"] for e in lines] == [
        '"AUTH" "(redacted)"',
        '"AUTH" "(redacted)" "(redacted)"',
        '"HELLO" "2" "AUTH" "(redacted)" "(redacted)"',
    ]


def test_multi_commands_are_fed_at_exec(mon, raw_factory, r):
    c = raw_factory()
    assert c.pipeline([("MULTI",), ("SET", "k", "v"), ("INCR", "n"), ("EXEC",)])[-1] == ["OK", 1]
    c.call("PING")
    assert [e["command"] for e in mon.until('"PING"')] == [
        '"MULTI"', '"SET" "k" "v"', '"INCR" "n"', '"EXEC"']


def test_discarded_multi_feeds_no_queued_command(mon, raw_factory, r):
    c = raw_factory()
    c.pipeline([("MULTI",), ("SET", "k", "v"), ("DISCARD",), ("PING",)])
    assert [e["command"] for e in mon.until('"PING"')] == ['"MULTI"', '"DISCARD"']


def test_exec_failed_by_watch_feeds_only_exec(mon, raw_factory, r):
    c = raw_factory()
    c.call("WATCH", "w")
    r.set("w", "changed")
    assert c.pipeline([("MULTI",), ("SET", "k", "v"), ("EXEC",)])[-1] is None
    c.call("PING")
    commands = [e["command"] for e in mon.until('"PING"')]
    assert '"SET" "k" "v"' not in commands
    assert commands[-2:] == ['"MULTI"', '"EXEC"']


def test_script_calls_are_fed_as_lua(mon, r):
    r.eval("redis.call('set', 'x', '1'); return redis.call('incr', 'x')", 0)
    r.ping()
    lines = mon.until('"PING"')
    assert lines[0]["command"].startswith('"EVAL" ')
    assert [(e["client"], e["command"]) for e in lines[1:]] == [
        ("lua", '"set" "x" "1"'), ("lua", '"incr" "x"')]


def test_every_client_and_shard_is_fed(mon, raw_factory, r):
    clients = [raw_factory() for _ in range(3)]
    for n, c in enumerate(clients):
        c.pipeline([("SET", "key:%d:%d" % (n, i), "v") for i in range(20)])
    r.ping()
    commands = [e["command"] for e in mon.until('"PING"')]
    assert sorted(commands) == sorted('"SET" "key:%d:%d" "v"' % (n, i)
                                      for n in range(3) for i in range(20))
    # Each client's commands arrive in the order it sent them.
    for n in range(3):
        mine = [c for c in commands if c.startswith('"SET" "key:%d:' % n)]
        assert mine == ['"SET" "key:%d:%d" "v"' % (n, i) for i in range(20)]


def test_two_monitors_see_the_same_feed(mon, raw_factory, r):
    other = Monitor(raw_factory())
    r.set("both", "1")
    assert mon.next()["command"] == '"SET" "both" "1"'
    assert other.next()["command"] == '"SET" "both" "1"'


def test_monitor_may_not_touch_the_keyspace(raw_factory, r):
    c = raw_factory()
    assert c.call("MONITOR") == "OK"
    assert_err(c.call("GET", "x"), "ERR Replica can't interact with the keyspace")
    assert_err(c.call("SET", "x", "1"), "ERR Replica can't interact with the keyspace")
    assert c.call("PING") == "PONG"
    assert r.get("x") is None


def test_second_monitor_is_ignored(raw_factory, r):
    c = raw_factory()
    assert c.call("MONITOR") == "OK"
    c.send(encode("MONITOR"))
    c.expect_no_reply()
    assert c.call("PING") == "PONG"


def test_reset_leaves_monitor_mode(raw_factory, r):
    c = raw_factory()
    assert c.call("MONITOR") == "OK"
    assert c.call("RESET") == "RESET"
    r.set("after", "reset")
    assert c.call("GET", "after") == b"reset"
    flags = [cl["flags"] for cl in r.client_list()]
    assert not any("O" in f for f in flags)


def test_client_list_flags_monitor(raw_factory, r):
    c = raw_factory()
    assert c.call("MONITOR") == "OK"
    wait_until(lambda: any("O" in cl["flags"] for cl in r.client_list()), what="flag O")


def test_closed_monitor_stops_being_fed(raw_factory, r):
    c = raw_factory()
    assert c.call("MONITOR") == "OK"
    c.close()
    for i in range(100):
        r.set("k%d" % i, i)
    assert r.dbsize() == 100


def client_flags(r, cid):
    for line in r.execute_command("CLIENT", "LIST").splitlines():
        if line.startswith("id=%d " % cid):
            return line.split(" flags=", 1)[1].split(" ", 1)[0]
    return None


def test_monitor_queued_in_multi_is_refused_by_exec(mon, raw_factory, r):
    # MONITOR is not no-multi in Redis 7.0.15: it is queued, and EXEC refuses it (a transaction
    # expects one reply per command) while running the rest.
    c = raw_factory()
    cid = c.call("CLIENT", "ID")
    replies = c.pipeline([("MULTI",), ("MONITOR",), ("SET", "mx", "1"), ("EXEC",)])
    assert replies[:3] == ["OK", "QUEUED", "QUEUED"]
    assert len(replies[3]) == 2
    assert_err(replies[3][0], "ERR MONITOR isn't allowed for DENY BLOCKING client")
    assert replies[3][1] == "OK"
    assert "O" not in client_flags(r, cid)
    # It is no monitor: another client's command reaches only the real one.
    r.set("after", "1")
    mon.until('"SET" "after" "1"')
    c.send(encode("PING"))
    assert c.read() == "PONG"


def test_monitor_from_a_subscribed_client(raw_factory, r):
    # RESP2 subscribed mode refuses it; a RESP3 subscriber becomes a monitor.
    c = raw_factory()
    c.send(encode("SUBSCRIBE", "ch"))
    assert c.read() == [b"subscribe", b"ch", 1]
    assert_err(c.call("MONITOR"),
               "ERR Can't execute 'monitor': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / "
               "QUIT / RESET are allowed in this context")
    c3 = raw_factory()
    c3.call("HELLO", "3")
    cid = c3.call("CLIENT", "ID")
    assert c3.call("SUBSCRIBE", "ch") == [b"subscribe", b"ch", 1]
    assert c3.call("MONITOR") == "OK"
    assert client_flags(r, cid) == "OP"
    m = Monitor.__new__(Monitor)
    m.raw = c3
    r.set("fromsub", "1")
    m.until('"SET" "fromsub" "1"')


def test_monitor_silenced_by_client_reply_off(raw_factory, r):
    # Redis writes the feed as replies: CLIENT REPLY OFF drops it, ON lets it flow again.
    m = Monitor(raw_factory())
    witness = Monitor(raw_factory())
    m.raw.send(encode("CLIENT", "REPLY", "OFF"))
    witness.until('"CLIENT" "REPLY" "OFF"')  # it has run: nothing else tells, it replies nothing
    r.set("during", "1")
    witness.until('"SET" "during" "1"')
    m.raw.send(encode("CLIENT", "REPLY", "ON"))
    assert m.raw.read() == "OK"
    r.set("after", "1")
    seen = m.until('"SET" "after" "1"')
    assert all(e["command"] != '"SET" "during" "1"' for e in seen)
