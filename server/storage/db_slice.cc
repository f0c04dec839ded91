#include "server/storage/db_slice.h"

#include <algorithm>

#include <absl/random/random.h>

#include "core/base/clock.h"
#include "core/base/logging.h"
#include "server/storage/shard.h"

namespace dashkv {

namespace {

// Dashtable hooks of an insert: expired entries in the full segment's hot buckets are deleted
// before the segment splits (garbage collection on split); when none was and eviction in place
// is allowed (DbSlice::in_place_evictor), the evictor may evict one entry there instead.
struct InsertHooks {
  DbSlice* db;
  int64_t now_ms;

  unsigned GarbageCollect(const PrimeTable::HotBuckets& hot, PrimeTable*) {
    unsigned freed = 0;
    // Without a key with an expiry none can have expired: no walk of the buckets (a full table,
    // as eviction in place keeps it at the limit, meets a full segment at most inserts).
    if (db->expires() > 0) {
      for (PrimeIterator it : hot.buckets) {
        for (; !it.is_done(); ++it) {
          if (DbSlice::IsExpired(it, now_ms)) {
            db->Erase(it, RemoveReason::kExpired);
            ++freed;
          }
        }
      }
    }
    if (freed == 0 && db->in_place_evictor() != nullptr) [[unlikely]] {
      freed = db->in_place_evictor()->EvictInSegment(*db, hot, now_ms);
    }
    return freed;
  }
};

// The settings of a slice no server configured (in-process tests): noeviction, LRU records.
const EvictionSettings kDefaultEviction;

}  // namespace

DbSlice::DbSlice(unsigned db_index, ShardStats* stats, ChangeListeners* changes)
    : stats_(stats), changes_(changes), db_index_(db_index), eviction_(&kDefaultEviction) {}

void DbSlice::TouchLfu(CompactObj& key, CompactObj& value, int64_t now_ms) {
  const EvictionSettings& e = *eviction_;
  const uint32_t record = GetRecord(key, value, AccessMode::kLfu, now_ms);
  uint8_t counter = LfuDecayed(record, now_ms, e.lfu_decay_time.load(std::memory_order_relaxed));
  rng_ ^= rng_ << 13;
  rng_ ^= rng_ >> 7;
  rng_ ^= rng_ << 17;
  const double r = static_cast<double>(rng_ >> 11) * 0x1.0p-53;
  counter = LfuLogIncr(counter, e.lfu_log_factor.load(std::memory_order_relaxed), r);
  dashkv::SetRecord(key, value, (LfuMinutes(now_ms) << 8) | counter, AccessMode::kLfu);
}

PrimeIterator DbSlice::FindReadOnlyQuiet(std::string_view key, int64_t now_ms) {
  PrimeIterator it = table_.Find(key, HashOf(key));
  if (it.is_done()) return it;
  if (IsExpired(it, now_ms)) {
    // A CLIENT PAUSE keeps the data set static: the key reads as missing but stays.
    if (!changes_->keys_frozen(now_ms)) Erase(it, RemoveReason::kExpired);
    return table_.end();
  }
#ifndef NDEBUG
  NoteReadOnly(it);
#endif
  return it;
}

PrimeIterator DbSlice::FindReadOnly(std::string_view key, int64_t now_ms, Access access) {
  PrimeIterator it = FindReadOnlyQuiet(key, now_ms);
  if (it.is_done()) {
    ++stats_->keyspace_misses;
    Notify(kNotifyKeyMiss, "keymiss", key);
  } else {
    ++stats_->keyspace_hits;
    if (access == Access::kTouch) {
      PrimeTable::iterator::Ref entry = *it;
      TouchEntry(entry.first, entry.second, now_ms);
    }
  }
  return it;
}

OpResult<PrimeIterator> DbSlice::FindReadOnlyOfType(std::string_view key, ObjType type,
                                                    int64_t now_ms) {
  PrimeIterator it = FindReadOnlyQuiet(key, now_ms);
  if (it.is_done()) {
    ++stats_->keyspace_misses;
    Notify(kNotifyKeyMiss, "keymiss", key);
    return OpStatus::kKeyNotFound;
  }
  ++stats_->keyspace_hits;
  PrimeTable::iterator::Ref entry = *it;  // the slot's address, computed once
  TouchEntry(entry.first, entry.second, now_ms);
  if (entry.second.type() != type) return OpStatus::kWrongType;
  return it;
}

PrimeIterator DbSlice::FindMutable(std::string_view key, int64_t now_ms) {
  PrimeIterator it = table_.Find(key, HashOf(key));
  if (it.is_done()) return it;
  if (IsExpired(it, now_ms)) {
    Erase(it, RemoveReason::kExpired);
    return table_.end();
  }
  WillChange(key, it, 0);
  PrimeTable::iterator::Ref entry = *it;
  TouchEntry(entry.first, entry.second, now_ms);
  return it;
}

OpResult<PrimeIterator> DbSlice::FindMutableOfType(std::string_view key, ObjType type,
                                                   int64_t now_ms) {
  PrimeIterator it = table_.Find(key, HashOf(key));
  if (it.is_done()) return OpStatus::kKeyNotFound;
  if (IsExpired(it, now_ms)) {
    Erase(it, RemoveReason::kExpired);
    return OpStatus::kKeyNotFound;
  }
  PrimeTable::iterator::Ref entry = *it;
  if (entry.second.type() != type) return OpStatus::kWrongType;
  WillChange(key, it, 0);
  TouchEntry(entry.first, entry.second, now_ms);
  return it;
}

OpResult<DbSlice::AddResult> DbSlice::FindOrAdd(std::string_view key, int64_t now_ms) {
  return FindOrAddImpl(key, std::nullopt, now_ms);
}

OpResult<DbSlice::AddResult> DbSlice::FindOrAddOfType(std::string_view key, ObjType type,
                                                      int64_t now_ms) {
  return FindOrAddImpl(key, type, now_ms);
}

OpResult<DbSlice::AddResult> DbSlice::FindOrAddImpl(std::string_view key,
                                                    std::optional<ObjType> type,
                                                    int64_t now_ms) {
  uint64_t hash = HashOf(key);
  table_.Prefetch(hash);  // the bucket is written whether the key exists or not
  PrimeIterator it = table_.Find(key, hash);
  if (!it.is_done()) {
    if (!IsExpired(it, now_ms)) {
      PrimeTable::iterator::Ref entry = *it;
      if (type && entry.second.type() != *type) return OpStatus::kWrongType;
      WillChange(key, it, hash);
      TouchEntry(entry.first, entry.second, now_ms);
      return AddResult{it, false};
    }
    Erase(it, RemoveReason::kExpired);
  }
  WillChange(key, table_.end(), hash);
  InsertHooks hooks{this, now_ms};
  auto [pos, inserted] =
      table_.InsertNew(hash, CompactObj::FromString(key), CompactObj(), hooks);
  if (pos.is_done()) return OpStatus::kOutOfMemory;
  NoteInsert();
  SetRecord(pos, NewRecord(eviction_->access_mode(), now_ms));
  Notify(kNotifyNew, "new", key);
  return AddResult{pos, true};
}

OpResult<DbSlice::AddResult> DbSlice::FindOrAddForLoad(std::string_view key) {
  uint64_t hash = HashBytes(key);
  PrimeIterator it = table_.Find(key, hash);
  const bool present = !it.is_done();
  if (changes_->wants(kWantBefore)) [[unlikely]] {
    changes_->Before(db_index_, present ? it : table_.end(), hash);
  }
#ifndef NDEBUG
  NoteMutable(key);
#endif
  if (present) return AddResult{it, false};
  NoDashHooks hooks;  // no garbage collection: a load deletes nothing
  auto [pos, inserted] = table_.InsertNew(hash, CompactObj::FromString(key), CompactObj(), hooks);
  if (pos.is_done()) return OpStatus::kOutOfMemory;
  NoteInsert();
  SetRecord(pos, NewRecord(eviction_->access_mode(), NowMs()));
  return AddResult{pos, true};
}

void DbSlice::Erase(PrimeIterator it, RemoveReason reason) {
  changes_->CountChange();
  const bool tell = changes_->wants(kWantRemovals);
  // `expired` and `evicted` are events of their own class (x, e), raised here for every path.
  NotifyClass event_class = kNotifyExpired;
  std::string_view event;
  if (reason == RemoveReason::kExpired) {
    ++stats_->expired_keys;
    if (changes_->notifies(kNotifyExpired)) [[unlikely]] event = "expired";
  } else if (reason == RemoveReason::kEvicted) {
    ++stats_->evicted_keys;
    event_class = kNotifyEvicted;
    if (changes_->notifies(kNotifyEvicted)) [[unlikely]] event = "evicted";
  }
  if (changes_->wants(kWantBefore)) [[unlikely]] changes_->Before(db_index_, it, 0);
#ifdef NDEBUG
  const bool keep_key = tell || !event.empty();
#else
  const bool keep_key = true;
#endif
  if (keep_key) {
    // The key object is destroyed with the entry: keep its name for the listeners.
    removed_key_.clear();
    it->first.AppendTo(&removed_key_);
  }
#ifndef NDEBUG
  NoteMutable(removed_key_);
#endif
  if (it->first.HasExpire()) --expires_;
  table_.Erase(it);
  if (tell) changes_->Removed(db_index_, removed_key_, reason);
  if (!event.empty()) [[unlikely]] changes_->Event(db_index_, event_class, event, removed_key_);
}

bool DbSlice::EraseKey(std::string_view key, int64_t now_ms, RemoveReason reason) {
  PrimeIterator it = table_.Find(key, HashOf(key));
  if (it.is_done()) return false;
  if (IsExpired(it, now_ms)) {
    Erase(it, RemoveReason::kExpired);
    return false;
  }
  Erase(it, reason);
  return true;
}

void DbSlice::SetExpire(PrimeIterator it, int64_t deadline_ms) {
  CompactObj& key = it->first;
  const bool had = key.HasExpire();
  if (deadline_ms > 0 && had) {  // in place: the key keeps its form
    key.SetExpireTimeMs(deadline_ms);
    return;
  }
  if (deadline_ms <= 0 && !had) return;
  // The key changes form (heap + expiry <-> its smallest form). A key of 13..17 bytes moves
  // between a form with room for the access record and one without: the record moves with it
  // (core/access_record.h).
  const bool had_room = key.HasAuxRoom();
  const AccessMode mode = eviction_->access_mode();
  const uint32_t record = had_room ? key.aux() : GetRecord(key, it->second, mode, NowMs());
  if (deadline_ms > 0) {
    key.SetExpireTimeMs(deadline_ms);
    ++expires_;
  } else {
    key.ClearExpire();
    --expires_;
  }
  if (!had_room || !key.HasAuxRoom()) dashkv::SetRecord(key, it->second, record, mode);
}

void DbSlice::Clear() {
  changes_->Flushing(db_index_);
  table_.Clear();
  high_water_ = 0;
  expires_ = 0;
  expire_cursor_ = 0;
}

size_t DbSlice::ActiveExpire(int64_t now_ms, unsigned max_buckets, size_t* sampled) {
  size_t deleted = 0;
  int64_t ttl_sum = 0, ttl_count = 0;
  for (unsigned i = 0; i < max_buckets && expires_ > 0; ++i) {
    expire_cursor_ = table_.Traverse(expire_cursor_, [&](PrimeIterator it) {
      if (!it->first.HasExpire()) return;
      if (IsExpired(it, now_ms)) {
        Erase(it, RemoveReason::kExpired);
        ++deleted;
      } else {
        ttl_sum += it->first.ExpireTimeMs() - now_ms;
        ++ttl_count;
      }
    });
    if (expire_cursor_ == 0) break;  // a full pass is done; continue next tick
  }
  if (sampled != nullptr) *sampled += deleted + static_cast<size_t>(ttl_count);
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
    if (!IsExpired(it, now_ms)) {
#ifndef NDEBUG
      NoteReadOnly(it);
#endif
      return it;
    }
    if (!changes_->keys_frozen(now_ms)) Erase(it, RemoveReason::kExpired);
  }
  // Mostly expired keys: fall back to the first live entry.
  for (PrimeIterator it = table_.begin(); !it.is_done(); ++it) {
    if (IsExpired(it, now_ms)) continue;
#ifndef NDEBUG
    NoteReadOnly(it);
#endif
    return it;
  }
  return table_.end();
}

