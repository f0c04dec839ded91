#include "server/storage/db_slice.h"

#include <absl/random/random.h>

#include "server/tx/blocking.h"
#include "server/storage/shard.h"

namespace dashkv {

namespace {

// Dashtable hooks of an insert: expired entries in the full segment's hot buckets are deleted
// before the segment splits (garbage collection on split).
struct InsertHooks {
  DbSlice* db;
  int64_t now_ms;

  unsigned GarbageCollect(const PrimeTable::HotBuckets& hot, PrimeTable*) {
    unsigned freed = 0;
    for (PrimeIterator it : hot.buckets) {
      for (; !it.is_done(); ++it) {
        if (DbSlice::IsExpired(it, now_ms)) {
          db->EraseExpired(it);
          ++freed;
        }
      }
    }
    return freed;
  }
};

}  // namespace

DbSlice::DbSlice(ShardStats* stats) : stats_(stats) {}

PrimeIterator DbSlice::FindQuiet(std::string_view key, int64_t now_ms) {
  PrimeIterator it = table_.Find(key);
  if (it.is_done()) return it;
  if (IsExpired(it, now_ms)) {
    EraseExpired(it);
    return table_.end();
  }
  return it;
}

PrimeIterator DbSlice::Find(std::string_view key, int64_t now_ms) {
  PrimeIterator it = FindQuiet(key, now_ms);
  if (it.is_done()) {
    ++stats_->keyspace_misses;
  } else {
    ++stats_->keyspace_hits;
  }
  return it;
}

OpResult<PrimeIterator> DbSlice::FindOfType(std::string_view key, ObjType type, int64_t now_ms) {
  PrimeIterator it = Find(key, now_ms);
  if (it.is_done()) return OpStatus::kKeyNotFound;
  if (it->second.type() != type) return OpStatus::kWrongType;
  return it;
}

OpResult<DbSlice::AddResult> DbSlice::FindOrAdd(std::string_view key, int64_t now_ms) {
  // A write may satisfy blocked clients: one branch when none waits on this shard.
  if (blocking_ != nullptr && !blocking_->empty()) blocking_->OnKeyWritten(db_index_, key);
  uint64_t hash = HashBytes(key);
  table_.Prefetch(hash);  // the bucket is written whether the key exists or not
  PrimeIterator it = table_.Find(key, hash);
  if (!it.is_done()) {
    if (!IsExpired(it, now_ms)) return AddResult{it, false};
    EraseExpired(it);
  }
  InsertHooks hooks{this, now_ms};
  auto [pos, inserted] =
      table_.InsertNew(hash, CompactObj::FromString(key), CompactObj(), hooks);
  if (pos.is_done()) return OpStatus::kOutOfMemory;
  return AddResult{pos, true};
}

void DbSlice::Erase(PrimeIterator it) {
  if (it->first.HasExpire()) --expires_;
  table_.Erase(it);
}

void DbSlice::EraseExpired(PrimeIterator it) {
  ++stats_->expired_keys;
  Erase(it);
}

bool DbSlice::EraseKey(std::string_view key, int64_t now_ms) {
  PrimeIterator it = FindQuiet(key, now_ms);
  if (it.is_done()) return false;
  Erase(it);
  return true;
}

void DbSlice::SetExpire(PrimeIterator it, int64_t deadline_ms) {
  CompactObj& key = it->first;
  bool had = key.HasExpire();
  if (deadline_ms > 0) {
    key.SetExpireTimeMs(deadline_ms);
    if (!had) ++expires_;
  } else if (had) {
    key.ClearExpire();
    --expires_;
  }
}

void DbSlice::Clear() {
  table_.Clear();
  expires_ = 0;
  expire_cursor_ = 0;
}

size_t DbSlice::ActiveExpire(int64_t now_ms, unsigned max_buckets) {
  size_t deleted = 0;
  int64_t ttl_sum = 0, ttl_count = 0;
  for (unsigned i = 0; i < max_buckets && expires_ > 0; ++i) {
    expire_cursor_ = table_.Traverse(expire_cursor_, [&](PrimeIterator it) {
      if (!it->first.HasExpire()) return;
      if (IsExpired(it, now_ms)) {
        EraseExpired(it);
        ++deleted;
      } else {
        ttl_sum += it->first.ExpireTimeMs() - now_ms;
        ++ttl_count;
      }
    });
    if (expire_cursor_ == 0) break;  // a full pass is done; continue next tick
  }
  if (ttl_count > 0) {
    // Like Redis: a moving average that gives the newest sample 2% weight per cycle.
    int64_t sample = ttl_sum / ttl_count;
    int64_t previous = AverageTtl(now_ms);
    avg_ttl_ = previous ? (previous / 50) * 49 + sample / 50 : sample;
    avg_ttl_time_ = now_ms;
  }
  return deleted;
}

PrimeIterator DbSlice::RandomEntry(int64_t now_ms) {
  thread_local absl::BitGen gen;
  for (int attempt = 0; attempt < 100 && table_.size() > 0; ++attempt) {
    PrimeIterator it = table_.GetRandomIterator(gen);
    if (it.is_done()) continue;
    if (!IsExpired(it, now_ms)) return it;
    EraseExpired(it);
  }
  // Mostly expired keys: fall back to the first live entry.
  for (PrimeIterator it = table_.begin(); !it.is_done(); ++it) {
    if (!IsExpired(it, now_ms)) return it;
  }
  return table_.end();
}

int64_t DbSlice::AverageTtl(int64_t now_ms) const {
  if (expires_ == 0 || avg_ttl_ == 0) return 0;
  return std::max<int64_t>(0, avg_ttl_ - (now_ms - avg_ttl_time_));
}

size_t DbSlice::MemoryUsage() const { return table_.mem_usage(); }

}  // namespace dashkv
