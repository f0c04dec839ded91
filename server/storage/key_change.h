// The storage change seam: every change to a shard's keys, told to the shard's ordered list of
// listeners (../shared/DESIGN.md §6a). DbSlice calls it; it knows no listener by name.
//
//   BeforeChange  an entry is about to be changed, inserted or removed (a forkless snapshot
//                 serializes its bucket there). Runs at the mutable lookup.
//   AfterWrite    a key was added or changed in place. Runs when the command is done with its
//                 entries (Finish: end of a shard command, of a shard task, of a blocking
//                 serve), once per mutable lookup, with `modified` cleared when the command
//                 said it changed nothing (NoChange) or failed.
//   AfterRemove   a key is gone, and why (deleted, expired, evicted, overwritten). Runs at once.
//   BeforeFlush   every key of database `db` is about to go (FLUSHDB, FLUSHALL).
//   BeforeSwap,   two databases are about to trade / have traded their contents (SWAPDB).
//   AfterSwap
//   OnEvent       a keyspace event a command (or DbSlice: `new`, `keymiss`, `expired`,
//                 `evicted`) raised: class, name and key.
// A listener says which of these it wants now (SetInterest); a kind nobody wants costs the
// write path one branch.
// Thread: owned by shard thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "server/storage/table_types.h"

namespace dashkv {

// Why a key went away.
enum class RemoveReason : uint8_t {
  kDeleted,      // by a command: DEL, UNLINK, an emptied container, the source of RENAME/MOVE
  kExpired,      // its deadline passed: on access, in the active cycle, or collected on insert
  kEvicted,      // to free memory
  kOverwritten,  // replaced by another value: the destination of RENAME, MOVE, COPY REPLACE
};

// The classes of keyspace events, with Redis's bit values (notify-keyspace-events letters).
enum NotifyClass : uint32_t {
  kNotifyKeyspace = 1u << 0,   // K
  kNotifyKeyevent = 1u << 1,   // E
  kNotifyGeneric = 1u << 2,    // g
  kNotifyString = 1u << 3,     // $
  kNotifyList = 1u << 4,       // l
  kNotifySet = 1u << 5,        // s
  kNotifyHash = 1u << 6,       // h
  kNotifyZset = 1u << 7,       // z
  kNotifyExpired = 1u << 8,    // x
  kNotifyEvicted = 1u << 9,    // e
  kNotifyStream = 1u << 10,    // t
  kNotifyKeyMiss = 1u << 11,   // m
  kNotifyModule = 1u << 13,    // d
  kNotifyNew = 1u << 14,       // n
};

// What a listener wants to hear (ChangeListeners::SetInterest).
enum ChangeInterest : uint32_t {
  kWantBefore = 1u << 0,
  kWantWrites = 1u << 1,
  kWantRemovals = 1u << 2,
  kWantEvents = 1u << 3,
};

class ChangeListener {
 public:
  virtual ~ChangeListener() = default;
  // `it`: the entry about to change, or end() for an insert into the bucket of `hash`.
  virtual void BeforeChange(unsigned /*db*/, PrimeIterator /*it*/, uint64_t /*hash*/) {}
  // `modified`: false when the command said it left the key as it was.
  virtual void AfterWrite(unsigned /*db*/, std::string_view /*key*/, bool /*modified*/) {}
  virtual void AfterRemove(unsigned /*db*/, std::string_view /*key*/,
                           RemoveReason /*reason*/) {}
  virtual void BeforeFlush(unsigned /*db*/) {}
  virtual void BeforeSwap(unsigned /*db1*/, unsigned /*db2*/) {}
  virtual void AfterSwap(unsigned /*db1*/, unsigned /*db2*/) {}
  // `cls`: one NotifyClass bit (a type class, or kNotifyExpired, kNotifyNew ...).
  virtual void OnEvent(unsigned /*db*/, NotifyClass /*cls*/, std::string_view /*event*/,
                       std::string_view /*key*/) {}
};

// The ordered listeners of one shard and the writes waiting for their AfterWrite.
class ChangeListeners {
 public:
  static constexpr unsigned kMaxListeners = 8;

  // Appends `listener` (called in registration order); returns its slot for SetInterest.
  // Registered at start-up, before the shard serves commands.
  unsigned Add(ChangeListener* listener);
  // Sets what the listener in `slot` wants (ChangeInterest bits).
  void SetInterest(unsigned slot, uint32_t interest);
  // Where to read which keyspace event classes are published (NotifyClass bits; 0: none): the
  // server's notify-keyspace-events setting, given at start-up. Any thread may change it.
  void set_notify_classes(const std::atomic<uint32_t>* classes) { notify_classes_ = classes; }

