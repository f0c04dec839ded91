// Hash tests: HashValue encodings and the one-way conversion, and the hash commands against a
// real 2-shard server (expected replies checked against redis-server 7.0.15).

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "server/values/hash_value.h"
#include "tests/testing/test_server.h"

namespace dashkv {
namespace {

using testing::RespValue;
using testing::TestServer;

std::map<std::string, std::string> Contents(const HashValue& h) {
  std::map<std::string, std::string> out;
  h.ForEach([&](std::string_view f, std::string_view v) { out.emplace(f, v); });
  return out;
}

TEST(HashValueTest, ConvertsByEntriesOneWay) {
  HashValue::Limits limits{4, 64};
  HashValue h;
  for (int i = 0; i < 4; ++i) EXPECT_TRUE(h.Set("f" + std::to_string(i), "v", limits));
  EXPECT_EQ(h.encoding(), HashValue::kListpack);
  EXPECT_FALSE(h.Set("f0", "new", limits));  // update: no growth
  EXPECT_EQ(h.encoding(), HashValue::kListpack);
  EXPECT_TRUE(h.Set("f4", "v", limits));
  EXPECT_EQ(h.encoding(), HashValue::kHashtable);
  EXPECT_EQ(h.EncodingName(), "hashtable");
  for (int i = 0; i < 5; ++i) h.Delete("f" + std::to_string(i));
  EXPECT_TRUE(h.empty());
  EXPECT_EQ(h.encoding(), HashValue::kHashtable);
}

TEST(HashValueTest, ConvertsByValueLength) {
  HashValue::Limits limits{128, 8};
  HashValue h;
  h.Set("a", "12345678", limits);
  EXPECT_EQ(h.encoding(), HashValue::kListpack);
  h.Set("b", "123456789", limits);
  EXPECT_EQ(h.encoding(), HashValue::kHashtable);
  EXPECT_EQ(Contents(h), (std::map<std::string, std::string>{{"a", "12345678"},
                                                              {"b", "123456789"}}));
}

// Both encodings behave the same under random operations.
TEST(HashValueTest, RandomDifferential) {
  std::mt19937_64 rng(3);
  HashValue::Limits limits{64, 20};
  HashValue h;
  std::map<std::string, std::string> ref;
  for (int step = 0; step < 20000; ++step) {
    std::string f = std::to_string(rng() % (step < 10000 ? 60 : 300));
    std::string v = std::to_string(rng() % 1000) + std::string(rng() % 12, 'x');
    switch (rng() % 4) {
      case 0:
      case 1:
        ASSERT_EQ(h.Set(f, v, limits), ref.count(f) == 0);
        ref[f] = v;
        break;
      case 2:
        ASSERT_EQ(h.Set(f, v, limits, HashValue::SetMode::kIfMissing), ref.emplace(f, v).second);
        break;
      default:
        ASSERT_EQ(h.Delete(f), ref.erase(f) == 1);
    }
    std::string scratch;
    auto got = h.Get(f, &scratch);
    ASSERT_EQ(got.has_value(), ref.count(f) == 1);
    if (got) {
      ASSERT_EQ(*got, ref[f]);
    }
    ASSERT_EQ(h.size(), ref.size());
  }
  EXPECT_EQ(h.encoding(), HashValue::kHashtable);
  EXPECT_EQ(Contents(h), ref);
  ASSERT_GT(ref.size(), 10u);
  auto sample = h.RandomDistinct(10);
  EXPECT_EQ(sample.size(), 10u);
  std::map<std::string, std::string> distinct(sample.begin(), sample.end());
  EXPECT_EQ(distinct.size(), 10u);
  for (const auto& [f, v] : sample) EXPECT_EQ(ref.at(f), v);
  uint64_t draws = 0;
  h.ForEachRandom(1000, [&](std::string_view f, std::string_view v) {
    EXPECT_EQ(ref.at(std::string(f)), v);
    return ++draws < 500;  // stops when asked
  });
  EXPECT_EQ(draws, 500u);
}

class HashCommandsTest : public ::testing::Test {
 protected:
  void SetUp() override { c_ = srv_.Connect(); }
  RespValue Run(std::initializer_list<std::string_view> args) { return c_->Run(args); }
  RespValue Run(const std::vector<std::string>& args) { return c_->Run(args); }

