// SortedIndex: the ordered index of a large sorted set ("skiplist" encoding in OBJECT ENCODING):
// (score, member) pairs in Redis's order, with O(log n) insert, delete, rank and select.
// Thread: owned by the shard thread that owns the value; no internal synchronization.
#pragma once

#include <absl/functional/function_ref.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string_view>

#include "core/score.h"

namespace dashkv {

// An owned member string packed into 8 bytes: up to 7 bytes inline (no allocation), longer ones
// in a malloc'd blob [LEB128 length][bytes] that never moves while the member lives. The value is
// a plain word: copying it does not copy or free the bytes (the owner calls Free once).
class PackedMember {
 public:
  static constexpr size_t kMaxInline = 7;

  PackedMember() = default;  // uninitialized: only to be assigned

  // Returns a member holding a copy of `s` (allocates when s.size() > kMaxInline).
  static PackedMember Make(std::string_view s);
  static PackedMember FromBits(uint64_t bits) { return PackedMember(bits); }

  // Frees the heap blob, if any. REQUIRES: called once per Make.
  void Free();

  // Returns the bytes. For inline members the view points into *this: it dies with this object.
  std::string_view view() const;

  bool is_inline() const { return (bits_ & 1) != 0; }
  uint64_t bits() const { return bits_; }

  // Returns the heap bytes owned (0 when inline).
  size_t HeapBytes() const;

 private:
  explicit PackedMember(uint64_t bits) : bits_(bits) {}
  // Inline: bit 0 = 1, bits 1..3 = length, bytes 1..7 = data (little-endian word).
  // Heap: the blob pointer (malloc alignment leaves bit 0 clear).
  uint64_t bits_;
};

// Design
//   An order-statistic B-tree (a B-tree, not a B+tree: every element lives exactly once, in a leaf
//   or an inner node, so members need no duplicated separator keys). Minimum degree t = 16: every
//   node but the root holds 15..31 elements; inner nodes hold 16..32 children plus, per child, the
//   number of elements in that child's subtree (uint32), so rank and select are one root-to-leaf
//   walk summing counts: O(t log_t n). An element is 16 bytes (double score + PackedMember).
//   Leaves are 504 bytes, inner nodes 888 bytes; about 97% of the elements sit in leaves, which
//   are 50..100% full, so the index costs ~16/0.66 ~ 24 bytes per element plus the heap blobs of
//   members longer than 7 bytes. Measured at 1M random members "member:<i>" (bench/core/
//   sorted_index_bench.cc): 38 bytes/member requested, 41 RSS, vs 62/64 for a span skiplist
//   (Redis's structure, without its dict); insert 4x, rank 4.5x, select 7x, range 3.5x faster.
//   Insert splits full nodes on the way down and delete refills thin nodes on the way down
//   (rotations or merges; Cormen et al.'s single-pass algorithms), so each is one descent.
//   Order: score ascending (doubles, -0 == 0), ties by member bytes (memcmp, then length).
//   Scores must not be NaN. (score, member) pairs are unique; the index itself does not forbid
//   one member at two scores: member uniqueness belongs to the set's member -> score map.
//   Any mutation invalidates Iterators and member views handed out before it.
class SortedIndex {
 public:
  // One element as seen from outside: the member view is valid until the next mutation.
  struct Element {
    double score;
    std::string_view member;
  };

  // Who frees the members' heap blobs: the index (kOwned, the default: Insert copies the member)
  // or the caller (kBorrowed: InsertBorrowed takes a PackedMember the caller keeps alive until it
  // has been deleted from the index; used by the sorted set, whose member -> score table owns the
  // bytes, so that a member longer than 7 bytes is stored once).
  enum class MemberOwnership : uint8_t { kOwned, kBorrowed };

  explicit SortedIndex(MemberOwnership ownership = MemberOwnership::kOwned);
  ~SortedIndex();
  SortedIndex(SortedIndex&& other) noexcept;
  SortedIndex& operator=(SortedIndex&& other) noexcept;
  SortedIndex(const SortedIndex&) = delete;
  SortedIndex& operator=(const SortedIndex&) = delete;

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

  // Returns the bytes used: nodes plus owned member blobs (MEMORY USAGE).
  size_t MemoryUsage() const { return node_bytes_ + member_bytes_; }

  // Inserts (score, member). Returns false (and changes nothing) if the pair is present.
  // REQUIRES: !isnan(score).
  bool Insert(double score, std::string_view member);

  // Inserts (score, member) without copying the member's bytes. Returns false if present.
  // REQUIRES: kBorrowed ownership, !isnan(score), `member` outlives its stay in the index.
  bool InsertBorrowed(double score, PackedMember member);

