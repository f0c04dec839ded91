"""SWAPDB index1 index2 (Redis 7.0): the databases trade contents on every shard at once;
WATCHed keys that exist in either database are dirtied, clients blocked on keys of either
database are served, connections keep their selected index, and no keyspace event is raised.
Expected values are Redis 7.0's (the suite also runs against redis-server)."""

import threading
import time

import pytest

from helpers import assert_err, wait_until


def client(server, db=0):
    import redis
    return redis.Redis(host=server.host, port=server.port, db=db, decode_responses=True,
                       socket_timeout=20)


@pytest.fixture
def dbs(r, server):
    c1 = client(server, 1)
    c2 = client(server, 2)
    yield r, c1, c2
    c1.close()
    c2.close()


class TestSwap:
    def test_contents_trade_places_on_every_shard(self, dbs):
        r0, r1, _ = dbs
        keys0 = {"sw:a%d" % i: str(i) for i in range(40)}  # spread over the shards
        r0.mset(keys0)
        r0.set("sw:ttl", "x", ex=1000)
        r1.rpush("sw:list", "a", "b")
        r1.set("sw:only1", "1")
        assert r0.swapdb(0, 1) is True
        assert r0.dbsize() == 2
        assert r0.lrange("sw:list", 0, -1) == ["a", "b"]
        assert r0.get("sw:only1") == "1"
        assert r1.dbsize() == 41
        assert r1.mget(list(keys0)) == list(keys0.values())
        assert 0 < r1.ttl("sw:ttl") <= 1000
        # Writes land in the swapped contents, and swapping back restores the start.
        r0.set("sw:after", "1")
        assert r0.swapdb(1, 0) is True
        assert r0.dbsize() == 41
        assert r1.get("sw:after") == "1"

    def test_swapping_a_database_with_itself_changes_nothing(self, dbs):
        r0, _, _ = dbs
        r0.set("sw:self", "1")
        assert r0.swapdb(0, 0) is True
        assert r0.get("sw:self") == "1"

    def test_swapping_with_an_empty_database(self, dbs):
        r0, _, r2 = dbs
        r0.set("sw:e", "1")
        assert r0.swapdb(0, 2) is True
        assert r0.dbsize() == 0
        assert r2.get("sw:e") == "1"

    @pytest.mark.parametrize("args,error", [
        (("x", "1"), "ERR invalid first DB index"),
        (("0", "x"), "ERR invalid second DB index"),
        (("x", "y"), "ERR invalid first DB index"),
        (("0", "16"), "ERR DB index is out of range"),
        (("-1", "0"), "ERR DB index is out of range"),
        (("1.5", "0"), "ERR invalid first DB index"),
        (("0",), "ERR wrong number of arguments for 'swapdb' command"),
        (("0", "1", "2"), "ERR wrong number of arguments for 'swapdb' command"),
    ])
    def test_errors(self, raw, args, error):
        assert_err(raw.call("SWAPDB", *args), error)

    def test_atomic_inside_multi(self, dbs):
        r0, r1, _ = dbs
        r0.set("sw:m", "0")
        p = r0.pipeline(transaction=True)
        p.swapdb(0, 1)
        p.set("sw:m", "in-new-0")
        p.swapdb(0, 1)
        assert p.execute() == [True, True, True]
        assert r0.get("sw:m") == "0"
        assert r1.get("sw:m") == "in-new-0"

    def test_no_keyspace_event(self, r, dbs):
        r0, r1, _ = dbs
        r0.set("sw:ev", "1")
        r.config_set("notify-keyspace-events", "KEA")
        try:
            p = r.pubsub()
            p.psubscribe("__key*")
            assert p.get_message(timeout=5)["type"] == "psubscribe"
            r0.swapdb(0, 1)
            time.sleep(0.3)
            assert p.get_message(timeout=0.2) is None
            p.close()
        finally:
            r.config_set("notify-keyspace-events", "")


class TestWatch:
    def test_a_watched_key_existing_in_either_database_is_dirtied(self, dbs, server):
        r0, r1, _ = dbs
        r0.set("sw:w0", "1")   # exists in db 0
        r1.set("sw:w1", "1")   # exists only in db 1
        for key in ("sw:w0", "sw:w1"):
            c = client(server)
            p = c.pipeline(transaction=True)
            p.watch(key)
            r0.swapdb(0, 1)
            p.multi()
            p.get(key)
            with pytest.raises(Exception) as e:
                p.execute()
            assert "WatchError" in type(e.value).__name__
            c.close()

    def test_a_watched_key_missing_in_both_is_not_dirtied(self, dbs, server):
        r0, r1, _ = dbs
        r0.set("sw:x0", "1")
        r1.set("sw:x1", "1")
        c = client(server)
        p = c.pipeline(transaction=True)
        p.watch("sw:nowhere")
        r0.swapdb(0, 1)
        p.multi()
        p.get("sw:nowhere")
        assert p.execute() == [None]
        c.close()

    def test_a_watched_key_of_another_database_is_not_dirtied(self, dbs, server):
        r0, r1, _ = dbs
        r1.set("sw:w5", "1")
        c = client(server, 5)
        p = c.pipeline(transaction=True)
        p.watch("sw:w5")  # db 5: not swapped
        r0.swapdb(0, 1)
        p.multi()
        p.get("sw:w5")
        assert p.execute() == [None]
        c.close()


@pytest.mark.needs_lists
class TestBlocked:
    def test_a_client_blocked_on_a_key_the_swap_brings_is_served(self, dbs, server):
        r0, r1, _ = dbs
        r1.rpush("sw:q", "job")
        blocked = client(server)
        result = {}

        def run():
            result["v"] = blocked.blpop(["sw:q"], timeout=10)

        t = threading.Thread(target=run)
        t.start()
        wait_until(lambda: int(r0.info("clients")["blocked_clients"]) == 1, what="BLPOP blocks")
        assert r0.swapdb(0, 1) is True
        t.join(10)
        assert list(result.get("v")) == ["sw:q", "job"]
        assert r0.exists("sw:q") == 0
        blocked.close()

    def test_a_client_keeps_waiting_when_the_swap_brings_nothing(self, dbs, server):
        r0, _, _ = dbs
        blocked = client(server)
        result = {}

        def run():
            result["v"] = blocked.blpop(["sw:none"], timeout=1)

        t = threading.Thread(target=run)
        t.start()
        wait_until(lambda: int(r0.info("clients")["blocked_clients"]) == 1, what="BLPOP blocks")
        r0.swapdb(0, 1)
        t.join(10)
        assert result.get("v") is None
        blocked.close()
