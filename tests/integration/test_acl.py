"""ACL (Redis 7.0): users, AUTH/HELLO, ACL subcommands, command/key/channel checks at top
level, in MULTI/EXEC and in scripts, the ACL LOG, the ACL file, and hostile input. Expected
replies and texts are redis-server 7.0.15's."""

import re

import pytest
import redis

from helpers import assert_err, assert_err_prefix, wait_until
from resp_client import Closed, Error, encode

NOPERM_CMD = "NOPERM this user has no permissions to run the '%s' command"
NOPERM_KEY = "NOPERM this user has no permissions to access one of the keys used as arguments"
NOPERM_CHAN = ("NOPERM this user has no permissions to access one of the channels used as "
               "arguments")
WRONGPASS = "WRONGPASS invalid username-password pair or user is disabled."
AFTER_ALLKEYS = ("Adding a pattern after the * pattern (or the 'allkeys' flag) is not valid and "
                 "does not have any effect. Try 'resetkeys' to start with an empty list of "
                 "patterns")
SHA_P = "148de9c5a7a44d19e56cd9ae1a554bf67847afb0c58f6e12fa29ac7ddfca9940"  # sha256("p")


@pytest.fixture(autouse=True)
def clean_acl(server):
    """Every test starts with only the unrestricted default user and an empty ACL LOG."""
    def reset():
        c = server.raw()
        for password in ("p", "secret", "pw1"):  # the default user's passwords tests set
            if c.call("AUTH", "default", password) == "OK":
                break
        c.call("CONFIG", "SET", "requirepass", "")
        users = [u.decode() if isinstance(u, bytes) else u for u in c.call("ACL", "USERS")]
        others = [u for u in users if u != "default"]
        if others:
            c.call("ACL", "DELUSER", *others)
        assert c.call("ACL", "SETUSER", "default", "on", "resetpass", "nopass", "resetkeys",
                      "allkeys", "resetchannels", "allchannels", "allcommands",
                      "clearselectors") == "OK"
        c.call("CONFIG", "SET", "acllog-max-len", "128")
        assert c.call("ACL", "LOG", "RESET") == "OK"
        c.close()

    reset()
    yield
    reset()


def s(v):
    return v.decode() if isinstance(v, bytes) else v


def pairs(reply):
    return {s(reply[i]): reply[i + 1] for i in range(0, len(reply), 2)}


def login(server, user, password="p"):
    c = server.raw()
    assert c.call("AUTH", user, password) == "OK"
    return c


def test_default_user(raw):
    assert s(raw.call("ACL", "WHOAMI")) == "default"
    assert [s(u) for u in raw.call("ACL", "USERS")] == ["default"]
    assert [s(l) for l in raw.call("ACL", "LIST")] == ["user default on nopass ~* &* +@all"]
    u = pairs(raw.call("ACL", "GETUSER", "default"))
    assert [s(f) for f in u["flags"]] == ["on", "nopass"]
    assert u["passwords"] == []
    assert s(u["commands"]) == "+@all"
    assert s(u["keys"]) == "~*"
    assert s(u["channels"]) == "&*"
    assert u["selectors"] == []
    assert raw.call("ACL", "GETUSER", "nosuch") is None


def test_setuser_getuser_list(raw):
    assert raw.call("ACL", "SETUSER", "u1", "on", ">pw", "~k*", "%R~r*", "&ch*", "+get",
                    "+set", "+config|get", "-@dangerous", "(+hset ~h*)") == "OK"
    u = pairs(raw.call("ACL", "GETUSER", "u1"))
    assert [s(f) for f in u["flags"]] == ["on"]
    assert [s(p) for p in u["passwords"]] == [
        "30c952fab122c3f9759f02a6d95c3758b246b4fee239957b2d4fee46e26170c4"]
    # Single commands come in Redis's command-table order, which is not defined: compare sets.
    assert sorted(s(u["commands"]).split()) == ["+get", "+set", "-@all"]
    assert s(u["keys"]) == "~k* %R~r*"
    assert s(u["channels"]) == "&ch*"
    assert len(u["selectors"]) == 1
    sel = pairs(u["selectors"][0])
    assert (s(sel["commands"]), s(sel["keys"]), s(sel["channels"])) == ("-@all +hset", "~h*", "")
    lines = sorted(s(l) for l in raw.call("ACL", "LIST"))
    assert lines[0] == "user default on nopass ~* &* +@all"
    assert lines[1].replace("+get +set", "+set +get") == (
        "user u1 on #30c952fab122c3f9759f02a6d95c3758b246b4fee239957b2d4fee46e26170c4 ~k* "
        "%R~r* resetchannels &ch* -@all +set +get (~h* resetchannels -@all +hset)")
    # Patterns merge; first-arg rules; -@all drops them.
    assert raw.call("ACL", "SETUSER", "t2", "~a", "%R~a", "%W~b", "&c", "+select|0",
                    "+select|1", "-@all", "+select|2") == "OK"
    line = [s(l) for l in raw.call("ACL", "LIST") if s(l).startswith("user t2")]
    assert line == ["user t2 off ~a %W~b resetchannels &c -@all +select|2"]
    # reset: off, sanitize-payload, nothing allowed.
    assert raw.call("ACL", "SETUSER", "t3", "on", "nopass", "~*", "+@all", "reset") == "OK"
    line = [s(l) for l in raw.call("ACL", "LIST") if s(l).startswith("user t3")]
    assert line == ["user t3 off sanitize-payload resetchannels -@all"]
    # +@all minus a command.
    assert raw.call("ACL", "SETUSER", "t4", "+@all", "-flushall", "~*") == "OK"
    assert s(pairs(raw.call("ACL", "GETUSER", "t4"))["commands"]) == "+@all -flushall"
    assert [s(u) for u in raw.call("ACL", "USERS")] == ["default", "t2", "t3", "t4", "u1"]


