// List tests: ListValue encodings and conversions, a random differential test against
// std::deque, and the list commands against a real 2-shard server (expected replies checked
// against redis-server 7.0.15).

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <deque>
#include <random>
#include <string>
#include <vector>

#include "server/cmd_context.h"
#include "server/values/list_value.h"
#include "tests/testing/test_server.h"

namespace dashkv {
namespace {

using testing::RespValue;
using testing::TestServer;

std::vector<std::string> Elements(const ListValue& l) {
  std::vector<std::string> out;
  if (l.empty()) return out;
  l.Walk(0, ListEnd::kTail, [&](const ListpackValue& v) {
    out.push_back(v.ToString());
    return true;
  });
  return out;
}

TEST(ListValueTest, GrowsToQuicklistAndShrinksBack) {
  ListValue::Options opts;  // -2: 8 KiB
  ListValue l;
  EXPECT_EQ(l.encoding(), ListValue::kListpack);
  for (int i = 0; i < 100; ++i) l.Push(std::string(50, 'a'), ListEnd::kTail, opts);
  EXPECT_EQ(l.encoding(), ListValue::kListpack);  // ~5.2 KiB
  for (int i = 0; i < 100; ++i) l.Push(std::string(50, 'b'), ListEnd::kTail, opts);
  EXPECT_EQ(l.encoding(), ListValue::kQuicklist);
  EXPECT_EQ(l.EncodingName(), "quicklist");
  EXPECT_GT(l.quicklist()->node_count(), 1u);
  while (l.size() > 10) l.Pop(ListEnd::kHead, opts);
  EXPECT_EQ(l.encoding(), ListValue::kListpack);  // one small node: back to a listpack
  EXPECT_EQ(Elements(l), std::vector<std::string>(10, std::string(50, 'b')));
}

TEST(ListValueTest, PositiveFillCountsEntries) {
  ListValue::Options opts;
  opts.fill = 4;
  ListValue l;
  for (int i = 0; i < 4; ++i) l.Push("x", ListEnd::kTail, opts);
  EXPECT_EQ(l.encoding(), ListValue::kListpack);
  l.Push("x", ListEnd::kTail, opts);
  EXPECT_EQ(l.encoding(), ListValue::kQuicklist);
  EXPECT_EQ(l.quicklist()->node_count(), 2u);
}

// Random operations on both encodings (small fills force many conversions) against a deque.
TEST(ListValueTest, RandomDifferential) {
  std::mt19937_64 rng(7);
  for (int fill : {-1, 3, 16}) {
    ListValue::Options opts;
    opts.fill = fill;
    opts.compress_depth = fill == 3 ? 1 : 0;
    ListValue l;
    std::deque<std::string> ref;
    for (int step = 0; step < 20000; ++step) {
      std::string v = rng() % 3 == 0 ? std::to_string(rng() % 100) : std::string(rng() % 300, 'v');
      long n = static_cast<long>(ref.size());
      switch (rng() % 8) {
        case 0:
        case 1:
          l.Push(v, ListEnd::kTail, opts);
          ref.push_back(v);
          break;
        case 2:
          l.Push(v, ListEnd::kHead, opts);
          ref.push_front(v);
          break;
        case 3: {
          bool head = rng() % 2 == 0;
          auto got = l.Pop(head ? ListEnd::kHead : ListEnd::kTail, opts);
          ASSERT_EQ(got.has_value(), !ref.empty());
          if (got) {
            ASSERT_EQ(*got, head ? ref.front() : ref.back());
            head ? ref.pop_front() : ref.pop_back();
          }
          break;
        }
        case 4:
          if (n > 0) {
            long i = static_cast<long>(rng() % n);
            ASSERT_TRUE(l.Set(i, v, opts));
            ref[i] = v;
          }
          break;
        case 5:
          if (n > 0) {
            long i = static_cast<long>(rng() % n);
            std::string pivot = ref[i];
            auto it = std::find(ref.begin(), ref.end(), pivot);
            ASSERT_TRUE(l.Insert(pivot, v, Where::kAfter, opts));
            ref.insert(it + 1, v);
          }
          break;
        case 6: {
          std::string target = std::to_string(rng() % 100);
          size_t removed = l.Remove(target, 0, opts);
          size_t before = ref.size();
          ref.erase(std::remove(ref.begin(), ref.end(), target), ref.end());
          ASSERT_EQ(removed, before - ref.size());
          break;
        }
        default:
          if (n > 0 && rng() % 20 == 0) {
            l.Trim(1, -2, opts);
            ref.pop_front();
            if (!ref.empty()) ref.pop_back();
          }
      }
      ASSERT_EQ(l.size(), ref.size());
      if (l.quicklist()) {
        ASSERT_TRUE(l.quicklist()->CheckInvariants());
      }
      if (step % 997 == 0) {
        ASSERT_EQ(Elements(l), std::vector<std::string>(ref.begin(), ref.end()));
      }
    }
    ASSERT_EQ(Elements(l), std::vector<std::string>(ref.begin(), ref.end()));
  }
}

class ListCommandsTest : public ::testing::Test {
 protected:
  void SetUp() override { c_ = srv_.Connect(); }
  RespValue Run(std::initializer_list<std::string_view> args) { return c_->Run(args); }
  RespValue Run(const std::vector<std::string>& args) { return c_->Run(args); }

