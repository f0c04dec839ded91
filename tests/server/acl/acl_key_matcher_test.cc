// AclKeyMatcher: compiled key patterns must allow exactly the keys that a glob match of some
// pattern with the needed permissions allows (Redis's ACL key check), whatever their shape.
#include "server/acl/acl_key_matcher.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/glob.h"

namespace dashkv {
namespace {

bool Reference(const std::vector<AclKeyPattern>& patterns, std::string_view key, uint8_t needed) {
  for (const AclKeyPattern& p : patterns) {
    if ((p.perms & needed) == needed && GlobMatch(p.pattern, key)) return true;
  }
  return false;
}

TEST(AclKeyMatcherTest, EmptyAllowsNothing) {
  AclKeyMatcher m;
  EXPECT_FALSE(m.Allows("k", kAclKeyRead));
  EXPECT_FALSE(m.Allows("", kAclKeyRead));
  std::vector<AclKeyPattern> none;
  EXPECT_FALSE(AclKeyMatcher(none).Allows("k", kAclKeyRead));
}

TEST(AclKeyMatcherTest, ShapesAndPermissions) {
  std::vector<AclKeyPattern> patterns = {
      {kAclKeyAll, "key:*"},   {kAclKeyRead, "ro:*"},   {kAclKeyWrite, "wo:*"},
      {kAclKeyAll, "exact"},   {kAclKeyAll, "*tail"},   {kAclKeyAll, "a?c*"},
      {kAclKeyAll, "x[0-9]"},  {kAclKeyAll, "\\*lit*"}, {kAclKeyRead, ""},
      {kAclKeyAll, "k*y*"},    {kAclKeyAll, "\xff*"},   {kAclKeyAll, "*"}};
  AclKeyMatcher m(std::span<const AclKeyPattern>(patterns.data(), 11));  // not the last "*"
  EXPECT_TRUE(m.Allows("key:1", kAclKeyAll));
  EXPECT_TRUE(m.Allows("key:", kAclKeyAll));
  EXPECT_FALSE(m.Allows("ke", kAclKeyRead));
  EXPECT_TRUE(m.Allows("ro:1", kAclKeyRead));
  EXPECT_FALSE(m.Allows("ro:1", kAclKeyWrite));
  EXPECT_TRUE(m.Allows("wo:1", kAclKeyWrite));
  EXPECT_FALSE(m.Allows("wo:1", kAclKeyAll));
  EXPECT_TRUE(m.Allows("exact", kAclKeyAll));
  EXPECT_FALSE(m.Allows("exactly", kAclKeyAll));
  EXPECT_FALSE(m.Allows("exac", kAclKeyAll));
  EXPECT_TRUE(m.Allows("the tail", kAclKeyAll));
  EXPECT_TRUE(m.Allows("abc", kAclKeyAll));
  EXPECT_TRUE(m.Allows("x7", kAclKeyAll));
  EXPECT_FALSE(m.Allows("xa", kAclKeyAll));
  EXPECT_TRUE(m.Allows("*lit", kAclKeyAll));
  EXPECT_FALSE(m.Allows("xlit", kAclKeyAll));
  EXPECT_TRUE(m.Allows("", kAclKeyRead));  // the empty pattern matches the empty key only
  EXPECT_FALSE(m.Allows("", kAclKeyWrite));
  EXPECT_TRUE(m.Allows("kqy", kAclKeyAll));
  EXPECT_TRUE(m.Allows("\xff\x01", kAclKeyAll));
  EXPECT_FALSE(m.Allows("other", kAclKeyRead));
  EXPECT_TRUE(AclKeyMatcher(patterns).Allows("other", kAclKeyAll));
}

TEST(AclKeyMatcherTest, AgreesWithGlobMatch) {
  // Prefixes shorter than, as long as and longer than the 8 bytes compared as a word; keys
  // shorter and longer than 8 bytes.
  const std::vector<std::string> shapes = {
      "a*",  "ab*", "abc",    "a",        "*",         "?b*",        "[ab]*",      "a\\*", "b*c",
      "",    "\\a*", "ab",    "c[^a]*",   "a**",       "abcdefg*",   "abcdefgh*",  "*a",
      "abcdefghi*",        "abcdefghij"};
  const std::vector<std::string> keys = {
      "",         "a",          "ab",        "abc",        "abcd",      "b",  "bc",
      "bxc",      "a*",         "ca",        "cb",         "*",         "\\a", "aa",
      "ba",       "abcdefgh",   "abcdefgX",  "abcdefghij", "abcdefghX", "abcdefgHij",
      "bbcdefghij"};
  // Every subset of a few shapes, each with each permission set.
  for (size_t mask = 0; mask < (size_t{1} << 6); ++mask) {
    for (size_t rot = 0; rot < shapes.size(); rot += 3) {
      std::vector<AclKeyPattern> patterns;
      for (size_t i = 0; i < 6; ++i) {
        if (mask >> i & 1) {
          patterns.push_back({static_cast<uint8_t>(1 + (i + rot) % 3),
                              shapes[(i + rot) % shapes.size()]});
        }
      }
      AclKeyMatcher m(patterns);
      for (const std::string& key : keys) {
        for (uint8_t needed : {kAclKeyRead, kAclKeyWrite, kAclKeyAll}) {
          EXPECT_EQ(m.Allows(key, needed), Reference(patterns, key, needed))
              << "key '" << key << "' needed " << int{needed} << " mask " << mask << " rot "
              << rot;
        }
      }
    }
  }
}

TEST(AclKeyMatcherTest, CopiesStayValid) {
  std::vector<AclKeyPattern> patterns = {{kAclKeyAll, "pre*"}, {kAclKeyAll, "ex"}};
  AclKeyMatcher copy;
  {
    AclKeyMatcher m(patterns);
    copy = m;
  }
  patterns.clear();
  EXPECT_TRUE(copy.Allows("prefix", kAclKeyAll));
  EXPECT_TRUE(copy.Allows("ex", kAclKeyAll));
  EXPECT_FALSE(copy.Allows("e", kAclKeyAll));
}

}  // namespace
}  // namespace dashkv
