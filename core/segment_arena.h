// SegmentArena: memory for a DashTable's segments. A segment (29,824 bytes for the server's
// geometry) allocated on its own takes mimalloc's next size class, 32 KiB: 9% of the table
// lost. Once a table has kChunkAfter segments, the arena carves segments out of large chunks
// and uses every usable byte the allocator gives it (mimalloc rounds large blocks to 512 KiB
// steps, and its usable size of a 2 MiB-aligned chunk includes the alignment slack: such a chunk
// holds 70 or more segments, under one segment lost). Segments are never freed one by one (a
// DashTable only grows until Clear), so there is no free list: Release() frees everything.
// Large chunks are 2 MiB-aligned and marked for transparent huge pages (madvise MADV_HUGEPAGE):
// a lookup touches a metadata line and a key line of a random segment, and with 4 KiB pages both
// usually miss the TLB (bench/core/DASH_TABLE_RESULTS.md). The advice is a hint: with THP off, or
// with memory the allocator had already faulted in, a chunk keeps 4 KiB pages.
// Thread: owned by the table's thread.
#pragma once

#include <sys/mman.h>

#include <cstddef>
#include <new>
#include <utility>
#include <vector>

#include "core/memory.h"

namespace dashkv::detail {

template <size_t kBlockSize, size_t kAlign>
class SegmentArena {
 public:
  static constexpr size_t kChunkAfter = 8;  // segments allocated one by one before chunking
  static constexpr size_t kSmallChunk = 512 * 1024;       // while the table is small
  static constexpr size_t kLargeChunk = 2 * 1024 * 1024;  // from kLargeAfter segments on
  static constexpr size_t kLargeAfter = 64;
  static constexpr size_t kHugePage = 2 * 1024 * 1024;  // alignment of large chunks

  SegmentArena() = default;
  SegmentArena(const SegmentArena&) = delete;
  SegmentArena& operator=(const SegmentArena&) = delete;
  ~SegmentArena() { Release(); }

  // Returns uninitialized, kAlign-aligned memory for one segment.
  void* Allocate() {
    if (handed_out_++ < kChunkAfter) return NewChunk(kBlockSize);
    if (left_ == 0) {
      size_t want = handed_out_ < kLargeAfter ? kSmallChunk : kLargeChunk;
      if (want < kBlockSize) want = kBlockSize;
      next_ = static_cast<char*>(NewChunk(want));
      left_ = AllocationSize(next_) / kBlockSize;
    }
    void* p = next_;
    next_ += kBlockSize;
    --left_;
    return p;
  }

  // Frees every chunk. REQUIRES: the segments in them were destroyed.
  void Release() {
    for (auto [c, align] : chunks_) ::operator delete(c, std::align_val_t(align));
    chunks_.clear();
    handed_out_ = 0;
    left_ = 0;
    next_ = nullptr;
    bytes_ = 0;
  }

  // Bytes the allocator gave the arena (including blocks not handed out yet).
  size_t bytes() const { return bytes_; }

 private:
  void* NewChunk(size_t bytes) {
    const bool huge = bytes >= kLargeChunk;
    const size_t align = huge ? kHugePage : kAlign;
    void* p = ::operator new(bytes, std::align_val_t(align));
    chunks_.emplace_back(p, align);
    bytes_ += AllocationSize(p);
    // Best effort: the result is ignored (the memory works the same either way).
    if (huge) (void)madvise(p, bytes, MADV_HUGEPAGE);
    return p;
  }

  std::vector<std::pair<void*, size_t>> chunks_;  // (chunk, alignment it was allocated with)
  char* next_ = nullptr;   // next free block of the current chunk
  size_t left_ = 0;        // free blocks left in the current chunk
  size_t handed_out_ = 0;  // blocks handed out since the last Release
  size_t bytes_ = 0;
};

}  // namespace dashkv::detail
