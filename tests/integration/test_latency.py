"""LATENCY LATEST/HISTORY/RESET/GRAPH/DOCTOR/HISTOGRAM/HELP, latency-monitor-threshold,
latency-tracking and INFO latencystats (Redis 7.0).
Expected values are Redis 7.0.15's (the suite also runs against redis-server)."""

import re
import time

import pytest
import redis


@pytest.fixture
def mon(r):
    """The latency monitor on at 1 ms, empty; off and empty after."""
    r.execute_command("LATENCY", "RESET")
    r.config_set("latency-monitor-threshold", 1)
    yield r
    r.config_set("latency-monitor-threshold", 0)
    r.execute_command("LATENCY", "RESET")


def spike(r, seconds=0.02):
    r.execute_command("DEBUG", "SLEEP", seconds)


class TestMonitor:
    def test_nothing_recorded_when_off(self, r):
        r.execute_command("LATENCY", "RESET")
        r.config_set("latency-monitor-threshold", 0)
        spike(r)
        assert r.execute_command("LATENCY", "LATEST") == []
        assert r.execute_command("LATENCY", "HISTORY", "command") == []

    def test_spike_is_recorded(self, mon):
        before = int(time.time())
        spike(mon, 0.03)
        latest = mon.execute_command("LATENCY", "LATEST")
        assert len(latest) == 1
        event, when, last, worst = latest[0]
        assert event == "command"
        assert before <= when <= int(time.time()) + 1
        assert 30 <= last <= worst
        history = mon.execute_command("LATENCY", "HISTORY", "command")
        assert len(history) == 1 and history[0][0] == when and history[0][1] == last

    def test_spikes_in_one_second_merge_into_the_largest(self, mon):
        spike(mon, 0.005)
        spike(mon, 0.03)
        history = mon.execute_command("LATENCY", "HISTORY", "command")
        # Both in the same second (usually) or in two; the largest is always kept.
        assert 1 <= len(history) <= 2
        assert max(h[1] for h in history) >= 30

    def test_fast_commands_have_their_own_event(self, mon):
        spike(mon, 0.01)
        events = {e[0] for e in mon.execute_command("LATENCY", "LATEST")}
        assert "command" in events and "fast-command" not in events

    def test_reset(self, mon):
        spike(mon)
        assert mon.execute_command("LATENCY", "RESET", "nosuch") == 0
        assert mon.execute_command("LATENCY", "RESET", "command", "nosuch") == 1
        assert mon.execute_command("LATENCY", "LATEST") == []
        spike(mon)
        assert mon.execute_command("LATENCY", "RESET") == 1
        assert mon.execute_command("LATENCY", "RESET") == 0

    def test_graph(self, mon):
        with pytest.raises(redis.ResponseError,
                           match="^No samples available for event 'command'$"):
            mon.execute_command("LATENCY", "GRAPH", "command")
        spike(mon, 0.02)
        graph = mon.execute_command("LATENCY", "GRAPH", "command")
        assert re.match(r"^command - high \d+ ms, low \d+ ms \(all time high \d+ ms\)\n-+\n",
                        graph)

    def test_doctor_is_text(self, mon):
        assert isinstance(mon.execute_command("LATENCY", "DOCTOR"), str)
        spike(mon)
        assert "command" in mon.execute_command("LATENCY", "DOCTOR")

    def test_unknown_event_history_is_empty(self, mon):
        assert mon.execute_command("LATENCY", "HISTORY", "no-such-event") == []

    def test_threshold_config(self, r):
        assert r.config_get("latency-monitor-threshold") == {"latency-monitor-threshold": "0"}
        with pytest.raises(redis.ResponseError, match="argument must be between 0 and "):
            r.config_set("latency-monitor-threshold", -1)

    def test_arity_and_unknown(self, r):
        with pytest.raises(redis.ResponseError,
                           match=r"^wrong number of arguments for 'latency\|history' command$"):
            r.execute_command("LATENCY", "HISTORY")
        with pytest.raises(redis.ResponseError,
                           match=r"^wrong number of arguments for 'latency\|latest' command$"):
            r.execute_command("LATENCY", "LATEST", "x")
        with pytest.raises(redis.ResponseError,
                           match="^unknown subcommand 'bogus'. Try LATENCY HELP.$"):
            r.execute_command("LATENCY", "bogus")

    def test_help(self, r):
        lines = r.execute_command("LATENCY", "HELP")
        assert lines[0].startswith("LATENCY <subcommand>")
        assert "LATEST" in lines


