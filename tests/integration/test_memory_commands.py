"""MEMORY STATS, DOCTOR, MALLOC-STATS, PURGE, USAGE (SAMPLES) and INFO memory's fields
(Redis 7.0). Expected values are Redis 7.0.15's (the suite also runs against redis-server);
the figures themselves differ between the two and are checked for consistency only."""

import pytest

from helpers import assert_err, wait_until


def stats(raw):
    reply = raw.call("MEMORY", "STATS")
    return dict(zip([k.decode() if isinstance(k, bytes) else k for k in reply[::2]],
                    reply[1::2]))


def info_memory(raw):
    text = raw.call("INFO", "memory").decode()
    out = {}
    for line in text.splitlines():
        if ":" in line:
            k, v = line.split(":", 1)
            out[k] = v
    return out


REDIS_STATS_FIELDS = [
    "peak.allocated", "total.allocated", "startup.allocated", "replication.backlog",
    "clients.slaves", "clients.normal", "cluster.links", "aof.buffer", "lua.caches",
    "functions.caches", "overhead.total", "keys.count", "keys.bytes-per-key", "dataset.bytes",
    "dataset.percentage", "peak.percentage", "allocator.allocated", "allocator.active",
    "allocator.resident", "allocator-fragmentation.ratio", "allocator-fragmentation.bytes",
    "allocator-rss.ratio", "allocator-rss.bytes", "rss-overhead.ratio", "rss-overhead.bytes",
    "fragmentation", "fragmentation.bytes",
]

REDIS_INFO_MEMORY_FIELDS = [
    "used_memory", "used_memory_human", "used_memory_rss", "used_memory_rss_human",
    "used_memory_peak", "used_memory_peak_human", "used_memory_peak_perc",
    "used_memory_overhead", "used_memory_startup", "used_memory_dataset",
    "used_memory_dataset_perc", "allocator_allocated", "allocator_active",
    "allocator_resident", "total_system_memory", "total_system_memory_human",
    "used_memory_lua", "used_memory_vm_eval", "used_memory_lua_human",
    "used_memory_scripts_eval", "number_of_cached_scripts", "number_of_functions",
    "number_of_libraries", "used_memory_vm_functions", "used_memory_vm_total",
    "used_memory_vm_total_human", "used_memory_functions", "used_memory_scripts",
    "used_memory_scripts_human", "maxmemory", "maxmemory_human", "maxmemory_policy",
    "allocator_frag_ratio", "allocator_frag_bytes", "allocator_rss_ratio",
    "allocator_rss_bytes", "rss_overhead_ratio", "rss_overhead_bytes",
    "mem_fragmentation_ratio", "mem_fragmentation_bytes", "mem_not_counted_for_evict",
    "mem_replication_backlog", "mem_total_replication_buffers", "mem_clients_slaves",
    "mem_clients_normal", "mem_cluster_links", "mem_aof_buffer", "mem_allocator",
    "active_defrag_running", "lazyfree_pending_objects", "lazyfreed_objects",
]



def check_tables_hold_the_growth(raw):
    """Short keys and values live inline in the table's slots: after a fill of them, the
    tables' growth (INFO used_memory_tables) is nearly all of used_memory's, and at least the
    two 16-byte objects of every entry. Growth measured from after a FLUSHALL, so what earlier
    tests left on a shared server (clients, scripts, buffers) does not count. The bound on the
    entries is on the whole figure: the empty tables may hold ready chunks of their reserve
    (counted in both figures), which the fill uses before the background refills them."""
    raw.call("FLUSHALL")
    base = info_memory(raw)
    keys = 300000
    raw.call("DEBUG", "POPULATE", str(keys), "tk", "8")

    def tables_and_growth():
        info = info_memory(raw)
        grown = int(info["used_memory"]) - int(base["used_memory"])
        tables = int(info["used_memory_tables"]) - int(base["used_memory_tables"])
        if abs(grown - tables) < grown // 10:
            return int(info["used_memory_tables"])
        return None

    tables = wait_until(tables_and_growth, what="the tables to hold the growth")
    assert keys * 32 <= tables
    raw.call("FLUSHALL")

