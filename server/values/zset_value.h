// ZsetValue: the value of a Redis sorted set: "listpack" while small, then "skiplist" (Redis's
// name for the full encoding; here an order-statistic B-tree plus a member -> score table).
// Thread: owned by the shard thread that owns the key.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

#include <absl/functional/function_ref.h>

#include "core/compact_object.h"
#include "core/listpack.h"
#include "core/member_table.h"
#include "core/score.h"
#include "core/sorted_index.h"

namespace dashkv {

class Config;

// Encoding thresholds (zset-max-listpack-entries / -value).
struct ZsetLimits {
  size_t max_listpack_entries = 128;
  size_t max_listpack_value = 64;

  static ZsetLimits From(const Config& config);
};

// Design
//   kListpack: one Listpack of member, score, member, score ... sorted by (score, member); a
//     score is stored as its shortest round-trip text (integers as listpack integers). Every
//     operation walks it: O(n) for n <= zset-max-listpack-entries (128).
//   kSkiplist: a MemberTable with scores (member -> score, owns the member bytes) and a
//     SortedIndex in borrowed mode holding the same 8-byte packed members by (score, member):
//     a member's bytes are stored once. Score/Contains O(1); insert, delete, rank and select
//     O(log n); a range of k elements O(log n + k).
//   Conversion listpack -> skiplist happens on the write that crosses a threshold, never back
//   (STORE commands pick the encoding of their result from its size, as Redis).
//   Ranks are 0-based ascending; callers map reverse ranks themselves.
class ZsetValue : public ObjectBase {
 public:
  enum class Encoding : uint8_t { kListpack, kSkiplist };

  // Creates an empty sorted set in the encoding Redis picks for about `size_hint` members whose
  // longest is `max_member_len` bytes.
  static std::unique_ptr<ZsetValue> Create(size_t size_hint, size_t max_member_len,
                                           const ZsetLimits& limits);

  // Returns a deep copy in the same encoding. O(size) for a listpack, O(size log size) else.
  std::unique_ptr<ZsetValue> Clone() const;

  Encoding encoding() const { return static_cast<Encoding>(rep_.index()); }
  size_t size() const;
  bool empty() const { return size() == 0; }
  // Returns the member/score listpack (RDB save). REQUIRES: encoding() == Encoding::kListpack.
  std::string_view listpack_bytes() const { return std::get<Listpack>(rep_).bytes(); }

  // Returns the score of `m`, if it is a member.
  std::optional<double> Score(std::string_view m) const;
  // Sets the score of `m`, inserting it if needed; returns true if it was inserted. May convert
  // the encoding. REQUIRES: !isnan(score); `m` does not point into this set.
  bool Set(std::string_view m, double score, const ZsetLimits& limits);
  // Removes `m`; returns true if it was present. `m` must not point into this set.
  bool Remove(std::string_view m);
  // Returns the ascending rank of `m`, if it is a member.
  std::optional<uint64_t> Rank(std::string_view m) const;

  // Calls f(member, score) for the elements of ascending ranks [first, last), in ascending order
  // or, with `reverse`, descending order. The views are valid during the call only; f must not
  // modify the set.
  using ElementFn = absl::FunctionRef<void(std::string_view member, double score)>;
  void Range(uint64_t first, uint64_t last, bool reverse, ElementFn f) const;
  // Returns the ascending rank interval [first, last) of the elements inside the range.
  std::pair<uint64_t, uint64_t> ScoreRanks(const ScoreRange& range) const;
  std::pair<uint64_t, uint64_t> LexRanks(const LexRange& range) const;
  // Removes the elements of ascending ranks [first, last); returns how many.
  uint64_t RemoveRanks(uint64_t first, uint64_t last);

  // ZSCAN: visits about `count` elements from `cursor`; returns the next cursor (0 at the end).
  // The listpack encoding returns everything at once, as Redis.
  uint64_t Scan(uint64_t cursor, size_t count, ElementFn f) const;

  size_t MallocUsed() const override;
  std::string_view EncodingName() const override;

 private:
  // The full encoding.
  struct Skiplist {
    Skiplist()
        : table(MemberTable::Scores::kWith), index(SortedIndex::MemberOwnership::kBorrowed) {}
    MemberTable table;  // declared first: destroyed after the index that borrows its members
    SortedIndex index;
  };

  void ConvertToSkiplist();

  std::variant<Listpack, Skiplist> rep_;
};

// Returns the ZsetValue held by a sorted-set object. REQUIRES: obj.type() == ObjType::kZset.
inline ZsetValue& AsZset(const CompactObj& obj) {
  return *static_cast<ZsetValue*>(obj.GetObject());
}

}  // namespace dashkv
