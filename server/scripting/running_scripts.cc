#include "server/scripting/running_scripts.h"

namespace dashkv {

RunningScripts::RunningScripts(unsigned engines)
    : engines_(engines), slots_(new RunSlot[size_t{engines} * kSlotsPerEngine]) {}

RunSlot* RunningScripts::Acquire(unsigned engine, int64_t now_ms, bool is_function) {
  RunSlot* slots = &slots_[size_t{engine} * kSlotsPerEngine];
  for (unsigned i = 0; i < kSlotsPerEngine; ++i) {
    RunSlot& s = slots[i];
    if (s.start_ms.load(std::memory_order_relaxed) != 0) continue;
    s.is_function.store(is_function, std::memory_order_relaxed);
    s.wrote.store(false, std::memory_order_relaxed);
    s.kill.store(RunSlot::kNone, std::memory_order_relaxed);
    s.start_ms.store(now_ms > 0 ? now_ms : 1, std::memory_order_release);
    return &s;
  }
  return nullptr;
}

void RunningScripts::Release(RunSlot* slot) {
  if (slot != nullptr) slot->start_ms.store(0, std::memory_order_release);
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
