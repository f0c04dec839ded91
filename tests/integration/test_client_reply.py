"""CLIENT REPLY ON|OFF|SKIP: which replies are dropped, across pipelines, shard groups, MULTI,
errors and blocking commands. Also runs against redis-server 7.0 (DASHKV_TEST_TARGET=redis)."""
import socket

from helpers import assert_err, wait_until
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


# ---- pushes: Redis 7.0.15 silences replies only; pub/sub messages, (un)subscribe
# confirmations and tracking invalidations pass (they are written as pushes) ----

def test_off_lets_subscription_confirmations_and_messages_through(raw, r):
    send(raw, ("CLIENT", "REPLY", "OFF"), ("SUBSCRIBE", "ch"))
    assert raw.read() == [b"subscribe", b"ch", 1]
    assert r.publish("ch", "hello") == 1
    assert raw.read() == [b"message", b"ch", b"hello"]
    # A reply in subscribed mode is still dropped: PING's, and the error of a refused command.
    send(raw, ("PING",), ("GET", "x"), ("PSUBSCRIBE", "p*"))
    assert raw.read() == [b"psubscribe", b"p*", 2]
    assert r.publish("ch", "again") == 1
    assert raw.read() == [b"message", b"ch", b"again"]
    send(raw, ("UNSUBSCRIBE",))
    assert raw.read() == [b"unsubscribe", b"ch", 1]


def test_resp3_pushes_pass_while_off_and_skip(raw, r):
    raw.call("HELLO", "3")
    assert raw.call("SUBSCRIBE", "ch") == [b"subscribe", b"ch", 1]
    send(raw, ("CLIENT", "REPLY", "OFF"))
    assert r.publish("ch", "m1") == 1
    assert raw.read() == [b"message", b"ch", b"m1"]
    assert raw.call("CLIENT", "REPLY", "ON") == "OK"
    # SKIP: a message that comes while the skip waits for its command passes; the command's
    # own reply goes, the message its PUBLISH sent to this client does not.
    send(raw, ("CLIENT", "REPLY", "SKIP"))
    assert r.publish("ch", "m2") == 1
    assert raw.read() == [b"message", b"ch", b"m2"]
    send(raw, ("PUBLISH", "ch", "self"), ("PING",))
    assert raw.read() == [b"message", b"ch", b"self"]
    assert raw.read() == "PONG"


def test_invalidations_pass_while_off(raw, r):
    raw.call("HELLO", "3")
    assert raw.call("CLIENT", "TRACKING", "on") == "OK"
    assert raw.call("GET", "tk") is None
    send(raw, ("CLIENT", "REPLY", "OFF"))
    r.set("tk", 1)
    assert raw.read() == [b"invalidate", [b"tk"]]
    assert raw.call("CLIENT", "REPLY", "ON") == "OK"


def test_silent_subscriber_that_never_reads_is_cut(server, raw_factory, r):
    # A client under CLIENT REPLY OFF that never reads its messages is still cut by the pub/sub
    # output limit (its messages are not silenced), and the server goes on.
    r.config_set("client-output-buffer-limit", "pubsub 1mb 0 0")
    try:
        sub = raw_factory()
        sub.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        cid = sub.call("CLIENT", "ID")
        send(sub, ("CLIENT", "REPLY", "OFF"), ("SUBSCRIBE", "flood"))
        assert sub.read() == [b"subscribe", b"flood", 1]

        def gone():
            r.publish("flood", "x" * 65536)
            return all(not line.startswith("id=%d " % cid)
                       for line in r.execute_command("CLIENT", "LIST").splitlines())

        wait_until(gone, timeout=30, what="the silent subscriber to be cut")
        assert r.ping() is True
        assert r.execute_command("PUBSUB", "NUMSUB", "flood") == ["flood", 0]
    finally:
        r.config_set("client-output-buffer-limit", "pubsub 32mb 8mb 60")
