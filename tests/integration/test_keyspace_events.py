"""Keyspace notifications as a whole (notify-keyspace-events): the setting's letters and text, the
K/E channels, the classes DbSlice raises itself (new, keymiss, expired on access and by the
active cycle), events from keys of every shard reaching subscribers on every thread, in order.
The per-command events are in test_keyspace_events_*.py. Expected values are Redis 7.0's (the
suite also runs against redis-server)."""

import time

import pytest

from helpers import active_expiry_off, assert_err, wait_until

INVALID = ("ERR CONFIG SET failed (possibly related to argument 'notify-keyspace-events') - "
           "Invalid event class character. Use 'Ag$lshzxeKEtmdn'.")


@pytest.fixture
def events(r):
    """Sets notify-keyspace-events for the test and clears it afterwards."""
    def set_flags(flags):
        r.config_set("notify-keyspace-events", flags)
    yield set_flags
    r.config_set("notify-keyspace-events", "")


def subscribe(r, pattern="__key*"):
    p = r.pubsub()
    p.psubscribe(pattern)
    m = p.get_message(timeout=5)
    assert m is not None and m["type"] == "psubscribe"
    return p


def drain(p, quiet=0.3, timeout=10.0):
    """Every (channel, data) message until none arrives for `quiet` seconds."""
    out = []
    deadline = time.monotonic() + timeout
    last = time.monotonic()
    while time.monotonic() < deadline and time.monotonic() - last < quiet:
        m = p.get_message(timeout=0.05)
        if m is not None and m["type"] == "pmessage":
            out.append((m["channel"], m["data"]))
            last = time.monotonic()
    return out


def keyspace(db, key, event):
    return ("__keyspace@%d__:%s" % (db, key), event)


def keyevent(db, event, key):
    return ("__keyevent@%d__:%s" % (db, event), key)


class TestSetting:
    @pytest.mark.parametrize("letters,shown", [
        ("KEA", "AKE"), ("Kx", "xK"), ("gK", "gK"), ("A", "A"), ("AKEm", "AKEm"), ("", ""),
        ("n", "n"), ("Kg$lshzxetdn", "AK"), ("KEg$lshzxetd", "AKE"), ("Elh", "lhE"),
        ("mK$", "$Km"), ("KEAn", "AKE"),
    ])
    def test_letters_are_shown_as_redis_shows_them(self, r, events, letters, shown):
        events(letters)
        assert r.config_get("notify-keyspace-events") == {"notify-keyspace-events": shown}

    def test_default_is_empty(self, r):
        assert r.config_get("notify-keyspace-events") == {"notify-keyspace-events": ""}

    @pytest.mark.parametrize("bad", ["xyz", "KE!", "a", "KEA "])
    def test_unknown_letter_is_refused_and_keeps_the_old_value(self, r, raw, events, bad):
        events("Kg")
        assert_err(raw.call("CONFIG", "SET", "notify-keyspace-events", bad), INVALID)
        assert r.config_get("notify-keyspace-events") == {"notify-keyspace-events": "gK"}


class TestChannels:
    def test_nothing_is_published_when_off(self, r, events):
        p = subscribe(r)
        r.set("ev:off", "1")
        r.delete("ev:off")
        assert drain(p) == []
        p.close()

    def test_classes_without_k_or_e_publish_nothing(self, r, events):
        events("A")
        p = subscribe(r)
        r.set("ev:noke", "1")
        assert drain(p) == []
        p.close()

    def test_keyspace_and_keyevent_channels(self, r, events):
        events("KEA")
        p = subscribe(r)
        r.set("ev:both", "1")
        assert drain(p) == [keyspace(0, "ev:both", "set"), keyevent(0, "set", "ev:both")]
        events("K$")
        r.set("ev:both", "2")
        assert drain(p) == [keyspace(0, "ev:both", "set")]
        events("E$")
        r.set("ev:both", "3")
        assert drain(p) == [keyevent(0, "set", "ev:both")]
        p.close()

    def test_events_carry_the_database_index(self, r, server, events):
        events("KEA")
        p = subscribe(r)
        r5 = r.__class__(host=server.host, port=server.port, db=5, decode_responses=True)
        r5.set("ev:db5", "1")
        assert drain(p) == [keyspace(5, "ev:db5", "set"), keyevent(5, "set", "ev:db5")]
        r5.flushdb()
        r5.close()
        p.close()

    def test_a_class_left_out_is_not_published(self, r, events):
        events("KEh")  # hashes only
        p = subscribe(r)
        r.set("ev:str", "1")
        r.hset("ev:hash", "f", "v")
        assert drain(p) == [keyspace(0, "ev:hash", "hset"), keyevent(0, "hset", "ev:hash")]
        p.close()


