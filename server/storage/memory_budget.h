// MemoryBudget: the server-wide view of maxmemory that the shards share: how far the process is
// over the limit, what each shard could still evict, and a "pressure" flag the write path reads
// with one load.
// Thread-safe: every field is atomic; each shard publishes only its own slot.
//
// Design
//   used_memory (core/memory.h) counts every allocation, but evicting a small key (inline key and
//   value) frees no allocation: its slot stays in the Dashtable's segment for the next insert.
//   So the limit is compared with used_memory minus the bytes of slots that eviction or deletion
//   emptied and that the table will refill before it grows (each shard's "credit": its tables'
//   high-water entry count minus their size, times the bytes a slot costs). Without this credit
//   a table of small keys would stay "over" after every eviction and be emptied by the next
//   writes. Each shard publishes its credit and its count of evictable keys (all keys, or keys
//   with an expiry under volatile-*) after it evicts and on every cron tick, so the figures
//   another thread reads may be up to one tick old.
//
//   The resident set: under an evicting policy the limit also keeps the process's RSS within
//   kRssHeadroom of maxmemory. RSS exceeds used_memory by the empty server's own footprint
//   (code, libraries, stacks: ~12 MB) and by what the allocator holds beyond the live blocks
//   (partly filled pages, freed pages not yet returned); both are the "gap". Shard 0's cron
//   samples RSS and used_memory (SampleRss), and the limit the overage is measured against is
//   lowered by the part of the gap beyond the headroom: used_memory is held at
//   maxmemory x (1 + kRssHeadroom) - gap, never below maxmemory x kMinLimitShare, never above
//   maxmemory, and only for a maxmemory of kMinLimitForRss or more. Evicting lowers used_memory
//   but not RSS (the allocator keeps the freed blocks for the next inserts), so a gap computed
//   after an eviction would grow by what was just evicted and drive further evictions with no
//   end: the gap is taken anew only when RSS grew
//   since the last sample (new pages were touched, so the gap is real), and otherwise may only
//   shrink (pages were returned). Not applied in sanitizer builds, whose RSS is mostly shadow
//   memory.
//
//   Sampled sums: the limit is checked once per batch and before each write under pressure, on
//   every engine, so the check reads no shared state that others write often. used_memory comes
//   from core/memory.h's sample (SampledUsedMemory: the last exact sum plus the calling thread's
//   own change since), and the shards' credits and evictable keys from a sample of the slots
//   kept the same way (the sums, and each slot's figures as summed, double-buffered by a
//   generation's parity), corrected by the calling shard's own slot. A check that finds the
//   samples older than kSamplePeriodUs takes both anew, unless another thread is taking them
//   (a try-lock; nobody waits): other threads' changes reach a check at most about one period
//   late (at 1M writes/s per thread, ~100 writes' worth each), its own at once. With several
//   shards, each frees its share (by evictable keys) of the samples' overage less what it
//   already evicted since them (ShareOf), so that the shards' frees add up to the overage
//   although none sees the others' until the next sample. Its thread's own change is left out
//   of that part: a thread's counter also moves with what its connections allocate and free
//   again (read buffers, batches, replies), and a shard that evicted for such a rise gets
//   nothing back when it falls, so the thread whose buffers swing more would evict more for as
//   long as the load runs, and its shard would shrink while the other shards' heaps grow into
//   new pages (a 2-thread write flood held 60/40 of the keys and RSS 15% over the limit while
//   used_memory fell under it). The shard's own inserts since the sample count at the next
//   sample, at most one period late. A single
//   shard frees the whole overage as it sees it, own change included. INFO and MEMORY read the
//   exact used_memory (UsedMemory), which also renews core/memory.h's sample.
//
//   Segment chunk reserves: each shard keeps up to ChunkReserve::kCapacity 2 MiB chunks faulted
//   in ahead of its tables' growth (core/chunk_reserve.h). They are resident and counted in
//   used_memory before any data is in them, and a table grows in waves (its segments fill at
//   about the same time), so a wave near the limit refilled every reserve at once: with 4
//   shards up to 32 MiB over a 100 MB limit, allocated on the background thread where no write
//   is checked against the limit. The writes then evicted that much data, whose blocks stay
//   resident for the next inserts: RSS stayed over the limit by the overshoot for the rest of
//   the run (bench/e2e/CACHE_RESULTS.md). So under maxmemory the reserves of all shards together
//   hold at most 1/kReserveShareDivisor of it (ReserveChunkCap; no chunk below 128 MiB of
//   maxmemory per shard: those tables allocate their chunks themselves and fault them in as
//   they fill them).
//
//   Time over the limit (INFO total_eviction_exceeded_time / current_eviction_exceeded_time,
//   as Redis 7.0 counts them): a stretch starts at the first Refresh that finds the process
//   over, under any policy (noeviction too), and ends at the first that finds it within. The
//   checks run once per batch, before each write under pressure and on every cron tick, all
//   only while maxmemory is set, so a stretch ends at most one tick late when no command
//   comes. A Refresh reads the clock only when the state changes; threads that race on a change
//   agree through one compare-and-swap (start) or exchange (end).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

