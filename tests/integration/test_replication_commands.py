"""ROLE, REPLICAOF and SLAVEOF on a server without replicas: dashkv is always a master (it has
no replication). Replies are Redis 7.0's where Redis's would be the same (the suite also runs
against redis-server); REPLICAOF host port, which Redis would accept and start replicating, is
refused with an error that says so."""

import pytest
import redis

from helpers import assert_err


def test_role_is_a_master_without_replicas(r, r3):
    assert r.role() == ["master", 0, []]
    assert r3.role() == ["master", 0, []]


def test_role_takes_no_arguments(raw):
    assert_err(raw.call("ROLE", "x"), "ERR wrong number of arguments for 'role' command")


@pytest.mark.parametrize("cmd", ["REPLICAOF", "SLAVEOF"])
def test_no_one_on_a_master_is_ok(raw, cmd):
    assert raw.call(cmd, "NO", "ONE") == "OK"
    assert raw.call(cmd, "no", "one") == "OK"


@pytest.mark.parametrize("cmd", ["REPLICAOF", "SLAVEOF"])
@pytest.mark.parametrize("port", ["two", "65536", "-1", "", "1.5", "99999999999999999999"])
def test_an_invalid_port_is_refused(raw, cmd, port):
    assert_err(raw.call(cmd, "localhost", port), "ERR Invalid master port")


@pytest.mark.parametrize("args", [(), ("NO",), ("NO", "ONE", "x")])
def test_wrong_arity(raw, args):
    assert_err(raw.call("REPLICAOF", *args),
               "ERR wrong number of arguments for 'replicaof' command")


@pytest.mark.dashkv_only
@pytest.mark.parametrize("cmd", ["REPLICAOF", "SLAVEOF"])
def test_replicating_is_refused_and_the_server_stays_a_master(r, raw, cmd):
    r.set("k", "v")
    assert_err(raw.call(cmd, "127.0.0.1", "6379"),
               "ERR REPLICAOF is not supported: dashkv does not replicate")
    assert r.role()[0] == "master"
    assert r.set("k", "w") is True  # still writable
    assert r.get("k") == "w"


def test_command_info_matches_redis(raw):
    def text(x):
        return [text(e) for e in x] if isinstance(x, list) else (
            x.decode() if isinstance(x, bytes) else x)

    role, replicaof, slaveof = text(raw.call("COMMAND", "INFO", "role", "replicaof", "slaveof"))
    assert role[0] == "role" and role[1] == 1
    assert set(role[2]) == {"noscript", "loading", "stale", "fast"}
    assert set(role[6]) == {"@admin", "@fast", "@dangerous"}
    for info, name in ((replicaof, "replicaof"), (slaveof, "slaveof")):
        assert info[0] == name and info[1] == 3
        assert {"admin", "noscript", "stale"} <= set(info[2])
        assert set(info[6]) == {"@admin", "@slow", "@dangerous"}


def test_role_needs_the_admin_category(r, server):
    r.acl_setuser("norole", enabled=True, nopass=True, commands=["+@all", "-@admin"], keys=["*"])
    try:
        c = redis.Redis(host=server.host, port=server.port, username="norole", password="x",
                        decode_responses=True)
        with pytest.raises(redis.exceptions.NoPermissionError):
            c.role()
        c.close()
    finally:
        r.acl_deluser("norole")