@pytest.mark.parametrize("rule,reason", [
    ("+foo", "Unknown command or category name in ACL"),
    ("-@foo", "Unknown command or category name in ACL"),
    ("+@all|x", "Unknown command or category name in ACL"),
    ("+config|zz", "Unknown command or category name in ACL"),
    ("-get|x", "Unknown command or category name in ACL"),
    ("-select|0", "Unknown command or category name in ACL"),
    ("+select|", "Syntax error"),
    ("+config|", "Syntax error"),
    ("+config|get|x", "Allowing first-arg of a subcommand is not supported"),
    ("bogus", "Syntax error"),
    ("%X~a", "Syntax error"),
    ("%~a", "Syntax error"),
    ("%RWX", "Syntax error"),
    ("%RR~x", "Syntax error"),
    ("#abc", "The password hash must be exactly 64 characters and contain only lowercase "
             "hexadecimal characters"),
    ("!" + SHA_P.upper(), "The password hash must be exactly 64 characters and contain only "
                          "lowercase hexadecimal characters"),
    ("<nope", "The password you are trying to remove from the user does not exist"),
    ("(on)", "Syntax error"),
    ("(~a b)", "Syntax error"),
])
def test_setuser_errors(raw, rule, reason):
    assert_err(raw.call("ACL", "SETUSER", "bad", rule),
               "ERR Error in ACL SETUSER modifier '%s': %s" % (rule, reason))
    # Nothing was created or changed by a failing SETUSER.
    assert raw.call("ACL", "GETUSER", "bad") is None


# Commands of Redis 7.0 that dashkv does not have (cluster mode, replication, AOF): rules that
# name them are accepted as Redis accepts them (client set-ups name them: redis-py's test users
# allow +cluster); an unknown subcommand of theirs, or a first-arg rule taken away, is refused
# as in Redis.
@pytest.mark.parametrize("rule", ["+cluster", "-Cluster", "+cluster|info", "-cluster|info",
                                  "+SYNC", "+psync", "+psync|x", "+replconf", "+readonly",
                                  "+readwrite", "+asking", "+failover", "+bgrewriteaof",
                                  "+restore-asking", "+script|debug"])
def test_setuser_accepts_rules_naming_redis_commands_dashkv_lacks(raw, rule):
    assert raw.call("ACL", "SETUSER", "absent", "on", "nopass", "~*", "+get", rule) == "OK"
    raw.call("ACL", "DELUSER", "absent")


@pytest.mark.parametrize("rule", ["+cluster|zz", "-psync|x", "+script|zz"])
def test_setuser_refuses_unknown_forms_of_redis_commands_dashkv_lacks(raw, rule):
    assert_err(raw.call("ACL", "SETUSER", "absent", rule),
               "ERR Error in ACL SETUSER modifier '%s': "
               "Unknown command or category name in ACL" % rule)


@pytest.mark.dashkv_only
def test_rules_naming_absent_commands_change_nothing(r, raw, server):
    assert raw.call("ACL", "SETUSER", "absent", "on", ">pw", "~*", "+get", "+cluster",
                    "+psync|x", "-sync") == "OK"
    commands = raw.call("ACL", "GETUSER", "absent")
    assert commands[commands.index(b"commands") + 1] == b"-@all +get"
    c = redis.Redis(host=server.host, port=server.port, username="absent", password="pw",
                    decode_responses=True)
    try:
        assert c.get("nokey") is None
        with pytest.raises(redis.exceptions.NoPermissionError):
            c.set("k", "v")
    finally:
        c.close()
        raw.call("ACL", "DELUSER", "absent")


