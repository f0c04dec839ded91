// DbSlice: one logical database (SELECT n) inside one shard: find, insert, erase and expire keys.
// It is the one way to change a shard's data: read-only and mutable lookups are separate calls,
// and every change (write, delete, expiry of any kind, flush) is told to the shard's change
// listeners (server/storage/key_change.h).
// The expiry deadline is stored in the key object itself (CompactObj), so there is no second
// table; expired keys go lazily on access, through a bounded active cycle, and through the
// Dashtable's garbage-collection hook when a segment is full.
// Every lookup but the quiet ones updates the key's access record (core/access_record.h), as
// Redis's lookupKey updates robj.lru: the LRU clock, or the LFU counter under an LFU policy.
// Thread: owned by shard thread.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/access_record.h"
#include "core/hash.h"
#include "server/op_status.h"
#include "server/storage/eviction_settings.h"
#include "server/storage/key_change.h"
#include "server/storage/table_types.h"

namespace dashkv {

class Evictor;

struct ShardStats;

// Whether a read-only lookup updates the key's access record (Redis's LOOKUP_NOTOUCH: EXISTS
// and TYPE do not).
enum class Access : uint8_t { kTouch, kNoTouch };

class DbSlice {
 public:
  // `db_index`: this database's SELECT index; `changes`: the shard's change listeners
  // (server/storage/key_change.h), told of every change made through this slice.
  DbSlice(unsigned db_index, ShardStats* stats, ChangeListeners* changes);
  DbSlice(const DbSlice&) = delete;
  DbSlice& operator=(const DbSlice&) = delete;

  // --- Read-only lookups: the entry they return must not be changed (debug builds check it
  // when the command is done: Shard::FinishChanges). An expired entry is deleted first
  // (reason kExpired). ---

  // Returns the live entry of `key`, or end(). Counts a keyspace hit or miss (a miss raises
  // the `keymiss` event) and updates the access record, as a read command's lookup in Redis.
  PrimeIterator FindReadOnly(std::string_view key, int64_t now_ms,
                             Access access = Access::kTouch);
  // Like FindReadOnly, without hit/miss counting, keymiss or access record (internal reads:
  // DEBUG, MEMORY USAGE, OBJECT, a write command's checks).
  PrimeIterator FindReadOnlyQuiet(std::string_view key, int64_t now_ms);
  // Returns the live entry of `key` if it holds `type`; kKeyNotFound or kWrongType otherwise.
  OpResult<PrimeIterator> FindReadOnlyOfType(std::string_view key, ObjType type, int64_t now_ms);
  // Returns whether `key` holds a live (unexpired) entry. Changes nothing: an expired entry
  // stays until it is found or collected (WATCH bookkeeping must not delete keys).
  bool IsLive(std::string_view key, int64_t now_ms) {
    PrimeIterator it = table_.Find(key, HashOf(key));
    return !it.is_done() && !IsExpired(it, now_ms);
  }

  // --- Mutable lookups: the entry may be changed in place or erased. Each runs the
  // BeforeChange listeners at once and queues an AfterWrite for the end of the command. ---

  // Returns the live entry of `key` for changing, or end().
  PrimeIterator FindMutable(std::string_view key, int64_t now_ms);
  // Returns the live entry of `key` for changing if it holds `type`; kKeyNotFound or
  // kWrongType otherwise (neither queues a change).
  OpResult<PrimeIterator> FindMutableOfType(std::string_view key, ObjType type, int64_t now_ms);

