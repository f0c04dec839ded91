"""acl-pubsub-default (Redis 7.0): the channels of users and selectors created from then on
(ACL SETUSER, "reset", config-file `user` lines), from CONFIG SET, a config file or the command
line; the default user keeps every channel. Expected replies are redis-server 7.0.15's."""

import pytest

from config_helpers import conf_server  # noqa: F401 (fixture)
from helpers import assert_err

NOPERM_CHAN = ("NOPERM this user has no permissions to access one of the channels used as "
               "arguments")


def s(v):
    return v.decode() if isinstance(v, bytes) else v


def acl_list(c):
    return [s(line) for line in c.call("ACL", "LIST")]


def flag(server, value):
    """The command-line form of acl-pubsub-default for the server under test."""
    if server.kind == "redis":
        return ["--acl-pubsub-default", value]
    return ["--acl_pubsub_default=%s" % value]


@pytest.fixture(autouse=True)
def clean_acl(server):
    """Every test starts and ends with resetchannels and only the default user."""
    def reset():
        c = server.raw()
        assert c.call("CONFIG", "SET", "acl-pubsub-default", "resetchannels") == "OK"
        others = [s(u) for u in c.call("ACL", "USERS") if s(u) != "default"]
        if others:
            c.call("ACL", "DELUSER", *others)
        c.close()

    reset()
    yield
    reset()


def test_config_get_set(raw):
    assert [s(x) for x in raw.call("CONFIG", "GET", "acl-pubsub-default")] == [
        "acl-pubsub-default", "resetchannels"]
    assert_err(raw.call("CONFIG", "SET", "acl-pubsub-default", "somechannels"),
               "ERR CONFIG SET failed (possibly related to argument 'acl-pubsub-default') - "
               "argument(s) must be one of the following: allchannels, resetchannels")
    assert raw.call("CONFIG", "SET", "acl-pubsub-default", "ALLCHANNELS") == "OK"
    assert [s(x) for x in raw.call("CONFIG", "GET", "acl-pubsub-*")] == [
        "acl-pubsub-default", "allchannels"]


def test_new_users_and_selectors_follow_the_setting(raw):
    assert raw.call("CONFIG", "SET", "acl-pubsub-default", "allchannels") == "OK"
    assert raw.call("ACL", "SETUSER", "u1") == "OK"
    assert raw.call("ACL", "SETUSER", "u2", "(~x +get)") == "OK"
    assert acl_list(raw) == ["user default on nopass ~* &* +@all",
                             "user u1 off &* -@all",
                             "user u2 off &* -@all (~x &* -@all +get)"]
    assert raw.call("ACL", "SETUSER", "u1", "resetchannels", "&news", "reset") == "OK"
    assert acl_list(raw)[1] == "user u1 off sanitize-payload &* -@all"
    # Changing the setting leaves existing users as they are.
    assert raw.call("CONFIG", "SET", "acl-pubsub-default", "resetchannels") == "OK"
    assert raw.call("ACL", "SETUSER", "u3", "(~y +set)") == "OK"
    assert raw.call("ACL", "SETUSER", "u2", "(~z +del)") == "OK"
    assert acl_list(raw) == [
        "user default on nopass ~* &* +@all",
        "user u1 off sanitize-payload &* -@all",
        "user u2 off &* -@all (~x &* -@all +get) (~z resetchannels -@all +del)",
        "user u3 off resetchannels -@all (~y resetchannels -@all +set)"]
    assert raw.call("ACL", "SETUSER", "u1", "reset") == "OK"
    assert acl_list(raw)[1] == "user u1 off sanitize-payload resetchannels -@all"


def test_channels_of_new_users(server, raw):
    assert raw.call("CONFIG", "SET", "acl-pubsub-default", "allchannels") == "OK"
    assert raw.call("ACL", "SETUSER", "pub", "on", ">p", "+publish") == "OK"
    assert raw.call("CONFIG", "SET", "acl-pubsub-default", "resetchannels") == "OK"
    assert raw.call("ACL", "SETUSER", "quiet", "on", ">p", "+publish") == "OK"
    pub = server.raw()
    assert pub.call("AUTH", "pub", "p") == "OK"
    assert pub.call("PUBLISH", "any", "m") == 0
    pub.close()
    quiet = server.raw()
    assert quiet.call("AUTH", "quiet", "p") == "OK"
    assert_err(quiet.call("PUBLISH", "any", "m"), NOPERM_CHAN)
    quiet.close()


def test_config_file_applies_to_its_user_lines(conf_server):
    # The setting holds for every user line, wherever it stands in the file; the default
    # user's line resets it first (sanitize-payload, as Redis).
    srv = conf_server("user alice on nopass ~a* +get\n"
                      "user default on nopass ~* +@all\n"
                      "acl-pubsub-default allchannels\n")
    c = srv.raw()
    assert acl_list(c) == ["user alice on nopass ~a* &* -@all +get",
                           "user default on nopass sanitize-payload ~* &* +@all"]
    assert c.call("ACL", "SETUSER", "bob") == "OK"
    assert acl_list(c)[1] == "user bob off &* -@all"
    c.close()


def test_flag_and_its_precedence_over_the_file(server, conf_server):
    srv = conf_server("user alice on nopass ~a* +get\n", extra_args=flag(server, "allchannels"))
    c = srv.raw()
    assert [s(x) for x in c.call("CONFIG", "GET", "acl-pubsub-default")] == [
        "acl-pubsub-default", "allchannels"]
    assert acl_list(c)[0] == "user alice on nopass ~a* &* -@all +get"
    c.close()
    srv = conf_server("acl-pubsub-default allchannels\nuser alice on nopass ~a* +get\n",
                      extra_args=flag(server, "resetchannels"))
    c = srv.raw()
    assert [s(x) for x in c.call("CONFIG", "GET", "acl-pubsub-default")] == [
        "acl-pubsub-default", "resetchannels"]
    assert acl_list(c)[0] == "user alice on nopass ~a* resetchannels -@all +get"
    c.close()
