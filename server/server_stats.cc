#include "server/server_stats.h"

#include <algorithm>
#include <ctime>

#include "core/base/clock.h"
#include "server/conn_state.h"
#include "server/cycle_clock.h"

namespace dashkv {

ServerStats::ServerStats(unsigned engines, size_t num_command_ids, const Config& config)
    : engines_(engines),
      config_(config),
      ns_per_tick_(1000.0 / CycleClock::TicksPerUsec()),
      slowlog_(engines),
      start_time_ms_(NowMs()) {
  for (EngineStats& es : engines_) {
    es.command_stats.resize(num_command_ids);
    es.latency.resize(num_command_ids);
  }
}

void ServerStats::RecordSlow(unsigned engine, const CommandSpec& spec, uint64_t ticks,
                             CmdArgs args, const ConnState* client) {
  const int64_t us = static_cast<int64_t>(static_cast<double>(ticks) * ns_per_tick_ / 1000.0);
  const int64_t slow_us = config_.slowlog_log_slower_than.load(std::memory_order_relaxed);
  if (slow_us >= 0 && us >= slow_us && !spec.HasFlag(kCmdSkipSlowlog)) {
    static const std::string kScriptAddr = "?:0";
    slowlog_.Add(engine, spec, args, us,
                 client != nullptr ? client->conn->remote_address() : kScriptAddr,
                 client != nullptr ? std::string_view(client->name) : std::string_view(),
                 config_.slowlog_max_len.load(std::memory_order_relaxed));
  }
  RecordLatencyEvent(spec.HasFlag(kCmdFast) ? "fast-command" : "command", us / 1000);
}

void ServerStats::RecordLatencyEvent(std::string_view event, int64_t ms) {
  const int64_t threshold = config_.latency_monitor_threshold.load(std::memory_order_relaxed);
  if (threshold > 0 && ms >= threshold) {
    latency_monitor_.Add(event, ms, static_cast<int64_t>(std::time(nullptr)));
  }
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
  for (auto& h : es.latency) h.reset();
  es.error_stats.clear();
  es.commands_processed.store(0, std::memory_order_relaxed);
  es.connections_received.store(0, std::memory_order_relaxed);
  es.rejected_calls.store(0, std::memory_order_relaxed);
  es.error_replies.store(0, std::memory_order_relaxed);
  es.shard_hops.store(0, std::memory_order_relaxed);
}

void RateMeter::Sample(uint64_t total, int64_t now_ms) {
  if (last_ms_ != 0 && now_ms > last_ms_) {
    // A total that went down was reset (CONFIG RESETSTAT): count from zero.
    const uint64_t delta = total >= last_total_ ? total - last_total_ : total;
    samples_[index_++ % samples_.size()] =
        static_cast<double>(delta) * 1000 / static_cast<double>(now_ms - last_ms_);
    double sum = 0;
    for (double v : samples_) sum += v;
    rate_.store(sum / static_cast<double>(samples_.size()), std::memory_order_relaxed);
  }
  last_total_ = total;
  last_ms_ = now_ms;
}

void ServerStats::SampleRates(int64_t now_ms, uint64_t net_input, uint64_t net_output) {
  uint64_t total = 0;
  for (const EngineStats& es : engines_) {
    total += es.commands_processed.load(std::memory_order_relaxed);
  }
  ops_rate_.Sample(total, now_ms);
  input_rate_.Sample(net_input, now_ms);
  output_rate_.Sample(net_output, now_ms);
}

}  // namespace dashkv
