#include "server/storage/memory_budget.h"

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
  if (policy() != MaxmemoryPolicy::kNoEviction) {
    for (unsigned i = 0; i < num_shards_; ++i) {
      used -= slots_[i].credit.load(std::memory_order_relaxed);
    }
  }
  return used - limit;
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
