// RunningScripts: the scripts running now, for SCRIPT KILL and FUNCTION KILL (and SHUTDOWN
// NOSAVE) from any thread, and the busy state of scripts running past busy-reply-threshold.
// Each engine thread has a few slots; a run takes a free slot of its thread for its duration
// and its Lua count hook (every 100,000 instructions) calls OnHook.
//
// Busy scripts (Redis's -BUSY): once a run passes the threshold its shards — the shard of the
// thread running it and the shards it holds locks on — are marked busy, and from then on each
// hook call serves the thread's connections once (a nested poll of the engine's io_context:
// socket reads, writes and timers; not the engine's inbox, so no message from another thread
// runs on the script's shard). Dispatch answers -BUSY, unless the command may run during a busy
// script (SCRIPT KILL, FUNCTION KILL, SHUTDOWN ...), to every command of a client of a busy
// thread and to commands of other clients whose keys live on a busy shard; other shards keep
// serving. A command that was already on its way waits for the script.
// Thread-safe: a slot is taken and released by its engine only; any thread reads its fields,
// the busy marks and requests a kill through atomics.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "server/command_registry.h"

namespace dashkv {

namespace io {
class EnginePool;
}

class ShardSet;
class RunningScripts;

struct RunSlot {
  enum Kill : uint8_t { kNone = 0, kKill = 1, kForce = 2 };
  std::atomic<int64_t> start_ms{0};  // 0: free
  std::atomic<bool> is_function{false};
  std::atomic<bool> wrote{false};    // the script ran a write command: SCRIPT KILL refuses
  std::atomic<uint8_t> kill{kNone};
  // Engine-local: the run's engine, the other shards it holds locks on (marked busy with the
  // engine's own when the run passes the threshold), and whether it did.
  RunningScripts* owner = nullptr;
  unsigned engine = 0;
  std::vector<unsigned> held_shards;
  bool busy = false;
};

class RunningScripts {
 public:
  // `threshold_ms` is busy-reply-threshold (read at each hook call); `pool` serves the nested
  // polls of busy runs.
  RunningScripts(io::EnginePool& pool, const std::atomic<int64_t>& threshold_ms);

  // Takes a free slot of `engine` (the calling thread's) for a run that starts now; nullptr
  // when all are taken (the run then cannot be killed).
  RunSlot* Acquire(unsigned engine, int64_t now_ms, bool is_function);
  // Frees the slot (clearing its busy marks). Called by the slot's engine.
  void Release(RunSlot* slot);

  // The count hook of a run in `slot`: marks the run busy once it passed the threshold, and
  // then serves the engine's connections once.
  void OnHook(RunSlot& slot);

  // Whether a busy script holds shard `sid` (or runs on its thread).
  bool IsShardBusy(unsigned sid) const {
    return sid < engines_ && shard_busy_[sid].runs.load(std::memory_order_relaxed) != 0;
  }
  // Whether some script is busy (one relaxed load: Dispatch's fast check).
  bool any_busy() const { return busy_runs_.load(std::memory_order_relaxed) != 0; }
  // With any_busy(): whether `spec` called with `args` by a client of `engine` must be answered
  // -BUSY; then *function says whether the busy script of that shard is a function.
  bool Refuses(const CommandSpec& spec, CmdArgs args, unsigned engine,
               const ShardSet& shards, bool* function) const;
  // With any_busy(): whether a busy script is a function (the first busy shard's).
  bool BusyIsFunction() const;
  // Redis's -BUSY text for a busy EVAL script or function.
  static const char* BusyText(bool function);

  enum class KillResult { kNotBusy, kKilled, kUnkillable, kOtherKind };
  // SCRIPT KILL (`function` false) or FUNCTION KILL: asks the oldest script running for at
  // least `threshold_ms` to stop, unless it wrote.
  KillResult Kill(bool function, int64_t now_ms, int64_t threshold_ms);
  // Stops every running script, written or not (SHUTDOWN NOSAVE).
  void KillAll();

 private:
  static constexpr unsigned kSlotsPerEngine = 8;
  struct alignas(64) ShardBusy {
    std::atomic<uint32_t> runs{0};         // busy runs holding the shard
    std::atomic<bool> function{false};     // the kind of the latest one
  };
  void MarkBusy(unsigned sid, bool function, int delta);

  io::EnginePool& pool_;
  const std::atomic<int64_t>& threshold_ms_;
  unsigned engines_;
  std::unique_ptr<RunSlot[]> slots_;
  std::unique_ptr<ShardBusy[]> shard_busy_;
  alignas(64) std::atomic<uint32_t> busy_runs_{0};
};

}  // namespace dashkv
