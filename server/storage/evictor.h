// Evictor: frees memory of one shard by evicting the keys maxmemory-policy allows, as Redis's
// evict.c does: each step samples maxmemory-samples random entries of every database of the
// shard into a pool of the best candidates, then evicts the best one still present.
// Thread: owned by shard thread.
//
// Design
//   Candidates: every key (allkeys-*) or the keys with an expiry (volatile-*), except keys a
//   transaction holds an intent lock on (evicting them would break its atomicity). Score, the
//   higher the sooner evicted: idle time (LRU), 255 - decayed counter (LFU), the remaining
//   time to live reversed (volatile-ttl); random policies evict the first candidate sampled.
//   Pool: Redis's EVPOOL_SIZE best candidates, ascending by score. A candidate is kept as its
//   place in the table (DashTable::Place: directory index, bucket, slot; no copy of the key) and
//   the score it had. Entries move (an insert's displacement, a split) and keys go, so the entry
//   found at a place when it comes to be evicted may be another key or none: it is evicted only
//   when it is still a candidate and scores at least the recorded score (an untouched key only
//   gains: it grows idler, its LFU counter decays, its deadline stays), so that a key touched
//   since, or a newer key that took the place, is dropped from the pool instead.
//   Sampling: DashTable::GetRandomIterator per sample; under volatile-* a database where keys
//   with an expiry are rare (< 1/8 of its keys) is walked from a cursor instead, bucket by
//   bucket, so that they are still found.
//   Bytes freed by an eviction: the heap bytes this thread's counter drops by (core/memory.h),
//   plus the bytes of the slot it empties (MemoryBudget's credit, see there).
//   Where it runs: before a write command on the shard that runs it (MakeRoom), and on every
//   shard's cron tick; both evict the shard's share (by evictable keys) of the overage the
//   budget's samples show, less what it evicted since them (MemoryBudget::ShareOf), so that
//   the shards of a pipelined batch, which run in parallel, do not each free all of it, and
//   shards a write load does not reach still give back their part.
//   In place: near the limit, an insert into a full segment evicts one entry of the buckets it
//   would use rather than split the segment (EvictInSegment). At the limit a split adds a
//   segment's bytes that the sampled eviction then takes from keys all over the table, so a
//   table would keep splitting and run at a fill between ~0.5 and ~0.96; and once the limit
//   stops the splits, every insert costs one eviction, so the key count stays where the
//   segments' bytes left it. So a segment does not split once the table's free slots can take
//   all the keys the memory left buys (SplitWouldOutgrow): the table fills up to about
//   kFullFill and its spare bytes hold keys. Evicting a little before the limit is the price
//   (a full segment's insert replaces a key while other segments still have room). The victim
//   is the best of up to 28 entries rather than of a few samples, found without a random
//   draw. Without a candidate there (volatile-* among keys without expiry, locked keys) the
//   segment splits.
//   A step is bounded by the time Redis allows (maxmemory-eviction-tenacity: 500 us at the
//   default 10); a write whose step ran out of time is admitted, as in Redis.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <vector>

#include "core/base/clock.h"
#include "core/base/split_mix.h"
#include "server/storage/memory_budget.h"
#include "server/storage/table_types.h"

namespace dashkv {

class DbSlice;
class Shard;

class Evictor {
 public:
  static constexpr size_t kPoolSize = 16;  // Redis's EVPOOL_SIZE

  explicit Evictor(Shard* shard) : shard_(shard) {}
  Evictor(const Evictor&) = delete;
  Evictor& operator=(const Evictor&) = delete;

  // The server's budget, given at start-up; nullptr (in-process tests): never evicts.
  void set_budget(MemoryBudget* budget) {
    budget_ = budget;
    pressure_ = budget != nullptr ? budget->pressure_flag() : &kNoPressure;
  }
  MemoryBudget* budget() const { return budget_; }
  // Whether the server was over maxmemory under an evicting policy at the last check.
  bool pressure() const { return pressure_->load(std::memory_order_relaxed); }

  // Frees memory before a write command while the server is over maxmemory: evicts this
  // shard's share (by evictable keys) of the overage. Returns false when
  // the write must be refused (-OOM): still over, and no shard has a key the policy may evict
  // (or the policy is noeviction).
  bool MakeRoom(int64_t now_ms);
  // Evicts this shard's share of the overage (bounded like a write's step) and publishes the
  // shard's figures to the budget. Called by the shard's cron while maxmemory is set.
  void Cron(int64_t now_ms);
  // Publishes this shard's credit and evictable key count (MemoryBudget::Publish).
  void Publish();
  // Eviction in place (DbSlice::in_place_evictor): an insert into `db` found its segment full.
  // Under an evicting policy, when a split would outgrow the limit (SplitWouldOutgrow), evicts
  // the entry the policy likes best among the insert's home and neighbour buckets (a freed
  // slot there takes the new entry directly), or, when neither holds a candidate, in the first
  // stash bucket that holds one. Returns the entries evicted (0 or 1); 0: the segment splits.
  unsigned EvictInSegment(DbSlice& db, const PrimeTable::HotBuckets& hot, int64_t now_ms);

