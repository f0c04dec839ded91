// Blocking commands (BLPOP, BRPOP, BLMOVE, BRPOPLPUSH, BLMPOP, BZPOPMIN, BZPOPMAX, BZMPOP,
// XREAD BLOCK and XREADGROUP BLOCK): the per-shard registry of blocked clients and the waiter a
// blocked command parks on.
// Thread: BlockingRegistry is owned by its shard's thread; BlockedClient is shared (see below);
// BlockedCall is engine-local to the blocked connection.
//
// Design
//   A blocked command is a coroutine on its connection's thread parked on a BlockedClient: a
//   one-shot waiter registered in the BlockingRegistry of every shard owning one of its keys
//   (in a per-key FIFO queue, by database and key). Whoever ends the wait first *claims* it
//   (one atomic exchange), records the outcome and resumes the coroutine with one message to its
//   engine: exactly one outcome, exactly one reply, whatever races (serve vs timeout vs CLIENT
//   UNBLOCK vs disconnect).
//
//   Waking: the registry listens to the shard's changes (server/storage/key_change.h): a key
//   modified or swapped while clients wait on it becomes "ready", and so does a key removed
//   (deleted, expired, overwritten, flushed) while a group reader waits on it; a write its command reports as no change (NoChange: XGROUP SETID,
//   XREADGROUP, XACK ...) does not, as Redis signals none, and XGROUP DESTROY marks its key
//   ready itself (Wake). Ready keys are served right after the command that made them ready
//   (PipelineRunner::RunShardCommand), after a transaction releases its intent locks (a key
//   locked by a running transaction or EXEC is served only at its release, so a woken client
//   never sees a transaction half done), and otherwise by a message the shard posts to itself. Serving walks the key's queue in FIFO order:
//     - a client whose keys all live on this shard ("served on shard") is served there: the
//       shard checks the element is there, claims the client, pops (and for BLMOVE pushes to
//       the destination, also on this shard) and resumes it with the reply. The pop is one
//       shard callback: atomic with respect to every other command.
//     - a client with keys on several shards (BLPOP k1 k2 across shards, BLMOVE across shards)
//       is claimed and resumed with kReady; it then retries under KeyLocks on all its keys
//       (arguments in order, as the first attempt). If it finds nothing (another command took
//       the element between the wake and its locks), it re-registers *in place* (its queue
//       positions are kept) and parks again.
//     - a claimed cross-shard pop not yet unregistered (retrying, or timing out) stops the
//       walk: the element is kept for it, and its removal or re-registration marks the key
//       ready again. A claimed single-shard client (timing out) is skipped.
//     - a client waiting for another type (BZPOPMIN on a key that became a list) is skipped and
//       stays blocked, as in Redis 7.0.
//   What serving a client takes from the others decides how the walk goes on (ServeTakes):
//     - pops (kElements) take what they serve: the walk restarts after each client served and
//       stops when the key has nothing left.
//     - readers (kStreamRead, XREAD BLOCK) take nothing: serving one leaves the entries for the
//       others, so the walk goes on through the whole queue and serves every reader with an
//       entry after its own id (each with its COUNT), in FIFO order; a reader with nothing new
//       (its id is ahead, the stream was deleted or holds another type) is skipped and stays
//       blocked, as in Redis 7.0. A claimed reader (retrying or timing out) is skipped too:
//       nothing is kept for it. `$` is resolved to the stream's last id (0-0 if missing) on the
//       key's shard before the client first tries.
//     - group readers (kStreamReadGroup, XREADGROUP BLOCK, every id ">") take what they are
//       served from their own group only: each new entry goes to exactly one consumer of a group
//       (the first in FIFO order; with COUNT n, up to n entries each) and enters its pending
//       list unless NOACK; the consumer is created when first served. A consumer whose group
//       has nothing new is skipped and the walk goes on: readers and other groups' consumers
//       behind it are served from the same entries. A cross-shard consumer woken (or still
//       retrying) holds its group's entries: the later consumers of that group are skipped in
//       this walk, the others served. A consumer whose stream is gone (deleted, expired,
//       overwritten by another type, flushed, renamed away) is served the error "UNBLOCKED the
//       stream key no longer exists", one whose group was destroyed (or is missing from a
//       stream created again) "NOGROUP the consumer group this client was blocked on no longer
//       exists", as Redis 7.0.
//   A woken cross-shard reader or group reader retries like a cross-shard pop: its retry reads
//   every key (a group reader first checks all of them for a gone stream or group). A reader is
//   served with the key that woke it only, as Redis.
//   Plugging in another kind of blocked command: add a Kind, its checks and serve step in
//   CheckBlockedKey / ServeBlockedKey / ReturnPopped (blocking_ops.cc) and its ServeTakes; the
//   registry, the FIFO queues, the wake-up, the timeouts and the disconnect checks then work
//   unchanged. The connection side is RunBlocking in blocking_commands.cc: a reply Shape there
//   and an entry point like RunBlockingStreamRead (server/commands/blocking_commands.h).
//   Every pop and push made for a blocking command (at once, served by a shard, by a retry, or
//   given back) touches the WATCHers of the key it changed, as Redis's signalModifiedKey; a
//   group reader's delivery does not (Redis signals no change of group state).
//   Guarantees: every element (every new entry, per group) goes to exactly one client; a
//   client blocked on keys of one shard
//   is served in FIFO order among the clients blocked on that key. Weaker across shards: a
//   client registered on several shards may be woken by two of them; the one that loses the
//   claim simply serves its next client, and between the wake of a cross-shard client and its
//   retry a non-blocking command (LPOP ...) may take the element, after which the client parks
//   again at its old position.
//
//   Timeouts, CLIENT UNBLOCK and disconnects run on the connection's engine: they claim the
//   current BlockedClient through its BlockedCall (or, while a cross-shard client is retrying,
//   leave an interrupt that the retry honours), then the coroutine unregisters itself from its
//   shards. Nothing of a finished client stays in any registry.
//
//   A client that left takes nothing. Its engine learns of a disconnect only when it gets to the
//   socket event, while the shard serving a push may run on another thread at once: a client
//   whose FIN or RST had reached the host before the push (a push sent right after the
//   client's close()) could be served and its element written to a dead socket. Two checks
//   close this:
//     1. Before the claim: the shard asks the kernel (SocketPeerGone: poll with POLLRDHUP, no
//        wait) whether the client's socket is still open on both sides. If not, the shard
//        claims the client itself with kClosed (the same one-winner claim as every other
//        outcome) and serves the next client. So a disconnect that reached the host before the
//        serve always wins, as in Redis (which handles the EOF before the later push).
//     2. After the claim: the connection's engine checks again (its peer watch fired, the
//        socket was closed here by CLIENT KILL, or SocketPeerGone) before writing the reply. A
//        client that left in between gets no reply: the popped elements go back to the key
//        they came from, at the end they came from, in their order (ZADD NX for members, so a
//        member added again meanwhile keeps its new score), as one shard task behind any
//        transaction holding the key; that write serves the next waiter. A key that now holds
//        another type was overwritten after the pop: the elements would have been destroyed
//        with it anyway and are dropped. BLMOVE / BRPOPLPUSH return nothing: the moved element
//        is in the destination, a committed write that other clients may already have used;
//        the reply was only a copy of it. A group reader's entries stay in its consumer's
//        pending list (XCLAIM / XAUTOCLAIM recover them), as when Redis's reply to a client
//        that left is lost; with NOACK they are gone, as in Redis.
//   A cross-shard client checks 2. before its retry takes anything and again after it (still
//   under its locks). What stays is TCP's own window: a client that leaves after its reply was
//   handed to the socket loses it, as with Redis.
//   The probe (one poll() per client served, on the shard's thread) reads the socket
//   descriptor the connection had when it parked. The descriptor is closed only when the
//   connection ends, after the command (then the client is claimed), or by CLIENT KILL: a
//   reused number then answers for another socket, but the client is gone either way, and a
//   client wrongly seen alive is caught by check 2.
#pragma once

