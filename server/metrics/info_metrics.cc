#include "server/metrics/info_metrics.h"

#include <absl/container/flat_hash_map.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/base/parse_int.h"
#include "core/numbers.h"
#include "core/str_util.h"

namespace dashkv {
namespace {

// The pieces of `s` between `sep` bytes (as Go's strings.Split).
std::vector<std::string_view> Split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  for (;;) {
    const size_t at = s.find(sep);
    out.push_back(s.substr(0, at));
    if (at == std::string_view::npos) return out;
    s.remove_prefix(at + 1);
  }
}

// Removes `prefix` from the front of `*s`; returns whether it was there.
bool ConsumePrefix(std::string_view* s, std::string_view prefix) {
  if (!s->starts_with(prefix)) return false;
  s->remove_prefix(prefix.size());
  return true;
}

// Strips ASCII whitespace at both ends (Go's strings.TrimSpace for INFO's lines).
std::string_view Trim(std::string_view s) {
  auto space = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; };
  while (!s.empty() && space(s.front())) s.remove_prefix(1);
  while (!s.empty() && space(s.back())) s.remove_suffix(1);
  return s;
}

// A float as Go's strconv.ParseFloat reads INFO's numbers.
bool ParseFloat(std::string_view s, double* out) {
  std::optional<double> v = ParseDouble(s);
  if (!v) return false;
  *out = *v;
  return true;
}

// An INFO field redis_exporter exports under another name (its metricMapGauges and
// metricMapCounters, without the Tile38 and KeyDB fields dashkv never prints).
struct MappedField {
  std::string_view field;
  std::string_view metric;  // without the "redis_" prefix
  MetricType type;
};

