"""Fixtures for the dashkv integration suite.

The suite runs against the dashkv binary (default) or, with
DASHKV_TEST_TARGET=redis, against a real `redis-server` so that every expected
value can be checked against the reference implementation.

Environment:
  DASHKV_BIN          path to the dashkv binary (default: <repo>/build/dashkv)
  DASHKV_TEST_TARGET  "dashkv" (default) or "redis"
  REDIS_SERVER_BIN    redis-server to use for the redis target (default: redis-server)
  DASHKV_HAS_LISTS=0  skip tests marked needs_lists on dashkv (lists exist: they run by default)

Markers:
  dashkv_only   only meaningful on dashkv (skipped against redis)
  needs_lists   uses list commands (run everywhere unless DASHKV_HAS_LISTS=0)
"""

import os
import pathlib
import shutil
import socket
import subprocess
import time

import pytest
import redis

from resp_client import RawClient

REPO_ROOT = pathlib.Path(__file__).resolve().parents[2]
TARGET = os.environ.get("DASHKV_TEST_TARGET", "dashkv").lower()
if TARGET not in ("dashkv", "redis"):
    raise pytest.UsageError("DASHKV_TEST_TARGET must be 'dashkv' or 'redis', got %r" % TARGET)

STARTUP_TIMEOUT = 15.0
# dashkv runs at every thread count of DASHKV_TEST_THREADS (comma-separated, default 1,2; the
# sanitizer runs add 4).
THREAD_COUNTS = [int(t) for t in os.environ.get("DASHKV_TEST_THREADS", "1,2").split(",")]
SERVER_PARAMS = ["redis"] if TARGET == "redis" else ["threads%d" % t for t in THREAD_COUNTS]


def pytest_configure(config):
    config.addinivalue_line("markers", "dashkv_only: test only makes sense against dashkv")
    config.addinivalue_line("markers", "needs_lists: test needs list commands (LPUSH ...)")


def pytest_collection_modifyitems(config, items):
    lists_ok = TARGET == "redis" or os.environ.get("DASHKV_HAS_LISTS", "1") != "0"
    for item in items:
        if TARGET == "redis" and item.get_closest_marker("dashkv_only"):
            item.add_marker(pytest.mark.skip(reason="dashkv-only test"))
        if not lists_ok and item.get_closest_marker("needs_lists"):
            item.add_marker(pytest.mark.skip(reason="dashkv has no lists yet"))


def _free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """A server process under test, listening on 127.0.0.1:port."""

    def __init__(self, kind, threads, workdir, extra_args=()):
        self.kind = kind  # "dashkv" or "redis"
        self.threads = threads
        self.workdir = workdir
        self.extra_args = list(extra_args)
        self.host = "127.0.0.1"
        self.port = None
        self.proc = None
        self.stderr_path = workdir / "server.stderr"

    @property
    def is_redis(self):
        return self.kind == "redis"

    def _argv(self, port):
        if self.kind == "redis":
            exe = os.environ.get("REDIS_SERVER_BIN", "redis-server")
            if shutil.which(exe) is None and not os.path.exists(exe):
                pytest.fail("redis-server not found (%s)" % exe, pytrace=False)
            return [exe, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                    "--appendonly", "no", "--dir", str(self.workdir),
                    "--enable-debug-command", "yes", "--databases", "16"] + self.extra_args
        exe = os.environ.get("DASHKV_BIN", str(REPO_ROOT / "build" / "dashkv"))
        if not os.path.isfile(exe) or not os.access(exe, os.X_OK):
            pytest.exit("dashkv binary not found at %s: build it (cmake --build build) or "
                        "set DASHKV_BIN, or run against Redis with DASHKV_TEST_TARGET=redis"
                        % exe, returncode=3)
        return [exe, "--port", str(port), "--bind", "127.0.0.1", "--threads",
                str(self.threads), "--dir", str(self.workdir), "--dbfilename", "dump.rdb", "--save", "",
                "--dbnum", "16"] + self.extra_args

    def stderr_text(self, limit=8000):
        try:
            text = self.stderr_path.read_text(errors="replace")
        except OSError:
            return ""
        return text[-limit:]

    def _ping(self, ping_timeout=1.0):
        try:
            c = RawClient(self.host, self.port, timeout=ping_timeout)
        except OSError:
            return False
        try:
            return c.call("PING") == "PONG"
        except Exception:
            return False
        finally:
            c.close()

    def spawn(self, port):
        """Starts the process on `port` without waiting; returns the Popen."""
        self.port = port
        argv = self._argv(port)
        with open(self.stderr_path, "ab") as err, open(self.workdir / "server.stdout",
                                                       "ab") as out:
            self.proc = subprocess.Popen(argv, stdout=out, stderr=err,
                                         stdin=subprocess.DEVNULL, cwd=self.workdir)
        return self.proc

    def start(self):
        """Starts on a free port and waits until PING answers; fails the test with
        the server's stderr otherwise."""
        # A free port can be taken between probing and binding; retry a few times.
        for _attempt in range(3):
            self.spawn(_free_port())
            argv = self.proc.args
            deadline = time.monotonic() + STARTUP_TIMEOUT
            while time.monotonic() < deadline:
                if self.proc.poll() is not None:
                    break
                if self._ping():
                    return
                time.sleep(0.05)
            exited = self.proc.poll() is not None
            self.stop()
            if not exited:
                pytest.fail("%s did not answer PING within %.0fs on port %d\nargv: %s\n"
                            "stderr:\n%s" % (self.kind, STARTUP_TIMEOUT, self.port, argv,
                                             self.stderr_text()), pytrace=False)
        pytest.fail("%s exited at start-up (rc=%s)\nargv: %s\nstderr:\n%s"
                    % (self.kind, self.proc.returncode, argv, self.stderr_text()),
                    pytrace=False)

    def stop(self):
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=10)

    def assert_alive(self):
        """Asserts the process still runs and a fresh connection answers PING."""
        assert self.proc.poll() is None, (
            "server died (rc=%s); stderr:\n%s" % (self.proc.returncode, self.stderr_text()))
        # A generous timeout: a loaded machine may take a while to page in a large buffer.
        assert self._ping(10.0), "server does not answer PING; stderr:\n%s" % self.stderr_text()

    def raw(self, timeout=10.0):
        return RawClient(self.host, self.port, timeout=timeout)


