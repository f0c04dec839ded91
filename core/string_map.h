// StringMap: a field -> value hash table of compact strings, the "hashtable" encoding of hashes.
// Thread: not synchronized; owned by the shard thread that owns the hash value.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "absl/functional/function_ref.h"
#include "core/compact_object.h"

namespace dashkv {

// Design
//
// Chained hashing over a power-of-two bucket array. Each entry is one allocation holding the
// chain link and two CompactObj (field and value: strings up to 15 bytes, 17 ASCII bytes, or
// integers stay inline): 40 bytes, a 48-byte allocator class. With the load factor kept between
// 1/8 and 1 this costs 56-112 bytes per entry besides long strings, about what Redis's dict of
// sds strings costs.
//
// Fields hash with KeyedHashBytes under a random key drawn per map at construction (kept for the
// map's life, which Scan cursors need): fields crafted offline to share a bucket, or to hash alike
// under any seed of the unkeyed hash, land in one chain only by chance.
//
// Growth doubles the bucket array when size exceeds it (up to 2^31 buckets); shrinking halves it
// below 1/8 full. Both rehash at once: O(size), amortized O(1) per insert (hashes are large only
// when built by many commands).
//
// Scan uses reverse-binary cursors over the bucket index (the classic technique): a cursor
// visits buckets in an order where every bucket of a smaller or larger table maps to a
// contiguous run of the sequence, so a field present for the whole scan is reported at least
// once even if the table is resized between calls; a field may be reported twice.
//
// RandomEntry is exactly uniform: it draws a (bucket, chain position) pair uniformly among
// buckets x [0, max_chain_) and retries when no entry sits there. max_chain_ bounds every chain
// (raised by inserts, recomputed by rehashes, never lowered by erases), so each entry is one
// pair and equally likely. With the load factor >= 1/8 and chains of a few entries a draw takes
// a few tries; after kRandomTries misses it falls back to the k-th entry in table order, k
// uniform (O(size + buckets)), which keeps the draw uniform.
//
// Complexity: Find/Set/Erase O(1) expected; ForEach O(size + buckets).
class StringMap {
 public:
  // Creates an empty map hashing with a fresh random key (NewHashKey()).
  StringMap();
  // Creates an empty map hashing with `hash_key`: for tests that need a reproducible layout.
  explicit StringMap(uint64_t hash_key) : key_(hash_key) {}
  ~StringMap();
  StringMap(StringMap&& other) noexcept;
  StringMap& operator=(StringMap&& other) noexcept;
  StringMap(const StringMap&) = delete;
  StringMap& operator=(const StringMap&) = delete;

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  size_t bucket_count() const { return buckets_ ? size_t{mask_} + 1 : 0; }
  uint64_t hash_key() const { return key_; }
  // Returns a bound on the longest chain (exact after a resize; erases do not lower it).
  size_t max_chain() const { return max_chain_; }

  // Returns the value of `field`, or nullptr.
  const CompactObj* Find(std::string_view field) const;
  // Sets field to value; returns true when the field is new. Neither may point into the map.
  bool Set(std::string_view field, std::string_view value);
  // Adds field with value only when it is missing; returns whether it did.
  bool SetIfMissing(std::string_view field, std::string_view value);
  // Removes field; returns whether it was present.
  bool Erase(std::string_view field);

  using EntryFn = absl::FunctionRef<void(const CompactObj& field, const CompactObj& value)>;
  // Calls fn for every entry (unspecified order). REQUIRES: fn does not modify the map.
  void ForEach(EntryFn fn) const;
  // Visits one bucket at `cursor` (see Design); returns the next cursor, 0 when done.
  uint64_t Scan(uint64_t cursor, EntryFn fn) const;
  // Calls fn with an entry chosen uniformly at random; `rand` supplies uniform random 64-bit
  // numbers. REQUIRES: !empty(). Expected O(1) (see Design).
  void RandomEntry(absl::FunctionRef<uint64_t()> rand, EntryFn fn) const;

  // Returns the heap bytes used (entries, buckets and out-of-line strings).
  size_t MallocUsed() const;

 private:
  struct Entry;
  uint64_t HashOf(std::string_view field) const;
  uint64_t HashOf(const CompactObj& field) const;
  Entry** Slot(std::string_view field, uint64_t hash) const;
  void Rehash(size_t new_buckets);
  void MaybeShrink();

  // 40 bytes, as before the key: mask_ and max_chain_ are 32-bit (a hash value holds a StringMap
  // inline whatever its encoding).
  Entry** buckets_ = nullptr;
  uint64_t key_;             // KeyedHashBytes key, fixed for the map's life
  size_t size_ = 0;
  size_t string_bytes_ = 0;  // heap bytes owned by the CompactObj of all entries
  uint32_t mask_ = 0;        // bucket count - 1 (0 with no buckets)
  uint32_t max_chain_ = 0;   // >= the length of every chain (see RandomEntry)
};

}  // namespace dashkv