class TestStats:
    def test_fields_in_redis_order(self, raw):
        raw.call("SET", "a", "1")
        s = stats(raw)
        keys = [k for k in s if not k.startswith("db.")]
        assert keys == REDIS_STATS_FIELDS

    def test_db_entries(self, raw):
        raw.call("SET", "a", "1")
        raw.call("SELECT", "3")
        raw.call("SET", "b", "1")
        raw.call("SELECT", "0")
        s = stats(raw)
        for db in ("db.0", "db.3"):
            sub = dict(zip([k.decode() for k in s[db][::2]], s[db][1::2]))
            assert list(sub) == ["overhead.hashtable.main", "overhead.hashtable.expires",
                                 "overhead.hashtable.slot-to-keys"]
            assert sub["overhead.hashtable.main"] >= 0
        raw.call("SELECT", "3")
        raw.call("FLUSHDB")
        raw.call("SELECT", "0")

    @pytest.mark.dashkv_only
    def test_tables_count_what_the_dashtables_hold(self, raw):
        check_tables_hold_the_growth(raw)

    def test_figures_are_consistent(self, raw):
        raw.call("DEBUG", "POPULATE", "20000", "mem", "100")
        s = stats(raw)
        assert s["keys.count"] == 20000
        assert s["peak.allocated"] >= s["total.allocated"] > s["startup.allocated"] > 0
        assert s["dataset.bytes"] > 20000 * 100  # the values alone
        assert s["overhead.total"] + s["dataset.bytes"] == s["total.allocated"]
        assert 0 < float(s["dataset.percentage"]) <= 100
        assert 0 < float(s["peak.percentage"]) <= 100
        assert s["keys.bytes-per-key"] > 100

    def test_resp3_is_a_map(self, r3):
        s = r3.execute_command("MEMORY", "STATS")
        assert isinstance(s, dict) and "keys.count" in s


class TestOthers:
    def test_doctor_returns_text(self, raw):
        text = raw.call("MEMORY", "DOCTOR")
        assert isinstance(text, bytes) and len(text) > 10

    def test_malloc_stats_returns_text(self, raw):
        assert isinstance(raw.call("MEMORY", "MALLOC-STATS"), bytes)

    def test_purge(self, raw):
        raw.call("DEBUG", "POPULATE", "20000", "p", "200")
        raw.call("FLUSHALL")
        assert raw.call("MEMORY", "PURGE") == "OK"

    def test_usage_samples(self, raw):
        raw.call("RPUSH", "l", *range(1000))
        full = raw.call("MEMORY", "USAGE", "l", "SAMPLES", "0")
        assert isinstance(full, int) and full > 1000
        assert isinstance(raw.call("MEMORY", "USAGE", "l", "SAMPLES", "99999999999"), int)
        assert isinstance(raw.call("MEMORY", "USAGE", "l", "SAMPLES", "1", "SAMPLES", "2"), int)

    @pytest.mark.parametrize("args,error", [
        (("SAMPLES", "-1"), "ERR syntax error"),
        (("SAMPLES",), "ERR syntax error"),
        (("SAMPLES", "x"), "ERR value is not an integer or out of range"),
        (("SAMPLES", "3", "foo"), "ERR syntax error"),
        (("foo", "1"), "ERR syntax error"),
    ])
    def test_usage_bad_options(self, raw, args, error):
        raw.call("SET", "k", "v")
        assert_err(raw.call("MEMORY", "USAGE", "k", *args), error)

    @pytest.mark.parametrize("sub", ["STATS", "DOCTOR", "MALLOC-STATS", "PURGE"])
    def test_arity(self, raw, sub):
        assert_err(raw.call("MEMORY", sub, "x"),
                   "ERR wrong number of arguments for 'memory|%s' command" % sub.lower())

    def test_help(self, raw):
        lines = raw.call("MEMORY", "HELP")
        assert any(l.startswith("STATS") for l in map(str, lines))
        assert any(l.startswith("USAGE") for l in map(str, lines))


class TestInfoMemory:
    def test_fields_in_redis_order(self, raw):
        info = info_memory(raw)
        # dashkv adds used_memory_tables (what its Dashtables hold) after the dataset fields.
        fields = [k for k in info if k != "used_memory_tables"]
        assert fields == REDIS_INFO_MEMORY_FIELDS

    @pytest.mark.dashkv_only
    def test_tables_count_what_the_dashtables_hold(self, raw):
        check_tables_hold_the_growth(raw)

    def test_figures_are_consistent(self, raw):
        raw.call("DEBUG", "POPULATE", "10000", "im", "50")
        info = info_memory(raw)
        used = int(info["used_memory"])
        assert int(info["used_memory_overhead"]) + int(info["used_memory_dataset"]) == used
        assert int(info["used_memory_startup"]) < used <= int(info["used_memory_peak"])
        assert int(info["used_memory_rss"]) > 0
        assert info["used_memory_peak_perc"].endswith("%")
        assert float(info["mem_fragmentation_ratio"]) > 0