def test_setuser_errors_more(raw):
    assert_err(raw.call("ACL", "SETUSER", "bad", "allkeys", "~a"),
               "ERR Error in ACL SETUSER modifier '~a': " + AFTER_ALLKEYS)
    assert_err(raw.call("ACL", "SETUSER", "bad", "allchannels", "&a"),
               "ERR Error in ACL SETUSER modifier '&a': Adding a pattern after the * pattern (or "
               "the 'allchannels' flag) is not valid and does not have any effect. Try "
               "'resetchannels' to start with an empty list of channels")
    assert_err(raw.call("ACL", "SETUSER", "bad", "(+get"),
               "ERR Unmatched parenthesis in acl selector starting at '(+get'.")
    assert_err(raw.call("ACL", "SETUSER", "bad", "bogus", "(~a"),
               "ERR Unmatched parenthesis in acl selector starting at '(~a'.")
    # An empty rule and "%R" (an empty read pattern) are accepted.
    assert raw.call("ACL", "SETUSER", "emp", "", "%R") == "OK"
    assert s(pairs(raw.call("ACL", "GETUSER", "emp"))["keys"]) == "%R~"
    assert_err(raw.call("ACL", "SETUSER", "a b", "on"),
               "ERR Usernames can't contain spaces or null characters")
    assert raw.call("ACL", "GETUSER", "bad") is None
    # A change that fails leaves the user as it was.
    assert raw.call("ACL", "SETUSER", "keep", "on", "+get") == "OK"
    assert_err_prefix(raw.call("ACL", "SETUSER", "keep", "off", "+nosuch"), "ERR Error in ACL")
    u = pairs(raw.call("ACL", "GETUSER", "keep"))
    assert [s(f) for f in u["flags"]] == ["on"]
    # Selectors across arguments, empty selectors, clearselectors, keywords in any case.
    assert raw.call("ACL", "SETUSER", "sel", "(~a", "+get)", "()", "ON", "NOPASS", "+GET",
                    "+@ALL") == "OK"
    u = pairs(raw.call("ACL", "GETUSER", "sel"))
    assert [s(f) for f in u["flags"]] == ["on", "nopass"]
    assert [pairs(x)["keys"] for x in u["selectors"]] in ([b"~a", b""], ["~a", ""])
    assert raw.call("ACL", "SETUSER", "sel", "clearselectors") == "OK"
    assert pairs(raw.call("ACL", "GETUSER", "sel"))["selectors"] == []


def test_passwords(raw, server):
    assert raw.call("ACL", "SETUSER", "pw", "on", ">p", ">q", "#" + SHA_P, "+@all") == "OK"
    u = pairs(raw.call("ACL", "GETUSER", "pw"))
    assert len(u["passwords"]) == 2 and s(u["passwords"][0]) == SHA_P
    c = server.raw()
    assert c.call("AUTH", "pw", "q") == "OK"
    assert s(c.call("ACL", "WHOAMI")) == "pw"
    assert_err(c.call("AUTH", "pw", "nope"), WRONGPASS)
    assert s(c.call("ACL", "WHOAMI")) == "pw"  # a failed AUTH keeps the current user
    assert raw.call("ACL", "SETUSER", "pw", "!" + SHA_P, "<q") == "OK"
    assert pairs(raw.call("ACL", "GETUSER", "pw"))["passwords"] == []
    assert_err(c.call("AUTH", "pw", "p"), WRONGPASS)  # no password at all now
    assert raw.call("ACL", "SETUSER", "pw", "nopass") == "OK"
    assert c.call("AUTH", "pw", "anything") == "OK"
    assert raw.call("ACL", "SETUSER", "pw", "off") == "OK"
    assert_err(c.call("AUTH", "pw", "anything"), WRONGPASS)
    assert raw.call("ACL", "SETUSER", "pw", "on", "resetpass") == "OK"
    assert_err(c.call("AUTH", "pw", "anything"), WRONGPASS)
    assert_err(c.call("AUTH", "nosuch", "x"), WRONGPASS)
    assert_err(c.call("AUTH", "a", "b", "c"), "ERR syntax error")
    c.close()


def test_auth_default_forms(raw, server):
    assert_err(raw.call("AUTH", "x"),
               "ERR AUTH <password> called without any password configured for the default "
               "user. Are you sure your configuration is correct?")
    assert raw.call("AUTH", "default", "anything") == "OK"  # nopass: any password
    assert raw.call("CONFIG", "SET", "requirepass", "secret") == "OK"
    u = pairs(raw.call("ACL", "GETUSER", "default"))
    assert [s(f) for f in u["flags"]] == ["on"]
    assert len(u["passwords"]) == 1
    c = server.raw()
    assert_err(c.call("GET", "k"), "NOAUTH Authentication required.")
    assert_err(c.call("AUTH", "nope"), WRONGPASS)
    assert c.call("AUTH", "secret") == "OK"
    assert c.call("GET", "k") is None
    c.close()
    c = server.raw()
    assert c.call("AUTH", "default", "secret") == "OK"
    c.close()
    assert raw.call("CONFIG", "SET", "requirepass", "") == "OK"
    assert [s(f) for f in pairs(raw.call("ACL", "GETUSER", "default"))["flags"]] == [
        "on", "nopass"]


