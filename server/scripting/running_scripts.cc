#include "server/scripting/running_scripts.h"

#include "io/engine_pool.h"
#include "core/base/clock.h"
#include "server/storage/shard_set.h"
#include "server/tx/transaction.h"

namespace dashkv {

RunningScripts::RunningScripts(io::EnginePool& pool, const std::atomic<int64_t>& threshold_ms)
    : pool_(pool),
      threshold_ms_(threshold_ms),
      engines_(pool.size()),
      slots_(new RunSlot[size_t{engines_} * kSlotsPerEngine]),
      shard_busy_(new ShardBusy[engines_]) {}

RunSlot* RunningScripts::Acquire(unsigned engine, int64_t now_ms, bool is_function) {
  RunSlot* slots = &slots_[size_t{engine} * kSlotsPerEngine];
  for (unsigned i = 0; i < kSlotsPerEngine; ++i) {
    RunSlot& s = slots[i];
    if (s.start_ms.load(std::memory_order_relaxed) != 0) continue;
    s.is_function.store(is_function, std::memory_order_relaxed);
    s.wrote.store(false, std::memory_order_relaxed);
    s.kill.store(RunSlot::kNone, std::memory_order_relaxed);
    s.owner = this;
    s.engine = engine;
    s.held_shards.clear();
    s.busy = false;
    s.start_ms.store(now_ms > 0 ? now_ms : 1, std::memory_order_release);
    return &s;
  }
  return nullptr;
}

void RunningScripts::MarkBusy(unsigned sid, bool function, int delta) {
  if (sid >= engines_) return;
  ShardBusy& b = shard_busy_[sid];
  if (delta > 0) {
    b.function.store(function, std::memory_order_relaxed);
    b.runs.fetch_add(1, std::memory_order_relaxed);
  } else {
    b.runs.fetch_sub(1, std::memory_order_relaxed);
  }
}

void RunningScripts::Release(RunSlot* slot) {
  if (slot == nullptr) return;
  if (slot->busy) {
    const bool function = slot->is_function.load(std::memory_order_relaxed);
    MarkBusy(slot->engine, function, -1);
    for (unsigned sid : slot->held_shards) {
      if (sid != slot->engine) MarkBusy(sid, function, -1);
    }
    busy_runs_.fetch_sub(1, std::memory_order_relaxed);
    slot->busy = false;
  }
  slot->start_ms.store(0, std::memory_order_release);
}

void RunningScripts::OnHook(RunSlot& slot) {
  if (!slot.busy) {
    const int64_t start = slot.start_ms.load(std::memory_order_relaxed);
    if (NowMs() - start < threshold_ms_.load(std::memory_order_relaxed)) return;
    slot.busy = true;
    const bool function = slot.is_function.load(std::memory_order_relaxed);
    busy_runs_.fetch_add(1, std::memory_order_relaxed);
    MarkBusy(slot.engine, function, +1);
    for (unsigned sid : slot.held_shards) {
      if (sid != slot.engine) MarkBusy(sid, function, +1);
    }
  }
  // Serves the thread's connections once: they get -BUSY (Dispatch), SCRIPT KILL reaches the
  // slot. Asio supports poll() nested in a handler of the same io_context.
  pool_[slot.engine].context().poll();
}

bool RunningScripts::Refuses(const CommandSpec& spec, CmdArgs args, unsigned engine,
                             const ShardSet& shards, bool* function) const {
  if (spec.HasFlag(kCmdAllowBusy)) return false;
  auto busy = [&](unsigned sid) {
    const ShardBusy& b = shard_busy_[sid];
    if (b.runs.load(std::memory_order_relaxed) == 0) return false;
    *function = b.function.load(std::memory_order_relaxed);
    return true;
  };
  if (engine < engines_ && busy(engine)) return true;  // a client of the busy thread
  const bool global = spec.tx_scope == TxScope::kAllShared ||
                      spec.tx_scope == TxScope::kAllExclusive ||
                      (spec.tx_scope == TxScope::kScript && !spec.HasKeys());
  if (global) {
    for (unsigned sid = 0; sid < engines_; ++sid) {
      if (busy(sid)) return true;
    }
    return false;
  }
  for (uint32_t k : spec.KeysOf(args)) {
    if (busy(shards.ShardOf(args[k]))) return true;
  }
  return false;
}

bool RunningScripts::BusyIsFunction() const {
  for (unsigned sid = 0; sid < engines_; ++sid) {
    if (shard_busy_[sid].runs.load(std::memory_order_relaxed) != 0) {
      return shard_busy_[sid].function.load(std::memory_order_relaxed);
    }
  }
  return false;
}

const char* RunningScripts::BusyText(bool function) {
  return function ? "BUSY Redis is busy running a script. You can only call FUNCTION KILL or "
                    "SHUTDOWN NOSAVE."
                  : "BUSY Redis is busy running a script. You can only call SCRIPT KILL or "
                    "SHUTDOWN NOSAVE.";
}

RunningScripts::KillResult RunningScripts::Kill(bool function, int64_t now_ms,
                                                int64_t threshold_ms) {
  RunSlot* oldest = nullptr;
  int64_t oldest_start = 0;
  for (size_t i = 0; i < size_t{engines_} * kSlotsPerEngine; ++i) {
    int64_t start = slots_[i].start_ms.load(std::memory_order_acquire);
    if (start == 0 || now_ms - start < threshold_ms) continue;
    if (oldest == nullptr || start < oldest_start) {
      oldest = &slots_[i];
      oldest_start = start;
    }
  }
  if (oldest == nullptr) return KillResult::kNotBusy;
  if (oldest->wrote.load(std::memory_order_relaxed)) return KillResult::kUnkillable;
  if (oldest->is_function.load(std::memory_order_relaxed) != function) {
    return KillResult::kOtherKind;
  }
  uint8_t none = RunSlot::kNone;
  oldest->kill.compare_exchange_strong(none, RunSlot::kKill, std::memory_order_relaxed);
  return KillResult::kKilled;
}

void RunningScripts::KillAll() {
  for (size_t i = 0; i < size_t{engines_} * kSlotsPerEngine; ++i) {
    slots_[i].kill.store(RunSlot::kForce, std::memory_order_relaxed);
  }
}

}  // namespace dashkv
