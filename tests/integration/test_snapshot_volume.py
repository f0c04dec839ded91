"""Snapshots of more data than the writer's queues hold: millions of small keys and values
larger than a chunk, saved by every shard at once, with and without writes during the save.
A save that stopped making progress (a wait that could never end) fails here by its socket
timeout; the file must then pass redis-check-rdb with every key."""

import threading

import redis

import persistence_helpers as ph


def test_save_of_millions_of_keys_and_big_values_completes(server, server_factory):
    srv = server_factory(extra_args=ph.persistence_args(server.kind, rdbcompression=False))
    c = ph.bclient(srv, timeout=120)
    c.execute_command("DEBUG", "POPULATE", 1500000, "key", 16)
    big = {b"big:%d" % i: bytes([65 + i % 26]) * (300 * 1024 + i) for i in range(60)}
    c.mset(big)
    c.rpush("biglist", *[b"x" * 1000] * 3000)
    assert c.execute_command("SAVE") in (True, b"OK")
    check = ph.check_rdb(srv.workdir / "dump.rdb")
    assert check.rc == 0, check.output[-2000:]
    assert check.keys == 1500000 + 60 + 1


def test_bgsave_under_writes_completes(server, server_factory):
    srv = server_factory(extra_args=ph.persistence_args(server.kind, rdbcompression=False))
    c = ph.bclient(srv, timeout=120)
    c.execute_command("DEBUG", "POPULATE", 200000, "key", 512)
    stop = threading.Event()

    def writer():
        w = redis.Redis(host=srv.host, port=srv.port, socket_timeout=120)
        i = 0
        while not stop.is_set():
            p = w.pipeline(transaction=False)
            for _ in range(100):
                p.set(b"key:%d" % (i % 200000), b"y" * 512)
                i += 7919
            p.execute()

    threads = [threading.Thread(target=writer) for _ in range(2)]
    for t in threads:
        t.start()
    try:
        for _ in range(3):
            ph.bgsave_and_wait(c)
    finally:
        stop.set()
        for t in threads:
            t.join()
    check = ph.check_rdb(srv.workdir / "dump.rdb")
    assert check.rc == 0, check.output[-2000:]
    assert check.keys == 200000
