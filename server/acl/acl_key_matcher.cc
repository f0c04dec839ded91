#include "server/acl/acl_key_matcher.h"

#include <algorithm>
#include <cstring>

#include "core/glob.h"

namespace dashkv {

namespace {

bool IsSpecial(char c) { return c == '*' || c == '?' || c == '[' || c == '\\'; }

}  // namespace

AclKeyMatcher::AclKeyMatcher(std::span<const AclKeyPattern> patterns) {
  if (patterns.empty()) return;
  auto group_of = [](std::string_view p) -> size_t {
    return p.empty() || IsSpecial(p[0]) ? kSpecialGroup : static_cast<unsigned char>(p[0]);
  };
  // Counting sort by group: group_[g + 1] counts group g, then becomes its end.
  group_.assign(kSpecialGroup + 2, 0);
  for (const AclKeyPattern& p : patterns) ++group_[group_of(p.pattern) + 1];
  for (size_t g = 1; g < group_.size(); ++g) group_[g] += group_[g - 1];
  std::vector<uint32_t> next(group_.begin(), group_.end() - 1);
  entries_.resize(patterns.size());
  for (const AclKeyPattern& p : patterns) {
    const std::string_view s = p.pattern;
    const size_t special = s.find_first_of("*?[\\");
    Entry e{0, 0, static_cast<uint32_t>(bytes_.size()), static_cast<uint32_t>(s.size()), p.perms,
            Shape::kGlob};
    if (special == std::string_view::npos) {
      e.shape = Shape::kExact;
    } else if (special == s.size() - 1 && s.back() == '*' && special > 0) {
      e.shape = Shape::kPrefix;
      char head[8] = {};
      char mask[8] = {};
      const size_t n = std::min<size_t>(special, 8);
      std::memcpy(head, s.data(), n);
      std::memset(mask, 0xff, n);
      std::memcpy(&e.head, head, 8);
      std::memcpy(&e.head_mask, mask, 8);
    }
    entries_[next[group_of(s)]++] = e;
    bytes_.append(s);
  }
}

bool AclKeyMatcher::HasPrefix(const Entry& e, std::string_view key) const {
  const size_t n = e.size - 1;
  if (key.size() < n) return false;
  if (key.size() < 8) return std::memcmp(key.data(), bytes_.data() + e.offset, n) == 0;
  uint64_t word;
  std::memcpy(&word, key.data(), 8);
  if (((word ^ e.head) & e.head_mask) != 0) return false;
  return n <= 8 || std::memcmp(key.data() + 8, bytes_.data() + e.offset + 8, n - 8) == 0;
}

bool AclKeyMatcher::Matches(const Entry& e, std::string_view key) const {
  const char* p = bytes_.data() + e.offset;
  switch (e.shape) {
    case Shape::kPrefix:
      return HasPrefix(e, key);
    case Shape::kExact:
      return key.size() == e.size && std::memcmp(key.data(), p, e.size) == 0;
    case Shape::kGlob:
      break;
  }
  return GlobMatch(std::string_view(p, e.size), key);
}

bool AclKeyMatcher::AllowsInGroup(size_t group, std::string_view key, uint8_t needed) const {
  for (uint32_t i = group_[group], end = group_[group + 1]; i < end; ++i) {
    const Entry& e = entries_[i];
    if ((e.perms & needed) == needed && Matches(e, key)) return true;
  }
  return false;
}

bool AclKeyMatcher::AllowsSlow(std::string_view key, uint8_t needed) const {
  if (group_.empty()) return false;
  if (!key.empty() && AllowsInGroup(static_cast<unsigned char>(key[0]), key, needed)) return true;
  return group_[kSpecialGroup] != group_[kSpecialGroup + 1] &&
         AllowsInGroup(kSpecialGroup, key, needed);
}

}  // namespace dashkv
