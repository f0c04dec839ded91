#include "server/storage/memory_budget.h"

#include <algorithm>

#include "core/memory.h"

namespace dashkv {

MemoryBudget::MemoryBudget(unsigned num_shards, const std::atomic<int64_t>* maxmemory,
                           const EvictionSettings* settings)
    : num_shards_(num_shards),
      maxmemory_(maxmemory),
      settings_(settings),
      slots_(new Slot[num_shards]) {}

int64_t MemoryBudget::Overage() const {
  const int64_t limit = maxmemory();
  if (limit <= 0) return 0;
  int64_t used = UsedMemory();
  if (policy() == MaxmemoryPolicy::kNoEviction) return used - limit;
  for (unsigned i = 0; i < num_shards_; ++i) {
    used -= slots_[i].credit.load(std::memory_order_relaxed);
  }
  return used - EffectiveLimit();
}

int64_t MemoryBudget::EffectiveLimit() const {
  const int64_t limit = maxmemory();
  if (limit < kMinLimitForRss || policy() == MaxmemoryPolicy::kNoEviction) return limit;
  const auto l = static_cast<double>(limit);
  const double lowered = l * (1.0 + kRssHeadroom) - static_cast<double>(rss_gap());
  return static_cast<int64_t>(std::clamp(lowered, l * kMinLimitShare, l));
}

void MemoryBudget::SampleRss() {
#ifndef DASHKV_SANITIZER
  SampleRss(static_cast<int64_t>(ProcessRssBytes()), UsedMemory());
#endif
}

void MemoryBudget::SampleRss(int64_t rss, int64_t used) {
  if (rss <= 0) return;  // /proc unreadable
  const int64_t gap = std::max<int64_t>(0, rss - used);
  if (rss > last_rss_ || gap < rss_gap()) rss_gap_.store(gap, std::memory_order_relaxed);
  last_rss_ = rss;
}

void MemoryBudget::Publish(unsigned shard, int64_t credit, int64_t evictable) {
  slots_[shard].credit.store(credit, std::memory_order_relaxed);
  slots_[shard].evictable.store(evictable, std::memory_order_relaxed);
}

int64_t MemoryBudget::EvictableKeys() const {
  int64_t n = 0;
  for (unsigned i = 0; i < num_shards_; ++i) {
    n += slots_[i].evictable.load(std::memory_order_relaxed);
  }
  return n;
}

double MemoryBudget::ShareOf(unsigned shard) const {
  const int64_t all = EvictableKeys();
  if (all <= 0) return 1.0;
  return static_cast<double>(slots_[shard].evictable.load(std::memory_order_relaxed)) /
         static_cast<double>(all);
}

}  // namespace dashkv
