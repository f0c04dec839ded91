#include "server/server_stats.h"

#include <algorithm>

#include "core/base/clock.h"

namespace dashkv {

ServerStats::ServerStats(unsigned engines, size_t num_command_ids)
    : engines_(engines), start_time_ms_(NowMs()) {
  for (EngineStats& es : engines_) es.command_stats.resize(num_command_ids);
}

void ServerStats::RecordErrorCode(EngineStats& es, const io::ReplyBuilder& rb) {
  ++es.error_stats[std::string(rb.last_error_code())];
}

void ServerStats::RecordRejected(unsigned engine, const CommandSpec* spec,
                                 const io::ReplyBuilder& rb) {
  EngineStats& es = engines_[engine];
  if (spec != nullptr) ++es.command_stats[spec->id].rejected;
  BumpCounter(es.rejected_calls);
  RecordErrorCode(es, rb);
}

void ServerStats::Reset(unsigned i) {
  EngineStats& es = engines_[i];
  std::fill(es.command_stats.begin(), es.command_stats.end(), CommandStat{});
  es.error_stats.clear();
  es.commands_processed.store(0, std::memory_order_relaxed);
  es.connections_received.store(0, std::memory_order_relaxed);
  es.rejected_calls.store(0, std::memory_order_relaxed);
  es.error_replies.store(0, std::memory_order_relaxed);
  es.shard_hops.store(0, std::memory_order_relaxed);
}

void ServerStats::SampleOps(int64_t now_ms) {
  uint64_t total = 0;
  for (const EngineStats& es : engines_) {
    total += es.commands_processed.load(std::memory_order_relaxed);
  }
  if (last_ops_sample_ms_ != 0 && now_ms > last_ops_sample_ms_) {
    ops_samples_[ops_sample_index_++ % ops_samples_.size()] =
        static_cast<int64_t>(total - last_ops_total_) * 1000 / (now_ms - last_ops_sample_ms_);
    int64_t sum = 0;
    for (int64_t v : ops_samples_) sum += v;
    instantaneous_ops_.store(sum / static_cast<int64_t>(ops_samples_.size()),
                             std::memory_order_relaxed);
  }
  last_ops_total_ = total;
  last_ops_sample_ms_ = now_ms;
}

}  // namespace dashkv
