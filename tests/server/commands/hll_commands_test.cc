// HyperLogLog command tests against a real 4-shard server: the cross-shard paths of PFCOUNT and
// PFMERGE against the same keys on one shard ("{t}" keys), and their errors in argument order.
// Expected bytes and counts were taken from redis-server 7.0.15, not from dashkv's output.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "server/storage/shard_set.h"
#include "tests/testing/test_server.h"

namespace dashkv {
namespace {

using testing::RespValue;
using testing::TestServer;

constexpr char kNotHll[] = "WRONGTYPE Key is not a valid HyperLogLog string value.";
constexpr char kCorrupt[] = "INVALIDOBJ Corrupted HLL object detected";

std::string Err(const RespValue& v) { return v.is_error() ? v.str : "<not an error>"; }

class HllCommandsTest : public ::testing::Test {
 protected:
  void SetUp() override { c_ = srv_.Connect(); }
  RespValue Run(std::initializer_list<std::string_view> args) { return c_->Run(args); }
  RespValue RunV(const std::vector<std::string>& args) {
    std::vector<std::string_view> views(args.begin(), args.end());
    return c_->Run(views);
  }
  // Returns keys named <prefix><i> that land on at least two shards.
  std::vector<std::string> SpreadKeys(const std::string& prefix, size_t n) {
    std::vector<std::string> keys;
    for (size_t i = 0; i < n; ++i) keys.push_back(prefix + std::to_string(i));
    const ShardSet& ss = srv_.server().shard_set();
    bool spread = false;
    for (const std::string& k : keys) spread |= ss.ShardOf(k) != ss.ShardOf(keys[0]);
    EXPECT_TRUE(spread);
    return keys;
  }
  // Fills `key` with "e:<from>".."e:<from+n-1>".
  void Fill(const std::string& key, int from, int n) {
    std::vector<std::string> args{"PFADD", key};
    for (int i = from; i < from + n; ++i) args.push_back("e:" + std::to_string(i));
    ASSERT_FALSE(RunV(args).is_error());
  }

  TestServer srv_{4};
  std::unique_ptr<testing::RespClient> c_;
};

TEST_F(HllCommandsTest, AddBytesAndCachedCount) {
  EXPECT_EQ(Run({"PFADD", "h", "a", "b", "c"}), 1);
  std::string abc("HYLL\x01\0\0\0\0\0\0\0\0\0\0\x80\x60\xf3\x80\x50\xb1\x84\x4b\xfb\x80\x42\x5a",
                  27);
  EXPECT_EQ(Run({"GET", "h"}), abc);
  EXPECT_EQ(Run({"PFCOUNT", "h"}), 3);
  abc[8] = 3;
  abc[15] = 0;
  EXPECT_EQ(Run({"GET", "h"}), abc);
  EXPECT_EQ(Run({"PFADD", "h", "a"}), 0);
}

TEST_F(HllCommandsTest, CountAndMergeAcrossShards) {
  std::vector<std::string> keys = SpreadKeys("u", 12);
  std::vector<std::string> tagged;
  for (size_t i = 0; i < keys.size(); ++i) {
    Fill(keys[i], static_cast<int>(i) * 50, 100);
    tagged.push_back("{t}" + keys[i]);
    ASSERT_EQ(RunV({"SET", tagged.back(), Run({"GET", keys[i]}).str}), "OK");
  }
  std::vector<std::string> count{"PFCOUNT"};
  count.insert(count.end(), keys.begin(), keys.end());
  EXPECT_EQ(RunV(count), 650);
  std::vector<std::string> count_tagged{"PFCOUNT"};
  count_tagged.insert(count_tagged.end(), tagged.begin(), tagged.end());
  EXPECT_EQ(RunV(count_tagged), 650);

  std::vector<std::string> merge{"PFMERGE", "dest"};
  merge.insert(merge.end(), keys.begin(), keys.end());
  EXPECT_EQ(RunV(merge), "OK");
  std::vector<std::string> merge_tagged{"PFMERGE", "{t}dest"};
  merge_tagged.insert(merge_tagged.end(), tagged.begin(), tagged.end());
  EXPECT_EQ(RunV(merge_tagged), "OK");
  EXPECT_EQ(Run({"GET", "dest"}).str, Run({"GET", "{t}dest"}).str);
  EXPECT_EQ(Run({"PFCOUNT", "dest"}), 650);
  EXPECT_EQ(Run({"PFDEBUG", "ENCODING", "dest"}), "sparse");
}

TEST_F(HllCommandsTest, FirstBadKeyInArgumentOrderAcrossShards) {
  std::vector<std::string> keys = SpreadKeys("k", 8);
  for (const std::string& k : keys) Fill(k, 0, 3);
  ASSERT_EQ(RunV({"SET", keys[3], "not an hll"}), "OK");
  ASSERT_EQ(RunV({"SET", keys[6], std::string("HYLL\x01\0\0\0\0\0\0\0\0\0\0\x80\x7f", 17)}),
            "OK");
  std::vector<std::string> count{"PFCOUNT"};
  count.insert(count.end(), keys.begin(), keys.end());
  EXPECT_EQ(Err(RunV(count)), kNotHll);
  std::vector<std::string> tail{"PFCOUNT", keys[7], keys[6], keys[3]};
  EXPECT_EQ(Err(RunV(tail)), kCorrupt);
  std::vector<std::string> merge{"PFMERGE", "dest", keys[0], keys[6], keys[3]};
  EXPECT_EQ(Err(RunV(merge)), kCorrupt);
  EXPECT_EQ(Run({"EXISTS", "dest"}), 0);
}

}  // namespace
}  // namespace dashkv
