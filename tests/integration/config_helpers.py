"""Servers started with a config file, for the config file and dangerous-command tests.

The file comes first on the command line (`redis-server file --port N`, `dashkv file --port N
--threads T`): Redis only reads a config file given as its first argument. The file holds the
rest of the test setup (bind, save, dir), in directives both servers know.
"""

import subprocess

import pytest

from conftest import Server
from resp_client import RawClient

STARTUP_FAIL_TIMEOUT = 15.0


def base_conf(workdir):
    """The directives every test file starts with."""
    return 'bind 127.0.0.1\nsave ""\ndir "%s"\n' % workdir


class ConfServer(Server):
    """A Server whose settings come from `conf_path` (plus `extra_args` flags)."""

    def __init__(self, kind, threads, workdir, conf_path, extra_args=()):
        super().__init__(kind, threads, workdir, extra_args)
        self.conf_path = conf_path

    def _argv(self, port):
        full = super()._argv(port)
        exe = full[0]
        argv = [exe, str(self.conf_path), "--port", str(port)]
        if self.kind == "dashkv":
            argv += ["--threads", str(self.threads)]
        return argv + self.extra_args

    def _ping(self, ping_timeout=1.0):
        """Up when PING is answered, with PONG or -NOAUTH (a file may set requirepass)."""
        try:
            c = RawClient(self.host, self.port, timeout=ping_timeout)
        except OSError:
            return False
        try:
            reply = c.call("PING")
            return reply == "PONG" or str(reply).startswith("NOAUTH")
        except Exception:
            return False
        finally:
            c.close()

    def start_failure(self):
        """Starts the server expecting it to refuse to start; returns (exit code, output)."""
        proc = self.spawn(0)
        try:
            rc = proc.wait(timeout=STARTUP_FAIL_TIMEOUT)
        except subprocess.TimeoutExpired:
            self.stop()
            pytest.fail("server started despite a bad config file:\n%s"
                        % self.conf_path.read_text(errors="replace"))
        out = self.stderr_text() + (self.workdir / "server.stdout").read_text(errors="replace")
        return rc, out


@pytest.fixture
def conf_server(server, tmp_path_factory):
    """make(conf_text, extra_args=(), start=True) -> ConfServer of the session server's kind
    and thread count, its file holding base_conf() then `conf_text` (str or bytes). All are
    stopped at teardown."""
    made = []

    def make(conf_text="", extra_args=(), start=True):
        workdir = tmp_path_factory.mktemp("conf")
        path = workdir / "test.conf"
        head = base_conf(workdir)
        if isinstance(conf_text, bytes):
            path.write_bytes(head.encode() + conf_text)
        else:
            path.write_text(head + conf_text)
        srv = ConfServer(server.kind, server.threads, workdir, path, list(extra_args))
        made.append(srv)
        if start:
            srv.start()
        return srv

    yield make
    for srv in made:
        srv.stop()
