"""Process-level behaviour: clean shutdown on signals, start-up failures,
one thread per shard. Each test starts its own server instance."""

import signal
import subprocess

import pytest


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_signal_shuts_down_cleanly(server_factory, sig):
    srv = server_factory()
    c = srv.raw()
    assert c.call("SET", "k", "v") == "OK"
    srv.proc.send_signal(sig)
    try:
        rc = srv.proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        pytest.fail("server did not exit within 15s after %s" % sig.name)
    c.close()
    assert rc == 0, "exit code %s; stderr:\n%s" % (rc, srv.stderr_text())


def test_port_in_use_fails(server, server_factory):
    srv = server_factory(start=False)
    proc = srv.spawn(server.port)
    try:
        rc = proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        pytest.fail("second server on a busy port did not exit")
    assert rc != 0
    # Redis logs to stdout, dashkv to stderr.
    log = srv.stderr_text() + (srv.workdir / "server.stdout").read_text(errors="replace")
    assert "in use" in log.lower(), log
    server.assert_alive()


@pytest.mark.dashkv_only
def test_bad_flag_value_fails(server_factory):
    srv = server_factory(extra_args=["--threads", "abc"], start=False)
    proc = srv.spawn(0)
    try:
        rc = proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        pytest.fail("server with a bad flag value did not exit")
    assert rc != 0
    assert "threads" in srv.stderr_text()


@pytest.mark.dashkv_only
def test_thread_count(server):
    """At least one OS thread per shard (--threads N)."""
    with open("/proc/%d/status" % server.proc.pid) as f:
        threads = next(int(line.split()[1]) for line in f if line.startswith("Threads:"))
    assert threads >= server.threads
