// AclKeyMatcher: a selector's key patterns compiled for the ACL check, built when ACL SETUSER
// changes them, so that checking a key costs a table look-up and one or two compares rather than
// a glob match per pattern.
// Thread: immutable after construction (part of a published AclUser).
//
// Design
//   A pattern whose first byte is literal can only match keys starting with that byte: the
//   patterns are grouped by first byte (a 257-entry offset table), those starting with a special
//   byte ('*', '?', '[', '\') or empty form a last group tried for every key. Within a group a
//   pattern is tested as its shape allows: "prefix*" (no other special byte) by a prefix compare,
//   a pattern with no special byte by an exact compare, the rest by GlobMatch. A prefix's first
//   8 bytes are also kept as a word and a mask: for a key of 8 bytes or more a short prefix is
//   one load and compare. Any pattern with the needed permissions that matches allows the key,
//   so the order of tests does not matter. The pattern bytes are copied into the matcher: it
//   stays valid when the selector is copied.
#pragma once

#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace dashkv {

// Key permissions of a key pattern, and what a key of a command needs.
enum AclKeyPerm : uint8_t { kAclKeyRead = 1, kAclKeyWrite = 2, kAclKeyAll = 3 };

// One key pattern of a selector as ACL SETUSER gave it ("%R~pattern" has kAclKeyRead).
struct AclKeyPattern {
  uint8_t perms = kAclKeyAll;
  std::string pattern;
};

class AclKeyMatcher {
 public:
  // A matcher that allows no key.
  AclKeyMatcher() = default;
  explicit AclKeyMatcher(std::span<const AclKeyPattern> patterns);

  // Returns whether a pattern granting every permission of `needed` matches `key`. Inline for
  // the common case: the key's first byte starts one pattern, a short "prefix*".
  bool Allows(std::string_view key, uint8_t needed) const {
    if (key.size() >= 8 && !group_.empty()) {
      const uint32_t* group = group_.data() + static_cast<unsigned char>(key[0]);
      if (group[1] - group[0] == 1) {
        const Entry& e = entries_[group[0]];
        uint64_t word;
        std::memcpy(&word, key.data(), 8);
        if (e.shape == Shape::kPrefix && e.size <= 9 && (e.perms & needed) == needed &&
            ((word ^ e.head) & e.head_mask) == 0) {
          return true;
        }
      }
    }
    return AllowsSlow(key, needed);
  }

 private:
  enum class Shape : uint8_t { kPrefix, kExact, kGlob };
  struct Entry {
    uint64_t head;       // kPrefix: the prefix's first 8 bytes (as loaded from memory) ...
    uint64_t head_mask;  // ... and which of them belong to the prefix
    uint32_t offset;     // into bytes_
    uint32_t size;
    uint8_t perms;
    Shape shape;
  };
  static constexpr size_t kSpecialGroup = 256;

  bool AllowsSlow(std::string_view key, uint8_t needed) const;
  bool Matches(const Entry& e, std::string_view key) const;
  bool AllowsInGroup(size_t group, std::string_view key, uint8_t needed) const;
  // Returns whether `key` has the prefix of kPrefix entry `e`.
  bool HasPrefix(const Entry& e, std::string_view key) const;

  std::string bytes_;           // the patterns back to back
  std::vector<Entry> entries_;  // grouped: first byte 0..255, then the special group
  // entries_[group_[b], group_[b + 1]) is group b; empty when there is no pattern.
  std::vector<uint32_t> group_;
};

}  // namespace dashkv
