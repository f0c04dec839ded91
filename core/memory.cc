#include "core/memory.h"

#include <fcntl.h>
#include <malloc.h>
#include <mimalloc.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <limits>
#include <new>
#include <thread>

#include "absl/base/attributes.h"
#include "absl/base/optimization.h"

namespace dashkv {
namespace {

enum class CounterState : uint8_t { kUnregistered, kRegistering, kActive, kRetired };

// One per thread; trivially destructible so that the hot path reads it without a TLS wrapper.
struct ThreadCounter {
  std::atomic<int64_t> bytes{0};
  // `bytes` as the sums of even and odd generation read it (written by the summing thread).
  std::atomic<int64_t> summed[2] = {0, 0};
  ThreadCounter* prev = nullptr;
  ThreadCounter* next = nullptr;
  CounterState state = CounterState::kUnregistered;
};

constinit thread_local ThreadCounter tls_counter;

// Guards the registry. A spin lock rather than a mutex: it is taken once per thread start and
// exit and by UsedMemory() for a short walk, it never allocates (the allocator itself calls it)
// and it needs no library beyond the standard one.
class SpinLock {
 public:
  void Lock() {
    while (locked_.exchange(true, std::memory_order_acquire)) std::this_thread::yield();
  }
  void Unlock() { locked_.store(false, std::memory_order_release); }

 private:
  std::atomic<bool> locked_{false};
};

class SpinLockHolder {
 public:
  explicit SpinLockHolder(SpinLock* l) : l_(l) { l_->Lock(); }
  ~SpinLockHolder() { l_->Unlock(); }
  SpinLockHolder(const SpinLockHolder&) = delete;
  SpinLockHolder& operator=(const SpinLockHolder&) = delete;