using enum MetricType;
constexpr MappedField kMappedFields[] = {
    {"uptime_in_seconds", "uptime_in_seconds", kGauge},
    {"process_id", "process_id", kGauge},
    {"io_threads_active", "io_threads_active", kGauge},
    {"connected_clients", "connected_clients", kGauge},
    {"blocked_clients", "blocked_clients", kGauge},
    {"tracking_clients", "tracking_clients", kGauge},
    {"clients_in_timeout_table", "clients_in_timeout_table", kGauge},
    {"client_longest_output_list", "client_longest_output_list", kGauge},
    {"client_biggest_input_buf", "client_biggest_input_buf", kGauge},
    {"client_recent_max_output_buffer", "client_recent_max_output_buffer_bytes", kGauge},
    {"client_recent_max_input_buffer", "client_recent_max_input_buffer_bytes", kGauge},
    {"allocator_active", "allocator_active_bytes", kGauge},
    {"allocator_allocated", "allocator_allocated_bytes", kGauge},
    {"allocator_resident", "allocator_resident_bytes", kGauge},
    {"allocator_frag_ratio", "allocator_frag_ratio", kGauge},
    {"allocator_frag_bytes", "allocator_frag_bytes", kGauge},
    {"allocator_rss_ratio", "allocator_rss_ratio", kGauge},
    {"allocator_rss_bytes", "allocator_rss_bytes", kGauge},
    {"used_memory", "memory_used_bytes", kGauge},
    {"used_memory_rss", "memory_used_rss_bytes", kGauge},
    {"used_memory_peak", "memory_used_peak_bytes", kGauge},
    {"used_memory_lua", "memory_used_lua_bytes", kGauge},
    {"used_memory_overhead", "memory_used_overhead_bytes", kGauge},
    {"used_memory_startup", "memory_used_startup_bytes", kGauge},
    {"used_memory_dataset", "memory_used_dataset_bytes", kGauge},
    {"used_memory_scripts", "memory_used_scripts_bytes", kGauge},
    {"number_of_cached_scripts", "number_of_cached_scripts", kGauge},
    {"maxmemory", "memory_max_bytes", kGauge},
    {"maxmemory_reservation", "memory_max_reservation_bytes", kGauge},
    {"maxmemory_desired_reservation", "memory_max_reservation_desired_bytes", kGauge},
    {"maxfragmentationmemory_reservation", "memory_max_fragmentation_reservation_bytes", kGauge},
    {"maxfragmentationmemory_desired_reservation",
     "memory_max_fragmentation_reservation_desired_bytes", kGauge},
    {"mem_fragmentation_ratio", "mem_fragmentation_ratio", kGauge},
    {"mem_fragmentation_bytes", "mem_fragmentation_bytes", kGauge},
    {"mem_clients_slaves", "mem_clients_slaves", kGauge},
    {"mem_clients_normal", "mem_clients_normal", kGauge},
    {"expired_stale_perc", "expired_stale_percentage", kGauge},
    {"mem_not_counted_for_evict", "mem_not_counted_for_eviction_bytes", kGauge},
    {"mem_total_replication_buffers", "mem_total_replication_buffers_bytes", kGauge},
    {"lazyfree_pending_objects", "lazyfree_pending_objects", kGauge},
    {"active_defrag_running", "active_defrag_running", kGauge},
    {"migrate_cached_sockets", "migrate_cached_sockets_total", kGauge},
    {"active_defrag_hits", "defrag_hits", kGauge},
    {"active_defrag_misses", "defrag_misses", kGauge},
    {"active_defrag_key_hits", "defrag_key_hits", kGauge},
    {"active_defrag_key_misses", "defrag_key_misses", kGauge},
    {"expired_time_cap_reached_count", "expired_time_cap_reached_total", kGauge},
    {"loading", "loading_dump_file", kGauge},
    {"rdb_changes_since_last_save", "rdb_changes_since_last_save", kGauge},
    {"rdb_bgsave_in_progress", "rdb_bgsave_in_progress", kGauge},
    {"rdb_last_save_time", "rdb_last_save_timestamp_seconds", kGauge},
    {"rdb_last_bgsave_status", "rdb_last_bgsave_status", kGauge},
    {"rdb_last_bgsave_time_sec", "rdb_last_bgsave_duration_sec", kGauge},
    {"rdb_current_bgsave_time_sec", "rdb_current_bgsave_duration_sec", kGauge},
    {"rdb_saves", "rdb_saves_total", kGauge},
    {"rdb_last_cow_size", "rdb_last_cow_size_bytes", kGauge},
    {"rdb_last_load_keys_expired", "rdb_last_load_expired_keys", kGauge},
    {"rdb_last_load_keys_loaded", "rdb_last_load_loaded_keys", kGauge},
    {"aof_enabled", "aof_enabled", kGauge},
    {"aof_rewrite_in_progress", "aof_rewrite_in_progress", kGauge},
    {"aof_rewrite_scheduled", "aof_rewrite_scheduled", kGauge},
    {"aof_last_rewrite_time_sec", "aof_last_rewrite_duration_sec", kGauge},
    {"aof_current_rewrite_time_sec", "aof_current_rewrite_duration_sec", kGauge},
    {"aof_last_cow_size", "aof_last_cow_size_bytes", kGauge},
    {"aof_current_size", "aof_current_size_bytes", kGauge},
    {"aof_base_size", "aof_base_size_bytes", kGauge},
    {"aof_pending_rewrite", "aof_pending_rewrite", kGauge},
    {"aof_buffer_length", "aof_buffer_length", kGauge},
    {"aof_rewrite_buffer_length", "aof_rewrite_buffer_length", kGauge},
    {"aof_pending_bio_fsync", "aof_pending_bio_fsync", kGauge},
    {"aof_delayed_fsync", "aof_delayed_fsync", kGauge},
    {"aof_last_bgrewrite_status", "aof_last_bgrewrite_status", kGauge},
    {"aof_last_write_status", "aof_last_write_status", kGauge},
    {"module_fork_in_progress", "module_fork_in_progress", kGauge},
    {"module_fork_last_cow_size", "module_fork_last_cow_size", kGauge},
    {"pubsub_channels", "pubsub_channels", kGauge},
    {"pubsub_patterns", "pubsub_patterns", kGauge},
    {"pubsubshard_channels", "pubsubshard_channels", kGauge},
    {"latest_fork_usec", "latest_fork_usec", kGauge},
    {"tracking_total_keys", "tracking_total_keys", kGauge},
    {"tracking_total_items", "tracking_total_items", kGauge},
    {"tracking_total_prefixes", "tracking_total_prefixes", kGauge},
    {"connected_slaves", "connected_slaves", kGauge},
    {"repl_backlog_size", "replication_backlog_bytes", kGauge},
    {"repl_backlog_active", "repl_backlog_is_active", kGauge},
    {"repl_backlog_first_byte_offset", "repl_backlog_first_byte_offset", kGauge},
    {"repl_backlog_histlen", "repl_backlog_history_bytes", kGauge},
    {"master_repl_offset", "master_repl_offset", kGauge},
    {"second_repl_offset", "second_repl_offset", kGauge},
    {"slave_expires_tracked_keys", "slave_expires_tracked_keys", kGauge},
    {"slave_priority", "slave_priority", kGauge},
    {"sync_full", "replica_resyncs_full", kGauge},
    {"sync_partial_ok", "replica_partial_resync_accepted", kGauge},
    {"sync_partial_err", "replica_partial_resync_denied", kGauge},
    {"cluster_stats_messages_sent", "cluster_messages_sent_total", kGauge},
    {"cluster_stats_messages_received", "cluster_messages_received_total", kGauge},
    {"total_connections_received", "connections_received_total", kCounter},
    {"total_commands_processed", "commands_processed_total", kCounter},
    {"rejected_connections", "rejected_connections_total", kCounter},
    {"total_net_input_bytes", "net_input_bytes_total", kCounter},
    {"total_net_output_bytes", "net_output_bytes_total", kCounter},
    {"expired_keys", "expired_keys_total", kCounter},
    {"cached_keys", "cached_keys_total", kCounter},
    {"evicted_keys", "evicted_keys_total", kCounter},
    {"keyspace_hits", "keyspace_hits_total", kCounter},
    {"keyspace_misses", "keyspace_misses_total", kCounter},
    {"used_cpu_sys", "cpu_sys_seconds_total", kCounter},
    {"used_cpu_user", "cpu_user_seconds_total", kCounter},
    {"used_cpu_sys_children", "cpu_sys_children_seconds_total", kCounter},
    {"used_cpu_user_children", "cpu_user_children_seconds_total", kCounter},
    {"used_cpu_sys_main_thread", "cpu_sys_main_thread_seconds_total", kCounter},
    {"used_cpu_user_main_thread", "cpu_user_main_thread_seconds_total", kCounter},
    {"unexpected_error_replies", "unexpected_error_replies", kCounter},
    {"total_error_replies", "total_error_replies", kCounter},
    {"total_reads_processed", "total_reads_processed", kCounter},
    {"total_writes_processed", "total_writes_processed", kCounter},
    {"io_threaded_reads_processed", "io_threaded_reads_processed", kCounter},
    {"io_threaded_writes_processed", "io_threaded_writes_processed", kCounter},
    {"dump_payload_sanitizations", "dump_payload_sanitizations", kCounter},
    {"storage_provider_read_hits", "storage_provider_read_hits", kCounter},
    {"storage_provider_read_misses", "storage_provider_read_misses", kCounter},
};

