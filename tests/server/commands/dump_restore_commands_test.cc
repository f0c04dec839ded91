// DUMP and RESTORE against a real 2-shard server: payloads of every type move between keys of
// both shards, and RESTORE's checks answer Redis 7.0.15's errors (taken from redis-server by
// hand, not from dashkv's output).

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/testing/test_server.h"

namespace dashkv {
namespace {

using testing::RespValue;
using testing::TestServer;

class DumpRestoreCommandsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    c_ = srv_.Connect();
    ASSERT_TRUE(c_->connected());
  }
  RespValue Run(std::initializer_list<std::string_view> args) { return c_->Run(args); }

  // Returns a key named prefix<i> owned by shard `sid`.
  std::string KeyOnShard(unsigned sid, const std::string& prefix) {
    for (int i = 0;; ++i) {
      std::string k = prefix + std::to_string(i);
      if (srv_.server().shard_set().ShardOf(k) == sid) return k;
    }
  }

  // Returns DUMP's payload for key. REQUIRES: the key exists.
  std::string Dump(std::string_view key) {
    RespValue v = Run({"DUMP", key});
    EXPECT_EQ(v.type, RespValue::Type::kBulk) << v;
    return v.str;
  }

  TestServer srv_{2};
  std::unique_ptr<testing::RespClient> c_;
};

TEST_F(DumpRestoreCommandsTest, EveryTypeMovesBetweenShards) {
  std::string a = KeyOnShard(0, "src");
  Run({"DEL", a});
  struct Case {
    std::vector<std::string_view> create;
    std::vector<std::string_view> read;
  };
  std::vector<Case> cases = {
      {{"SET", "$", "hello"}, {"GET", "$"}},
      {{"SET", "$", "-123"}, {"GET", "$"}},
      {{"RPUSH", "$", "a", "1", "b"}, {"LRANGE", "$", "0", "-1"}},
      {{"HSET", "$", "f", "v", "g", "2"}, {"HGETALL", "$"}},
      {{"SADD", "$", "3", "1", "2"}, {"SMEMBERS", "$"}},
      {{"ZADD", "$", "1.5", "a", "-2", "b"}, {"ZRANGE", "$", "0", "-1", "WITHSCORES"}},
  };
  for (unsigned dst_shard : {0u, 1u}) {
    for (const Case& c : cases) {
      std::string src = KeyOnShard(0, "src");
      std::string dst = KeyOnShard(dst_shard, "dst");
      Run({"DEL", src, dst});
      std::vector<std::string> create(c.create.begin(), c.create.end());
      create[1] = src;
      c_->Run(create);
      RespValue restored = Run({"RESTORE", dst, "0", Dump(src)});
      EXPECT_EQ(restored, "OK") << restored;
      std::vector<std::string> read_src(c.read.begin(), c.read.end());
      std::vector<std::string> read_dst = read_src;
      read_src[1] = src;
      read_dst[1] = dst;
      RespValue want = c_->Run(read_src);
      RespValue got = c_->Run(read_dst);
      EXPECT_EQ(got.str, want.str);
      EXPECT_EQ(got.strings(), want.strings());
      EXPECT_EQ(Run({"OBJECT", "ENCODING", dst}).str, Run({"OBJECT", "ENCODING", src}).str);
    }
  }
}

TEST_F(DumpRestoreCommandsTest, Errors) {
  Run({"SET", "k", "v"});
  std::string payload = Dump("k");
  EXPECT_EQ(Run({"RESTORE", "k", "0", payload}).str, "BUSYKEY Target key name already exists.");
  EXPECT_EQ(Run({"RESTORE", "n", "-5", payload}).str, "ERR Invalid TTL value, must be >= 0");
  EXPECT_EQ(Run({"RESTORE", "n", "x", payload}).str,
            "ERR value is not an integer or out of range");
  EXPECT_EQ(Run({"RESTORE", "n", "0", payload, "IDLETIME", "-1"}).str,
            "ERR Invalid IDLETIME value, must be >= 0");
  EXPECT_EQ(Run({"RESTORE", "n", "0", payload, "FREQ", "-1"}).str,
            "ERR Invalid FREQ value, must be >= 0 and <= 255");
  EXPECT_EQ(Run({"RESTORE", "n", "0", payload, "FREQ", "1", "IDLETIME", "1"}).str,
            "ERR syntax error");
  std::string bad = payload;
  bad[1] ^= 1;
  EXPECT_EQ(Run({"RESTORE", "n", "0", bad}).str,
            "ERR DUMP payload version or checksum are wrong");
  EXPECT_EQ(Run({"EXISTS", "n"}), 0);
  EXPECT_TRUE(Run({"DUMP", "nosuch"}).is_null());
}

TEST_F(DumpRestoreCommandsTest, TtlAndReplace) {
  Run({"SET", "k", "v"});
  std::string payload = Dump("k");
  EXPECT_EQ(Run({"RESTORE", "k", "100000", payload, "REPLACE"}), "OK");
  RespValue pttl = Run({"PTTL", "k"});
  EXPECT_GT(pttl.num, 90000);
  EXPECT_LE(pttl.num, 100000);
  EXPECT_EQ(Run({"RESTORE", "k", "1", payload, "REPLACE", "ABSTTL"}), "OK");
  EXPECT_EQ(Run({"EXISTS", "k"}), 0);
}

TEST_F(DumpRestoreCommandsTest, InsideMulti) {
  Run({"SET", "k", "v"});
  std::string payload = Dump("k");
  EXPECT_EQ(Run({"MULTI"}), "OK");
  EXPECT_EQ(Run({"RESTORE", "m", "0", payload}), "QUEUED");
  EXPECT_EQ(Run({"DUMP", "m"}), "QUEUED");
  RespValue exec = Run({"EXEC"});
  ASSERT_EQ(exec.elems.size(), 2u);
  EXPECT_EQ(exec.elems[0], "OK");
  EXPECT_EQ(exec.elems[1].str, payload);
}

}  // namespace
}  // namespace dashkv