 private:
  SpinLock* l_;
};

constinit SpinLock registry_mu;
constinit ThreadCounter* registry_head = nullptr;  // guarded by registry_mu
// Counters of exited threads and allocations made outside an active counter.
constinit std::atomic<int64_t> retired_bytes{0};
constinit std::atomic<int64_t> peak_bytes{0};
// The sample (memory.h Design): the sums of even and odd generation, and the generation of the
// last one, published after its sum and the counters' `summed` values are stored.
constinit std::atomic<int64_t> sample_sum[2] = {0, 0};
constinit std::atomic<uint64_t> sample_gen{0};

void Register(ThreadCounter* c) {
  SpinLockHolder lock(&registry_mu);
  c->prev = nullptr;
  c->next = registry_head;
  if (registry_head != nullptr) registry_head->prev = c;
  registry_head = c;
  c->state = CounterState::kActive;
}

void Retire(ThreadCounter* c) {
  SpinLockHolder lock(&registry_mu);
  if (c->state != CounterState::kActive) return;
  retired_bytes.fetch_add(c->bytes.load(std::memory_order_relaxed), std::memory_order_relaxed);
  c->bytes.store(0, std::memory_order_relaxed);
  if (c->prev != nullptr) c->prev->next = c->next;
  if (c->next != nullptr) c->next->prev = c->prev;
  if (registry_head == c) registry_head = c->next;
  c->prev = c->next = nullptr;
  c->state = CounterState::kRetired;
}

// Its destructor retires the thread's counter when the thread exits.
struct ThreadRetirer {
  ThreadRetirer() { Register(&tls_counter); }
  ~ThreadRetirer() { Retire(&tls_counter); }
  void Touch() {}
};

thread_local ThreadRetirer tls_retirer;

ABSL_ATTRIBUTE_NOINLINE void CountSlow(int64_t delta) {
  ThreadCounter& c = tls_counter;
  if (c.state == CounterState::kUnregistered) {
    c.state = CounterState::kRegistering;  // allocations made while registering count globally
    tls_retirer.Touch();                   // constructs the retirer, which registers
  }
  if (c.state == CounterState::kActive) {
    c.bytes.store(c.bytes.load(std::memory_order_relaxed) + delta, std::memory_order_relaxed);
  } else {
    retired_bytes.fetch_add(delta, std::memory_order_relaxed);
  }
}

inline void Count(int64_t delta) {
  ThreadCounter& c = tls_counter;
  if (ABSL_PREDICT_TRUE(c.state == CounterState::kActive)) {
    c.bytes.store(c.bytes.load(std::memory_order_relaxed) + delta, std::memory_order_relaxed);
  } else {
    CountSlow(delta);
  }
}

[[noreturn]] void OutOfMemory() {
  static const char kMsg[] = "dashkv: out of memory\n";
  [[maybe_unused]] ssize_t n = write(STDERR_FILENO, kMsg, sizeof(kMsg) - 1);
  std::abort();
}

#ifdef DASHKV_SANITIZER
inline void* RawAlloc(size_t n) { return std::malloc(n == 0 ? 1 : n); }
inline void* RawAllocAligned(size_t n, size_t align) {
  void* p = nullptr;
  if (align < sizeof(void*)) align = sizeof(void*);
  return posix_memalign(&p, align, n == 0 ? 1 : n) == 0 ? p : nullptr;
}
inline void RawFree(void* p) { std::free(p); }
inline size_t RawUsable(const void* p) { return malloc_usable_size(const_cast<void*>(p)); }
#else
inline void* RawAlloc(size_t n) { return mi_malloc(n); }
inline void* RawAllocAligned(size_t n, size_t align) { return mi_malloc_aligned(n, align); }
inline void RawFree(void* p) { mi_free(p); }
inline size_t RawUsable(const void* p) { return mi_usable_size(p); }
#endif

inline void* CountedAlloc(size_t n) {
  void* p = RawAlloc(n);
  if (ABSL_PREDICT_TRUE(p != nullptr)) Count(static_cast<int64_t>(RawUsable(p)));
  return p;
}

inline void* CountedAllocAligned(size_t n, size_t align) {
  void* p = RawAllocAligned(n, align);
  if (ABSL_PREDICT_TRUE(p != nullptr)) Count(static_cast<int64_t>(RawUsable(p)));
  return p;
}

inline void CountedFree(void* p) {
  if (p == nullptr) return;
  Count(-static_cast<int64_t>(RawUsable(p)));
  RawFree(p);
}

}  // namespace

void InitMemoryAccounting() { Count(0); }

int64_t UsedMemory() {
  int64_t sum;
  {
    SpinLockHolder lock(&registry_mu);
    // The lock makes this the only writer of the sample.
    const uint64_t gen = sample_gen.load(std::memory_order_relaxed) + 1;
    const size_t k = gen & 1;
    sum = retired_bytes.load(std::memory_order_relaxed);
    for (ThreadCounter* c = registry_head; c != nullptr; c = c->next) {
      const int64_t v = c->bytes.load(std::memory_order_relaxed);
      c->summed[k].store(v, std::memory_order_relaxed);
      sum += v;
    }
    sample_sum[k].store(sum, std::memory_order_relaxed);
    sample_gen.store(gen, std::memory_order_release);
  }
  int64_t peak = peak_bytes.load(std::memory_order_relaxed);
  while (sum > peak && !peak_bytes.compare_exchange_weak(peak, sum, std::memory_order_relaxed)) {
  }
  return sum;
}

UsedMemorySample SampledUsedMemory() {
  const size_t k = sample_gen.load(std::memory_order_acquire) & 1;
  const ThreadCounter& c = tls_counter;
  // A thread registered after the sample has summed[k] == 0, and the sample did not count it.
  return {sample_sum[k].load(std::memory_order_relaxed),
          c.bytes.load(std::memory_order_relaxed) - c.summed[k].load(std::memory_order_relaxed)};
}

int64_t PeakUsedMemory() { return peak_bytes.load(std::memory_order_relaxed); }

bool ReturnFreedMemoryIfDropped(int64_t min_drop) {
  // The process's counted memory at this thread's last collect or high point. Process-wide,
  // not this thread's: a block allocated on one thread and freed on another lowers the second
  // thread's counter, while the pages it held stay in the first thread's heap.
  thread_local int64_t high = 0;
  thread_local bool falling = false;  // the last call collected
  const int64_t now = UsedMemory();
  if (now > high) high = now;
  // A release goes on being collected while it lasts, and once more at the call after it: a
  // forced collect frees the emptied pages, but mimalloc returns them to the OS only once its
  // purge delay has passed, at a later collect.
  const bool collect = high - now >= min_drop || falling;
  falling = collect && now < high;
  if (!collect) return false;
#ifndef DASHKV_SANITIZER
  mi_collect(true);
#endif
  high = now;
  return true;
}

bool ReturnFreedMemoryIfResident(int64_t min_gap) {
  // The collects for one gap come at growing intervals (1, 2, 4 ... 64 calls): pages the
  // allocator keeps on purpose (fragmentation, its delays) would otherwise be collected at
  // every call. The gap's return under the threshold starts the intervals over.
  thread_local int64_t floor = std::numeric_limits<int64_t>::max();
  thread_local unsigned wait = 0, interval = 1;
  const int64_t gap = static_cast<int64_t>(ProcessRssBytes()) - UsedMemory();
  floor = std::min(floor, gap);
  if (gap - floor < min_gap) {
    wait = 0;
    interval = 1;
    return false;
  }
  if (wait > 0) {
    --wait;
    return false;
  }
  wait = interval - 1;
  interval = std::min(interval * 2, 64u);
#ifndef DASHKV_SANITIZER
  mi_collect(true);
#endif
  return true;
}

int64_t ThreadUsedMemory() { return tls_counter.bytes.load(std::memory_order_relaxed); }

size_t ProcessRssBytes() {
  int fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  char buf[128];
  ssize_t n = read(fd, buf, sizeof(buf) - 1);
  close(fd);
  if (n <= 0) return 0;
  buf[n] = '\0';
  // Fields: size resident shared text lib data dt (in pages).
  char* p = buf;
  while (*p != '\0' && *p != ' ') ++p;
  size_t pages = std::strtoull(p, nullptr, 10);
  return pages * static_cast<size_t>(sysconf(_SC_PAGESIZE));
}

void* AllocateBytes(size_t n) {
  void* p = CountedAlloc(n);
  if (ABSL_PREDICT_FALSE(p == nullptr)) OutOfMemory();
  return p;
}

void FreeBytes(void* p) { CountedFree(p); }

size_t AllocationSize(const void* p) { return RawUsable(p); }

}  // namespace dashkv

