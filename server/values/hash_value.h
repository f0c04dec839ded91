// HashValue: the value of a Redis hash, held by a CompactObj (ObjType::kHash).
// Thread: owned by the shard thread that owns the key.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/functional/function_ref.h"
#include "core/compact_object.h"
#include "core/listpack.h"
#include "core/string_map.h"

namespace dashkv {

// Design
//
// Two encodings, as Redis: "listpack" (field, value, field, value ... in one Listpack, linear
// lookups) while the hash has at most `max_entries` fields and no field or value longer than
// `max_value` bytes; then "hashtable" (StringMap, O(1) lookups). The conversion happens inside
// the write that crosses a limit and is one-way: deleting fields never converts back. The limits
// are read from the config at every write (hash-max-listpack-entries / -value).
class HashValue : public ObjectBase {
 public:
  enum Encoding : uint8_t { kListpack = 0, kHashtable = 1 };

  struct Limits {
    size_t max_entries = 512;
    size_t max_value = 64;
  };

  HashValue() = default;

  // Returns a deep copy in the same encoding. O(size).
  std::unique_ptr<HashValue> Clone() const;

  Encoding encoding() const { return is_map_ ? kHashtable : kListpack; }
  size_t size() const { return is_map_ ? map_.size() : lp_.size() / 2; }
  bool empty() const { return size() == 0; }
  // Returns the field/value listpack (RDB save). REQUIRES: encoding() == kListpack.
  std::string_view listpack_bytes() const { return lp_.bytes(); }

  // Returns the value of field, or nullopt. The view points into the hash or into *scratch and
  // is invalidated by any change.
  std::optional<std::string_view> Get(std::string_view field, std::string* scratch) const;
  bool Contains(std::string_view field) const;

  enum class SetMode : uint8_t { kAlways, kIfMissing };
  // Sets field to value (kIfMissing: only when the field is absent). Returns true when the field
  // was added. May convert to a hashtable. field/value must not point into this hash.
  bool Set(std::string_view field, std::string_view value, const Limits& limits,
           SetMode mode = SetMode::kAlways);
  // Removes field; returns whether it was present.
  bool Delete(std::string_view field);

  using PairFn = absl::FunctionRef<void(std::string_view field, std::string_view value)>;
  // Calls fn for every field/value pair (listpack order, or the table's order).
  void ForEach(PairFn fn) const;
  // Visits entries from cursor until at least `count` pairs were reported or the scan ends;
  // returns the next cursor (0: done). A listpack hash is reported whole in one call.
  uint64_t Scan(uint64_t cursor, size_t count, PairFn fn) const;
  // Calls fn for `draws` pairs drawn independently and uniformly (HRANDFIELD with a negative
  // count: fields may repeat) until fn returns false. REQUIRES: !empty(). Streams: memory is
  // O(size()) whatever `draws`.
  void ForEachRandom(uint64_t draws,
                     absl::FunctionRef<bool(std::string_view, std::string_view)> fn) const;
  // Returns `count` pairs of distinct fields, a uniform sample. REQUIRES: count < size().
  std::vector<std::pair<std::string, std::string>> RandomDistinct(uint64_t count) const;

  size_t MallocUsed() const override;
  std::string_view EncodingName() const override;

  // Converts to the hashtable encoding (tests; writes do it when needed).
  void ConvertToMap();

 private:
  // Returns the position of field's key entry in the listpack, or kNoPos.
  Listpack::Pos FindInListpack(std::string_view field) const;

  Listpack lp_;
  StringMap map_;
  bool is_map_ = false;
};

}  // namespace dashkv
