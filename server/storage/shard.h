// Shard: one slice of the keyspace — its logical databases (DbSlice per SELECT index) and
// counters. Shard i is owned by engine thread i and touched by no other thread.
// Thread: owned by shard thread.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "core/chunk_reserve.h"
#include "core/intent_lock.h"
#include "server/tx/blocking.h"
#include "server/storage/db_slice.h"
#include "server/storage/evictor.h"
#include "server/storage/memory_budget.h"
#include "server/tx/watch.h"

namespace dashkv {

// Counters of one shard; INFO sums them over all shards (read on the shard's thread). DbSlice
// counts the keyspace hits and misses of its lookups and the keys it removes as expired or
// evicted.
struct ShardStats {
  uint64_t expired_keys = 0;
  uint64_t evicted_keys = 0;
  uint64_t evicted_in_place = 0;  // of evicted_keys, those an insert evicted in its segment
  uint64_t keyspace_hits = 0;
  uint64_t keyspace_misses = 0;
  uint64_t commands = 0;  // commands run on this shard
  // The active expiry cycles: their run time, and Redis's estimate of the share of expired keys
  // among the keys with a TTL they look at (a moving average giving each cycle 5%).
  uint64_t expire_cycle_us = 0;
  double expired_stale_perc = 0;
  // The longest snapshot slice since the shard's cron last reported it to the latency monitor
  // (its `snapshot-slice` event), in microseconds.
  uint64_t slowest_snapshot_slice_us = 0;
};

// What a shard task carries besides its work (ShardSet's views), in one word so that a task of
// the plain set, whose mode is 0, pays one test for it: bit 0, CLIENT NO-TOUCH
// (Shard::set_no_touch); the rest, the change origin of the command it is part of
// (ChangeListeners::origin; 0: none).
class ShardTaskMode {
 public:
  constexpr ShardTaskMode() = default;
  // REQUIRES: origin < 2^63.
  constexpr ShardTaskMode(bool no_touch, uint64_t origin)
      : bits_(origin << 1 | static_cast<uint64_t>(no_touch)) {}

  bool any() const { return bits_ != 0; }
  bool no_touch() const { return (bits_ & 1) != 0; }
  uint64_t origin() const { return bits_ >> 1; }

 private:
  uint64_t bits_ = 0;
};

class Shard {
 public:
  // `chunk_reserve` feeds the segment chunks of this shard's tables (core/chunk_reserve.h): this
  // thread is its consumer, and whoever set its refill request refills it. nullptr: none.
  Shard(unsigned index, unsigned num_dbs, std::shared_ptr<ChunkReserve> chunk_reserve = nullptr);
  Shard(const Shard&) = delete;
  Shard& operator=(const Shard&) = delete;

  unsigned index() const { return index_; }
  unsigned num_dbs() const { return static_cast<unsigned>(dbs_.size()); }
  // Returns one past the highest database ever created here (<= num_dbs()): loops that visit
  // the existing databases stop there.
  unsigned dbs_used() const { return dbs_used_; }

