#include "server/values/stream_groups.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <string>
#include <vector>

namespace dashkv {
namespace {

// Checks that the group PEL and the consumers' PELs describe the same entries.
void ExpectConsistent(const StreamGroup& g) {
  size_t in_consumers = 0;
  for (const auto& [name, c] : g.consumers) {
    EXPECT_EQ(name, c->name);
    for (const auto& [id, p] : c->pel) {
      auto it = g.pel.find(id);
      ASSERT_NE(it, g.pel.end());
      EXPECT_EQ(it->second.get(), p);
      EXPECT_EQ(p->consumer, c.get());
      ++in_consumers;
    }
  }
  EXPECT_EQ(in_consumers, g.pel.size());
}

TEST(StreamGroupsTest, CreateFindDestroy) {
  StreamGroups groups;
  ASSERT_NE(groups.Create("g", StreamID{1, 2}, 5), nullptr);
  EXPECT_EQ(groups.Create("g", StreamID{}, -1), nullptr);
  ASSERT_NE(groups.Find("g"), nullptr);
  EXPECT_EQ(groups.Find("g")->last_id, (StreamID{1, 2}));
  EXPECT_EQ(groups.Find("g")->entries_read, 5);
  EXPECT_EQ(groups.Find("h"), nullptr);
  EXPECT_TRUE(groups.Destroy("g"));
  EXPECT_FALSE(groups.Destroy("g"));
  EXPECT_EQ(groups.size(), 0u);
}

TEST(StreamGroupsTest, DeliverAckMoveDelete) {
  StreamGroup g;
  StreamConsumer* a = g.AddConsumer("a", 10);
  StreamConsumer* b = g.AddConsumer("b", 10);
  EXPECT_EQ(g.AddConsumer("a", 11), nullptr);
  const StreamID kOne{1, 0};
  g.Deliver(kOne, a, 20);
  g.Deliver({2, 0}, a, 20);
  g.Deliver({3, 0}, b, 20);
  ExpectConsistent(g);
  g.pel.at(kOne)->delivery_count = 5;
  g.Deliver({1, 0}, b, 30);  // re-delivery moves it and resets the count
  EXPECT_EQ(g.pel.at(kOne)->delivery_count, 1u);
  EXPECT_EQ(g.pel.at(kOne)->consumer, b);
  EXPECT_EQ(a->pel.size(), 1u);
  ExpectConsistent(g);
  EXPECT_TRUE(g.Ack({2, 0}));
  EXPECT_FALSE(g.Ack({2, 0}));
  ExpectConsistent(g);
  EXPECT_EQ(g.DeleteConsumer("b"), 2u);
  EXPECT_EQ(g.DeleteConsumer("b"), 0u);
  EXPECT_TRUE(g.pel.empty());
  ExpectConsistent(g);
}

TEST(StreamGroupsTest, RandomOperationsKeepPelsConsistentAndCloneIsDeep) {
  std::mt19937_64 rng(21);
  StreamGroups groups;
  StreamGroup* g = groups.Create("g", StreamID{}, -1);
  for (int i = 0; i < 5000; ++i) {
    const std::string name = "c" + std::to_string(rng() % 6);
    const StreamID id{rng() % 50, 0};
    switch (rng() % 5) {
      case 0:
      case 1: {
        StreamConsumer* c = g->FindConsumer(name);
        if (c == nullptr) c = g->AddConsumer(name, i);
        g->Deliver(id, c, i);
        break;
      }
      case 2:
        g->Ack(id);
        break;
      case 3: {
        auto it = g->pel.find(id);
        StreamConsumer* c = g->FindConsumer(name);
        if (it != g->pel.end() && c != nullptr) g->MoveTo(id, it->second.get(), c);
        break;
      }
      default:
        if (rng() % 10 == 0) g->DeleteConsumer(name);
        break;
    }
    ExpectConsistent(*g);
  }
  std::unique_ptr<StreamGroups> copy = groups.Clone();
  StreamGroup* cg = copy->Find("g");
  ASSERT_NE(cg, nullptr);
  ExpectConsistent(*cg);
  ASSERT_EQ(cg->pel.size(), g->pel.size());
  for (const auto& [id, p] : g->pel) {
    EXPECT_EQ(cg->pel.at(id)->consumer->name, p->consumer->name);
    EXPECT_EQ(cg->pel.at(id)->delivery_count, p->delivery_count);
    EXPECT_NE(cg->pel.at(id).get(), p.get());
  }
  EXPECT_GT(groups.MallocUsed(), sizeof(StreamGroups));
}

TEST(StreamGroupsTest, EntriesReadEstimate) {
  StreamValue s;
  EXPECT_EQ(EstimateEntriesRead(s, StreamID{5, 0}), 0);  // never had entries
  std::vector<std::string_view> f = {"f", "v"};
  for (uint64_t i = 1; i <= 5; ++i) s.Append({i, 0}, f, {});
  EXPECT_EQ(EstimateEntriesRead(s, StreamID{}), 0);
  EXPECT_EQ(EstimateEntriesRead(s, StreamID{1, 0}), 1);
  EXPECT_EQ(EstimateEntriesRead(s, StreamID{5, 0}), 5);
  EXPECT_EQ(EstimateEntriesRead(s, StreamID{3, 0}), StreamGroup::kInvalidEntriesRead);
  EXPECT_EQ(EstimateEntriesRead(s, StreamID{6, 0}), StreamGroup::kInvalidEntriesRead);
  StreamGroup g;
  g.last_id = StreamID{2, 0};
  g.entries_read = 2;
  EXPECT_EQ(GroupLag(s, g), 3);
  AdvanceGroup(s, g, StreamID{3, 0});
  EXPECT_EQ(g.entries_read, 3);
  ASSERT_TRUE(s.Delete({4, 0}));
  EXPECT_TRUE(HasTombstonesFrom(s, StreamID{3, 0}));
  EXPECT_FALSE(GroupLag(s, g).has_value());  // a tombstone after the group's position
  // Past the tombstone the counter just counts on, as Redis's does (the deleted entry is
  // never delivered).
  AdvanceGroup(s, g, StreamID{5, 0});
  EXPECT_EQ(g.entries_read, 4);
  EXPECT_EQ(GroupLag(s, g), 1);
  // From before the tombstone the position is estimated: the last id is exact.
  g.last_id = StreamID{2, 0};
  g.entries_read = 2;
  AdvanceGroup(s, g, StreamID{3, 0});
  EXPECT_EQ(g.entries_read, StreamGroup::kInvalidEntriesRead);
  AdvanceGroup(s, g, StreamID{5, 0});
  EXPECT_EQ(g.entries_read, 5);
  // Tombstones all before the first entry do not count.
  StreamValue t;
  for (uint64_t i = 1; i <= 4; ++i) t.Append({i, 0}, f, {});
  ASSERT_TRUE(t.Delete({1, 0}));
  EXPECT_FALSE(HasTombstonesFrom(t, StreamID{}));
  StreamGroup h;
  h.entries_read = 2;  // trusted: the estimate from 0-0 would say 1
  EXPECT_EQ(GroupLag(t, h), 2);
}

}  // namespace
}  // namespace dashkv
