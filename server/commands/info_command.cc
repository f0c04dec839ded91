// INFO [section ...]: Redis's sections and field names, gathered from every shard in one hop.
#include <absl/strings/str_format.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <fstream>
#include <algorithm>
#include <map>
#include <random>

#include "core/str_util.h"
#include <mimalloc.h>

#include "core/memory.h"
#include "server/tracking/tracking_hub.h"
#include "server/persistence/snapshot_manager.h"
#include "server/cmd_context.h"
#include "server/scripting/function_store.h"
#include "server/scripting/script_runner.h"
#include "server/scripting/script_store.h"
#include "server/command_registry.h"
#include "server/commands/memory_figures.h"
#include "server/cycle_clock.h"
#include "server/config.h"
#include "server/storage/shard_set.h"
#include "server/server_stats.h"
#include "server/client_registry.h"
#include "server/conn_state.h"
#include "io/connection.h"
#include "io/engine.h"
#include "server/pubsub/pubsub.h"
#include "server/version.h"

namespace dashkv {

namespace {

// The allocator behind operator new: mimalloc, or the sanitizer's in sanitizer builds
// (core/memory.h).

using boost::asio::awaitable;

// Per-shard figures for INFO, copied out of the shard.
struct ShardFigures {
  ShardStats stats;
  std::vector<std::array<int64_t, 3>> dbs;  // keys, expires, avg_ttl per db
  uint64_t commands_processed = 0;
  uint64_t connections_received = 0;
  uint64_t rejected_calls = 0;
  uint64_t shard_hops = 0;
  uint64_t error_replies = 0;
  EngineMemory memory;
  std::vector<CommandStat> command_stats;
  absl::flat_hash_map<std::string, uint64_t> error_stats;
  std::vector<std::pair<uint32_t, LatencyHistogram>> latency;  // by spec id (latencystats only)
  // The engine's connections: traffic, and the largest query and output buffers now.
  uint64_t net_input = 0, net_output = 0, net_reads = 0, net_writes = 0;
  size_t max_query_buffer = 0, max_output_buffer = 0;
  rusage thread_cpu{};  // the engine thread's CPU time
};


// 40 random hex characters, as Redis's run and replication ids.
std::string RandomHexId() {
  std::random_device rd;
  std::string s;
  for (int i = 0; i < 40; ++i) s += "0123456789abcdef"[rd() % 16];
  return s;
}

// The run id and the replication id, fixed for the life of the process.
const std::string& RunId() {
  static const std::string id = RandomHexId();
  return id;
}
const std::string& ReplId() {
  static const std::string id = RandomHexId();
  return id;
}

void AppendServer(std::string& out, const ConnCmdContext& ctx, int64_t now_ms) {
  utsname u;
  uname(&u);
  int64_t uptime = (now_ms - ctx.stats().start_time_ms()) / 1000;
  StrAppend(&out, "# Server\r\nredis_version:", kRedisVersion,
                  "\r\nredis_git_sha1:00000000\r\nredis_git_dirty:0\r\nredis_build_id:0\r\n"
                  "redis_mode:standalone\r\nos:",
                  u.sysname, " ", u.release, " ", u.machine,
                  "\r\narch_bits:64\r\nmonotonic_clock:POSIX clock_gettime\r\n"
                  "multiplexing_api:epoll\r\natomicvar_api:c11-builtin\r\ngcc_version:",
                  __GNUC__, ".", __GNUC_MINOR__, ".", __GNUC_PATCHLEVEL__,
                  "\r\nprocess_id:", getpid(), "\r\nprocess_supervised:no\r\nrun_id:", RunId(),
                  "\r\ntcp_port:", ctx.clients().port().load(), "\r\nserver_time_usec:", NowUs(),
                  "\r\nuptime_in_seconds:", uptime, "\r\nuptime_in_days:", uptime / 86400,
                  "\r\nhz:", ctx.config().hz.load(),
                  "\r\nconfigured_hz:", ctx.config().hz.load(),
                  "\r\nlru_clock:", (now_ms / 1000) & ((1 << 24) - 1),
                  "\r\nexecutable:/proc/", getpid(),
                  "/exe\r\nconfig_file:", ctx.config().config_file(),
                  "\r\nio_threads_active:0\r\ndashkv_version:", kDashkvVersion,
                  "\r\ndashkv_threads:", ctx.pool().size(), "\r\n");
}

void AppendClients(std::string& out, const ConnCmdContext& ctx,
                   const std::vector<ShardFigures>& shards) {
  size_t max_query = 0, max_output = 0;
  for (const auto& s : shards) {
    max_query = std::max(max_query, s.max_query_buffer);
    max_output = std::max(max_output, s.max_output_buffer);
  }
  StrAppend(&out, "# Clients\r\nconnected_clients:", ctx.clients().connected(),
                  "\r\ncluster_connections:0\r\nmaxclients:10000",
                  "\r\nclient_recent_max_input_buffer:", max_query,
                  "\r\nclient_recent_max_output_buffer:", max_output,
                  "\r\nblocked_clients:", ctx.stats().blocked_clients().load(),
                  "\r\ntracking_clients:", ctx.tracking().tracking_clients(),
                  "\r\nclients_in_timeout_table:0\r\n");
}

void AppendMemory(std::string& out, const ConnCmdContext& ctx,
                  const std::vector<ShardFigures>& shards) {
  std::vector<EngineMemory> engines;
  for (const auto& s : shards) engines.push_back(s.memory);
  const MemoryFigures f = ComputeMemoryFigures(ctx.services(), engines);
  const int64_t maxmemory = ctx.config().maxmemory.load();
  const int64_t vm = f.lua;
  auto ratio = [](int64_t a, int64_t b) {
    return absl::StrFormat("%.2f", b > 0 ? static_cast<double>(a) / static_cast<double>(b) : 0.0);
  };
  StrAppend(
      &out, "# Memory\r\nused_memory:", f.used, "\r\nused_memory_human:", HumanBytes(f.used),
      "\r\nused_memory_rss:", f.rss, "\r\nused_memory_rss_human:", HumanBytes(f.rss),
      "\r\nused_memory_peak:", f.peak, "\r\nused_memory_peak_human:", HumanBytes(f.peak),
      "\r\nused_memory_peak_perc:", absl::StrFormat("%.2f%%", f.peak_percentage()),
      "\r\nused_memory_overhead:", f.overhead(), "\r\nused_memory_startup:", f.startup,
      "\r\nused_memory_dataset:", f.dataset(),
      "\r\nused_memory_dataset_perc:", absl::StrFormat("%.2f%%", f.dataset_percentage()),
      "\r\nused_memory_tables:", f.table_bytes, "\r\nallocator_allocated:", f.used,
      "\r\nallocator_active:", f.allocator_active,
      "\r\nallocator_resident:", f.allocator_resident,
      "\r\ntotal_system_memory:", f.total_system,
      "\r\ntotal_system_memory_human:", HumanBytes(f.total_system));
  StrAppend(
      &out, "\r\nused_memory_lua:", f.lua, "\r\nused_memory_vm_eval:", f.lua,
      "\r\nused_memory_lua_human:", HumanBytes(f.lua),
      "\r\nused_memory_scripts_eval:", f.scripts,
      "\r\nnumber_of_cached_scripts:", ctx.services().scripts.size(),
      "\r\nnumber_of_functions:", ctx.services().functions.num_functions(),
      "\r\nnumber_of_libraries:", ctx.services().functions.Libraries().size(),
      "\r\nused_memory_vm_functions:0\r\nused_memory_vm_total:", vm,
      "\r\nused_memory_vm_total_human:", HumanBytes(vm),
      "\r\nused_memory_functions:", f.functions,
      "\r\nused_memory_scripts:", f.scripts + f.functions,
      "\r\nused_memory_scripts_human:", HumanBytes(f.scripts + f.functions),
      "\r\nmaxmemory:", maxmemory, "\r\nmaxmemory_human:", HumanBytes(maxmemory),
      "\r\nmaxmemory_policy:", ctx.config().maxmemory_policy());
  StrAppend(
      &out, "\r\nallocator_frag_ratio:", ratio(f.allocator_active, f.used),
      "\r\nallocator_frag_bytes:", f.allocator_active - f.used,
      "\r\nallocator_rss_ratio:", ratio(f.allocator_resident, f.allocator_active),
      "\r\nallocator_rss_bytes:", f.allocator_resident - f.allocator_active,
      "\r\nrss_overhead_ratio:", ratio(f.rss, f.allocator_resident),
      "\r\nrss_overhead_bytes:", f.rss - f.allocator_resident,
      "\r\nmem_fragmentation_ratio:", ratio(f.rss, f.used),
      "\r\nmem_fragmentation_bytes:", f.rss - f.used,
      "\r\nmem_not_counted_for_evict:0\r\nmem_replication_backlog:0\r\n"
      "mem_total_replication_buffers:0\r\nmem_clients_slaves:0\r\nmem_clients_normal:",
      f.clients_normal,
      "\r\nmem_cluster_links:0\r\nmem_aof_buffer:0\r\nmem_allocator:", AllocatorName(),
      "\r\nactive_defrag_running:0\r\nlazyfree_pending_objects:0\r\nlazyfreed_objects:0\r\n");
}

// INFO stats in Redis 7.0's order. What dashkv does not have (replication, forks, active
// defragmentation, client eviction, I/O threads, a MIGRATE socket cache, reply buffers that
// resize) stays at 0, as it does in a Redis that never used it.
void AppendStats(std::string& out, const ConnCmdContext& ctx,
                 const std::vector<ShardFigures>& shards) {
  ShardStats sum;
  uint64_t commands = 0, connections = 0, hops = 0, errors = 0;
  uint64_t net_in = 0, net_out = 0, reads = 0, writes = 0;
  double stale_perc = 0;
  for (const auto& s : shards) {
    sum.expired_keys += s.stats.expired_keys;
    sum.evicted_keys += s.stats.evicted_keys;
    sum.keyspace_hits += s.stats.keyspace_hits;
    sum.keyspace_misses += s.stats.keyspace_misses;
    sum.expire_cycle_us += s.stats.expire_cycle_us;
    stale_perc += s.stats.expired_stale_perc;
    commands += s.commands_processed;
    connections += s.connections_received;
    hops += s.shard_hops;
    errors += s.error_replies;
    net_in += s.net_input;
    net_out += s.net_output;
    reads += s.net_reads;
    writes += s.net_writes;
  }
  if (!shards.empty()) stale_perc /= static_cast<double>(shards.size());
  const ServerStats& stats = ctx.stats();
  const PubSubRegistry& reg = ctx.pubsub().registry();
  Shard* shard = Shard::Current();
  MemoryBudget* budget = shard != nullptr ? shard->evictor().budget() : nullptr;
  const MemoryBudget::ExceededTime exceeded =
      budget != nullptr ? budget->TakeExceededTime() : MemoryBudget::ExceededTime{};
  StrAppend(&out, "# Stats\r\ntotal_connections_received:", connections,
                  "\r\ntotal_commands_processed:", commands,
                  "\r\ninstantaneous_ops_per_sec:", stats.instantaneous_ops(),
                  "\r\ntotal_net_input_bytes:", net_in, "\r\ntotal_net_output_bytes:", net_out,
                  "\r\ntotal_net_repl_input_bytes:0\r\ntotal_net_repl_output_bytes:0",
                  "\r\ninstantaneous_input_kbps:",
                  absl::StrFormat("%.2f", stats.instantaneous_input_kbps()),
                  "\r\ninstantaneous_output_kbps:",
                  absl::StrFormat("%.2f", stats.instantaneous_output_kbps()),
                  "\r\ninstantaneous_input_repl_kbps:0.00"
                  "\r\ninstantaneous_output_repl_kbps:0.00\r\nrejected_connections:0"
                  "\r\nsync_full:0\r\nsync_partial_ok:0\r\nsync_partial_err:0",
                  "\r\nexpired_keys:", sum.expired_keys,
                  "\r\nexpired_stale_perc:", absl::StrFormat("%.2f", stale_perc * 100),
                  "\r\nexpired_time_cap_reached_count:0",
                  "\r\nexpire_cycle_cpu_milliseconds:", sum.expire_cycle_us / 1000,
                  "\r\nevicted_keys:", sum.evicted_keys, "\r\nevicted_clients:0",
                  "\r\ntotal_eviction_exceeded_time:", exceeded.total_ms,
                  "\r\ncurrent_eviction_exceeded_time:", exceeded.current_ms);
  StrAppend(&out, "\r\nkeyspace_hits:", sum.keyspace_hits,
                  "\r\nkeyspace_misses:", sum.keyspace_misses,
                  "\r\npubsub_channels:", reg.Size(PubSubKind::kChannel),
                  "\r\npubsub_patterns:", reg.Size(PubSubKind::kPattern),
                  "\r\npubsubshard_channels:", reg.Size(PubSubKind::kShardChannel),
                  "\r\nlatest_fork_usec:0\r\ntotal_forks:0\r\nmigrate_cached_sockets:0"
                  "\r\nslave_expires_tracked_keys:0\r\nactive_defrag_hits:0"
                  "\r\nactive_defrag_misses:0\r\nactive_defrag_key_hits:0"
                  "\r\nactive_defrag_key_misses:0\r\ntotal_active_defrag_time:0"
                  "\r\ncurrent_active_defrag_time:0",
                  "\r\ntracking_total_keys:", ctx.tracking().total_keys(),
                  "\r\ntracking_total_items:", ctx.tracking().total_items(),
                  "\r\ntracking_total_prefixes:", ctx.tracking().total_prefixes(),
                  "\r\nunexpected_error_replies:0",
                  "\r\ntotal_error_replies:", errors,
                  "\r\ndump_payload_sanitizations:0",
                  "\r\ntotal_reads_processed:", reads, "\r\ntotal_writes_processed:", writes,
                  "\r\nio_threaded_reads_processed:0\r\nio_threaded_writes_processed:0"
                  "\r\nreply_buffer_shrinks:0\r\nreply_buffer_expands:0",
                  "\r\ndashkv_shard_hops:", hops,
                  "\r\ndashkv_script_runs_undeclared_keys:",
                  ctx.services().scripts.undeclared_runs.load(std::memory_order_relaxed),
                  "\r\n");
}

// The main thread's figures are those of engine 0's thread (dashkv has one per engine).
void AppendCpu(std::string& out, const std::vector<ShardFigures>& shards) {
  rusage self;
  getrusage(RUSAGE_SELF, &self);
  auto secs = [](const timeval& tv) {
    return absl::StrFormat("%.6f", tv.tv_sec + tv.tv_usec / 1e6);
  };
  const rusage& main = shards.front().thread_cpu;
  StrAppend(&out, "# CPU\r\nused_cpu_sys:", secs(self.ru_stime),
                  "\r\nused_cpu_user:", secs(self.ru_utime),
                  "\r\nused_cpu_sys_children:0.000000\r\nused_cpu_user_children:0.000000",
                  "\r\nused_cpu_sys_main_thread:", secs(main.ru_stime),
                  "\r\nused_cpu_user_main_thread:", secs(main.ru_utime), "\r\n");
}

void AppendCommandStats(std::string& out, const ConnCmdContext& ctx,
                        const std::vector<ShardFigures>& shards) {
  StrAppend(&out, "# Commandstats\r\n");
  const double ticks_per_us = CycleClock::TicksPerUsec();
  // Subcommands count on their own ("cmdstat_client|id"), as in Redis.
  ctx.registry().ForEachSpec([&](const CommandSpec& spec) {
    CommandStat sum;
    for (const auto& s : shards) {
      const CommandStat& c = s.command_stats[spec.id];
      sum.calls += c.calls;
      sum.ticks += c.ticks;
      sum.failed += c.failed;
      sum.rejected += c.rejected;
    }
    if (sum.calls == 0 && sum.rejected == 0) return;
    uint64_t usec = static_cast<uint64_t>(static_cast<double>(sum.ticks) / ticks_per_us);
    StrAppend(&out, "cmdstat_", spec.name, ":calls=", sum.calls, ",usec=", usec,
              ",usec_per_call=",
              absl::StrFormat("%.2f", sum.calls ? static_cast<double>(usec) / sum.calls : 0.0),
              ",rejected_calls=", sum.rejected, ",failed_calls=", sum.failed, "\r\n");
  });
}

// One line per command with a latency histogram: the configured percentiles in µs.
void AppendLatencyStats(std::string& out, const ConnCmdContext& ctx,
                        const std::vector<ShardFigures>& shards) {
  StrAppend(&out, "# Latencystats\r\n");
  std::map<uint32_t, LatencyHistogram> merged;
  for (const auto& s : shards) {
    for (const auto& [id, h] : s.latency) merged[id].Merge(h);
  }
  const std::vector<double> percentiles = ctx.config().latency_percentiles();
  ctx.registry().ForEachSpec([&](const CommandSpec& spec) {
    auto it = merged.find(spec.id);
    if (it == merged.end() || it->second.total() == 0) return;
    StrAppend(&out, "latency_percentiles_usec_", spec.name, ":");
    for (size_t i = 0; i < percentiles.size(); ++i) {
      const double ticks = static_cast<double>(it->second.ValueAtPercentile(percentiles[i]));
      StrAppend(&out, i ? "," : "", "p", PercentileText(percentiles[i]), "=",
                absl::StrFormat("%.3f", ticks * ctx.stats().ns_per_tick() / 1000.0));
    }
    StrAppend(&out, "\r\n");
  });
}

void AppendErrorStats(std::string& out, const std::vector<ShardFigures>& shards) {
  StrAppend(&out, "# Errorstats\r\n");
  std::map<std::string, uint64_t> sum;  // sorted, like Redis's radix tree walk
  for (const auto& s : shards) {
    for (const auto& [code, n] : s.error_stats) sum[code] += n;
  }
  for (const auto& [code, n] : sum) StrAppend(&out, "errorstat_", code, ":count=", n, "\r\n");
}

void AppendKeyspace(std::string& out, const std::vector<ShardFigures>& shards, unsigned num_dbs) {
  StrAppend(&out, "# Keyspace\r\n");
  for (unsigned db = 0; db < num_dbs; ++db) {
    int64_t keys = 0, expires = 0, ttl_sum = 0, ttl_n = 0;
    for (const auto& s : shards) {
      keys += s.dbs[db][0];
      expires += s.dbs[db][1];
      if (s.dbs[db][2] > 0) {
        ttl_sum += s.dbs[db][2];
        ++ttl_n;
      }
    }
    if (keys == 0) continue;
    StrAppend(&out, "db", db, ":keys=", keys, ",expires=", expires,
                    ",avg_ttl=", ttl_n ? ttl_sum / ttl_n : 0, "\r\n");
  }
}

// INFO [section [section ...]]
awaitable<void> CmdInfo(CmdArgs args, ConnCmdContext& ctx) {
  ShardSet& ss = ctx.shard_set();
  std::vector<std::string> sections;
  for (size_t i = 1; i < args.size(); ++i) sections.push_back(AsciiStrToLower(args[i]));
  bool everything = sections.empty();
  auto want = [&](std::string_view name, bool in_default = true) {
    if (everything) return in_default;
    for (const auto& s : sections) {
      if (s == name || s == "everything" || s == "all" || (s == "default" && in_default)) {
        return true;
      }
    }
    return false;
  };
  std::vector<ShardFigures> shards(ss.size());
  const bool latencystats = want("latencystats", false);
  int64_t now = ctx.now_ms;
  co_await ss.AwaitAll([&](Shard& shard) {
    ShardFigures& f = shards[shard.index()];
    f.stats = shard.stats();
    f.dbs.resize(shard.num_dbs());
    for (unsigned db = 0; db < shard.num_dbs(); ++db) {
      if (DbSlice* slice = shard.db_if_exists(db)) {
        f.dbs[db] = {static_cast<int64_t>(slice->size()), static_cast<int64_t>(slice->expires()),
                     slice->AverageTtl(now)};
      } else {
        f.dbs[db] = {0, 0, 0};
      }
    }
    if (want("memory")) f.memory = GatherEngineMemory(shard, ctx.clients());
    EngineStats& es = ctx.stats().engine(shard.index());
    f.commands_processed = es.commands_processed.load(std::memory_order_relaxed);
    f.connections_received = es.connections_received.load(std::memory_order_relaxed);
    f.rejected_calls = es.rejected_calls.load(std::memory_order_relaxed);
    f.shard_hops = es.shard_hops.load(std::memory_order_relaxed);
    f.error_replies = es.error_replies.load(std::memory_order_relaxed);
    f.command_stats = es.command_stats;
    f.error_stats = es.error_stats;
    const io::NetCounters& net = io::Engine::Current()->net();
    f.net_input = net.input_bytes.load(std::memory_order_relaxed);
    f.net_output = net.output_bytes.load(std::memory_order_relaxed);
    f.net_reads = net.reads.load(std::memory_order_relaxed);
    f.net_writes = net.writes.load(std::memory_order_relaxed);
    if (want("clients")) {
      for (ConnState* st : ctx.clients().on(shard.index())) {
        f.max_query_buffer = std::max(f.max_query_buffer, st->conn->query_buffer_size());
        f.max_output_buffer = std::max(f.max_output_buffer, st->conn->output_buffer_size());
      }
    }
    if (want("cpu")) getrusage(RUSAGE_THREAD, &f.thread_cpu);
    if (latencystats) {
      for (uint32_t id = 0; id < es.latency.size(); ++id) {
        if (es.latency[id] != nullptr) f.latency.emplace_back(id, *es.latency[id]);
      }
    }
  });
  std::string out;
  auto section = [&](std::string_view name, auto&& fn, bool in_default = true) {
    if (!want(name, in_default)) return;
    if (!out.empty()) out += "\r\n";
    fn();
  };
  section("server", [&] { AppendServer(out, ctx, now); });
  section("clients", [&] { AppendClients(out, ctx, shards); });
  section("memory", [&] { AppendMemory(out, ctx, shards); });
  section("persistence", [&] {
    StrAppend(&out, "# Persistence\r\n");
    ctx.snapshots().AppendInfo(&out);
    StrAppend(&out, "aof_enabled:0\r\naof_rewrite_in_progress:0\r\naof_rewrite_scheduled:0\r\n"
                    "aof_last_rewrite_time_sec:-1\r\naof_current_rewrite_time_sec:-1\r\n"
                    "aof_last_bgrewrite_status:ok\r\naof_rewrites:0\r\n"
                    "aof_rewrites_consecutive_failures:0\r\naof_last_write_status:ok\r\n"
                    "aof_last_cow_size:0\r\nmodule_fork_in_progress:0\r\n"
                    "module_fork_last_cow_size:0\r\n");
    ctx.snapshots().AppendLoadingInfo(&out);
  });
  section("stats", [&] { AppendStats(out, ctx, shards); });
  section("replication", [&] {
    // A master without replicas or a backlog, as Redis reports one.
    StrAppend(&out, "# Replication\r\nrole:master\r\nconnected_slaves:0\r\n"
                    "master_failover_state:no-failover\r\nmaster_replid:", ReplId(),
                    "\r\nmaster_replid2:0000000000000000000000000000000000000000\r\n"
                    "master_repl_offset:0\r\nsecond_repl_offset:-1\r\nrepl_backlog_active:0"
                    "\r\nrepl_backlog_size:1048576\r\nrepl_backlog_first_byte_offset:0\r\nrepl_backlog_histlen:0\r\n");
  });
  section("cpu", [&] { AppendCpu(out, shards); });
  section("commandstats", [&] { AppendCommandStats(out, ctx, shards); }, false);
  section("errorstats", [&] { AppendErrorStats(out, shards); });
  section("latencystats", [&] { AppendLatencyStats(out, ctx, shards); }, false);
  section("modules", [&] { StrAppend(&out, "# Modules\r\n"); });
  section("cluster", [&] { StrAppend(&out, "# Cluster\r\ncluster_enabled:0\r\n"); });
  section("keyspace", [&] { AppendKeyspace(out, shards, ss.num_dbs()); });
  ctx.rb.SendVerbatim(out);
}

}  // namespace

void RegisterInfoCommand(CommandRegistry* r) {
  CommandSpec s;
  s.name = "info";
  s.arity = -1;
  s.flags = kCmdLoading | kCmdStale;
  s.kind = HandlerKind::kCoord;
  s.coord_handler = CmdInfo;
  s.categories = {"slow", "dangerous"};
  s.summary = "Returns information and statistics about the server.";
  s.since = "1.0.0";
  s.tips = {"nondeterministic_output", "request_policy:all_shards", "response_policy:special"};
  s.group = "server";
  r->Register(std::move(s));
}

}  // namespace dashkv
