#include "core/access_record.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace dashkv {
namespace {

constexpr int64_t kNow = 1'700'000'000'000;  // ms since the epoch

TEST(AccessRecordTest, LruClockAndIdle) {
  EXPECT_EQ(LruClock(kNow), (kNow / 1000) & kLruClockMax);
  EXPECT_EQ(LruIdleMs(LruClock(kNow), kNow), 0u);
  EXPECT_EQ(LruIdleMs(LruClock(kNow - 5000), kNow), 5000u);
  // The clock wraps at 2^24 seconds: an access just before the wrap.
  const int64_t wrap = static_cast<int64_t>(kLruClockMax + 1) * 1000;
  EXPECT_EQ(LruIdleMs(kLruClockMax - 1, wrap + 3000), (3 + 1) * 1000u);
}

TEST(AccessRecordTest, LfuDecayAndIncrement) {
  const uint32_t rec = (LfuMinutes(kNow) << 8) | 20;
  EXPECT_EQ(LfuDecayed(rec, kNow, 1), 20);
  EXPECT_EQ(LfuDecayed(rec, kNow + 3 * 60000, 1), 17);
  EXPECT_EQ(LfuDecayed(rec, kNow + 3 * 60000, 2), 19);
  EXPECT_EQ(LfuDecayed(rec, kNow + 3 * 60000, 0), 20);
  EXPECT_EQ(LfuDecayed(rec, kNow + 100 * 60000, 1), 0);
  // Up to the initial value every access counts; above, with probability 1/((c-5)*f+1).
  EXPECT_EQ(LfuLogIncr(3, 10, 0.999), 4);
  EXPECT_EQ(LfuLogIncr(5, 10, 0.999), 6);
  EXPECT_EQ(LfuLogIncr(6, 10, 0.05), 7);   // p = 1/11
  EXPECT_EQ(LfuLogIncr(6, 10, 0.10), 6);
  EXPECT_EQ(LfuLogIncr(255, 10, 0.0), 255);
  EXPECT_EQ(NewRecord(AccessMode::kLfu, kNow) & 0xff, kLfuInitVal);
}

// Key and value forms: the record lives in the key (roomy key), the value (tight key), or the
// lossy flags (both tight).
TEST(AccessRecordTest, RestoredRecord) {
  // LFU: the counter given, decremented now.
  EXPECT_EQ(RestoredRecord(AccessMode::kLfu, kNow, -1, 200), (LfuMinutes(kNow) << 8) | 200);
  EXPECT_EQ(LfuDecayed(RestoredRecord(AccessMode::kLfu, kNow, 50, 0), kNow, 1), 0);
  // LRU: idle seconds before now.
  EXPECT_EQ(LruIdleMs(RestoredRecord(AccessMode::kLru, kNow, 1000, -1), kNow), 1000'000u);
  EXPECT_EQ(LruIdleMs(RestoredRecord(AccessMode::kLru, kNow, 0, 7), kNow), 0u);
  // Beyond the clock's range (an RDB IDLE of any size): halfway round the clock, never wrapping
  // to a recent access.
  const uint32_t old = RestoredRecord(AccessMode::kLru, kNow, int64_t{1} << 40, -1);
  EXPECT_GE(LruIdleMs(old, kNow), uint64_t{kLruClockMax / 2 - 1} * 1000);
  // Not given for the mode: a new key's record.
  EXPECT_EQ(RestoredRecord(AccessMode::kLfu, kNow, 1000, -1), NewRecord(AccessMode::kLfu, kNow));
  EXPECT_EQ(RestoredRecord(AccessMode::kLru, kNow, -1, 100), NewRecord(AccessMode::kLru, kNow));
}

TEST(AccessRecordTest, StoredWhereThereIsRoom) {
  const std::string tight_key(15, 'k'), roomy_key = "key:1";
  const std::string tight_val(16, 'v'), roomy_val(100, 'v');
  const uint32_t rec = LruClock(kNow - 7000);
  {
    CompactObj k = CompactObj::FromKey(roomy_key), v = CompactObj::FromString(tight_val);
    SetRecord(k, v, rec, AccessMode::kLru);
    EXPECT_EQ(k.aux(), rec);
    EXPECT_EQ(GetRecord(k, v, AccessMode::kLru, kNow), rec);
  }
  {
    CompactObj k = CompactObj::FromKey(tight_key), v = CompactObj::FromString(roomy_val);
    SetRecord(k, v, rec, AccessMode::kLru);
    EXPECT_EQ(v.aux(), rec);
    EXPECT_EQ(GetRecord(k, v, AccessMode::kLru, kNow), rec);
    // A value that loses its room falls back to the lossy form; one that regains it (aux 0) too.
    v.SetString(tight_val);
    uint64_t idle = LruIdleMs(GetRecord(k, v, AccessMode::kLru, kNow), kNow);
    EXPECT_GE(idle, 7000u);
    EXPECT_LT(idle, 7000u + 512 * 1000);
    v.SetString(roomy_val);
    EXPECT_EQ(v.aux(), 0u);
    idle = LruIdleMs(GetRecord(k, v, AccessMode::kLru, kNow), kNow);
    EXPECT_GE(idle, 7000u);
    EXPECT_LT(idle, 7000u + 512 * 1000);
  }
  {
    CompactObj k = CompactObj::FromKey(tight_key), v = CompactObj::FromString(tight_val);
    SetRecord(k, v, rec, AccessMode::kLru);
    EXPECT_EQ(k.ToString(), tight_key);
    EXPECT_EQ(v.ToString(), tight_val);
    const uint64_t idle = LruIdleMs(GetRecord(k, v, AccessMode::kLru, kNow), kNow);
    EXPECT_GE(idle, 7000u);
    EXPECT_LT(idle, 7000u + 512 * 1000);
    // LFU: the counter is capped at 15 and does not decay.
    SetRecord(k, v, (LfuMinutes(kNow - 600000) << 8) | 9, AccessMode::kLfu);
    EXPECT_EQ(LfuDecayed(GetRecord(k, v, AccessMode::kLfu, kNow), kNow, 1), 9);
    SetRecord(k, v, (LfuMinutes(kNow) << 8) | 200, AccessMode::kLfu);
    EXPECT_EQ(GetRecord(k, v, AccessMode::kLfu, kNow) & 0xff, 15u);
  }
}

// A record kept in the value's aux bytes (key of 13..17 bytes) also keeps its lossy copy in the
// user flags current, whether the update changes the copy or only the aux bytes.
TEST(AccessRecordTest, ValueFormKeepsItsLossyCopyCurrent) {
  const std::string tight_key(15, 'k'), roomy_val(100, 'v');
  const uint32_t step = LruClock(kNow) >> 9;
  struct Case {
    AccessMode mode;
    std::vector<uint32_t> records;  // each set in turn
  };
  const Case cases[] = {
      // Same 512 s step (copy unchanged), the next step, the same again.
      {AccessMode::kLru, {(step << 9) | 5, (step << 9) | 6, ((step + 1) << 9) | 1,
                          ((step + 1) << 9) | 2, (step << 9) | 7}},
      // Counters below, at and above the copy's cap of 15, and down again.
      {AccessMode::kLfu, {(7u << 8) | 5, (7u << 8) | 6, (7u << 8) | 15, (8u << 8) | 40,
                          (8u << 8) | 41, (9u << 8) | 3}},
  };
  for (const Case& c : cases) {
    CompactObj k = CompactObj::FromKey(tight_key), v = CompactObj::FromString(roomy_val);
    ASSERT_FALSE(k.HasAuxRoom());
    ASSERT_TRUE(v.HasAuxRoom());
    for (uint32_t rec : c.records) {
      SetRecord(k, v, rec, c.mode);
      EXPECT_EQ(GetRecord(k, v, c.mode, kNow), rec);
      EXPECT_EQ((k.user_flags() << 2) | (v.user_flags() & 0x3), LossyRecord(rec, c.mode)) << rec;
      EXPECT_EQ(k.ToString(), tight_key);
      EXPECT_EQ(v.ToString(), roomy_val);
    }
  }
}

}  // namespace
}  // namespace dashkv