  // Removes (score, member). Returns false if it is not present.
  bool Delete(double score, std::string_view member);

  // Moves member from old_score to new_score, keeping its storage (no reallocation); in place
  // when the order does not change. Returns false if (old_score, member) is not present.
  // REQUIRES: !isnan(new_score), and (new_score, member) not present unless equal to the old.
  bool UpdateScore(double old_score, std::string_view member, double new_score);

  // Returns true if (score, member) is present.
  bool Contains(double score, std::string_view member) const {
    return Rank(score, member).has_value();
  }

  // Returns the 0-based ascending rank of (score, member), if present (ZRANK; ZREVRANK is
  // size() - 1 - rank). O(log n).
  std::optional<uint64_t> Rank(double score, std::string_view member) const;

  // Returns the element of ascending rank `rank`. REQUIRES: rank < size(). O(log n).
  Element At(uint64_t rank) const;

  // Returns the number of elements with score < min (or <= min when `exclusive`): the rank of the
  // first element with score >= min (> min), size() if none.
  uint64_t ScoreLowerRank(double min, bool exclusive) const;
  // Returns the number of elements with score <= max (or < max when `exclusive`): the last such
  // element has rank result - 1 (none if 0).
  uint64_t ScoreUpperRank(double max, bool exclusive) const;
  // Returns the rank range [first, last) of the elements inside `range` (first == last if none);
  // ZCOUNT is last - first.
  std::pair<uint64_t, uint64_t> ScoreRangeRanks(const ScoreRange& range) const;

  // Lex variants, comparing members only. REQUIRES: all scores are equal (as Redis; otherwise the
  // result is unspecified but memory-safe).
  uint64_t LexLowerRank(const LexBound& min) const;
  uint64_t LexUpperRank(const LexBound& max) const;
  std::pair<uint64_t, uint64_t> LexRangeRanks(const LexRange& range) const;

  // Removes the elements of ranks [first, last), calling `on_delete` for each (in ascending order)
  // just before it goes, e.g. to drop it from the member map. Returns the number removed.
  // O((last - first) log n).
  using DeleteCallback = absl::FunctionRef<void(double score, std::string_view member)>;
  uint64_t DeleteRankRange(uint64_t first, uint64_t last, DeleteCallback on_delete);
  uint64_t DeleteScoreRange(const ScoreRange& range, DeleteCallback on_delete);
  uint64_t DeleteLexRange(const LexRange& range, DeleteCallback on_delete);

  // Removes every element.
  void Clear();

  // Checks every structural invariant (order, node fill, subtree counts); for tests. O(n).
  bool CheckInvariants() const;

  // Implementation types (opaque outside sorted_index.cc).
  struct Node;
  struct Slot;

  // A position in the index, moving forward or backward in O(1) amortized (O(log n) worst case).
  // Invalidated by any mutation of the index.
  class Iterator {
   public:
    bool Valid() const { return depth_ > 0; }
    // REQUIRES: Valid().
    double score() const;
    std::string_view member() const;
    Element element() const { return {score(), member()}; }
    // Moves to the next (Next) or previous (Prev) element; past either end the iterator becomes
    // invalid. REQUIRES: Valid().
    void Next();
    void Prev();

   private:
    friend class SortedIndex;
    static constexpr int kMaxDepth = 24;
    struct Frame {
      Node* node;
      uint32_t idx;
    };
    // Frames below the top: (inner node, child index we are inside of). The top frame: (node,
    // element index) of the current element.
    Frame stack_[kMaxDepth];
    int depth_ = 0;
  };

  // Returns an iterator at ascending rank `rank` (invalid if rank >= size()). O(log n).
  Iterator Seek(uint64_t rank) const;
  Iterator Begin() const { return Seek(0); }
  // Returns an iterator at the last element (invalid if empty).
  Iterator Last() const { return Seek(size_ == 0 ? 0 : size_ - 1); }

 private:
  Slot RemoveAtRank(Node* x, uint64_t rank);
  bool InsertSlot(double score, PackedMember m);
  void CollapseRoot();
  void FreeSubtree(Node* n);
  // Frees an owned member's blob (no-op for borrowed members).
  void ReleaseMember(PackedMember m);
  template <typename Before>
  uint64_t CountBefore(Before before) const;

  Node* root_;
  size_t size_ = 0;
  size_t node_bytes_ = 0;
  size_t member_bytes_ = 0;
  bool owns_members_ = true;
};

}  // namespace dashkv
