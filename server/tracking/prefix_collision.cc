#include "server/tracking/prefix_collision.h"

#include <algorithm>
#include <numeric>
#include <vector>

namespace dashkv {

namespace {

// Returns the existing prefix that overlaps `p`, or nullptr. Existing prefixes do not overlap
// each other, so one that is a prefix of `p` is its predecessor in sorted order, and the first
// that `p` is a prefix of is its lower bound.
const std::string* ExistingOverlap(std::string_view p, std::span<const std::string> existing,
                                   bool existing_overlap) {
  if (existing_overlap) {  // the first overlapping one in sorted order, as Redis's rax walk
    for (const std::string& e : existing) {
      if (PrefixesOverlap(e, p)) return &e;
    }
    return nullptr;
  }
  auto lb = std::lower_bound(existing.begin(), existing.end(), p,
                             [](const std::string& e, std::string_view v) { return e < v; });
  if (lb != existing.end() && PrefixesOverlap(*lb, p)) return &*lb;
  if (lb != existing.begin() && PrefixesOverlap(*(lb - 1), p)) return &*(lb - 1);
  return nullptr;
}

}  // namespace

std::optional<PrefixCollision> FindPrefixCollision(std::span<const std::string_view> requested,
                                                   std::span<const std::string> existing,
                                                   bool existing_overlap) {
  const size_t n = requested.size();
  // overlaps[i]: requested[i] overlaps another requested prefix. In sorted order, the strings
  // between p and a string starting with p all start with p: a neighbour check finds "p is a
  // prefix of another", and a stack of the chain of prefixes seen finds "another is a prefix of
  // p" (equal strings are neighbours).
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return requested[a] < requested[b]; });
  std::vector<bool> overlaps(n, false);
  std::vector<size_t> chain;
  for (size_t k = 0; k < n; ++k) {
    const size_t i = order[k];
    if (k + 1 < n && requested[order[k + 1]].starts_with(requested[i])) overlaps[i] = true;
    while (!chain.empty() && !requested[i].starts_with(requested[chain.back()])) chain.pop_back();
    if (!chain.empty()) overlaps[i] = true;
    chain.push_back(i);
  }
  // Redis checks each requested prefix in order, first against the existing ones, then against
  // the requested ones after it. The first that overlaps another requested one overlaps only
  // later ones (an earlier one would have been reported first).
  for (size_t i = 0; i < n; ++i) {
    if (const std::string* e = ExistingOverlap(requested[i], existing, existing_overlap)) {
      return PrefixCollision{i, true, *e};
    }
    if (!overlaps[i]) continue;
    for (size_t j = i + 1; j < n; ++j) {
      if (PrefixesOverlap(requested[i], requested[j])) {
        return PrefixCollision{i, false, std::string(requested[j])};
      }
    }
  }
  return std::nullopt;
}

}  // namespace dashkv