  TestServer srv_{2};
  std::unique_ptr<testing::RespClient> c_;
};

TEST_F(HashCommandsTest, Basics) {
  EXPECT_EQ(Run({"HSET", "h", "a", "1", "b", "2"}), 2);
  EXPECT_EQ(Run({"HGET", "h", "a"}), "1");
  EXPECT_TRUE(Run({"HGET", "h", "zz"}).is_null());
  EXPECT_EQ(Run({"HINCRBY", "h", "a", "41"}), 42);
  EXPECT_EQ(Run({"HINCRBYFLOAT", "h", "b", "0.5"}), "2.5");
  EXPECT_EQ(Run({"OBJECT", "ENCODING", "h"}), "listpack");
  EXPECT_EQ(Run({"TYPE", "h"}), "hash");
  EXPECT_EQ(Run({"HDEL", "h", "a", "b"}), 2);
  EXPECT_EQ(Run({"EXISTS", "h"}), 0);
  EXPECT_EQ(Run({"HSET", "h", "a"}).str, "ERR wrong number of arguments for 'hset' command");
}

// HGET/HSET cost does not depend on the hash's size (hashtable encoding, no listpack scans).
TEST_F(HashCommandsTest, LargeHashStaysFast) {
  for (int i = 0; i < 10000; i += 500) {
    std::vector<std::string> cmd{"HSET", "big"};
    for (int j = i; j < i + 500; ++j) {
      cmd.push_back("field:" + std::to_string(j));
      cmd.push_back("value:" + std::to_string(j));
    }
    ASSERT_EQ(Run(cmd), 500);
  }
  EXPECT_EQ(Run({"OBJECT", "ENCODING", "big"}), "hashtable");
  EXPECT_EQ(Run({"HLEN", "big"}), 10000);
  EXPECT_EQ(Run({"HGET", "big", "field:9999"}), "value:9999");
  RespValue scan = Run({"HSCAN", "big", "0", "COUNT", "100"});
  ASSERT_EQ(scan.elems.size(), 2u);
  EXPECT_GE(scan.elems[1].elems.size(), 200u);
}

constexpr std::string_view kReplyTooLarge =
    "ERR value is out of range, the reply would exceed proto-max-bulk-len";

// Huge counts never size an allocation: Redis's limits for the WITHVALUES form, dashkv's reply
// bound (proto-max-bulk-len) for draws with repetition.
TEST_F(HashCommandsTest, RandFieldHugeCounts) {
  EXPECT_EQ(Run({"HSET", "h", "f1", "v1", "f2", "v2"}), 2);
  EXPECT_EQ(Run({"HRANDFIELD", "h", "-9223372036854775807"}).str, kReplyTooLarge);
  EXPECT_EQ(Run({"HRANDFIELD", "h", "-100000000000000000"}).str, kReplyTooLarge);
  EXPECT_EQ(Run({"HRANDFIELD", "h", "-4611686018427387903", "WITHVALUES"}).str, kReplyTooLarge);
  EXPECT_EQ(Run({"HRANDFIELD", "h", "-9223372036854775807", "WITHVALUES"}).str,
            "ERR value is out of range");
  EXPECT_EQ(Run({"HRANDFIELD", "h", "9223372036854775807"}).elems.size(), 2u);
  EXPECT_EQ(Run({"HRANDFIELD", "h", "-1000", "WITHVALUES"}).elems.size(), 2000u);
  EXPECT_EQ(Run({"HLEN", "h"}), 2);
}

}  // namespace
}  // namespace dashkv
