// SORT's shard-independent parts (server/commands/sort_ops.h). Expected values follow
// redis-server 7.0.15's replies to the same calls (checked by hand; tests/integration/test_sort.py
// compares the whole command with a live redis-server).

#include "server/commands/sort_ops.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "server/values/list_value.h"

namespace dashkv {
namespace {

using ::testing::ElementsAre;

OpResult<SortOptions> Parse(std::vector<std::string_view> args, bool read_only = false) {
  return ParseSortOptions(CmdArgs(args.data(), args.size()), read_only);
}

std::vector<uint32_t> Keys(std::vector<std::string_view> args) {
  return SortKeyIndexes(CmdArgs(args.data(), args.size()));
}

TEST(SortOpsTest, ParsesOptionsAsRedis) {
  OpResult<SortOptions> o = Parse({"SORT", "k", "by", "w_*", "LIMIT", "1", "2", "GET", "#",
                                   "get", "g_*", "DESC", "asc", "ALPHA", "STORE", "d"});
  ASSERT_TRUE(o.ok());
  EXPECT_FALSE(o->desc);
  EXPECT_TRUE(o->alpha);
  EXPECT_FALSE(o->dontsort);
  EXPECT_EQ(*o->by, "w_*");
  EXPECT_EQ(o->limit_start, 1);
  EXPECT_EQ(o->limit_count, 2);
  EXPECT_THAT(o->gets, ElementsAre("#", "g_*"));
  EXPECT_EQ(*o->store, "d");
  EXPECT_TRUE(o->reads_keys());
  // A constant BY stops sorting even when a pattern follows.
  o = Parse({"SORT", "k", "BY", "nosort", "BY", "w_*"});
  ASSERT_TRUE(o.ok());
  EXPECT_TRUE(o->dontsort);
  EXPECT_FALSE(o->by_reads_keys());
  EXPECT_FALSE(o->reads_keys());
}

TEST(SortOpsTest, ParseErrors) {
  EXPECT_EQ(Parse({"SORT", "k", "LIMIT", "1"}).status(), OpStatus::kSyntaxError);
  EXPECT_EQ(Parse({"SORT", "k", "LIMIT", "x", "1"}).status(), OpStatus::kNotAnInteger);
  EXPECT_EQ(Parse({"SORT", "k", "BADOPT", "LIMIT", "x", "1"}).status(), OpStatus::kSyntaxError);
  EXPECT_EQ(Parse({"SORT", "k", "STORE"}).status(), OpStatus::kSyntaxError);
  EXPECT_EQ(Parse({"SORT_RO", "k", "STORE", "d"}, true).status(), OpStatus::kSyntaxError);
  EXPECT_EQ(Parse({"SORT", "k", "GET"}).status(), OpStatus::kSyntaxError);
}

TEST(SortOpsTest, KeysAsCommandGetkeys) {
  EXPECT_THAT(Keys({"SORT", "a", "STORE", "b", "STORE", "c"}), ElementsAre(1, 5));
  EXPECT_THAT(Keys({"SORT", "a", "LIMIT", "store", "1", "STORE", "x"}), ElementsAre(1, 6));
  EXPECT_THAT(Keys({"SORT", "a", "GET", "store", "BY", "store"}), ElementsAre(1));
  EXPECT_THAT(Keys({"SORT", "a", "STORE"}), ElementsAre(1));
}

TEST(SortOpsTest, PatternsReplaceTheFirstStarOnly) {
  EXPECT_TRUE(IsSelfPattern("#"));
  EXPECT_TRUE(IsSelfPattern(std::string_view("#\0x", 3)));
  EXPECT_FALSE(IsSelfPattern("##"));
  EXPECT_FALSE(PatternReadsKeys("nosort"));
  EXPECT_FALSE(PatternReadsKeys(std::string_view("a\0*", 3)));
  PatternRef r = ResolvePattern("k_*_*", "e");
  EXPECT_EQ(r.key, "k_e_*");
  EXPECT_FALSE(r.hash);
  r = ResolvePattern("h_**->f*", "e");
  EXPECT_EQ(r.key, "h_e*");
  EXPECT_TRUE(r.hash);
  EXPECT_EQ(r.field, "f*");
  r = ResolvePattern("x->y*", "e");  // an arrow before the star is part of the key
  EXPECT_EQ(r.key, "x->ye");
  EXPECT_FALSE(r.hash);
  r = ResolvePattern("y*->", "e");  // no field: the arrow stays in the key
  EXPECT_EQ(r.key, "ye->");
  EXPECT_FALSE(r.hash);
}

// Returns the elements of a list value built from `elems`.
std::vector<std::string> Window(const std::vector<std::string>& elems, const SortOptions& o) {
  auto* list = new ListValue();
  for (const std::string& e : elems) list->Push(e, ListEnd::kTail, ListValue::Options{});
  CompactObj obj;
  obj.SetObject(ObjType::kList, list->encoding(), list);
  SortInput in = LoadSortInput(&obj, o, /*from_script=*/false);
  EXPECT_FALSE(in.bad_score);
  SortItems(in);
  std::vector<std::string> out;
  for (size_t i = in.plan.start; i < in.plan.stop; ++i) out.push_back(in.at(i).elem);
  return out;
}

TEST(SortOpsTest, LimitWindowsAndPartialSort) {
  const std::vector<std::string> l = {"5", "3", "1", "4", "2"};
  SortOptions o;
  EXPECT_THAT(Window(l, o), ElementsAre("1", "2", "3", "4", "5"));
  o.limit_start = 2;
  o.limit_count = INT64_MAX;
  EXPECT_THAT(Window(l, o), ElementsAre("3", "4", "5"));
  o.limit_start = 1;
  o.limit_count = 2;
  o.desc = true;
  EXPECT_THAT(Window(l, o), ElementsAre("4", "3"));
  o.dontsort = true;  // the list's order, reversed by DESC, only the window loaded
  EXPECT_THAT(Window(l, o), ElementsAre("4", "1"));
  o.limit_start = INT64_MAX;
  EXPECT_THAT(Window(l, o), ElementsAre());
  o.limit_start = -3;
  o.limit_count = INT64_MIN;
  o.desc = false;
  EXPECT_THAT(Window(l, o), ElementsAre("5", "3", "1", "4", "2"));
}

TEST(SortOpsTest, Weights) {
  SortInput in;
  in.items.resize(1);
  const double& score = in.items[0].score;
  EXPECT_TRUE(ApplyWeight(in, 0, std::nullopt));
  EXPECT_EQ(score, 0);
  EXPECT_TRUE(ApplyWeight(in, 0, " 0x10"));
  EXPECT_EQ(score, 16);
  EXPECT_TRUE(ApplyWeight(in, 0, std::string_view("12\0ab", 5)));
  EXPECT_EQ(score, 12);
  EXPECT_TRUE(ApplyWeight(in, 0, "-9223372036854775808"));
  EXPECT_EQ(score, -9223372036854775808.0);
  EXPECT_TRUE(ApplyWeight(in, 0, "9007199254740993"));  // rounded as strtod rounds it
  EXPECT_EQ(score, 9007199254740992.0);
  EXPECT_FALSE(in.bad_score);
  EXPECT_FALSE(ApplyWeight(in, 0, "1 "));
  EXPECT_TRUE(in.bad_score);
  EXPECT_FALSE(ApplyWeight(in, 0, "nan"));
  EXPECT_FALSE(ApplyWeight(in, 0, "1e-310"));
  EXPECT_TRUE(ApplyWeight(in, 0, "1.5"));  // errno from the ERANGE above is not kept
  in.plan.alpha = true;
  in.cmps.resize(1);
  EXPECT_TRUE(ApplyWeight(in, 0, "anything"));
  EXPECT_EQ(*in.cmps[0], "anything");
}

}  // namespace
}  // namespace dashkv
