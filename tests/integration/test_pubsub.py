"""Pub/Sub: SUBSCRIBE PSUBSCRIBE SSUBSCRIBE and their UNSUBSCRIBEs, PUBLISH SPUBLISH, PUBSUB,
RESP2 subscribed mode, RESP3 pushes, RESET/disconnect cleanup, CLIENT LIST and INFO fields, and
client-output-buffer-limit. Expected values are Redis 7.0's (the suite also runs against
redis-server). Every test uses its own channel names: the server is shared by the session."""

import socket
import time

import pytest

from helpers import assert_err, wait_until
from resp_client import Push

SUBSCRIBED_ONLY = ("only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed "
                   "in this context")
DEFAULT_OBUF = "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60"


def get_message(p, timeout=5.0):
    """The next message of a redis-py PubSub (confirmations skipped), or fails."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        m = p.get_message(ignore_subscribe_messages=True, timeout=0.1)
        if m is not None:
            return m
    raise AssertionError("no pub/sub message within %.1fs" % timeout)


def numsub(r, channel):
    return dict(r.pubsub_numsub(channel))[channel]


def client_field(line, field):
    for part in line.split():
        k, _, v = part.partition("=")
        if k == field:
            return v
    return None


@pytest.fixture
def restore_obuf(r):
    yield
    r.config_set("client-output-buffer-limit", DEFAULT_OBUF)


class TestPublishSubscribe:
    def test_publish_without_subscribers(self, r):
        assert r.publish("ps:nobody", "x") == 0
        assert r.execute_command("SPUBLISH", "ps:nobody", "x") == 0

    def test_many_subscribers_receive_and_are_counted(self, r, server):
        subs = []
        try:
            for _ in range(6):  # consecutive connections land on different threads
                p = r.pubsub()
                p.subscribe("ps:fan")
                assert p.get_message(timeout=5)["type"] == "subscribe"
                subs.append(p)
            assert numsub(r, "ps:fan") == 6
            assert r.publish("ps:fan", "hello") == 6
            for p in subs:
                m = get_message(p)
                assert (m["type"], m["channel"], m["data"]) == ("message", "ps:fan", "hello")
        finally:
            for p in subs:
                p.close()
        wait_until(lambda: numsub(r, "ps:fan") == 0, what="subscribers gone")

    def test_patterns(self, r):
        p = r.pubsub()
        try:
            p.psubscribe("ps:news.*")
            p.subscribe("ps:news.sport")
            # redis-py does not wait for the confirmations: read them before publishing.
            assert p.get_message(timeout=5)["type"] == "psubscribe"
            assert p.get_message(timeout=5)["type"] == "subscribe"
            assert r.publish("ps:news.sport", "goal") == 2
            got = sorted([(m["type"], m["pattern"], m["channel"], m["data"])
                          for m in (get_message(p), get_message(p))], key=str)
            assert got == sorted([("message", None, "ps:news.sport", "goal"),
                                  ("pmessage", "ps:news.*", "ps:news.sport", "goal")], key=str)
            assert r.publish("ps:news.art", "x") == 1
            m = get_message(p)
            assert (m["type"], m["pattern"], m["channel"]) == ("pmessage", "ps:news.*",
                                                                "ps:news.art")
            assert r.pubsub_numpat() >= 1
        finally:
            p.close()

    def test_order_per_publisher(self, r, server, raw_factory):
        sub = raw_factory()
        assert sub.call("SUBSCRIBE", "ps:order") == [b"subscribe", b"ps:order", 1]
        pubs = [raw_factory(), raw_factory()]
        n = 200
        for i, pub in enumerate(pubs):
            pub.send(b"".join(
                b"*3\r\n$7\r\nPUBLISH\r\n$8\r\nps:order\r\n$%d\r\n%s\r\n"
                % (len(m), m) for m in (b"%d:%d" % (i, j) for j in range(n))))
        for pub in pubs:
            assert [pub.read() for _ in range(n)] == [1] * n
        nxt = [0, 0]
        for _ in range(2 * n):
            kind, ch, data = sub.read()
            assert (kind, ch) == (b"message", b"ps:order")
            who, seq = (int(x) for x in data.split(b":"))
            assert seq == nxt[who]
            nxt[who] += 1

    def test_pipelined_publishes_to_different_channels(self, r, raw_factory):
        """A pipelined run of PUBLISH (delivered as one batch per thread) still replies each
        call's own receiver count, in order, and delivers in publish order."""
        a, b = raw_factory(), raw_factory()
        assert a.call("SUBSCRIBE", "pp:1") == [b"subscribe", b"pp:1", 1]
        assert b.call("PSUBSCRIBE", "pp:*") == [b"psubscribe", b"pp:*", 1]
        pub = raw_factory()
        calls = [("pp:1", "m1"), ("other", "x"), ("pp:2", "m2"), ("pp:1", "m3")]
        pub.send(b"".join(b"*3\r\n$7\r\nPUBLISH\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n"
                          % (len(c), c.encode(), len(m), m.encode()) for c, m in calls)
                 + b"*1\r\n$4\r\nPING\r\n")
        assert [pub.read() for _ in calls] == [2, 0, 1, 2]
        assert pub.read() == "PONG"
        assert [a.read() for _ in range(2)] == [[b"message", b"pp:1", b"m1"],
                                                [b"message", b"pp:1", b"m3"]]
        assert [b.read() for _ in range(3)] == [[b"pmessage", b"pp:*", b"pp:1", b"m1"],
                                                [b"pmessage", b"pp:*", b"pp:2", b"m2"],
                                                [b"pmessage", b"pp:*", b"pp:1", b"m3"]]

    def test_subscribe_replies_and_counts(self, raw):
        assert raw.call("UNSUBSCRIBE") == [b"unsubscribe", None, 0]
        assert raw.call("PUNSUBSCRIBE") == [b"punsubscribe", None, 0]
        assert raw.call("SUNSUBSCRIBE") == [b"sunsubscribe", None, 0]
        assert raw.call("SUBSCRIBE", "ps:a", "ps:b", "ps:a") == [b"subscribe", b"ps:a", 1]
        assert raw.read() == [b"subscribe", b"ps:b", 2]
        assert raw.read() == [b"subscribe", b"ps:a", 2]
        assert raw.call("PSUBSCRIBE", "ps:p*") == [b"psubscribe", b"ps:p*", 3]
        assert raw.call("SSUBSCRIBE", "ps:s") == [b"ssubscribe", b"ps:s", 1]
        assert raw.call("UNSUBSCRIBE", "ps:zz") == [b"unsubscribe", b"ps:zz", 3]
        first, second = raw.call("UNSUBSCRIBE"), raw.read()
        assert {first[1], second[1]} == {b"ps:a", b"ps:b"}
        assert (first[0], first[2], second[0], second[2]) == (b"unsubscribe", 2,
                                                              b"unsubscribe", 1)
        assert raw.call("SUNSUBSCRIBE") == [b"sunsubscribe", b"ps:s", 0]
        assert raw.call("PUNSUBSCRIBE") == [b"punsubscribe", b"ps:p*", 0]
        assert raw.call("PING") == "PONG"  # subscribed mode is over

    def test_sharded_channels(self, r, raw_factory):
        sub = raw_factory()
        assert sub.call("SSUBSCRIBE", "ps:sh") == [b"ssubscribe", b"ps:sh", 1]
        assert sub.call("SUBSCRIBE", "ps:sh") == [b"subscribe", b"ps:sh", 1]
        pub = raw_factory()
        assert pub.call("SPUBLISH", "ps:sh", "s1") == 1
        assert sub.read() == [b"smessage", b"ps:sh", b"s1"]
        assert pub.call("PUBLISH", "ps:sh", "p1") == 1
        assert sub.read() == [b"message", b"ps:sh", b"p1"]
        assert pub.call("PUBSUB", "SHARDNUMSUB", "ps:sh", "ps:none") == [b"ps:sh", 1,
                                                                          b"ps:none", 0]
        assert b"ps:sh" in pub.call("PUBSUB", "SHARDCHANNELS", "ps:*")
        assert sub.call("SUNSUBSCRIBE", "ps:sh") == [b"sunsubscribe", b"ps:sh", 0]
        assert pub.call("SPUBLISH", "ps:sh", "s2") == 0


