// Set algebra (SINTER, SUNION, SDIFF, SINTERCARD and their STORE forms) over operands that are
// either sets on the running shard or members gathered from other shards, so that the same code
// serves the single-shard fast path and the cross-shard coordinator.
// Thread: pure functions over the operands; local operands must be used on their shard's thread.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <absl/container/flat_hash_set.h>
#include <absl/functional/function_ref.h>

#include "core/hash.h"
#include "server/values/set_value.h"

namespace dashkv {

// Transparent hashing of std::string keys by std::string_view (Debian's absl::string_view is
// not std::string_view, so absl's own heterogeneous lookup does not apply). Keyed per set like
// core/member_table: clients pick the members, and unkeyed HashBytes lets them craft collisions.
struct MemberHash {
  using is_transparent = void;
  uint64_t key = NewHashKey();
  size_t operator()(std::string_view s) const { return KeyedHashBytes(s, key); }
};
struct MemberEq {
  using is_transparent = void;
  bool operator()(std::string_view a, std::string_view b) const { return a == b; }
};

// Members of a set copied out of its shard.
using GatheredSet = absl::flat_hash_set<std::string, MemberHash, MemberEq>;

// One operand of the algebra: a missing key (the empty set), a SetValue on this shard, or a
// gathered copy. Non-owning: the referenced set must outlive the operand.
class SetOperand {
 public:
  SetOperand() = default;  // missing key
  explicit SetOperand(const SetValue* local) : local_(local) {}
  explicit SetOperand(const GatheredSet* gathered) : gathered_(gathered) {}

  size_t size() const;
  bool Contains(std::string_view m) const;
  // Calls f(member) for every member (views valid during the call).
  void ForEach(absl::FunctionRef<void(std::string_view)> f) const;

 private:
  const SetValue* local_ = nullptr;
  const GatheredSet* gathered_ = nullptr;
};

enum class SetOp : uint8_t { kUnion, kInter, kDiff };

// Returns the members of operands[0] op operands[1] op ... (Redis semantics: a missing key is an
// empty set; SDIFF subtracts every later operand from the first). Unordered.
std::vector<std::string> ComputeSetOp(SetOp op, std::span<const SetOperand> operands);

// Returns the size of the intersection, stopping at `limit` when limit > 0 (SINTERCARD).
size_t IntersectionCard(std::span<const SetOperand> operands, size_t limit);

}  // namespace dashkv