const MappedField* FindMapped(std::string_view field) {
  static const auto* const kIndex = [] {
    auto* index = new absl::flat_hash_map<std::string_view, const MappedField*>();
    for (const MappedField& f : kMappedFields) index->emplace(f.field, &f);
    return index;
  }();
  auto it = kIndex->find(field);
  return it == kIndex->end() ? nullptr : it->second;
}

std::string Name(std::string_view metric) { return StrCat("redis_", metric); }

// redis_exporter's value rules: ok/true are 1, err/fail/false 0, anything else a float (0 when
// it does not parse).
double ParseValue(std::string_view v) {
  if (v == "ok" || v == "true") return 1;
  if (v == "err" || v == "fail" || v == "false") return 0;
  double d = 0;
  if (!ParseFloat(v, &d)) return 0;
  return d;
}

// The value of "name=value" (as redis_exporter's extractVal); false when malformed.
bool ExtractVal(std::string_view kv, double* out) {
  const std::vector<std::string_view> parts = Split(kv, '=');
  return parts.size() == 2 && ParseFloat(parts[1], out);
}

// Replaces every byte outside [a-zA-Z0-9_] by '_' (a metric name from an INFO field name).
std::string SanitizeName(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    const bool alnum = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    if (!alnum && c != '_') c = '_';
  }
  return out;
}

