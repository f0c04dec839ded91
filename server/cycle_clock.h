// CycleClock: the CPU's time-stamp counter, for timing commands (INFO commandstats) at a few
// nanoseconds per reading. x86-64 only (invariant TSC, constant rate on every modern x86 CPU).
// Thread-safe.
#pragma once

#include <x86intrin.h>

#include <chrono>
#include <cstdint>
#include <thread>

namespace dashkv {

class CycleClock {
 public:
  static uint64_t Now() { return __rdtsc(); }

  // Returns TSC ticks per microsecond, measured once (~5 ms) on first use.
  static double TicksPerUsec() {
    static const double ticks = [] {
      auto t0 = std::chrono::steady_clock::now();
      uint64_t c0 = Now();
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      uint64_t c1 = Now();
      auto t1 = std::chrono::steady_clock::now();
      double us = std::chrono::duration<double, std::micro>(t1 - t0).count();
      return us > 0 ? static_cast<double>(c1 - c0) / us : 1.0;
    }();
    return ticks;
  }
};

}  // namespace dashkv
