// dashkv's own metrics, per engine thread (label thread="<i>", prefix "dashkv_"): the commands
// its connections sent and the hops they made to other shards, its inbox, and its shard's keys
// and Dashtables. Gathered on each thread by a hop (shard data is read only by its owner).
// Thread: GatherThreadFigures on the shard's thread; the rest on any.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "server/metrics/prometheus_writer.h"

namespace dashkv {

class Shard;
struct ServerServices;

// One thread's figures, copied out of its engine and shard.
struct ThreadFigures {
  unsigned thread = 0;
  // The thread's connections (EngineStats, io::NetCounters).
  uint64_t commands_processed = 0;
  uint64_t connections_received = 0;
  uint64_t shard_hops = 0;
  uint64_t error_replies = 0;
  int64_t connected_clients = 0;
  uint64_t net_input = 0, net_output = 0;
  // The engine: messages waiting in its inbox when sampled, CPU time of its OS thread.
  size_t inbox_depth = 0;
  double cpu_user_s = 0, cpu_sys_s = 0;
  // The shard (ShardStats) and its Dashtables, every database summed.
  uint64_t shard_commands = 0;
  uint64_t keys = 0, expiring_keys = 0;
  uint64_t expired_keys = 0, evicted_keys = 0, evicted_in_place = 0;
  uint64_t keyspace_hits = 0, keyspace_misses = 0;
  uint64_t segments = 0, slots = 0, table_bytes = 0;
};

// Copies the figures of `shard`'s thread. REQUIRES: runs on that shard's engine thread.
ThreadFigures GatherThreadFigures(Shard& shard, const ServerServices& services);

// Appends the dashkv_ metrics of `threads` (one entry per engine thread) to `out`.
void AppendThreadMetrics(const std::vector<ThreadFigures>& threads, PrometheusWriter* out);

}  // namespace dashkv