#include "server/storage/eviction_settings.h"

namespace dashkv {

class MemoryBudget {
 public:
  // RSS may exceed maxmemory by this share before the limit is lowered (the aim is
  // 10%; the rest covers the growth between two samples and the emptied slots' credit, which
  // is resident: a 4-thread write flood over 100 MB peaked at RSS +8.4..10.2% with 7%,
  // +8.6..9.0% with 6%, bench/e2e/eviction_flood.py).
  static constexpr double kRssHeadroom = 0.06;
  // The lowered limit never goes under this share of maxmemory.
  static constexpr double kMinLimitShare = 0.75;
  // Smaller limits are not lowered: the empty server's own ~12 MB would dominate the gap, and
  // such a limit would hold a quarter fewer keys than Redis's at the same setting.
  static constexpr int64_t kMinLimitForRss = int64_t{64} << 20;

  // The samples (Design) are taken anew when older than this (by default).
  static constexpr int64_t kSamplePeriodUs = 100;
  // Passed as `shard` by a thread that owns no shard.
  static constexpr unsigned kNoShard = ~0u;
  // The shards' chunk reserves together hold at most this share (1/x) of maxmemory (Design).
  static constexpr int64_t kReserveShareDivisor = 64;

  // `maxmemory` and `settings` are the server's (Config); they outlive this object.
  // `sample_period_us`: kSamplePeriodUs, or longer in tests that take the samples themselves.
  MemoryBudget(unsigned num_shards, const std::atomic<int64_t>* maxmemory,
               const EvictionSettings* settings, int64_t sample_period_us = kSamplePeriodUs);

  int64_t maxmemory() const { return maxmemory_->load(std::memory_order_relaxed); }
  unsigned num_shards() const { return num_shards_; }
  const EvictionSettings& settings() const { return *settings_; }
  MaxmemoryPolicy policy() const { return settings_->policy.load(std::memory_order_relaxed); }

  // The overage as one thread sees it (Design: Sampled sums), in bytes (<= 0: within the
  // limit; 0 without maxmemory): used_memory minus the shards' credit under an evicting policy,
  // used_memory alone under noeviction, less the limit.
  struct OverageView {
    int64_t sampled = 0;  // from the samples alone
    int64_t own = 0;      // the calling thread's and its shard's change since the samples
    uint64_t generation = 0;  // the samples' (changes when they are taken anew)
    int64_t total() const { return sampled + own; }
  };
  // Returns the overage as shard `shard`'s thread sees it (kNoShard: a thread with no shard).
  // Takes the samples anew when they are older than the sample period and no other thread is
  // taking them; otherwise a clock read and a few loads.
  OverageView SeenBy(unsigned shard = kNoShard);
  int64_t Overage(unsigned shard = kNoShard) { return SeenBy(shard).total(); }
  // Sets the pressure flag from SeenBy(shard), notes a start or end of a stretch over the limit
  // (Design) and returns that view.
  OverageView Refresh(unsigned shard = kNoShard) {
    const OverageView view = SeenBy(shard);
    const int64_t over = view.total();
    set_pressure(over > 0 && policy() != MaxmemoryPolicy::kNoEviction);
    if ((over > 0) != exceeded()) [[unlikely]] NoteExceeded(over > 0, MonotonicUs());
    return view;
  }

  // Whether the last check found the process over the limit under an evicting policy (one
  // relaxed load): the shards then evict before each write.
  bool pressure() const { return pressure_.load(std::memory_order_relaxed); }
  const std::atomic<bool>* pressure_flag() const { return &pressure_; }
  void set_pressure(bool on) {
    if (pressure() != on) pressure_.store(on, std::memory_order_relaxed);
  }