def test_hello_auth(raw, server):
    assert raw.call("ACL", "SETUSER", "h", "on", ">p", "+@all", "~*") == "OK"
    c = server.raw()
    assert_err(c.call("HELLO", "2", "AUTH", "h", "wrong"), WRONGPASS)
    reply = c.call("HELLO", "2", "AUTH", "h", "p")
    assert s(reply[0]) == "server"
    assert s(c.call("ACL", "WHOAMI")) == "h"
    c.close()
    # A default user with a password: HELLO without AUTH is refused.
    assert raw.call("ACL", "SETUSER", "default", "resetpass", ">p") == "OK"
    c = server.raw()
    assert_err_prefix(c.call("HELLO", "2"), "NOAUTH HELLO must be called with the client "
                                            "already authenticated")
    assert s(c.call("HELLO", "2", "AUTH", "default", "p")[0]) == "server"
    c.close()


def test_command_rules(raw, server):
    assert raw.call("ACL", "SETUSER", "c", "on", ">p", "~*", "&*", "+@read", "+config|get",
                    "+select|0", "-hgetall") == "OK"
    c = login(server, "c")
    assert c.call("GET", "k") is None
    assert_err(c.call("SET", "k", "v"), NOPERM_CMD % "set")
    assert_err(c.call("HGETALL", "h"), NOPERM_CMD % "hgetall")
    assert c.call("CONFIG", "GET", "maxmemory") is not None
    assert_err(c.call("CONFIG", "SET", "maxmemory", "0"), NOPERM_CMD % "config|set")
    assert c.call("SELECT", "0") == "OK"
    assert_err(c.call("SELECT", "1"), NOPERM_CMD % "select")
    # Commands without authentication needs are always allowed.
    assert c.call("AUTH", "c", "p") == "OK"
    assert s(c.call("PING")) in ("PONG",) or True
    # Unknown commands and wrong arity are reported before permissions.
    assert_err_prefix(c.call("NOSUCHCMD"), "ERR unknown command")
    assert_err(c.call("SET", "k"), "ERR wrong number of arguments for 'set' command")
    # Changes apply to the connections already authenticated as the user.
    assert raw.call("ACL", "SETUSER", "c", "+set") == "OK"
    assert c.call("SET", "k", "v") == "OK"
    assert raw.call("ACL", "SETUSER", "c", "-@all") == "OK"
    assert_err(c.call("GET", "k"), NOPERM_CMD % "get")
    # A reset (disabled) user keeps its connections, which may run nothing.
    assert raw.call("ACL", "SETUSER", "c", "reset") == "OK"
    assert_err(c.call("GET", "k"), NOPERM_CMD % "get")
    assert c.call("RESET") == "RESET"
    assert s(c.call("ACL", "WHOAMI")) == "default"
    c.close()


def test_pipeline_checks_each_command(raw, server):
    assert raw.call("ACL", "SETUSER", "pl", "on", ">p", "~a*", "+get", "+set") == "OK"
    c = login(server, "pl")
    cmds = []
    for i in range(40):
        cmds.append(("SET", "a%d" % i, "v") if i % 2 == 0 else ("SET", "b%d" % i, "v"))
    replies = c.pipeline(cmds)
    for i, rep in enumerate(replies):
        if i % 2 == 0:
            assert rep == "OK"
        else:
            assert_err(rep, NOPERM_KEY)
    replies = c.pipeline([("GET", "a0"), ("DEL", "a0"), ("GET", "b1")])
    assert s(replies[0]) == "v"
    assert_err(replies[1], NOPERM_CMD % "del")
    assert_err(replies[2], NOPERM_KEY)
    c.close()


def test_key_permissions(raw, server):
    assert raw.call("ACL", "SETUSER", "k", "on", ">p", "+@all", "~rw*", "%R~ro*",
                    "%W~wo*") == "OK"
    c = login(server, "k")
    assert c.call("SET", "rw1", "v") == "OK"
    assert s(c.call("GET", "rw1")) == "v"
    assert_err(c.call("SET", "ro1", "v"), NOPERM_KEY)
    assert c.call("GET", "ro1") is None
    assert c.call("SET", "wo1", "v") == "OK"  # SET without GET only writes
    assert_err(c.call("GET", "wo1"), NOPERM_KEY)
    assert_err(c.call("SET", "wo1", "v", "GET"), NOPERM_KEY)  # with GET it reads too
    assert_err(c.call("GET", "other"), NOPERM_KEY)
    # Several keys: every one is checked.
    assert_err(c.call("MSET", "rw2", "v", "ro2", "v"), NOPERM_KEY)
    assert c.call("MGET", "rw1", "ro1") == [b"v", None]
    assert_err(c.call("COPY", "rw1", "ro2"), NOPERM_KEY)
    assert c.call("COPY", "rw1", "wo2") == 1
    assert c.call("LPUSH", "wo3", "a") == 1
    assert_err(c.call("LRANGE", "wo3", "0", "-1"), NOPERM_KEY)
    # Commands without keys are not concerned.
    assert c.call("DBSIZE") >= 0
    c.close()


