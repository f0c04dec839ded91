// Memory accounting: mimalloc is the process allocator, and every C++ allocation is counted.
// Thread-safe: counting is per thread with no locks; the readers (UsedMemory, PeakUsedMemory,
// ProcessRssBytes) may run on any thread.
//
// Design
//   core/memory.cc replaces the global operator new / operator delete (every form: plain, sized,
//   array, aligned, nothrow). Each one calls mi_malloc / mi_malloc_aligned / mi_free and adds or
//   subtracts mi_usable_size(p) to a counter owned by the calling thread. The hot path is one
//   thread-local relaxed load and store: no lock, no atomic read-modify-write.
//   A thread's counter is put in a registry (an intrusive list under a spin lock) the first time
//   the thread allocates; UsedMemory() sums the registry plus a global "retired" total into which
//   the counters of exited threads are folded (and allocations made while a thread registers or
//   after its counter was retired, which are rare, count there with an atomic add).
//   A block freed on another thread than the one that allocated it is subtracted from the freeing
//   thread's counter, which may therefore go negative: only the sum is meaningful.
//   Sampled sum: each exact sum (UsedMemory) is also kept as a sample, together with the value
//   it read from each thread's counter; SampledUsedMemory returns the sample plus the calling
//   thread's change since then, with no lock and no walk. The sample and the per-thread values
//   are double-buffered by the parity of a generation that the summing thread (under the
//   registry lock) publishes last, so a reader takes a sum and its own value from the same
//   sample unless two more samples complete during its three loads.
//   Failure: operator new throws std::bad_alloc, as the standard requires, so that a command
//   asking for more than can be had (a client-sized reservation) fails alone (the server turns
//   the exception into that command's error reply, server/server.h). AllocateBytes aborts
//   instead: its callers (listpack, intset, CompactObj blocks) are sized by data already bounded
//   by proto-max-bulk-len and are not written to unwind midway.
//   Bytes obtained with plain malloc() are NOT counted (C libraries such as zstd); they are still
//   served by mimalloc because libmimalloc.so overrides malloc and is linked into the binary.
//
//   Link-time note: a replacement operator new only takes effect if its object file is linked.
//   dashkv_core is a static library, so the linker pulls memory.o only when something refers to
//   a symbol in it. compact_object.cc does (AllocateBytes), and the server must call
//   InitMemoryAccounting() at start-up so that the replacement is present in every binary.
//
//   Sanitizer builds (DASHKV_SANITIZER defined): allocation goes through malloc/free so that
//   ASan sees (and checks) every block; counting stays the same (malloc_usable_size).
#pragma once

#include <cstddef>
#include <cstdint>

namespace dashkv {

// Registers the calling thread's counter and guarantees that the operator new replacement is
// linked into the binary. Call once from main() before starting threads. Idempotent.
void InitMemoryAccounting();

// Returns the bytes currently allocated through operator new (usable sizes) summed over all
// threads, live and exited, and keeps it as the sample SampledUsedMemory reads. Takes the
// registry lock and reads every thread's counter; do not call on a hot path.
int64_t UsedMemory();

// The last exact sum as one thread sees it (SampledUsedMemory).
struct UsedMemorySample {
  int64_t sum = 0;  // what the last UsedMemory() call returned
  int64_t own = 0;  // the calling thread's allocations minus its frees since that call
  int64_t total() const { return sum + own; }
};

// Returns the sum the last UsedMemory() call took (on any thread; 0 before the first) and the
// calling thread's own change since: total() is exact for this thread's changes and as of that
// call for the other threads'. No lock, no walk: three relaxed loads and an acquire load. How
// often to take a new sum is the caller's choice (server/storage/memory_budget.h).
UsedMemorySample SampledUsedMemory();

// Returns the largest value UsedMemory() has returned so far (a sampled peak: short spikes
// between two calls are not seen). Does not lock.
int64_t PeakUsedMemory();

// Returns this thread's own counter (allocations minus frees done on this thread; may be
// negative). Cheap; for tests and per-shard statistics.
int64_t ThreadUsedMemory();

// Gives the pages this thread's heap holds free back to the OS (mimalloc's forced collect, which
// also takes in the blocks other threads freed) when the process's counted memory (UsedMemory)
// fell by at least `min_drop` bytes since this thread's last call that returned memory or saw a
// new high, so that every thread calling it returns its share of a release whichever thread
// freed the blocks; then again at each later call while it keeps falling (a release spread
// over several calls is returned whole, not in `min_drop` steps) and once more at the call
// after that (mimalloc gives emptied pages back only at a collect after its purge delay);
// cheap otherwise. For
// idle upkeep (a timer), never a command path: a collect walks the thread's heap. Returns
// whether it collected.
bool ReturnFreedMemoryIfDropped(int64_t min_drop);
// Gives this thread's free pages back to the OS (as above) when the process's resident set
// exceeds the counted memory (UsedMemory) by at least `min_gap` more than it did at any
// earlier call on this thread, at growing intervals while it does: memory taken and freed
// again between two calls is never seen as a drop by ReturnFreedMemoryIfDropped, but its
// pages stay resident. Reads /proc/self/statm. For idle upkeep, as above. Returns whether it
// collected.
bool ReturnFreedMemoryIfResident(int64_t min_gap);

// Returns the resident set size of the process in bytes (from /proc/self/statm), 0 on error.
size_t ProcessRssBytes();

// Allocates n bytes that are counted like operator new (same allocator, same counter).
// Never returns nullptr and never throws (aborts on out-of-memory). Release with FreeBytes().
void* AllocateBytes(size_t n);

// Frees a block from AllocateBytes() (or operator new). nullptr is ignored.
void FreeBytes(void* p);

// Returns the usable size of a block from AllocateBytes() / operator new (>= requested size).
size_t AllocationSize(const void* p);

}  // namespace dashkv