 private:
  // A pooled key, named by its place in its database's table and the score it had (see
  // Design: Pool).
  struct Candidate {
    uint64_t score;
    PrimeTable::Place place;
    unsigned db;
  };
  // A table counts as full at this share of its slots: segments split before every slot is
  // taken (tests/core/dash_table_test.cc MemoryFigures: 0.9 - 0.96).
  static constexpr double kFullFill = 0.9;
  // The free slots count against the memory left only within 1/x of maxmemory of the limit.
  static constexpr int64_t kNearLimitDivisor = 8;
  // Whether splitting a full segment would grow this shard's tables past what maxmemory lets
  // them fill: the split itself would take the process over the limit, or the tables' free
  // slots already take as many keys as the shard's share of the memory left buys (at its
  // bytes per key).
  bool SplitWouldOutgrow();
  // Evicts this shard's part of `over` (MemoryBudget::ShareOf), counting what it frees against
  // the samples `over` was seen from. Sets *none as Evict does.
  void EvictShare(const MemoryBudget::OverageView& over, int64_t now_ms, bool* none);
  // Evicts until `target` bytes are freed or the step's time is spent; returns the bytes freed.
  // Sets *none when no candidate was left on this shard.
  int64_t Evict(int64_t target, int64_t now_ms, bool* none);
  // Evicts one key: the best of the pool after sampling (or a sampled one for the random
  // policies). Returns the bytes freed, or -1 when there is no candidate.
  int64_t EvictOne(MaxmemoryPolicy policy, int64_t now_ms);
  // Adds the candidates of `samples` entries of database `db` to the pool; for the random
  // policies returns the first candidate found (end() otherwise or when none). `locked`:
  // AnyLocked().
  PrimeIterator Sample(DbSlice& db, MaxmemoryPolicy policy, unsigned samples, bool locked,
                       int64_t now_ms);
  void Offer(const PrimeIterator& it, unsigned db, MaxmemoryPolicy policy, int64_t now_ms);
  // Whether the policy may evict the entry: `locked` says whether any intent lock is held on
  // this shard (then the entry's key is checked against them).
  bool IsCandidate(const PrimeIterator& it, unsigned db, MaxmemoryPolicy policy,
                   bool locked) const {
    if (IsVolatilePolicy(policy) && !it->first.HasExpire()) return false;
    return !locked || !KeyLocked(it, db);
  }
  // Whether a transaction holds an intent lock on the entry's key.
  bool KeyLocked(const PrimeIterator& it, unsigned db) const;
  // Whether any intent lock is held on this shard (one check per step, not per sample).
  bool AnyLocked() const;
  uint64_t Score(const PrimeIterator& it, MaxmemoryPolicy policy, int64_t now_ms) const;
  // Erases the entry as evicted (expired if its deadline passed); returns the bytes freed.
  int64_t Remove(DbSlice& db, PrimeIterator it, int64_t now_ms);
  // Returns the time a step may take (Redis's evictionTimeLimitUs), in microseconds.
  uint64_t StepLimitUs() const;

  static inline const std::atomic<bool> kNoPressure{false};
  Shard* shard_;
  MemoryBudget* budget_ = nullptr;
  const std::atomic<bool>* pressure_ = &kNoPressure;  // the budget's flag: one load per write
  std::array<Candidate, kPoolSize> pool_;  // [0, pool_size_): ascending score, the best last
  size_t pool_size_ = 0;
  std::vector<uint64_t> cursors_;  // per database: the walk of sparse volatile keys
  // The bytes this shard evicted (EvictShare) since the budget's samples of that generation.
  uint64_t evicted_generation_ = 0;
  int64_t evicted_since_sample_ = 0;
  // Seeded from the clock and this object's address: absl's generators draw their seed from a
  // shared pool, which the shards would initialize concurrently at start-up.
  SplitMix64 gen_{static_cast<uint64_t>(NowUs()) ^ reinterpret_cast<uintptr_t>(this)};
};

// Returns whether a write must get -OOM now (scripts' checks): maxmemory (the server's setting)
// is set and exceeded, and under an evicting policy the calling thread's shard could not get
// under it (MakeRoom; with `evict` false, as inside a running script where Redis does not
// evict, only when no shard has an evictable key). Off engine threads, or without a budget:
// used_memory > maxmemory.
bool WriteRefusedForMemory(const std::atomic<int64_t>& maxmemory, int64_t now_ms,
                           bool evict = true);

}  // namespace dashkv
