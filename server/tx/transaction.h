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
//     2. takes a transaction id and acquires: one parallel hop TryAcquire's every involved
//        shard. If every shard grants at once (the uncontended case) it holds its locks after
//        that single hop. Otherwise it releases what it got and acquires shard by shard in
//        ascending shard order, waiting in each shard's queue, in id order (a hop that completes
//        when the lock is granted);
//     3. runs its hops (one message per involved shard per hop) while holding the locks;
//     4. releases with one one-way message per shard; releasing grants the shard's waiters.
//   No deadlock: a waiter in step 2's ordered phase holds locks only on lower shards, and the
//   parallel phase never waits, so no cycle of waiters can form (within one shard a waiter
//   waits for holders and for older waiters only). No starvation: a newcomer's TryAcquire fails
//   while a waiter wants one of its keys, and only the finitely many older transactions may be
//   queued ahead of a waiter. No shard thread ever waits: waiting is a suspended coroutine on
//   the coordinator's thread.
//
//   One-hop commands (MGET, EXISTS, MSET, DEL ...: CommandSpec::one_hop) fold steps into their
//   single hop (OnlyHop below). A read takes its locks and reads in the same message (two-phase
//   locking lets a transaction read a key as soon as it holds its lock; nothing is released
//   before every shard granted); if a shard refuses, the reads are thrown away and the command
//   acquires as in step 2 and reads again. A write acquires first (a write cannot be undone)
//   and releases each shard's locks in the message that writes there (every lock is already
//   held, so releasing one is the start of the shrinking phase).
//
//   Pipelined multi-shard groups (server/tx/multi_part.h, multi_group.cc): consecutive
//   pipelined calls whose keys span shards lock the union of their keys as one coordinator and
//   run each shard's parts of all of them in one message. With two shards of which one is the
//   connection's own (and for EXEC, PipelineRunner::RunShardGroupLocalFirst), the local locks
//   are taken synchronously first; then one message to the other shard takes its locks and, if
//   granted, runs there and releases at once: every lock is held by then, so even a write may
//   run in the message that locks. The local work runs after it, under the local locks, which
//   no other transaction could take in between. One round trip instead of two (writes) or one
//   plus a one-way release (reads). A refusal at either step gives everything back and falls
//   back to step 2's ordered acquisition, so this never waits while holding a lock.
//
//   Single-shard commands keep their fast path (no transaction id, no lock, no extra message):
//   before running, a command checks its keys against the shard's table only when the table is
//   not empty (one branch otherwise). A command whose key is locked by a running transaction
//   queues behind it as a "transient" waiter and runs when the transaction releases, so a
//   transaction's effects are seen all together or not at all: strict two-phase locking over
//   everything that touches its keys, which makes it serializable.
//
//   Transaction ids: a multi-shard operation takes an id when it starts acquiring (single-shard
//   commands never do). Every shard's queue is ordered by id, so the transactions that wait on
//   several shards are granted in the same order everywhere, oldest first, whatever order their
//   messages arrived in; the uncontended case (step 2's single hop) runs out of order, as soon
//   as its keys are free. An id needs only to be unique and to grow with time, so each engine
//   thread numbers its own (NextTxId: a clock in the high bits, the engine in the low ones)
//   rather than all of them taking turns on one shared counter, whose cache line would travel
//   between the cores on every transaction (bench/e2e/SCALING_MODEL.md). The clock is a hybrid
//   logical clock: it is at least the monotonic time in microseconds, one more than the
//   engine's last id, and past the highest id the engine's own shard's lock table has seen. So
//   ids of different engines follow the time their transactions started (within how far an
//   engine handing out more than one id per microsecond runs ahead), and an engine that was
//   idle does not hand out ids older than the ones already waiting.
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
#include "server/storage/shard_set.h"

namespace dashkv {

// Returns the WATCH table key of `key` in database `db` (2 bytes of db, then the key).
std::string LockKeyOf(unsigned db, std::string_view key);
// Returns the intent lock fingerprint of `key` in database `db`.
uint64_t LockHashOf(unsigned db, std::string_view key);
// Returns a new transaction id (Design: Transaction ids), never 0.
uint64_t NextTxId();

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
  // Adds the key whose fingerprint is `lock_hash` (LockHashOf) on shard `sid` (its owner) in
  // `mode`, without looking for it among the keys already added: many keys at once cost
  // O(n log n) in all, with MergeDuplicates after the last. REQUIRES: not held.
  void AddUnmerged(unsigned sid, uint64_t lock_hash, LockMode mode);
  // Merges the keys AddUnmerged added twice (exclusive wins). REQUIRES: not held.
  void MergeDuplicates();

  // Acquires every lock added; resumes when all are held. May wait (never a shard thread).
  boost::asio::awaitable<void> Acquire();
  // Releases the locks (one one-way message per remote shard). REQUIRES: held.
  void Release();