  // Samples the process's RSS and used_memory and updates the gap (Design). Shard 0's cron,
  // every tick while maxmemory is set.
  void SampleRss();
  // The same with given figures (tests).
  void SampleRss(int64_t rss, int64_t used);
  // Returns the limit the overage is measured against (Design): maxmemory, lowered under an
  // evicting policy by the RSS gap beyond the headroom.
  int64_t EffectiveLimit() const;
  // Returns the chunks each shard's segment chunk reserve may hold (Design): all it can without
  // maxmemory, else the shard's part of 1/kReserveShareDivisor of maxmemory.
  unsigned ReserveChunkCap() const;
  // Returns the gap between RSS and used_memory as last taken (Design).
  int64_t rss_gap() const { return rss_gap_.load(std::memory_order_relaxed); }

  // Time over the limit (Design), in milliseconds: `total` includes the running stretch,
  // `current` is that stretch (0 when within the limit).
  struct ExceededTime {
    int64_t total_ms = 0;
    int64_t current_ms = 0;
  };
  // Returns the time over the limit now (INFO). Without maxmemory nothing is over: a stretch
  // still running ends here, since the checks that would end it run only while maxmemory is
  // set (Redis would go on counting it until maxmemory is set again).
  ExceededTime TakeExceededTime();
  // Returns the time over the limit at `now_us` (MonotonicUs), changing nothing.
  ExceededTime exceeded_time(int64_t now_us) const;
  // Whether a stretch over the limit is running (one relaxed load).
  bool exceeded() const { return exceeded_since_us_.load(std::memory_order_relaxed) != 0; }
  // Starts (`over`) or ends a stretch at `now_us` unless one is already running (or none is).
  void NoteExceeded(bool over, int64_t now_us);
  // Zeroes the time over the limit and forgets a running stretch; the next check that finds
  // the process over starts a new one (CONFIG RESETSTAT, as Redis's resetServerStats).
  void ResetExceededTime();
  // Returns the steady clock in microseconds (the stretches' clock; never 0).
  static int64_t MonotonicUs();

  // Shard `shard`'s figures (its thread only).
  void Publish(unsigned shard, int64_t credit, int64_t evictable);
  // Returns the evictable keys published by all shards, from the sample as seen by shard
  // `shard`'s thread (Design).
  int64_t EvictableKeys(unsigned shard = kNoShard) const;
  // Returns shard `shard`'s share of the evictable keys (1.0 when none anywhere): its own
  // published count over EvictableKeys(shard). Its thread only.
  double ShareOf(unsigned shard) const;
  // Returns the bytes shard `shard` is to free when it sees `over` (from SeenBy(shard)) and
  // has evicted `evicted` bytes since the samples of `over` were taken (Design: Sampled sums):
  // with several shards its share (ShareOf) of the samples' overage less `evicted`, so that
  // the parts add up to the overage (were each to free the whole overage it sees, the shards
  // would together free it once per shard in every sample period); a single shard, the whole
  // overage as it sees it. Its thread only.
  int64_t ShareOf(unsigned shard, const OverageView& over, int64_t evicted) const;
  // Takes both samples (Design) now unless another thread is taking them; returns whether it
  // did. Overage does this when they are older than kSamplePeriodUs.
  bool Resample();

 private:
  struct alignas(64) Slot {
    std::atomic<int64_t> credit{0};
    std::atomic<int64_t> evictable{0};
    // `credit` and `evictable` as the slot sample of even and odd generation read them.
    std::atomic<int64_t> sampled_credit[2] = {0, 0};
    std::atomic<int64_t> sampled_evictable[2] = {0, 0};
  };
  // Returns EffectiveLimit() for the given maxmemory and policy.
  int64_t EffectiveLimit(int64_t limit, MaxmemoryPolicy policy) const;
  unsigned num_shards_;
  const std::atomic<int64_t>* maxmemory_;
  const EvictionSettings* settings_;
  std::unique_ptr<Slot[]> slots_;
  std::atomic<bool> pressure_{false};
  std::atomic<int64_t> rss_gap_{0};
  std::atomic<int64_t> exceeded_since_us_{0};  // start of the running stretch; 0: none
  std::atomic<int64_t> exceeded_total_us_{0};  // the stretches that ended
  // The slot sample (Design): sums of even and odd generation, published generation.
  std::atomic<int64_t> sampled_credit_[2] = {0, 0};
  std::atomic<int64_t> sampled_evictable_[2] = {0, 0};
  std::atomic<uint64_t> slot_gen_{0};
  // When both samples were last taken (CycleClock ticks), and the try-lock of who takes them.
  alignas(64) std::atomic<uint64_t> sampled_at_{0};
  std::atomic<bool> sampling_{false};
  uint64_t period_ticks_;  // the sample period in CycleClock ticks
  int64_t last_rss_ = 0;  // SampleRss's caller only
};

}  // namespace dashkv