  TestServer srv_{2};
  std::unique_ptr<testing::RespClient> c_;
};

TEST_F(ListCommandsTest, PushPopRange) {
  EXPECT_EQ(Run({"RPUSH", "l", "a", "b", "c"}), 3);
  EXPECT_EQ(Run({"LPUSH", "l", "z"}), 4);
  EXPECT_THAT(Run({"LRANGE", "l", "0", "-1"}).strings(),
              ::testing::ElementsAre("z", "a", "b", "c"));
  EXPECT_EQ(Run({"LPOP", "l"}), "z");
  EXPECT_THAT(Run({"RPOP", "l", "5"}).strings(), ::testing::ElementsAre("c", "b", "a"));
  EXPECT_EQ(Run({"EXISTS", "l"}), 0);
  EXPECT_TRUE(Run({"LPOP", "l"}).is_null());
  EXPECT_EQ(Run({"TYPE", "l"}), "none");
}

TEST_F(ListCommandsTest, WrongTypeBothWays) {
  const char* kWrongType = "WRONGTYPE Operation against a key holding the wrong kind of value";
  EXPECT_EQ(Run({"SET", "s", "v"}), "OK");
  EXPECT_EQ(Run({"LPUSH", "s", "x"}).str, kWrongType);
  EXPECT_EQ(Run({"RPUSH", "l", "x"}), 1);
  EXPECT_EQ(Run({"GET", "l"}).str, kWrongType);
  EXPECT_EQ(Run({"TYPE", "l"}), "list");
}

// Keys on different shards take the coordinator path; both must move every element once.
TEST_F(ListCommandsTest, LMoveAcrossShards) {
  ShardSet& ss = srv_.server().shard_set();
  std::string a = "a", b;
  for (int i = 0; b.empty(); ++i) {
    std::string k = "b" + std::to_string(i);
    if (ss.ShardOf(k) != ss.ShardOf(a)) b = k;
  }
  for (int i = 0; i < 100; ++i) Run({"RPUSH", a, std::to_string(i)});
  for (int i = 0; i < 100; ++i) EXPECT_EQ(Run({"LMOVE", a, b, "LEFT", "RIGHT"}), std::to_string(i));
  EXPECT_EQ(Run({"EXISTS", a}), 0);
  EXPECT_EQ(Run({"LLEN", b}), 100);
  EXPECT_EQ(Run({"SET", a, "str"}), "OK");
  EXPECT_EQ(Run({"RPOPLPUSH", b, a}).str,
            "WRONGTYPE Operation against a key holding the wrong kind of value");
  EXPECT_EQ(Run({"LLEN", b}), 100);
  EXPECT_EQ(Run({"LINDEX", b, "-1"}), "99");  // given back to the end it came from
  EXPECT_THAT(Run({"LMPOP", "2", a + "x", b, "RIGHT", "COUNT", "2"}).elems.size(), 2u);
}

TEST_F(ListCommandsTest, DebugObjectQuicklistFields) {
  std::vector<std::string> cmd{"RPUSH", "l"};
  for (int i = 0; i < 1000; ++i) cmd.push_back(std::string(31, 'x'));
  EXPECT_EQ(Run(cmd), 1000);
  RespValue r = Run({"DEBUG", "OBJECT", "l"});
  EXPECT_THAT(r.str, ::testing::HasSubstr("encoding:quicklist"));
  EXPECT_THAT(r.str, ::testing::HasSubstr(" ql_nodes:"));
  EXPECT_THAT(r.str, ::testing::HasSubstr(" ql_listpack_max:-2 ql_compressed:0"));
  EXPECT_EQ(Run({"OBJECT", "ENCODING", "l"}), "quicklist");
}

// Any bad COUNT of LMPOP / BLMPOP gets Redis's one message, before BLMPOP's timeout is read.
TEST_F(ListCommandsTest, MPopCountErrors) {
  EXPECT_EQ(Run({"RPUSH", "k", "a"}), 1);
  for (std::string_view count : {"a", "0", "-1", "", "9223372036854775808"}) {
    EXPECT_EQ(Run({"LMPOP", "1", "k", "LEFT", "COUNT", count}).str,
              "ERR count should be greater than 0") << count;
    EXPECT_EQ(Run({"BLMPOP", "-1", "1", "k", "LEFT", "COUNT", count}).str,
              "ERR count should be greater than 0") << count;
    EXPECT_EQ(Run({"BZMPOP", "a", "1", "k", "MIN", "COUNT", count}).str,
              "ERR count should be greater than 0") << count;
  }
  EXPECT_EQ(Run({"BLMPOP", "-1", "1", "k", "LEFT"}).str, "ERR timeout is negative");
  EXPECT_EQ(Run({"LLEN", "k"}), 1);
}

}  // namespace
}  // namespace dashkv
