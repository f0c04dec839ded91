// DbSlice: one logical database (SELECT n) inside one shard: find, insert, erase and expire keys.
// The expiry deadline is stored in the key object itself (CompactObj), so there is no second
// table; expired keys go lazily on access, through a bounded active cycle, and through the
// Dashtable's garbage-collection hook when a segment is full.
// Thread: owned by shard thread.
#pragma once

#include <cstdint>
#include <string_view>

#include "server/op_status.h"
#include "server/storage/table_types.h"

namespace dashkv {

struct ShardStats;
class BlockingRegistry;

class DbSlice {
 public:
  explicit DbSlice(ShardStats* stats);
  DbSlice(const DbSlice&) = delete;
  DbSlice& operator=(const DbSlice&) = delete;

  // Returns the live entry of `key`, or end(). An expired entry is deleted first (and counted
  // in expired_keys). Counts a keyspace hit or miss.
  PrimeIterator Find(std::string_view key, int64_t now_ms);
  // Returns whether `key` holds a live (unexpired) entry. Changes nothing: an expired entry
  // stays until it is found or collected (WATCH bookkeeping must not delete keys).
  bool IsLive(std::string_view key, int64_t now_ms) {
    PrimeIterator it = table_.Find(key);
    return !it.is_done() && !IsExpired(it, now_ms);
  }
  // Like Find, without counting hits/misses (for TYPE, EXISTS, TTL ...).
  PrimeIterator FindQuiet(std::string_view key, int64_t now_ms);
  // Returns the live entry of `key` if it holds `type`; kKeyNotFound or kWrongType otherwise.
  OpResult<PrimeIterator> FindOfType(std::string_view key, ObjType type, int64_t now_ms);

  struct AddResult {
    PrimeIterator it;
    bool inserted;  // false: the key existed (and is live)
  };
  // Returns the entry of `key`, inserting it with an empty string value when missing (or
  // expired). kOutOfMemory if the table may not grow. Invalidates iterators.
  OpResult<AddResult> FindOrAdd(std::string_view key, int64_t now_ms);

  // As FindOrAdd, but an existing key must hold `type` (else kWrongType). A new entry holds an
  // empty string: the caller stores the new object in it. One lookup either way.
  OpResult<AddResult> FindOrAddOfType(std::string_view key, ObjType type, int64_t now_ms) {
    OpResult<AddResult> res = FindOrAdd(key, now_ms);
    if (res.ok() && !res->inserted && res->it->second.type() != type) {
      return OpStatus::kWrongType;
    }
    return res;
  }

  // Erases the entry. Invalidates iterators.
  void Erase(PrimeIterator it);
  // Erases an expired entry and counts it in expired_keys.
  void EraseExpired(PrimeIterator it);
  // Erases `key` if it is live; returns whether it did.
  bool EraseKey(std::string_view key, int64_t now_ms);

  // Sets the absolute deadline of the entry (ms since the epoch), or removes it (0).
  void SetExpire(PrimeIterator it, int64_t deadline_ms);
  // Returns whether the entry's deadline has passed.
  static bool IsExpired(const PrimeIterator& it, int64_t now_ms) {
    return it->first.HasExpire() && it->first.ExpireTimeMs() <= now_ms;
  }

  size_t size() const { return table_.size(); }
  // Returns the average remaining TTL (ms) of keys with a deadline, estimated from the keys the
  // active expiry cycle visits (as Redis's avg_ttl); 0 when unknown.
  int64_t AverageTtl(int64_t now_ms) const;
  size_t expires() const { return expires_; }
  // Deletes every key.
  void Clear();

  // Visits the live keys of the next buckets from `cursor`; returns the next cursor, 0 at the
  // end. The cursor uses at most the low 48 bits.
  template <typename Fn>
  uint64_t Scan(uint64_t cursor, int64_t now_ms, Fn&& fn) {
    return table_.Traverse(cursor, [&](PrimeIterator it) {
      if (!IsExpired(it, now_ms)) fn(it);
    });
  }

  // Deletes expired keys in up to `max_buckets` buckets; returns the number deleted.
  size_t ActiveExpire(int64_t now_ms, unsigned max_buckets);
  // Returns a random live entry, or end() when empty (RANDOMKEY).
  PrimeIterator RandomEntry(int64_t now_ms);

  PrimeTable& table() { return table_; }
  // Tells `blocking` (database index `db_index`) about every key FindOrAdd returns, so that
  // clients blocked on it wake (server/tx/blocking.h).
  void set_blocking(BlockingRegistry* blocking, unsigned db_index) {
    blocking_ = blocking;
    db_index_ = db_index;
  }
  // Bytes used by the table and the heap memory its objects own (estimate for INFO).
  size_t MemoryUsage() const;

 private:
  PrimeTable table_;
  size_t expires_ = 0;
  uint64_t expire_cursor_ = 0;
  int64_t avg_ttl_ = 0;  // running estimate of the remaining TTL at avg_ttl_time_
  int64_t avg_ttl_time_ = 0;
  ShardStats* stats_;
  BlockingRegistry* blocking_ = nullptr;
  unsigned db_index_ = 0;
};

}  // namespace dashkv
