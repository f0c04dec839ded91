// SegmentArena: memory for a DashTable's segments. A segment (29,344 bytes for the server's
// geometry) allocated on its own takes mimalloc's next size class, 32 KiB: 11.7% of the table
// lost. Once a table has kChunkAfter segments, the arena carves them out of chunks of
// kChunkSegments (0.3% lost). Segments are never freed one by one (a DashTable only grows until
// Clear), so there is no free list: Release() frees everything at once.
// Thread: owned by the table's thread.
#pragma once

#include <cstddef>
#include <new>
#include <vector>

namespace dashkv::detail {

template <size_t kBlockSize, size_t kAlign>
class SegmentArena {
 public:
  static constexpr size_t kChunkAfter = 8;     // segments allocated one by one before chunking
  static constexpr size_t kChunkSegments = 16;  // 16 x 29,344 B: 0.3% above a mimalloc bin

  SegmentArena() = default;
  SegmentArena(const SegmentArena&) = delete;
  SegmentArena& operator=(const SegmentArena&) = delete;
  ~SegmentArena() { Release(); }

  // Returns uninitialized, kAlign-aligned memory for one segment.
  void* Allocate() {
    if (handed_out_++ < kChunkAfter) return NewChunk(1);
    if (left_ == 0) {
      next_ = static_cast<char*>(NewChunk(kChunkSegments));
      left_ = kChunkSegments;
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

  // Bytes requested from the allocator (including blocks not handed out yet).
  size_t bytes() const { return bytes_; }

 private:
  void* NewChunk(size_t segments) {
    void* p = ::operator new(kBlockSize * segments, std::align_val_t(kAlign));
    chunks_.push_back(p);
    bytes_ += kBlockSize * segments;
    return p;
  }

  std::vector<void*> chunks_;
  char* next_ = nullptr;  // next free block of the current chunk
  size_t left_ = 0;       // free blocks left in the current chunk
  size_t handed_out_ = 0;  // blocks handed out since the last Release
  size_t bytes_ = 0;
};

}  // namespace dashkv::detail