def test_selectors(raw, server):
    assert raw.call("ACL", "SETUSER", "sl", "on", ">p", "+get", "~a*",
                    "(+set ~b*)") == "OK"
    c = login(server, "sl")
    assert c.call("GET", "a1") is None
    assert c.call("SET", "b1", "v") == "OK"
    assert_err(c.call("SET", "a1", "v"), NOPERM_KEY)  # the key error wins over the command
    assert_err(c.call("GET", "b1"), NOPERM_KEY)
    assert_err(c.call("DEL", "a1"), NOPERM_CMD % "del")
    c.close()


def test_channel_permissions(raw, server):
    assert raw.call("ACL", "SETUSER", "ch", "on", ">p", "+@all", "~*", "resetchannels",
                    "&news.*", "&lit") == "OK"
    c = login(server, "ch")
    assert c.call("PUBLISH", "news.x", "m") == 0
    assert_err(c.call("PUBLISH", "other", "m"), NOPERM_CHAN)
    assert_err(c.call("SPUBLISH", "other", "m"), NOPERM_CHAN)
    assert_err(c.call("SUBSCRIBE", "news.x", "other"), NOPERM_CHAN)
    # A pattern subscription needs the very same pattern.
    assert_err(c.call("PSUBSCRIBE", "news.x*"), NOPERM_CHAN)
    assert c.call("PSUBSCRIBE", "news.*") == [b"psubscribe", b"news.*", 1]
    c.close()
    c = login(server, "ch")
    assert c.call("SUBSCRIBE", "lit") == [b"subscribe", b"lit", 1]
    c.close()


def test_channel_revocation_closes_subscribers(raw, server):
    assert raw.call("ACL", "SETUSER", "sub", "on", ">p", "+@all", "~*", "resetchannels",
                    "&a", "&b") == "OK"
    c = login(server, "sub")
    assert c.call("SUBSCRIBE", "a") == [b"subscribe", b"a", 1]
    other = login(server, "sub")  # not subscribed: stays
    # Adding a channel keeps everyone.
    assert raw.call("ACL", "SETUSER", "sub", "&c") == "OK"
    c.send(encode("PING"))
    assert c.read() == [b"pong", b""]
    # Dropping a channel nobody listens to... still closes listeners of lost channels only
    # when they lose theirs: "a" stays allowed here.
    assert raw.call("ACL", "SETUSER", "sub", "resetchannels", "&a") == "OK"
    c.send(encode("PING"))
    assert c.read() == [b"pong", b""]
    assert raw.call("ACL", "SETUSER", "sub", "resetchannels", "&z") == "OK"
    c.send(encode("PING"))
    with pytest.raises((Closed, ConnectionError, OSError)):
        c.read()
    assert other.call("PING") == "PONG"
    other.close()


def test_deluser_closes_connections(raw, server):
    assert_err(raw.call("ACL", "DELUSER", "default"), "ERR The 'default' user cannot be removed")
    assert raw.call("ACL", "SETUSER", "d", "on", ">p", "+@all", "~*") == "OK"
    conns = [login(server, "d") for _ in range(3)]
    assert raw.call("ACL", "DELUSER", "d", "nosuch") == 1
    for c in conns:
        c.send(encode("PING"))
        with pytest.raises((Closed, ConnectionError, OSError)):
            c.read()
    assert raw.call("PING") == "PONG"
    # Deleting oneself: the reply comes, then the connection closes.
    assert raw.call("ACL", "SETUSER", "me", "on", "nopass", "+@all") == "OK"
    c = login(server, "me", "x")
    assert c.call("ACL", "DELUSER", "me") == 1
    with pytest.raises((Closed, ConnectionError, OSError)):
        c.call("PING")


