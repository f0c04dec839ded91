// Tests for core/numbers.h. Expected values were recorded from redis-server 7.0.15:
// ParseDouble + FormatDouble via ZADD/ZSCORE, ParseLongDouble + FormatLongDouble via
// SET/INCRBYFLOAT. ParseInt64's own cases are in tests/core/base/parse_int_test.cc.
#include "core/numbers.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <string_view>

namespace dashkv {
namespace {

using namespace std::string_view_literals;

TEST(NumbersTest, Int64ToStringMatchesToString) {
  std::mt19937_64 rng(99);
  for (int i = 0; i < 100000; ++i) {
    const int64_t v = static_cast<int64_t>(rng()) >> (rng() % 64);
    ASSERT_EQ(Int64ToString(v), std::to_string(v));
  }
}

TEST(NumbersTest, FormatInt64) {
  char buf[kInt64MaxChars];
  EXPECT_EQ(std::string_view(buf, FormatInt64(0, buf)), "0");
  EXPECT_EQ(std::string_view(buf, FormatInt64(-7, buf)), "-7");
  EXPECT_EQ(std::string_view(buf, FormatInt64(10, buf)), "10");
  EXPECT_EQ(std::string_view(buf, FormatInt64(INT64_MAX, buf)), "9223372036854775807");
  EXPECT_EQ(std::string_view(buf, FormatInt64(INT64_MIN, buf)), "-9223372036854775808");
  for (int64_t p = 1, k = 0; k < 18; ++k, p *= 10) {
    EXPECT_EQ(Int64ToString(p), std::to_string(p));
    EXPECT_EQ(Int64ToString(p - 1), std::to_string(p - 1));
    EXPECT_EQ(Int64ToString(-p), std::to_string(-p));
  }
}

struct DoubleCase {
  std::string_view in;
  bool ok;
  std::string_view zscore;  // Redis's reply for the parsed score (FormatDouble)
};

// ZSCORE of -0 is "0" in Redis only through the listpack encoding, which stores integral scores
// as integers; the skiplist encoding replies "-0" (checked), which is what FormatDouble gives.
const DoubleCase kDoubleCases[] = {
    {"0"sv, true, "0"},
    {"1"sv, true, "1"},
    {"-1"sv, true, "-1"},
    {"1.5"sv, true, "1.5"},
    {".5"sv, true, "0.5"},
    {"5."sv, true, "5"},
    {"+1"sv, true, "1"},
    {"+.5"sv, true, "0.5"},
    {"-.5"sv, true, "-0.5"},
    {"1e3"sv, true, "1000"},
    {"1E3"sv, true, "1000"},
    {"1e-3"sv, true, "0.001"},
    {"1.1"sv, true, "1.1000000000000001"},
    {"0.1"sv, true, "0.10000000000000001"},
    {"3.0"sv, true, "3"},
    {"-0"sv, true, "-0"},
    {"-0.0"sv, true, "-0"},
    {"inf"sv, true, "inf"},
    {"-inf"sv, true, "-inf"},
    {"+inf"sv, true, "inf"},
    {"Inf"sv, true, "inf"},
    {"INF"sv, true, "inf"},
    {"infinity"sv, true, "inf"},
    {"-Infinity"sv, true, "-inf"},
    {"nan"sv, false, ""},
    {"NaN"sv, false, ""},
    {"-nan"sv, false, ""},
    {"1e308"sv, true, "1e+308"},
    {"1e309"sv, false, ""},
    {"-1e309"sv, false, ""},
    {"1e-320"sv, true, "9.9998886718268301e-321"},
    {"1e-400"sv, false, ""},
    {"4.9e-324"sv, true, "4.9406564584124654e-324"},
    {"2.5e-324"sv, true, "4.9406564584124654e-324"},
    {"0x10"sv, true, "16"},
    {"0x1p3"sv, true, "8"},
    {"0X1P-2"sv, true, "0.25"},
    {"1 "sv, false, ""},
    {" 1"sv, false, ""},
    {""sv, false, ""},
    {"1a"sv, false, ""},
    {"1e"sv, false, ""},
    {"e3"sv, false, ""},
    {"."sv, false, ""},
    {"-"sv, false, ""},
    {"+"sv, false, ""},
    {"1.7976931348623157e308"sv, true, "1.7976931348623157e+308"},
    {"1.7976931348623159e308"sv, false, ""},
    {"123456789012345678901234567890"sv, true, "1.2345678901234568e+29"},
    {"0.30000000000000004"sv, true, "0.30000000000000004"},
    {"1e16"sv, true, "10000000000000000"},
    {"1e15"sv, true, "1000000000000000"},
    {"12345678.9"sv, true, "12345678.9"},
    {"1\x00"""sv, false, ""},
    {"00001"sv, true, "1"},
    {"1_000"sv, false, ""},
    {"0.1e1"sv, true, "1"},
    {"9007199254740993"sv, true, "9007199254740992"},
};

TEST(NumbersTest, ParseDoubleAndFormatDoubleMatchRedis) {
  for (const DoubleCase& c : kDoubleCases) {
    std::optional<double> v = ParseDouble(c.in);
    ASSERT_EQ(v.has_value(), c.ok) << "input=" << c.in;
    if (v) {
      EXPECT_EQ(FormatDouble(*v), c.zscore) << "input=" << c.in;
    }
  }
}

TEST(NumbersTest, FormatDouble) {
  EXPECT_EQ(FormatDouble(1.5), "1.5");
  EXPECT_EQ(FormatDouble(0.1), "0.10000000000000001");
  EXPECT_EQ(FormatDouble(std::numeric_limits<double>::infinity()), "inf");
  EXPECT_EQ(FormatDouble(-std::numeric_limits<double>::infinity()), "-inf");
  EXPECT_EQ(FormatDouble(1e300), "1.0000000000000001e+300");
  EXPECT_EQ(FormatDouble(-0.0), "-0");
}

TEST(NumbersTest, FormatDoubleShortestRoundTrips) {
  EXPECT_EQ(FormatDoubleShortest(0.1), "0.1");
  EXPECT_EQ(FormatDoubleShortest(1.5), "1.5");
  EXPECT_EQ(FormatDoubleShortest(std::numeric_limits<double>::infinity()), "inf");
  EXPECT_EQ(FormatDoubleShortest(-std::numeric_limits<double>::infinity()), "-inf");
  std::mt19937_64 rng(5);
  for (int i = 0; i < 20000; ++i) {
    uint64_t bits = rng();
    double d;
    std::memcpy(&d, &bits, sizeof(d));
    if (!std::isfinite(d)) continue;
    const std::string s = FormatDoubleShortest(d);
    std::optional<double> back = ParseDouble(s);
    // Values that underflow to a denormal still parse; only exact zero results are rejected.
    if (back) {
      ASSERT_EQ(*back, d) << s;
    }
    ASSERT_EQ(ParseDouble(FormatDouble(d)).value_or(d), d);
  }
}

struct IncrByFloatCase {
  std::string_view initial;
  std::string_view incr;
  std::string_view reply;  // the new value, or Redis's error text
};

const IncrByFloatCase kIncrByFloatCases[] = {
    {"10.5"sv, "0.1"sv, "10.6"},
    {"0"sv, "5.0e3"sv, "5000"},
    {"0"sv, "3.0"sv, "3"},
    {"0"sv, "1e20"sv, "100000000000000000000"},
    {"0"sv, "1e100"sv,
     "99999999999999999996693535322073426194986990198284960792713915417520186694826443"
     "24418977840117055488"},
    {"0"sv, "-1e100"sv,
     "-9999999999999999999669353532207342619498699019828496079271391541752018669482644"
     "324418977840117055488"},
    {"0"sv, "1.1"sv, "1.1"},
    {"0"sv, "0.1"sv, "0.1"},
    {"0.1"sv, "0.2"sv, "0.3"},
    {"3"sv, "-3"sv, "0"},
    {"0"sv, "-0.0"sv, "0"},
    {"0"sv, "1e-20"sv, "0"},
    {"0"sv, "-1e-20"sv, "0"},
    {"0"sv, "1e-17"sv, "0.00000000000000001"},
    {"0"sv, "5e-18"sv, "0"},
    {"0"sv, "1.5e-17"sv, "0.00000000000000002"},
    {"0"sv, "123456789.123456789"sv, "123456789.12345678899873747"},
    {"0"sv, "1e5000"sv, "ERR value is not a valid float"},
    {"0"sv, "inf"sv, "ERR increment would produce NaN or Infinity"},
    {"0"sv, "nan"sv, "ERR value is not a valid float"},
    {"0"sv, "1.7976931348623157e308"sv,
     "17976931348623156999592104677410443404838644694432917848531442076517662852312439"
     "63547018686083870855644287934194255206893087083634511360553578972780264776170734"
     "98977686288394835618163294045594434929537447290627480669417384648879122776218333"
     "598953852832103282504751611691208117720159985926376802466863339536384"},
    {"1.7976931348623157e308"sv, "1.7976931348623157e308"sv,
     "35953862697246313999184209354820886809677289388865835697062884153035325704624879"
     "27094037372167741711288575868388510413786174167269022721107157945560529552341469"
     "97955372576789671236326588091188869859074894581254961338834769297758245552436667"
     "197907705664206565009503223382416235440319971852753604933726679072768"},
    {"0"sv, "0x1p-2"sv, "0.25"},
    {"0"sv, " 1"sv, "ERR value is not a valid float"},
    {"0"sv, "1 "sv, "ERR value is not a valid float"},
    {"0"sv, ""sv, "ERR value is not a valid float"},
    {"0"sv, "abc"sv, "ERR value is not a valid float"},
    {"0"sv, "+5"sv, "5"},
    {"0"sv, ".5"sv, "0.5"},
    {"0"sv, "5."sv, "5"},
    {"abc"sv, "1"sv, "ERR value is not a valid float"},
    {"1e3"sv, "0"sv, "1000"},
    {"100"sv, "0.00000000000000001"sv, "100.00000000000000001"},
    {"0"sv, "3.14159265358979323846264338327950288"sv, "3.14159265358979324"},
    {"0"sv, "-1.5"sv, "-1.5"},
    {"0"sv, "1e-4950"sv, "0"},
    {"0"sv, "1e-5000"sv, "ERR value is not a valid float"},
    {"0"sv, "9223372036854775807"sv, "9223372036854775807"},
    {"0"sv, "18446744073709551616"sv, "18446744073709551616"},
    {"2"sv, "0.1"sv, "2.1"},
    {"1"sv, "-0.9"sv, "0.1"},
    {"0"sv, "0.3333333333333333333333"sv, "0.33333333333333333"},
    {"0"sv, "1e18"sv, "1000000000000000000"},
    {"0"sv, "1e19"sv, "10000000000000000000"},
    {"0"sv, "12345678901234567890.5"sv, "12345678901234567890"},
};

// Mirrors INCRBYFLOAT: parse both operands, add, refuse NaN/infinity, format.
std::string IncrByFloat(std::string_view initial, std::string_view incr) {
  std::optional<long double> a = ParseLongDouble(initial);
  std::optional<long double> b = ParseLongDouble(incr);
  if (!a || !b) return "ERR value is not a valid float";
  const long double sum = *a + *b;
  if (std::isnan(sum) || std::isinf(sum)) return "ERR increment would produce NaN or Infinity";
  return FormatLongDouble(sum);
}

TEST(NumbersTest, IncrByFloatMatchesRedis) {
  for (const IncrByFloatCase& c : kIncrByFloatCases) {
    EXPECT_EQ(IncrByFloat(c.initial, c.incr), c.reply) << c.initial << " + " << c.incr;
  }
}

TEST(NumbersTest, IncrByFloatHugeValues) {
  // Recorded from Redis: length, first 50 and last 30 characters.
  struct Big {
    std::string_view initial, incr;
    size_t len;
    std::string_view head, tail;
  };
  const Big kBig[] = {
      {"0", "1e4000", 4000, "99999999999999999999654638730996237849324925835069",
       "272729951206648276349901340672"},
      {"0", "-1e4000", 4001, "-9999999999999999999965463873099623784932492583506",
       "272729951206648276349901340672"},
      {"0", "1.7976931348623157e308", 309, "17976931348623156999592104677410443404838644694432",
       "159985926376802466863339536384"},
      {"1.7976931348623157e308", "1.7976931348623157e308", 309,
       "35953862697246313999184209354820886809677289388865", "319971852753604933726679072768"},
      {"1.18e4932", "0", 4933, "118000000000000000000065281291", ""},
  };
  for (const Big& b : kBig) {
    const std::string got = IncrByFloat(b.initial, b.incr);
    EXPECT_EQ(got.size(), b.len) << b.incr;
    EXPECT_TRUE(std::string_view(got).starts_with(b.head)) << b.incr;
    EXPECT_TRUE(std::string_view(got).ends_with(b.tail)) << b.incr;
  }
  EXPECT_EQ(IncrByFloat("1e4932", "1e4932"), "ERR increment would produce NaN or Infinity");
}

TEST(NumbersTest, ParseLongDoubleLengthLimit) {
  EXPECT_EQ(ParseLongDouble(std::string(5118, '0') + "1"), 1.0L);  // 5119 bytes: accepted
  EXPECT_FALSE(ParseLongDouble(std::string(5119, '0') + "1"));       // 5120 bytes: refused
  EXPECT_FALSE(ParseLongDouble(std::string(5119, '1')));             // overflows to inf
  EXPECT_FALSE(ParseLongDouble("1\0"sv));
  EXPECT_FALSE(ParseLongDouble("nan"));
  EXPECT_EQ(ParseLongDouble("-inf"), -std::numeric_limits<long double>::infinity());
}

TEST(NumbersTest, FormatLongDouble) {
  EXPECT_EQ(FormatLongDouble(10.6L), "10.6");
  EXPECT_EQ(FormatLongDouble(5000), "5000");
  EXPECT_EQ(FormatLongDouble(-0.0L), "0");
  EXPECT_EQ(FormatLongDouble(-1e-30L), "0");
  EXPECT_EQ(FormatLongDouble(0.5L), "0.5");
  EXPECT_EQ(FormatLongDouble(std::numeric_limits<long double>::infinity()), "inf");
  EXPECT_EQ(FormatLongDouble(-std::numeric_limits<long double>::infinity()), "-inf");
}

}  // namespace
}  // namespace dashkv
