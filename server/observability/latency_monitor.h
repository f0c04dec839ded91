// LatencyMonitor: latency spikes by event class (LATENCY LATEST/HISTORY/RESET/GRAPH/DOCTOR),
// recorded when an event lasts at least `latency-monitor-threshold` ms (0: off).
// Thread-safe: one mutex, taken only by a spike (an event over the threshold) and by LATENCY.
//
// Each event keeps its last 160 samples (unix second, ms) and its all-time maximum; spikes of one
// event within the same second merge into one sample holding the largest, as in Redis.
// Events: "command" and "fast-command" (a command's own run time) and "expire-cycle" (one
// active expiry pass of a shard).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace dashkv {

class LatencyMonitor {
 public:
  static constexpr size_t kSamples = 160;

  struct Sample {
    int64_t time = 0;  // unix seconds
    int64_t ms = 0;
  };
  struct Latest {
    std::string event;
    int64_t time;
    int64_t ms;
    int64_t max_ms;
  };

  // Records a spike of `event` lasting `ms` at unix time `now_s`.
  void Add(std::string_view event, int64_t ms, int64_t now_s);
  // Every event's latest sample and maximum.
  std::vector<Latest> LatestSamples() const;
  // The samples of `event`, oldest first (empty when unknown).
  std::vector<Sample> History(std::string_view event) const;
  // Forgets the named events (every event when `events` is empty); returns how many it forgot.
  size_t Reset(const std::vector<std::string>& events);
  // LATENCY GRAPH's text for `event`; empty when it has no samples.
  std::string Graph(std::string_view event, int64_t now_s) const;
  // LATENCY DOCTOR's report.
  std::string Doctor(int64_t threshold_ms) const;

 private:
  struct Event {
    std::array<Sample, kSamples> ring{};
    size_t next = 0;  // where the next sample goes
    size_t count = 0;
    int64_t max_ms = 0;
    std::vector<Sample> InOrder() const;
  };
  mutable std::mutex mu_;
  std::map<std::string, Event, std::less<>> events_;
};

}  // namespace dashkv
