#include "server/values/zset_algebra.h"

#include <algorithm>
#include <cmath>

namespace dashkv {

size_t ZOperand::size() const {
  if (zset_ != nullptr) return zset_->size();
  if (set_ != nullptr) return set_->size();
  if (gathered_ != nullptr) return gathered_->size();
  return 0;
}

std::optional<double> ZOperand::Score(std::string_view m) const {
  if (zset_ != nullptr) return zset_->Score(m);
  if (set_ != nullptr) return set_->Contains(m) ? std::optional<double>(1.0) : std::nullopt;
  if (gathered_ != nullptr) {
    auto it = gathered_->find(m);
    if (it != gathered_->end()) return it->second;
  }
  return std::nullopt;
}

void ZOperand::ForEach(absl::FunctionRef<void(std::string_view, double)> f) const {
  if (zset_ != nullptr) return zset_->Range(0, zset_->size(), false, f);
  if (set_ != nullptr) return set_->ForEach([&](std::string_view m) { f(m, 1.0); });
  if (gathered_ != nullptr) {
    for (const auto& [m, s] : *gathered_) f(m, s);
  }
}

namespace {

double Weighted(double s, double w) {
  double v = s * w;
  return std::isnan(v) ? 0 : v;
}

double Combine(double a, double b, Aggregate agg) {
  switch (agg) {
    case Aggregate::kSum: {
      double v = a + b;
      return std::isnan(v) ? 0 : v;
    }
    case Aggregate::kMin: return std::min(a, b);
    case Aggregate::kMax: return std::max(a, b);
  }
  return a;
}

// Returns operand indexes ordered by size, smallest first.
std::vector<size_t> BySize(std::span<const ZOperand> operands) {
  std::vector<size_t> order(operands.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return operands[a].size() < operands[b].size();
  });
  return order;
}

}  // namespace

std::vector<std::pair<std::string, double>> ComputeZsetOp(ZOp op,
                                                          std::span<const ZOperand> operands,
                                                          std::span<const double> weights,
                                                          Aggregate agg) {
  std::vector<std::pair<std::string, double>> out;
  if (operands.empty()) return out;
  switch (op) {
    case ZOp::kUnion: {
      GatheredZset acc;
      for (size_t i = 0; i < operands.size(); ++i) {
        operands[i].ForEach([&](std::string_view m, double s) {
          double v = Weighted(s, weights[i]);
          auto [it, inserted] = acc.try_emplace(m, v);
          if (!inserted) it->second = Combine(it->second, v, agg);
        });
      }
      out.reserve(acc.size());
      for (auto& [m, s] : acc) out.emplace_back(m, s);
      break;
    }
    case ZOp::kInter: {
      std::vector<size_t> order = BySize(operands);
      if (operands[order[0]].size() == 0) return out;
      operands[order[0]].ForEach([&](std::string_view m, double s) {
        double v = Weighted(s, weights[order[0]]);
        for (size_t k = 1; k < order.size(); ++k) {
          std::optional<double> o = operands[order[k]].Score(m);
          if (!o) return;
          v = Combine(v, Weighted(*o, weights[order[k]]), agg);
        }
        out.emplace_back(m, v);
      });
      break;
    }
    case ZOp::kDiff:
      operands[0].ForEach([&](std::string_view m, double s) {
        for (size_t i = 1; i < operands.size(); ++i) {
          if (operands[i].Score(m)) return;
        }
        out.emplace_back(m, s);
      });
      break;
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    return a.second < b.second || (a.second == b.second && a.first < b.first);
  });
  return out;
}

size_t ZIntersectionCard(std::span<const ZOperand> operands, size_t limit) {
  if (operands.empty()) return 0;
  std::vector<size_t> order = BySize(operands);
  size_t n = 0;
  bool done = false;
  operands[order[0]].ForEach([&](std::string_view m, double) {
    if (done) return;
    for (size_t k = 1; k < order.size(); ++k) {
      if (!operands[order[k]].Score(m)) return;
    }
    ++n;
    done = limit > 0 && n >= limit;
  });
  return n;
}

}  // namespace dashkv
