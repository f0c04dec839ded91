#include "server/tracking/tracking_table.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "server/tracking/prefix_collision.h"

namespace dashkv {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

// A table with two engines whose posts and flush requests are recorded.
class TrackingTableTest : public ::testing::Test {
 protected:
  struct Posted {
    unsigned engine;
    std::vector<Invalidation> batch;
  };

  TrackingTableTest()
      : table_(2, [this](unsigned e, std::vector<Invalidation> b) {
          posted_.push_back({e, std::move(b)});
        },
               [this] { ++schedules_; }) {
    table_.Attach(&changes_);
  }

  // Returns the keys posted to `engine` for `client` since the last call, then forgets them.
  std::vector<std::string> Keys(unsigned engine, uint64_t client) {
    std::vector<std::string> keys;
    for (const Posted& p : posted_) {
      if (p.engine != engine) continue;
      for (const Invalidation& inv : p.batch) {
        if (inv.client == client) keys.push_back(inv.key);
      }
    }
    return keys;
  }

  ChangeListeners changes_;
  std::vector<Posted> posted_;
  int schedules_ = 0;
  TrackingTable table_;
};

TEST_F(TrackingTableTest, ChangeInvalidatesEveryReaderOnceAndForgetsTheKey) {
  table_.Remember("k", 7, 0);
  table_.Remember("k", 7, 0);  // a second read adds nothing
  table_.Remember("k", 9, 1);
  EXPECT_EQ(table_.keys(), 1u);
  EXPECT_EQ(table_.items(), 2u);
  EXPECT_TRUE(changes_.wants(kWantWrites));
  table_.Invalidate("k");
  EXPECT_EQ(schedules_, 1);
  EXPECT_THAT(posted_, IsEmpty());  // waits for the flush
  table_.Flush();
  EXPECT_THAT(Keys(0, 7), ElementsAre("k"));
  EXPECT_THAT(Keys(1, 9), ElementsAre("k"));
  EXPECT_EQ(table_.keys(), 0u);
  EXPECT_EQ(table_.items(), 0u);
  EXPECT_FALSE(changes_.wants(kWantWrites));  // nobody tracks: changes cost one branch
  posted_.clear();
  table_.Invalidate("k");
  table_.Flush();
  EXPECT_THAT(posted_, IsEmpty());
}

TEST_F(TrackingTableTest, ListenerHearsModifyingWritesAndRemovals) {
  table_.Remember("a", 1, 0);
  table_.Remember("b", 1, 0);
  table_.Remember("c", 1, 0);
  table_.AfterWrite(0, "a", /*modified=*/false);  // SET NX on an existing key
  table_.AfterWrite(3, "b", /*modified=*/true);    // any database: keys are tracked by name
  table_.AfterRemove(0, "c", RemoveReason::kExpired);
  table_.Flush();
  EXPECT_THAT(Keys(0, 1), ElementsAre("b", "c"));
  EXPECT_EQ(table_.keys(), 1u);
}

TEST_F(TrackingTableTest, OriginMarksTheClientsOwnChanges) {
  table_.Remember("k", 5, 1);
  changes_.set_origin(ChangeOriginOf(5, /*by_script=*/false));
  table_.Invalidate("k");
  changes_.set_origin(0);
  table_.Flush();
  ASSERT_EQ(posted_.size(), 1u);
  EXPECT_EQ(posted_[0].batch[0].origin, 5u);
  EXPECT_EQ(posted_[0].batch[0].group, 0u);
}

// As Redis 7.0: a script's change is its caller's for the keys the caller read, but not for
// its BCAST prefixes (there it is the script client's).
TEST_F(TrackingTableTest, ScriptsChangesAreTheCallersForReadsOnly) {
  table_.Remember("k", 5, 1);
  table_.AddPrefix("", 5, 1);
  changes_.set_origin(ChangeOriginOf(5, /*by_script=*/true));
  table_.Invalidate("k");
  changes_.set_origin(0);
  table_.Flush();
  ASSERT_EQ(posted_.size(), 1u);
  ASSERT_EQ(posted_[0].batch.size(), 2u);
  for (const Invalidation& inv : posted_[0].batch) {
    EXPECT_EQ(inv.origin, inv.group == 0 ? 5u : 0u);
  }
}

// Two commands change a key before the flush: a BCAST NOLOOP client that made the first must
// still get the second's change.
TEST_F(TrackingTableTest, BcastKeepsAnotherClientsChangeOfTheSameKey) {
  table_.AddPrefix("", 5, 1);
  changes_.set_origin(ChangeOriginOf(5, false));
  table_.Invalidate("k");
  table_.Invalidate("k");  // its own second telling: dropped
  changes_.set_origin(ChangeOriginOf(6, false));
  table_.Invalidate("k");
  changes_.set_origin(0);
  table_.Flush();
  ASSERT_EQ(posted_.size(), 1u);
  ASSERT_EQ(posted_[0].batch.size(), 2u);
  EXPECT_EQ(posted_[0].batch[0].origin, 5u);
  EXPECT_EQ(posted_[0].batch[1].origin, 6u);
}

// Keys the limit evicts are the server's changes, not the running command's.
TEST_F(TrackingTableTest, EnforcedLimitHasNoOrigin) {
  table_.Remember("a", 5, 1);
  table_.Remember("b", 5, 1);
  changes_.set_origin(ChangeOriginOf(5, /*by_script=*/false));
  table_.EnforceLimit(0);
  EXPECT_EQ(changes_.origin(), ChangeOriginOf(5, false));
  changes_.set_origin(0);
  table_.Flush();
  ASSERT_EQ(posted_.size(), 1u);
  ASSERT_EQ(posted_[0].batch.size(), 2u);
  for (const Invalidation& inv : posted_[0].batch) EXPECT_EQ(inv.origin, 0u);
}

TEST_F(TrackingTableTest, FlushClearsKeysWithoutMessages) {
  table_.Remember("a", 1, 0);
  table_.BeforeFlush(0);
  table_.Flush();
  EXPECT_THAT(posted_, IsEmpty());
  EXPECT_EQ(table_.keys(), 0u);
}

TEST_F(TrackingTableTest, BcastGroupsKeysPerClientAndPrefix) {
  table_.AddPrefix("user:", 3, 1);
  table_.AddPrefix("", 4, 0);  // every key
  EXPECT_TRUE(changes_.wants(kWantRemovals));
  table_.Invalidate("user:1");
  table_.Invalidate("user:1");  // the same key again (RENAME's removal then write)
  table_.Invalidate("other");
  table_.Invalidate("user:2");
  table_.Flush();
  EXPECT_THAT(Keys(1, 3), ElementsAre("user:1", "user:2"));
  EXPECT_THAT(Keys(0, 4), ElementsAre("user:1", "other", "user:2"));
  for (const Posted& p : posted_) {
    for (const Invalidation& inv : p.batch) EXPECT_NE(inv.group, 0u);
  }
  table_.RemovePrefixes(3);
  table_.RemovePrefixes(4);
  EXPECT_FALSE(changes_.wants(kWantRemovals));
}

TEST_F(TrackingTableTest, LimitEvictsTrackedKeysWithInvalidations) {
  for (int i = 0; i < 10; ++i) table_.Remember("k" + std::to_string(i), 1, 0);
  table_.EnforceLimit(4);
  EXPECT_EQ(table_.keys(), 4u);
  table_.Flush();
  EXPECT_EQ(Keys(0, 1).size(), 6u);
  table_.EnforceLimit(4);  // within the limit: nothing more goes
  EXPECT_EQ(table_.keys(), 4u);
  table_.EnforceLimit(0);
  EXPECT_EQ(table_.keys(), 0u);
}

TEST(PrefixCollisionTest, ReportsThePairRedisReports) {
  std::vector<std::string> none;
  std::vector<std::string_view> ok = {"a", "b", "cd", "ce"};
  EXPECT_FALSE(FindPrefixCollision(ok, none));
  std::vector<std::string_view> req = {"x", "ab", "q", "a", "abc"};
  auto c = FindPrefixCollision(req, none);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->index, 1u);  // "ab" meets "a" (index 3) first, in request order
  EXPECT_FALSE(c->with_existing);
  EXPECT_EQ(c->other, "a");
  std::vector<std::string> existing = {"b", "zz"};
  std::vector<std::string_view> req2 = {"c", "z", "a", "a"};
  c = FindPrefixCollision(req2, existing);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->index, 1u);
  EXPECT_TRUE(c->with_existing);
  EXPECT_EQ(c->other, "zz");
  std::vector<std::string_view> empty = {"k", ""};
  c = FindPrefixCollision(empty, none);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->index, 0u);
  EXPECT_EQ(c->other, "");
}

