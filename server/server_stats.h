// ServerStats: the server's counters — per-engine command and error statistics (INFO stats,
// commandstats, errorstats), the operations-per-second sample, blocked clients, start time.
// Thread: each EngineStats is written only by its own engine; its atomics may be read (relaxed)
// by any thread, its maps only on its engine (INFO hops there).
#pragma once

#include <absl/container/flat_hash_map.h>

#include <array>
#include <memory>
#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "io/reply_builder.h"
#include "server/cmd_args.h"
#include "server/command_registry.h"
#include "server/config.h"
#include "server/observability/latency_histogram.h"
#include "server/observability/latency_monitor.h"
#include "server/observability/slowlog.h"

namespace dashkv {

class ConnState;

// Adds n to a counter that only one thread writes (no atomic read-modify-write needed).
inline void BumpCounter(std::atomic<uint64_t>& counter, uint64_t n = 1) {
  counter.store(counter.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
}

// A per-second rate of a growing total, averaged over its last 16 samples (Redis's
// instantaneous_* metrics). Sample: always the same thread; per_sec: any thread.
class RateMeter {
 public:
  void Sample(uint64_t total, int64_t now_ms);
  double per_sec() const { return rate_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> rate_{0};
  uint64_t last_total_ = 0;
  int64_t last_ms_ = 0;
  std::array<double, 16> samples_{};
  size_t index_ = 0;
};

// Per-command counters of one engine (INFO commandstats).
struct CommandStat {
  uint64_t calls = 0;
  uint64_t ticks = 0;  // CycleClock ticks spent in the handler
  uint64_t failed = 0;
  uint64_t rejected = 0;
};

// The counters of one engine.
struct alignas(64) EngineStats {
  std::atomic<uint64_t> commands_processed{0};
  std::atomic<uint64_t> connections_received{0};
  std::atomic<uint64_t> rejected_calls{0};
  // Messages sent to other shards by the pipeline runner (one per remote shard per group).
  std::atomic<uint64_t> shard_hops{0};
  std::atomic<uint64_t> error_replies{0};
  // Engine-local (read by INFO through a hop to this engine).
  std::vector<CommandStat> command_stats;                  // by CommandSpec::id
  absl::flat_hash_map<std::string, uint64_t> error_stats;  // by error code ("ERR", ...)
  // Run-time distributions in CycleClock ticks (latency-tracking), by CommandSpec::id;
  // allocated at a command's first tracked run.
  std::vector<std::unique_ptr<LatencyHistogram>> latency;
};

class ServerStats {
 public:
  // `config`'s slow log, latency monitor and latency tracking settings are read per command.
  ServerStats(unsigned engines, size_t num_command_ids, const Config& config);

  // Engine-local counters of engine `i`; its maps only on engine i.
  EngineStats& engine(unsigned i) { return engines_[i]; }

  // Counts one run of `spec` with `args` on `engine` that took `ticks` (its own run time,
  // without waits for locks or blocking) and sent `errors` errors (the last one with code
  // rb.last_error_code()); adds it to the command's latency histogram and, when it was slow, to
  // the slow log and the latency monitor. `client` is the caller (nullptr: a script's call,
  // "?:0" in the slow log); it is read only for a slow command. REQUIRES: runs on `engine`.
  void RecordCall(unsigned engine, const CommandSpec& spec, uint64_t ticks, uint64_t errors,
                  const io::ReplyBuilder& rb, CmdArgs args, const ConnState* client) {
    EngineStats& es = engines_[engine];
    CommandStat& st = es.command_stats[spec.id];
    ++st.calls;
    st.ticks += ticks;
    if (errors > 0) [[unlikely]] {
      ++st.failed;
      RecordErrorCode(es, rb);
    }
    if (TracksLatency()) TrackLatency(es, spec, ticks);
    if (ticks >= ObserveTicks()) [[unlikely]] RecordSlow(engine, spec, ticks, args, client);
  }
  // Counts a command refused before it ran (unknown, arity, NOAUTH, OOM); `spec` is nullptr
  // for an unknown command. REQUIRES: runs on `engine`.
  void RecordRejected(unsigned engine, const CommandSpec* spec, const io::ReplyBuilder& rb);
  // Resets the counters of engine `i` (CONFIG RESETSTAT). REQUIRES: runs on engine i.
  void Reset(unsigned i);

  // Samples the command rate and the network rates from the totals of every engine
  // (`net_input` and `net_output` bytes). REQUIRES: always the same thread, about every 100 ms.
  void SampleRates(int64_t now_ms, uint64_t net_input, uint64_t net_output);
  // Commands per second over the last sampling period.
  int64_t instantaneous_ops() const { return static_cast<int64_t>(ops_rate_.per_sec()); }
  // Kilobytes (1024 bytes) per second read from and written to clients.
  double instantaneous_input_kbps() const { return input_rate_.per_sec() / 1024; }
  double instantaneous_output_kbps() const { return output_rate_.per_sec() / 1024; }

  // Clients parked in a blocking command (INFO blocked_clients).
  std::atomic<int64_t>& blocked_clients() { return blocked_clients_; }
  int64_t start_time_ms() const { return start_time_ms_; }
  // used_memory when the server started, before loading data (INFO used_memory_startup).
  int64_t startup_memory() const { return startup_memory_.load(std::memory_order_relaxed); }
  void set_startup_memory(int64_t bytes) {
    startup_memory_.store(bytes, std::memory_order_relaxed);
  }

  // Nanoseconds per CycleClock tick: the unit of the latency histograms is the tick.
  double ns_per_tick() const { return ns_per_tick_; }
  SlowLog& slowlog() { return slowlog_; }
  LatencyMonitor& latency_monitor() { return latency_monitor_; }
  // Records `ms` for latency event `event` if the latency monitor is on and it reaches the
  // threshold (an expiry cycle, a snapshot slice). Any thread.
  void RecordLatencyEvent(std::string_view event, int64_t ms);

 private:
  bool TracksLatency() const { return config_.latency_tracking.load(std::memory_order_relaxed); }
  uint64_t ObserveTicks() const { return config_.observe_ticks.load(std::memory_order_relaxed); }
  void TrackLatency(EngineStats& es, const CommandSpec& spec, uint64_t ticks) {
    std::unique_ptr<LatencyHistogram>& h = es.latency[spec.id];
    if (h == nullptr) [[unlikely]] h = std::make_unique<LatencyHistogram>();
    h->Record(ticks);
  }
  // The slow path of RecordCall: the slow log and the latency monitor.
  void RecordSlow(unsigned engine, const CommandSpec& spec, uint64_t ticks, CmdArgs args,
                  const ConnState* client);

  // Counts rb's last error by its code (INFO errorstats).
  static void RecordErrorCode(EngineStats& es, const io::ReplyBuilder& rb);

  std::vector<EngineStats> engines_;
  const Config& config_;
  const double ns_per_tick_;
  SlowLog slowlog_;
  LatencyMonitor latency_monitor_;
  const int64_t start_time_ms_;
  std::atomic<int64_t> blocked_clients_{0};
  std::atomic<int64_t> startup_memory_{0};
  RateMeter ops_rate_;
  RateMeter input_rate_;
  RateMeter output_rate_;
};

}  // namespace dashkv
