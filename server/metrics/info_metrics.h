// Turns the text of INFO ALL into redis_exporter's metrics (as redis_exporter v1.62 does in its
// exporter/info.go and metrics.go), so that dashboards and alerts written for redis_exporter read
// dashkv's /metrics unchanged: the same names ("redis_" + the mapped INFO field), types, HELP
// texts, labels and values.
// Thread: any.
#pragma once

#include <cstdint>
#include <string_view>

#include "server/metrics/prometheus_writer.h"

namespace dashkv {

// Appends to `out` the metrics redis_exporter derives from `info` (INFO ALL's text): the INFO
// fields it maps (redis_connected_clients, redis_memory_used_bytes, redis_keyspace_hits_total,
// ...), per command (redis_commands_total{cmd}, redis_commands_duration_seconds_total{cmd}, ...),
// per error code (redis_errors_total{err}), per database (redis_db_keys{db="db0"}, ...: 0 for
// the first `db_count` databases that hold no keys), redis_latency_percentiles_usec{cmd},
// redis_instance_info and redis_start_time_seconds (from `now_s`, unix seconds).
void AppendInfoMetrics(std::string_view info, unsigned db_count, int64_t now_s,
                       PrometheusWriter* out);

}  // namespace dashkv
