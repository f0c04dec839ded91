// MemberTable tests: random differential test against std::unordered_map, scan guarantees across
// growth, shrinking and deletions, and the borrowed-member mode of SortedIndex that the sorted
// set pairs it with.
#include "core/member_table.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/sorted_index.h"
#include "tests/testing/chi_square.h"

namespace dashkv {
namespace {

std::string MemberName(uint64_t i) {
  // Mix short (inline) and long (heap) members.
  return i % 3 == 0 ? std::to_string(i) : "member:" + std::to_string(i * 7919);
}

TEST(MemberTableTest, DifferentialAgainstUnorderedMap) {
  MemberTable t(MemberTable::Scores::kWith);
  std::unordered_map<std::string, double> ref;
  std::mt19937_64 gen(42);
  for (int step = 0; step < 200000; ++step) {
    std::string m = MemberName(gen() % 5000);
    switch (gen() % 3) {
      case 0:
      case 1: {
        auto [slot, inserted] = t.Insert(m);
        EXPECT_EQ(inserted, ref.count(m) == 0);
        double s = static_cast<double>(step);
        t.set_score(slot, s);
        ref[m] = s;
        break;
      }
      case 2:
        EXPECT_EQ(t.Erase(m), ref.erase(m) == 1);
        break;
    }
    ASSERT_EQ(t.size(), ref.size());
  }
  for (const auto& [m, s] : ref) {
    uint32_t slot = t.Find(m);
    ASSERT_NE(slot, MemberTable::kNotFound) << m;
    EXPECT_EQ(t.member_view(slot), m);
    EXPECT_EQ(t.score(slot), s);
  }
  size_t seen = 0;
  t.ForEach([&](uint32_t slot) {
    ++seen;
    EXPECT_EQ(ref.count(std::string(t.member_view(slot))), 1u);
  });
  EXPECT_EQ(seen, ref.size());
  EXPECT_FALSE(t.Contains("absent-member-name"));
  EXPECT_FALSE(t.Contains(""));
  t.Insert("");
  EXPECT_TRUE(t.Contains(""));
}

TEST(MemberTableTest, ScanReturnsStableMembersDespiteGrowthAndDeletes) {
  MemberTable t;
  for (int i = 0; i < 1000; ++i) t.Insert(MemberName(i));
  std::set<std::string> seen;
  uint64_t cursor = 0;
  int calls = 0, next_insert = 1000;
  do {
    cursor = t.Scan(cursor, 10, [&](uint32_t slot) { seen.emplace(t.member_view(slot)); });
    // Between calls: grow a lot, and delete members that are not part of the stable set.
    for (int k = 0; k < 50; ++k) t.Insert(MemberName(next_insert++));
    for (int k = 0; k < 25; ++k) t.Erase(MemberName(next_insert - 1 - 2 * k));
    ++calls;
  } while (cursor != 0 && calls < 100000);
  ASSERT_EQ(cursor, 0u);
  for (int i = 0; i < 1000; ++i) EXPECT_EQ(seen.count(MemberName(i)), 1u) << i;
  // Shrinking between calls: delete most members, keep every 10th.
  MemberTable u;
  for (int i = 0; i < 4000; ++i) u.Insert(MemberName(i));
  seen.clear();
  cursor = 0;
  bool shrunk = false;
  do {
    cursor = u.Scan(cursor, 16, [&](uint32_t slot) { seen.emplace(u.member_view(slot)); });
    if (!shrunk) {
      for (int i = 0; i < 4000; ++i) {
        if (i % 10 != 0) u.Erase(MemberName(i));
      }
      shrunk = true;
    }
  } while (cursor != 0);
  for (int i = 0; i < 4000; i += 10) EXPECT_EQ(seen.count(MemberName(i)), 1u) << i;
  EXPECT_LT(u.capacity(), 4000u);
}

TEST(MemberTableTest, RandomSlotCoversMembers) {
  MemberTable t;
  for (int i = 0; i < 100; ++i) t.Insert(MemberName(i));
  std::set<std::string> hit;
  std::mt19937_64 gen(1);
  for (int i = 0; i < 20000; ++i) hit.emplace(t.member_view(t.RandomSlot([&] { return gen(); })));
  EXPECT_EQ(hit.size(), 100u);
}

// Every member is drawn equally often: one after a long run of empty slots as often as one in a
// cluster, and in a table reserved far beyond its size (the fallback walk).
TEST(MemberTableTest, RandomSlotIsUniform) {
  for (size_t reserve : {size_t{0}, size_t{1} << 12}) {
    MemberTable t;
    t.Reserve(reserve);
    constexpr int kMembers = 40;
    for (int i = 0; i < kMembers; ++i) t.Insert(MemberName(i));
    std::map<std::string, size_t> index;
    for (int i = 0; i < kMembers; ++i) index.emplace(MemberName(i), index.size());
    std::mt19937_64 gen(reserve + 1);
    std::vector<uint64_t> counts(kMembers, 0);
    for (int i = 0; i < kMembers * 2000; ++i) {
      ++counts[index.at(std::string(t.member_view(t.RandomSlot([&] { return gen(); }))))];
    }
    EXPECT_LT(testing::ChiSquareUniform(counts), testing::ChiSquareCritical(kMembers - 1))
        << reserve;
  }
}

TEST(MemberTableTest, MemoryPerMember) {
  MemberTable t;
  for (int i = 0; i < 100000; ++i) t.Insert(std::to_string(i));  // all inline
  EXPECT_LE(t.MallocUsed(), 100000u * 24);
}

TEST(SortedIndexBorrowedTest, SharesMembersWithTable) {
  MemberTable t(MemberTable::Scores::kWith);
  SortedIndex idx(SortedIndex::MemberOwnership::kBorrowed);
  std::map<std::pair<double, std::string>, int> ref;
  std::mt19937_64 gen(7);
  for (int step = 0; step < 30000; ++step) {
    std::string m = MemberName(gen() % 3000);
    double s = static_cast<double>(gen() % 100);
    uint32_t slot = t.Find(m);
    if (gen() % 3 != 0) {
      if (slot == MemberTable::kNotFound) {
        slot = t.Insert(m).first;
        t.set_score(slot, s);
        ASSERT_TRUE(idx.InsertBorrowed(s, t.member(slot)));
      } else {
        double old = t.score(slot);
        ref.erase({old, m});
        ASSERT_TRUE(idx.UpdateScore(old, m, s));
        t.set_score(slot, s);
      }
      ref[{s, m}] = 1;
    } else if (slot != MemberTable::kNotFound) {
      ref.erase({t.score(slot), m});
      ASSERT_TRUE(idx.Delete(t.score(slot), m));
      t.EraseSlot(slot);
    }
  }
  ASSERT_EQ(idx.size(), ref.size());
  ASSERT_TRUE(idx.CheckInvariants());
  uint64_t rank = 0;
  for (const auto& [k, v] : ref) {
    SortedIndex::Element e = idx.At(rank);
    EXPECT_EQ(e.score, k.first);
    EXPECT_EQ(e.member, k.second);
    EXPECT_EQ(idx.Rank(k.first, k.second), rank);
    ++rank;
  }
  // Range deletion drops members from the table through the callback.
  uint64_t n = idx.DeleteRankRange(0, 10, [&](double, std::string_view m) { t.Erase(m); });
  EXPECT_EQ(n, 10u);
  EXPECT_EQ(t.size(), idx.size());
}

}  // namespace
}  // namespace dashkv
