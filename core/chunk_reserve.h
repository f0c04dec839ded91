// ChunkReserve: 2 MiB chunks for a DashTable's segments, allocated and faulted in ahead of need
// by another thread, so that the shard thread growing a table never takes the page fault of a
// fresh huge page inside an insert. Such a fault zeroes 2 MiB at once (0.2 ms), and on a VM
// whose memory the host backs lazily it also takes 512 host faults (4-5 ms measured; with
// compaction up to 20 ms): a table that faults its own huge pages has a worst insert 50x its
// split cost. With the reserve, the inserting thread only pops a pointer.
// Thread-safe: one consumer (the thread owning the tables: TryTake) and one producer at a time
// (Refill, on a background thread), through a lock-free single-producer single-consumer ring.
#pragma once

#include <absl/functional/any_invocable.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace dashkv {

// Design
//  Chunks. Refill allocates each chunk with ::operator new(kChunkBytes, align kChunkAlign), so it
//  is counted in used_memory like every allocation, advises it for transparent huge pages
//  (madvise MADV_HUGEPAGE), and faults in its whole usable size (MADV_POPULATE_WRITE, else one
//  write per 4 KiB page). With THP off, or with memory the allocator had already faulted in, the
//  chunk keeps 4 KiB pages, still faulted in. A chunk the consumer takes is its own: it frees it
//  with ::operator delete(p, std::align_val_t(kChunkAlign)).
//  Ring. kCapacity slots; the producer fills slot tail % kCapacity and then publishes tail
//  (release); the consumer reads slot head % kCapacity after loading tail (acquire) and then
//  publishes head (release) so the producer may reuse the slot.
//  Demand. The reserve starts empty: a process whose tables never reach the large-chunk stage
//  holds no chunk. A take that finds the reserve empty (a miss: the caller allocates a chunk
//  itself, without huge pages) raises the target depth by one, up to the cap (Cap). A take that
//  leaves fewer than target chunks asks for a refill; at most one request is outstanding
//  (refill_requested_: set by the consumer when it asks, cleared by the producer when it starts,
//  so a take during a refill asks again and no request is lost).
//  Decay. The owner calls Decay() once per idle-check period (the server: every
//  kDecayPeriodMs). A period without any take lowers the target by one, down to kInitialTarget,
//  and the consumer frees the ready chunks above it, so a shard whose tables stopped growing
//  holds one chunk, not kCapacity. A Refill racing with Decay may leave one chunk above the new
//  target: the next idle period frees it.
//  Cap. Ready chunks are resident and counted in used_memory, so under a memory limit they are
//  memory the data may not have: the owner bounds the reserve (SetCap; the server: a share of
//  maxmemory, server/storage/memory_budget.h). The target never exceeds the cap, Refill stops
//  at it, and SetCap frees the ready chunks above it; a Refill racing with SetCap may leave one
//  chunk above the cap until the next SetCap. With a cap of 0 the reserve holds nothing and asks
//  for nothing: the tables allocate their chunks themselves.
class ChunkReserve {
 public:
  static constexpr size_t kChunkBytes = size_t{2} << 20;
  static constexpr size_t kChunkAlign = size_t{2} << 20;  // a huge page
  static constexpr unsigned kCapacity = 4;
  static constexpr unsigned kInitialTarget = 1;
  static constexpr int64_t kDecayPeriodMs = 10'000;

  ChunkReserve() = default;
  ChunkReserve(const ChunkReserve&) = delete;
  ChunkReserve& operator=(const ChunkReserve&) = delete;
  // Frees the chunks still in the reserve. REQUIRES: no Refill() running.
  ~ChunkReserve();

  // Sets what TryTake calls to have Refill() run soon on another thread (it must not block and
  // must not run Refill inline on the consumer). Without it, nothing refills the reserve.
  // REQUIRES: before the first TryTake.
  void set_refill_request(absl::AnyInvocable<void()> request) { request_ = std::move(request); }

  // Returns a chunk (kChunkAlign-aligned, at least kChunkBytes: its usable size is
  // AllocationSize(p), all faulted in) or nullptr when none is ready. Asks for a refill when the
  // reserve is below its target. Must not block. Consumer thread only.
  void* TryTake();

  // Allocates and faults in chunks until the reserve holds its target depth (within the cap).
  // May block for the page faults (0.2 ms to several ms per chunk). One producer thread at a
  // time; never the consumer's thread in the server (tests may call it there).
  void Refill();

  // Ends an idle-check period: when no TryTake happened since the previous call, lowers the
  // target by one (not under kInitialTarget) and frees the ready chunks above the target.
  // Returns the number of chunks freed. Must not block (frees, allocates nothing). Consumer
  // thread only.
  unsigned Decay();

  // Bounds the reserve to `cap` chunks (at most kCapacity): lowers the target to it and frees
  // the ready chunks above it. Returns the number of chunks freed. Must not block. Consumer
  // thread only.
  unsigned SetCap(unsigned cap);

  // Chunks ready now, the target depth, and the consumer's hits and misses. Any thread.
  unsigned ready() const;
  unsigned target() const { return target_.load(std::memory_order_relaxed); }
  unsigned cap() const { return cap_.load(std::memory_order_relaxed); }
  uint64_t hits() const { return hits_.load(std::memory_order_relaxed); }
  uint64_t misses() const { return misses_.load(std::memory_order_relaxed); }

 private:
  // Returns a new chunk, advised and faulted in.
  static void* NewChunk();
  void AskForRefill();
  // Frees ready chunks until at most `depth` remain; returns how many it freed. Consumer only.
  unsigned FreeAbove(unsigned depth);

  void* slots_[kCapacity] = {};
  alignas(64) std::atomic<uint64_t> head_{0};  // consumer: next slot to take
  alignas(64) std::atomic<uint64_t> tail_{0};  // producer: next slot to fill
  std::atomic<unsigned> target_{kInitialTarget};  // never above cap_
  std::atomic<unsigned> cap_{kCapacity};
  std::atomic<bool> refill_requested_{false};
  std::atomic<uint64_t> hits_{0};
  std::atomic<uint64_t> misses_{0};
  absl::AnyInvocable<void()> request_;
  uint64_t takes_at_decay_ = 0;  // hits + misses at the previous Decay (consumer only)
};

}  // namespace dashkv