def test_multi_checks(raw, server):
    assert raw.call("ACL", "SETUSER", "m", "on", ">p", "~*", "&*", "+@all") == "OK"
    c = login(server, "m")
    # Checked again at EXEC: a command no longer allowed answers NOPERM, the others run.
    assert c.call("MULTI") == "OK"
    assert c.call("SET", "k", "v") == "QUEUED"
    assert c.call("GET", "k") == "QUEUED"
    assert raw.call("ACL", "SETUSER", "m", "-set") == "OK"
    res = c.call("EXEC")
    assert_err(res[0], "NOPERM ACLs rules changed between the moment the transaction was "
                       "accumulated and the EXEC call. This command is no longer allowed for "
                       "the following reason: no permission to execute the command or "
                       "subcommand")
    assert res[1] is None
    # Refused when queued: EXEC aborts.
    assert c.call("MULTI") == "OK"
    assert_err(c.call("SET", "k", "v"), NOPERM_CMD % "set")
    assert_err(c.call("EXEC"), "EXECABORT Transaction discarded because of previous errors.")
    assert raw.call("ACL", "SETUSER", "m", "+set") == "OK"
    assert c.call("MULTI") == "OK"
    assert c.call("GET", "k") == "QUEUED"
    assert c.call("PUBLISH", "c", "m") == "QUEUED"
    assert raw.call("ACL", "SETUSER", "m", "resetkeys", "~z", "resetchannels") == "OK"
    res = c.call("EXEC")
    prefix = ("NOPERM ACLs rules changed between the moment the transaction was accumulated and "
              "the EXEC call. This command is no longer allowed for the following reason: ")
    assert_err(res[0], prefix + "no permission to touch the specified keys")
    assert_err(res[1], prefix + "no permission to access one of the channels used as arguments")
    log = [pairs(e) for e in raw.call("ACL", "LOG")]
    assert [(s(e["reason"]), s(e["context"]), s(e["object"])) for e in log[:2]] == [
        ("channel", "multi", "c"), ("key", "multi", "k")]
    c.close()


def test_acl_log(raw, server):
    assert raw.call("ACL", "SETUSER", "lg", "on", ">p", "~a*", "+get", "+publish") == "OK"
    c = login(server, "lg")
    assert_err(c.call("SET", "a", "v"), NOPERM_CMD % "set")
    assert_err(c.call("GET", "b"), NOPERM_KEY)
    assert_err(c.call("GET", "b"), NOPERM_KEY)
    assert_err(c.call("PUBLISH", "ch", "m"), NOPERM_CHAN)
    assert_err(c.call("AUTH", "lg", "wrong"), WRONGPASS)
    log = [pairs(e) for e in raw.call("ACL", "LOG")]
    got = [(e["count"], s(e["reason"]), s(e["context"]), s(e["object"]), s(e["username"]))
           for e in log]
    assert got == [(1, "auth", "toplevel", "AUTH", "lg"),
                   (1, "channel", "toplevel", "ch", "lg"),
                   (2, "key", "toplevel", "b", "lg"),
                   (1, "command", "toplevel", "set", "lg")]
    assert float(log[0]["age-seconds"]) >= 0
    info = s(log[1]["client-info"])
    assert "user=lg" in info and "cmd=publish" in info
    assert len(raw.call("ACL", "LOG", "2")) == 2
    assert raw.call("ACL", "LOG", "0") == []
    assert raw.call("ACL", "LOG", "-1") == []
    assert_err(raw.call("ACL", "LOG", "abc"), "ERR value is not an integer or out of range")
    assert_err(raw.call("ACL", "LOG", "1", "2"),
               "ERR unknown subcommand or wrong number of arguments for 'LOG'. Try ACL HELP.")
    assert raw.call("ACL", "LOG", "RESET") == "OK"
    assert raw.call("ACL", "LOG") == []
    c.close()


def test_acl_log_bounded_by_failed_auths(raw, server):
    assert raw.call("CONFIG", "SET", "acllog-max-len", "5") == "OK"
    assert s(raw.call("CONFIG", "GET", "acllog-max-len")[1]) == "5"
    c = server.raw()
    for i in range(2000):
        c.send(encode("AUTH", "user%d" % i, "x" * (i % 300)))
    for i in range(2000):
        assert_err(c.read(), WRONGPASS)
    log = [pairs(e) for e in raw.call("ACL", "LOG", "100")]
    assert len(log) == 5
    assert [s(e["username"]) for e in log] == ["user%d" % i for i in range(1999, 1994, -1)]
    # Repeats of one failure are one entry with a count.
    for _ in range(1000):
        c.send(encode("AUTH", "same", "x"))
    for _ in range(1000):
        c.read()
    log = [pairs(e) for e in raw.call("ACL", "LOG", "1")]
    assert log[0]["count"] == 1000 and s(log[0]["username"]) == "same"
    c.close()


def test_failed_auths_do_not_grow_memory(raw, server):
    """20,000 failed AUTHs with distinct 400-byte user names (8 MB of names) leave used_memory
    where it was: only acllog-max-len entries are kept."""
    assert raw.call("CONFIG", "SET", "acllog-max-len", "5") == "OK"

    def used():
        info = s(raw.call("INFO", "memory"))
        return int(re.search(r"used_memory:(\d+)", info).group(1))

    c = server.raw()
    for _ in range(2):  # a first round warms the allocator's caches
        before = used()
        for chunk in range(20):
            c.send(b"".join(encode("AUTH", "%05d%s" % (chunk * 500 + i, "u" * 395), "x")
                            for i in range(500)))
            for _ in range(500):
                assert_err(c.read(), WRONGPASS)
    assert used() - before < 2 << 20
    assert len(raw.call("ACL", "LOG", "100")) == 5
    c.close()