class TestIntrospection:
    def test_pubsub_channels_numsub_numpat(self, r, raw_factory):
        a, b = raw_factory(), raw_factory()
        a.call("SUBSCRIBE", "ps:i1")
        b.call("SUBSCRIBE", "ps:i1")
        b.call("SUBSCRIBE", "ps:i2")
        b.call("PSUBSCRIBE", "ps:ipat*")
        assert sorted(c for c in r.pubsub_channels("ps:i*")) == ["ps:i1", "ps:i2"]
        assert r.pubsub_numsub("ps:i1", "ps:i2", "ps:i3") == [("ps:i1", 2), ("ps:i2", 1),
                                                                 ("ps:i3", 0)]
        assert r.execute_command("PUBSUB", "NUMSUB") == []
        # Earlier tests' subscribers may still be leaving (a disconnect is noticed
        # asynchronously), so wait for the exact figures.
        wait_until(lambda: r.pubsub_numpat() == 1, what="NUMPAT 1")
        info = wait_until(lambda: (lambda i: i if i["pubsub_channels"] == 2 else None)(
            r.info("stats")), what="pubsub_channels 2")
        assert info["pubsub_patterns"] == 1
        assert info["pubsubshard_channels"] == 0

    def test_pubsub_errors_and_help(self, raw):
        assert_err(raw.call("PUBSUB", "NOPE"), "ERR unknown subcommand 'NOPE'. Try PUBSUB HELP.")
        assert_err(raw.call("PUBSUB", "NUMPAT", "x"),
                   "ERR wrong number of arguments for 'pubsub|numpat' command")
        assert_err(raw.call("PUBSUB", "channels", "a", "b"),
                   "ERR unknown subcommand or wrong number of arguments for 'channels'. "
                   "Try PUBSUB HELP.")
        assert_err(raw.call("PUBSUB"), "ERR wrong number of arguments for 'pubsub' command")
        assert_err(raw.call("SUBSCRIBE"), "ERR wrong number of arguments for 'subscribe' command")
        assert_err(raw.call("PUBLISH", "a"), "ERR wrong number of arguments for 'publish' command")
        help_lines = raw.call("PUBSUB", "HELP")
        assert help_lines[0].startswith("PUBSUB <subcommand>")
        assert "NUMPAT" in help_lines and "SHARDNUMSUB [<shardchannel> ...]" in help_lines

    def test_client_list_fields(self, r, raw_factory):
        sub = raw_factory()
        sub.call("CLIENT", "SETNAME", "ps-lister")
        sub.call("SUBSCRIBE", "ps:c1", "ps:c2")
        sub.read()
        sub.call("PSUBSCRIBE", "ps:c*")
        line = [l for l in r.execute_command("CLIENT", "LIST").splitlines()
                if "name=ps-lister" in l][0]
        assert client_field(line, "flags") == "P"
        assert (client_field(line, "sub"), client_field(line, "psub"),
                client_field(line, "ssub")) == ("2", "1", "0")
        assert "name=ps-lister" in r.execute_command("CLIENT", "LIST", "TYPE", "pubsub")
        assert "name=ps-lister" not in r.execute_command("CLIENT", "LIST", "TYPE", "normal")


