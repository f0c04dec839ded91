// ShardSet: which shard owns a key, and the only API for running code on a shard
// (Seastar's submit_to): Await / HopTo / AwaitMany / AwaitAll from coroutines on engine threads,
// RunOnAllBlocking from main and tests. Callbacks get the target's Shard& and copy their
// results out; they never keep pointers into shard data. Each callback is a shard task: the
// change listeners hear its writes when it returns (Shard::FinishChanges).
// Thread: immutable after start; methods callable from any engine thread. A view (View) is
// engine-local to the client it was made for.
#pragma once

#include <utility>  // before asio: awaitable.hpp uses std::exchange

#include <absl/types/span.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string_view>
#include <type_traits>
#include <vector>

#include "core/base/logging.h"
#include "core/hash.h"
#include "io/engine_pool.h"
#include "io/hop.h"
#include "server/storage/shard.h"

namespace dashkv {

namespace detail {
// Holds a task's mode (Shard::EnterTask) from its construction to its end (LeaveTask).
class TaskModeScope {
 public:
  TaskModeScope(Shard& shard, ShardTaskMode mode) : shard_(shard), mode_(mode) {
    if (mode_.any()) [[unlikely]] outer_origin_ = shard_.EnterTask(mode_);
  }
  ~TaskModeScope() {
    if (mode_.any()) [[unlikely]] shard_.LeaveTask(mode_, outer_origin_);
  }
  TaskModeScope(const TaskModeScope&) = delete;
  TaskModeScope& operator=(const TaskModeScope&) = delete;

 private:
  Shard& shard_;
  ShardTaskMode mode_;
  uint64_t outer_origin_ = 0;
};

// Runs a shard task and ends it (Shard::FinishChanges: the listeners hear its writes before
// anything else runs on the shard), also when it throws. A `mode` other than the plain one
// holds while it runs, to the end of its FinishChanges (Shard::EnterTask).
template <typename F, typename... Args>
decltype(auto) RunShardTask(Shard& shard, ShardTaskMode mode, F& fn, Args&&... args) {
  TaskModeScope scope(shard, mode);
  try {
    if constexpr (std::is_void_v<std::invoke_result_t<F&, Shard&, Args...>>) {
      fn(shard, std::forward<Args>(args)...);
      shard.FinishChanges();
    } else {
      auto result = fn(shard, std::forward<Args>(args)...);
      shard.FinishChanges();
      return result;
    }
  } catch (...) {
    shard.FinishChanges();
    throw;
  }
}
}  // namespace detail

namespace detail {
// HashTagOf for a key whose first '{' is at `open`.
std::string_view HashTagAfter(std::string_view key, size_t open);
}  // namespace detail

// Returns the part of `key` that decides its shard: the content of the first non-empty {...}
// (Redis Cluster's hash tag rule), else the whole key. Inline: routing calls it for every key
// of a pipeline, and most keys have no '{'.
inline std::string_view HashTagOf(std::string_view key) {
  // memchr must not see the null data of an empty view; no view is longer than PTRDIFF_MAX,
  // and saying so keeps GCC's object-size check of memchr's bound quiet.
  if (key.empty() || key.size() > static_cast<size_t>(PTRDIFF_MAX)) return key;
  const void* open = std::memchr(key.data(), '{', key.size());
  if (open == nullptr) [[likely]] return key;
  return detail::HashTagAfter(key, static_cast<const char*>(open) - key.data());
}

class ShardSet {
 public:
  // Creates one shard per engine, each on its own engine's thread. REQUIRES: pool started.
  ShardSet(io::EnginePool& pool, unsigned num_dbs);
  // REQUIRES: the engines have been stopped and joined.
  ~ShardSet();

  // Returns the set to run a CLIENT NO-TOUCH client's tasks with: the same shards, but while
  // each of its tasks runs, lookups leave the access records (OBJECT IDLETIME / FREQ) as they
  // are, as PipelineRunner does for a single-shard command of such a client. Owned by this
  // set; its own no_touch() is itself. REQUIRES: the owner or its twin.
  ShardSet& no_touch() { return mode_.no_touch() ? *this : *no_touch_twin_; }

  // Returns a view: a set of the same shards whose tasks run with `mode` (no-touch, and the
  // change origin of the command they are part of, for the change listeners). It owns no
  // shard; this set must outlive it. For a client whose tasks carry more than no_touch()'s:
  // made once, then given its command's mode with set_mode.
  std::shared_ptr<ShardSet> View(ShardTaskMode mode) const;
  // Sets the mode of a view's tasks from the next one on (a task takes its mode when it is
  // submitted). REQUIRES: a view.
  void set_mode(ShardTaskMode mode) {
    DCHECK(!owner_);
    mode_ = mode;
  }
  ShardTaskMode mode() const { return mode_; }

  unsigned size() const { return size_; }
  unsigned num_dbs() const { return num_dbs_; }