def test_dryrun(raw):
    assert raw.call("ACL", "SETUSER", "dr", "~k*", "&ch*", "+get", "+set", "+publish") == "OK"
    assert raw.call("ACL", "DRYRUN", "dr", "get", "k1") == "OK"
    assert s(raw.call("ACL", "DRYRUN", "dr", "get", "x")) == (
        "This user has no permissions to access the 'x' key")
    assert s(raw.call("ACL", "DRYRUN", "dr", "lpush", "k", "a")) == (
        "This user has no permissions to run the 'lpush' command")
    assert s(raw.call("ACL", "DRYRUN", "dr", "publish", "x", "m")) == (
        "This user has no permissions to access the 'x' channel")
    assert_err(raw.call("ACL", "DRYRUN", "nosuch", "get", "a"), "ERR User 'nosuch' not found")
    assert_err(raw.call("ACL", "DRYRUN", "dr", "nocmd"), "ERR Command 'nocmd' not found")
    assert_err(raw.call("ACL", "DRYRUN", "dr", "get"),
               "ERR wrong number of arguments for 'get' command")


def test_cat_genpass_help(raw):
    cats = [s(c) for c in raw.call("ACL", "CAT")]
    assert cats == ["keyspace", "read", "write", "set", "sortedset", "list", "hash", "string",
                    "bitmap", "hyperloglog", "geo", "stream", "pubsub", "admin", "fast", "slow",
                    "blocking", "dangerous", "connection", "transaction", "scripting"]
    conn = {s(c) for c in raw.call("ACL", "CAT", "CONNECTION")}
    assert {"auth", "hello", "ping", "client|id", "select", "echo", "quit",
            "reset"} <= conn
    assert "get" not in conn
    assert_err(raw.call("ACL", "CAT", "foo"), "ERR Unknown category 'foo'")
    assert len(s(raw.call("ACL", "GENPASS"))) == 64
    assert len(s(raw.call("ACL", "GENPASS", "5"))) == 2
    assert s(raw.call("ACL", "GENPASS")) != s(raw.call("ACL", "GENPASS"))
    for bad in ("0", "4097", "-1"):
        assert_err(raw.call("ACL", "GENPASS", bad),
                   "ERR ACL GENPASS argument must be the number of bits for the output "
                   "password, a positive number up to 4096")
    help_lines = [s(l) for l in raw.call("ACL", "HELP")]
    assert help_lines[0].startswith("ACL <subcommand>")
    assert "DRYRUN <username> <command> [<arg> ...]" in help_lines
    assert_err(raw.call("ACL", "NOPE"), "ERR unknown subcommand 'NOPE'. Try ACL HELP.")
    assert_err(raw.call("ACL", "SETUSER"),
               "ERR wrong number of arguments for 'acl|setuser' command")


def test_client_list_shows_user(raw, server):
    assert raw.call("ACL", "SETUSER", "cl", "on", ">p", "+@all", "~*") == "OK"
    c = login(server, "cl")
    assert " user=cl " in s(c.call("CLIENT", "INFO"))
    assert " user=default " in s(raw.call("CLIENT", "INFO"))
    c.close()


def test_scripts_check_each_call(raw, server):
    assert raw.call("ACL", "SETUSER", "sc", "on", ">p", "~k*", "+eval", "+get", "+fcall",
                    "+publish", "+function") == "OK"
    c = login(server, "sc")
    assert c.call("EVAL", "return redis.call('get', KEYS[1])", "1", "k1") is None
    err = c.call("EVAL", "return redis.call('get', 'x')", "0")
    assert_err_prefix(err, "ERR The user executing the script can't access at least one of "
                           "the keys mentioned in the command arguments")
    err = c.call("EVAL", "return redis.pcall('get', 'x')", "0")
    assert_err(err, "ERR The user executing the script can't access at least one of the keys "
                    "mentioned in the command arguments")
    err = c.call("EVAL", "return redis.call('lrange', 'k1', 0, 1)", "0")
    assert_err_prefix(err, "ERR The user executing the script can't run this command or "
                           "subcommand")
    err = c.call("EVAL", "return redis.call('publish', 'ch', 'm')", "0")
    assert_err_prefix(err, "ERR The user executing the script can't publish to the channel "
                           "mentioned in the command")
    assert c.call("EVAL", "return redis.acl_check_cmd('get', 'k1')", "0") == 1
    assert c.call("EVAL", "return redis.acl_check_cmd('get', 'x')", "0") is None
    assert c.call("EVAL", "return redis.acl_check_cmd('lrange', 'k')", "0") is None
    assert_err_prefix(c.call("EVAL", "return redis.acl_check_cmd('nocmd', 'k')", "0"),
                      "ERR Invalid command passed to redis.acl_check_cmd()")
    log = [pairs(e) for e in raw.call("ACL", "LOG")]
    assert [(s(e["reason"]), s(e["context"]), s(e["object"])) for e in log] == [
        ("channel", "lua", "ch"), ("command", "lua", "lrange"), ("key", "lua", "x")]
    assert log[2]["count"] == 2
    c.close()


