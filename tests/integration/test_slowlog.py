"""SLOWLOG GET/LEN/RESET/HELP and slowlog-log-slower-than / slowlog-max-len (Redis 7.0):
entry fields, argument truncation and redaction, commands of every thread, errors.
Expected values are Redis 7.0.15's (the suite also runs against redis-server)."""

import pytest
import redis


@pytest.fixture
def slow(r):
    """Logs every command (threshold 0) on an empty slow log; restores the defaults after."""
    r.config_set("slowlog-log-slower-than", 0)
    r.config_set("slowlog-max-len", 128)
    r.execute_command("SLOWLOG", "RESET")
    yield r
    r.config_set("slowlog-log-slower-than", 10000)
    r.config_set("slowlog-max-len", 128)
    r.execute_command("SLOWLOG", "RESET")


def entries(r, count=-1):
    return r.execute_command("SLOWLOG", "GET", count)


def of(r, name):
    """The entries of command `name` (any case), newest first."""
    return [e for e in entries(r) if str(e[3][0]).lower() == name]


def logged_args(r):
    """The argument lists of the slow log, oldest first (SLOWLOG calls left out)."""
    return [list(e[3]) for e in reversed(entries(r))
            if str(e[3][0]).lower() != "slowlog"]


class TestEntries:
    def test_entry_fields(self, slow, server):
        slow.client_setname("named")
        slow.set("foo", "bar")
        e = of(slow, "set")[0]
        assert len(e) == 6
        ident, when, micros, args, addr, name = e
        assert isinstance(ident, int) and ident >= 0
        assert isinstance(when, int) and when > 1_600_000_000
        assert isinstance(micros, int) and micros >= 0
        assert [a.lower() for a in args] == ["set", "foo", "bar"]
        assert addr.startswith("127.0.0.1:") and int(addr.rsplit(":", 1)[1]) > 0
        assert name == "named"

    def test_newest_first_with_increasing_ids(self, slow):
        for i in range(5):
            slow.set("k%d" % i, i)
        got = of(slow, "set")
        assert [e[3][1] for e in got] == ["k4", "k3", "k2", "k1", "k0"]
        ids = [e[0] for e in got]
        assert ids == sorted(ids, reverse=True) and len(set(ids)) == 5

    def test_commands_of_every_shard_are_logged(self, slow):
        keys = ["key:%d" % i for i in range(40)]  # spread over every shard
        for k in keys:
            slow.set(k, "v")
        got = {e[3][1] for e in of(slow, "set")}
        assert got == set(keys)

    def test_pipeline_and_multi_key_commands(self, slow):
        p = slow.pipeline(transaction=False)
        p.set("a", 1)
        p.get("a")
        p.mset({"x": 1, "y": 2, "z": 3})
        p.execute()
        args = logged_args(slow)
        lowered = [[a.lower() for a in x] for x in args]
        assert ["set", "a", "1"] in lowered and ["get", "a"] in lowered
        assert any(x[0].lower() == "mset" and len(x) == 7 for x in args)

    def test_multi_exec_logs_the_queued_commands_not_exec(self, slow, raw):
        raw.call("MULTI")
        raw.call("SET", "q1", "v")
        raw.call("INCR", "q2")
        assert raw.call("EXEC") == ["OK", 1]
        names = [a[0].lower() for a in logged_args(slow)]
        assert "set" in names and "incr" in names and "multi" in names
        assert "exec" not in names

    def test_script_calls_are_logged_with_a_placeholder_client(self, slow):
        slow.eval("redis.call('set', KEYS[1], 'v') return 1", 1, "sk")
        got = entries(slow)
        inner = [e for e in got if [str(a).lower() for a in e[3]] == ["set", "sk", "v"]]
        assert inner and inner[0][4] == "?:0" and inner[0][5] == ""
        assert any(e[3][0].lower() == "eval" for e in got)

    def test_threshold_minus_one_logs_nothing(self, slow):
        slow.config_set("slowlog-log-slower-than", -1)
        slow.execute_command("SLOWLOG", "RESET")
        slow.set("a", 1)
        assert slow.execute_command("SLOWLOG", "LEN") == 0
        assert entries(slow) == []

    def test_high_threshold_logs_only_slow_commands(self, slow):
        slow.config_set("slowlog-log-slower-than", 1_000_000_000)
        slow.execute_command("SLOWLOG", "RESET")
        for i in range(20):
            slow.set("a", i)
        assert slow.execute_command("SLOWLOG", "LEN") == 0


class TestTruncationAndRedaction:
    def test_long_argument_is_cut_at_128_bytes(self, slow):
        slow.set("x", "a" * 200)
        e = of(slow, "set")[0]
        assert e[3][2] == "a" * 128 + "... (72 more bytes)"

    def test_more_than_32_arguments(self, slow):
        slow.rpush("l", *range(1, 41))
        e = of(slow, "rpush")[0]
        assert len(e[3]) == 32
        assert [a.lower() for a in e[3][:3]] == ["rpush", "l", "1"]
        assert e[3][30] == "29"
        assert e[3][31] == "... (11 more arguments)"

    def test_exactly_32_arguments_are_kept(self, slow):
        slow.rpush("l", *range(1, 31))
        e = of(slow, "rpush")[0]
        assert len(e[3]) == 32 and e[3][31] == "30"

    def test_auth_arguments_are_redacted(self, slow, raw):
        raw.call("AUTH", "someone", "secret")
        got = [a for a in logged_args(slow) if a[0].lower() == "auth"]
        assert got == [["AUTH", "(redacted)", "(redacted)"]]

    def test_hello_auth_is_redacted(self, slow, raw):
        raw.call("HELLO", "2", "AUTH", "default", "secret", "SETNAME", "nm")
        got = [a for a in logged_args(slow) if a[0].lower() == "hello"]
        assert got == [["HELLO", "2", "AUTH", "(redacted)", "(redacted)", "SETNAME", "nm"]]

    def test_config_set_of_a_password_is_redacted(self, slow):
        slow.config_set("requirepass", "")
        got = [a for a in logged_args(slow) if [x.lower() for x in a[:2]] == ["config", "set"]]
        assert got and got[-1][2:] == ["requirepass", "(redacted)"]

    def test_migrate_auth_is_redacted(self, slow, raw):
        raw.call("MIGRATE", "127.0.0.1", "1", "k", "0", "10", "AUTH", "pw")
        raw.call("MIGRATE", "127.0.0.1", "1", "k", "0", "10", "AUTH2", "u", "pw")
        got = [a for a in logged_args(slow) if a[0].lower() == "migrate"]
        assert got[0][6:] == ["AUTH", "(redacted)"]
        assert got[1][6:] == ["AUTH2", "(redacted)", "(redacted)"]


