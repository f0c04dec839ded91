// Sorted-set command tests against a real 2-shard server: encodings, ZADD flags, ranges, the
// algebra on one shard and across shards, and a differential test of ranks and ranges against a
// std::set model on the full ("skiplist") encoding. Error texts checked against redis-server 7.0.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>
#include <set>
#include <string>
#include <vector>

#include "server/server.h"
#include "server/storage/shard_set.h"
#include "tests/testing/test_server.h"

namespace dashkv {
namespace {

using ::testing::ElementsAre;
using testing::RespValue;
using testing::TestServer;

class ZsetCommandsTest : public ::testing::Test {
 protected:
  void SetUp() override { c_ = srv_.Connect(); }
  RespValue Run(std::initializer_list<std::string_view> args) { return c_->Run(args); }
  RespValue Run(const std::vector<std::string>& args) { return c_->Run(args); }
  std::pair<std::string, std::string> KeysOnTwoShards() {
    ShardSet& ss = srv_.server().shard_set();
    for (int i = 0;; ++i) {
      std::string b = "zb" + std::to_string(i);
      if (ss.ShardOf("za") != ss.ShardOf(b)) return {"za", b};
    }
  }

  TestServer srv_{2};
  std::unique_ptr<testing::RespClient> c_;
};

TEST_F(ZsetCommandsTest, ZAddFlagsAndErrors) {
  EXPECT_EQ(Run({"ZADD", "z", "1", "a", "2", "b"}), 2);
  EXPECT_EQ(Run({"ZADD", "z", "CH", "5", "a", "3", "c"}), 2);
  EXPECT_EQ(Run({"ZADD", "z", "XX", "9", "nope"}), 0);
  EXPECT_EQ(Run({"ZADD", "z", "NX", "9", "a"}), 0);
  EXPECT_EQ(Run({"ZSCORE", "z", "a"}), "5");
  EXPECT_EQ(Run({"ZADD", "z", "GT", "CH", "4", "a"}), 0);
  EXPECT_EQ(Run({"ZADD", "z", "LT", "CH", "4", "a"}), 1);
  EXPECT_EQ(Run({"ZADD", "z", "INCR", "1.5", "a"}), "5.5");
  EXPECT_TRUE(Run({"ZADD", "z", "NX", "INCR", "1", "a"}).is_null());
  EXPECT_TRUE(Run({"ZADD", "missing", "XX", "INCR", "1", "a"}).is_null());
  EXPECT_EQ(Run({"EXISTS", "missing"}), 0);
  EXPECT_EQ(Run({"ZINCRBY", "z", "0.1", "b"}), "2.1");  // shortest round-trip form
  EXPECT_EQ(Run({"ZADD", "z", "NX", "XX", "1", "a"}).str,
            "ERR XX and NX options at the same time are not compatible");
  EXPECT_EQ(Run({"ZADD", "z", "NX", "GT", "1", "a"}).str,
            "ERR GT, LT, and/or NX options at the same time are not compatible");
  EXPECT_EQ(Run({"ZADD", "z", "INCR", "1", "a", "2", "b"}).str,
            "ERR INCR option supports a single increment-element pair");
  EXPECT_EQ(Run({"ZADD", "z", "nan", "a"}).str, "ERR value is not a valid float");
  EXPECT_EQ(Run({"ZADD", "z", "1", "a", "2"}).str, "ERR syntax error");
  EXPECT_EQ(Run({"ZADD", "inf", "+inf", "a"}), 1);
  EXPECT_EQ(Run({"ZINCRBY", "inf", "-inf", "a"}).str, "ERR resulting score is not a number (NaN)");
  EXPECT_EQ(Run({"ZRANGEBYSCORE", "z", "x", "1"}).str, "ERR min or max is not a float");
  EXPECT_EQ(Run({"ZRANGEBYLEX", "z", "a", "b"}).str,
            "ERR min or max not valid string range item");
  EXPECT_EQ(Run({"ZRANGE", "z", "0", "1", "LIMIT", "0", "1"}).str,
            "ERR syntax error, LIMIT is only supported in combination with either BYSCORE or "
            "BYLEX");
  EXPECT_EQ(Run({"ZUNION", "0", "z"}).str, "ERR at least 1 input key is needed for 'zunion' command");
  EXPECT_EQ(Run({"ZUNION", "1", "z", "WEIGHTS", "x"}).str, "ERR weight value is not a float");
  EXPECT_EQ(Run({"ZMPOP", "1", "z", "MIN", "COUNT", "0"}).str,
            "ERR count should be greater than 0");
  EXPECT_EQ(Run({"TYPE", "z"}), "zset");
}

TEST_F(ZsetCommandsTest, RangesAndRanks) {
  EXPECT_EQ(Run({"ZADD", "z", "1", "a", "2", "b", "3", "c", "4", "d"}), 4);
  EXPECT_THAT(Run({"ZRANGE", "z", "1", "2"}).strings(), ElementsAre("b", "c"));
  EXPECT_THAT(Run({"ZRANGE", "z", "0", "-1", "REV"}).strings(), ElementsAre("d", "c", "b", "a"));
  EXPECT_THAT(Run({"ZRANGE", "z", "(4", "2", "BYSCORE", "REV"}).strings(), ElementsAre("c", "b"));
  EXPECT_THAT(Run({"ZRANGEBYSCORE", "z", "-inf", "+inf", "LIMIT", "1", "2"}).strings(),
              ElementsAre("b", "c"));
  EXPECT_THAT(Run({"ZREVRANGEBYSCORE", "z", "+inf", "-inf", "LIMIT", "1", "2"}).strings(),
              ElementsAre("c", "b"));
  EXPECT_THAT(Run({"ZRANGEBYSCORE", "z", "2", "3", "WITHSCORES"}).strings(),
              ElementsAre("b", "2", "c", "3"));
  EXPECT_THAT(Run({"ZREVRANGE", "z", "0", "0", "WITHSCORES"}).strings(), ElementsAre("d", "4"));
  EXPECT_EQ(Run({"ZRANK", "z", "c"}), 2);
  EXPECT_EQ(Run({"ZREVRANK", "z", "c"}), 1);
  EXPECT_TRUE(Run({"ZRANK", "z", "zz"}).is_null());
  EXPECT_EQ(Run({"ZCOUNT", "z", "(1", "3"}), 2);
  EXPECT_EQ(Run({"ZADD", "lex", "0", "a", "0", "b", "0", "c"}), 3);
  EXPECT_THAT(Run({"ZRANGEBYLEX", "lex", "(a", "+"}).strings(), ElementsAre("b", "c"));
  EXPECT_THAT(Run({"ZREVRANGEBYLEX", "lex", "+", "-", "LIMIT", "0", "1"}).strings(),
              ElementsAre("c"));
  EXPECT_EQ(Run({"ZLEXCOUNT", "lex", "[b", "+"}), 2);
  EXPECT_EQ(Run({"ZREMRANGEBYLEX", "lex", "-", "[a"}), 1);
  EXPECT_EQ(Run({"ZREMRANGEBYRANK", "z", "0", "0"}), 1);
  EXPECT_EQ(Run({"ZREMRANGEBYSCORE", "z", "-inf", "(3"}), 1);
  EXPECT_THAT(Run({"ZPOPMIN", "z"}).strings(), ElementsAre("c", "3"));
  EXPECT_THAT(Run({"ZPOPMAX", "z", "5"}).strings(), ElementsAre("d", "4"));
  EXPECT_EQ(Run({"EXISTS", "z"}), 0);
}

TEST_F(ZsetCommandsTest, EncodingsAndDifferentialOnSkiplist) {
  EXPECT_EQ(Run({"ZADD", "small", "1", "a"}), 1);
  EXPECT_EQ(Run({"OBJECT", "ENCODING", "small"}), "listpack");
  EXPECT_EQ(Run({"ZADD", "small", "2", std::string(65, 'x')}), 1);
  EXPECT_EQ(Run({"OBJECT", "ENCODING", "small"}), "skiplist");
  std::set<std::pair<double, std::string>> model;
  std::mt19937_64 gen(3);
  for (int i = 0; i < 3000; ++i) {
    std::string m = "m" + std::to_string(gen() % 1000);
    double s = static_cast<double>(gen() % 50);
    for (auto it = model.begin(); it != model.end(); ++it) {
      if (it->second == m) {
        model.erase(it);
        break;
      }
    }
    model.emplace(s, m);
    ASSERT_FALSE(Run({"ZADD", "big", std::to_string(static_cast<int>(s)), m}).is_error());
  }
  EXPECT_EQ(Run({"OBJECT", "ENCODING", "big"}), "skiplist");
  EXPECT_EQ(Run({"ZCARD", "big"}), static_cast<int64_t>(model.size()));
  std::vector<std::string> expect;
  for (const auto& [s, m] : model) expect.push_back(m);
  EXPECT_EQ(Run({"ZRANGE", "big", "0", "-1"}).strings(), expect);
  int64_t rank = 0;
  for (const auto& [s, m] : model) {
    if (rank % 37 == 0) {
      EXPECT_EQ(Run({"ZRANK", "big", m}), rank) << m;
    }
    ++rank;
  }
  int64_t in_range = 0;
  for (const auto& [s, m] : model) in_range += s > 10 && s <= 20;
  EXPECT_EQ(Run({"ZCOUNT", "big", "(10", "20"}), in_range);
  EXPECT_EQ(Run({"ZRANGESTORE", "copy", "big", "0", "9"}), 10);
  EXPECT_EQ(Run({"OBJECT", "ENCODING", "copy"}), "listpack");
}

TEST_F(ZsetCommandsTest, AlgebraSingleAndCrossShard) {
  auto [a, b] = KeysOnTwoShards();
  for (const std::string& prefix : {std::string("{t}"), std::string()}) {
    std::string x = prefix + a, y = prefix + b, d = prefix + "dst";
    EXPECT_EQ(Run({"ZADD", x, "1", "a", "2", "b", "3", "c"}), 3);
    EXPECT_EQ(Run({"SADD", y, "b", "c", "d"}), 3);  // sets count as score 1
    EXPECT_THAT(Run({"ZUNION", "2", x, y, "WITHSCORES"}).strings(),
                ElementsAre("a", "1", "d", "1", "b", "3", "c", "4"));
    EXPECT_THAT(Run({"ZINTER", "2", x, y, "WEIGHTS", "2", "10", "AGGREGATE", "MAX"}).strings(),
                ElementsAre("b", "c"));
    EXPECT_THAT(Run({"ZDIFF", "2", x, y}).strings(), ElementsAre("a"));
    EXPECT_EQ(Run({"ZINTERCARD", "2", x, y}), 2);
    EXPECT_EQ(Run({"ZUNIONSTORE", d, "2", x, y, "AGGREGATE", "MIN"}), 4);
    EXPECT_THAT(Run({"ZRANGE", d, "0", "-1", "WITHSCORES"}).strings(),
                ElementsAre("a", "1", "b", "1", "c", "1", "d", "1"));
    EXPECT_EQ(Run({"ZINTERSTORE", d, "2", x, "nokey"}), 0);
    EXPECT_EQ(Run({"EXISTS", d}), 0);
    EXPECT_EQ(Run({"ZRANGESTORE", d, x, "1", "2"}), 2);
    EXPECT_THAT(Run({"ZMPOP", "2", "nokey", x, "MAX", "COUNT", "2"}).elems[0], x);
    EXPECT_EQ(Run({"ZCARD", x}), 1);
    EXPECT_EQ(Run({"SET", d, "s"}), "OK");
    EXPECT_EQ(Run({"ZUNION", "2", x, d}).str,
              "WRONGTYPE Operation against a key holding the wrong kind of value");
    EXPECT_EQ(Run({"DEL", x, y, d}), 3);
  }
}

constexpr std::string_view kReplyTooLarge =
    "ERR value is out of range, the reply would exceed proto-max-bulk-len";

TEST_F(ZsetCommandsTest, RandMemberHugeCounts) {
  EXPECT_EQ(Run({"ZADD", "z", "0", "a"}), 1);
  EXPECT_EQ(Run({"ZRANDMEMBER", "z", "-9223372036854770000", "WITHSCORES"}).str,
            "ERR value is out of range");
  EXPECT_EQ(Run({"ZRANDMEMBER", "z", "-9223372036854770000"}).str, kReplyTooLarge);
  EXPECT_EQ(Run({"ZRANDMEMBER", "z", "-4611686018427387903", "WITHSCORES"}).str, kReplyTooLarge);
  EXPECT_EQ(Run({"ZRANDMEMBER", "z", "-1000", "WITHSCORES"}).elems.size(), 2000u);
  EXPECT_EQ(Run({"ZMPOP", "1", "z", "MIN", "COUNT", "a"}).str,
            "ERR count should be greater than 0");
  EXPECT_EQ(Run({"ZMPOP", "1", "z", "MIN", "COUNT", "9223372036854775807"}).elems.size(), 2u);
}

}  // namespace
}  // namespace dashkv