#include <utility>  // before asio: awaitable.hpp uses std::exchange

#include <absl/container/flat_hash_map.h>
#include <absl/container/flat_hash_set.h>

#include <atomic>
#include <boost/asio/awaitable.hpp>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/listpack.h"
#include "io/engine.h"
#include "io/engine_pool.h"
#include "server/op_status.h"
#include "server/commands/stream_read.h"
#include "server/storage/key_change.h"
#include "server/values/stream_value.h"

namespace dashkv {

class Config;
class Shard;

// What a blocking command waits for. Immutable once built; shared read-only by the shards it is
// registered on.
struct BlockRequest {
  enum class Kind : uint8_t { kListPop, kListMove, kZsetPop, kStreamRead, kStreamReadGroup };
  Kind kind = Kind::kListPop;
  unsigned db = 0;
  std::vector<std::string> keys;  // the source keys, in argument order
  std::string dest;               // kListMove
  ListEnd from = ListEnd::kHead;  // kListPop / kListMove: the end popped
  ListEnd to = ListEnd::kHead;    // kListMove: the end pushed
  bool zmax = false;              // kZsetPop: ZPOPMAX side
  int64_t count = 1;              // elements popped at most (BLMPOP / BZMPOP COUNT); streams:
                                  // entries per key at most (0: no limit)
  std::vector<StreamID> after;    // kStreamRead: per key, the id whose successors are served
  std::string group;              // kStreamReadGroup: the consumer group read
  std::string consumer;           // kStreamReadGroup: the consumer served
  bool noack = false;             // kStreamReadGroup: NOACK (delivered entries are not pending)
  const Config* config = nullptr;
};

// The outcome of a pop: the key served and what was popped, or an error status.
struct PopResult {
  OpStatus status = OpStatus::kKeyNotFound;  // kOk: served; kKeyNotFound: nothing there
  size_t key = 0;                            // index in BlockRequest::keys
  std::vector<std::string> items;            // list elements or zset members
  std::vector<double> scores;                // zset scores
  std::vector<StreamRead> streams;           // streams: the keys read, in key order
};

// What serving a client takes away from the clients after it in its key's queue; it decides how
// a key's walk goes on (see Design).
enum class ServeTakes : uint8_t {
  kElements,      // pops: what was served is gone for everyone
  kNothing,       // readers (kStreamRead): every reader may get the same entries
  kGroupEntries,  // kStreamReadGroup: the entries served are gone for its group only
};
inline ServeTakes TakesOnServe(const BlockRequest& req) {
  switch (req.kind) {
    case BlockRequest::Kind::kStreamRead:
      return ServeTakes::kNothing;
    case BlockRequest::Kind::kStreamReadGroup:
      return ServeTakes::kGroupEntries;
    case BlockRequest::Kind::kListPop:
    case BlockRequest::Kind::kListMove:
    case BlockRequest::Kind::kZsetPop:
      break;
  }
  return ServeTakes::kElements;
}

// Why a parked command resumes.
enum class WakeReason : uint8_t {
  kServed,        // a shard served it: PopResult holds the reply
  kReady,         // a key of a cross-shard client became ready: retry under locks
  kTimeout,       // timeout expired, or CLIENT UNBLOCK ... TIMEOUT
  kUnblockError,  // CLIENT UNBLOCK ... ERROR
  kClosed,        // the client disconnected
  kShutdown,      // the server stops
};

// Shard-side pop ops used by serving and by the blocking commands (blocking_commands.cc).
// Returns whether keys[key] can be served now: kOk, kKeyNotFound (nothing for the client) or
// kWrongType (it waits for another type). For kStreamReadGroup a stream that is gone (deleted,
// retyped) or whose group is gone is kOk: serving answers the error (BlockedKeysError).
OpStatus CheckBlockedKey(Shard& shard, const BlockRequest& req, size_t key, int64_t now_ms);
// Pops from keys[key] (and for kListMove pushes to dest, which must live on this shard); reads
// for the streams. REQUIRES: CheckBlockedKey(...) == kOk. A wrong-typed destination gives
// kWrongType; kStreamReadGroup gives BlockedKeysError's error when its key or group is gone.
PopResult ServeBlockedKey(Shard& shard, const BlockRequest& req, size_t key, int64_t now_ms);
// Returns the error that answers a kStreamReadGroup client instead of entries, for the first of
// keys[first..last) in order whose stream was deleted or retyped (kStreamBlockedKeyGone) or
// whose group was destroyed (kStreamBlockedGroupGone), as Redis 7.0; kOk when there is none and
// for the other kinds.
OpStatus BlockedKeysError(Shard& shard, const BlockRequest& req, size_t first, size_t last,
                          int64_t now_ms);
// Tries keys[first..last) in order: the first non-empty one is served; a wrong-typed one
// stops with kWrongType. Readers read every key of the range with entries (kOk if any); a
// wrong-typed key counts as empty for them (XREAD checks the types before it blocks; a stream
// retyped while the client waits keeps it waiting, as Redis 7.0). kStreamReadGroup reads every
// key with entries new to its group too, unless BlockedKeysError gives an error: then it reads
// nothing and returns that error. Used by the first attempt and the retries.
PopResult TryBlockedKeys(Shard& shard, const BlockRequest& req, size_t first, size_t last,
                         int64_t now_ms);
// Gives the elements of `popped` (a pop for a client that left) back to keys[popped.key]: at
// the end they were popped from, in their order; zset members only where absent. Nothing for
// kListMove (the element is in the destination), the streams or a failed pop; dropped if the
// key now holds another type (see Design). Touches WATCH and marks the key ready like any
// write.
// REQUIRES: the key is not locked by a transaction other than the caller's.
void ReturnPopped(Shard& shard, const BlockRequest& req, const PopResult& popped, int64_t now_ms);

// Returns whether the peer of socket `fd` has closed or reset the connection, or `fd` < 0 (the
// socket was closed here). Asks the kernel without waiting; bytes still unread do not hide a
// close. Thread-safe: any thread.
bool SocketPeerGone(int fd);

// One wait of one blocked command (a new one per park). Thread-safe: TryClaim from any thread;
// the outcome is written by the claimer only; Wait and the resumption run on the home engine.
class BlockedClient : public std::enable_shared_from_this<BlockedClient> {
 public:
  // `peer_fd`: the socket descriptor of the blocked connection (for PeerGone).
  BlockedClient(io::Engine* home, std::shared_ptr<const BlockRequest> request,
                bool served_on_shard, int peer_fd)
      : home_(home),
        request_(std::move(request)),
        served_on_shard_(served_on_shard),
        peer_fd_(peer_fd) {}

