// Transactions across shards (DESIGN §6): how a command or a MULTI/EXEC whose keys live on
// several shards becomes atomic and serializable without slowing down single-shard commands.
// Thread: KeyLocks is engine-local to the coordinating connection; the lock tables it drives
// are touched only on their shards' threads (through ShardSet hops).
//
// Design
//   Every shard owns an IntentLockTable (core/intent_lock.h). A multi-shard operation (a
//   multi-key command whose keys span shards, EXEC, a global command) is a coordinator on the
//   connection's thread that:
//     1. collects its keys per shard (shared for reads, exclusive for writes; a global command
//        locks whole shards), as fingerprints of the key and its database (LockHashOf);
//     2. acquires: one parallel hop TryAcquire's every involved shard. If every shard grants
//        at once (the uncontended case) it holds its locks after that single hop. Otherwise it
//        releases what it got and acquires shard by shard in ascending shard order, waiting in
//        each shard's FIFO queue (a hop that completes when the lock is granted);
//     3. runs its hops (one message per involved shard per hop) while holding the locks;
//     4. releases with one one-way message per shard; releasing grants the shard's waiters.
//   No deadlock: a waiter in step 2's ordered phase holds locks only on lower shards, and the
//   parallel phase never waits, so no cycle of waiters can form. No starvation: a queue is
//   FIFO and a newcomer's TryAcquire fails while an earlier waiter wants one of its keys. No
//   shard thread ever waits: waiting is a suspended coroutine on the coordinator's thread.
//
//   Single-shard commands keep their fast path (no transaction id, no lock, no extra message):
//   before running, a command checks its keys against the shard's table only when the table is
//   not empty (one branch otherwise). A command whose key is locked by a running transaction
//   queues behind it as a "transient" waiter and runs when the transaction releases, so a
//   transaction's effects are seen all together or not at all: strict two-phase locking over
//   everything that touches its keys, which makes it serializable.
//
//   Transaction ids: the FIFO order in each shard's queue is the order of arrival; the global
//   order that serializability needs comes from the locks themselves (conflicting transactions
//   are ordered by the first shard they share, and the ordered phase keeps that order on every
//   later shard), so no global counter is touched even by multi-shard operations.
#pragma once

#include <utility>  // before asio: awaitable.hpp uses std::exchange

#include <absl/container/inlined_vector.h>

#include <boost/asio/awaitable.hpp>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/intent_lock.h"
#include "server/shard_set.h"

namespace dashkv {

// Returns the WATCH table key of `key` in database `db` (2 bytes of db, then the key).
std::string LockKeyOf(unsigned db, std::string_view key);
// Returns the intent lock fingerprint of `key` in database `db`.
uint64_t LockHashOf(unsigned db, std::string_view key);

// The intent locks one coordinator asks for, per shard. Add keys, Acquire, run, Release.
// Thread: engine-local (the coordinator's connection thread).
class KeyLocks {
 public:
  explicit KeyLocks(ShardSet& shard_set);
  KeyLocks(const KeyLocks&) = delete;
  KeyLocks& operator=(const KeyLocks&) = delete;
  // REQUIRES: released (or never acquired).
  ~KeyLocks();

  // Adds `key` of database `db` in `mode` (exclusive wins over shared for the same key).
  // REQUIRES: not held.
  void Add(unsigned db, std::string_view key, LockMode mode);
  // Locks every shard whole in `mode` (global commands). REQUIRES: not held.
  void AddAllShards(LockMode mode);

  // Acquires every lock added; resumes when all are held. May wait (never a shard thread).
  boost::asio::awaitable<void> Acquire();
  // Records that a coordinator wrote `key` of `db` (normally covered exclusively): clients
  // WATCHing it are marked dirty when the locks are released.
  void MarkWritten(unsigned db, std::string_view key);
  // Releases the locks (one one-way message per remote shard), touching the watchers of the
  // keys marked written. REQUIRES: held.
  void Release();

  bool held() const { return held_; }
  bool empty() const { return shards_.empty(); }
  // The locks asked for on shard `sid`.
  const LockRequest& request(unsigned sid) const { return requests_[sid]; }
  // Shards with at least one lock, ascending.
  std::span<const unsigned> shards() const { return {shards_.data(), shards_.size()}; }
  // Returns whether `key` of `db` (or its whole shard) is covered in a mode at least `mode`.
  bool Covers(unsigned db, std::string_view key, LockMode mode) const;

 private:
  // Acquires on `sid`, waiting in its queue if needed.
  boost::asio::awaitable<void> AcquireOne(unsigned sid);

  ShardSet& shard_set_;
  absl::InlinedVector<LockRequest, 4> requests_;  // by shard index
  absl::InlinedVector<unsigned, 4> shards_;  // ascending
  absl::InlinedVector<std::vector<std::string>, 4> written_;  // by shard: MarkWritten keys
  bool held_ = false;
};

}  // namespace dashkv
