#include "server/storage/memory_budget.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "core/chunk_reserve.h"
#include "core/memory.h"
#include "server/cycle_clock.h"

namespace dashkv {

MemoryBudget::MemoryBudget(unsigned num_shards, const std::atomic<int64_t>* maxmemory,
                           const EvictionSettings* settings, int64_t sample_period_us)
    : num_shards_(num_shards),
      maxmemory_(maxmemory),
      settings_(settings),
      slots_(new Slot[num_shards]),
      period_ticks_(static_cast<uint64_t>(CycleClock::TicksPerUsec() *
                                          static_cast<double>(sample_period_us))) {}

MemoryBudget::OverageView MemoryBudget::SeenBy(unsigned shard) {
  const int64_t limit = maxmemory();
  if (limit <= 0) return {};
  // Signed: a sample stamped by a core whose counter runs slightly ahead is not stale.
  const auto age =
      static_cast<int64_t>(CycleClock::Now() - sampled_at_.load(std::memory_order_relaxed));
  if (age >= static_cast<int64_t>(period_ticks_)) [[unlikely]] Resample();
  const UsedMemorySample used = SampledUsedMemory();
  const MaxmemoryPolicy p = policy();
  if (p == MaxmemoryPolicy::kNoEviction) return {used.sum - limit, used.own};
  const uint64_t gen = slot_gen_.load(std::memory_order_acquire);
  const size_t k = gen & 1;
  OverageView view{used.sum - sampled_credit_[k].load(std::memory_order_relaxed) -
                       EffectiveLimit(limit, p),
                   used.own, gen};
  if (shard < num_shards_) {
    const Slot& slot = slots_[shard];
    view.own -= slot.credit.load(std::memory_order_relaxed) -
                slot.sampled_credit[k].load(std::memory_order_relaxed);
  }
  return view;
}

bool MemoryBudget::Resample() {
  if (sampling_.exchange(true, std::memory_order_acquire)) return false;
  UsedMemory();  // takes core/memory.h's sample
  // sampling_ makes this the only writer of the slot sample.
  const uint64_t gen = slot_gen_.load(std::memory_order_relaxed) + 1;
  const size_t k = gen & 1;
  int64_t credit = 0, evictable = 0;
  for (unsigned i = 0; i < num_shards_; ++i) {
    Slot& slot = slots_[i];
    const int64_t c = slot.credit.load(std::memory_order_relaxed);
    const int64_t e = slot.evictable.load(std::memory_order_relaxed);
    slot.sampled_credit[k].store(c, std::memory_order_relaxed);
    slot.sampled_evictable[k].store(e, std::memory_order_relaxed);
    credit += c;
    evictable += e;
  }
  sampled_credit_[k].store(credit, std::memory_order_relaxed);
  sampled_evictable_[k].store(evictable, std::memory_order_relaxed);
  slot_gen_.store(gen, std::memory_order_release);
  sampled_at_.store(CycleClock::Now(), std::memory_order_relaxed);
  sampling_.store(false, std::memory_order_release);
  return true;
}

int64_t MemoryBudget::EvictableKeys(unsigned shard) const {
  const size_t k = slot_gen_.load(std::memory_order_acquire) & 1;
  int64_t sum = sampled_evictable_[k].load(std::memory_order_relaxed);
  if (shard < num_shards_) {
    const Slot& slot = slots_[shard];
    sum += slot.evictable.load(std::memory_order_relaxed) -
           slot.sampled_evictable[k].load(std::memory_order_relaxed);
  }
  return sum;
}

int64_t MemoryBudget::EffectiveLimit() const { return EffectiveLimit(maxmemory(), policy()); }

int64_t MemoryBudget::EffectiveLimit(int64_t limit, MaxmemoryPolicy policy) const {
  if (limit < kMinLimitForRss || policy == MaxmemoryPolicy::kNoEviction) return limit;
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

double MemoryBudget::ShareOf(unsigned shard) const {
  if (num_shards_ == 1) return 1.0;
  const int64_t all = EvictableKeys(shard);
  if (all <= 0) return 1.0;
  const auto own = static_cast<double>(slots_[shard].evictable.load(std::memory_order_relaxed));
  return std::min(1.0, own / static_cast<double>(all));
}

int64_t MemoryBudget::ShareOf(unsigned shard, const OverageView& over, int64_t evicted) const {
  const double share = ShareOf(shard);
  if (share >= 1.0) return over.total();
  return static_cast<int64_t>(std::ceil(static_cast<double>(over.sampled) * share)) - evicted;
}

}  // namespace dashkv
