// SetValue: the value of a Redis set, in one of three encodings chosen as Redis 7.2 does:
// "intset" while every member is an integer, "listpack" while small, then "hashtable".
// Thread: owned by the shard thread that owns the key.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <absl/functional/function_ref.h>

#include "core/compact_object.h"
#include "core/int_set.h"
#include "core/listpack.h"
#include "core/member_table.h"

namespace dashkv {

class Config;

// Encoding thresholds (Redis's set-max-intset-entries, set-max-listpack-entries/-value).
struct SetLimits {
  size_t max_intset_entries = 512;
  size_t max_listpack_entries = 128;
  size_t max_listpack_value = 64;

  // Reads the current thresholds (relaxed atomics).
  static SetLimits From(const Config& config);
};

// Returns a uniformly distributed 64-bit random number (a per-thread generator).
uint64_t ShardRandom();

// Design
//   A std::variant of the three encodings:
//     kIntSet     IntSet (core/int_set.h), sorted integers, Redis's byte format.
//     kListpack   Listpack of members in insertion order (members <= max_listpack_value bytes).
//     kHashtable  MemberTable (core/member_table.h): open addressing over 8-byte packed members.
//   Conversions only go up (intset -> listpack -> hashtable, or intset -> hashtable), on the
//   write that crosses a threshold, as Redis. Contains is O(log n) / O(n <= 128) / O(1).
class SetValue : public ObjectBase {
 public:
  enum class Encoding : uint8_t { kIntSet, kListpack, kHashtable };

  // Creates an empty set in the encoding Redis picks for a set that will hold about `size_hint`
  // members, the first being `first` (integer -> intset, short -> listpack, else hashtable).
  static std::unique_ptr<SetValue> Create(std::string_view first, size_t size_hint,
                                          const SetLimits& limits);

  // Returns a deep copy in the same encoding. O(size).
  std::unique_ptr<SetValue> Clone() const;

  Encoding encoding() const { return static_cast<Encoding>(rep_.index()); }
  size_t size() const;
  bool empty() const { return size() == 0; }
  // Returns the intset's bytes (RDB save). REQUIRES: encoding() == Encoding::kIntSet.
  std::string_view intset_bytes() const { return std::get<IntSet>(rep_).raw(); }

  // Adds `m`; returns true if it was new. May convert the encoding.
  bool Add(std::string_view m, const SetLimits& limits);
  // Removes `m`; returns true if it was present.
  bool Remove(std::string_view m);
  bool Contains(std::string_view m) const;

  // Calls f(member) for every member; the view is valid during the call only. The set must not
  // be modified by f.
  void ForEach(absl::FunctionRef<void(std::string_view)> f) const;
  // Returns copies of all members.
  std::vector<std::string> Members() const;

  // Returns a copy of a member chosen uniformly at random. REQUIRES: !empty().
  std::string RandomMember() const;
  // Calls f for `draws` members drawn independently and uniformly (SRANDMEMBER with a negative
  // count) until f returns false. REQUIRES: !empty(). Memory O(size()) whatever `draws`.
  void ForEachRandom(uint64_t draws, absl::FunctionRef<bool(std::string_view)> f) const;
  // Removes and returns a member chosen uniformly at random. REQUIRES: !empty().
  std::string PopRandom();

  // SSCAN: visits about `count` members from `cursor`, returns the next cursor (0 at the end).
  // Small encodings return everything at once, as Redis.
  uint64_t Scan(uint64_t cursor, size_t count, absl::FunctionRef<void(std::string_view)> f) const;

  size_t MallocUsed() const override;
  std::string_view EncodingName() const override;

 private:
  void ConvertToListpack();
  void ConvertToHashtable();

  std::variant<IntSet, Listpack, MemberTable> rep_;
};

// Returns the SetValue held by a set object. REQUIRES: obj.type() == ObjType::kSet.
inline SetValue& AsSet(const CompactObj& obj) { return *static_cast<SetValue*>(obj.GetObject()); }

}  // namespace dashkv
