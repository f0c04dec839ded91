// Output buffer limits (Redis's client-output-buffer-limit): how much reply data a client may
// leave unread before the server drops it. OutputLimitClass holds one class's setting (normal,
// replica, pubsub), shared by all engines; OutputLimitTracker follows one connection against it.
// Thread: OutputLimitClass is thread-safe (relaxed atomics, written by CONFIG SET);
// OutputLimitTracker is engine-local (owned by its Connection).
#pragma once

#include <atomic>
#include <cstdint>

namespace dashkv::io {

// One class's limit; 0 disables the hard or the soft part.
struct OutputLimit {
  uint64_t hard_bytes = 0;
  uint64_t soft_bytes = 0;
  int64_t soft_seconds = 0;
};

// A limit read by many connections and changed at run time (CONFIG SET). The three fields are
// read separately: a reader racing a CONFIG SET may see old and new fields mixed for one check,
// which is harmless (Redis reads them unsynchronised from one thread, we from several).
class OutputLimitClass {
 public:
  OutputLimit Load() const {
    return {hard_.load(std::memory_order_relaxed), soft_.load(std::memory_order_relaxed),
            soft_seconds_.load(std::memory_order_relaxed)};
  }
  void Store(const OutputLimit& limit) {
    hard_.store(limit.hard_bytes, std::memory_order_relaxed);
    soft_.store(limit.soft_bytes, std::memory_order_relaxed);
    soft_seconds_.store(limit.soft_seconds, std::memory_order_relaxed);
  }

 private:
  std::atomic<uint64_t> hard_{0};
  std::atomic<uint64_t> soft_{0};
  std::atomic<int64_t> soft_seconds_{0};
};

// Redis's checkClientOutputBufferLimits for one connection: the limit is exceeded when the
// unsent output reaches the hard limit, or has stayed at or above the soft limit for more than
// soft_seconds (measured from the first check that saw it above, reset by a check below it).
// Checked whenever output is queued, as Redis does; time is passed in (testable).
class OutputLimitTracker {
 public:
  // Returns whether `used` unsent bytes at `now_s` (seconds, any monotonic origin) exceed
  // `limit`; updates the soft-limit timer.
  bool Exceeded(const OutputLimit& limit, uint64_t used, int64_t now_s) {
    bool hard = limit.hard_bytes != 0 && used >= limit.hard_bytes;
    bool soft = limit.soft_bytes != 0 && used >= limit.soft_bytes;
    if (!soft) {
      soft_since_s_ = -1;
    } else if (soft_since_s_ < 0) {
      soft_since_s_ = now_s;  // first time seen above the soft limit
      soft = false;
    } else {
      soft = now_s - soft_since_s_ > limit.soft_seconds;
    }
    return hard || soft;
  }

 private:
  int64_t soft_since_s_ = -1;  // when the output was first seen above the soft limit
};

}  // namespace dashkv::io
