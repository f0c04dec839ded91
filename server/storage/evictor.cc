#include "server/storage/evictor.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/memory.h"
#include "server/cycle_clock.h"
#include "server/storage/db_slice.h"
#include "server/storage/shard.h"
#include "server/tx/transaction.h"

namespace dashkv {
namespace {

// Buckets a walk for sparse volatile keys visits per database per step (~14k entries at most).
constexpr unsigned kWalkBuckets = 1024;
// Samples per database per step at most, whatever maxmemory-samples says (a step stays bounded).
constexpr int64_t kMaxSamples = 1024;

bool IsRandomPolicy(MaxmemoryPolicy p) {
  return p == MaxmemoryPolicy::kAllKeysRandom || p == MaxmemoryPolicy::kVolatileRandom;
}

}  // namespace

uint64_t Evictor::StepLimitUs() const {
  const int64_t t = budget_->settings().tenacity.load(std::memory_order_relaxed);
  if (t <= 10) return 50 * static_cast<uint64_t>(t);
  if (t < 100) return static_cast<uint64_t>(500.0 * std::pow(1.15, static_cast<double>(t - 10)));
  return std::numeric_limits<uint64_t>::max();
}

// Inline: it runs for every sample (Offer) and for every entry of an in-place eviction.
inline uint64_t Evictor::Score(const PrimeIterator& it, MaxmemoryPolicy policy,
                               int64_t now_ms) const {
  if (policy == MaxmemoryPolicy::kVolatileTtl) {
    return std::numeric_limits<uint64_t>::max() - static_cast<uint64_t>(it->first.ExpireTimeMs());
  }
  if (!IsLfuPolicy(policy)) [[likely]] {
    return LruIdleMs(GetRecord(it->first, it->second, AccessMode::kLru, now_ms), now_ms);
  }
  const uint32_t record = GetRecord(it->first, it->second, AccessMode::kLfu, now_ms);
  const int64_t decay = budget_->settings().lfu_decay_time.load(std::memory_order_relaxed);
  return 255 - LfuDecayed(record, now_ms, decay);
}

bool Evictor::MakeRoom(int64_t now_ms) {
  if (budget_ == nullptr) return true;
  const MemoryBudget::OverageView over = budget_->Refresh(shard_->index());
  if (over.total() <= 0) return true;
  if (budget_->policy() == MaxmemoryPolicy::kNoEviction) return false;
  // This shard's share: the shards of one pipelined batch run its writes in parallel, and each
  // freeing the whole overage would evict several times too much.
  bool none = false;
  EvictShare(over, now_ms, &none);
  Publish();
  // Out of time or still over: admitted, as Redis; the next write or the cron goes on. Nothing
  // left here: admitted while another shard can still evict, refused when no shard can.
  return !none || budget_->EvictableKeys(shard_->index()) > 0;
}

void Evictor::Cron(int64_t now_ms) {
  if (budget_ == nullptr) return;
  const MemoryBudget::OverageView over = budget_->Refresh(shard_->index());
  if (over.total() > 0 && budget_->policy() != MaxmemoryPolicy::kNoEviction) {
    bool none = false;
    EvictShare(over, now_ms, &none);
  }
  Publish();
}

void Evictor::Publish() {
  if (budget_ == nullptr) return;
  const bool is_volatile = IsVolatilePolicy(budget_->policy());
  int64_t credit = 0, evictable = 0;
  for (unsigned i = 0; i < shard_->dbs_used(); ++i) {
    const DbSlice* db = shard_->db_if_exists(i);
    if (db == nullptr) continue;
    credit += db->SlotCredit();
    evictable += static_cast<int64_t>(is_volatile ? db->expires() : db->size());
  }
  budget_->Publish(shard_->index(), credit, evictable);
}

bool Evictor::SplitWouldOutgrow() {
  const int64_t room = -budget_->Overage(shard_->index());
  if (room <= static_cast<int64_t>(PrimeTable::segment_bytes())) return true;
  if (room > budget_->maxmemory() / kNearLimitDivisor) return false;
  // The shard's tables: their keys and the slots they can still fill.
  double keys = 0, free = 0;
  for (unsigned i = 0; i < shard_->dbs_used(); ++i) {
    const DbSlice* db = shard_->db_if_exists(i);
    if (db == nullptr) continue;
    keys += static_cast<double>(db->size());
    free += kFullFill * static_cast<double>(db->table().capacity()) -
            static_cast<double>(db->size());
  }
  if (free <= 0 || keys == 0) return false;
  // A key's bytes: its slot's share of a segment, and the heap its objects own, which the
  // shard's thread allocated (its counter; connection buffers on it are noise). The shards
  // hold like shares of the keys and of the memory left.
  const double per_key =
      static_cast<double>(std::max<int64_t>(0, ThreadUsedMemory())) / keys +
      static_cast<double>(PrimeTable::segment_bytes()) / PrimeTable::kSegmentCapacity;
  return free * per_key >= static_cast<double>(room) / budget_->num_shards();
}

unsigned Evictor::EvictInSegment(DbSlice& db, const PrimeTable::HotBuckets& hot,
                                 int64_t now_ms) {
  if (budget_ == nullptr || budget_->maxmemory() <= 0) return 0;
  const MaxmemoryPolicy policy = budget_->policy();
  if (policy == MaxmemoryPolicy::kNoEviction) return 0;
  if (!SplitWouldOutgrow()) return 0;
  const bool locked = AnyLocked();
  const bool random = IsRandomPolicy(policy);
  const unsigned index = db.index();
  PrimeIterator best = db.table().end();
  uint64_t best_score = 0, seen = 0;
  auto consider = [&](PrimeIterator it) {
    for (; !it.is_done(); ++it) {
      if (!IsCandidate(it, index, policy, locked)) continue;
      ++seen;
      if (random) {
        if (gen_() % seen == 0) best = it;  // uniform among the candidates seen
        continue;
      }
      const uint64_t score = Score(it, policy, now_ms);
      if (best.is_done() || score > best_score) {
        best = it;
        best_score = score;
      }
    }
  };
  // HotBuckets: [1] home, [2] its neighbour, [4..] the stash buckets.
  consider(hot.buckets[1]);
  consider(hot.buckets[2]);
  for (unsigned s = PrimeTable::HotBuckets::kNumRegular; best.is_done() && s < hot.kNum; ++s) {
    consider(hot.buckets[s]);
  }
  if (best.is_done()) return 0;
  if (!DbSlice::IsExpired(best, now_ms)) ++shard_->stats().evicted_in_place;
  Remove(db, best, now_ms);
  return 1;
}

void Evictor::EvictShare(const MemoryBudget::OverageView& over, int64_t now_ms, bool* none) {
  if (over.generation != evicted_generation_) {
    evicted_generation_ = over.generation;
    evicted_since_sample_ = 0;
  }
  const int64_t part = budget_->ShareOf(shard_->index(), over, evicted_since_sample_);
  if (part > 0) evicted_since_sample_ += Evict(part, now_ms, none);
}

int64_t Evictor::Evict(int64_t target, int64_t now_ms, bool* none) {
  const MaxmemoryPolicy policy = budget_->policy();
  // The time-stamp counter: a step reads the clock at least once, and steady_clock costs
  // several times more.
  const uint64_t start = CycleClock::Now();
  const double limit_ticks = static_cast<double>(StepLimitUs()) * CycleClock::TicksPerUsec();
  int64_t freed = 0;
  for (unsigned n = 1; freed < target; ++n) {
    const int64_t f = EvictOne(policy, now_ms);
    if (f < 0) {
      *none = true;
      break;
    }
    freed += f;
    // Like Redis: the clock is read every 16 keys.
    if (n % 16 == 0 && static_cast<double>(CycleClock::Now() - start) > limit_ticks) break;
  }
  return freed;
}

int64_t Evictor::EvictOne(MaxmemoryPolicy policy, int64_t now_ms) {
  const unsigned samples = static_cast<unsigned>(
      std::clamp<int64_t>(budget_->settings().samples.load(std::memory_order_relaxed), 1,
                          kMaxSamples));
  if (cursors_.size() < shard_->num_dbs()) cursors_.resize(shard_->num_dbs(), 0);
  const bool locked = AnyLocked();
  if (IsRandomPolicy(policy)) {
    // Databases in turn from a random one, as Redis's loop over the databases.
    const unsigned n = shard_->dbs_used();
    if (n == 0) return -1;
    const unsigned first = static_cast<unsigned>(gen_() % n);
    for (unsigned k = 0; k < n; ++k) {
      DbSlice* db = shard_->db_if_exists((first + k) % n);
      if (db == nullptr || db->size() == 0) continue;
      PrimeIterator it = Sample(*db, policy, samples, locked, now_ms);
      if (!it.is_done()) return Remove(*db, it, now_ms);
    }
    return -1;
  }
  for (unsigned i = 0; i < shard_->dbs_used(); ++i) {
    DbSlice* db = shard_->db_if_exists(i);
    if (db != nullptr && db->size() > 0) Sample(*db, policy, samples, locked, now_ms);
  }
  // The best candidate still at its place and as good (Design: Pool).
  while (pool_size_ > 0) {
    const Candidate& c = pool_[--pool_size_];
    DbSlice* db = shard_->db_if_exists(c.db);
    if (db == nullptr) continue;
    PrimeIterator it = db->table().AtPlace(c.place);
    if (it.is_done() || !IsCandidate(it, c.db, policy, locked) ||
        Score(it, policy, now_ms) < c.score) {
      continue;
    }
    return Remove(*db, it, now_ms);
  }
  return -1;
}

PrimeIterator Evictor::Sample(DbSlice& db, MaxmemoryPolicy policy, unsigned samples,
                              bool locked, int64_t now_ms) {
  const unsigned index = db.index();
  const bool random = IsRandomPolicy(policy);
  PrimeIterator found = db.table().end();
  if (IsVolatilePolicy(policy) && db.expires() * 8 < db.size()) {
    // Keys with an expiry are rare here: walk buckets from a cursor until enough are seen.
    if (db.expires() == 0) return found;
    unsigned seen = 0;
    uint64_t& cursor = cursors_[index];
    for (unsigned b = 0; b < kWalkBuckets && seen < samples && found.is_done(); ++b) {
      cursor = db.ScanWithExpired(cursor, [&](PrimeIterator it) {
        if (!found.is_done() || !IsCandidate(it, index, policy, locked)) return;
        ++seen;
        if (random) {
          found = it;
        } else {
          Offer(it, index, policy, now_ms);
        }
      });
    }
    return found;
  }
  for (unsigned s = 0; s < samples; ++s) {
    PrimeIterator it = db.table().GetRandomIterator(gen_);
    if (it.is_done() || !IsCandidate(it, index, policy, locked)) continue;
    if (random) return it;
    Offer(it, index, policy, now_ms);
  }
  return found;
}

void Evictor::Offer(const PrimeIterator& it, unsigned db, MaxmemoryPolicy policy,
                    int64_t now_ms) {
  const uint64_t score = Score(it, policy, now_ms);
  if (pool_size_ == kPoolSize && score <= pool_[0].score) return;
  const PrimeTable::Place place = it.place();
  // The new candidate goes before the first that scores at least as much (the pool ascends;
  // among equal scores the newer goes below, so the older, sampled first, is evicted first).
  size_t pos = std::lower_bound(pool_.begin(), pool_.begin() + pool_size_, score,
                                [](const Candidate& c, uint64_t s) { return c.score < s; }) -
               pool_.begin();
  // An entry pooled already scores the same (in the same clock tick) and is not pooled twice;
  // one that scored differently when pooled may stay twice, which costs a pool slot, and the
  // second copy finds its place empty or the entry there no better (Design: Pool).
  for (size_t i = pos; i < pool_size_ && pool_[i].score == score; ++i) {
    const Candidate& c = pool_[i];
    if (c.place.seg_idx == place.seg_idx && c.place.bucket == place.bucket &&
        c.place.slot == place.slot && c.db == db) {
      return;
    }
  }
  if (pool_size_ == kPoolSize) {
    // Full: the worst (first) goes, the ones below the new candidate move down.
    std::copy(pool_.begin() + 1, pool_.begin() + pos, pool_.begin());
    --pos;
  } else {
    std::copy_backward(pool_.begin() + pos, pool_.begin() + pool_size_,
                       pool_.begin() + pool_size_ + 1);
    ++pool_size_;
  }
  pool_[pos] = Candidate{score, place, db};
}

bool Evictor::AnyLocked() const { return !shard_->locks().empty(); }

bool Evictor::KeyLocked(const PrimeIterator& it, unsigned db) const {
  std::string key = it->first.ToString();
  return shard_->locks().Conflicts(LockHashOf(db, key), LockMode::kExclusive);
}

int64_t Evictor::Remove(DbSlice& db, PrimeIterator it, int64_t now_ms) {
  const int64_t slot = db.SlotBytes();
  const int64_t before = ThreadUsedMemory();
  db.Erase(it, DbSlice::IsExpired(it, now_ms) ? RemoveReason::kExpired : RemoveReason::kEvicted);
  return std::max<int64_t>(0, before - ThreadUsedMemory()) + slot;
}

bool WriteRefusedForMemory(const std::atomic<int64_t>& maxmemory, int64_t now_ms, bool evict) {
  const int64_t limit = maxmemory.load(std::memory_order_relaxed);
  if (limit <= 0) return false;
  Shard* shard = Shard::Current();
  if (shard == nullptr || shard->evictor().budget() == nullptr) return UsedMemory() > limit;
  MemoryBudget& budget = *shard->evictor().budget();
  if (evict) return !shard->evictor().MakeRoom(now_ms);
  return budget.Overage(shard->index()) > 0 &&
         (budget.policy() == MaxmemoryPolicy::kNoEviction ||
          budget.EvictableKeys(shard->index()) == 0);
}

}  // namespace dashkv