  // Returns database `db`, creating it on first use. REQUIRES: db < num_dbs().
  DbSlice& db(unsigned db);
  // The listeners every change of this shard's keys is told to (server/storage/key_change.h):
  // in order, WATCH, the blocked clients, then those the server adds at start-up.
  ChangeListeners& changes() { return changes_; }
  // Ends a command or a shard task: runs the AfterWrite listeners of the writes it made (and,
  // in debug builds, checks that it changed no entry it found by a read-only lookup). Cheap
  // when it wrote nothing.
  void FinishChanges() {
    changes_.Finish();
#ifndef NDEBUG
    for (auto& slice : dbs_) {
      if (slice) slice->CheckReadOnlyEntries();
    }
#endif
  }
  // Swaps the contents of databases `db1` and `db2` (SWAPDB), telling the listeners.
  void SwapDbs(unsigned db1, unsigned db2);
  // Deletes every key of every database (FLUSHALL), telling the listeners.
  void ClearAllDbs() {
    for (auto& slice : dbs_) {
      if (slice) slice->Clear();
    }
  }
  // Returns database `db` or nullptr if it was never used.
  DbSlice* db_if_exists(unsigned db) { return dbs_[db].get(); }
  // While set, lookups in every database of this shard leave the access records as they are
  // (DbSlice::set_no_touch): set and cleared around a task of a CLIENT NO-TOUCH client's
  // command whose keys span shards (ShardSet::no_touch).
  void set_no_touch(bool yes);
  // Start and end a shard task that carries `mode` (ShardTaskMode::any()): the no-touch mode
  // and the change origin it asks for hold while it runs. EnterTask returns the origin that
  // LeaveTask puts back (a task may run inside another, inline). REQUIRES: mode.any().
  uint64_t EnterTask(ShardTaskMode mode) {
    if (mode.no_touch()) set_no_touch(true);
    const uint64_t outer = changes_.origin();
    if (mode.origin() != 0) changes_.set_origin(mode.origin());
    return outer;
  }
  void LeaveTask(ShardTaskMode mode, uint64_t outer_origin) {
    if (mode.no_touch()) set_no_touch(false);
    changes_.set_origin(outer_origin);
  }
  ShardStats& stats() { return stats_; }
  // The intent locks of this shard's keys (all databases; see server/tx/transaction.h).
  IntentLockTable& locks() { return locks_; }
  // The reserve of pre-faulted segment chunks of this shard's tables, or nullptr. Any thread may
  // read its statistics (they are atomic; the pointer never changes).
  const ChunkReserve* chunk_reserve() const { return chunk_reserve_.get(); }
  // Ends an idle-check period of the chunk reserve (ChunkReserve::Decay): a reserve its tables
  // took nothing from since the previous call gives back a chunk. Returns the chunks freed.
  // Called by the shard's periodic timer every ChunkReserve::kDecayPeriodMs.
  unsigned DecayChunkReserve() { return chunk_reserve_ ? chunk_reserve_->Decay() : 0; }
  // Bounds the chunk reserve to `cap` chunks (ChunkReserve::SetCap). Returns the chunks freed.
  // Called by the shard's periodic timer (MemoryBudget::ReserveChunkCap) on every tick.
  unsigned CapChunkReserve(unsigned cap) {
    return chunk_reserve_ ? chunk_reserve_->SetCap(cap) : 0;
  }
  // Gives this shard the server's maxmemory view and policy settings (start-up, before the
  // shard serves commands): its slices' access records follow the policy, its evictor evicts.
  void set_memory_budget(MemoryBudget* budget);
  // Evicts this shard's keys when the server is over maxmemory (server/storage/evictor.h).
  Evictor& evictor() { return evictor_; }

  // The keys WATCHed on this shard (server/tx/watch.h).
  WatchTable& watches() { return watches_; }
  // Returns whether `key` of database `db` is live, changing nothing (see DbSlice::IsLive).
  bool KeyLive(unsigned db, std::string_view key, int64_t now_ms) {
    DbSlice* slice = db_if_exists(db);
    return slice != nullptr && slice->IsLive(key, now_ms);
  }
  // The clients blocked on this shard's keys (server/tx/blocking.h).
  BlockingRegistry& blocking() { return blocking_; }

  // Deletes expired keys with bounded work (a slice of buckets per database). Returns the
  // number of keys deleted; none while the cycle is off. Called by the shard's periodic timer.
  size_t ActiveExpireCycle(int64_t now_ms);
  // Turns the active expiry cycle on or off (DEBUG SET-ACTIVE-EXPIRE, sent to every shard):
  // while off, expired keys go only when accessed or collected from a full segment.
  void set_active_expire(bool on) { active_expire_ = on; }

  // Returns the shard of the calling thread (nullptr off engine threads). The one thread-local
  // "current shard" pointer (STYLE.md).
  static Shard* Current();
  static void SetCurrent(Shard* shard);
  bool IsMyThread() const { return Current() == this; }

 private:
  unsigned index_;
  // Declared before dbs_: the tables take chunks from it until they are destroyed.
  std::shared_ptr<ChunkReserve> chunk_reserve_;
  // Declared before dbs_ and the listeners: the slices and listeners point at it.
  ChangeListeners changes_;
  std::vector<std::unique_ptr<DbSlice>> dbs_;
  unsigned dbs_used_ = 0;
  ShardStats stats_;
  IntentLockTable locks_;
  WatchTable watches_{this};
  BlockingRegistry blocking_{this};
  MemoryBudget* budget_ = nullptr;
  Evictor evictor_{this};
  bool active_expire_ = true;
  bool no_touch_ = false;  // set_no_touch; a database created meanwhile starts with it
};

}  // namespace dashkv
