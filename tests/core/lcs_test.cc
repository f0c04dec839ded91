#include "core/lcs.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace dashkv {
namespace {

// LCS length by the textbook recursion over all prefixes (independent of ComputeLcs's table).
size_t LcsLength(const std::string& a, const std::string& b) {
  std::vector<size_t> prev(b.size() + 1, 0), cur(b.size() + 1, 0);
  for (char c : a) {
    for (size_t j = 1; j <= b.size(); ++j) {
      cur[j] = c == b[j - 1] ? prev[j - 1] + 1 : std::max(prev[j], cur[j - 1]);
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

bool IsSubsequence(const std::string& s, const std::string& of) {
  size_t k = 0;
  for (char c : of) {
    if (k < s.size() && s[k] == c) ++k;
  }
  return k == s.size();
}

// The example of Redis's LCS documentation: the same subsequence and the same ranges.
TEST(LcsTest, RedisDocumentationExample) {
  auto r = ComputeLcs("ohmytext", "mynewtext", 0);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->sequence, "mytext");
  ASSERT_EQ(r->matches.size(), 2u);
  EXPECT_EQ(r->matches[0], (LcsMatch{4, 7, 5, 8}));
  EXPECT_EQ(r->matches[1], (LcsMatch{2, 3, 0, 1}));
  auto long_only = ComputeLcs("ohmytext", "mynewtext", 4);
  ASSERT_EQ(long_only->matches.size(), 1u);
  EXPECT_EQ(long_only->matches[0].length(), 4u);
  EXPECT_EQ(long_only->sequence, "mytext") << "MINMATCHLEN filters ranges, not the sequence";
}

TEST(LcsTest, EmptyAndEqualStrings) {
  EXPECT_EQ(ComputeLcs("", "abc", 0)->sequence, "");
  EXPECT_TRUE(ComputeLcs("abc", "", 0)->matches.empty());
  auto same = ComputeLcs("abcdefgh", "abcdefgh", 0);
  EXPECT_EQ(same->sequence, "abcdefgh");
  ASSERT_EQ(same->matches.size(), 1u);
  EXPECT_EQ(same->matches[0], (LcsMatch{0, 7, 0, 7}));
  EXPECT_TRUE(ComputeLcs("aaa", "bbb", 0)->matches.empty());
}

// Random strings over small alphabets: the sequence is common to both and as long as the LCS;
// every range is a real match, ranges are disjoint and in backward order, and together (with no
// minimum) they spell the sequence.
TEST(LcsTest, RandomStringsGiveALongestCommonSubsequenceAndExactRanges) {
  std::mt19937 rng(7);
  for (int iter = 0; iter < 3000; ++iter) {
    const int alphabet = 1 + int(rng() % 4);
    auto gen = [&] {
      std::string s(rng() % 40, 'a');
      for (char& c : s) c = char('a' + rng() % alphabet);
      return s;
    };
    const std::string a = gen(), b = gen();
    auto r = ComputeLcs(a, b, 0);
    ASSERT_TRUE(r.has_value());
    ASSERT_EQ(r->sequence.size(), LcsLength(a, b)) << a << " " << b;
    ASSERT_TRUE(IsSubsequence(r->sequence, a) && IsSubsequence(r->sequence, b));
    std::string spelled;
    for (size_t k = r->matches.size(); k-- > 0;) {
      const LcsMatch& m = r->matches[k];
      ASSERT_EQ(m.a_end - m.a_start, m.b_end - m.b_start);
      ASSERT_EQ(a.substr(m.a_start, m.length()), b.substr(m.b_start, m.length()));
      if (k + 1 < r->matches.size()) {
        ASSERT_LT(r->matches[k + 1].a_end, m.a_start);
        ASSERT_LT(r->matches[k + 1].b_end, m.b_start);
      }
      spelled += a.substr(m.a_start, m.length());
    }
    ASSERT_EQ(spelled, r->sequence);
    const uint64_t min_len = rng() % 4;
    auto filtered = ComputeLcs(a, b, min_len);
    std::vector<LcsMatch> expected;
    for (const LcsMatch& m : r->matches) {
      if (m.length() >= min_len) expected.push_back(m);
    }
    ASSERT_EQ(filtered->matches, expected);
  }
}

TEST(LcsTest, TableBytesSaturates) {
  EXPECT_EQ(LcsTableBytes(0, 0), 4u);
  EXPECT_EQ(LcsTableBytes(10, 20), 11u * 21 * 4);
  EXPECT_EQ(LcsTableBytes(size_t{1} << 40, size_t{1} << 40), UINT64_MAX);
}

}  // namespace
}  // namespace dashkv
