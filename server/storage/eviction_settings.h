// The maxmemory-policy and its tuning settings, shared by the config (CONFIG GET/SET, flags) and
// the shards (access tracking on every lookup, eviction).
// Thread-safe: atomics; any thread may read or change them.
#pragma once

#include <atomic>
#include <cstdint>

#include "core/access_record.h"

namespace dashkv {

// maxmemory-policy: which keys go when maxmemory is reached (Redis's eight policies).
enum class MaxmemoryPolicy : uint8_t {
  kNoEviction,
  kAllKeysLru,
  kVolatileLru,
  kAllKeysLfu,
  kVolatileLfu,
  kAllKeysRandom,
  kVolatileRandom,
  kVolatileTtl,
};

// Returns whether `policy` evicts by access frequency (allkeys-lfu, volatile-lfu).
inline bool IsLfuPolicy(MaxmemoryPolicy policy) {
  return policy == MaxmemoryPolicy::kAllKeysLfu || policy == MaxmemoryPolicy::kVolatileLfu;
}
// Returns whether `policy` evicts by access recency (allkeys-lru, volatile-lru).
inline bool IsLruPolicy(MaxmemoryPolicy policy) {
  return policy == MaxmemoryPolicy::kAllKeysLru || policy == MaxmemoryPolicy::kVolatileLru;
}
// Returns whether `policy` evicts only keys with an expiry (volatile-*).
inline bool IsVolatilePolicy(MaxmemoryPolicy policy) {
  return policy == MaxmemoryPolicy::kVolatileLru || policy == MaxmemoryPolicy::kVolatileLfu ||
         policy == MaxmemoryPolicy::kVolatileRandom || policy == MaxmemoryPolicy::kVolatileTtl;
}

struct EvictionSettings {
  std::atomic<MaxmemoryPolicy> policy{MaxmemoryPolicy::kNoEviction};
  std::atomic<int64_t> samples{5};    // maxmemory-samples: keys sampled per eviction step
  std::atomic<int64_t> tenacity{10};  // maxmemory-eviction-tenacity: time budget of a step
  std::atomic<int64_t> lfu_log_factor{10};
  std::atomic<int64_t> lfu_decay_time{1};  // minutes per LFU counter decrement (0: none)

  // Returns how the access record is kept: LFU under the LFU policies, else LRU (as Redis,
  // which updates the LRU clock under every other policy, noeviction included).
  AccessMode access_mode() const {
    return IsLfuPolicy(policy.load(std::memory_order_relaxed)) ? AccessMode::kLfu
                                                               : AccessMode::kLru;
  }
};

}  // namespace dashkv