TEST(PrefixCollisionTest, OverlappingExistingPrefixesAreScannedInOrder) {
  // Redis 7.0.15 can leave a client with overlapping prefixes; the neighbour search assumes
  // none, so it would miss "b" here: "bc" falls between "ba" and "bz".
  std::vector<std::string> existing = {"b", "ba", "bz"};
  std::vector<std::string_view> req = {"bc"};
  auto c = FindPrefixCollision(req, existing, /*existing_overlap=*/true);
  ASSERT_TRUE(c);
  EXPECT_TRUE(c->with_existing);
  EXPECT_EQ(c->other, "b");
  std::vector<std::string_view> free = {"c"};
  EXPECT_FALSE(FindPrefixCollision(free, existing, /*existing_overlap=*/true));
}

TEST(PrefixCollisionTest, ManyPrefixesStayFast) {
  std::vector<std::string> storage;
  for (int i = 0; i < 200000; ++i) storage.push_back("p" + std::to_string(i) + ":");
  std::vector<std::string_view> req(storage.begin(), storage.end());
  std::vector<std::string> none;
  EXPECT_FALSE(FindPrefixCollision(req, none));
  storage.push_back("p1");
  req.assign(storage.begin(), storage.end());
  auto c = FindPrefixCollision(req, none);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->index, 1u);  // "p1:" overlaps the last one, "p1"
  EXPECT_EQ(c->other, "p1");
}

}  // namespace
}  // namespace dashkv
