// SegmentArena: memory for a DashTable's segments. A segment (29,344 bytes for the server's
// geometry) allocated on its own takes mimalloc's next size class, 32 KiB: 11.7% of the table
// lost. Once a table has kChunkAfter segments, the arena carves segments out of large chunks
// and uses every usable byte the allocator gives it (mimalloc rounds large blocks to 512 KiB
// steps: a 2 MiB chunk holds 71 segments, 0.7% lost). Segments are never freed one by one (a
// DashTable only grows until Clear), so there is no free list: Release() frees everything.
// Thread: owned by the table's thread.
#pragma once

#include <cstddef>
#include <new>
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
    for (void* c : chunks_) ::operator delete(c, std::align_val_t(kAlign));
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
    void* p = ::operator new(bytes, std::align_val_t(kAlign));
    chunks_.push_back(p);
    bytes_ += AllocationSize(p);
    return p;
  }

  std::vector<void*> chunks_;
  char* next_ = nullptr;   // next free block of the current chunk
  size_t left_ = 0;        // free blocks left in the current chunk
  size_t handed_out_ = 0;  // blocks handed out since the last Release
  size_t bytes_ = 0;
};

}  // namespace dashkv::detail
