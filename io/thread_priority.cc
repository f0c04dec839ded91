#include "io/thread_priority.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace dashkv::io {

namespace {

// PRIO_PROCESS with a thread id names that one thread on Linux (threads are tasks).
id_t MyTid() { return static_cast<id_t>(gettid()); }

}  // namespace

int CurrentThreadNice() {
  // getpriority may legitimately return -1; errno tells a failure, which cannot happen for
  // the calling thread.
  return getpriority(PRIO_PROCESS, MyTid());
}

absl::Status NiceCurrentThread(int increment) {
  errno = 0;
  const int current = getpriority(PRIO_PROCESS, MyTid());
  if (current == -1 && errno != 0) return absl::ErrnoToStatus(errno, "getpriority");
  const int wanted = std::clamp(current + increment, -20, 19);
  if (setpriority(PRIO_PROCESS, MyTid(), wanted) != 0) {
    return absl::ErrnoToStatus(errno, "setpriority");
  }
  return absl::OkStatus();
}

}  // namespace dashkv::io
