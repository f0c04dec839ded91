// LCS through a real 2-shard server, with its two keys on one shard and on two. Expected replies
// are those of redis-server 7.0.15 for the same commands.

#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "tests/testing/test_server.h"

namespace dashkv {
namespace {

using testing::RespValue;
using testing::TestServer;

std::string Show(const RespValue& v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

class LcsCommandTest : public ::testing::Test {
 protected:
  // Returns a key name starting with `prefix` owned by shard `sid`.
  std::string KeyOn(unsigned sid, const std::string& prefix) {
    const ShardSet& ss = srv_.server().shard_set();
    for (int i = 0;; ++i) {
      std::string k = prefix + std::to_string(i);
      if (ss.ShardOf(k) == sid) return k;
    }
  }

  TestServer srv_{2};
};

TEST_F(LcsCommandTest, SameRepliesWithKeysOnOneShardAndOnTwo) {
  auto c = srv_.Connect();
  for (unsigned other : {0u, 1u}) {
    const std::string a = KeyOn(0, "a"), b = KeyOn(other, "b");
    ASSERT_EQ(c->Run({"SET", a, "ohmytext"}), "OK");
    ASSERT_EQ(c->Run({"SET", b, "mynewtext"}), "OK");
    EXPECT_EQ(c->Run({"LCS", a, b}), "mytext");
    EXPECT_EQ(c->Run({"LCS", a, b, "LEN"}), 6);
    EXPECT_EQ(Show(c->Run({"LCS", a, b, "IDX", "MINMATCHLEN", "3", "WITHMATCHLEN"})),
              "[\"matches\", [[[:4, :7], [:5, :8], :4]], \"len\", :6]");
    ASSERT_EQ(c->Run({"RPUSH", b, "x"}).is_error(), true) << "b holds a string";
    ASSERT_EQ(c->Run({"DEL", b}), 1);
    ASSERT_EQ(c->Run({"RPUSH", b, "x"}), 1);
    EXPECT_EQ(c->Run({"LCS", a, b}).str, "ERR The specified keys must contain string values");
    EXPECT_EQ(c->Run({"LCS", a, KeyOn(other, "missing")}), "");
    ASSERT_EQ(c->Run({"DEL", a, b}), 2);
  }
}

}  // namespace
}  // namespace dashkv
