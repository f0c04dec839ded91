// SplitMix64: a small, fast pseudo-random generator (Steele, Lea and Flood, "Fast splittable
// pseudorandom number generators", 2014): one add and three multiply-xorshift steps per 64-bit
// draw, 8 bytes of state. For sampling on hot paths (eviction candidates), where
// std::mt19937_64's 2.5 KB state and its refills cost more than the draw is worth; not for
// anything a client could exploit by predicting it.
// Thread: an object belongs to one thread.
#pragma once

#include <cstdint>

namespace dashkv {

// A UniformRandomBitGenerator of 64-bit values.
class SplitMix64 {
 public:
  using result_type = uint64_t;

  explicit SplitMix64(uint64_t seed) : state_(seed) {}

  static constexpr result_type min() { return 0; }
  static constexpr result_type max() { return ~uint64_t{0}; }

  result_type operator()() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }

 private:
  uint64_t state_;
};

}  // namespace dashkv