class TestSubscribedMode:
    def test_resp2_allows_only_pubsub_commands(self, raw):
        raw.call("SUBSCRIBE", "ps:m")
        assert_err(raw.call("GET", "x"), "ERR Can't execute 'get': " + SUBSCRIBED_ONLY)
        assert_err(raw.call("CLIENT", "ID"), "ERR Can't execute 'client|id': " + SUBSCRIBED_ONLY)
        assert_err(raw.call("PUBLISH", "ps:m", "x"),
                   "ERR Can't execute 'publish': " + SUBSCRIBED_ONLY)
        assert raw.call("PING") == [b"pong", b""]
        assert raw.call("PING", "hi") == [b"pong", b"hi"]
        assert_err(raw.call("NOSUCHCMD"),
                   "ERR unknown command 'NOSUCHCMD', with args beginning with: ")
        # Pipelined: after RESET the GET runs normally.
        replies = raw.pipeline([("GET", "x"), ("RESET",), ("GET", "x")])
        assert_err(replies[0], "ERR Can't execute 'get': " + SUBSCRIBED_ONLY)
        assert replies[1:] == ["RESET", None]

    def test_resp3_pushes_and_any_command(self, r, raw_factory):
        sub = raw_factory()
        sub.call("HELLO", "3")
        confirm = sub.call("SUBSCRIBE", "ps:r3")
        assert isinstance(confirm, Push) and confirm == [b"subscribe", b"ps:r3", 1]
        assert sub.call("GET", "ps:nokey") is None
        assert sub.call("PING") == "PONG"
        assert r.publish("ps:r3", "m1") == 1
        msg = sub.read()
        assert isinstance(msg, Push) and msg == [b"message", b"ps:r3", b"m1"]
        # Publishing to itself: the message comes before PUBLISH's reply.
        sub.send(b"*3\r\n$7\r\nPUBLISH\r\n$5\r\nps:r3\r\n$4\r\nself\r\n")
        assert sub.read() == [b"message", b"ps:r3", b"self"]
        assert sub.read() == 1
        assert isinstance(sub.call("UNSUBSCRIBE"), Push)

    def test_redis_py_resp3_pubsub(self, r3, r):
        p = r3.pubsub()
        try:
            p.subscribe("ps:py3")
            assert p.get_message(timeout=5)["type"] == "subscribe"
            assert r.publish("ps:py3", "v") == 1
            assert get_message(p)["data"] == "v"
        finally:
            p.close()