class TestHistogram:
    def test_histogram_of_named_commands(self, r):
        r.config_set("latency-tracking", "yes")
        r.config_resetstat()
        for i in range(10):
            r.set("h", i)
        r.get("h")
        got = r.execute_command("LATENCY", "HISTOGRAM", "set", "get", "nosuchcommand")
        got = dict(zip(got[::2], got[1::2]))
        assert set(got) == {"set", "get"}
        s = dict(zip(got["set"][::2], got["set"][1::2]))
        assert s["calls"] == 10
        buckets = s["histogram_usec"]
        bounds, counts = buckets[::2], buckets[1::2]
        assert bounds == sorted(bounds) and counts == sorted(counts)
        assert counts[-1] == 10
        assert all(b & (b - 1) == 0 for b in bounds)  # powers of two

    def test_container_names_its_subcommands(self, r):
        r.config_resetstat()
        r.config_get("maxmemory")
        got = r.execute_command("LATENCY", "HISTOGRAM", "config")
        names = got[::2]
        assert "config|get" in names

    def test_tracking_off_records_nothing(self, r):
        r.config_set("latency-tracking", "no")
        try:
            r.config_resetstat()
            r.set("h", 1)
            assert r.execute_command("LATENCY", "HISTOGRAM", "set") == []
        finally:
            r.config_set("latency-tracking", "yes")

    def test_resp3_maps(self, r3):
        r3.config_resetstat()
        r3.set("h", 1)
        got = r3.execute_command("LATENCY", "HISTOGRAM", "set")
        assert got["set"]["calls"] == 1
        assert isinstance(got["set"]["histogram_usec"], dict)


def info_text(raw, *sections):
    return raw.call("INFO", *sections).decode()


class TestInfoLatencystats:
    def test_percentiles(self, r, raw):
        r.config_resetstat()
        for i in range(5):
            r.set("x", i)
        info = info_text(raw, "latencystats")
        line = [l for l in info.splitlines() if l.startswith("latency_percentiles_usec_set:")]
        assert line, info
        assert re.match(r"^latency_percentiles_usec_set:p50=\d+\.\d{3},p99=\d+\.\d{3},"
                        r"p99\.9=\d+\.\d{3}$", line[0])

    def test_not_in_default_info(self, raw):
        assert "# Latencystats" not in info_text(raw)
        assert "# Latencystats" in info_text(raw, "everything")

    def test_percentile_setting(self, r, raw):
        try:
            r.config_set("latency-tracking-info-percentiles", "50.5 1e1 100")
            assert r.config_get("latency-tracking-info-percentiles") == {
                "latency-tracking-info-percentiles": "50.5 10 100"}
            r.config_resetstat()
            r.set("x", 1)
            info = info_text(raw, "latencystats")
            assert re.search(r"latency_percentiles_usec_set:p50\.5=[\d.]+,p10=[\d.]+,p100=", info)
            r.config_set("latency-tracking-info-percentiles", "")
            info = info_text(raw, "latencystats")
            assert "latency_percentiles_usec_set:\r\n" in info or \
                re.search(r"latency_percentiles_usec_set:$", info, re.M)
        finally:
            r.config_set("latency-tracking-info-percentiles", "50 99 99.9")

    @pytest.mark.parametrize("value,why", [
        ("abc", "Invalid latency-tracking-info-percentiles parameters"),
        ("101", "latency-tracking-info-percentiles parameters should sit between [0.0,100.0]"),
        ("-1", "latency-tracking-info-percentiles parameters should sit between [0.0,100.0]"),
    ])
    def test_bad_percentiles(self, r, value, why):
        with pytest.raises(redis.ResponseError) as e:
            r.config_set("latency-tracking-info-percentiles", value)
        assert str(e.value).endswith(why)


def wait_for_save(r):
    deadline = time.monotonic() + 60
    while r.info("persistence")["rdb_bgsave_in_progress"]:
        assert time.monotonic() < deadline, "BGSAVE did not finish"
        time.sleep(0.01)


def big_hash(r, fields=200000):
    pipe = r.pipeline(transaction=False)
    for start in range(0, fields, 10000):
        pipe.hset("big", mapping={"field:%d" % i: "value:%d" % i
                                  for i in range(start, start + 10000)})
    pipe.execute()


@pytest.mark.dashkv_only
class TestSnapshotSlice:
    """dashkv's own event: a slice of the forkless snapshot's walk (Redis forks instead)."""

    def test_a_long_slice_is_an_event(self, mon):
        big_hash(mon)  # one value of 200,000 fields: serialized in one slice, well over 1 ms
        mon.execute_command("LATENCY", "RESET")
        assert mon.bgsave()
        wait_for_save(mon)
        # The shard's cron reports the slice within 100 ms.
        deadline = time.monotonic() + 10
        while True:
            latest = {e[0]: e for e in mon.execute_command("LATENCY", "LATEST")}
            if "snapshot-slice" in latest or time.monotonic() > deadline:
                break
            time.sleep(0.01)
        assert "snapshot-slice" in latest
        event = latest["snapshot-slice"]
        assert event[2] >= 1 and event[3] >= event[2]
        history = mon.execute_command("LATENCY", "HISTORY", "snapshot-slice")
        assert history and all(ms >= 1 for _, ms in history)
