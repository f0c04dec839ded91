#include "core/chunk_reserve.h"

#include <sys/mman.h>

#include <algorithm>
#include <new>

#include "core/memory.h"

namespace dashkv {
namespace {

#ifndef MADV_POPULATE_WRITE
constexpr int MADV_POPULATE_WRITE = 23;  // Linux 5.14; older kernels answer EINVAL
#endif

constexpr size_t kPageBytes = 4096;

}  // namespace

ChunkReserve::~ChunkReserve() {
  for (uint64_t i = head_.load(); i != tail_.load(); ++i) {
    ::operator delete(slots_[i % kCapacity], std::align_val_t(kChunkAlign));
  }
}

void* ChunkReserve::TryTake() {
  const uint64_t head = head_.load(std::memory_order_relaxed);
  const uint64_t tail = tail_.load(std::memory_order_acquire);
  if (head == tail) {
    misses_.fetch_add(1, std::memory_order_relaxed);
    unsigned target = target_.load(std::memory_order_relaxed);
    if (target < cap()) target_.store(++target, std::memory_order_relaxed);
    if (target > 0) AskForRefill();
    return nullptr;
  }
  void* chunk = slots_[head % kCapacity];
  head_.store(head + 1, std::memory_order_release);
  hits_.fetch_add(1, std::memory_order_relaxed);
  if (tail - (head + 1) < target_.load(std::memory_order_relaxed)) AskForRefill();
  return chunk;
}

void ChunkReserve::AskForRefill() {
  if (!request_ || refill_requested_.exchange(true, std::memory_order_acq_rel)) return;
  request_();
}

void ChunkReserve::Refill() {
  refill_requested_.store(false, std::memory_order_release);
  for (;;) {
    const uint64_t tail = tail_.load(std::memory_order_relaxed);
    const uint64_t held = tail - head_.load(std::memory_order_acquire);
    if (held >= std::min(target_.load(std::memory_order_relaxed), cap())) return;
    slots_[tail % kCapacity] = NewChunk();
    tail_.store(tail + 1, std::memory_order_release);
  }
}

unsigned ChunkReserve::Decay() {
  const uint64_t takes = hits_.load(std::memory_order_relaxed) +
                         misses_.load(std::memory_order_relaxed);
  const bool idle = takes == takes_at_decay_;
  takes_at_decay_ = takes;
  if (!idle) return 0;
  unsigned target = target_.load(std::memory_order_relaxed);
  if (target > kInitialTarget) target_.store(--target, std::memory_order_relaxed);
  return FreeAbove(target);
}

unsigned ChunkReserve::SetCap(unsigned cap) {
  cap = std::min(cap, kCapacity);
  cap_.store(cap, std::memory_order_relaxed);
  if (target_.load(std::memory_order_relaxed) > cap) target_.store(cap, std::memory_order_relaxed);
  return FreeAbove(cap);
}

unsigned ChunkReserve::FreeAbove(unsigned depth) {
  unsigned freed = 0;
  for (;;) {
    const uint64_t head = head_.load(std::memory_order_relaxed);
    if (tail_.load(std::memory_order_acquire) - head <= depth) return freed;
    void* chunk = slots_[head % kCapacity];
    head_.store(head + 1, std::memory_order_release);
    ::operator delete(chunk, std::align_val_t(kChunkAlign));
    ++freed;
  }
}

unsigned ChunkReserve::ready() const {
  const uint64_t head = head_.load(std::memory_order_acquire);
  return static_cast<unsigned>(tail_.load(std::memory_order_acquire) - head);
}

void* ChunkReserve::NewChunk() {
  void* p = ::operator new(kChunkBytes, std::align_val_t(kChunkAlign));
  const size_t usable = AllocationSize(p);
  // Best effort, results ignored: the memory works the same with 4 KiB pages.
  (void)madvise(p, kChunkBytes, MADV_HUGEPAGE);
  if (madvise(p, usable, MADV_POPULATE_WRITE) != 0) {
    auto* bytes = static_cast<volatile char*>(p);
    for (size_t off = 0; off < usable; off += kPageBytes) bytes[off] = 0;
  }
  return p;
}

}  // namespace dashkv