// Replacements of the global allocation functions ([new.delete]). Sizes passed to the sized
// forms are ignored: the usable size is what was counted.
void* operator new(size_t n) {
  void* p = dashkv::CountedAlloc(n);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}
void* operator new[](size_t n) {
  void* p = dashkv::CountedAlloc(n);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}
void* operator new(size_t n, const std::nothrow_t&) noexcept { return dashkv::CountedAlloc(n); }
void* operator new[](size_t n, const std::nothrow_t&) noexcept { return dashkv::CountedAlloc(n); }

void* operator new(size_t n, std::align_val_t al) {
  void* p = dashkv::CountedAllocAligned(n, static_cast<size_t>(al));
  if (p == nullptr) throw std::bad_alloc();
  return p;
}
void* operator new[](size_t n, std::align_val_t al) {
  void* p = dashkv::CountedAllocAligned(n, static_cast<size_t>(al));
  if (p == nullptr) throw std::bad_alloc();
  return p;
}
void* operator new(size_t n, std::align_val_t al, const std::nothrow_t&) noexcept {
  return dashkv::CountedAllocAligned(n, static_cast<size_t>(al));
}
void* operator new[](size_t n, std::align_val_t al, const std::nothrow_t&) noexcept {
  return dashkv::CountedAllocAligned(n, static_cast<size_t>(al));
}

void operator delete(void* p) noexcept { dashkv::CountedFree(p); }
void operator delete[](void* p) noexcept { dashkv::CountedFree(p); }
void operator delete(void* p, size_t) noexcept { dashkv::CountedFree(p); }
void operator delete[](void* p, size_t) noexcept { dashkv::CountedFree(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { dashkv::CountedFree(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { dashkv::CountedFree(p); }
void operator delete(void* p, std::align_val_t) noexcept { dashkv::CountedFree(p); }
void operator delete[](void* p, std::align_val_t) noexcept { dashkv::CountedFree(p); }
void operator delete(void* p, size_t, std::align_val_t) noexcept { dashkv::CountedFree(p); }
void operator delete[](void* p, size_t, std::align_val_t) noexcept { dashkv::CountedFree(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept {
  dashkv::CountedFree(p);
}
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept {
  dashkv::CountedFree(p);
}
