// MemoryBudget unit tests: the limit an evicting policy measures the overage against, lowered by
// the gap between RSS and used_memory (memory_budget.h Design), fed with given samples.
#include "server/storage/memory_budget.h"

#include <gtest/gtest.h>

namespace dashkv {
namespace {

constexpr int64_t kMiB = 1 << 20;

class MemoryBudgetTest : public ::testing::Test {
 protected:
  void SetUp() override { settings_.policy = MaxmemoryPolicy::kAllKeysLru; }

  std::atomic<int64_t> maxmemory_{100 * kMiB};
  EvictionSettings settings_;
  MemoryBudget budget_{1, &maxmemory_, &settings_};
};

TEST_F(MemoryBudgetTest, AGapWithinTheHeadroomKeepsMaxmemory) {
  budget_.SampleRss(50 * kMiB, 45 * kMiB);
  EXPECT_EQ(budget_.rss_gap(), 5 * kMiB);
  EXPECT_EQ(budget_.EffectiveLimit(), 100 * kMiB);
}

TEST_F(MemoryBudgetTest, AGapBeyondTheHeadroomLowersTheLimitByTheExcess) {
  budget_.SampleRss(110 * kMiB, 90 * kMiB);  // gap 20 MiB, headroom 7 MiB
  EXPECT_EQ(budget_.EffectiveLimit(), 87 * kMiB);
}

TEST_F(MemoryBudgetTest, TheLimitIsNeverLoweredBelowItsFloor) {
  budget_.SampleRss(200 * kMiB, 10 * kMiB);
  EXPECT_EQ(budget_.EffectiveLimit(), 75 * kMiB);
}

TEST_F(MemoryBudgetTest, EvictionWithoutNewPagesDoesNotWidenTheGap) {
  budget_.SampleRss(110 * kMiB, 90 * kMiB);
  // Evicting freed 10 MiB that the allocator keeps: RSS unchanged, used lower.
  budget_.SampleRss(110 * kMiB, 80 * kMiB);
  EXPECT_EQ(budget_.rss_gap(), 20 * kMiB);
  EXPECT_EQ(budget_.EffectiveLimit(), 87 * kMiB);
  // Inserts reuse the freed blocks (RSS still unchanged): the gap may shrink.
  budget_.SampleRss(110 * kMiB, 95 * kMiB);
  EXPECT_EQ(budget_.rss_gap(), 15 * kMiB);
}

TEST_F(MemoryBudgetTest, GrowingRssTakesTheGapAnew) {
  budget_.SampleRss(110 * kMiB, 90 * kMiB);
  budget_.SampleRss(112 * kMiB, 85 * kMiB);  // new pages while used fell: fragmentation
  EXPECT_EQ(budget_.rss_gap(), 27 * kMiB);
  EXPECT_EQ(budget_.EffectiveLimit(), 80 * kMiB);
}

TEST_F(MemoryBudgetTest, ReturnedPagesNarrowTheGap) {
  budget_.SampleRss(110 * kMiB, 90 * kMiB);
  budget_.SampleRss(40 * kMiB, 30 * kMiB);  // FLUSHALL, pages given back
  EXPECT_EQ(budget_.rss_gap(), 10 * kMiB);
  EXPECT_EQ(budget_.EffectiveLimit(), 97 * kMiB);
}

TEST_F(MemoryBudgetTest, ASmallLimitIgnoresTheGap) {
  maxmemory_ = 8 * kMiB;
  budget_.SampleRss(20 * kMiB, 8 * kMiB);
  EXPECT_EQ(budget_.EffectiveLimit(), 8 * kMiB);
}

TEST_F(MemoryBudgetTest, NoevictionAndNoLimitIgnoreTheGap) {
  budget_.SampleRss(150 * kMiB, 90 * kMiB);
  settings_.policy = MaxmemoryPolicy::kNoEviction;
  EXPECT_EQ(budget_.EffectiveLimit(), 100 * kMiB);
  settings_.policy = MaxmemoryPolicy::kAllKeysLru;
  maxmemory_ = 0;
  EXPECT_EQ(budget_.EffectiveLimit(), 0);
  EXPECT_EQ(budget_.Overage(), 0);
}

}  // namespace
}  // namespace dashkv