  // Where to read the end (ms since the epoch; 0: none) of a CLIENT PAUSE, during which keys
  // do not expire (server/client_pause.h). Given at start-up.
  void set_pause_end(const std::atomic<int64_t>* end_ms) { pause_end_ms_ = end_ms; }
  // Whether a pause keeps expired keys in place at `now_ms` (read only when a key has expired).
  bool keys_frozen(int64_t now_ms) const {
    return pause_end_ms_ != nullptr && pause_end_ms_->load(std::memory_order_relaxed) > now_ms;
  }

  // The origin of the changes made now: an opaque word that whoever runs a command sets
  // around it for the listeners (client-side caching: the client whose command it is, for
  // NOLOOP; server/tracking/client_tracking.h); 0: none. Set only while a command that wants
  // it runs, so it costs nothing otherwise.
  uint64_t origin() const { return origin_; }
  void set_origin(uint64_t origin) { origin_ = origin; }

  bool wants(ChangeInterest what) const { return (wanted_ & what) != 0; }
  bool notifies(NotifyClass cls) const {
    return (notify_classes_->load(std::memory_order_relaxed) & cls) != 0;
  }

  void Before(unsigned db, PrimeIterator it, uint64_t hash);
  // Queues an AfterWrite for the next Finish.
  // A key looked up for changing twice in a row (a write, then the check whether its container
  // became empty) is queued once.
  void QueueWrite(unsigned db, std::string_view key) {
    if (!pending_.empty() && pending_.back().db == db && pending_.back().key == key) return;
    pending_.push_back({std::string(key), db, true});
  }
  void Removed(unsigned db, std::string_view key, RemoveReason reason);
  // Database-wide changes: every listener hears them, whatever its interest.
  void Flushing(unsigned db);
  void Swapping(unsigned db1, unsigned db2);
  void Swapped(unsigned db1, unsigned db2);
  void Event(unsigned db, NotifyClass cls, std::string_view event, std::string_view key);

  // Marks the queued writes unmodified (the command changed nothing, or failed).
  void MarkUnmodified() {
    for (Pending& p : pending_) p.modified = false;
  }
  // Runs the queued AfterWrites in order and clears them. Cheap when none are queued.
  void Finish() {
    if (!pending_.empty()) [[unlikely]] RunPending();
  }
  bool has_pending() const { return !pending_.empty(); }

  // Counts one change (a mutable lookup or an erase) for INFO's rdb_changes_since_last_save.
  // Only the shard thread counts (a plain increment, no read-modify-write); any thread reads.
  void CountChange() {
    change_count_.store(change_count_.load(std::memory_order_relaxed) + 1,
                        std::memory_order_relaxed);
  }
  uint64_t change_count() const { return change_count_.load(std::memory_order_relaxed); }

 private:
  struct Pending {
    std::string key;
    unsigned db;
    bool modified;
  };
  void RunPending();
  template <typename Fn>
  void ForEach(ChangeInterest what, Fn&& fn) {
    for (unsigned i = 0; i < size_; ++i) {
      if (interest_[i] & what) fn(*listeners_[i]);
    }
  }

  ChangeListener* listeners_[kMaxListeners] = {};
  uint32_t interest_[kMaxListeners] = {};
  unsigned size_ = 0;
  uint32_t wanted_ = 0;          // union of interest_
  static inline const std::atomic<uint32_t> kNoClasses{0};
  const std::atomic<uint32_t>* notify_classes_ = &kNoClasses;
  const std::atomic<int64_t>* pause_end_ms_ = nullptr;
  std::vector<Pending> pending_;
  uint64_t origin_ = 0;
  std::atomic<uint64_t> change_count_{0};
};

// Clears the change origin of `changes` for its scope, then puts it back: around the commands of
// other clients that a command's shard task may run inline (the lock waiters its release
// grants, the blocked clients it serves), whose changes are theirs.
class ScopedNoOrigin {
 public:
  explicit ScopedNoOrigin(ChangeListeners& changes)
      : changes_(changes), saved_(changes.origin()) {
    changes.set_origin(0);
  }
  ~ScopedNoOrigin() { changes_.set_origin(saved_); }
  ScopedNoOrigin(const ScopedNoOrigin&) = delete;
  ScopedNoOrigin& operator=(const ScopedNoOrigin&) = delete;

 private:
  ChangeListeners& changes_;
  uint64_t saved_;
};

}  // namespace dashkv
