#include "server/storage/evictor.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

#include "core/memory.h"
#include "server/storage/db_slice.h"
#include "server/storage/shard.h"
#include "server/tx/transaction.h"

namespace dashkv {
namespace {

// Buckets a walk for sparse volatile keys visits per database per step (~14k entries at most).
constexpr unsigned kWalkBuckets = 1024;
// Samples per database per step at most, whatever maxmemory-samples says (a step stays bounded).
constexpr int64_t kMaxSamples = 1024;

uint64_t NowUsSteady() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count());
}

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

bool Evictor::MakeRoom(int64_t now_ms) {
  if (budget_ == nullptr) return true;
  const int64_t over = budget_->Refresh();
  if (over <= 0) return true;
  if (budget_->policy() == MaxmemoryPolicy::kNoEviction) return false;
  // This shard's share: the shards of one pipelined batch run its writes in parallel, and each
  // freeing the whole overage would evict several times too much.
  bool none = false;
  Evict(ShareOf(over), now_ms, &none);
  Publish();
  // Out of time or still over: admitted, as Redis; the next write or the cron goes on. Nothing
  // left here: admitted while another shard can still evict, refused when no shard can.
  return !none || budget_->EvictableKeys() > 0;
}

int64_t Evictor::ShareOf(int64_t over) const {
  return static_cast<int64_t>(
      std::ceil(static_cast<double>(over) * budget_->ShareOf(shard_->index())));
}

void Evictor::Cron(int64_t now_ms) {
  if (budget_ == nullptr) return;
  const int64_t over = budget_->Refresh();
  if (over > 0 && budget_->policy() != MaxmemoryPolicy::kNoEviction) {
    bool none = false;
    Evict(ShareOf(over), now_ms, &none);
  }
  Publish();
}

void Evictor::Publish() {
  if (budget_ == nullptr) return;
  const bool is_volatile = IsVolatilePolicy(budget_->policy());
  int64_t credit = 0, evictable = 0;
  for (unsigned i = 0; i < shard_->num_dbs(); ++i) {
    const DbSlice* db = shard_->db_if_exists(i);
    if (db == nullptr) continue;
    credit += db->SlotCredit();
    evictable += static_cast<int64_t>(is_volatile ? db->expires() : db->size());
  }
  budget_->Publish(shard_->index(), credit, evictable);
}

int64_t Evictor::Evict(int64_t target, int64_t now_ms, bool* none) {
  const MaxmemoryPolicy policy = budget_->policy();
  const uint64_t start = NowUsSteady();
  const uint64_t limit = StepLimitUs();
  int64_t freed = 0;
  for (unsigned n = 1; freed < target; ++n) {
    const int64_t f = EvictOne(policy, now_ms);
    if (f < 0) {
      *none = true;
      break;
    }
    freed += f;
    // Like Redis: the clock is read every 16 keys.
    if (n % 16 == 0 && NowUsSteady() - start > limit) break;
  }
  return freed;
}

int64_t Evictor::EvictOne(MaxmemoryPolicy policy, int64_t now_ms) {
  const unsigned samples = static_cast<unsigned>(
      std::clamp<int64_t>(budget_->settings().samples.load(std::memory_order_relaxed), 1,
                          kMaxSamples));
  if (cursors_.size() < shard_->num_dbs()) cursors_.resize(shard_->num_dbs(), 0);
  if (IsRandomPolicy(policy)) {
    // Databases in turn from a random one, as Redis's loop over the databases.
    const unsigned n = shard_->num_dbs();
    const unsigned first = static_cast<unsigned>(gen_() % n);
    for (unsigned k = 0; k < n; ++k) {
      DbSlice* db = shard_->db_if_exists((first + k) % n);
      if (db == nullptr || db->size() == 0) continue;
      PrimeIterator it = Sample(*db, policy, samples, now_ms);
      if (!it.is_done()) return Remove(*db, it, now_ms);
    }
    return -1;
  }
  for (unsigned i = 0; i < shard_->num_dbs(); ++i) {
    DbSlice* db = shard_->db_if_exists(i);
    if (db != nullptr && db->size() > 0) Sample(*db, policy, samples, now_ms);
  }
  // The best candidate still present (a key of the pool may have gone or changed meanwhile).
  while (!pool_.empty()) {
    Candidate c = std::move(pool_.back());
    pool_.pop_back();
    DbSlice* db = shard_->db_if_exists(c.db);
    if (db == nullptr) continue;
    PrimeIterator it = db->table().Find(c.key);
    if (it.is_done() || !IsCandidate(it, c.db, policy)) continue;
    return Remove(*db, it, now_ms);
  }
  return -1;
}

PrimeIterator Evictor::Sample(DbSlice& db, MaxmemoryPolicy policy, unsigned samples,
                              int64_t now_ms) {
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
        if (!found.is_done() || !IsCandidate(it, index, policy)) return;
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
    if (it.is_done() || !IsCandidate(it, index, policy)) continue;
    if (random) return it;
    Offer(it, index, policy, now_ms);
  }
  return found;
}

void Evictor::Offer(const PrimeIterator& it, unsigned db, MaxmemoryPolicy policy,
                    int64_t now_ms) {
  const uint64_t score = Score(it, policy, now_ms);
  if (pool_.size() == kPoolSize && score <= pool_.front().score) return;
  std::string key = it->first.ToString();
  for (Candidate& c : pool_) {
    if (c.db == db && c.key == key) return;  // already pooled
  }
  auto pos = std::upper_bound(pool_.begin(), pool_.end(), score,
                              [](uint64_t s, const Candidate& c) { return s < c.score; });
  pool_.insert(pos, Candidate{score, db, std::move(key)});
  if (pool_.size() > kPoolSize) pool_.erase(pool_.begin());
}

bool Evictor::IsCandidate(const PrimeIterator& it, unsigned db, MaxmemoryPolicy policy) const {
  if (IsVolatilePolicy(policy) && !it->first.HasExpire()) return false;
  IntentLockTable& locks = shard_->locks();
  if (!locks.empty()) {
    std::string key = it->first.ToString();
    if (locks.Conflicts(LockHashOf(db, key), LockMode::kExclusive)) return false;
  }
  return true;
}

uint64_t Evictor::Score(const PrimeIterator& it, MaxmemoryPolicy policy, int64_t now_ms) const {
  if (policy == MaxmemoryPolicy::kVolatileTtl) {
    return std::numeric_limits<uint64_t>::max() - static_cast<uint64_t>(it->first.ExpireTimeMs());
  }
  const AccessMode mode = IsLfuPolicy(policy) ? AccessMode::kLfu : AccessMode::kLru;
  const uint32_t record = GetRecord(it->first, it->second, mode, now_ms);
  if (mode == AccessMode::kLfu) {
    const int64_t decay = budget_->settings().lfu_decay_time.load(std::memory_order_relaxed);
    return 255 - LfuDecayed(record, now_ms, decay);
  }
  return LruIdleMs(record, now_ms);
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
  const MemoryBudget& budget = *shard->evictor().budget();
  if (evict) return !shard->evictor().MakeRoom(now_ms);
  return budget.Overage() > 0 &&
         (budget.policy() == MaxmemoryPolicy::kNoEviction || budget.EvictableKeys() == 0);
}

}  // namespace dashkv