  // Acquires as Acquire's ordered phase alone (after a failed attempt at once): takes a
  // transaction id and acquires shard by shard in ascending order, waiting; with `but_last`,
  // all but the highest shard, which AcquireLastAndRun then takes. May wait.
  boost::asio::awaitable<void> AcquireOrdered(bool but_last);
  // Takes the highest shard's locks, waiting in its queue, and runs fn(Shard&) there in the
  // message that got them (every other lock is held: AcquireOrdered(true) came first).
  template <typename F>
  boost::asio::awaitable<void> AcquireLastAndRun(F fn);

  // One-hop commands (see Design): set by the caller before the command runs.
  void set_one_hop(bool v) { one_hop_ = v; }
  bool one_hop() const { return one_hop_; }
  // On shard `shard` (its thread, during a hop of this coordinator): tries to take its locks
  // at once; records a success for the coordinator.
  bool TryAcquireOn(Shard& shard);
  // After a hop of TryAcquireOn's: held if every shard granted; else gives back what was
  // granted (one-way messages) and returns false.
  bool SettleTryAcquire();
  // On shard `shard` (its thread, during a hop of this coordinator): releases its locks there,
  // touching the watchers of its keys marked written; Release() then skips it.
  void ReleaseOn(Shard& shard);

  // Gives back every lock this coordinator holds or was granted, after its command failed
  // midway (an exception unwound it between any two of the steps above): Release() when held,
  // else the grants of a TryAcquireOn hop not settled yet. Safe in every state.
  void Abandon();

  // Forgets held locks without releasing them: for a process that is ending, whose shards
  // will never run another command (the shutdown's final save keeps every shard to the end).
  void Forget() { held_ = false; }

  bool held() const { return held_; }
  bool empty() const { return shards_.empty(); }
  // The locks asked for on shard `sid`.
  const LockRequest& request(unsigned sid) const { return requests_[sid]; }
  // Shards with at least one lock, ascending.
  std::span<const unsigned> shards() const { return {shards_.data(), shards_.size()}; }
  // Returns whether `key` of `db` (or its whole shard) is covered in a mode at least `mode`.
  bool Covers(unsigned db, std::string_view key, LockMode mode) const;

 private:
  // Gives back the grants of a TryAcquireOn hop (one-way messages) and forgets them.
  void GiveBackGrants();
  // Acquires on `sid`, waiting in its queue if needed.
  boost::asio::awaitable<void> AcquireOne(unsigned sid);
  // Gives every request a new transaction id.
  void TakeTxId();

  ShardSet& shard_set_;
  absl::InlinedVector<LockRequest, 4> requests_;  // by shard index
  absl::InlinedVector<unsigned, 4> shards_;  // ascending
  absl::InlinedVector<uint8_t, 4> granted_;   // by shard: TryAcquireOn succeeded
  absl::InlinedVector<uint8_t, 4> released_;  // by shard: ReleaseOn ran
  bool held_ = false;
  bool one_hop_ = false;
};

template <typename F>
boost::asio::awaitable<void> KeyLocks::AcquireLastAndRun(F fn) {
  DCHECK(held_);
  const LockRequest* req = &requests_[shards_.back()];
  co_await shard_set_.AwaitAsync<void>(
      shards_.back(), [req, &fn](Shard& shard, io::Completion<void> done) {
        if (shard.locks().TryAcquire(*req)) {
          fn(shard);
          return done();
        }
        Shard* sp = &shard;
        // The copy of the request is the queue's; the coordinator's stays for Release.
        shard.locks().Enqueue(*req, [sp, &fn, done = std::move(done)]() mutable {
          fn(*sp);
          done();
        }, /*transient=*/false);
      });
}

// Runs fn(Shard&) on the shards `sids` in parallel as the only hop of a one-hop command
// (CommandSpec::one_hop) under `locks` (the command's own, from RunCoordCommand; nullptr or
// another operation's locks: a plain hop). `sids` must be the shards of the locks. fn must
// overwrite everything it outputs: a read may run twice (see Design).
template <typename F>
boost::asio::awaitable<void> OnlyHop(ShardSet& ss, KeyLocks* locks,
                                     std::span<const unsigned> sids, F fn) {
  if (locks == nullptr || !locks->one_hop()) {
    co_await ss.AwaitMany(sids, fn);
  } else if (locks->held()) {  // a write: release each shard as it is done
    co_await ss.AwaitMany(sids, [&](Shard& shard) {
      fn(shard);
      locks->ReleaseOn(shard);
    });
  } else {  // a read: lock and read in one message, or lock as usual and read again
    co_await ss.AwaitMany(sids, [&](Shard& shard) {
      if (locks->TryAcquireOn(shard)) fn(shard);
    });
    if (!locks->SettleTryAcquire()) {
      co_await locks->Acquire();
      co_await ss.AwaitMany(sids, fn);
    }
  }
}

}  // namespace dashkv
