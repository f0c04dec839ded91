// Sorted-set algebra (ZUNION, ZINTER, ZDIFF, ZINTERCARD and the STORE forms) over operands that
// are sorted sets or sets on the running shard, or elements gathered from other shards: the
// same code serves the single-shard path and the cross-shard coordinator.
// Thread: pure functions; local operands must be used on their shard's thread.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <absl/container/flat_hash_map.h>
#include <absl/functional/function_ref.h>

#include "server/values/set_algebra.h"
#include "server/values/set_value.h"
#include "server/values/zset_value.h"

namespace dashkv {

// Elements of a sorted set (or of a set, scores 1) copied out of its shard.
using GatheredZset = absl::flat_hash_map<std::string, double, MemberHash, MemberEq>;

// One operand: a missing key, a local ZsetValue or SetValue (members score 1), or a gathered
// copy. Non-owning.
class ZOperand {
 public:
  ZOperand() = default;  // missing key
  explicit ZOperand(const ZsetValue* z) : zset_(z) {}
  explicit ZOperand(const SetValue* s) : set_(s) {}
  explicit ZOperand(const GatheredZset* g) : gathered_(g) {}

  size_t size() const;
  std::optional<double> Score(std::string_view m) const;
  // Calls f(member, score) for every element (views valid during the call).
  void ForEach(absl::FunctionRef<void(std::string_view, double)> f) const;

 private:
  const ZsetValue* zset_ = nullptr;
  const SetValue* set_ = nullptr;
  const GatheredZset* gathered_ = nullptr;
};

enum class ZOp : uint8_t { kUnion, kInter, kDiff };
enum class Aggregate : uint8_t { kSum, kMin, kMax };

// Returns the elements of the operation, sorted by (score, member). `weights` has one entry per
// operand (ignored by kDiff). A NaN produced by weighting or summing becomes 0, as Redis.
std::vector<std::pair<std::string, double>> ComputeZsetOp(ZOp op,
                                                          std::span<const ZOperand> operands,
                                                          std::span<const double> weights,
                                                          Aggregate agg);

// Returns the size of the intersection, stopping at `limit` when limit > 0 (ZINTERCARD).
size_t ZIntersectionCard(std::span<const ZOperand> operands, size_t limit);

}  // namespace dashkv