  // Returns the shard that owns `key`: decided by the hash of its hash tag (HashTagOf) in the
  // tables (HashBytes), so that a key without a tag has one hash for its shard and its place
  // in the shard's table (ShardOf(key, key_hash)).
  unsigned ShardOf(std::string_view key) const {
    if (size_ == 1) return 0;
    return ShardOfTagHash(HashBytes(HashTagOf(key)));
  }
  // Returns ShardOf(key) given key_hash == HashBytes(key): hashes nothing more unless the key
  // has a hash tag.
  unsigned ShardOf(std::string_view key, uint64_t key_hash) const {
    if (size_ == 1) return 0;
    const std::string_view tag = HashTagOf(key);
    return ShardOfTagHash(tag.size() == key.size() ? key_hash : HashBytes(tag));
  }

  // Runs fn(Shard&) on shard `sid` and returns its result (inline when local).
  template <typename F>
  auto Await(unsigned sid, F fn) -> boost::asio::awaitable<std::invoke_result_t<F&, Shard&>> {
    Shard* shard = shards_[sid];
    return pool_.Await(sid, [fn = std::move(fn), shard, mode = mode_]() mutable {
      return detail::RunShardTask(*shard, mode, fn);
    });
  }

  // Returns the awaitable of a hop through `hop` (a reusable node, io/hop.h: no allocation)
  // that runs fn(Shard&) on shard `sid` (inline when local): `co_await ss.HopTo(hop, sid, fn);
  // hop.RethrowIfFailed();`. fn hands its results back through its references.
  // REQUIRES: as io::Hop::Run (fn captures references and scalars only).
  template <typename F>
  io::Hop::Start HopTo(io::Hop& hop, unsigned sid, F fn) {
    Shard* shard = shards_[sid];
    return hop.Run(pool_[sid], [fn, shard, mode = mode_]() mutable {
      detail::RunShardTask(*shard, mode, fn);
    });
  }

  // Runs fn(Shard&, io::Completion<R> done) on shard `sid`; resumes with the value `done` is
  // called with (once, on that shard's thread, now or later). For waits on the shard.
  template <typename R, typename F>
  boost::asio::awaitable<R> AwaitAsync(unsigned sid, F fn) {
    Shard* shard = shards_[sid];
    return pool_.AwaitAsync<R>(
        sid, [fn = std::move(fn), shard, mode = mode_](io::Completion<R> done) mutable {
          detail::RunShardTask(*shard, mode, fn, std::move(done));
        });
  }

  // Posts fn(Shard&) to shard `sid` without waiting (runs inline when local).
  template <typename F>
  void Post(unsigned sid, F fn) {
    Shard* shard = shards_[sid];
    if (Shard::Current() == shard) return detail::RunShardTask(*shard, mode_, fn);
    pool_.Post(sid, [fn = std::move(fn), shard, mode = mode_]() mutable {
      detail::RunShardTask(*shard, mode, fn);
    });
  }

  // Returns shard `sid`. REQUIRES: used only on that shard's thread.
  Shard& shard(unsigned sid) { return *shards_[sid]; }

  // Runs fn(Shard&) on every shard in `sids` in parallel; resumes when all are done.
  template <typename F>
  boost::asio::awaitable<void> AwaitMany(std::span<const unsigned> sids, F fn) {
    auto* shards = &shards_;
    return pool_.AwaitMany(sids, [fn = std::move(fn), shards, mode = mode_](unsigned i) mutable {
      detail::RunShardTask(*(*shards)[i], mode, fn);
    });
  }

  // Runs fn(Shard&) on every shard in parallel; resumes when all are done.
  template <typename F>
  boost::asio::awaitable<void> AwaitAll(F fn) {
    auto* shards = &shards_;
    return pool_.AwaitAll([fn = std::move(fn), shards, mode = mode_](unsigned i) mutable {
      detail::RunShardTask(*(*shards)[i], mode, fn);
    });
  }

  // Runs fn(Shard&) on every shard and blocks the calling non-engine thread until done.
  template <typename F>
  void RunOnAllBlocking(F fn) {
    pool_.RunOnAllBlocking([&](unsigned i) { detail::RunShardTask(*shards_[i], mode_, fn); });
  }

  io::EnginePool& pool() { return pool_; }

 private:
  // The shard of a tag whose HashBytes is `h`. Remixed with kShardSeed first: the table takes
  // its directory index from the top bits of the same hash and its bucket and fingerprint from
  // the low ones, so a shard chosen from raw bits of it would use part of its table only.
  unsigned ShardOfTagHash(uint64_t h) const {
    const uint64_t m = detail::Fold(h ^ kShardSeed, detail::kK1);
    return static_cast<unsigned>((static_cast<__uint128_t>(m) * size_) >> 64);
  }

  struct ViewTag {};
  // A view of `base` (the no_touch() twin, View): shares its shards, owns none.
  ShardSet(const ShardSet& base, ShardTaskMode mode, ViewTag);

  io::EnginePool& pool_;
  unsigned size_;
  unsigned num_dbs_;
  std::vector<Shard*> shards_;  // shards_[i] created and destroyed on engine i (by the owner)
  ShardTaskMode mode_;          // what its tasks carry (the owner's: nothing)
  bool owner_ = true;           // false in a view
  std::unique_ptr<ShardSet> no_touch_twin_;  // the owner's twin; nullptr in a view
};

}  // namespace dashkv