class TestEventsOfTheKeyspace:
    def test_new_is_raised_when_a_key_is_created(self, r, events):
        events("KEn")
        p = subscribe(r)
        r.set("ev:new", "1")
        r.set("ev:new", "2")  # exists: no new
        r.hset("ev:newh", "f", "v")
        assert drain(p) == [keyspace(0, "ev:new", "new"), keyevent(0, "new", "ev:new"),
                            keyspace(0, "ev:newh", "new"), keyevent(0, "new", "ev:newh")]
        p.close()

    def test_keymiss_is_raised_by_reads_only(self, r, events):
        events("KEm")
        p = subscribe(r)
        r.get("ev:miss")
        r.set("ev:hit", "1")
        r.get("ev:hit")
        r.exists("ev:miss2")  # EXISTS is a read
        r.delete("ev:miss3")  # a write is not
        r.object("encoding", "ev:miss4")  # nor is OBJECT
        assert drain(p) == [keyspace(0, "ev:miss", "keymiss"), keyevent(0, "keymiss", "ev:miss"),
                            keyspace(0, "ev:miss2", "keymiss"),
                            keyevent(0, "keymiss", "ev:miss2")]
        p.close()

    def test_expired_once_whoever_finds_it_first(self, r, events):
        # Reads race the active cycle for the key: either way one `expired` is raised. (Which
        # path deletes it is checked in tests/server/storage/key_change_test.cc.)
        events("KEx")
        p = subscribe(r)
        r.set("ev:lazy", "1", px=20)
        deadline = time.monotonic() + 5
        while r.get("ev:lazy") is not None and time.monotonic() < deadline:
            time.sleep(0.001)
        assert r.get("ev:lazy") is None
        assert drain(p) == [keyspace(0, "ev:lazy", "expired"), keyevent(0, "expired", "ev:lazy")]
        p.close()

    def test_expired_by_the_active_cycle(self, r, events):
        events("KEx")
        p = subscribe(r)
        keys = ["ev:active:%d" % i for i in range(20)]
        for k in keys:
            r.set(k, "1", px=30)
        got = []
        deadline = time.monotonic() + 10
        while len(got) < 2 * len(keys) and time.monotonic() < deadline:
            got += drain(p, quiet=0.5)
        assert sorted(got) == sorted([keyspace(0, k, "expired") for k in keys] +
                                     [keyevent(0, "expired", k) for k in keys])
        assert r.dbsize() == 0
        p.close()

    def test_expire_in_the_past_deletes_with_del(self, r, events):
        events("KEA")
        p = subscribe(r)
        r.set("ev:past", "1")
        r.pexpire("ev:past", -1)
        assert drain(p) == [keyspace(0, "ev:past", "set"), keyevent(0, "set", "ev:past"),
                            keyspace(0, "ev:past", "del"), keyevent(0, "del", "ev:past")]
        p.close()


