// Set command tests against a real 2-shard server: encodings and their conversions, the algebra
// on one shard and across shards, and Redis 7.0's error texts (checked against redis-server).

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "server/server.h"
#include "server/storage/shard_set.h"
#include "tests/testing/test_server.h"

namespace dashkv {
namespace {

using ::testing::UnorderedElementsAre;
using testing::RespValue;
using testing::TestServer;

class SetCommandsTest : public ::testing::Test {
 protected:
  void SetUp() override { c_ = srv_.Connect(); }
  RespValue Run(std::initializer_list<std::string_view> args) { return c_->Run(args); }
  RespValue Run(const std::vector<std::string>& args) { return c_->Run(args); }
  // Returns two keys owned by different shards.
  std::pair<std::string, std::string> KeysOnTwoShards() {
    ShardSet& ss = srv_.server().shard_set();
    std::string a = "ka";
    for (int i = 0;; ++i) {
      std::string b = "kb" + std::to_string(i);
      if (ss.ShardOf(a) != ss.ShardOf(b)) return {a, b};
    }
  }

  TestServer srv_{2};
  std::unique_ptr<testing::RespClient> c_;
};

TEST_F(SetCommandsTest, BasicsAndErrors) {
  EXPECT_EQ(Run({"SADD", "s", "a", "b", "a"}), 2);
  EXPECT_EQ(Run({"SCARD", "s"}), 2);
  EXPECT_EQ(Run({"SISMEMBER", "s", "a"}), 1);
  EXPECT_EQ(Run({"SISMEMBER", "s", "z"}), 0);
  EXPECT_THAT(Run({"SMISMEMBER", "s", "a", "z"}).elems, ::testing::SizeIs(2));
  EXPECT_THAT(Run({"SMEMBERS", "s"}).strings(), UnorderedElementsAre("a", "b"));
  EXPECT_EQ(Run({"TYPE", "s"}), "set");
  EXPECT_EQ(Run({"SREM", "s", "a", "b", "c"}), 2);
  EXPECT_EQ(Run({"EXISTS", "s"}), 0);  // empty sets are deleted
  EXPECT_EQ(Run({"SET", "str", "x"}), "OK");
  EXPECT_EQ(Run({"SADD", "str", "a"}).str,
            "WRONGTYPE Operation against a key holding the wrong kind of value");
  EXPECT_EQ(Run({"SPOP", "s", "-1"}).str, "ERR value is out of range, must be positive");
  EXPECT_EQ(Run({"SINTERCARD", "0", "s"}).str, "ERR numkeys should be greater than 0");
  EXPECT_EQ(Run({"SINTERCARD", "3", "s"}).str,
            "ERR Number of keys can't be greater than number of args");
  EXPECT_EQ(Run({"SINTERCARD", "1", "s", "LIMIT", "-1"}).str, "ERR LIMIT can't be negative");
  EXPECT_EQ(Run({"SSCAN", "s", "x"}).str, "ERR invalid cursor");
  EXPECT_EQ(Run({"SSCAN", "s", "0", "COUNT", "0"}).str, "ERR syntax error");
}

TEST_F(SetCommandsTest, EncodingConversions) {
  std::vector<std::string> cmd{"SADD", "ints"};
  for (int i = 0; i < 512; ++i) cmd.push_back(std::to_string(i));
  EXPECT_EQ(Run(cmd), 512);
  EXPECT_EQ(Run({"OBJECT", "ENCODING", "ints"}), "intset");
  EXPECT_EQ(Run({"SADD", "ints", "512"}), 1);  // 513 > set-max-intset-entries
  EXPECT_EQ(Run({"OBJECT", "ENCODING", "ints"}), "hashtable");
  EXPECT_EQ(Run({"SADD", "small", "1", "2"}), 2);
  EXPECT_EQ(Run({"OBJECT", "ENCODING", "small"}), "intset");
  EXPECT_EQ(Run({"SADD", "small", "x"}), 1);
  EXPECT_EQ(Run({"OBJECT", "ENCODING", "small"}), "listpack");
  EXPECT_EQ(Run({"SADD", "small", std::string(65, 'v')}), 1);  // > set-max-listpack-value
  EXPECT_EQ(Run({"OBJECT", "ENCODING", "small"}), "hashtable");
  EXPECT_EQ(Run({"SCARD", "small"}), 4);
  EXPECT_EQ(Run({"SISMEMBER", "small", "1"}), 1);
  std::vector<std::string> many{"SADD", "strs"};
  for (int i = 0; i < 129; ++i) many.push_back("m" + std::to_string(i));
  EXPECT_EQ(Run(many), 129);
  EXPECT_EQ(Run({"OBJECT", "ENCODING", "strs"}), "hashtable");
  EXPECT_EQ(Run({"CONFIG", "SET", "set-max-intset-entries", "2"}), "OK");
  EXPECT_EQ(Run({"SADD", "i2", "1", "2", "3"}), 3);
  EXPECT_EQ(Run({"OBJECT", "ENCODING", "i2"}), "listpack");
  EXPECT_EQ(Run({"CONFIG", "SET", "set-max-intset-entries", "512"}), "OK");
}

TEST_F(SetCommandsTest, PopRandomAndScanLargeSet) {
  std::vector<std::string> cmd{"SADD", "big"};
  for (int i = 0; i < 1000; ++i) cmd.push_back("m" + std::to_string(i));
  EXPECT_EQ(Run(cmd), 1000);
  std::vector<std::string> all;
  std::string cursor = "0";
  do {
    RespValue r = Run({"SSCAN", "big", cursor, "COUNT", "50"});
    cursor = r.elems[0].str;
    for (auto& m : r.elems[1].strings()) all.push_back(m);
  } while (cursor != "0");
  std::sort(all.begin(), all.end());
  all.erase(std::unique(all.begin(), all.end()), all.end());
  EXPECT_EQ(all.size(), 1000u);
  EXPECT_EQ(Run({"SRANDMEMBER", "big", "10"}).elems.size(), 10u);
  EXPECT_EQ(Run({"SRANDMEMBER", "big", "-2000"}).elems.size(), 2000u);
  std::vector<std::string> popped = Run({"SPOP", "big", "990"}).strings();
  std::sort(popped.begin(), popped.end());
  EXPECT_EQ(std::unique(popped.begin(), popped.end()), popped.end());
  EXPECT_EQ(Run({"SCARD", "big"}), 10);
  EXPECT_EQ(Run({"SPOP", "big", "100"}).elems.size(), 10u);
  EXPECT_EQ(Run({"EXISTS", "big"}), 0);
}

TEST_F(SetCommandsTest, AlgebraSingleAndCrossShard) {
  auto [a, b] = KeysOnTwoShards();
  for (const std::string& prefix : {std::string("{t}"), std::string()}) {
    std::string x = prefix + a, y = prefix + b, d = prefix + "dst";
    EXPECT_EQ(Run({"SADD", x, "1", "2", "3", "a"}), 4);
    EXPECT_EQ(Run({"SADD", y, "2", "3", "b"}), 3);
    EXPECT_THAT(Run({"SINTER", x, y}).strings(), UnorderedElementsAre("2", "3"));
    EXPECT_THAT(Run({"SUNION", x, y}).strings(),
                UnorderedElementsAre("1", "2", "3", "a", "b"));
    EXPECT_THAT(Run({"SDIFF", x, y}).strings(), UnorderedElementsAre("1", "a"));
    EXPECT_EQ(Run({"SINTERCARD", "2", x, y}), 2);
    EXPECT_EQ(Run({"SINTERCARD", "2", x, y, "LIMIT", "1"}), 1);
    EXPECT_EQ(Run({"SINTERSTORE", d, x, y}), 2);
    EXPECT_THAT(Run({"SMEMBERS", d}).strings(), UnorderedElementsAre("2", "3"));
    EXPECT_EQ(Run({"SDIFFSTORE", d, x, y, "nokey"}), 2);
    EXPECT_EQ(Run({"SUNIONSTORE", d, x, y}), 5);
    EXPECT_EQ(Run({"SINTERSTORE", d, x, "nokey"}), 0);
    EXPECT_EQ(Run({"EXISTS", d}), 0);
    EXPECT_EQ(Run({"SMOVE", x, y, "a"}), 1);
    EXPECT_EQ(Run({"SMOVE", x, y, "a"}), 0);
    EXPECT_EQ(Run({"SISMEMBER", y, "a"}), 1);
    EXPECT_EQ(Run({"SET", d, "str"}), "OK");
    EXPECT_EQ(Run({"SMOVE", x, d, "1"}).str,
              "WRONGTYPE Operation against a key holding the wrong kind of value");
    EXPECT_EQ(Run({"SINTER", x, d}).str,
              "WRONGTYPE Operation against a key holding the wrong kind of value");
    EXPECT_EQ(Run({"SMOVE", "nokey", d, "1"}), 0);
    EXPECT_EQ(Run({"DEL", x, y, d}), 3);
  }
}

constexpr std::string_view kReplyTooLarge =
    "ERR value is out of range, the reply would exceed proto-max-bulk-len";

TEST_F(SetCommandsTest, RandMemberHugeCounts) {
  EXPECT_EQ(Run({"SADD", "s", "a", "b"}), 2);
  EXPECT_EQ(Run({"SRANDMEMBER", "s", "-9223372036854775807"}).str, kReplyTooLarge);
  EXPECT_EQ(Run({"SRANDMEMBER", "s", "-9223372036854775808"}).str,
            "ERR value is out of range, value must between -9223372036854775807 and "
            "9223372036854775807");
  EXPECT_EQ(Run({"SRANDMEMBER", "s", "9223372036854775807"}).elems.size(), 2u);
  EXPECT_EQ(Run({"SRANDMEMBER", "s", "-1000"}).elems.size(), 1000u);
  EXPECT_EQ(Run({"SPOP", "s", "9223372036854775807"}).elems.size(), 2u);
  EXPECT_EQ(Run({"EXISTS", "s"}), 0);
}

}  // namespace
}  // namespace dashkv
