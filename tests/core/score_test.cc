#include "core/score.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <string>

namespace dashkv {
namespace {

using std::string_literals::operator""s;

TEST(ScoreTest, ParseScoreAccepts) {
  EXPECT_EQ(ParseScore("1"), 1.0);
  EXPECT_EQ(ParseScore("-1.5"), -1.5);
  EXPECT_EQ(ParseScore("+2"), 2.0);
  EXPECT_EQ(ParseScore("1e3"), 1000.0);
  EXPECT_EQ(ParseScore(".5"), 0.5);
  EXPECT_EQ(ParseScore("5."), 5.0);
  EXPECT_EQ(ParseScore("0x10"), 16.0);
  EXPECT_EQ(ParseScore("1.7976931348623157e308"), std::numeric_limits<double>::max());
  double inf = std::numeric_limits<double>::infinity();
  for (const char* s : {"inf", "+inf", "INF", "+Inf", "infinity", "Infinity"}) {
    EXPECT_EQ(ParseScore(s), inf) << s;
  }
  for (const char* s : {"-inf", "-INF", "-infinity"}) EXPECT_EQ(ParseScore(s), -inf) << s;
  auto denorm = ParseScore("4e-320");  // underflow but not to zero: accepted
  ASSERT_TRUE(denorm.has_value());
  EXPECT_GT(*denorm, 0);
  EXPECT_EQ(ParseScore("-0"), 0.0);
  EXPECT_TRUE(std::signbit(*ParseScore("-0")));
}

TEST(ScoreTest, ParseScoreRejects) {
  for (std::string s : {""s, " 1"s, "1 "s, "\t1"s, "1x"s, "abc"s, "nan"s, "NaN"s, "-nan"s,
                        "1e400"s, "-1e400"s, "1e-400"s, "("s, "(1"s, "1\0"s, "--1"s, "+"s}) {
    EXPECT_FALSE(ParseScore(s).has_value()) << s;
  }
  std::string long_num(100, '1');  // long input goes through the heap buffer
  EXPECT_TRUE(ParseScore(long_num).has_value());
}

TEST(ScoreTest, ParseScoreRange) {
  auto r = ParseScoreRange("(1", "5");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->min, 1);
  EXPECT_TRUE(r->min_exclusive);
  EXPECT_EQ(r->max, 5);
  EXPECT_FALSE(r->max_exclusive);
  EXPECT_FALSE(r->Contains(1));
  EXPECT_TRUE(r->Contains(1.0000001));
  EXPECT_TRUE(r->Contains(5));
  r = ParseScoreRange("-inf", "+inf");
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->Contains(std::numeric_limits<double>::infinity()));
  EXPECT_TRUE(r->Contains(-std::numeric_limits<double>::infinity()));
  r = ParseScoreRange("(-inf", "(+inf");
  ASSERT_TRUE(r);
  EXPECT_FALSE(r->Contains(std::numeric_limits<double>::infinity()));
  EXPECT_TRUE(r->Contains(0));
  // Redis reads these ends with a bare strtod: whitespace, overflow and "" (as 0) pass.
  r = ParseScoreRange(" 1", "1e400");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->min, 1);
  EXPECT_TRUE(std::isinf(r->max));
  r = ParseScoreRange("", "(");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->min, 0);
  EXPECT_EQ(r->max, 0);
  EXPECT_TRUE(r->max_exclusive);
  EXPECT_TRUE(r->IsEmpty());
  EXPECT_TRUE(ParseScoreRange("2\0junk"s, "3"));
  for (auto [a, b] : {std::pair{"x", "1"}, {"1", "x"}, {"nan", "1"}, {"1", "(nan"}, {"((1", "2"},
                      {"1 ", "2"}, {"[1", "2"}}) {
    EXPECT_FALSE(ParseScoreRange(a, b)) << a << " " << b;
  }
}

TEST(ScoreTest, ScoreRangeEmptiness) {
  EXPECT_TRUE((ScoreRange{2, 1, false, false}).IsEmpty());
  EXPECT_FALSE((ScoreRange{1, 1, false, false}).IsEmpty());
  EXPECT_TRUE((ScoreRange{1, 1, true, false}).IsEmpty());
  EXPECT_TRUE((ScoreRange{1, 1, false, true}).IsEmpty());
}

TEST(ScoreTest, ParseLexRange) {
  using K = LexBound::Kind;
  auto r = ParseLexRange("-", "+");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->min.kind, K::kNegInf);
  EXPECT_EQ(r->max.kind, K::kPosInf);
  EXPECT_TRUE(r->Contains(""));
  EXPECT_TRUE(r->Contains("\xff\xff"));
  EXPECT_FALSE(r->IsEmpty());
  r = ParseLexRange("[a", "(c");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->min.kind, K::kInclusive);
  EXPECT_EQ(r->min.value, "a");
  EXPECT_EQ(r->max.kind, K::kExclusive);
  EXPECT_TRUE(r->Contains("a"));
  EXPECT_TRUE(r->Contains("bzzz"));
  EXPECT_FALSE(r->Contains("c"));
  EXPECT_FALSE(r->Contains(""));
  r = ParseLexRange("[", "(");  // empty strings are valid bounds
  ASSERT_TRUE(r);
  EXPECT_EQ(r->min.value, "");
  EXPECT_TRUE(r->IsEmpty());
  EXPECT_TRUE(ParseLexRange("+", "-")->IsEmpty());
  EXPECT_TRUE(ParseLexRange("+", "+")->IsEmpty());
  EXPECT_TRUE(ParseLexRange("[b", "[a")->IsEmpty());
  EXPECT_FALSE(ParseLexRange("[a", "[a")->IsEmpty());
  EXPECT_TRUE(ParseLexRange("(a", "[a")->IsEmpty());
  EXPECT_FALSE(ParseLexRange("[a", "[a\0"s)->IsEmpty());
  for (auto [a, b] : {std::pair{"a", "+"}, {"-", "b"}, {"", "+"}, {"-", ""}, {"-a", "+"},
                      {"-", "+b"}, {"-", "1"}}) {
    EXPECT_FALSE(ParseLexRange(a, b)) << a << " " << b;
  }
  EXPECT_TRUE(ParseLexRange("-\0x"s, "+"));  // Redis checks the byte after the sign against NUL
}