  struct AddResult {
    PrimeIterator it;
    bool inserted;  // false: the key existed (and is live)
  };
  // Returns the entry of `key` for changing, inserting it with an empty string value when
  // missing (or expired; raises the `new` event). kOutOfMemory if the table may not grow.
  // Invalidates iterators.
  OpResult<AddResult> FindOrAdd(std::string_view key, int64_t now_ms);
  // As FindOrAdd, but an existing key must hold `type` (else kWrongType, and no change is
  // queued). A new entry holds an empty string: the caller stores the new object in it.
  OpResult<AddResult> FindOrAddOfType(std::string_view key, ObjType type, int64_t now_ms);
  // Returns the entry of `key` for a snapshot load (a new entry's access record says "now") (start-up, DEBUG RELOAD) to fill, inserting
  // it with an empty string value when missing. A present entry is returned as it is, expired
  // or not (`inserted` false): the loader decides whether it is a duplicate or is replaced.
  // Quiet, as Redis's loader adds keys: no keyspace event, no AfterWrite (WATCH and blocked
  // clients hear nothing: a load is no command), not counted as a change since the last save,
  // and no expired key is collected on the way. BeforeChange still runs: a snapshot walking
  // this table must serialize the bucket before it changes. kOutOfMemory if the table may not
  // grow. Invalidates iterators.
  OpResult<AddResult> FindOrAddForLoad(std::string_view key);

  // Erases the entry and tells the listeners why; an expired or evicted key is counted
  // (ShardStats) and raises the `expired` or `evicted` event. Invalidates iterators.
  void Erase(PrimeIterator it, RemoveReason reason = RemoveReason::kDeleted);
  // Erases `key` if it is live; returns whether it did.
  bool EraseKey(std::string_view key, int64_t now_ms,
                RemoveReason reason = RemoveReason::kDeleted);

  // Sets the absolute deadline of the entry (ms since the epoch), or removes it (0).
  // REQUIRES: `it` came from a mutable lookup.
  void SetExpire(PrimeIterator it, int64_t deadline_ms);
  // Whether a CLIENT PAUSE keeps expired keys in place at `now_ms`: they read as missing but
  // are not deleted (server/client_pause.h).
  bool KeysFrozen(int64_t now_ms) const { return changes_->keys_frozen(now_ms); }
  // Returns the access record of the entry (core/access_record.h), in the current policy's mode.
  uint32_t Record(const PrimeIterator& it, int64_t now_ms) const {
    return GetRecord(it->first, it->second, eviction_->access_mode(), now_ms);
  }
  // Replaces the access record of the entry (RESTORE's IDLETIME and FREQ). Not a change of the
  // key for the listeners or the debug-build read-only check (as every lookup's update).
  void SetRecord(PrimeIterator it, uint32_t record) {
    dashkv::SetRecord(it->first, it->second, record, eviction_->access_mode());
  }
  // Updates the access record of the entry for an access now (TOUCH; the lookups do unless
  // no_touch is set).
  void Touch(PrimeIterator it, int64_t now_ms) {
    PrimeTable::iterator::Ref entry = *it;
    UpdateRecord(entry.first, entry.second, now_ms);
  }
  // While set, lookups leave the access records as they are: the command running is a CLIENT
  // NO-TOUCH client's (set and cleared around it by PipelineRunner::RunShardCommand).
  void set_no_touch(bool yes) { no_touch_ = yes; }
  // The policy settings the access record follows (the server's; defaults until set).
  void set_eviction(const EvictionSettings* settings) { eviction_ = settings; }
  const EvictionSettings& eviction() const { return *eviction_; }
  // Returns the bytes one slot of the table costs (segments / capacity).
  int64_t SlotBytes() const {
    return static_cast<int64_t>(table_.mem_usage() / std::max<size_t>(1, table_.capacity()));
  }
  // Returns the bytes of the slots emptied since the table was fullest, which inserts refill
  // before the table grows (server/storage/memory_budget.h).
  int64_t SlotCredit() const {
    return static_cast<int64_t>(high_water_ - std::min(high_water_, table_.size())) *
           SlotBytes();
  }

  // Returns whether the entry's deadline has passed.
  static bool IsExpired(const PrimeIterator& it, int64_t now_ms) {
    return it->first.HasExpire() && it->first.ExpireTimeMs() <= now_ms;
  }

