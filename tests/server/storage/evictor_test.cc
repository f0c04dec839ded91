// Evictor unit tests on one shard, on the test thread: which keys each policy evicts, and when a
// write is refused. maxmemory is set just below what the process uses, so that a step evicts a
// few keys.
#include "server/storage/evictor.h"

#include <gtest/gtest.h>

#include <string>

#include "core/base/clock.h"
#include "core/memory.h"
#include "server/storage/shard.h"

namespace dashkv {
namespace {

class EvictorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    InitMemoryAccounting();
    settings_.samples = 64;  // the pool sees both halves of the keyspace in every step
    shard_.set_memory_budget(&budget_);
  }
  // Adds `n` keys prefix0.. with 100-byte values; idle for `idle_s` seconds; with an expiry
  // `ttl_ms` from now when > 0. `in_place`: each insert may evict in place, as a pipelined
  // one-key write's (DbSlice::in_place_evictor).
  void Add(const std::string& prefix, int n, int64_t idle_s, int64_t ttl_ms = 0,
           Evictor* in_place = nullptr) {
    DbSlice& db = shard_.db(0);
    for (int i = 0; i < n; ++i) {
      const std::string key = prefix + std::to_string(i);
      DbSlice::KeyHashScope scope(db, key, 0, in_place);
      auto res = db.FindOrAdd(key, now_);
      ASSERT_TRUE(res.ok());
      res->it->second.SetString(std::string(100, 'v'));
      if (ttl_ms > 0) db.SetExpire(res->it, now_ + ttl_ms);
      db.SetRecord(res->it, LruClock(now_ - idle_s * 1000));
    }
    shard_.FinishChanges();
  }
  int Count(const std::string& prefix, int n) {
    int live = 0;
    for (int i = 0; i < n; ++i) live += shard_.KeyLive(0, prefix + std::to_string(i), now_);
    return live;
  }
  // Sets maxmemory `bytes` below what the process uses now.
  void OverBy(int64_t bytes) {
    shard_.evictor().Publish();
    maxmemory_ = UsedMemory() - bytes;
  }

  int64_t now_ = NowMs();
  std::atomic<int64_t> maxmemory_{0};
  EvictionSettings settings_;
  MemoryBudget budget_{1, &maxmemory_, &settings_};
  Shard shard_{0, 1};
};

TEST_F(EvictorTest, AllKeysLruEvictsTheIdlest) {
  settings_.policy = MaxmemoryPolicy::kAllKeysLru;
  Add("cold", 100, 1000);
  Add("hot", 100, 0);
  OverBy(2000);
  EXPECT_TRUE(shard_.evictor().MakeRoom(now_));
  EXPECT_EQ(Count("hot", 100), 100);
  EXPECT_LT(Count("cold", 100), 100);
  EXPECT_EQ(shard_.stats().evicted_keys, 200u - Count("hot", 100) - Count("cold", 100));
}

// The pool names its keys by place and hash: a pooled key that went, and a new key that took
// its place, are not evicted in its stead.
TEST_F(EvictorTest, PooledKeysThatWentAreNotMistaken) {
  settings_.policy = MaxmemoryPolicy::kAllKeysLru;
  Add("cold", 100, 1000);
  Add("hot", 100, 0);
  OverBy(2000);
  EXPECT_TRUE(shard_.evictor().MakeRoom(now_));
  ASSERT_LT(Count("cold", 100), 100);
  for (int i = 0; i < 100; ++i) shard_.db(0).EraseKey("cold" + std::to_string(i), now_);
  Add("fresh", 100, 0);
  Add("mid", 50, 500);
  OverBy(1000);
  EXPECT_TRUE(shard_.evictor().MakeRoom(now_));
  EXPECT_EQ(Count("hot", 100), 100);
  EXPECT_EQ(Count("fresh", 100), 100);
  EXPECT_LT(Count("mid", 50), 50);
}