int64_t DbSlice::AverageTtl(int64_t now_ms) const {
  if (expires_ == 0 || avg_ttl_ == 0) return 0;
  return std::max<int64_t>(0, avg_ttl_ - (now_ms - avg_ttl_time_));
}

size_t DbSlice::MemoryUsage() const { return table_.mem_usage(); }

#ifndef NDEBUG
namespace {

// What a change to the entry would most likely alter: type, encoding, deadline, the memory its
// value owns, and a string's bytes.
uint64_t Fingerprint(const CompactObj& key, const CompactObj& value) {
  uint64_t h = static_cast<uint64_t>(value.type()) * 0x9E3779B97F4A7C15ull;
  h ^= value.object_encoding() + (h << 6) + (h >> 2);
  if (key.HasExpire()) h ^= static_cast<uint64_t>(key.ExpireTimeMs()) * 31;
  h ^= value.MallocUsed() * 0xC2B2AE3D27D4EB4Full;
  if (value.IsString()) h ^= value.Hash();
  return h;
}

}  // namespace

void DbSlice::NoteReadOnly(PrimeIterator it) {
  if (read_only_.size() >= 64) return;  // enough to catch a handler that writes what it read
  read_only_.push_back({it->first.ToString(), Fingerprint(it->first, it->second)});
}

void DbSlice::NoteMutable(std::string_view key) {
  if (mutable_.size() < 1024) mutable_.emplace_back(key);
}

void DbSlice::CheckReadOnlyEntries() {
  for (const ReadRecord& r : read_only_) {
    if (std::find(mutable_.begin(), mutable_.end(), r.key) != mutable_.end()) continue;
    PrimeIterator it = table_.Find(r.key);
    if (it.is_done()) continue;  // erased: Erase is a change of its own
    if (Fingerprint(it->first, it->second) != r.fingerprint) {
      LOG(FATAL) << "an entry found by a read-only lookup was changed: key '" << r.key
                 << "' of db " << db_index_;
    }
  }
  read_only_.clear();
  mutable_.clear();
}
#else
void DbSlice::NoteReadOnly(PrimeIterator) {}
void DbSlice::NoteMutable(std::string_view) {}
void DbSlice::CheckReadOnlyEntries() {}
#endif

}  // namespace dashkv