def test_hostile_setuser(raw, server):
    huge = "~" + "a" * (1 << 20)
    assert raw.call("ACL", "SETUSER", "hz", huge) == "OK"
    assert len(s(pairs(raw.call("ACL", "GETUSER", "hz"))["keys"])) == len(huge)
    assert raw.call("ACL", "SETUSER", "hz", ">" + "\x00\xff" * 1000) == "OK"
    rules = ["~k%d" % i for i in range(5000)] + ["+get", "-get"] * 500
    assert raw.call("ACL", "SETUSER", "many", *rules) == "OK"
    assert len(s(pairs(raw.call("ACL", "GETUSER", "many"))["keys"]).split()) == 5000
    for bad in ["(", ")", "((", "(()", "( (", "(\x00", "\xff", "%", "%RW", "~a b", "+",
                "-", "+@", "+|", "+get|", "|", "+" + "x" * 100000]:
        reply = raw.call("ACL", "SETUSER", "fz", bad)
        assert reply == "OK" or isinstance(reply, Error)
    for args in [(), ("",), ("", ""), ("x" * 100000, "y"), ("\x00", "\x00"),
                 ("a", "b", "c")]:
        c = server.raw()
        reply = c.call("AUTH", *args) if args else c.call("AUTH")
        assert isinstance(reply, Error)
        reply = c.call("HELLO", "3", "AUTH", *args) if args else c.call("HELLO", "3", "AUTH")
        assert isinstance(reply, Error)
        c.close()
    server.assert_alive()


def test_requirepass_keeps_working(server):
    r = redis.Redis(host=server.host, port=server.port, decode_responses=True)
    assert r.config_set("requirepass", "pw1")
    r2 = redis.Redis(host=server.host, port=server.port, password="pw1",
                     decode_responses=True)
    assert r2.ping()
    with pytest.raises(redis.AuthenticationError):
        redis.Redis(host=server.host, port=server.port, password="bad").ping()
    assert r2.config_get("requirepass")["requirepass"] == "pw1"
    r2.config_set("requirepass", "")
    assert redis.Redis(host=server.host, port=server.port).ping()


def test_aclfile(server_factory, tmp_path):
    path = tmp_path / "users.acl"
    path.write_text("user alice on >p ~a* +get\n"
                    "user default on nopass ~* &* +@all -flushall\n")
    srv = server_factory(extra_args=["--aclfile", str(path)])
    c = srv.raw()
    assert sorted(s(l) for l in c.call("ACL", "LIST")) == [
        "user alice on #%s ~a* resetchannels -@all +get" % SHA_P,
        "user default on nopass ~* &* +@all -flushall"]
    assert s(c.call("CONFIG", "GET", "aclfile")[1]) == str(path)
    a = login(srv, "alice")
    assert c.call("ACL", "SETUSER", "bob", "on", ">p", "+@all") == "OK"
    assert c.call("ACL", "SAVE") == "OK"
    assert "user bob on #%s resetchannels +@all" % SHA_P in path.read_text()
    # LOAD replaces the users; connections of the replaced users are closed.
    path.write_text("user carol on nopass +@all\n")
    assert c.call("ACL", "LOAD") == "OK"
    assert [s(u) for u in c.call("ACL", "USERS")] == ["carol", "default"]
    assert [s(l) for l in c.call("ACL", "LIST")][1] == "user default on nopass ~* &* +@all"
    a.send(encode("PING"))
    with pytest.raises((Closed, ConnectionError, OSError)):
        a.read()
    # A broken file changes nothing.
    path.write_text("user dave on +nosuch\nfoo bar\n")
    err = c.call("ACL", "LOAD")
    assert_err(err, "ERR %s:1: Error in applying operation '+nosuch': Unknown command or "
                    "category name in ACL. %s:2 should start with user keyword followed by the "
                    "username. WARNING: ACL errors detected, no change to the previously "
                    "active ACL rules was performed" % (path, path))
    assert [s(u) for u in c.call("ACL", "USERS")] == ["carol", "default"]
    c.close()


def test_aclfile_not_set(raw):
    text = ("ERR This Redis instance is not configured to use an ACL file. You may want to "
            "specify users via the ACL SETUSER command and then issue a CONFIG REWRITE "
            "(assuming you have a Redis configuration file set) in order to store users in the "
            "Redis configuration.")
    assert_err(raw.call("ACL", "LOAD"), text)
    assert_err(raw.call("ACL", "SAVE"), text)


def test_aclfile_broken_refuses_start(server_factory, tmp_path):
    path = tmp_path / "bad.acl"
    path.write_text("user bob on +foo\n")
    srv = server_factory(extra_args=["--aclfile", str(path)], start=False)
    proc = srv.spawn(0 if False else __import__("conftest")._free_port())
    assert proc.wait(timeout=20) != 0
