#include "server/values/set_algebra.h"

#include <algorithm>

namespace dashkv {

size_t SetOperand::size() const {
  if (local_ != nullptr) return local_->size();
  if (gathered_ != nullptr) return gathered_->size();
  return 0;
}

bool SetOperand::Contains(std::string_view m) const {
  if (local_ != nullptr) return local_->Contains(m);
  if (gathered_ != nullptr) return gathered_->contains(m);
  return false;
}

void SetOperand::ForEach(absl::FunctionRef<void(std::string_view)> f) const {
  if (local_ != nullptr) return local_->ForEach(f);
  if (gathered_ != nullptr) {
    for (const std::string& m : *gathered_) f(m);
  }
}

namespace {

// Calls f(member) for each member of the intersection until f returns false. Iterates the
// smallest operand and probes the others, smallest first (as Redis).
template <typename F>
void ForEachInIntersection(std::span<const SetOperand> operands, F&& f) {
  if (operands.empty()) return;
  std::vector<const SetOperand*> order;
  for (const SetOperand& o : operands) {
    if (o.size() == 0) return;
    order.push_back(&o);
  }
  std::sort(order.begin(), order.end(),
            [](const SetOperand* a, const SetOperand* b) { return a->size() < b->size(); });
  bool go = true;
  order[0]->ForEach([&](std::string_view m) {
    if (!go) return;
    for (size_t i = 1; i < order.size(); ++i) {
      if (!order[i]->Contains(m)) return;
    }
    go = f(m);
  });
}

}  // namespace

std::vector<std::string> ComputeSetOp(SetOp op, std::span<const SetOperand> operands) {
  std::vector<std::string> out;
  switch (op) {
    case SetOp::kInter:
      ForEachInIntersection(operands, [&](std::string_view m) {
        out.emplace_back(m);
        return true;
      });
      break;
    case SetOp::kUnion: {
      GatheredSet all;
      for (const SetOperand& o : operands) {
        o.ForEach([&](std::string_view m) { all.emplace(m); });
      }
      out.reserve(all.size());
      for (auto it = all.begin(); it != all.end();) out.push_back(std::move(all.extract(it++).value()));
      break;
    }
    case SetOp::kDiff:
      if (operands.empty()) break;
      operands[0].ForEach([&](std::string_view m) {
        for (size_t i = 1; i < operands.size(); ++i) {
          if (operands[i].Contains(m)) return;
        }
        out.emplace_back(m);
      });
      break;
  }
  return out;
}

size_t IntersectionCard(std::span<const SetOperand> operands, size_t limit) {
  size_t n = 0;
  ForEachInIntersection(operands, [&](std::string_view) {
    ++n;
    return limit == 0 || n < limit;
  });
  return n;
}

}  // namespace dashkv
