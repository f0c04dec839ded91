// MemberTable: an open-addressing hash table of distinct member strings packed in 8 bytes each
// (PackedMember), optionally with a double per member. It is the "hashtable" encoding of large
// sets and the member -> score map of large sorted sets.
// Thread: owned by the shard thread that owns the value; no internal synchronization.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <utility>

#include "absl/functional/function_ref.h"
#include "core/hash.h"
#include "core/sorted_index.h"  // PackedMember

namespace dashkv {

// Design
//   Linear probing over a power-of-two array of 8-byte slots; 0 marks an empty slot (a
//   PackedMember is never 0: inline members have bit 0 set, heap members are non-null
//   pointers). An optional parallel array holds one double per slot (sorted-set scores).
//   Members of up to 7 bytes live inline in the slot; longer ones in a malloc'd blob owned by
//   the table (freed on Erase / destruction). A member therefore costs 8 bytes (16 with a score)
//   divided by the load factor (0.375..0.75), plus its blob when longer than 7 bytes.
//   A slot's "home" is the top log2(capacity) bits of the member's hash, so home order is hash
//   order at every capacity. Deletion shifts the following cluster back (no tombstones); an
//   element never moves before its home. Grows x2 above 3/4 load, shrinks /2 below 1/8.
//   Scan cursors are positions in hash space (the top 32 bits of a hash): a scan visits home
//   buckets in hash order, so a member present for a whole scan is returned at least once even
//   if the table grows, shrinks or loses other members between calls (duplicates are possible).
//   The hash is keyed per table (KeyedHashBytes, a random key drawn at construction and kept for
//   the table's life, so cursors stay valid). Iteration order is hash order: members inserted in
//   the iteration order of a table with the same key would all have homes in the first sliver of
//   the growing table, one cluster, O(n) probes each (100k SADD in SMEMBERS order took seconds).
//   Under another key that order is a random one. Crafted members collide only by chance.
//   Find/Insert/Erase: O(1) expected.
class MemberTable {
 public:
  enum class Scores : uint8_t { kNone, kWith };
  static constexpr uint32_t kNotFound = UINT32_MAX;

  // Creates an empty table hashing with a fresh random key (NewHashKey()).
  explicit MemberTable(Scores scores = Scores::kNone);
  // Creates an empty table hashing with `hash_key`: for tests that need a reproducible layout.
  MemberTable(Scores scores, uint64_t hash_key);
  ~MemberTable();
  MemberTable(MemberTable&& other) noexcept;
  MemberTable& operator=(MemberTable&& other) noexcept;
  MemberTable(const MemberTable&) = delete;
  MemberTable& operator=(const MemberTable&) = delete;

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  uint32_t capacity() const { return uint32_t{1} << (64 - shift_); }
  uint64_t hash_key() const { return key_; }

  // Returns the slot holding `m`, or kNotFound.
  uint32_t Find(std::string_view m) const;
  bool Contains(std::string_view m) const { return Find(m) != kNotFound; }

  // Inserts `m` if absent. Returns its slot and whether it was inserted (a new member's score is
  // 0). Invalidates slots and members returned before (the table may grow).
  std::pair<uint32_t, bool> Insert(std::string_view m);

  // Removes `m` and frees its blob. Returns false if absent. Invalidates slots and PackedMembers
  // returned before. `m` may point into the member being removed.
  bool Erase(std::string_view m);
  // Removes the member in `slot`. REQUIRES: occupied(slot).
  void EraseSlot(uint32_t slot);

  // Reserves room for `n` members without growing again.
  void Reserve(size_t n);

  bool occupied(uint32_t slot) const { return keys_[slot] != 0; }
  // REQUIRES: occupied(slot). The member stays at this address until it is erased; its view of
  // an inline member points into the table (valid until the next Insert/Erase).
  PackedMember member(uint32_t slot) const { return PackedMember::FromBits(keys_[slot]); }
  std::string_view member_view(uint32_t slot) const;
  // REQUIRES: Scores::kWith, occupied(slot).
  double score(uint32_t slot) const { return scores_[slot]; }
  void set_score(uint32_t slot, double s) { scores_[slot] = s; }

  // Returns an occupied slot chosen uniformly at random; `rand` supplies uniform random 64-bit
  // numbers. REQUIRES: !empty(). Draws slots until one is occupied (load >= 1/8: a few tries;
  // a table reserved far beyond its size falls back to the k-th member, k uniform, after
  // kRandomTries misses), so every member is equally likely.
  uint32_t RandomSlot(absl::FunctionRef<uint64_t()> rand) const;

  // Calls f(slot) for every member.
  template <typename F>
  void ForEach(F&& f) const {
    const uint32_t cap = capacity();
    for (uint32_t i = 0; i < cap; ++i) {
      if (keys_[i] != 0) f(i);
    }
  }

  // Visits about `count` members from `cursor` (0: start), calling f(slot) for each; returns the
  // next cursor, 0 when the scan is complete. f must not modify the table.
  template <typename F>
  uint64_t Scan(uint64_t cursor, size_t count, F&& f) const;

  // Returns the heap bytes owned: slot arrays and member blobs (not sizeof(*this)).
  size_t MallocUsed() const;

  // How far members sit past their home slot: the extra probes a successful Find pays.
  struct Displacement {
    uint32_t max = 0;
    uint64_t total = 0;
  };
  // Returns the displacement of all members (O(capacity); for tests and diagnostics).
  Displacement displacement() const;

 private:
  uint64_t Hash(std::string_view m) const { return KeyedHashBytes(m, key_); }
  uint32_t HomeOf(uint64_t hash) const { return static_cast<uint32_t>(hash >> shift_); }
  uint32_t HomeOfSlot(uint32_t slot) const;
  uint32_t mask() const { return capacity() - 1; }
  void Rehash(uint32_t new_capacity);
  void Free();

  // 40 bytes: the capacity is kept as shift_ alone so that the key fits in the size a table had
  // without one (a SetValue of every encoding is as large as its largest, this).
  uint64_t* keys_;
  double* scores_ = nullptr;  // only with Scores::kWith
  uint64_t key_;              // KeyedHashBytes key, fixed for the table's life (Scan cursors)
  size_t blob_bytes_ = 0;
  uint32_t size_ = 0;
  uint8_t shift_;             // 64 - log2(capacity)
  bool with_scores_;
};

template <typename F>
uint64_t MemberTable::Scan(uint64_t cursor, size_t count, F&& f) const {
  const unsigned bits = 64 - shift_;
  uint64_t first = cursor >> (32 - bits);  // home bucket at this capacity
  uint64_t last = first + (count == 0 ? 1 : count);
  if (last > capacity()) last = capacity();
  // Elements with homes in [first, last) sit contiguously from `first` up to the end of the
  // cluster that covers last - 1 (linear probing never leaves a gap before an element).
  const uint32_t mask = this->mask();
  for (uint64_t j = first;; ++j) {
    uint32_t slot = static_cast<uint32_t>(j & mask);
    if (keys_[slot] == 0) {
      if (j >= last) break;
      continue;
    }
    uint32_t home = HomeOfSlot(slot);
    if (home >= first && home < last) f(slot);
    if (j >= last + mask) break;  // full wrap: cannot happen below 3/4 load, kept as a guard
  }
  if (last >= capacity()) return 0;
  return last << (32 - bits);
}

}  // namespace dashkv
