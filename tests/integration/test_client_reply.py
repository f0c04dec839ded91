"""CLIENT REPLY ON|OFF|SKIP: which replies are dropped, across pipelines, shard groups, MULTI,
errors and blocking commands. Also runs against redis-server 7.0 (DASHKV_TEST_TARGET=redis)."""
from helpers import assert_err
from resp_client import encode


def send(c, *cmds):
    c.send(b"".join(encode(*cmd) for cmd in cmds))


def test_off_drops_every_reply_until_on(raw, r):
    send(raw, ("CLIENT", "REPLY", "OFF"), ("SET", "a", "1"), ("GET", "a"), ("INCR", "a"),
         ("NOSUCHCOMMAND",), ("GET",), ("CLIENT", "REPLY", "ON"), ("GET", "a"))
    assert raw.read() == "OK"  # CLIENT REPLY ON's reply
    assert raw.read() == b"2"
    raw.expect_no_reply()
    assert r.get("a") == "2"  # the commands ran


def test_off_across_batches(raw, r):
    raw.send(encode("CLIENT", "REPLY", "OFF"))
    raw.send(encode("SET", "k", "v"))
    raw.send(encode("LPUSH", "l", "x", "y"))
    raw.expect_no_reply()
    assert raw.call("CLIENT", "REPLY", "ON") == "OK"
    assert raw.call("LLEN", "l") == 2
    assert r.get("k") == "v"


def test_skip_drops_only_the_next_reply(raw, r):
    send(raw, ("CLIENT", "REPLY", "SKIP"), ("SET", "a", "1"), ("GET", "a"))
    assert raw.read() == b"1"
    raw.expect_no_reply()


def test_skip_then_on_replies_ok(raw):
    # The skipped command turns replies on again: its own OK is sent, as Redis does.
    send(raw, ("CLIENT", "REPLY", "SKIP"), ("CLIENT", "REPLY", "ON"), ("PING",))
    assert raw.read() == "OK"
    assert raw.read() == "PONG"


def test_skip_twice_skips_two_replies(raw):
    send(raw, ("CLIENT", "REPLY", "SKIP"), ("CLIENT", "REPLY", "SKIP"), ("ECHO", "one"),
         ("ECHO", "two"))
    assert raw.read() == b"two"


def test_skip_is_ignored_while_off(raw):
    send(raw, ("CLIENT", "REPLY", "OFF"), ("CLIENT", "REPLY", "SKIP"), ("ECHO", "a"),
         ("CLIENT", "REPLY", "ON"), ("ECHO", "b"))
    assert raw.read() == "OK"
    assert raw.read() == b"b"


def test_many_keys_on_all_shards_while_off(raw, r):
    cmds = [("SET", "key:%d" % i, str(i)) for i in range(200)]
    send(raw, ("CLIENT", "REPLY", "OFF"), *cmds, ("CLIENT", "REPLY", "ON"), ("DBSIZE",))
    assert raw.read() == "OK"
    assert raw.read() == 200


def test_multi_exec_while_off(raw, r):
    send(raw, ("CLIENT", "REPLY", "OFF"), ("MULTI",), ("SET", "m", "1"), ("INCR", "m"),
         ("EXEC",), ("CLIENT", "REPLY", "ON"), ("GET", "m"))
    assert raw.read() == "OK"
    assert raw.read() == b"2"


def test_blocking_command_reply_is_dropped(raw, r):
    send(raw, ("CLIENT", "REPLY", "SKIP"), ("BLPOP", "q", "0"), ("PING",))
    # BLPOP waits; its reply is dropped when it is served, then PING answers.
    raw.expect_no_reply()
    r.rpush("q", "job")
    assert raw.read() == "PONG"
    assert r.llen("q") == 0


def test_bad_mode_is_a_syntax_error(raw):
    assert_err(raw.call("CLIENT", "REPLY", "maybe"), "ERR syntax error")
    assert_err(raw.call("CLIENT", "REPLY"),
               "ERR wrong number of arguments for 'client|reply' command")
    assert raw.call("CLIENT", "REPLY", "on") == "OK"


def test_reply_is_refused_in_scripts(raw):
    reply = raw.call("EVAL", "return redis.call('client', 'reply', 'off')", "0")
    assert "not allowed from script" in reply