TEST_F(EvictorTest, VolatileTtlEvictsTheSoonest) {
  settings_.policy = MaxmemoryPolicy::kVolatileTtl;
  Add("soon", 100, 0, 10'000);
  Add("late", 100, 0, 10'000'000);
  Add("keep", 100, 1000);  // no expiry: never a candidate
  OverBy(2000);
  EXPECT_TRUE(shard_.evictor().MakeRoom(now_));
  EXPECT_EQ(Count("late", 100), 100);
  EXPECT_EQ(Count("keep", 100), 100);
  EXPECT_LT(Count("soon", 100), 100);
}

TEST_F(EvictorTest, VolatileWithoutExpiriesRefuses) {
  settings_.policy = MaxmemoryPolicy::kVolatileLru;
  Add("keep", 100, 1000);
  OverBy(2000);
  EXPECT_FALSE(shard_.evictor().MakeRoom(now_));
  EXPECT_EQ(Count("keep", 100), 100);
  EXPECT_EQ(shard_.stats().evicted_keys, 0u);
}

TEST_F(EvictorTest, NoevictionRefusesAndUnderTheLimitAdmits) {
  settings_.policy = MaxmemoryPolicy::kNoEviction;
  Add("k", 10, 0);
  OverBy(2000);
  EXPECT_FALSE(shard_.evictor().MakeRoom(now_));
  maxmemory_ = UsedMemory() + (1 << 20);
  EXPECT_TRUE(shard_.evictor().MakeRoom(now_));
  maxmemory_ = 0;
  EXPECT_TRUE(shard_.evictor().MakeRoom(now_));
  EXPECT_EQ(Count("k", 10), 10);
}

TEST_F(EvictorTest, SparseVolatileKeysAreFound) {
  settings_.policy = MaxmemoryPolicy::kVolatileRandom;
  Add("plain", 2000, 0);
  Add("ttl", 5, 0, 100'000);
  OverBy(100);
  EXPECT_TRUE(shard_.evictor().MakeRoom(now_));
  EXPECT_EQ(Count("plain", 2000), 2000);
  EXPECT_LT(Count("ttl", 5), 5);
}

// At the limit, an insert into a full segment evicts the idlest entry of the buckets it would
// use instead of splitting: the table keeps one segment, and the old keys go first.
TEST_F(EvictorTest, AtTheLimitAFullSegmentEvictsInPlace) {
  settings_.policy = MaxmemoryPolicy::kAllKeysLru;
  Add("old", 600, 1000);
  ASSERT_EQ(shard_.db(0).table().segment_count(), 1u);
  OverBy(0);
  Add("new", 2000, 0, 0, &shard_.evictor());
  const PrimeTable& table = shard_.db(0).table();
  EXPECT_EQ(table.segment_count(), 1u);
  EXPECT_EQ(shard_.stats().evicted_keys, 2600u - table.size());
  EXPECT_EQ(static_cast<size_t>(Count("old", 600) + Count("new", 2000)), table.size());
  EXPECT_GT(table.size(), 780u);   // the segment stays full: 840 slots
  EXPECT_LT(Count("old", 600), 60);  // an old key was in almost every insert's two buckets
}

// Under the limit, without a candidate (volatile-* and no key with an expiry), or outside a
// one-key command, a full segment splits.
TEST_F(EvictorTest, AFullSegmentSplitsWhenItMayNotEvictInPlace) {
  settings_.policy = MaxmemoryPolicy::kAllKeysLru;
  Add("old", 600, 1000);
  ASSERT_EQ(shard_.db(0).table().segment_count(), 1u);
  maxmemory_ = UsedMemory() + (64 << 20);
  Add("under", 1000, 0, 0, &shard_.evictor());
  EXPECT_GT(shard_.db(0).table().segment_count(), 1u);
  EXPECT_EQ(shard_.stats().evicted_keys, 0u);

  shard_.db(0).Clear();
  Add("old", 600, 1000);
  OverBy(0);
  Add("outside", 1000, 0);
  EXPECT_GT(shard_.db(0).table().segment_count(), 1u);
  EXPECT_EQ(shard_.stats().evicted_keys, 0u);

  shard_.db(0).Clear();
  settings_.policy = MaxmemoryPolicy::kVolatileLru;
  Add("old", 600, 1000);
  OverBy(0);
  Add("volatile", 1000, 0, 0, &shard_.evictor());
  EXPECT_GT(shard_.db(0).table().segment_count(), 1u);
  EXPECT_EQ(shard_.stats().evicted_keys, 0u);
  EXPECT_EQ(Count("old", 600) + Count("volatile", 1000), 1600);
}

}  // namespace
}  // namespace dashkv