TEST(ScoreTest, LexBytesCompareUnsigned) {
  auto r = ParseLexRange("[\x7f", "+");
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->Contains("\x80"));
  EXPECT_FALSE(r->Contains("\x10"));
}

TEST(ScoreTest, FormatRedis70) {
  EXPECT_EQ(FormatScoreRedis70(1.1), "1.1000000000000001");
  EXPECT_EQ(FormatScoreRedis70(1), "1");
  EXPECT_EQ(FormatScoreRedis70(-2.5), "-2.5");
  EXPECT_EQ(FormatScoreRedis70(0.1), "0.10000000000000001");
  EXPECT_EQ(FormatScoreRedis70(1e20), "1e+20");
  EXPECT_EQ(FormatScoreRedis70(std::numeric_limits<double>::infinity()), "inf");
  EXPECT_EQ(FormatScoreRedis70(-std::numeric_limits<double>::infinity()), "-inf");
  EXPECT_EQ(FormatScoreRedis70(-0.0), "-0");
  std::mt19937_64 rng(5);
  for (int i = 0; i < 100000; ++i) {
    uint64_t bits = rng();
    double v;
    std::memcpy(&v, &bits, 8);
    if (std::isnan(v) || std::isinf(v)) continue;
    char ref[64];
    std::snprintf(ref, sizeof(ref), "%.17g", v);
    ASSERT_EQ(FormatScoreRedis70(v), ref);
  }
}

TEST(ScoreTest, FormatShortest) {
  EXPECT_EQ(FormatScoreShortest(1.1), "1.1");
  EXPECT_EQ(FormatScoreShortest(1), "1");
  EXPECT_EQ(FormatScoreShortest(-2.5), "-2.5");
  EXPECT_EQ(FormatScoreShortest(0), "0");
  EXPECT_EQ(FormatScoreShortest(-0.0), "-0");
  EXPECT_EQ(FormatScoreShortest(100), "100");
  EXPECT_EQ(FormatScoreShortest(0.0001), "0.0001");
  EXPECT_EQ(FormatScoreShortest(0.00001), "1e-05");
  EXPECT_EQ(FormatScoreShortest(1.5e-7), "1.5e-07");
  EXPECT_EQ(FormatScoreShortest(1e16), "10000000000000000");
  EXPECT_EQ(FormatScoreShortest(1e17), "1e+17");
  EXPECT_EQ(FormatScoreShortest(1.25e100), "1.25e+100");
  EXPECT_EQ(FormatScoreShortest(123456789012345678.0), "1.2345678901234568e+17");
  EXPECT_EQ(FormatScoreShortest(std::numeric_limits<double>::infinity()), "inf");
  EXPECT_EQ(FormatScoreShortest(-std::numeric_limits<double>::infinity()), "-inf");
  EXPECT_EQ(FormatScoreShortest(std::numeric_limits<double>::max()), "1.7976931348623157e+308");
  EXPECT_EQ(FormatScoreShortest(std::numeric_limits<double>::denorm_min()), "5e-324");
  EXPECT_EQ(FormatScoreShortest(-std::numeric_limits<double>::min()),
            "-2.2250738585072014e-308");
  // Round trip, and agreement with "%.17g" whenever the shortest form needs 17 digits.
  std::mt19937_64 rng(9);
  for (int i = 0; i < 200000; ++i) {
    double v;
    if (i % 2 == 0) {
      uint64_t bits = rng();
      std::memcpy(&v, &bits, 8);
    } else {
      v = static_cast<double>(static_cast<int64_t>(rng() % 2000000) - 1000000) / 1000.0;
    }
    if (std::isnan(v) || std::isinf(v)) continue;
    std::string s = FormatScoreShortest(v);
    ASSERT_LE(s.size(), kMaxScoreChars);
    auto back = ParseScore(s);
    ASSERT_TRUE(back.has_value()) << s;
    ASSERT_EQ(std::memcmp(&*back, &v, 8), 0) << s;
    char g[64];
    std::snprintf(g, sizeof(g), "%.17g", v);
    // Same layout as %g: exponent form iff %.17g uses it.
    ASSERT_EQ(s.find('e') != std::string::npos, std::string(g).find('e') != std::string::npos)
        << s << " vs " << g;
  }
}

}  // namespace
}  // namespace dashkv
