// ListValue: the value of a Redis list, held by a CompactObj (ObjType::kList); plus the DEBUG
// OBJECT hook for lists.
// Thread: owned by the shard thread that owns the key.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "absl/functional/function_ref.h"
#include "core/compact_object.h"
#include "core/listpack.h"
#include "core/quicklist.h"

namespace dashkv {

// Design
//
// Two encodings, as Redis 7.2: a small list is one Listpack ("listpack"); a write that makes it
// exceed one quicklist node's limit (list-max-listpack-size: bytes when negative, entries when
// positive) converts it to a QuickList ("quicklist"), built with the fill and compress depth the
// config holds at that moment. A quicklist that shrinks to one node holding at most half the
// limit converts back (the hysteresis avoids flapping at the boundary).
//
// Push/pop at either end: O(1) amortized on a quicklist (bounded by the node size), O(bytes) on
// the listpack (bounded by the same limit), so a queue never pays for the list's length.
class ListValue : public ObjectBase {
 public:
  enum Encoding : uint8_t { kListpack = 0, kQuicklist = 1 };

  // Settings read from the config at each write.
  struct Options {
    int fill = QuickList::kDefaultFill;  // list-max-listpack-size
    int compress_depth = 0;              // list-compress-depth
  };

  ListValue() = default;

  // Returns a deep copy in the same encoding (a quicklist keeps its fill, compress depth and
  // node layout). O(bytes).
  std::unique_ptr<ListValue> Clone() const;

  Encoding encoding() const { return ql_ ? kQuicklist : kListpack; }
  size_t size() const { return ql_ ? ql_->size() : lp_.size(); }
  bool empty() const { return size() == 0; }

  // Adds v at one end. v must not point into this list.
  void Push(std::string_view v, ListEnd end, const Options& opts);
  // Removes and returns the element at one end; nullopt when empty.
  std::optional<std::string> Pop(ListEnd end, const Options& opts);
  // Returns a copy of the element at index (negative: from the tail), or nullopt.
  std::optional<std::string> Index(long index) const;
  // Replaces the element at index; returns false when out of range.
  bool Set(long index, std::string_view v, const Options& opts);
  // Inserts v before/after the first element equal to pivot; returns false without pivot.
  bool Insert(std::string_view pivot, std::string_view v, Where where, const Options& opts);
  // LREM semantics: count > 0 from the head, < 0 from the tail, 0 all. Returns removed count.
  size_t Remove(std::string_view v, long count, const Options& opts);
  // LTRIM semantics (Redis index rules).
  void Trim(long start, long stop, const Options& opts);

  // Calls fn with the elements from index (negative: from the tail; REQUIRES: in range) moving
  // toward `toward`, until fn returns false or the list ends.
  void Walk(long index, ListEnd toward, absl::FunctionRef<bool(const ListpackValue&)> fn) const;

  // Returns the quicklist, or nullptr with the listpack encoding.
  const QuickList* quicklist() const { return ql_.get(); }
  // Returns the listpack's bytes. REQUIRES: encoding() == kListpack.
  std::string_view listpack_bytes() const { return lp_.bytes(); }

  size_t MallocUsed() const override;
  std::string_view EncodingName() const override;

 private:
  // Converts between encodings when a limit is crossed (see Design).
  void MaybeGrow(const Options& opts);
  void MaybeShrink(const Options& opts);

  Listpack lp_;                    // valid while ql_ is null
  std::unique_ptr<QuickList> ql_;  // set with the quicklist encoding
};

// Returns the ListValue a list CompactObj holds. REQUIRES: obj.type() == ObjType::kList.
inline ListValue* GetList(const CompactObj& obj) {
  return static_cast<ListValue*>(obj.GetObject());
}

// Returns the extra DEBUG OBJECT fields of a value (" ql_nodes:... ql_avg_node:..." for lists,
// "" for other types).
std::string DebugObjectExtra(const CompactObj& value);
// Returns the estimated RDB length of an aggregate value (DEBUG OBJECT serializedlength), 0 for
// strings.
int64_t ObjectSerializedLength(const CompactObj& value);

}  // namespace dashkv
