// Tests for core/base/parse_int.h. ParseInt64's expected values follow Redis 7.0's string2ll
// (recorded from redis-server 7.0.15 via INCRBY on a missing key); ParseUint64 follows the
// SCAN-cursor rules (digits only, leading zeros allowed, uint64 range).
#include "core/base/parse_int.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <string_view>

namespace dashkv {
namespace {

using namespace std::string_view_literals;

struct IntCase {
  std::string_view in;
  std::optional<int64_t> want;
};

const IntCase kInt64Cases[] = {
    {"0"sv, 0},
    {"1"sv, 1},
    {"-1"sv, -1},
    {"12345"sv, 12345},
    {"-12345"sv, -12345},
    {"1234567890"sv, 1234567890},
    // The ends of the range, and one past them.
    {"9223372036854775807"sv, INT64_MAX},
    {"-9223372036854775807"sv, -INT64_MAX},
    {"-9223372036854775808"sv, INT64_MIN},
    {"9223372036854775808"sv, std::nullopt},
    {"-9223372036854775809"sv, std::nullopt},
    // 18, 19 and 20 digits.
    {"922337203685477580"sv, 922337203685477580},
    {"-922337203685477580"sv, -922337203685477580},
    {"1000000000000000000"sv, 1000000000000000000},
    {"-1000000000000000000"sv, -1000000000000000000},
    {"9999999999999999999"sv, std::nullopt},
    {"-9999999999999999999"sv, std::nullopt},
    {"10000000000000000000"sv, std::nullopt},
    {"18446744073709551615"sv, std::nullopt},
    {"18446744073709551616"sv, std::nullopt},
    {"99999999999999999999"sv, std::nullopt},
    {"-10000000000000000000"sv, std::nullopt},
    {"123456789012345678901"sv, std::nullopt},
    // Signs, zeros and spaces.
    {""sv, std::nullopt},
    {"-"sv, std::nullopt},
    {"+"sv, std::nullopt},
    {"--1"sv, std::nullopt},
    {"1-"sv, std::nullopt},
    {"+1"sv, std::nullopt},
    {"-0"sv, std::nullopt},
    {"00"sv, std::nullopt},
    {"01"sv, std::nullopt},
    {"-01"sv, std::nullopt},
    {"00000000000000000001"sv, std::nullopt},
    {" 1"sv, std::nullopt},
    {"1 "sv, std::nullopt},
    {"\t5"sv, std::nullopt},
    {"1\0"sv, std::nullopt},
    {"\0" "1"sv, std::nullopt},
    // Not decimal integers.
    {"1a"sv, std::nullopt},
    {"a1"sv, std::nullopt},
    {"0x10"sv, std::nullopt},
    {"1.0"sv, std::nullopt},
    {"1e3"sv, std::nullopt},
    {"1/"sv, std::nullopt},  // '/' and ':' border the digits in ASCII
    {"1:"sv, std::nullopt},
};

TEST(ParseInt64Test, MatchesRedisString2ll) {
  for (const IntCase& c : kInt64Cases) {
    EXPECT_EQ(ParseInt64(c.in), c.want) << "input='" << c.in << "'";
  }
}

TEST(ParseInt64Test, RefusesEveryPrefixOrSuffixByte) {
  // A digit string stays valid only with digits appended; any other byte refuses it.
  for (int b = 0; b < 256; ++b) {
    const char c = static_cast<char>(b);
    const bool digit = c >= '0' && c <= '9';
    EXPECT_EQ(ParseInt64(std::string("12") + c).has_value(), digit) << b;
    EXPECT_EQ(ParseInt64(std::string(1, c) + "12").has_value(), (digit && c != '0') || c == '-')
        << b;
  }
}

TEST(ParseInt64Test, RandomRoundTrip) {
  std::mt19937_64 rng(99);
  for (int i = 0; i < 100000; ++i) {
    const int64_t v = static_cast<int64_t>(rng()) >> (rng() % 64);
    const std::string s = std::to_string(v);
    ASSERT_EQ(ParseInt64(s), v) << s;
  }
}

TEST(ParseInt64Test, ReadsOnlyItsView) {
  // The RESP parser hands over views into a larger buffer: the bytes after the view are not read.
  const std::string buf = "$123\r\n";
  EXPECT_EQ(ParseInt64(std::string_view(buf).substr(1, 3)), 123);
  EXPECT_EQ(ParseInt64(std::string_view(buf).substr(1, 0)), std::nullopt);
}

struct UintCase {
  std::string_view in;
  std::optional<uint64_t> want;
};

const UintCase kUint64Cases[] = {
    {"0"sv, 0u},
    {"1"sv, 1u},
    {"007"sv, 7u},
    {"00"sv, 0u},
    {"9223372036854775808"sv, 9223372036854775808u},
    {"18446744073709551615"sv, UINT64_MAX},
    {"000018446744073709551615"sv, UINT64_MAX},
    {"18446744073709551616"sv, std::nullopt},
    {"99999999999999999999"sv, std::nullopt},
    {"100000000000000000000"sv, std::nullopt},
    {"10000000000000000000"sv, 10000000000000000000u},
    {""sv, std::nullopt},
    {"-1"sv, std::nullopt},
    {"-0"sv, std::nullopt},
    {"+1"sv, std::nullopt},
    {" 1"sv, std::nullopt},
    {"1 "sv, std::nullopt},
    {"1a"sv, std::nullopt},
    {"1844674407370955161a"sv, std::nullopt},
    {"1844674407370955161/"sv, std::nullopt},
};

TEST(ParseUint64Test, CursorRules) {
  for (const UintCase& c : kUint64Cases) {
    EXPECT_EQ(ParseUint64(c.in), c.want) << "input='" << c.in << "'";
  }
}

TEST(ParseUint64Test, RandomRoundTrip) {
  std::mt19937_64 rng(7);
  for (int i = 0; i < 100000; ++i) {
    const uint64_t v = rng() >> (rng() % 64);
    const std::string s = std::to_string(v);
    ASSERT_EQ(ParseUint64(s), v) << s;
  }
}

}  // namespace
}  // namespace dashkv
