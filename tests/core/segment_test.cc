#include "core/segment.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "core/hash.h"

namespace dashkv::detail {
namespace {

struct SmallPolicy {
  static constexpr unsigned kRegularBuckets = 8;
  static constexpr unsigned kStashBuckets = 2;
  static constexpr unsigned kSlotsPerBucket = 6;
  static constexpr bool kRelocateByMemcpy = false;
  static uint64_t HashFn(uint64_t k) { return HashU64(k); }
};
using Seg = Segment<uint64_t, uint64_t, SmallPolicy>;

// Fills a segment until the next key does not fit; returns the keys inserted.
std::vector<uint64_t> Fill(Seg* seg, uint64_t seed, unsigned* displaced, unsigned* stashed) {
  std::mt19937_64 rng(seed);
  std::vector<uint64_t> keys;
  for (;;) {
    const uint64_t k = rng();
    const uint64_t h = HashU64(k);
    const InsertPlan plan = seg->PlanInsert(h);
    if (plan.kind == InsertPlan::Kind::kFull) return keys;
    *displaced += plan.kind == InsertPlan::Kind::kDisplace;
    *stashed += plan.kind == InsertPlan::Kind::kStash;
    auto ref = seg->Execute(plan, h, k, k + 1);
    EXPECT_EQ(seg->key(ref.bucket, ref.slot), k);
    keys.push_back(k);
  }
}

TEST(SegmentTest, FingerprintMatch) {
  BucketMeta m{};
  for (unsigned i = 0; i < 16; ++i) m.fp[i] = uint8_t(i % 3);
  EXPECT_EQ(MatchFingerprints(m, 1), 0x2492u);  // slots 1, 4, 7, 10, 13
  EXPECT_EQ(MatchFingerprints(m, 7), 0u);
}

TEST(SegmentTest, FillsToHighLoadWithDisplacementAndStash) {
  unsigned displaced = 0, stashed = 0, total = 0;
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    Seg seg(0);
    auto keys = Fill(&seg, seed, &displaced, &stashed);
    total += seg.size();
    EXPECT_EQ(seg.size(), keys.size());
    for (uint64_t k : keys) {
      auto ref = seg.Find(k, HashU64(k));
      ASSERT_TRUE(ref.found());
      EXPECT_EQ(seg.value(ref.bucket, ref.slot), k + 1);
      EXPECT_EQ(seg.HomeOf(ref.bucket, ref.slot), Seg::HomeBucket(HashU64(k)));
    }
    EXPECT_FALSE(seg.Find(uint64_t(12345), HashU64(12345)).found());
  }
  EXPECT_GT(total, 20u * Seg::kCapacity * 8 / 10);  // > 80% full on average when full
  EXPECT_GT(displaced, 0u);
  EXPECT_GT(stashed, 20u * Seg::kStash * Seg::kSlots - 1);  // every stash slot was used
}

TEST(SegmentTest, StashHintsAndOverflowStayExact) {
  Seg seg(0);
  unsigned displaced = 0, stashed = 0;
  auto keys = Fill(&seg, 7, &displaced, &stashed);
  unsigned stash_entries = 0;
  unsigned hinted = 0;
  for (unsigned b = 0; b < Seg::kRegular; ++b) hinted += seg.HintCount(b) + seg.Overflow(b);
  for (unsigned b = Seg::kRegular; b < Seg::kTotal; ++b) {
    stash_entries += __builtin_popcount(seg.busy(b));
  }
  EXPECT_EQ(hinted, stash_entries);
  // Erase every stash entry: hints and overflow counts return to zero.
  for (uint64_t k : keys) {
    auto ref = seg.Find(k, HashU64(k));
    if (ref.bucket >= Seg::kRegular) seg.Erase(ref.bucket, ref.slot);
  }
  for (unsigned b = 0; b < Seg::kRegular; ++b) {
    EXPECT_EQ(seg.HintCount(b), 0u);
    EXPECT_EQ(seg.Overflow(b), 0u);
  }
}

TEST(SegmentTest, SplitMovesUpperHalfToSamePositions) {
  Seg seg(0);
  unsigned displaced = 0, stashed = 0;
  auto keys = Fill(&seg, 3, &displaced, &stashed);
  for (unsigned b = 0; b < Seg::kTotal; ++b) seg.set_version(b, 100 + b);
  Seg upper(0);
  seg.Split(&upper);
  EXPECT_EQ(seg.local_depth(), 1);
  EXPECT_EQ(upper.local_depth(), 1);
  EXPECT_EQ(seg.size() + upper.size(), keys.size());
  EXPECT_GT(seg.size(), 0u);
  EXPECT_GT(upper.size(), 0u);
  for (unsigned b = 0; b < Seg::kTotal; ++b) EXPECT_EQ(upper.version(b), 100 + b);
  for (uint64_t k : keys) {
    const uint64_t h = HashU64(k);
    const bool up = h >> 63;
    EXPECT_EQ(upper.Find(k, h).found(), up);
    EXPECT_EQ(seg.Find(k, h).found(), !up);
  }
}

// The snapshot state word: version plus saved slots; a bucket of an older version has no saved
// slot, marking slots of a saved bucket changes nothing, and a split carries each slot's mark.
TEST(SegmentTest, SnapshotStateWord) {
  Seg seg(0);
  EXPECT_EQ(seg.saved_slots(0, 1), 0);
  EXPECT_FALSE(seg.saved(0, 1));
  seg.mark_slot_saved(0, 3, 5);
  EXPECT_EQ(seg.version(0), 5u);
  EXPECT_EQ(seg.saved_slots(0, 5), 1u << 3);
  EXPECT_FALSE(seg.saved(0, 5));
  EXPECT_EQ(seg.saved_slots(0, 6), 0);  // the next snapshot ignores the marks
  EXPECT_TRUE(seg.saved(0, 4));         // an older snapshot's view: newer means saved
  seg.mark_slot_saved(0, 1, 5);
  EXPECT_EQ(seg.saved_slots(0, 5), (1u << 3) | (1u << 1));
  seg.mark_slot_saved(0, 2, 6);  // a newer snapshot starts afresh
  EXPECT_EQ(seg.saved_slots(0, 6), 1u << 2);
  seg.mark_slot_saved(0, 4, 5);  // an older one leaves it
  EXPECT_EQ(seg.saved_slots(0, 6), 1u << 2);
  seg.set_version(0, 6);
  EXPECT_TRUE(seg.saved(0, 6));
  EXPECT_EQ(seg.saved_slots(0, 6), 0xffff);
  seg.mark_slot_saved(0, 0, 6);
  EXPECT_TRUE(seg.saved(0, 6));

  unsigned displaced = 0, stashed = 0;
  Seg full(0);
  auto keys = Fill(&full, 3, &displaced, &stashed);
  for (unsigned b = 0; b < Seg::kTotal; ++b) full.mark_slot_saved(b, b % Seg::kSlots, 9);
  Seg upper(0);
  full.Split(&upper);
  for (unsigned b = 0; b < Seg::kTotal; ++b) {
    EXPECT_EQ(full.saved_slots(b, 9), 1u << (b % Seg::kSlots));
    EXPECT_EQ(upper.saved_slots(b, 9), 1u << (b % Seg::kSlots));
  }
}

TEST(SegmentTest, UnloadStashMovesEntriesHome) {
  Seg seg(0);
  unsigned displaced = 0, stashed = 0;
  auto keys = Fill(&seg, 11, &displaced, &stashed);
  // Free the home bucket of one stash entry.
  unsigned home = Seg::kRegular;
  for (unsigned b = Seg::kRegular; b < Seg::kTotal && home == Seg::kRegular; ++b) {
    if (seg.busy(b)) home = seg.HomeOf(b, __builtin_ctz(seg.busy(b)));
  }
  ASSERT_LT(home, Seg::kRegular);
  for (uint16_t bits = seg.busy(home); bits; bits &= bits - 1) {
    seg.Erase(home, __builtin_ctz(bits));
  }
  const uint64_t v = 77;
  for (unsigned b = Seg::kRegular; b < Seg::kTotal; ++b) seg.set_version(b, v);
  EXPECT_GT(seg.UnloadStash(), 0u);
  EXPECT_EQ(seg.version(home), v);  // versions are carried with moved entries
  for (uint64_t k : keys) {
    auto ref = seg.Find(k, HashU64(k));
    if (!ref.found()) continue;  // erased above
    EXPECT_EQ(seg.value(ref.bucket, ref.slot), k + 1);
  }
  unsigned hinted = 0, stash_entries = 0;
  for (unsigned b = 0; b < Seg::kRegular; ++b) hinted += seg.HintCount(b) + seg.Overflow(b);
  for (unsigned b = Seg::kRegular; b < Seg::kTotal; ++b) {
    stash_entries += __builtin_popcount(seg.busy(b));
  }
  EXPECT_EQ(hinted, stash_entries);
}

// The home filters cover every entry homed at their bucket and reject most absent keys; erases
// keep them covering, and once the segment is empty every filter is clear again.
TEST(SegmentTest, HomeFiltersCoverEntriesAndRejectMostMisses) {
  for (uint64_t seed = 1; seed <= 10; ++seed) {
    Seg seg(0);
    unsigned displaced = 0, stashed = 0;
    auto keys = Fill(&seg, seed, &displaced, &stashed);
    std::mt19937_64 rng(seed);
    unsigned passed = 0;
    constexpr unsigned kAbsent = 10'000;
    for (unsigned i = 0; i < kAbsent; ++i) {
      const uint64_t h = HashU64(rng() | (uint64_t{1} << 63));
      passed += (seg.filter(Seg::HomeBucket(h)) & Seg::FilterBit(Seg::Fingerprint(h))) != 0;
    }
    // A full bucket's filter has at most ~10 of its 64 bits set (6 slots + spilled entries).
    EXPECT_LT(passed, kAbsent / 4);
    std::shuffle(keys.begin(), keys.end(), rng);
    for (size_t i = 0; i < keys.size(); ++i) {
      const uint64_t h = HashU64(keys[i]);
      auto ref = seg.Find(keys[i], h);
      ASSERT_TRUE(ref.found());
      seg.Erase(ref.bucket, ref.slot);
      for (size_t j = i + 1; j < keys.size(); ++j) {
        const uint64_t hj = HashU64(keys[j]);
        ASSERT_NE(seg.filter(Seg::HomeBucket(hj)) & Seg::FilterBit(Seg::Fingerprint(hj)), 0u);
        ASSERT_TRUE(seg.Find(keys[j], hj).found());
      }
    }
    for (unsigned b = 0; b < Seg::kRegular; ++b) {
      EXPECT_EQ(seg.filter(b), 0u) << "bucket " << b;
      EXPECT_EQ(seg.meta(b).spill, 0u) << "bucket " << b;
    }
  }
}

}  // namespace
}  // namespace dashkv::detail
