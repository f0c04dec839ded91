// IntentLockTable: the intent locks of one shard (DESIGN §6, the "very lightweight locking"
// scheme): shared/exclusive counters per key plus one whole-shard lock, and a FIFO of requests
// waiting for them. Keys are opaque byte strings (the server prefixes the database index).
// Thread: owned by shard thread.
//
// Design
//   A lock is two counters per key (readers, writer) in a hash map that holds only keys that are
//   locked or waited for, so an idle table is empty and the command fast path pays one branch
//   (empty()). A request names all its keys on this shard at once and is granted all or nothing.
//   Conflicts: exclusive vs anything, shared vs exclusive; the whole-shard lock in mode M
//   conflicts as if it held every key in mode M.
//
//   The queue is ordered by transaction id (LockRequest::txid, unique across the server and
//   growing with time, server/tx/transaction.h): every shard orders the transactions that wait on it
//   the same way, oldest first, whatever order their messages arrived in. A transient waiter
//   (a fast-path command blocked by a transaction: it has no id) is ordered after every waiter
//   this table has seen so far, FIFO among transients. A request conflicts not only with
//   holders but with every waiter queued before it (TryAcquire fails if any of its keys is
//   waited for), so a stream of newcomers never starves a queued request: only the finitely
//   many transactions with a lower id may go ahead of it. Release() walks the queue once, in
//   order, and grants (running the callback at once) each waiter that no holder and no earlier
//   waiter blocks: O(waiters) per release. A transient waiter holds nothing: its callback runs
//   the command when it is granted. Callbacks may enqueue further requests; the walk never
//   recurses (a release or an insertion ahead of the walk during a walk makes it run again).
//   Invariant between calls: no waiter could be granted (Enqueue re-walks when it inserts a
//   request ahead of others, since that request may be blocked only by later waiters).
//
//   Deadlock freedom is the caller's side (server/tx/transaction.h): a request that waits holds no
//   lock on a later shard, because multi-shard requests that cannot be granted at once on every
//   shard release what they got and then acquire shard by shard in ascending order.
#pragma once

#include <absl/container/flat_hash_map.h>
#include <absl/container/inlined_vector.h>
#include <absl/functional/any_invocable.h>

#include <cstdint>
#include <list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace dashkv {

enum class LockMode : uint8_t { kShared, kExclusive };

// The locks one transaction asks for on one shard.
struct LockRequest {
  // Unique keys, each with the strongest mode any of the transaction's commands needs.
  absl::InlinedVector<std::pair<uint64_t, LockMode>, 4> keys;
  bool whole_shard = false;  // lock every key of the shard (FLUSHALL, DBSIZE, KEYS ...)
  LockMode whole_mode = LockMode::kShared;
  // The transaction's id (its place in the queues: lower ids are older and go first); 0 for a
  // transient request, which has none.
  uint64_t txid = 0;

  bool empty() const { return keys.empty() && !whole_shard; }
  // Adds `key` in `mode`, upgrading an existing entry to exclusive if needed.
  void Add(uint64_t key, LockMode mode);
};

class IntentLockTable {
 public:
  IntentLockTable() = default;
  IntentLockTable(const IntentLockTable&) = delete;
  IntentLockTable& operator=(const IntentLockTable&) = delete;

  // Returns whether nothing is locked and nobody waits (the fast path's one check).
  bool empty() const { return locks_.empty() && whole_readers_ == 0 && !whole_writer_ &&
                              waiters_.empty(); }

  // Returns whether a command that touches `key` in `mode` conflicts with a holder.
  bool Conflicts(uint64_t key, LockMode mode) const;

  // Acquires every lock of `req` if none conflicts with a holder or an earlier waiter; else
  // acquires nothing. Returns whether it acquired.
  bool TryAcquire(const LockRequest& req);

  // Queues `req` in transaction id order; when it is granted (see Design) its locks are taken
  // and on_grant runs on this shard's thread (possibly before Enqueue returns). A transient request holds nothing: on_grant runs at the moment it may
  // (at once, if no holder and no earlier waiter is in its way).
  // REQUIRES: TryAcquire(req) just failed, or req is transient.
  void Enqueue(LockRequest req, absl::AnyInvocable<void()> on_grant, bool transient);

  // Releases the locks of `req` (REQUIRES: held) and grants the waiters that may now run.
  void Release(const LockRequest& req);

  size_t num_waiters() const { return waiters_.size(); }
  size_t num_locked_keys() const { return locks_.size(); }
  // The highest transaction id a request to this table has carried.
  uint64_t max_txid() const { return max_txid_; }

 private:
  struct KeyState {
    uint32_t readers = 0;
    bool writer = false;
    uint32_t queued = 0;  // waiters naming this key
  };
  struct Waiter {
    LockRequest req;
    absl::AnyInvocable<void()> on_grant;
    bool transient;
    uint64_t order;  // req.txid, or for a transient the highest id seen when it arrived
  };

  bool HolderConflict(const LockRequest& req) const;
  void Acquire(const LockRequest& req);
  void Drop(const LockRequest& req);
  void Unqueue(const LockRequest& req);
  void EraseIfIdle(uint64_t key);
  // Grants every waiter that may run now; runs callbacks; repeats while releases happened.
  void Process();

  absl::flat_hash_map<uint64_t, KeyState> locks_;
  uint32_t whole_readers_ = 0;
  bool whole_writer_ = false;
  uint32_t exclusive_keys_ = 0;  // keys with writer set (for whole-shard shared requests)
  uint32_t held_keys_ = 0;       // keys with readers or writer (for whole-shard exclusive)
  uint32_t whole_queued_ = 0;    // waiters asking for the whole shard
  std::list<Waiter> waiters_;  // ascending `order`, FIFO among equal orders
  uint64_t max_txid_ = 0;      // the highest transaction id this table has seen
  bool processing_ = false;
  bool again_ = false;
};

}  // namespace dashkv
