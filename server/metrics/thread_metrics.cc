#include "server/metrics/thread_metrics.h"

#include <sys/resource.h>

#include <string>

#include "core/base/logging.h"
#include "io/engine.h"
#include "server/client_registry.h"
#include "server/server_stats.h"
#include "server/services.h"
#include "server/storage/db_slice.h"
#include "server/storage/shard.h"

namespace dashkv {

ThreadFigures GatherThreadFigures(Shard& shard, const ServerServices& services) {
  DCHECK(shard.IsMyThread());
  ThreadFigures f;
  f.thread = shard.index();
  const EngineStats& es = services.stats.engine(shard.index());
  f.commands_processed = es.commands_processed.load(std::memory_order_relaxed);
  f.connections_received = es.connections_received.load(std::memory_order_relaxed);
  f.shard_hops = es.shard_hops.load(std::memory_order_relaxed);
  f.error_replies = es.error_replies.load(std::memory_order_relaxed);
  f.connected_clients = static_cast<int64_t>(services.clients.on(shard.index()).size());
  io::Engine& engine = *io::Engine::Current();
  f.net_input = engine.net().input_bytes.load(std::memory_order_relaxed);
  f.net_output = engine.net().output_bytes.load(std::memory_order_relaxed);
  f.inbox_depth = engine.InboxDepth();
  rusage usage{};
  if (getrusage(RUSAGE_THREAD, &usage) == 0) {
    f.cpu_user_s = static_cast<double>(usage.ru_utime.tv_sec) + usage.ru_utime.tv_usec / 1e6;
    f.cpu_sys_s = static_cast<double>(usage.ru_stime.tv_sec) + usage.ru_stime.tv_usec / 1e6;
  }
  const ShardStats& st = shard.stats();
  f.shard_commands = st.commands;
  f.expired_keys = st.expired_keys;
  f.evicted_keys = st.evicted_keys;
  f.evicted_in_place = st.evicted_in_place;
  f.keyspace_hits = st.keyspace_hits;
  f.keyspace_misses = st.keyspace_misses;
  for (unsigned db = 0; db < shard.num_dbs(); ++db) {
    const DbSlice* slice = shard.db_if_exists(db);
    if (slice == nullptr) continue;
    f.keys += slice->size();
    f.expiring_keys += slice->expires();
    f.segments += slice->table().segment_count();
    f.slots += slice->table().capacity();
    f.table_bytes += slice->table().mem_usage();
  }
  return f;
}

void AppendThreadMetrics(const std::vector<ThreadFigures>& threads, PrometheusWriter* out) {
  out->Add("dashkv_threads", MetricType::kGauge,
           "Engine threads, each running one event loop and owning one shard.",
           static_cast<double>(threads.size()));
  for (const ThreadFigures& f : threads) {
    const std::string thread = std::to_string(f.thread);
    auto add = [&](std::string_view name, MetricType type, std::string_view help, double v) {
      out->Add(name, type, help, v, {{"thread", thread}});
    };
    using enum MetricType;
    add("dashkv_thread_commands_processed_total", kCounter,
        "Commands received by the connections this thread serves.",
        static_cast<double>(f.commands_processed));
    add("dashkv_thread_shard_hops_total", kCounter,
        "Messages this thread's connections sent to other threads' shards (one per shard per "
        "group of pipelined commands).",
        static_cast<double>(f.shard_hops));
    add("dashkv_thread_error_replies_total", kCounter,
        "Error replies sent by this thread's connections.", static_cast<double>(f.error_replies));
    add("dashkv_thread_connected_clients", kGauge, "Client connections this thread serves.",
        static_cast<double>(f.connected_clients));
    add("dashkv_thread_connections_received_total", kCounter,
        "Connections accepted and handed to this thread.",
        static_cast<double>(f.connections_received));
    add("dashkv_thread_net_input_bytes_total", kCounter,
        "Bytes read from this thread's connections.", static_cast<double>(f.net_input));
    add("dashkv_thread_net_output_bytes_total", kCounter,
        "Bytes written to this thread's connections.", static_cast<double>(f.net_output));
    add("dashkv_thread_inbox_depth", kGauge,
        "Messages from other threads waiting in this thread's inbox (its shard queue) when "
        "sampled.",
        static_cast<double>(f.inbox_depth));
    add("dashkv_thread_cpu_user_seconds_total", kCounter,
        "User CPU time of this thread, in seconds.", f.cpu_user_s);
    add("dashkv_thread_cpu_sys_seconds_total", kCounter,
        "System CPU time of this thread, in seconds.", f.cpu_sys_s);
    add("dashkv_shard_commands_total", kCounter,
        "Commands run on this thread's shard (from any thread's connections).",
        static_cast<double>(f.shard_commands));
    add("dashkv_shard_keys", kGauge, "Keys in this thread's shard, every database summed.",
        static_cast<double>(f.keys));
    add("dashkv_shard_keys_expiring", kGauge,
        "Keys with an expiry in this thread's shard, every database summed.",
        static_cast<double>(f.expiring_keys));
    add("dashkv_shard_expired_keys_total", kCounter, "Keys this thread's shard expired.",
        static_cast<double>(f.expired_keys));
    add("dashkv_shard_evicted_keys_total", kCounter, "Keys this thread's shard evicted.",
        static_cast<double>(f.evicted_keys));
    add("dashkv_shard_evicted_in_place_total", kCounter,
        "Of those, keys an insert into a full segment evicted there instead of splitting it.",
        static_cast<double>(f.evicted_in_place));
    add("dashkv_shard_keyspace_hits_total", kCounter,
        "Successful key lookups on this thread's shard.", static_cast<double>(f.keyspace_hits));
    add("dashkv_shard_keyspace_misses_total", kCounter,
        "Failed key lookups on this thread's shard.", static_cast<double>(f.keyspace_misses));
    add("dashkv_dashtable_segments", kGauge,
        "Dashtable segments of this thread's shard, every database summed.",
        static_cast<double>(f.segments));
    add("dashkv_dashtable_slots", kGauge,
        "Slots (regular and stash) of those segments: the keys they can hold.",
        static_cast<double>(f.slots));
    add("dashkv_dashtable_fill_ratio", kGauge,
        "Keys per slot of this thread's Dashtables (0 when it has none).",
        f.slots > 0 ? static_cast<double>(f.keys) / static_cast<double>(f.slots) : 0.0);
    add("dashkv_dashtable_bytes", kGauge,
        "Bytes of this thread's Dashtables: directories and segments, without the values.",
        static_cast<double>(f.table_bytes));
  }
}

}  // namespace dashkv
