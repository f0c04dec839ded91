// IntSet: a sorted set of 64-bit integers in Redis's "intset" byte format, the compact encoding of
// small all-integer sets (SADD of integers while size <= set-max-intset-entries).
// Thread: owned by the shard thread that owns the value; no internal synchronization.
#pragma once

#include <absl/status/statusor.h>

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <optional>
#include <string_view>

namespace dashkv {

// Design
//   One blob (counted AllocateBytes, core/memory.h), byte-identical to Redis's intset (and so
//   to the RDB "intset" encoding):
//     [encoding: u32 LE = 2, 4 or 8][length: u32 LE][length integers, each `encoding` bytes, LE,
//      strictly ascending]
//   Every element is stored with the same width. Adding a value that does not fit the current
//   width rewrites the whole set at the smallest width that fits it (an "upgrade"); the width never
//   shrinks on removal (as Redis). Lookups are binary searches: O(log n); Add/Remove shift the
//   tail: O(n) bytes moved, fine for the <= 512 (default) elements this encoding holds.
//   The object itself is one pointer (8 bytes); an empty set still owns an 8-byte header.
class IntSet {
 public:
  // Width of each stored integer in bytes (the blob's "encoding" field).
  enum class Width : uint32_t { k16 = 2, k32 = 4, k64 = 8 };

  // Size of the header (encoding + length) in bytes.
  static constexpr size_t kHeaderSize = 8;

  // Creates an empty set with 16-bit encoding.
  IntSet();
  ~IntSet();
  IntSet(IntSet&& other) noexcept : blob_(other.blob_) { other.blob_ = nullptr; }
  IntSet& operator=(IntSet&& other) noexcept;
  IntSet(const IntSet&) = delete;
  IntSet& operator=(const IntSet&) = delete;

  // Returns a deep copy.
  IntSet Clone() const;

  // Checks that `bytes` is a well-formed intset (valid encoding, length matching the byte size,
  // and, if `deep`, strictly ascending values). Never reads outside `bytes`; safe on untrusted
  // input (RDB loading).
  static bool Validate(std::string_view bytes, bool deep = true);

  // Returns a set holding a copy of `bytes`, or InvalidArgument/DataLoss when Validate(bytes,
  // true) fails.
  static absl::StatusOr<IntSet> FromBytes(std::string_view bytes);

  // Takes ownership of `blob`, a buffer from AllocateBytes holding a valid intset.
  // REQUIRES: Validate(blob) holds, and `blob` was allocated with AllocateBytes.
  static IntSet Adopt(uint8_t* blob);

  // Releases the blob to the caller (FreeBytes() it); leaves this set unusable except for
  // destruction or assignment.
  uint8_t* Release();

  // Inserts `v`. Returns true if it was not present. May upgrade the width. Invalidates
  // iterators and raw() views.
  bool Add(int64_t v);

  // Removes `v`. Returns true if it was present. Invalidates iterators and raw() views.
  bool Remove(int64_t v);

  // Returns true if `v` is a member. O(log n).
  bool Contains(int64_t v) const { return Find(v).has_value(); }

  // Returns the position of `v` in ascending order, if present.
  std::optional<uint32_t> Find(int64_t v) const;

  // Returns the i-th smallest member. REQUIRES: i < size().
  int64_t Get(uint32_t i) const;

  // Returns a uniformly chosen member, using `gen` (a UniformRandomBitGenerator).
  // REQUIRES: !empty().
  template <typename URBG>
  int64_t Random(URBG& gen) const {
    uint64_t r = static_cast<uint64_t>(gen());
    return Get(static_cast<uint32_t>(r % size()));
  }

  // Returns the smallest / largest member. REQUIRES: !empty().
  int64_t Min() const { return Get(0); }
  int64_t Max() const { return Get(size() - 1); }

  uint32_t size() const;
  bool empty() const { return size() == 0; }
  Width width() const;

  // Returns the blob's size in bytes (header included): what MEMORY USAGE / RDB see.
  size_t bytes() const { return kHeaderSize + size_t{size()} * static_cast<uint32_t>(width()); }

  // Returns a view of the blob (the RDB payload). Invalidated by Add/Remove.
  std::string_view raw() const {
    return {reinterpret_cast<const char*>(blob_), bytes()};
  }

  // Returns the smallest width able to store `v`.
  static Width WidthFor(int64_t v);

  // Ascending iteration over the members (values, not references).
  class const_iterator {
   public:
    using iterator_category = std::random_access_iterator_tag;
    using value_type = int64_t;
    using difference_type = std::ptrdiff_t;
    using pointer = void;
    using reference = int64_t;

    const_iterator() = default;
    int64_t operator*() const { return set_->Get(pos_); }
    const_iterator& operator++() {
      ++pos_;
      return *this;
    }
    const_iterator operator++(int) {
      const_iterator t = *this;
      ++pos_;
      return t;
    }
    const_iterator& operator--() {
      --pos_;
      return *this;
    }
    bool operator==(const const_iterator& o) const { return pos_ == o.pos_; }
    difference_type operator-(const const_iterator& o) const {
      return static_cast<difference_type>(pos_) - static_cast<difference_type>(o.pos_);
    }

   private:
    friend class IntSet;
    const_iterator(const IntSet* set, uint32_t pos) : set_(set), pos_(pos) {}
    const IntSet* set_ = nullptr;
    uint32_t pos_ = 0;
  };
  const_iterator begin() const { return const_iterator(this, 0); }
  const_iterator end() const { return const_iterator(this, size()); }

 private:
  explicit IntSet(uint8_t* blob) : blob_(blob) {}

  // Binary search: returns (found, position where `v` is or would be inserted).
  std::pair<bool, uint32_t> Search(int64_t v) const;
  void Upgrade(Width w, int64_t v);
  void SetLength(uint32_t n);

  uint8_t* blob_;
};

}  // namespace dashkv