class TestCleanup:
    def test_reset_removes_subscriptions(self, r, raw_factory):
        sub = raw_factory()
        sub.call("SUBSCRIBE", "ps:reset")
        sub.call("PSUBSCRIBE", "ps:reset*")
        sub.call("SSUBSCRIBE", "ps:reset")
        assert sub.call("RESET") == "RESET"
        assert numsub(r, "ps:reset") == 0
        assert r.publish("ps:reset", "x") == 0
        assert r.execute_command("PUBSUB", "SHARDNUMSUB", "ps:reset") == ["ps:reset", 0]
        assert r.publish("ps:resetx", "x") == 0  # the pattern is gone too

    def test_disconnect_removes_subscriptions(self, r, server):
        subs = [server.raw() for _ in range(4)]
        for s in subs:
            s.call("SUBSCRIBE", "ps:gone")
            s.call("PSUBSCRIBE", "ps:gone*")
        assert r.publish("ps:gone", "x") == 8
        for s in subs:
            s.close()
        wait_until(lambda: r.publish("ps:gone", "x") == 0, what="subscribers removed")
        assert numsub(r, "ps:gone") == 0
        assert "ps:gone" not in r.pubsub_channels()


class TestOutputBufferLimit:
    def test_config_get_set(self, r, restore_obuf):
        assert r.config_get("client-output-buffer-limit") == {
            "client-output-buffer-limit": DEFAULT_OBUF}
        assert r.config_set("client-output-buffer-limit", "pubsub 1mb 512kb 10")
        assert r.config_get("client-output-buffer-limit")["client-output-buffer-limit"] == (
            "normal 0 0 0 slave 268435456 67108864 60 pubsub 1048576 524288 10")

    def test_config_set_errors(self, raw, restore_obuf):
        prefix = ("ERR CONFIG SET failed (possibly related to argument "
                  "'client-output-buffer-limit') - ")
        assert_err(raw.call("CONFIG", "SET", "client-output-buffer-limit", "pubsub 1 2"),
                   prefix + "Wrong number of arguments in buffer limit configuration.")
        assert_err(raw.call("CONFIG", "SET", "client-output-buffer-limit", "master 1 2 3"),
                   prefix + "Invalid client class specified in buffer limit configuration.")
        assert_err(raw.call("CONFIG", "SET", "client-output-buffer-limit", "pubsub 1x 2 3"),
                   prefix + "Error in hard, soft or soft_seconds setting in buffer limit "
                   "configuration.")

    def test_slow_subscriber_is_disconnected(self, r, server, restore_obuf):
        r.config_set("client-output-buffer-limit", "pubsub 1mb 0 0")
        slow = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        slow.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 * 1024)
        slow.connect((server.host, server.port))
        try:
            slow.sendall(b"*2\r\n$9\r\nSUBSCRIBE\r\n$7\r\nps:slow\r\n")
            wait_until(lambda: numsub(r, "ps:slow") == 1, what="subscribed")
            payload = "x" * (256 * 1024)
            dropped = False
            for _ in range(400):  # never reads: the server must drop it, not buffer forever
                if r.publish("ps:slow", payload) == 0:
                    dropped = True
                    break
            assert dropped
            assert numsub(r, "ps:slow") == 0
            # What was sent before the drop can be read; then the socket is closed.
            slow.settimeout(10)
            while True:
                try:
                    chunk = slow.recv(1 << 20)
                except ConnectionResetError:
                    break
                if not chunk:
                    break
        finally:
            slow.close()
        assert r.ping()
