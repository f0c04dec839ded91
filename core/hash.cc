#include "core/hash.h"

#include <random>

namespace dashkv {

uint64_t NewHashKey() {
  // splitmix64 over a per-thread state: a bijective mix of a Weyl sequence, so the keys one thread
  // hands out are distinct, and the random start makes them unpredictable from outside.
  thread_local uint64_t state = [] {
    std::random_device rd;
    return (uint64_t{rd()} << 32) ^ rd();
  }();
  uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

}  // namespace dashkv