// A command's count and total time (Commandstats), for the latency summaries.
struct CommandTotals {
  double calls = 0;
  double usec = 0;
};

// cmdstat_<cmd>:calls=N,usec=N,usec_per_call=F,rejected_calls=N,failed_calls=N
void AddCommandStat(std::string_view key, std::string_view value, PrometheusWriter* out,
                    std::map<std::string, CommandTotals>* totals) {
  if (!ConsumePrefix(&key, "cmdstat_")) return;
  const std::vector<std::string_view> parts = Split(value, ',');
  double calls = 0, usec = 0, rejected = 0, failed = 0;
  if (parts.size() < 3 || !ExtractVal(parts[0], &calls) || !ExtractVal(parts[1], &usec)) return;
  const std::string cmd(key);
  (*totals)[cmd] = {calls, usec};
  out->Add(Name("commands_total"), MetricType::kCounter, "Total number of calls per command",
           calls, {{"cmd", cmd}});
  out->Add(Name("commands_duration_seconds_total"), MetricType::kCounter,
           "Total amount of time in seconds spent per command", usec / 1e6, {{"cmd", cmd}});
  if (parts.size() < 5 || !ExtractVal(parts[3], &rejected) || !ExtractVal(parts[4], &failed)) {
    return;
  }
  // The help texts are redis_exporter's, swapped as they are there.
  out->Add(Name("commands_rejected_calls_total"), MetricType::kCounter,
           "Total number of errors within command execution per command", rejected,
           {{"cmd", cmd}});
  out->Add(Name("commands_failed_calls_total"), MetricType::kCounter,
           "Total number of errors prior command execution per command", failed, {{"cmd", cmd}});
}

// latency_percentiles_usec_<cmd>:p50=F,p99=F,p99.9=F -> percentile -> µs
bool ParseLatencyStat(std::string_view key, std::string_view value, std::string* cmd,
                      std::vector<std::pair<std::string, double>>* quantiles) {
  if (!ConsumePrefix(&key, "latency_percentiles_usec_")) return false;
  *cmd = std::string(key);
  for (std::string_view kv : Split(value, ',')) {
    const std::vector<std::string_view> parts = Split(kv, '=');
    double p = 0, v = 0;
    if (parts.size() != 2 || parts[0].size() < 2 || !ParseFloat(parts[0].substr(1), &p) ||
        !ParseFloat(parts[1], &v)) {
      return false;
    }
    quantiles->emplace_back(PrometheusWriter::FormatValue(p), v);
  }
  return true;
}

// db<N>:keys=N,expires=N,avg_ttl=N[,cached_keys=N]
bool AddKeyspace(std::string_view key, std::string_view value, PrometheusWriter* out) {
  if (!key.starts_with("db")) return false;
  const std::vector<std::string_view> parts = Split(value, ',');
  double keys = 0, expires = 0, avg_ttl = -1, cached = -1;
  if (parts.size() < 2 || parts.size() > 4 || !ExtractVal(parts[0], &keys) ||
      !ExtractVal(parts[1], &expires)) {
    return false;
  }
  if (parts.size() > 2) {
    if (!ExtractVal(parts[2], &avg_ttl)) return false;
    avg_ttl /= 1000;
  }
  if (parts.size() > 3 && !ExtractVal(parts[3], &cached)) return false;
  out->Add(Name("db_keys"), MetricType::kGauge, "Total number of keys by DB", keys,
           {{"db", key}});
  out->Add(Name("db_keys_expiring"), MetricType::kGauge, "Total number of expiring keys by DB",
           expires, {{"db", key}});
  if (cached > -1) {
    out->Add(Name("db_keys_cached"), MetricType::kGauge, "Total number of cached keys by DB",
             cached, {{"db", key}});
  }
  if (avg_ttl > -1) {
    out->Add(Name("db_avg_ttl_seconds"), MetricType::kGauge, "Avg TTL in seconds", avg_ttl,
             {{"db", key}});
  }
  return true;
}

