// Tests for core/glob.h: a table recorded from redis-server 7.0.15 (KEYS <pattern> over a fixed
// key set), a randomized cross-check against a naive recursive matcher, Redis's quirks, and
// polynomial running time on backtracking-heavy patterns.
#include "core/glob.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <vector>

namespace dashkv {
namespace {

using namespace std::string_view_literals;

struct RedisGlobCase {
  std::string_view pattern;
  std::string_view hex_mask;  // which of kSubjects match
};

// Subject i matches when bit i of the hex mask is set (bit 0 = lowest bit of the last digit).
const std::vector<std::string_view> kSubjects = {
    "*"sv, "-"sv, "--"sv, "--b\\"sv, "-[-"sv, "-[]["sv, "-[aa"sv, "-\\"sv, "-]"sv, "-]b-"sv, "-^"sv,
    "-^]"sv, "-^^^"sv, "-^aa"sv, "-^ba"sv, "-a"sv, "-a[b"sv, "-a\\"sv, "-ab"sv, "\?"sv, "HELLO"sv,
    "Hello"sv, "["sv, "[-"sv, "[-]"sv, "[-^"sv, "[-a-"sv, "[-b^"sv, "[["sv, "[[aa"sv, "[\\"sv,
    "[\\a"sv, "[\\bb"sv, "[]"sv, "[]-"sv, "[]ab"sv, "[^"sv, "[^["sv, "[b"sv, "[b^"sv, "\\"sv,
    "\\-]^"sv, "\\[-a"sv, "\\[a"sv, "\\[b^"sv, "\\\\"sv, "\\\\a^"sv, "\\]"sv, "\\^"sv, "\\^b^"sv,
    "\\b"sv, "\\b^"sv, "\\b^a"sv, "]"sv, "]-b"sv, "]["sv, "][^"sv, "][a]"sv, "]\\"sv, "]\\["sv,
    "]\\]a"sv, "]]"sv, "]][a"sv, "]]]-"sv, "]]]a"sv, "]a"sv, "]a[a"sv, "]aba"sv, "]b"sv, "]b^"sv,
    "^"sv, "^-"sv, "^-]"sv, "^-^^"sv, "^-b"sv, "^[a^"sv, "^\\["sv, "^\\]a"sv, "^]"sv, "^]-"sv,
    "^^"sv, "^^-"sv, "^^\\]"sv, "^a"sv, "^a\\a"sv, "^aa"sv, "^b\\"sv, "`"sv, "a"sv, "a*b"sv, "a-"sv,
    "a-b"sv, "a\?b"sv, "aXbYc"sv, "a["sv, "a[-"sv, "a[a"sv, "a[b"sv, "a\\^a"sv, "a\\b"sv, "a]"sv,
    "a]-"sv, "a^"sv, "a^\\"sv, "aa"sv, "aaab"sv, "ab"sv, "ab[-"sv, "ab\\-"sv, "ab]"sv, "aba^"sv,
    "abab"sv, "abb"sv, "abc"sv, "b"sv, "b-b"sv, "b-b]"sv, "b["sv, "b[\\"sv, "b[\\b"sv, "b[a]"sv,
    "b\\-b"sv, "b\\]"sv, "b]["sv, "b]a]"sv, "ba"sv, "ba-^"sv, "bb"sv, "bbab"sv, "foo:1"sv,
    "foo:bar:baz"sv, "hallo"sv, "heeeello"sv, "hello"sv, "hllo"sv, "user:1000"sv, "x"sv, "z"sv,
    "{"sv, "\x80"""sv, "\xff"""sv,
};

const RedisGlobCase kRedisGlobCases[] = {
    {"*"sv, "1fffffffffffffffffffffffffffffffffff"},
    {"\?"sv, "1f0000040000018000400020010000480003"},
    {"\?\?"sv, "a0200550440940922485a05250808584"},
    {"\?\?\?"sv, "c4b20ab9a629520094808a483060810"},
    {"a*"sv, "3ffffff0000000000000000000000"},
    {"*a"sv, "200001050138200f50100c00a000e040"},
    {"*b*"sv, "5fffffe0a3a400438005e10c908054208"},
    {"a\?b"sv, "1000a1a0000000000000000000000"},
    {"h\?llo"sv, "2800000000000000000000000000000000"},
    {"h*llo"sv, "7800000000000000000000000000000000"},
    {"h[ae]llo"sv, "2800000000000000000000000000000000"},
    {"h[^e]llo"sv, "800000000000000000000000000000000"},
    {"h[a-b]llo"sv, "800000000000000000000000000000000"},
    {"h[b-a]llo"sv, "800000000000000000000000000000000"},
    {"[abc]"sv, "40000010000000000000000000000"},
    {"[^abc]"sv, "1f0000000000008000400020010000480003"},
    {"[a-z]"sv, "30000040000010000000000000000000000"},
    {"[z-a]"sv, "30000040000010000000000000000000000"},
    {"[a-]"sv, "18000400020000000000000"},
    {"[a-]]"sv, "18000400020000000000000"},
    {"[-a]"sv, "10000000000000000000002"},
    {"[]"sv, "0"},
    {"[]a]"sv, "0"},
    {"[^]"sv, "1f0000040000018000400020010000480003"},
    {"[^]a]"sv, "0"},
    {"["sv, "0"},
    {"[^"sv, "1f0000040000018000400020010000480003"},
    {"[ab"sv, "40000010000000000000000000000"},
    {"[^ab"sv, "1f0000000000008000400020010000480003"},
    {"a["sv, "0"},
    {"\\*"sv, "1"},
    {"\\\?"sv, "80000"},
    {"\\["sv, "400000"},
    {"\\\\"sv, "10000000000"},
    {"\\"sv, "10000000000"},
    {"a\\"sv, "0"},
    {"a\\*"sv, "0"},
    {"*\\"sv, "400080004000000400210040020088"},
    {"[\\]]"sv, "20000000000000"},
    {"[\\-]"sv, "2"},
    {"[\\^]"sv, "400000000000000000"},
    {"[a\\-z]"sv, "20000000000010000000000000000000002"},
    {"[\\a-z]"sv, "20000000000010000000000000000000002"},
    {"[a-\\z]"sv, "20000000000018000400020010000000000"},
    {"foo:*"sv, "600000000000000000000000000000000"},
    {"foo:*:baz"sv, "400000000000000000000000000000000"},
    {"*:*"sv, "8600000000000000000000000000000000"},
    {"user:\?000"sv, "8000000000000000000000000000000000"},
    {"[u]ser:*"sv, "8000000000000000000000000000000000"},
    {"[^x]*"sv, "1effffffffffffffffffffffffffffffffff"},
    {"[\x80""-\xff""]"sv, "180000000000000000000000000000000000"},
    {"[\xff""-\x80""]"sv, "180000000000000000000000000000000000"},
    {"[a-\xff""]"sv, "100000000000018000400020010000480003"},
    {"[\x00""-z]"sv, "30000040000018000400020010000480003"},
    {"[{-`]"sv, "70000040000018000000000000000000000"},
    {"[`-{]"sv, "70000040000018000000000000000000000"},
    {"**"sv, "1fffffffffffffffffffffffffffffffffff"},
    {"***a"sv, "200001050138200f50100c00a000e040"},
    {"a**"sv, "3ffffff0000000000000000000000"},
    {"*\?"sv, "1fffffffffffffffffffffffffffffffffff"},
    {"\?*"sv, "1fffffffffffffffffffffffffffffffffff"},
    {"*\?*"sv, "1fffffffffffffffffffffffffffffffffff"},
    {"[[]"sv, "400000"},
    {"[[-]]"sv, "20010000400000"},
    {"[]-a]"sv, "0"},
    {"a[]b"sv, "0"},
    {"[!a]"sv, "10000000000000000000000"},
    {"[a-c-e]"sv, "40000010000000000000000000002"},
    {"[a-cx]"sv, "10000040000010000000000000000000000"},
    {"[^a-c]"sv, "1f0000000000008000400020010000480003"},
    {"*["sv, "0"},
    {"*[^"sv, "1fffffffffffffffffffffffffffffffffff"},
    {"ab]"sv, "2000000000000000000000000000"},
    {"*]"sv, "15102010000441002220800201000900"},
    {"^*"sv, "7fffc00000000000000000"},
    {"-"sv, "2"},
    {"[--]"sv, "20010000480002"},
    {"[---]"sv, "2"},
    {"a*b*"sv, "3fe0a3a0000000000000000000000"},
    {"*a*b"sv, "10001860a1a0000000000000800050000"},
    {"*ab*ab*"sv, "8000000000000000000000000000"},
    {"h*l\?o"sv, "7800000000000000000000000000000000"},
    {"H*"sv, "300000"},
    {"h*"sv, "7800000000000000000000000000000000"},
    {"[Hh]ello"sv, "2000000000000000000000000000200000"},
    {"[A-Z]*"sv, "300000"},
    {"-^[a^"sv, "0"},
    {"a"sv, "10000000000000000000000"},
    {"]\?*]*"sv, "19200000000000000"},
    {"*\?\\\?^]"sv, "0"},
    {"-\\[a-a"sv, "0"},
    {"^"sv, "400000000000000000"},
    {"-ab\\"sv, "0"},
    {"^]^a*"sv, "0"},
    {"-^"sv, "400"},
    {"a^[["sv, "0"},
    {"[]a^]"sv, "0"},
    {"-a["sv, "0"},
    {"b*^\?"sv, "0"},
    {"]]\?ab^"sv, "0"},
    {"a\\a^"sv, "0"},
    {"]b\?"sv, "200000000000000000"},
    {"*-^-a\?"sv, "0"},
    {"\\\?-\?\?a"sv, "0"},
    {"]baa-["sv, "0"},
    {"\?aa\?"sv, "200000000000000000000000000"},
    {"]*^a*b"sv, "0"},
    {"\?\?b\?b*"sv, "0"},
    {"b^]"sv, "0"},
    {"]]**\\b"sv, "0"},
    {"^a]b"sv, "0"},
    {"-[^^-"sv, "8180"},
    {"b]*"sv, "18000000000000000000000000000000"},
    {"\?^*"sv, "c0000700000003003000007c00"},
    {"*b\?]"sv, "4000000000000000000000000000000"},
    {"b*a"sv, "20000000000000000000000000000000"},
    {"*b\?"sv, "a033200000400028000a108108004208"},
    {"^\\]]"sv, "0"},
    {"b"sv, "40000000000000000000000000000"},
    {"\?^"sv, "40000100000001001000000400"},
    {"-\?^"sv, "0"},
    {"a-a*"sv, "0"},
    {"*\\^-\\["sv, "0"},
    {"[b[a"sv, "40000010000000000000000400000"},
    {"[\\b"sv, "40000000000000000000000000000"},
    {"a^"sv, "40000000000000000000000000"},
    {"[b\\"sv, "40000000000000000010000000000"},
    {"b[\\^"sv, "0"},
    {"^-]^\\\?"sv, "0"},
    {"][\\"sv, "400000000000000"},
    {"\?]ba\\"sv, "0"},
    {"-^*a"sv, "6000"},
    {"--*\\["sv, "0"},
    {"^^^"sv, "0"},
    {"]^*\?"sv, "0"},
    {"\\b--b]"sv, "0"},
    {"*\?]*["sv, "0"},
    {"\\-\?]"sv, "800"},
    {"b-"sv, "0"},
    {"\?b["sv, "0"},
    {"]a\\\\\\"sv, "0"},
    {"\?]\\^[a"sv, "0"},
    {"^[-\?"sv, "800000000000000000"},
    {"]b^]\\"sv, "0"},
    {"*\\^a"sv, "4000800000010000000000000"},
    {"**ab\\\?"sv, "0"},
    {"*]b]"sv, "0"},
    {"-\?"sv, "8584"},
    {"b*b\?aa"sv, "0"},
    {"]a"sv, "20000000000000000"},
    {"^-^\?\\b"sv, "0"},
    {"\?]\\"sv, "0"},
    {"]aa"sv, "0"},
    {"^*^[]"sv, "0"},
    {"\?]\?]"sv, "10000000000000000000000000000000"},
    {"^aa]*\\"sv, "0"},
    {"[\\[\\]a"sv, "10000000020000000400000"},
    {"\?b]"sv, "2000000000000000000000000000"},
    {"]^]]"sv, "0"},
    {"]^^b"sv, "0"},
    {"*-]*\\"sv, "0"},
    {"a-\\a]a"sv, "0"},
    {"-\\aa-"sv, "0"},
    {"*[bb"sv, "1828d860a1a0004100044004900050000"},
    {"\\[[*-b"sv, "5250800000"},
    {"b[\\"sv, "0"},
    {"\\ba"sv, "20000000000000000000000000000000"},
    {"*][\?*]"sv, "0"},
    {"[*a"sv, "10000000000000000000001"},
    {"\\]\\a\\a"sv, "0"},
    {"ba^]"sv, "0"},
    {"b[[^[a"sv, "20200000000000000000000000000000"},
    {"[^^"sv, "1f0000040000018000000020010000480003"},
    {"]"sv, "20000000000000"},
    {"*\\^\\*-"sv, "0"},
    {"-a^-"sv, "0"},
    {"][[*["sv, "80000000000000"},
    {"b\?]\\-"sv, "0"},
    {"\\b"sv, "40000000000000000000000000000"},
    {"a*\?\?[-"sv, "1800000000000000000000000000"},
    {"bb^b"sv, "0"},
    {"b\\"sv, "0"},
    {"*-]-"sv, "0"},
    {"*]\?b"sv, "40000800000000"},
    {"^^]"sv, "0"},
    {"]-]]"sv, "0"},
    {"^]"sv, "40000000000000000000"},
    {"b\\^"sv, "0"},
    {"b*"sv, "1fffc0000000000000000000000000000"},
    {"ba"sv, "20000000000000000000000000000000"},
    {"]b"sv, "100000000000000000"},
    {"\?-*"sv, "1800000c000780004002000f80000c"},
    {"^ab[]"sv, "0"},
    {"-a]"sv, "0"},
    {"a]a"sv, "0"},
    {"\\[-"sv, "800000"},
    {"^b]a*"sv, "0"},
    {"*b\\b\\"sv, "0"},
    {"\?-\?b-\\"sv, "0"},
    {"^\\^^\\a"sv, "0"},
    {"[\\\\"sv, "10000000000"},
    {"]\\\\]a\\"sv, "0"},
    {"[*--a"sv, "10000000000000000000003"},
    {"[\?--["sv, "480002"},
    {"-\?-"sv, "10"},
    {"*]^-"sv, "0"},
    {"a\\b"sv, "400000000000000000000000000"},
    {"-]\\]*-"sv, "0"},
    {"]a\\\?-"sv, "0"},
    {"[b-]"sv, "40000018000400020000000000000"},
    {"]a\?a[b"sv, "0"},
    {"*\?^\\"sv, "80000000000000000000000000"},
    {"]\\\\"sv, "400000000000000"},
    {"[*\?*-a"sv, "18000400020010000480003"},
    {"]**-"sv, "8000000000000000"},
    {"\\bb-"sv, "0"},
    {"\\[b"sv, "4000000000"},
    {"\?\?aa"sv, "20002040"},
    {"-b[\?ba"sv, "0"},
    {"\\-abb"sv, "0"},
    {"-*"sv, "7fffe"},
    {"-]b"sv, "0"},
    {"^-["sv, "0"},
    {"^*-^\?"sv, "2000000000000000000"},
    {"]^\?]"sv, "0"},
    {"[a]"sv, "10000000000000000000000"},
    {"\\-"sv, "2"},
    {"^[\\-^b"sv, "100800000000000000000"},
    {"a[*\?\?"sv, "0"},
    {"b^\?\\["sv, "0"},
    {"[b*"sv, "40000000000000000000000000001"},
    {"-a"sv, "8000"},
    {"\?^^"sv, "0"},
    {"[aa]-^"sv, "0"},
    {"\\\\\?[a"sv, "80000000000"},
    {"aaaa["sv, "0"},
    {"b\?["sv, "0"},
    {"]\\^-]"sv, "0"},
    {"*--"sv, "4"},
    {"-*bb-^"sv, "0"},
    {"^aa\?"sv, "0"},
    {"a\\-]-"sv, "0"},
    {"]-\\]\?\?"sv, "0"},
    {"\\-\?^b^"sv, "0"},
    {"a*\?a\\\\"sv, "0"},
    {"*b*-]b"sv, "0"},
    {"]ab"sv, "0"},
    {"^a^"sv, "0"},
    {"\?\\\?^^]"sv, "0"},
    {"]]-"sv, "0"},
    {"[]\\[]\\"sv, "0"},
    {"\?**\?aa"sv, "20002040"},
    {"]^]\\"sv, "0"},
    {"b--aa"sv, "0"},
    {"-[-aa"sv, "8004"},
    {"abab[]"sv, "0"},
    {"b\\b]]"sv, "0"},
    {"^*b-b]"sv, "0"},
    {"[[\\"sv, "10000400000"},
    {"a[^"sv, "550440000000000000000000000"},
    {"a[["sv, "400000000000000000000000"},
    {"\?*^a\\"sv, "0"},
    {"b[*a\?"sv, "20000000000000000000000000000000"},
    {"]b^-\\"sv, "0"},
    {"^a"sv, "800000000000000000000"},
    {"b*-*"sv, "42180000000000000000000000000000"},
    {"[\?^-^"sv, "400000000000080000"},
    {"]*"sv, "3fffe0000000000000"},
    {"bb"sv, "80000000000000000000000000000000"},
    {"\?b[["sv, "0"},
    {"b\\a["sv, "0"},
    {"^^"sv, "100000000000000000000"},
    {"\?\?-\\"sv, "0"},
    {"]*-\?a["sv, "0"},
    {"[\?-*\?"sv, "80003"},
};

// Returns bit i of a hex mask (bit 0 = lowest bit of the last digit).
bool MaskBit(std::string_view hex, size_t i) {
  const size_t digit = i / 4;
  if (digit >= hex.size()) return false;
  const char c = hex[hex.size() - 1 - digit];
  const int v = c <= '9' ? c - '0' : c - 'a' + 10;
  return (v >> (i % 4)) & 1;
}

TEST(GlobTest, MatchesRedisRecordedTable) {
  for (const RedisGlobCase& c : kRedisGlobCases) {
    for (size_t i = 0; i < kSubjects.size(); ++i) {
      EXPECT_EQ(GlobMatch(c.pattern, kSubjects[i]), MaskBit(c.hex_mask, i))
          << "case=" << (&c - kRedisGlobCases) << " pattern=" << c.pattern
          << " subject=" << kSubjects[i];
    }
  }
}

TEST(GlobTest, Basics) {
  EXPECT_TRUE(GlobMatch("h?llo", "hello"));
  EXPECT_TRUE(GlobMatch("h*llo", "hllo"));
  EXPECT_TRUE(GlobMatch("h*llo", "heeeello"));
  EXPECT_TRUE(GlobMatch("h[ae]llo", "hallo"));
  EXPECT_FALSE(GlobMatch("h[ae]llo", "hillo"));
  EXPECT_TRUE(GlobMatch("h[^e]llo", "hallo"));
  EXPECT_FALSE(GlobMatch("h[^e]llo", "hello"));
  EXPECT_TRUE(GlobMatch("h[a-b]llo", "hbllo"));
  EXPECT_TRUE(GlobMatch("h[b-a]llo", "hbllo"));  // reversed range
  EXPECT_TRUE(GlobMatch("foo:*:baz", "foo:bar:baz"));
  EXPECT_TRUE(GlobMatch("a\\*b", "a*b"));
  EXPECT_FALSE(GlobMatch("a\\*b", "axb"));
  EXPECT_TRUE(GlobMatch("", ""));
  EXPECT_FALSE(GlobMatch("", "a"));
}

TEST(GlobTest, RedisQuirks) {
  EXPECT_FALSE(GlobMatch("*", ""));   // an empty subject only matches the empty pattern
  EXPECT_FALSE(GlobMatch("**", ""));
  EXPECT_TRUE(GlobMatch("[ab", "b"));  // unterminated set runs to the end
  EXPECT_FALSE(GlobMatch("[ab", "[ab"));
  EXPECT_FALSE(GlobMatch("[]", "]"));  // "[]" is an empty set
  EXPECT_FALSE(GlobMatch("[]a]", "a]"));  // empty set, then "a]"
  EXPECT_TRUE(GlobMatch("[^]", "x"));  // "[^]" is any byte
  EXPECT_FALSE(GlobMatch("[", "["));
  EXPECT_TRUE(GlobMatch("a\\", "a\\"));  // trailing backslash is literal
  EXPECT_TRUE(GlobMatch("[a-]x", "x"));   // "a-]" is a range ']'..'a'; the set goes on
  EXPECT_TRUE(GlobMatch("[a-]x", "^"));
  EXPECT_TRUE(GlobMatch("[\x01-\xff]", "\xff"));  // signed bounds: 0xff is -1, so this is [-1, 1]
  EXPECT_FALSE(GlobMatch("[\x01-\xff]", "a"));
  EXPECT_TRUE(GlobMatch("[\x80-\x01]", "\xff"));
}

TEST(GlobTest, NoCase) {
  EXPECT_TRUE(GlobMatch("HELLO", "hello", GlobCase::kNoCase));
  EXPECT_FALSE(GlobMatch("HELLO", "hello"));
  EXPECT_TRUE(GlobMatch("h[A-C]llo", "hbllo", GlobCase::kNoCase));
  EXPECT_TRUE(GlobMatch("h[a-c]llo", "HBLLO", GlobCase::kNoCase));
  EXPECT_TRUE(GlobMatch("[X]", "x", GlobCase::kNoCase));
  EXPECT_FALSE(GlobMatch("[\\X]", "x", GlobCase::kNoCase));  // escaped set members: exact
  EXPECT_TRUE(GlobMatch("\\X", "x", GlobCase::kNoCase));     // escaped outside a set: folded
  EXPECT_TRUE(GlobMatch("maxmemory-*", "MAXMEMORY-POLICY", GlobCase::kNoCase));
  EXPECT_FALSE(GlobMatch("\xc3\xa9", "\xc3\x89", GlobCase::kNoCase));  // ASCII folding only
}

TEST(GlobTest, StarRunCap) {
  // Redis 7.0.15 (checked): more than 1000 star runs before the last token never match.
  auto repeat = [](std::string_view s, int n) {
    std::string out;
    for (int i = 0; i < n; ++i) out += s;
    return out;
  };
  EXPECT_TRUE(GlobMatch(repeat("a*", 1000) + "b", repeat("a", 1000) + "b"));
  EXPECT_FALSE(GlobMatch(repeat("a*", 1001) + "b", repeat("a", 1001) + "b"));
  EXPECT_TRUE(GlobMatch(repeat("a*", 1001), repeat("a", 1001)));  // the final run is free
  EXPECT_FALSE(GlobMatch(repeat("a*", 1002), repeat("a", 1002)));
  EXPECT_TRUE(GlobMatch(repeat("*a", 1000) + "*", repeat("a", 1000)));
  EXPECT_FALSE(GlobMatch(repeat("*a", 1001), repeat("a", 1001)));
}

TEST(GlobTest, PolynomialOnBacktrackingPatterns) {
  const std::string subject(20000, 'a');
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_FALSE(GlobMatch("a*a*a*a*a*a*a*a*a*a*a*a*b", subject));
  EXPECT_FALSE(GlobMatch("*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b*", subject));
  EXPECT_TRUE(GlobMatch("*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*", subject));
  EXPECT_FALSE(GlobMatch("*?*?*?*?*?*?*?*?*?*?*?*?*?*?*?*?*?*?*?*?*?*?*b", subject));
  const auto elapsed = std::chrono::steady_clock::now() - t0;
  EXPECT_LT(elapsed, std::chrono::seconds(2));  // exponential backtracking would never finish
}

TEST(GlobTest, IsPlainPattern) {
  EXPECT_TRUE(IsPlainPattern("user:1000"));
  EXPECT_TRUE(IsPlainPattern(""));
  EXPECT_TRUE(IsPlainPattern("a]b^c-d"));
  EXPECT_FALSE(IsPlainPattern("user:*"));
  EXPECT_FALSE(IsPlainPattern("user:?"));
  EXPECT_FALSE(IsPlainPattern("user:[12]"));
  EXPECT_FALSE(IsPlainPattern("user\\:1"));
  EXPECT_TRUE(IsMatchAllPattern("*"));
  EXPECT_FALSE(IsMatchAllPattern("**"));
}

// ----- Randomized cross-check against a naive reference -----

// A pattern element of the reference matcher: built once, matched recursively.
struct RefToken {
  enum Kind { kStar, kAny, kSet, kByte } kind;
  char byte = 0;
  bool negate = false;
  struct Item {
    bool exact;  // escaped member: compared without case folding
    int lo, hi;  // inclusive bounds, signed-char values
  };
  std::vector<Item> items;
};

int Lower(int c) { return (c >= 'A' && c <= 'Z') ? c + 32 : c; }

// Tokenizes a pattern following the rules documented in core/glob.h.
std::vector<RefToken> Tokenize(std::string_view p) {
  std::vector<RefToken> out;
  size_t i = 0;
  while (i < p.size()) {
    RefToken t;
    if (p[i] == '*') {
      t.kind = RefToken::kStar;
      ++i;
    } else if (p[i] == '?') {
      t.kind = RefToken::kAny;
      ++i;
    } else if (p[i] == '\\') {
      t.kind = RefToken::kByte;
      t.byte = i + 1 < p.size() ? p[i + 1] : '\\';
      i += i + 1 < p.size() ? 2 : 1;
    } else if (p[i] == '[') {
      t.kind = RefToken::kSet;
      ++i;
      if (i < p.size() && p[i] == '^') {
        t.negate = true;
        ++i;
      }
      for (;;) {
        if (i >= p.size()) break;
        const int c = static_cast<signed char>(p[i]);
        if (p[i] == '\\' && i + 1 < p.size()) {
          const int e = static_cast<signed char>(p[i + 1]);
          t.items.push_back({true, e, e});
          i += 2;
        } else if (p[i] == ']') {
          ++i;
          break;
        } else if (i + 2 < p.size() && p[i + 1] == '-') {
          int lo = c, hi = static_cast<signed char>(p[i + 2]);
          if (lo > hi) std::swap(lo, hi);
          t.items.push_back({false, lo, hi});
          i += 3;
        } else {
          t.items.push_back({false, c, c});
          ++i;
        }
      }
    } else {
      t.kind = RefToken::kByte;
      t.byte = p[i++];
    }
    out.push_back(std::move(t));
  }
  return out;
}

bool RefOne(const RefToken& t, char ch, bool nocase) {
  const int c = static_cast<signed char>(ch);
  switch (t.kind) {
    case RefToken::kAny:
      return true;
    case RefToken::kByte:
      return nocase ? Lower(static_cast<signed char>(t.byte)) == Lower(c) : t.byte == ch;
    case RefToken::kSet: {
      bool m = false;
      for (const RefToken::Item& it : t.items) {
        if (it.exact) {
          m |= c == it.lo;
        } else if (nocase) {
          m |= Lower(c) >= Lower(it.lo) && Lower(c) <= Lower(it.hi);
        } else {
          m |= c >= it.lo && c <= it.hi;
        }
      }
      return m != t.negate;
    }
    case RefToken::kStar:
      break;
  }
  return false;
}

// Exhaustive recursive matcher: exponential, fine for the tiny inputs below.
bool RefMatch(const std::vector<RefToken>& toks, size_t ti, std::string_view s, bool nocase) {
  if (ti == toks.size()) return s.empty();
  if (toks[ti].kind == RefToken::kStar) {
    for (size_t k = 0; k <= s.size(); ++k) {
      if (RefMatch(toks, ti + 1, s.substr(k), nocase)) return true;
    }
    return false;
  }
  return !s.empty() && RefOne(toks[ti], s[0], nocase) &&
         RefMatch(toks, ti + 1, s.substr(1), nocase);
}

bool Reference(std::string_view p, std::string_view s, bool nocase) {
  if (s.empty()) return p.empty();
  return RefMatch(Tokenize(p), 0, s, nocase);
}

TEST(GlobTest, RandomizedAgainstReference) {
  std::mt19937 rng(12345);
  const std::string palpha = "aAbB*?[]^-\\\x80\xff";
  const std::string salpha = "aAbB*?[]^-\\\x80\xff";
  auto gen = [&](const std::string& alpha, int maxlen) {
    std::string s(std::uniform_int_distribution<int>(0, maxlen)(rng), ' ');
    for (char& c : s) c = alpha[std::uniform_int_distribution<size_t>(0, alpha.size() - 1)(rng)];
    return s;
  };
  int matches = 0;
  for (int iter = 0; iter < 200000; ++iter) {
    const std::string p = gen(palpha, 7);
    const std::string s = gen(salpha, 6);
    const bool nocase = iter & 1;
    const bool want = Reference(p, s, nocase);
    matches += want;
    ASSERT_EQ(GlobMatch(p, s, nocase ? GlobCase::kNoCase : GlobCase::kSensitive), want)
        << "pattern=" << p << " subject=" << s << " nocase=" << nocase;
  }
  EXPECT_GT(matches, 1000);  // the generator exercises both outcomes
}

}  // namespace
}  // namespace dashkv
