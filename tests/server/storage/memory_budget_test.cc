// MemoryBudget unit tests: the limit an evicting policy measures the overage against, lowered by
// the gap between RSS and used_memory (memory_budget.h Design), fed with given samples; and the
// time over the limit, with given clock readings.
#include "server/storage/memory_budget.h"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "core/chunk_reserve.h"

namespace dashkv {
namespace {

constexpr int64_t kMiB = 1 << 20;

class MemoryBudgetTest : public ::testing::Test {
 protected:
  void SetUp() override { settings_.policy = MaxmemoryPolicy::kAllKeysLru; }

  // maxmemory (100 MiB) plus the headroom less `gap`: the limit the RSS rule sets.
  static int64_t LoweredBy(int64_t gap) {
    return static_cast<int64_t>(100 * kMiB * (1.0 + MemoryBudget::kRssHeadroom)) - gap;
  }

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
  budget_.SampleRss(110 * kMiB, 90 * kMiB);  // gap 20 MiB
  EXPECT_EQ(budget_.EffectiveLimit(), LoweredBy(20 * kMiB));
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
  EXPECT_EQ(budget_.EffectiveLimit(), LoweredBy(20 * kMiB));
  // Inserts reuse the freed blocks (RSS still unchanged): the gap may shrink.
  budget_.SampleRss(110 * kMiB, 95 * kMiB);
  EXPECT_EQ(budget_.rss_gap(), 15 * kMiB);
}

TEST_F(MemoryBudgetTest, GrowingRssTakesTheGapAnew) {
  budget_.SampleRss(110 * kMiB, 90 * kMiB);
  budget_.SampleRss(112 * kMiB, 85 * kMiB);  // new pages while used fell: fragmentation
  EXPECT_EQ(budget_.rss_gap(), 27 * kMiB);
  EXPECT_EQ(budget_.EffectiveLimit(), LoweredBy(27 * kMiB));
}

TEST_F(MemoryBudgetTest, ReturnedPagesNarrowTheGap) {
  budget_.SampleRss(110 * kMiB, 90 * kMiB);
  budget_.SampleRss(40 * kMiB, 30 * kMiB);  // FLUSHALL, pages given back
  EXPECT_EQ(budget_.rss_gap(), 10 * kMiB);
  EXPECT_EQ(budget_.EffectiveLimit(), LoweredBy(10 * kMiB));
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

// The shards' chunk reserves together hold at most 1/64 of maxmemory, in whole chunks per
// shard; without maxmemory each may hold all it can.
TEST(MemoryBudgetReserveTest, ReservesShareOneSixtyFourthOfMaxmemory) {
  constexpr int64_t kGiB = int64_t{1} << 30;
  EvictionSettings settings;
  std::atomic<int64_t> maxmemory{0};
  MemoryBudget four{4, &maxmemory, &settings};
  MemoryBudget one{1, &maxmemory, &settings};
  EXPECT_EQ(four.ReserveChunkCap(), ChunkReserve::kCapacity);
  maxmemory = 100 * kMiB;  // 400 KiB a shard: less than a chunk
  EXPECT_EQ(four.ReserveChunkCap(), 0u);
  EXPECT_EQ(one.ReserveChunkCap(), 0u);
  maxmemory = 1 * kGiB;  // 16 MiB: 4 MiB a shard of four, capacity for one shard
  EXPECT_EQ(four.ReserveChunkCap(), 2u);
  EXPECT_EQ(one.ReserveChunkCap(), ChunkReserve::kCapacity);
  maxmemory = 64 * kGiB;
  EXPECT_EQ(four.ReserveChunkCap(), ChunkReserve::kCapacity);
  for (int64_t m = 64 * kMiB; m <= 4 * kGiB; m += 48 * kMiB) {
    maxmemory = m;
    EXPECT_LE(int64_t{4} * four.ReserveChunkCap() * int64_t{ChunkReserve::kChunkBytes}, m / 64)
        << m;
  }
}

TEST_F(MemoryBudgetTest, AStretchOverTheLimitCountsUntilTheProcessIsBackUnder) {
  EXPECT_FALSE(budget_.exceeded());
  budget_.NoteExceeded(true, 1'000'000);
  budget_.NoteExceeded(true, 1'500'000);  // still over: the stretch goes on from its start
  EXPECT_TRUE(budget_.exceeded());
  MemoryBudget::ExceededTime t = budget_.exceeded_time(3'500'000);
  EXPECT_EQ(t.total_ms, 2500);
  EXPECT_EQ(t.current_ms, 2500);
  budget_.NoteExceeded(false, 4'000'000);
  budget_.NoteExceeded(false, 4'100'000);  // already under: nothing to end
  t = budget_.exceeded_time(9'000'000);
  EXPECT_EQ(t.total_ms, 3000);
  EXPECT_EQ(t.current_ms, 0);
  // A second stretch adds to the total.
  budget_.NoteExceeded(true, 10'000'000);
  t = budget_.exceeded_time(10'250'999);
  EXPECT_EQ(t.total_ms, 3250);
  EXPECT_EQ(t.current_ms, 250);
}

TEST_F(MemoryBudgetTest, ResetForgetsTheTotalAndTheRunningStretch) {
  budget_.NoteExceeded(true, 1'000'000);
  budget_.NoteExceeded(false, 2'000'000);
  budget_.NoteExceeded(true, 3'000'000);
  budget_.ResetExceededTime();
  EXPECT_FALSE(budget_.exceeded());
  MemoryBudget::ExceededTime t = budget_.exceeded_time(5'000'000);
  EXPECT_EQ(t.total_ms, 0);
  EXPECT_EQ(t.current_ms, 0);
  // The next check that finds the process over starts a new stretch.
  budget_.NoteExceeded(true, 6'000'000);
  EXPECT_EQ(budget_.exceeded_time(6'400'000).total_ms, 400);
}

TEST_F(MemoryBudgetTest, RefreshStartsAndEndsAStretchUnderEveryPolicy) {
  const std::vector<char> held(kMiB);  // used_memory is at least this
  for (MaxmemoryPolicy policy : {MaxmemoryPolicy::kNoEviction, MaxmemoryPolicy::kAllKeysLru}) {
    settings_.policy = policy;
    maxmemory_ = 1;
    EXPECT_GT(budget_.Refresh().total(), 0);
    EXPECT_TRUE(budget_.exceeded());
    EXPECT_EQ(budget_.pressure(), policy != MaxmemoryPolicy::kNoEviction);
    maxmemory_ = int64_t{1} << 50;
    EXPECT_LT(budget_.Refresh().total(), 0);
    EXPECT_FALSE(budget_.exceeded());
    EXPECT_FALSE(budget_.pressure());
  }
  EXPECT_GE(held.size(), 1u);
}

// Samples are taken only by the test (Resample) or at the first check.
class SampledMemoryBudgetTest : public MemoryBudgetTest {
 protected:
  static constexpr int64_t kHourUs = int64_t{3600} * 1'000'000;
  MemoryBudget budget2_{2, &maxmemory_, &settings_, kHourUs};
};

TEST_F(SampledMemoryBudgetTest, AShardSeesItsOwnFiguresAtOnceAndOthersAtTheNextSample) {
  maxmemory_ = int64_t{1} << 40;
  const int64_t base = budget2_.Overage(0);  // the first check samples
  EXPECT_EQ(budget2_.Overage(1), base);
  budget2_.Publish(0, 1000, 10);
  budget2_.Publish(1, 300, 30);
  // Each shard's own figures count at once, the other's not yet.
  EXPECT_EQ(budget2_.Overage(0), base - 1000);
  EXPECT_EQ(budget2_.Overage(1), base - 300);
  EXPECT_EQ(budget2_.Overage(), base);
  EXPECT_EQ(budget2_.EvictableKeys(0), 10);
  EXPECT_EQ(budget2_.EvictableKeys(1), 30);
  EXPECT_EQ(budget2_.ShareOf(0), 1.0);
  const uint64_t generation = budget2_.SeenBy(0).generation;
  EXPECT_TRUE(budget2_.Resample());
  EXPECT_NE(budget2_.SeenBy(0).generation, generation);
  EXPECT_EQ(budget2_.Overage(0), base - 1300);
  EXPECT_EQ(budget2_.Overage(1), base - 1300);
  EXPECT_EQ(budget2_.Overage(), base - 1300);
  EXPECT_EQ(budget2_.EvictableKeys(), 40);
  EXPECT_DOUBLE_EQ(budget2_.ShareOf(0), 0.25);
  EXPECT_DOUBLE_EQ(budget2_.ShareOf(1), 0.75);
  // An eviction on shard 0 counts at once for shard 0, at the next sample for shard 1.
  budget2_.Publish(0, 1500, 9);
  EXPECT_EQ(budget2_.Overage(0), base - 1800);
  EXPECT_EQ(budget2_.Overage(1), base - 1300);
  EXPECT_EQ(budget2_.EvictableKeys(0), 39);
  EXPECT_TRUE(budget2_.Resample());
  EXPECT_EQ(budget2_.Overage(1), base - 1800);
}

TEST_F(SampledMemoryBudgetTest, EachShardFreesItsShareOfTheSampleLessWhatItEvicted) {
  maxmemory_ = int64_t{1} << 40;
  budget2_.Publish(0, 0, 10);
  budget2_.Publish(1, 0, 30);
  ASSERT_TRUE(budget2_.Resample());
  // The thread's own change (200: say a batch it allocated for the other shard) is left out.
  const MemoryBudget::OverageView over{1000, 200};
  EXPECT_EQ(budget2_.ShareOf(0, over, 0), 250);
  EXPECT_EQ(budget2_.ShareOf(1, over, 0), 750);
  EXPECT_EQ(budget2_.ShareOf(1, over, 700), 50);
  EXPECT_EQ(budget2_.ShareOf(1, over, 800), -50);
  // Shard 0 evicted its 10 keys: none of the sampled overage is its own any more; shard 1 takes
  // all of it from the next sample on.
  budget2_.Publish(0, 0, 0);
  EXPECT_EQ(budget2_.ShareOf(0, over, 0), 0);
  EXPECT_EQ(budget2_.ShareOf(1, over, 0), 750);  // shard 0's change not seen yet
  ASSERT_TRUE(budget2_.Resample());
  // Holding every evictable key, it frees the whole overage as it sees it, as a single shard.
  EXPECT_EQ(budget2_.ShareOf(1, over, 0), 1200);
  // Within the limit nothing is to be freed.
  EXPECT_LT(budget2_.ShareOf(1, {-1000, 200}, 0), 0);
}

TEST_F(SampledMemoryBudgetTest, ASingleShardFreesTheWholeOverageItSees) {
  maxmemory_ = int64_t{1} << 40;
  MemoryBudget budget1{1, &maxmemory_, &settings_, kHourUs};
  budget1.Publish(0, 0, 10);
  ASSERT_TRUE(budget1.Resample());
  EXPECT_EQ(budget1.ShareOf(0, {1000, 200}, 0), 1200);
  EXPECT_EQ(budget1.ShareOf(0, {1000, -300}, 0), 700);
}

TEST_F(SampledMemoryBudgetTest, OwnAllocationsCountAtOnce) {
  maxmemory_ = int64_t{1} << 40;
  settings_.policy = MaxmemoryPolicy::kNoEviction;
  const int64_t base = budget2_.Overage(0);
  EXPECT_EQ(budget2_.SeenBy(0).own, 0);
  auto held = std::make_unique<char[]>(kMiB);
  EXPECT_GE(budget2_.Overage(0) - base, kMiB);
  held.reset();
  EXPECT_EQ(budget2_.Overage(0), base);
}

TEST_F(MemoryBudgetTest, WithoutMaxmemoryTakingTheTimeEndsTheStretch) {
  const int64_t start = MemoryBudget::MonotonicUs() - 5'000;
  budget_.NoteExceeded(true, start);
  maxmemory_ = 0;
  const MemoryBudget::ExceededTime t = budget_.TakeExceededTime();
  EXPECT_FALSE(budget_.exceeded());
  EXPECT_EQ(t.current_ms, 0);
  EXPECT_GE(t.total_ms, 5);
  // With maxmemory set, taking the time changes nothing.
  maxmemory_ = 100 * kMiB;
  budget_.NoteExceeded(true, MemoryBudget::MonotonicUs());
  budget_.TakeExceededTime();
  EXPECT_TRUE(budget_.exceeded());
}

}  // namespace
}  // namespace dashkv