@pytest.fixture(scope="session", params=SERVER_PARAMS)
def server(request, tmp_path_factory):
    """The server under test (one per parameter: dashkv --threads 1/2, or redis)."""
    if request.param == "redis":
        srv = Server("redis", 1, tmp_path_factory.mktemp("redis"))
    else:
        threads = int(request.param[len("threads"):])
        srv = Server("dashkv", threads, tmp_path_factory.mktemp(request.param))
    srv.start()
    yield srv
    died = srv.proc.poll() is not None
    srv.stop()
    if died:
        pytest.fail("server exited during the session (rc=%s); stderr:\n%s"
                    % (srv.proc.returncode, srv.stderr_text()), pytrace=False)


def _client(server, **kw):
    return redis.Redis(host=server.host, port=server.port, decode_responses=True,
                       socket_timeout=20, **kw)


@pytest.fixture
def r(server):
    """A redis-py client (RESP2, decoded strings) on a freshly flushed server."""
    c = _client(server)
    c.flushall()
    yield c
    c.close()


@pytest.fixture
def r3(server):
    """A redis-py client speaking RESP3 (HELLO 3), on a freshly flushed server."""
    c = _client(server, protocol=3)
    c.flushall()
    yield c
    c.close()


@pytest.fixture
def rb(server):
    """A redis-py client returning raw bytes (no decoding), freshly flushed."""
    c = redis.Redis(host=server.host, port=server.port, socket_timeout=20)
    c.flushall()
    yield c
    c.close()


@pytest.fixture
def raw(server, r):
    """A raw-socket RESP client (resp_client.RawClient) on a flushed server."""
    c = server.raw()
    yield c
    c.close()


@pytest.fixture
def raw_factory(server, r):
    """Opens extra raw connections; all are closed at teardown."""
    conns = []

    def make(timeout=10.0):
        c = server.raw(timeout=timeout)
        conns.append(c)
        return c

    yield make
    for c in conns:
        c.close()


@pytest.fixture(scope="module", params=["session", "threads4"])
def srv(request, server, tmp_path_factory):
    """The session server, then a dashkv with --threads 4 (more shards than cores, so a
    module's multi-key tests see keys on more shards); the second is skipped against redis."""
    if request.param == "session":
        yield server
        return
    if TARGET == "redis":
        pytest.skip("--threads 4 is a dashkv configuration")
    s = Server("dashkv", 4, tmp_path_factory.mktemp("threads4"))
    s.start()
    yield s
    s.stop()


@pytest.fixture
def server_factory(server, tmp_path_factory):
    """Starts extra servers of the same kind as `server` (for start-up/shutdown
    tests): make(extra_args=(), start=True) -> Server. All are stopped at teardown."""
    made = []

    def make(extra_args=(), start=True):
        srv = Server(server.kind, server.threads, tmp_path_factory.mktemp("extra"),
                     extra_args)
        made.append(srv)
        if start:
            srv.start()
        return srv

    yield make
    for srv in made:
        srv.stop()


@pytest.fixture(scope="module")
def redis_beside(tmp_path_factory):
    """A redis-server 7.0 beside the server under test (side-by-side comparisons)."""
    srv = Server("redis", 1, tmp_path_factory.mktemp("redis-beside"))
    srv.start()
    yield srv
    srv.stop()
