// SegmentArena: memory for a DashTable's segments. A segment (29,824 bytes for the server's
// geometry) allocated on its own takes mimalloc's next size class, 32 KiB: 9% of the table
// lost. Once a table has kChunkAfter segments, the arena carves segments out of large chunks
// and uses every usable byte the allocator gives it (mimalloc rounds large blocks to 512 KiB
// steps, and its usable size of a 2 MiB-aligned chunk includes the alignment slack: such a chunk
// holds 70 or more segments, under one segment lost). Segments are never freed one by one (a
// DashTable only grows until Clear), so there is no free list: Release() frees everything.
// Large chunks are 2 MiB-aligned. With a ChunkReserve (core/chunk_reserve.h) they come from it,
// faulted in ahead by another thread and advised for transparent huge pages: a lookup touches a
// metadata line and a key line of a random segment, and with 4 KiB pages both usually miss the
// TLB (bench/core/DASH_TABLE_RESULTS.md). When the reserve is empty, or the table has none, the
// arena allocates the chunk itself and gives no huge-page advice: the table's thread then takes
// 4 KiB faults spread over the inserts that use the chunk, not one 2 MiB fault in one insert
// (unless THP is set to `always`, which gives huge pages without advice).
// Thread: owned by the table's thread.
#pragma once

#include <cstddef>
#include <new>
#include <utility>
#include <vector>

#include "core/chunk_reserve.h"
#include "core/memory.h"

namespace dashkv::detail {

template <size_t kBlockSize, size_t kAlign>
class SegmentArena {
 public:
  static constexpr size_t kChunkAfter = 8;  // segments allocated one by one before chunking
  static constexpr size_t kSmallChunk = 512 * 1024;       // while the table is small
  static constexpr size_t kLargeChunk = ChunkReserve::kChunkBytes;  // from kLargeAfter on
  static constexpr size_t kLargeAfter = 64;
  static constexpr size_t kHugePage = ChunkReserve::kChunkAlign;  // alignment of large chunks

  SegmentArena() = default;
  SegmentArena(const SegmentArena&) = delete;
  SegmentArena& operator=(const SegmentArena&) = delete;
  ~SegmentArena() { Release(); }

  // Takes large chunks from `reserve` from now on (nullptr: none). The reserve must outlive the
  // arena's use of it; chunks already taken stay the arena's.
  void set_chunk_reserve(ChunkReserve* reserve) { reserve_ = reserve; }

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
    const bool large = bytes == kLargeChunk;
    void* p = large && reserve_ != nullptr ? reserve_->TryTake() : nullptr;
    const size_t align = large ? kHugePage : kAlign;
    if (p == nullptr) p = ::operator new(bytes, std::align_val_t(align));
    chunks_.emplace_back(p, align);
    bytes_ += AllocationSize(p);
    return p;
  }

  std::vector<std::pair<void*, size_t>> chunks_;  // (chunk, alignment it was allocated with)
  char* next_ = nullptr;   // next free block of the current chunk
  size_t left_ = 0;        // free blocks left in the current chunk
  size_t handed_out_ = 0;  // blocks handed out since the last Release
  size_t bytes_ = 0;
  ChunkReserve* reserve_ = nullptr;
};

}  // namespace dashkv::detail
