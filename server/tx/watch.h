// WATCH: the keys clients watch on one shard, and the flag that tells a client its EXEC must
// fail. Redis's optimistic locking across threads: the flag is shared between the client's
// connection (which reads it at EXEC, under the transaction's locks) and every shard that holds
// one of its watched keys (which sets it when the key is modified).
// Thread: WatchTable is owned by shard thread; WatchState::dirty is an atomic (any thread).
#pragma once

#include <absl/container/flat_hash_map.h>

#include <atomic>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "server/storage/key_change.h"

namespace dashkv {

class Shard;

// One client's watch flag. Shared (shared_ptr) by the connection and the shards' tables.
struct WatchState {
  std::atomic<bool> dirty{false};
};

// The parts of a key in the WATCH / blocking tables' format (server/tx/transaction.h LockKeyOf:
// 2 bytes of database index, then the key).
inline unsigned LockKeyDb(std::string_view lock_key) {
  return static_cast<uint8_t>(lock_key[0]) | (static_cast<uint8_t>(lock_key[1]) << 8);
}
inline std::string_view LockKeyName(std::string_view lock_key) { return lock_key.substr(2); }

// A change listener (server/storage/key_change.h): a key that a command wrote (and did not
// leave as it was) or removed touches its watchers. Expiry touches nothing: EXEC checks
// whether a key that was live at WATCH has expired (Redis 7.0: an expired key whose deletion
// changes nothing logically does not fail EXEC). FLUSHDB/FLUSHALL touch the watched keys that
// exist; SWAPDB those that exist in either database.
class WatchTable : public ChangeListener {
 public:
  explicit WatchTable(Shard* shard) : shard_(shard) {}
  // Registers the table with the shard's listeners.
  void Attach(ChangeListeners* changes) {
    changes_ = changes;
    slot_ = changes->Add(this);
  }
  bool empty() const { return watchers_.empty(); }

  // Adds `state` as a watcher of lock key `lock_key` (server/tx/transaction.h LockKeyOf).
  void Watch(std::string lock_key, std::shared_ptr<WatchState> state);
  // Removes `state` from the watchers of `lock_key` (no-op if it is not there).
  void Unwatch(std::string_view lock_key, const WatchState* state);
  // Returns whether `lock_key` has watchers.
  bool IsWatched(std::string_view lock_key) const;
  // Marks every watcher of `lock_key` dirty and forgets them (they are done).
  void Touch(std::string_view lock_key);
  // Marks dirty the watchers of every key of database `db` (every database if db < 0) that
  // `exists(db, key)` says is live (FLUSHDB / FLUSHALL touch only keys that exist, as Redis).
  template <typename ExistsFn>
  void TouchIf(int db, ExistsFn&& exists);

  size_t size() const { return watchers_.size(); }

  void AfterWrite(unsigned db, std::string_view key, bool modified) override;
  void AfterRemove(unsigned db, std::string_view key, RemoveReason reason) override;
  void BeforeFlush(unsigned db) override;
  void BeforeSwap(unsigned db1, unsigned db2) override;

 private:
  // Tells the listeners whether this table wants changes (only while a key is watched).
  void UpdateInterest();

  Shard* shard_;
  ChangeListeners* changes_ = nullptr;
  unsigned slot_ = 0;
  absl::flat_hash_map<std::string, std::vector<std::shared_ptr<WatchState>>> watchers_;
};

template <typename ExistsFn>
void WatchTable::TouchIf(int db, ExistsFn&& exists) {
  for (auto it = watchers_.begin(); it != watchers_.end();) {
    const std::string& lk = it->first;
    unsigned key_db = LockKeyDb(lk);
    if ((db < 0 || key_db == static_cast<unsigned>(db)) && exists(key_db, LockKeyName(lk))) {
      for (auto& w : it->second) w->dirty.store(true, std::memory_order_release);
      watchers_.erase(it++);
    } else {
      ++it;
    }
  }
  UpdateInterest();
}

}  // namespace dashkv
