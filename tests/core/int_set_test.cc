#include "core/int_set.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <random>
#include <set>
#include <string>
#include <vector>

namespace dashkv {
namespace {

std::vector<int64_t> Members(const IntSet& s) { return {s.begin(), s.end()}; }

TEST(IntSetTest, EmptyLayout) {
  IntSet s;
  EXPECT_EQ(s.size(), 0u);
  EXPECT_EQ(s.width(), IntSet::Width::k16);
  EXPECT_EQ(s.raw(), std::string("\x02\x00\x00\x00\x00\x00\x00\x00", 8));
  EXPECT_FALSE(s.Contains(0));
}

TEST(IntSetTest, ByteLayoutMatchesRedis) {
  IntSet s;
  EXPECT_TRUE(s.Add(5));
  EXPECT_TRUE(s.Add(-2));
  EXPECT_TRUE(s.Add(300));
  EXPECT_FALSE(s.Add(5));
  // encoding 2, length 3, -2 (0xfffe), 5, 300 (0x012c), little-endian.
  EXPECT_EQ(s.raw(), std::string("\x02\x00\x00\x00\x03\x00\x00\x00"
                                 "\xfe\xff\x05\x00\x2c\x01",
                                 14));
  EXPECT_EQ(s.bytes(), 14u);
}

TEST(IntSetTest, WidthFor) {
  using W = IntSet::Width;
  EXPECT_EQ(IntSet::WidthFor(INT16_MAX), W::k16);
  EXPECT_EQ(IntSet::WidthFor(INT16_MIN), W::k16);
  EXPECT_EQ(IntSet::WidthFor(int64_t{INT16_MAX} + 1), W::k32);
  EXPECT_EQ(IntSet::WidthFor(int64_t{INT16_MIN} - 1), W::k32);
  EXPECT_EQ(IntSet::WidthFor(INT32_MAX), W::k32);
  EXPECT_EQ(IntSet::WidthFor(INT32_MIN), W::k32);
  EXPECT_EQ(IntSet::WidthFor(int64_t{INT32_MAX} + 1), W::k64);
  EXPECT_EQ(IntSet::WidthFor(int64_t{INT32_MIN} - 1), W::k64);
  EXPECT_EQ(IntSet::WidthFor(INT64_MAX), W::k64);
  EXPECT_EQ(IntSet::WidthFor(INT64_MIN), W::k64);
}

TEST(IntSetTest, UpgradePositiveGoesLast) {
  IntSet s;
  for (int v : {1, 2, -3}) s.Add(v);
  s.Add(int64_t{INT16_MAX} + 1);
  EXPECT_EQ(s.width(), IntSet::Width::k32);
  EXPECT_EQ(Members(s), (std::vector<int64_t>{-3, 1, 2, 32768}));
  EXPECT_EQ(s.raw().substr(0, 8), std::string("\x04\x00\x00\x00\x04\x00\x00\x00", 8));
  EXPECT_TRUE(s.Add(INT64_MAX));
  EXPECT_EQ(s.width(), IntSet::Width::k64);
  EXPECT_EQ(Members(s), (std::vector<int64_t>{-3, 1, 2, 32768, INT64_MAX}));
  EXPECT_EQ(s.bytes(), 8u + 5 * 8);
}

TEST(IntSetTest, UpgradeNegativeGoesFirst) {
  IntSet s;
  for (int v : {10, 20}) s.Add(v);
  s.Add(INT64_MIN);
  EXPECT_EQ(s.width(), IntSet::Width::k64);
  EXPECT_EQ(Members(s), (std::vector<int64_t>{INT64_MIN, 10, 20}));
  EXPECT_TRUE(s.Contains(INT64_MIN));
  EXPECT_FALSE(s.Contains(INT64_MAX));
}

TEST(IntSetTest, BoundariesAndNoDowngrade) {
  IntSet s;
  std::vector<int64_t> vals = {INT16_MIN, INT16_MAX, int64_t{INT16_MIN} - 1, int64_t{INT16_MAX} + 1,
                               INT32_MIN, INT32_MAX, int64_t{INT32_MIN} - 1,
                               int64_t{INT32_MAX} + 1, INT64_MIN, INT64_MAX, 0, -1};
  for (int64_t v : vals) EXPECT_TRUE(s.Add(v)) << v;
  for (int64_t v : vals) EXPECT_TRUE(s.Contains(v)) << v;
  EXPECT_EQ(s.size(), vals.size());
  std::set<int64_t> sorted(vals.begin(), vals.end());
  EXPECT_EQ(Members(s), std::vector<int64_t>(sorted.begin(), sorted.end()));
  EXPECT_EQ(s.Min(), INT64_MIN);
  EXPECT_EQ(s.Max(), INT64_MAX);
  for (int64_t v : vals) {
    if (v != 0) {
      EXPECT_TRUE(s.Remove(v));
    }
  }
  EXPECT_FALSE(s.Remove(12345));
  EXPECT_EQ(Members(s), std::vector<int64_t>{0});
  EXPECT_EQ(s.width(), IntSet::Width::k64);  // as Redis: never shrinks
}

TEST(IntSetTest, RandomDifferential) {
  std::mt19937_64 rng(7);
  IntSet s;
  std::set<int64_t> ref;
  for (int i = 0; i < 20000; ++i) {
    int64_t v;
    switch (rng() % 3) {
      case 0: v = static_cast<int16_t>(rng() % 200); break;
      case 1: v = static_cast<int32_t>(rng() % 5000) * 100000; break;
      default: v = static_cast<int64_t>(rng() % 300) << 40; break;
    }
    if (rng() % 3 == 0) {
      EXPECT_EQ(s.Remove(v), ref.erase(v) == 1);
    } else {
      EXPECT_EQ(s.Add(v), ref.insert(v).second);
    }
    if (i % 1000 == 0) {
      ASSERT_EQ(Members(s), std::vector<int64_t>(ref.begin(), ref.end()));
      ASSERT_TRUE(IntSet::Validate(s.raw()));
    }
  }
  ASSERT_EQ(Members(s), std::vector<int64_t>(ref.begin(), ref.end()));
  uint32_t i = 0;
  for (int64_t v : ref) EXPECT_EQ(s.Find(v), i++);
}

TEST(IntSetTest, RandomMember) {
  IntSet s;
  for (int v = 0; v < 10; ++v) s.Add(v * 7);
  std::mt19937_64 rng(1);
  std::set<int64_t> seen;
  for (int i = 0; i < 1000; ++i) {
    int64_t v = s.Random(rng);
    EXPECT_TRUE(s.Contains(v));
    seen.insert(v);
  }
  EXPECT_EQ(seen.size(), 10u);
}

TEST(IntSetTest, ValidateRejectsCorruptInput) {
  IntSet s;
  for (int v : {1, 2, 3}) s.Add(v);
  std::string good(s.raw());
  EXPECT_TRUE(IntSet::Validate(good));
  EXPECT_FALSE(IntSet::Validate(""));
  EXPECT_FALSE(IntSet::Validate(good.substr(0, 7)));
  EXPECT_FALSE(IntSet::Validate(good.substr(0, good.size() - 1)));
  EXPECT_FALSE(IntSet::Validate(good + "x"));
  std::string bad_enc = good;
  bad_enc[0] = 3;
  EXPECT_FALSE(IntSet::Validate(bad_enc));
  std::string huge_len = good;
  huge_len[7] = '\x7f';  // length 0x7f000003
  EXPECT_FALSE(IntSet::Validate(huge_len));
  std::string all_ff = good;
  for (int k = 4; k < 8; ++k) all_ff[k] = '\xff';
  EXPECT_FALSE(IntSet::Validate(all_ff));
  std::string unsorted = good;
  std::swap(unsorted[8], unsorted[10]);  // 2,1,3
  EXPECT_TRUE(IntSet::Validate(unsorted, /*deep=*/false));
  EXPECT_FALSE(IntSet::Validate(unsorted, /*deep=*/true));
  std::string dup = good;
  dup[10] = 1;  // 1,1,3
  EXPECT_FALSE(IntSet::Validate(dup));
  EXPECT_FALSE(IntSet::FromBytes(unsorted).ok());
  auto copy = IntSet::FromBytes(good);
  ASSERT_TRUE(copy.ok());
  EXPECT_EQ(Members(*copy), (std::vector<int64_t>{1, 2, 3}));
}

TEST(IntSetTest, ValidateFuzzNeverCrashes) {
  std::mt19937_64 rng(3);
  for (int i = 0; i < 20000; ++i) {
    std::string b(rng() % 40, '\0');
    for (char& c : b) c = static_cast<char>(rng() % 4 == 0 ? rng() : rng() % 3);
    if (IntSet::Validate(b)) {
      auto s = IntSet::FromBytes(b);
      ASSERT_TRUE(s.ok());
      ASSERT_EQ(s->raw(), b);
      s->Add(static_cast<int64_t>(rng()));
      ASSERT_TRUE(IntSet::Validate(s->raw()));
    }
  }
}

TEST(IntSetTest, AdoptReleaseCloneMove) {
  IntSet s;
  for (int v : {4, 8, 70000}) s.Add(v);
  IntSet c = s.Clone();
  uint8_t* blob = s.Release();
  IntSet adopted = IntSet::Adopt(blob);
  EXPECT_EQ(Members(adopted), (std::vector<int64_t>{4, 8, 70000}));
  IntSet moved = std::move(adopted);
  EXPECT_EQ(Members(moved), Members(c));
  c = std::move(moved);
  EXPECT_TRUE(c.Contains(70000));
}

}  // namespace
}  // namespace dashkv
