// RunningScripts: the scripts running now, for SCRIPT KILL and FUNCTION KILL (and SHUTDOWN
// NOSAVE) from any thread. Each engine thread has a few slots; a run takes a free slot of its
// thread for its duration and its Lua count hook polls the slot's kill request.
// Thread-safe: a slot is taken and released by its engine only; any thread reads its fields
// and requests a kill through atomics.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

namespace dashkv {

struct RunSlot {
  enum Kill : uint8_t { kNone = 0, kKill = 1, kForce = 2 };
  std::atomic<int64_t> start_ms{0};  // 0: free
  std::atomic<bool> is_function{false};
  std::atomic<bool> wrote{false};    // the script ran a write command: SCRIPT KILL refuses
  std::atomic<uint8_t> kill{kNone};
};

class RunningScripts {
 public:
  explicit RunningScripts(unsigned engines);

  // Takes a free slot of `engine` (the calling thread's) for a run that starts now; nullptr
  // when all are taken (the run then cannot be killed).
  RunSlot* Acquire(unsigned engine, int64_t now_ms, bool is_function);
  static void Release(RunSlot* slot);

  enum class KillResult { kNotBusy, kKilled, kUnkillable, kOtherKind };
  // SCRIPT KILL (`function` false) or FUNCTION KILL: asks the oldest script running for at
  // least `threshold_ms` to stop, unless it wrote.
  KillResult Kill(bool function, int64_t now_ms, int64_t threshold_ms);
  // Stops every running script, written or not (SHUTDOWN NOSAVE).
  void KillAll();

 private:
  static constexpr unsigned kSlotsPerEngine = 8;
  unsigned engines_;
  std::unique_ptr<RunSlot[]> slots_;
};

}  // namespace dashkv