  const BlockRequest& request() const { return *request_; }
  // Returns whether the client's peer has left (SocketPeerGone; see Design). Any thread.
  bool PeerGone() const { return SocketPeerGone(peer_fd_); }
  // Whether shards serve it themselves (all its keys on one shard) or wake it for a retry.
  bool served_on_shard() const { return served_on_shard_; }
  bool claimed() const { return claimed_.load(std::memory_order_acquire); }
  // Returns true to exactly one caller.
  bool TryClaim() { return !claimed_.exchange(true, std::memory_order_acq_rel); }
  // Records the outcome and resumes the waiting coroutine on its engine (one message).
  // REQUIRES: the caller's TryClaim() returned true.
  void Finish(WakeReason reason, PopResult result = {});

  // Suspends until Finish; returns its reason. REQUIRES: on the home engine, once.
  boost::asio::awaitable<WakeReason> Wait();
  // The served result (after Wait returned kServed).
  PopResult& result() { return result_; }

 private:
  void Fire();  // on the home engine

  io::Engine* home_;
  std::shared_ptr<const BlockRequest> request_;
  bool served_on_shard_;
  int peer_fd_;
  std::atomic<bool> claimed_{false};
  WakeReason reason_ = WakeReason::kTimeout;  // written by the claimer before Finish's message
  PopResult result_;
  bool fired_ = false;  // home engine only
  std::optional<io::detail::AwaitableHandler<void()>> handler_;  // home engine only
};

// The engine-local side of one blocking command while it may park: what timeouts, CLIENT
// UNBLOCK and disconnects act on. Thread: engine-local (the blocked connection's engine).
class BlockedCall {
 public:
  // Ends the wait with `reason` (claims the current waiter, or leaves the interrupt for a
  // retrying cross-shard client). Returns false when an interrupt was already recorded.
  bool Interrupt(WakeReason reason);
  // Makes `client` the waiter interrupts act on; applies a pending interrupt to it.
  void SetCurrent(std::shared_ptr<BlockedClient> client);
  std::optional<WakeReason> interrupt() const { return interrupt_; }

