// Scheduling priority of the calling thread (Linux keeps a niceness per thread).
// Thread: each call acts on the thread that makes it.
#pragma once

#include <absl/status/status.h>

namespace dashkv::io {

// Adds `increment` to the calling thread's niceness (the result capped to -20..19), leaving the
// process's other threads as they are. A positive increment makes the thread yield the CPU to
// normal-priority threads when CPUs are contended, while it still runs at full speed when they
// are not (unlike EngineOptions::background's SCHED_IDLE, which can starve it). Lowering the
// priority needs no privilege. Returns the errno of getpriority/setpriority on failure.
absl::Status NiceCurrentThread(int increment);

// Returns the calling thread's niceness.
int CurrentThreadNice();

}  // namespace dashkv::io