class TestCommands:
    def test_len_and_reset(self, slow):
        for i in range(3):
            slow.set("a", i)
        n = slow.execute_command("SLOWLOG", "LEN")
        assert n >= 3
        assert slow.execute_command("SLOWLOG", "RESET") == "OK"
        # The RESET itself is logged after it ran, as in Redis.
        assert slow.execute_command("SLOWLOG", "LEN") == 1

    def test_get_default_count_is_ten(self, slow):
        for i in range(15):
            slow.set("a", i)
        assert len(slow.execute_command("SLOWLOG", "GET")) == 10
        assert len(slow.execute_command("SLOWLOG", "GET", 3)) == 3
        assert len(slow.execute_command("SLOWLOG", "GET", -1)) >= 15
        assert slow.execute_command("SLOWLOG", "GET", 0) == []

    def test_max_len_bounds_the_log(self, slow):
        slow.config_set("slowlog-max-len", 5)
        for i in range(20):
            slow.set("a", i)
        assert slow.execute_command("SLOWLOG", "LEN") == 5
        assert len(entries(slow)) == 5
        slow.config_set("slowlog-max-len", 0)
        slow.set("a", 1)
        assert slow.execute_command("SLOWLOG", "LEN") == 0

    @pytest.mark.parametrize("count", ["-2", "abc", "1.5", "99999999999999999999"])
    def test_bad_count(self, slow, count):
        with pytest.raises(redis.ResponseError,
                           match="^count should be greater than or equal to -1$"):
            slow.execute_command("SLOWLOG", "GET", count)

    def test_huge_count_is_fine(self, slow):
        assert isinstance(slow.execute_command("SLOWLOG", "GET", 2**62), list)

    def test_wrong_arity(self, slow):
        with pytest.raises(redis.ResponseError, match="^unknown subcommand or wrong number of "
                           "arguments for 'gEt'. Try SLOWLOG HELP.$"):
            slow.execute_command("SLOWLOG", "gEt", 1, 2)
        with pytest.raises(redis.ResponseError,
                           match=r"^wrong number of arguments for 'slowlog\|len' command$"):
            slow.execute_command("SLOWLOG", "LEN", "x")
        with pytest.raises(redis.ResponseError,
                           match=r"^wrong number of arguments for 'slowlog\|reset' command$"):
            slow.execute_command("SLOWLOG", "RESET", "x")
        with pytest.raises(redis.ResponseError,
                           match="^wrong number of arguments for 'slowlog' command$"):
            slow.execute_command("SLOWLOG")
        with pytest.raises(redis.ResponseError,
                           match="^unknown subcommand 'foo'. Try SLOWLOG HELP.$"):
            slow.execute_command("SLOWLOG", "foo")

    def test_help(self, r):
        lines = r.execute_command("SLOWLOG", "HELP")
        assert lines[0].startswith("SLOWLOG <subcommand>")
        assert "RESET" in lines and "LEN" in lines

    def test_resp3_reply(self, r3):
        r3.config_set("slowlog-log-slower-than", 0)
        try:
            r3.execute_command("SLOWLOG", "RESET")
            r3.set("a", "b")
            got = r3.execute_command("SLOWLOG", "GET", 2)
            assert [x for x in got if [a.lower() for a in x[3]] == ["set", "a", "b"]]
        finally:
            r3.config_set("slowlog-log-slower-than", 10000)


class TestConfig:
    def test_defaults(self, r):
        assert r.config_get("slowlog-log-slower-than") == {"slowlog-log-slower-than": "10000"}
        assert r.config_get("slowlog-max-len") == {"slowlog-max-len": "128"}

    @pytest.mark.parametrize("name,value,why", [
        ("slowlog-log-slower-than", "-2",
         "argument must be between -1 and 9223372036854775807 inclusive"),
        ("slowlog-log-slower-than", "abc", "argument couldn't be parsed into an integer"),
        ("slowlog-max-len", "-1", "argument must be between 0 and 9223372036854775807 inclusive"),
    ])
    def test_bad_values(self, r, name, value, why):
        with pytest.raises(redis.ResponseError) as e:
            r.config_set(name, value)
        assert str(e.value) == ("CONFIG SET failed (possibly related to argument '%s') - %s"
                                % (name, why))


def test_blocked_time_is_not_run_time(slow, r):
    slow.config_set("slowlog-log-slower-than", 50_000)  # 50 ms
    slow.execute_command("SLOWLOG", "RESET")
    assert r.blpop("nothing-here", timeout=0.2) is None
    assert [e for e in entries(slow) if e[3][0].lower() == "blpop"] == []