 private:
  std::shared_ptr<BlockedClient> current_;
  std::optional<WakeReason> interrupt_;
};

// The blocked clients of one shard, per (database, key), and its ready keys. A change listener
// (server/storage/key_change.h): while clients wait, every key written (modified) or removed on
// the shard, and every key of a flushed or of two swapped databases, is checked for waiters.
// Thread: owned by shard thread.
class BlockingRegistry : public ChangeListener {
 public:
  explicit BlockingRegistry(Shard* shard) : shard_(shard) {}
  // Registers the registry with the shard's listeners.
  void Attach(ChangeListeners* changes) {
    changes_ = changes;
    slot_ = changes->Add(this);
  }
  BlockingRegistry(const BlockingRegistry&) = delete;
  BlockingRegistry& operator=(const BlockingRegistry&) = delete;

  // Whether no client waits on this shard (the one branch of the write paths).
  bool empty() const { return queues_.empty(); }
  bool has_ready() const { return !ready_.empty(); }
  // While deferred, ServeReady does nothing: a one-shard EXEC runs without locks, and clients
  // it unblocks are served after its last command, not between two of them (as Redis).
  void set_deferred(bool deferred) { deferred_ = deferred; }
  bool deferred() const { return deferred_; }
  size_t num_clients() const { return keys_of_.size(); }