class TestAcrossThreads:
    def test_every_subscriber_hears_keys_of_every_shard_in_order(self, r, server, events):
        events("E$")
        subscribers = []
        for _ in range(4):  # connections are spread over the threads
            c = r.__class__(host=server.host, port=server.port, decode_responses=True)
            subscribers.append((c, subscribe(c, "__keyevent@0__:*")))
        keys = ["ev:spread:%d" % i for i in range(16)]  # several shards
        for round_ in range(3):
            for k in keys:
                r.set(k, str(round_))
        expected = [("__keyevent@0__:set", k) for _ in range(3) for k in keys]
        for c, p in subscribers:
            got = drain(p)
            assert sorted(got) == sorted(expected)
            # One key's events arrive in the order its shard applied the writes (here: all
            # equal), and each key's events are in round order among themselves.
            for k in keys:
                assert [m for m in got if m[1] == k] == [("__keyevent@0__:set", k)] * 3
            p.close()
            c.close()

    def test_events_of_one_key_keep_their_order(self, r, events):
        events("K$lgh")
        p = subscribe(r, "__keyspace@0__:ev:order")
        pipe = r.pipeline(transaction=False)
        pipe.set("ev:order", "1")
        pipe.append("ev:order", "2")
        pipe.delete("ev:order")
        pipe.rpush("ev:order", "a")
        pipe.delete("ev:order")
        pipe.hset("ev:order", "f", "v")
        pipe.execute()
        assert [d for _, d in drain(p)] == ["set", "append", "del", "rpush", "del", "hset"]
        p.close()


class TestExpiredKeysMetByKeyspaceReads:
    """With the active cycle off, expired keys stay until something meets them. Redis 7.0's
    SCAN deletes (`expired`) those of them it would return; KEYS and DBSIZE leave them."""

    STALE = ["ev:stale:%d" % i for i in range(6)]  # over every shard

    def stale_keys(self, r):
        for k in self.STALE:
            r.set(k, "v", px=1)
        r.set("ev:live", "v")
        r.rpush("ev:list", "a")
        time.sleep(0.02)  # past the deadlines; the cycle is off, nothing reads the keys

    def hits_misses(self, r):
        stats = r.info("stats")
        return stats["keyspace_hits"], stats["keyspace_misses"], stats["expired_keys"]

    def scan_all(self, r, *args):
        keys, cursor = [], 0
        while True:
            cursor, batch = r.scan(cursor, *args)
            keys += batch
            if cursor == 0:
                return sorted(keys)

    def expired_events(self, keys):
        return sorted([keyspace(0, k, "expired") for k in keys] +
                      [keyevent(0, "expired", k) for k in keys])

    def test_scan_deletes_the_expired_keys_it_would_return(self, r, events):
        with active_expiry_off(r):
            self.stale_keys(r)
            events("KEA")
            p = subscribe(r)
            assert sorted(r.keys("*")) == ["ev:list", "ev:live"]
            assert r.dbsize() == len(self.STALE) + 2
            assert drain(p) == []
            # Keys the pattern leaves out stay, however expired.
            assert self.scan_all(r, "ev:stale:1") == []
            assert r.dbsize() == len(self.STALE) + 1
            assert sorted(drain(p)) == self.expired_events(["ev:stale:1"])
            before = self.hits_misses(r)
            assert self.scan_all(r) == ["ev:list", "ev:live"]
            assert r.dbsize() == 2
            assert sorted(drain(p)) == self.expired_events(
                [k for k in self.STALE if k != "ev:stale:1"])
            after = self.hits_misses(r)
            assert [b - a for a, b in zip(before, after)] == [0, 0, len(self.STALE) - 1]
        p.close()

    def test_scan_with_type_looks_each_matching_key_up(self, r, events):
        # TYPE reads every key the pattern matched: a hit, or a miss (`keymiss`) for an expired
        # key, which the lookup deletes (`expired` first).
        with active_expiry_off(r):
            self.stale_keys(r)
            events("KEAm")
            p = subscribe(r)
            before = self.hits_misses(r)
            assert self.scan_all(r, None, None, "list") == ["ev:list"]
            after = self.hits_misses(r)
            assert [b - a for a, b in zip(before, after)] == [2, len(self.STALE),
                                                              len(self.STALE)]
            got = drain(p)
            assert sorted(got) == sorted(
                self.expired_events(self.STALE) +
                [keyspace(0, k, "keymiss") for k in self.STALE] +
                [keyevent(0, "keymiss", k) for k in self.STALE])
            for k in self.STALE:
                mine = [m for m in got if m[0].endswith(":" + k) or m[1] == k]
                assert [m[1] if m[0].startswith("__keyspace") else m[0].split(":")[1]
                        for m in mine] == ["expired", "expired", "keymiss", "keymiss"], k
        p.close()