// A plain INFO field: exported when redis_exporter maps it, or when its name starts with "db",
// "cmdstat_" or "cluster_" (redis_exporter's includeMetric).
void AddField(std::string_view key, std::string_view value, PrometheusWriter* out) {
  const MappedField* mapped = FindMapped(key);
  if (mapped == nullptr && !key.starts_with("db") && !key.starts_with("cmdstat_") &&
      !key.starts_with("cluster_")) {
    return;
  }
  std::string metric = mapped != nullptr ? std::string(mapped->metric) : SanitizeName(key);
  const MetricType type = mapped != nullptr ? mapped->type : MetricType::kGauge;
  double v = ParseValue(value);
  if (metric == "latest_fork_usec") {
    metric = "latest_fork_seconds";
    v /= 1e6;
  }
  out->Add(Name(metric), type, StrCat(metric, " metric"), v);
}

}  // namespace

void AppendInfoMetrics(std::string_view info, unsigned db_count, int64_t now_s,
                       PrometheusWriter* out) {
  absl::flat_hash_map<std::string_view, std::string_view> fields;  // views into `info`
  std::vector<bool> db_seen(db_count, false);
  std::map<std::string, CommandTotals> totals;
  std::map<std::string, std::vector<std::pair<std::string, double>>> latencies;
  std::string_view section;
  for (std::string_view line : Split(info, '\n')) {
    line = Trim(line);
    if (line.starts_with("# ")) {
      section = line.substr(2);
      continue;
    }
    const size_t colon = line.find(':');
    if (line.size() < 2 || colon == std::string_view::npos) continue;
    const std::string_view key = line.substr(0, colon);
    const std::string_view value = line.substr(colon + 1);
    fields[key] = value;
    if (section == "Server" && key == "uptime_in_seconds") {
      double uptime = 0;
      if (ParseFloat(value, &uptime)) {
        out->Add(Name("start_time_seconds"), MetricType::kGauge,
                 "Start time of the Redis instance since unix epoch in seconds.",
                 static_cast<double>(now_s) - uptime);
      }
    } else if (section == "Commandstats") {
      AddCommandStat(key, value, out, &totals);
      continue;
    } else if (section == "Latencystats") {
      std::string cmd;
      std::vector<std::pair<std::string, double>> quantiles;
      if (ParseLatencyStat(key, value, &cmd, &quantiles)) latencies[cmd] = std::move(quantiles);
      continue;
    } else if (section == "Errorstats") {
      std::string_view code = key;
      double count = 0;
      if (ConsumePrefix(&code, "errorstat_") && ExtractVal(value, &count)) {
        out->Add(Name("errors_total"), MetricType::kCounter,
                 "Total number of errors per error type", count, {{"err", code}});
      }
      continue;
    } else if (section == "Keyspace" && AddKeyspace(key, value, out)) {
      const std::optional<int64_t> db = ParseInt64(key.substr(2));
      if (db && *db >= 0 && *db < static_cast<int64_t>(db_count)) db_seen[*db] = true;
      continue;
    }
    AddField(key, value, out);
  }
  // Summaries need the command's count and sum from Commandstats.
  for (const auto& [cmd, quantiles] : latencies) {
    auto it = totals.find(cmd);
    if (it == totals.end()) continue;
    out->AddSummary(Name("latency_percentiles_usec"),
                    "A summary of latency percentile distribution per command", {{"cmd", cmd}},
                    quantiles, it->second.usec, it->second.calls);
  }
  for (unsigned db = 0; db < db_count; ++db) {
    if (db_seen[db]) continue;
    const std::string name = StrCat("db", db);
    out->Add(Name("db_keys"), MetricType::kGauge, "Total number of keys by DB", 0,
             {{"db", name}});
    out->Add(Name("db_keys_expiring"), MetricType::kGauge, "Total number of expiring keys by DB",
             0, {{"db", name}});
  }
  auto field = [&](const char* name) -> std::string_view {
    auto it = fields.find(name);
    return it == fields.end() ? std::string_view() : it->second;
  };
  out->Add(Name("instance_info"), MetricType::kGauge, "Information about the Redis instance", 1,
           {{"role", field("role")},
            {"redis_version", field("redis_version")},
            {"redis_build_id", field("redis_build_id")},
            {"redis_mode", field("redis_mode")},
            {"os", field("os")},
            {"maxmemory_policy", field("maxmemory_policy")},
            {"tcp_port", field("tcp_port")},
            {"run_id", field("run_id")},
            {"process_id", field("process_id")}});
}

}  // namespace dashkv