  // Raises keyspace event `event` of class `cls` for `key` (notify-keyspace-events): one branch
  // when nobody publishes that class.
  void Notify(NotifyClass cls, std::string_view event, std::string_view key) {
    if (changes_->notifies(cls)) [[unlikely]] changes_->Event(db_index_, cls, event, key);
  }

  size_t size() const { return table_.size(); }
  // Returns the average remaining TTL (ms) of keys with a deadline, estimated from the keys the
  // active expiry cycle visits (as Redis's avg_ttl); 0 when unknown.
  int64_t AverageTtl(int64_t now_ms) const;
  size_t expires() const { return expires_; }
  // Deletes every key (FLUSHDB, FLUSHALL): the listeners hear BeforeFlush first.
  void Clear();

  // Visits the live keys of the next buckets from `cursor` (read-only); returns the next
  // cursor, 0 at the end. The cursor uses at most the low 48 bits.
  template <typename Fn>
  uint64_t Scan(uint64_t cursor, int64_t now_ms, Fn&& fn) {
    return table_.Traverse(cursor, [&](PrimeIterator it) {
      if (!IsExpired(it, now_ms)) fn(it);
    });
  }

  // Visits every entry of the next buckets from `cursor`, expired ones too, for SCAN (which
  // deletes the expired keys it would return, as Redis's does): `fn(it)` may erase the entry it
  // is given, and changes nothing else. Returns the next cursor, 0 at the end.
  template <typename Fn>
  uint64_t ScanWithExpired(uint64_t cursor, Fn&& fn) {
    return table_.Traverse(cursor, std::forward<Fn>(fn));
  }

  // Deletes expired keys in up to `max_buckets` buckets; returns the number deleted and adds
  // the number of keys with a TTL it looked at to `*sampled` (when given).
  size_t ActiveExpire(int64_t now_ms, unsigned max_buckets, size_t* sampled = nullptr);
  // Returns a random live entry (read-only), or end() when empty (RANDOMKEY).
  PrimeIterator RandomEntry(int64_t now_ms);

  // Tells the lookups that HashBytes(key) (the key's hash in the table) is `hash`, until
  // ClearKeyHash: a lookup given this very view (the same bytes in memory, which must not
  // change meanwhile) does not hash it again. PipelineRunner sets it around a shard command
  // with the hash of its first key, computed when the command was routed.
  void SetKeyHash(std::string_view key, uint64_t hash) {
    hinted_key_ = key.data();
    hinted_size_ = key.size();
    hinted_hash_ = hash;
  }
  void ClearKeyHash() { hinted_size_ = kNoHint; }
  // Eviction in place: while set, an insert that finds its segment full near maxmemory may
  // evict one of the segment's entries the policy allows instead of splitting it
  // (Evictor::EvictInSegment), so that a table at the limit stays full rather than growing
  // and being thinned out by evictions elsewhere. Set only around a command that holds no
  // entry of this table but the one of its only key (PipelineRunner): the eviction may erase
  // any other entry while the command runs. nullptr: the segment splits.
  Evictor* in_place_evictor() const { return in_place_evictor_; }

  // Sets the hint (when `hash` is not 0) for its lifetime, cleared also when a lookup throws.
  // `in_place`: the evictor an insert into a full segment may evict with instead of splitting
  // it (in_place_evictor), or nullptr; also cleared at the end.
  class KeyHashScope {
   public:
    KeyHashScope(DbSlice& db, std::string_view key, uint64_t hash, Evictor* in_place = nullptr)
        : db_(db) {
      if (hash != 0) db_.SetKeyHash(key, hash);
      db_.in_place_evictor_ = in_place;
    }
    ~KeyHashScope() {
      db_.ClearKeyHash();
      db_.in_place_evictor_ = nullptr;
    }
    KeyHashScope(const KeyHashScope&) = delete;
    KeyHashScope& operator=(const KeyHashScope&) = delete;

   private:
    DbSlice& db_;
  };

