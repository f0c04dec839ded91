#include "io/reply_builder.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <limits>
#include <string>
#include <vector>

namespace dashkv::io {
namespace {

// Returns the bytes one builder call produces in the given protocol version.
template <typename Fn>
std::string Encode(RespVersion v, Fn fn) {
  ReplyBuilder rb(v);
  fn(rb);
  return rb.buffer();
}

template <typename Fn>
void ExpectBoth(Fn fn, std::string_view resp2, std::string_view resp3) {
  EXPECT_EQ(Encode(RespVersion::kResp2, fn), resp2);
  EXPECT_EQ(Encode(RespVersion::kResp3, fn), resp3);
}

template <typename Fn>
void ExpectSame(Fn fn, std::string_view both) {
  ExpectBoth(fn, both, both);
}

TEST(ReplyBuilderTest, SimpleStrings) {
  ExpectSame([](ReplyBuilder& rb) { rb.SendSimpleString("PONG"); }, "+PONG\r\n");
  ExpectSame([](ReplyBuilder& rb) { rb.SendOk(); }, "+OK\r\n");
  ExpectSame([](ReplyBuilder& rb) { rb.SendSimpleString(""); }, "+\r\n");
}

TEST(ReplyBuilderTest, Errors) {
  ExpectSame([](ReplyBuilder& rb) { rb.SendError("ERR syntax error"); }, "-ERR syntax error\r\n");
  ExpectSame([](ReplyBuilder& rb) { rb.SendError("ERR a\r\nb\nc\rd"); }, "-ERR a  b c d\r\n");
  ExpectSame([](ReplyBuilder& rb) { rb.SendError("-WRONGTYPE x"); }, "-WRONGTYPE x\r\n");
  ReplyBuilder rb;
  rb.SendError("ERR x");
  rb.SendOk();
  rb.SendError("ERR y");
  EXPECT_EQ(rb.error_count(), 2u);
  rb.Clear();
  EXPECT_TRUE(rb.empty());
  EXPECT_EQ(rb.error_count(), 2u);
}

TEST(ReplyBuilderTest, Integers) {
  const std::vector<std::pair<int64_t, std::string>> cases = {
      {0, ":0\r\n"},
      {7, ":7\r\n"},
      {10, ":10\r\n"},
      {99, ":99\r\n"},
      {100, ":100\r\n"},
      {-1, ":-1\r\n"},
      {-10, ":-10\r\n"},
      {123456789, ":123456789\r\n"},
      {1000000000000LL, ":1000000000000\r\n"},
      {std::numeric_limits<int64_t>::max(), ":9223372036854775807\r\n"},
      {std::numeric_limits<int64_t>::min(), ":-9223372036854775808\r\n"},
  };
  for (const auto& [v, wire] : cases) {
    ExpectSame([v = v](ReplyBuilder& rb) { rb.SendLong(v); }, wire);
  }
  // Every value around powers of ten, against std::to_string.
  for (int64_t p = 1; p < 1000000000000000000LL; p *= 10) {
    for (int64_t v : {p - 1, p, p + 1, -p, -p + 1}) {
      std::string expected = std::to_string(v);  // (not "a" + b + "c": g++ 12 -Wrestrict bug)
      expected.insert(expected.begin(), ':');
      expected.append("\r\n");
      EXPECT_EQ(Encode(RespVersion::kResp2, [v](ReplyBuilder& rb) { rb.SendLong(v); }), expected);
    }
  }
}

TEST(ReplyBuilderTest, BulkStrings) {
  ExpectSame([](ReplyBuilder& rb) { rb.SendBulk("hello"); }, "$5\r\nhello\r\n");
  ExpectSame([](ReplyBuilder& rb) { rb.SendBulk(""); }, "$0\r\n\r\n");
  ExpectSame([](ReplyBuilder& rb) { rb.SendBulk(std::string_view("a\r\n\0b", 5)); },
             std::string_view("$5\r\na\r\n\0b\r\n", 11));
  std::string big(12345, 'q');
  ExpectSame([&](ReplyBuilder& rb) { rb.SendBulk(big); }, "$12345\r\n" + big + "\r\n");
}

TEST(ReplyBuilderTest, Nulls) {
  ExpectBoth([](ReplyBuilder& rb) { rb.SendNull(); }, "$-1\r\n", "_\r\n");
  ExpectBoth([](ReplyBuilder& rb) { rb.SendNullArray(); }, "*-1\r\n", "_\r\n");
}

TEST(ReplyBuilderTest, Booleans) {
  ExpectBoth([](ReplyBuilder& rb) { rb.SendBool(true); }, ":1\r\n", "#t\r\n");
  ExpectBoth([](ReplyBuilder& rb) { rb.SendBool(false); }, ":0\r\n", "#f\r\n");
}

TEST(ReplyBuilderTest, Doubles) {
  ExpectBoth([](ReplyBuilder& rb) { rb.SendDouble(1.5); }, "$3\r\n1.5\r\n", ",1.5\r\n");
  ExpectBoth([](ReplyBuilder& rb) { rb.SendDouble(0.1); }, "$19\r\n0.10000000000000001\r\n",
             ",0.10000000000000001\r\n");
  ExpectBoth([](ReplyBuilder& rb) { rb.SendDouble(3); }, "$1\r\n3\r\n", ",3\r\n");
  ExpectBoth([](ReplyBuilder& rb) { rb.SendDouble(-2.5e20); }, "$8\r\n-2.5e+20\r\n",
             ",-2.5e+20\r\n");
  ExpectBoth([](ReplyBuilder& rb) { rb.SendDouble(1e17); }, "$5\r\n1e+17\r\n", ",1e+17\r\n");
  ExpectBoth([](ReplyBuilder& rb) { rb.SendDouble(123456789012345678.0); },
             "$22\r\n1.2345678901234568e+17\r\n",
             ",1.2345678901234568e+17\r\n");
  const double inf = std::numeric_limits<double>::infinity();
  ExpectBoth([&](ReplyBuilder& rb) { rb.SendDouble(inf); }, "$3\r\ninf\r\n", ",inf\r\n");
  ExpectBoth([&](ReplyBuilder& rb) { rb.SendDouble(-inf); }, "$4\r\n-inf\r\n", ",-inf\r\n");
  ExpectBoth([](ReplyBuilder& rb) { rb.SendDoubleText("10.5"); }, "$4\r\n10.5\r\n", ",10.5\r\n");
}

TEST(ReplyBuilderTest, FormatDouble) {
  EXPECT_EQ(FormatDouble(0), "0");
  EXPECT_EQ(FormatDouble(-0.0), "-0");
  EXPECT_EQ(FormatDouble(1.5), "1.5");
  EXPECT_EQ(FormatDouble(0.1), "0.10000000000000001");
  EXPECT_EQ(FormatDouble(1e300), "1.0000000000000001e+300");
  EXPECT_EQ(FormatDouble(std::numeric_limits<double>::infinity()), "inf");
  EXPECT_EQ(FormatDouble(-std::numeric_limits<double>::infinity()), "-inf");
  EXPECT_EQ(FormatDouble(std::nan("")), "nan");
  EXPECT_EQ(FormatDouble(-2.2250738585072014e-308), "-2.2250738585072014e-308");
}

// FormatDouble must print exactly what Redis 7.0's snprintf("%.17g") prints.
TEST(ReplyBuilderTest, FormatDoubleMatchesPrintf) {
  std::mt19937_64 rng(7);
  for (int i = 0; i < 200000; ++i) {
    double v;
    if (i % 2) {
      const uint64_t bits = rng();
      std::memcpy(&v, &bits, sizeof(v));
      if (std::isnan(v) || std::isinf(v)) continue;
    } else {
      v = static_cast<double>(static_cast<int64_t>(rng() % 2000001) - 1000000) / 1000.0;
    }
    char expected[64];
    std::snprintf(expected, sizeof(expected), "%.17g", v);
    ASSERT_EQ(FormatDouble(v), expected);
  }
}

TEST(ReplyBuilderTest, VerbatimAndBigNumber) {
  ExpectBoth([](ReplyBuilder& rb) { rb.SendVerbatim("hello"); }, "$5\r\nhello\r\n",
             "=9\r\ntxt:hello\r\n");
  ExpectBoth([](ReplyBuilder& rb) { rb.SendVerbatim("# x", "mkd"); }, "$3\r\n# x\r\n",
             "=7\r\nmkd:# x\r\n");
  ExpectBoth([](ReplyBuilder& rb) { rb.SendBigNumber("1234567890123456789012"); },
             "$22\r\n1234567890123456789012\r\n", "(1234567890123456789012\r\n");
}

TEST(ReplyBuilderTest, Aggregates) {
  ExpectSame([](ReplyBuilder& rb) { rb.StartArray(3); }, "*3\r\n");
  ExpectSame([](ReplyBuilder& rb) { rb.SendEmptyArray(); }, "*0\r\n");
  ExpectBoth([](ReplyBuilder& rb) { rb.StartMap(2); }, "*4\r\n", "%2\r\n");
  ExpectBoth([](ReplyBuilder& rb) { rb.StartMap(0); }, "*0\r\n", "%0\r\n");
  ExpectBoth([](ReplyBuilder& rb) { rb.StartSet(5); }, "*5\r\n", "~5\r\n");
  ExpectBoth([](ReplyBuilder& rb) { rb.StartPush(3); }, "*3\r\n", ">3\r\n");
  ExpectSame([](ReplyBuilder& rb) { rb.StartArray(1234567); }, "*1234567\r\n");
}

TEST(ReplyBuilderTest, NestedReply) {
  auto build = [](ReplyBuilder& rb) {
    rb.StartMap(2);
    rb.SendBulk("a");
    rb.SendLong(1);
    rb.SendBulk("b");
    rb.StartArray(2);
    rb.SendNull();
    rb.SendDouble(2.5);
  };
  ExpectBoth(build, "*4\r\n$1\r\na\r\n:1\r\n$1\r\nb\r\n*2\r\n$-1\r\n$3\r\n2.5\r\n",
             "%2\r\n$1\r\na\r\n:1\r\n$1\r\nb\r\n*2\r\n_\r\n,2.5\r\n");
}

TEST(ReplyBuilderTest, BulkArrayAndRaw) {
  std::vector<std::string> items = {"x", "yz"};
  ExpectSame([&](ReplyBuilder& rb) { rb.SendBulkArray(items); }, "*2\r\n$1\r\nx\r\n$2\r\nyz\r\n");
  ExpectSame([](ReplyBuilder& rb) { rb.SendRaw(":1\r\n"); }, ":1\r\n");
}

TEST(ReplyBuilderTest, VersionSwitchAndAppend) {
  ReplyBuilder rb;
  EXPECT_FALSE(rb.resp3());
  rb.SendNull();
  rb.set_version(RespVersion::kResp3);
  EXPECT_TRUE(rb.resp3());
  EXPECT_EQ(rb.version(), RespVersion::kResp3);
  rb.SendNull();
  EXPECT_EQ(rb.buffer(), "$-1\r\n_\r\n");
  EXPECT_EQ(rb.size(), 8u);
}

}  // namespace
}  // namespace dashkv::io
