// The process's wall clock (milliseconds and microseconds since the Unix epoch), read by every
// layer that stamps or compares times: connection ages, key expiry, command timestamps.
// Tests may replace it with a fixed, settable time (ScopedFakeClock) instead of sleeping.
// Thread-safe: reads are a relaxed atomic load plus clock_gettime.
#pragma once

#include <cstdint>

namespace dashkv {

// Returns the wall-clock time in microseconds since the epoch, or the fake time while a
// ScopedFakeClock is alive.
int64_t NowUs();

// Returns NowUs() / 1000: the wall-clock time in milliseconds since the epoch.
inline int64_t NowMs() { return NowUs() / 1000; }

// Replaces the clock of every thread with a fake one for its lifetime: NowUs()/NowMs() return
// the fake time, which moves only through Set/Advance. For tests only; one at a time.
// Thread: construct and destroy while no other thread reads the clock for a decision that
// matters (before starting or after joining engines); Set/Advance are safe from any thread.
class ScopedFakeClock {
 public:
  // Starts the fake clock at `start_us` microseconds since the epoch.
  // REQUIRES: no other ScopedFakeClock is alive.
  explicit ScopedFakeClock(int64_t start_us);
  ~ScopedFakeClock();
  ScopedFakeClock(const ScopedFakeClock&) = delete;
  ScopedFakeClock& operator=(const ScopedFakeClock&) = delete;

  // Sets the fake time to `now_us`.
  void Set(int64_t now_us);
  // Moves the fake time forward (or back, for a negative value) by `us` microseconds.
  void AdvanceUs(int64_t us);
  void AdvanceMs(int64_t ms) { AdvanceUs(ms * 1000); }
};

}  // namespace dashkv