  // A key was modified: marks it ready when clients wait on it, and makes sure it is served
  // soon (a message to this shard if no hook does). A write the command reported as no change
  // (NoChange: XGROUP SETID, XREADGROUP, a failed command ...) wakes nobody, as Redis.
  void AfterWrite(unsigned db, std::string_view key, bool modified) override {
    if (modified && !queues_.empty()) MarkReady(db, key);
  }
  // A key is gone: its blocked XREADGROUP clients answer an error. Nobody else is woken: a
  // removal serves no pop or read (and a key loaded quietly after a flush serves nobody).
  void AfterRemove(unsigned db, std::string_view key, RemoveReason) override;
  // Every key of `db` goes: as AfterRemove for each key clients wait on.
  void BeforeFlush(unsigned db) override;
  // Keys of both databases may now hold what their clients wait for.
  void AfterSwap(unsigned db1, unsigned db2) override;
  // Marks `key` ready when clients wait on it: for a change no write reports (XGROUP DESTROY,
  // which ends the wait of the group's blocked consumers).
  void Wake(unsigned db, std::string_view key) {
    if (!queues_.empty()) MarkReady(db, key);
  }

  // Registers `client` on the keys `key_indexes` of its request (all owned by this shard). With
  // `replace`, takes over replace's queue positions (a cross-shard client parking again) and
  // drops replace. Returns false once the registry is shut down (the client is not added).
  bool Add(const std::shared_ptr<BlockedClient>& client, const std::vector<size_t>& key_indexes,
           const BlockedClient* replace = nullptr);
  // Removes `client` from every queue of this shard (no-op if absent) and serves its keys again
  // (an element may have been kept for it).
  void Remove(const BlockedClient* client);
  // Serves the ready keys whose intent locks are free (see the file comment). Cheap no-op when
  // nothing is ready.
  void ServeReady();
  // Ends every wait with kShutdown and refuses new ones (server stop; engines still running).
  void Shutdown();

 private:
  struct Entry {
    std::shared_ptr<BlockedClient> client;
    uint32_t key;  // index in the client's request keys
  };
  void MarkReady(unsigned db, std::string_view key);
  // Marks ready every key of database `db` (or of either of db1, db2) that clients wait on.
  void MarkDbsReady(unsigned db1, unsigned db2);
  // Marks `lock_key` ready when a blocked XREADGROUP client waits on it.
  void MarkGroupReadersReady(const std::string& lock_key);
  // Tells the listeners whether this registry wants writes and removals (only while clients
  // wait).
  void UpdateInterest();
  // Serves the queue of `lock_key` as far as it can; returns false when the key is locked.
  bool ServeKey(const std::string& lock_key, int64_t now_ms);
  bool Locked(const std::string& lock_key) const;
  // Removes `client`'s entries; returns the lock keys it waited on.
  std::vector<std::string> Unlink(const BlockedClient* client);

  Shard* shard_;
  ChangeListeners* changes_ = nullptr;
  unsigned slot_ = 0;
  absl::flat_hash_map<std::string, std::deque<Entry>> queues_;  // by LockKeyOf(db, key)
  absl::flat_hash_map<const BlockedClient*, std::vector<std::string>> keys_of_;
  std::deque<std::string> ready_;  // FIFO of ready lock keys (each once: ready_set_)
  absl::flat_hash_set<std::string> ready_set_;
  bool serving_ = false;
  bool deferred_ = false;
  bool post_pending_ = false;  // a ServeReady message to this shard is queued
  bool closed_ = false;
};

}  // namespace dashkv
