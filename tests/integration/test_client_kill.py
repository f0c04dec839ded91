"""CLIENT KILL, both forms, with every filter Redis 7.0 has (ID, ADDR, LADDR, TYPE, USER,
SKIPME) and MAXAGE (Redis 7.4's filter): which clients each kills, the count it answers, and
Redis's errors. Runs against redis-server 7.0.15 too, except MAXAGE."""

import time

import pytest

from helpers import assert_err
from resp_client import Closed, encode


def is_closed(c):
    try:
        c.call("PING")
    except (Closed, OSError):
        return True
    return False


def info_of(c):
    """CLIENT INFO of a raw connection as a dict."""
    line = c.call("CLIENT", "INFO")
    return dict(f.split("=", 1) for f in line.decode().split())


def test_old_form_by_address(raw, raw_factory):
    victim = raw_factory()
    addr = info_of(victim)["addr"]
    assert raw.call("CLIENT", "KILL", addr) == "OK"
    assert is_closed(victim)
    assert_err(raw.call("CLIENT", "KILL", addr), "ERR No such client")
    assert_err(raw.call("CLIENT", "KILL", "ADDR"), "ERR No such client")


def test_id_and_errors(raw, raw_factory):
    victim = raw_factory()
    vid = victim.call("CLIENT", "ID")
    assert raw.call("CLIENT", "KILL", "ID", str(vid)) == 1
    assert is_closed(victim)
    assert raw.call("CLIENT", "KILL", "ID", str(vid)) == 0
    for bad in ("0", "x", "-3"):
        assert_err(raw.call("CLIENT", "KILL", "ID", bad), "ERR client-id should be greater than 0")
    assert_err(raw.call("CLIENT", "KILL", "ID", "5", "TYPE"), "ERR syntax error")
    assert_err(raw.call("CLIENT", "KILL", "SKIPME", "maybe"), "ERR syntax error")
    assert_err(raw.call("CLIENT", "KILL", "NOSUCH", "x"), "ERR syntax error")


def test_type_pubsub_kills_only_subscribers(raw, raw_factory):
    sub = raw_factory()
    sub.call("SUBSCRIBE", "ch")
    plain = raw_factory()
    assert raw.call("CLIENT", "KILL", "TYPE", "pubsub") == 1
    assert is_closed(sub)
    assert plain.call("PING") == "PONG"


def test_type_normal_skips_me_and_subscribers(raw, raw_factory):
    sub = raw_factory()
    sub.call("SUBSCRIBE", "ch")
    plains = [raw_factory() for _ in range(3)]
    for p in plains:
        p.call("PING")
    # The three, and the fixtures' other normal client (redis-py reconnects it).
    assert raw.call("CLIENT", "KILL", "TYPE", "normal") == 4
    assert all(is_closed(p) for p in plains)
    assert raw.call("PING") == "PONG"  # SKIPME yes by default
    # The subscriber still receives.
    raw.call("PUBLISH", "ch", "hello")
    assert sub.read() == [b"message", b"ch", b"hello"]


def test_type_replica_and_master_match_nobody(raw, raw_factory):
    victim = raw_factory()
    for t in ("master", "replica", "slave", "MASTER"):
        assert raw.call("CLIENT", "KILL", "TYPE", t) == 0
    assert victim.call("PING") == "PONG"
    assert_err(raw.call("CLIENT", "KILL", "TYPE", "foo"), "ERR Unknown client type 'foo'")


def test_user_filter(raw, raw_factory):
    raw.call("ACL", "SETUSER", "killme", "on", ">pw", "+@all", "~*")
    try:
        victim = raw_factory()
        assert victim.call("AUTH", "killme", "pw") == "OK"
        other = raw_factory()
        assert raw.call("CLIENT", "KILL", "USER", "killme") == 1
        assert is_closed(victim)
        assert other.call("PING") == "PONG"
        assert_err(raw.call("CLIENT", "KILL", "USER", "nosuch"), "ERR No such user 'nosuch'")
    finally:
        raw.call("ACL", "DELUSER", "killme")


def test_skipme_no_kills_the_caller_too(raw_factory):
    me = raw_factory()
    laddr = info_of(me)["laddr"]
    other = raw_factory()
    me.send(encode("CLIENT", "KILL", "LADDR", laddr, "SKIPME", "no"))
    # The count may or may not reach the caller before its connection closes.
    try:
        reply = me.read()
        assert reply >= 2
    except (Closed, OSError):
        pass
    assert is_closed(other)
    assert is_closed(me)


def test_filters_combine(raw, raw_factory):
    a = raw_factory()
    b = raw_factory()
    b.call("SUBSCRIBE", "x")
    aid = a.call("CLIENT", "ID")
    # ID of a normal client with TYPE pubsub: no match.
    assert raw.call("CLIENT", "KILL", "ID", str(aid), "TYPE", "pubsub") == 0
    assert a.call("PING") == "PONG"
    assert raw.call("CLIENT", "KILL", "ID", str(aid), "TYPE", "normal", "USER", "default") == 1
    assert is_closed(a)


@pytest.mark.dashkv_only  # MAXAGE is Redis 7.4's; 7.0.15 answers a syntax error
def test_maxage_kills_only_older_clients(raw, raw_factory):
    old = raw_factory()
    old.call("PING")
    time.sleep(2.2)
    young = raw_factory()
    young.call("PING")
    assert raw.call("CLIENT", "KILL", "MAXAGE", "1", "SKIPME", "yes") >= 1
    assert is_closed(old)
    assert young.call("PING") == "PONG"
    assert_err(raw.call("CLIENT", "KILL", "MAXAGE", "x"),
               "ERR maxage is not an integer or out of range")
    assert_err(raw.call("CLIENT", "KILL", "MAXAGE", "-1"),
               "ERR maxage is not an integer or out of range")
