"""Function libraries in snapshots (Redis 7.0: FUNCTION2 records after the AUX fields): they
survive SAVE and a restart and DEBUG RELOAD, our file's libraries load into redis-server and
pass redis-check-rdb, and a file written by redis-server brings its libraries to the server
under test. Checked against redis-server 7.0.15 (DASHKV_TEST_TARGET=redis)."""
import shutil

import persistence_helpers as ph
from conftest import Server

LIB = ("#!lua name=plib\n"
       "redis.register_function('pf', function(keys, args) return redis.call('get', keys[1]) end)\n"
       "redis.register_function{function_name='pro', callback=function() return 'ro' end, "
       "flags={'no-writes'}}")
LIB2 = ("#!lua name=plib2\n"
        "redis.register_function('pf2', function() return 2 end)")


def start(server_factory, server, **kw):
    srv = server_factory(extra_args=ph.persistence_args(server.kind, **kw))
    return srv, ph.bclient(srv)


def dump_path(srv):
    return srv.workdir / "dump.rdb"


def libraries(c):
    return sorted(lib[1] for lib in c.function_list())


def test_save_and_restart_keep_the_libraries(server, server_factory):
    srv, c = start(server_factory, server)
    c.function_load(LIB)
    c.function_load(LIB2)
    c.set("pk", "v")
    assert c.execute_command("SAVE") in (True, b"OK")
    c.close()
    c = ph.restart(srv)
    assert libraries(c) == [b"plib", b"plib2"]
    assert c.fcall("pf", 1, "pk") == b"v"
    assert c.fcall_ro("pro", 0) == b"ro"


def test_debug_reload_replaces_the_libraries_with_the_file_s(server, server_factory):
    srv, c = start(server_factory, server)
    c.function_load(LIB)
    assert c.execute_command("DEBUG", "RELOAD") in (True, b"OK")
    assert libraries(c) == [b"plib"]
    assert c.execute_command("SAVE") in (True, b"OK")
    c.function_flush()
    c.function_load(LIB2)
    assert c.execute_command("DEBUG", "RELOAD", "NOSAVE") in (True, b"OK")
    assert libraries(c) == [b"plib"]
    c.function_load(LIB.replace("return 'ro'", "return 'new'"), replace=True)
    assert c.execute_command("DEBUG", "RELOAD", "NOSAVE", "NOFLUSH", "MERGE") in (True, b"OK")
    assert c.fcall_ro("pro", 0) == b"ro"  # the file's library replaced the loaded one


def test_our_file_loads_into_redis(server, server_factory, tmp_path):
    srv, c = start(server_factory, server)
    c.function_load(LIB)
    c.set("pk", "v")
    assert c.execute_command("SAVE") in (True, b"OK")
    check = ph.check_rdb(dump_path(srv))
    assert check.rc == 0, check.output[-3000:]
    with ph.RedisOnFile(dump_path(srv), tmp_path / "redis") as peer:
        pc = peer.client()
        assert libraries(pc) == [b"plib"]
        assert pc.fcall("pf", 1, "pk") == b"v"


def test_redis_file_brings_its_libraries(server, server_factory, tmp_path_factory):
    peer = Server("redis", 1, tmp_path_factory.mktemp("fpeer"))
    peer.start()
    try:
        pc = ph.bclient(peer)
        pc.function_load(LIB)
        pc.set("pk", "v")
        assert pc.execute_command("SAVE") in (True, b"OK")
        pc.close()
    finally:
        peer.stop()
    srv = server_factory(start=False)
    shutil.copyfile(peer.workdir / "dump.rdb", dump_path(srv))
    c = ph.restart(srv)
    assert libraries(c) == [b"plib"]
    assert c.fcall("pf", 1, "pk") == b"v"