  // The table, for reads that need no lookup (prefetching, DEBUG, memory figures). Changes go
  // through the calls above.
  PrimeTable& table() { return table_; }
  const PrimeTable& table() const { return table_; }
  unsigned index() const { return db_index_; }
  // Bytes used by the table and the heap memory its objects own (estimate for INFO).
  size_t MemoryUsage() const;

  // Debug builds: checks that no entry found by a read-only lookup since the last call was
  // changed without a mutable lookup, then forgets the lookups. No-op in release builds.
  void CheckReadOnlyEntries();

 private:
  friend class Shard;  // SWAPDB renumbers the slices
  void set_index(unsigned db_index) { db_index_ = db_index; }
  // Returns HashBytes(key): the hint of SetKeyHash when `key` is its view, else computed.
  uint64_t HashOf(std::string_view key) const {
    return key.size() == hinted_size_ && key.data() == hinted_key_ ? hinted_hash_
                                                                   : HashBytes(key);
  }
  // FindOrAdd, with the type an existing key must hold when `type` is set.
  OpResult<AddResult> FindOrAddImpl(std::string_view key, std::optional<ObjType> type,
                                    int64_t now_ms);
  // Runs BeforeChange for `it` (end(): an insert into the bucket of `hash`) and queues the
  // AfterWrite of `key`.
  void WillChange(std::string_view key, PrimeIterator it, uint64_t hash) {
    changes_->CountChange();
    if (changes_->wants(kWantBefore)) [[unlikely]] changes_->Before(db_index_, it, hash);
    if (changes_->wants(kWantWrites)) [[unlikely]] changes_->QueueWrite(db_index_, key);
#ifndef NDEBUG
    NoteMutable(key);
#endif
  }
  // A lookup's access to the entry's objects: updates the record unless no_touch_.
  void TouchEntry(CompactObj& key, CompactObj& value, int64_t now_ms) {
    if (no_touch_) [[unlikely]] return;
    UpdateRecord(key, value, now_ms);
  }
  void UpdateRecord(CompactObj& key, CompactObj& value, int64_t now_ms) {
    if (eviction_->access_mode() == AccessMode::kLfu) [[unlikely]] {
      return TouchLfu(key, value, now_ms);
    }
    dashkv::SetRecord(key, value, LruClock(now_ms), AccessMode::kLru);
  }
  void TouchLfu(CompactObj& key, CompactObj& value, int64_t now_ms);
  // Notes an insert for the slot credit.
  void NoteInsert() { high_water_ = std::max(high_water_, table_.size()); }

  // The debug-build check's records. Declared in every build, so that the layout of DbSlice
  // does not depend on NDEBUG (objects built with and without it may meet in one program).
  void NoteReadOnly(PrimeIterator it);
  void NoteMutable(std::string_view key);
  struct ReadRecord {
    std::string key;
    uint64_t fingerprint;
  };
  std::vector<ReadRecord> read_only_;
  std::vector<std::string> mutable_;

  PrimeTable table_;
  size_t expires_ = 0;
  uint64_t expire_cursor_ = 0;
  int64_t avg_ttl_ = 0;  // running estimate of the remaining TTL at avg_ttl_time_
  int64_t avg_ttl_time_ = 0;
  ShardStats* stats_;
  ChangeListeners* changes_;
  unsigned db_index_;
  bool no_touch_ = false;  // set_no_touch
  std::string removed_key_;  // the key of the entry being erased, for AfterRemove
  const EvictionSettings* eviction_;
  // SetKeyHash's hint; no view has kNoHint bytes.
  static constexpr size_t kNoHint = SIZE_MAX;
  const char* hinted_key_ = nullptr;
  size_t hinted_size_ = kNoHint;
  uint64_t hinted_hash_ = 0;
  Evictor* in_place_evictor_ = nullptr;  // KeyHashScope's; see in_place_evictor()
  size_t high_water_ = 0;           // the most entries the table held since it was cleared
  uint64_t rng_ = 0x9E3779B97F4A7C15ull;  // LFU increments' coin (xorshift)
};

}  // namespace dashkv
