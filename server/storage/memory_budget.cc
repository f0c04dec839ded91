#include "server/storage/memory_budget.h"

#include <algorithm>
#include <chrono>

#include "core/chunk_reserve.h"
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

unsigned MemoryBudget::ReserveChunkCap() const {
  const int64_t limit = maxmemory();
  if (limit <= 0) return ChunkReserve::kCapacity;
  const int64_t per_shard = limit / kReserveShareDivisor / num_shards_;
  const int64_t chunks = per_shard / static_cast<int64_t>(ChunkReserve::kChunkBytes);
  return static_cast<unsigned>(std::min<int64_t>(chunks, ChunkReserve::kCapacity));
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

int64_t MemoryBudget::MonotonicUs() {
  const auto now = std::chrono::steady_clock::now().time_since_epoch();
  return std::max<int64_t>(1, std::chrono::duration_cast<std::chrono::microseconds>(now).count());
}

void MemoryBudget::NoteExceeded(bool over, int64_t now_us) {
  if (over) {
    int64_t none = 0;
    exceeded_since_us_.compare_exchange_strong(none, std::max<int64_t>(1, now_us),
                                               std::memory_order_relaxed);
    return;
  }
  const int64_t since = exceeded_since_us_.exchange(0, std::memory_order_relaxed);
  if (since != 0) {
    exceeded_total_us_.fetch_add(std::max<int64_t>(0, now_us - since), std::memory_order_relaxed);
  }
}

MemoryBudget::ExceededTime MemoryBudget::exceeded_time(int64_t now_us) const {
  const int64_t since = exceeded_since_us_.load(std::memory_order_relaxed);
  const int64_t current = since != 0 ? std::max<int64_t>(0, now_us - since) : 0;
  return {(exceeded_total_us_.load(std::memory_order_relaxed) + current) / 1000, current / 1000};
}

MemoryBudget::ExceededTime MemoryBudget::TakeExceededTime() {
  const int64_t now = MonotonicUs();
  if (maxmemory() <= 0 && exceeded()) NoteExceeded(false, now);
  return exceeded_time(now);
}

void MemoryBudget::ResetExceededTime() {
  exceeded_since_us_.store(0, std::memory_order_relaxed);
  exceeded_total_us_.store(0, std::memory_order_relaxed);
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
