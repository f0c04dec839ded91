#include "core/sorted_index.h"

#include <gtest/gtest.h>

#include <cmath>
#include <iterator>
#include <limits>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace dashkv {
namespace {

using Ref = std::set<std::pair<double, std::string>>;

std::vector<std::pair<double, std::string>> Dump(const SortedIndex& idx) {
  std::vector<std::pair<double, std::string>> out;
  for (auto it = idx.Begin(); it.Valid(); it.Next()) out.emplace_back(it.score(), it.member());
  return out;
}

std::vector<std::pair<double, std::string>> DumpBackward(const SortedIndex& idx) {
  std::vector<std::pair<double, std::string>> out;
  for (auto it = idx.Last(); it.Valid(); it.Prev()) out.emplace_back(it.score(), it.member());
  return out;
}

TEST(PackedMemberTest, InlineAndHeap) {
  for (size_t len : {0, 1, 6, 7, 8, 100, 127, 128, 300, 20000}) {
    std::string s(len, 'x');
    for (size_t i = 0; i < len; ++i) s[i] = static_cast<char>(i * 31 + 7);
    PackedMember m = PackedMember::Make(s);
    EXPECT_EQ(m.is_inline(), len <= 7);
    EXPECT_EQ(m.view(), s);
    EXPECT_EQ(m.HeapBytes(), len <= 7 ? 0 : len + (len < 128 ? 1 : (len < 16384 ? 2 : 3)));
    PackedMember copy = PackedMember::FromBits(m.bits());
    EXPECT_EQ(copy.view(), s);
    m.Free();
  }
}

TEST(SortedIndexTest, BasicOrderAndRank) {
  SortedIndex idx;
  EXPECT_TRUE(idx.Insert(2, "b"));
  EXPECT_TRUE(idx.Insert(1, "z"));
  EXPECT_TRUE(idx.Insert(2, "a"));
  EXPECT_TRUE(idx.Insert(2, "ab"));
  EXPECT_TRUE(idx.Insert(-std::numeric_limits<double>::infinity(), "m"));
  EXPECT_FALSE(idx.Insert(2, "a"));
  EXPECT_EQ(idx.size(), 5u);
  auto d = Dump(idx);
  std::vector<std::pair<double, std::string>> want = {
      {-std::numeric_limits<double>::infinity(), "m"}, {1, "z"}, {2, "a"}, {2, "ab"}, {2, "b"}};
  EXPECT_EQ(d, want);
  EXPECT_EQ(idx.Rank(2, "ab"), 3u);
  EXPECT_EQ(idx.Rank(2, "abc"), std::nullopt);
  EXPECT_EQ(idx.At(1).member, "z");
  EXPECT_TRUE(idx.Delete(2, "a"));
  EXPECT_FALSE(idx.Delete(2, "a"));
  EXPECT_EQ(idx.Rank(2, "b"), 3u);
  EXPECT_TRUE(idx.CheckInvariants());
}

TEST(SortedIndexTest, NegativeZeroEqualsZero) {
  SortedIndex idx;
  EXPECT_TRUE(idx.Insert(0.0, "b"));
  EXPECT_TRUE(idx.Insert(-0.0, "a"));
  EXPECT_FALSE(idx.Insert(-0.0, "b"));
  EXPECT_EQ(idx.Rank(0.0, "a"), 0u);
}

TEST(SortedIndexTest, MembersWithBinaryBytesCompareUnsigned) {
  SortedIndex idx;
  idx.Insert(1, std::string("\x80", 1));
  idx.Insert(1, std::string("\x01", 1));
  idx.Insert(1, std::string("\x00", 1));
  idx.Insert(1, "");
  idx.Insert(1, std::string("\x00\x00", 2));
  auto d = Dump(idx);
  ASSERT_EQ(d.size(), 5u);
  EXPECT_EQ(d[0].second, "");
  EXPECT_EQ(d[1].second, std::string("\x00", 1));
  EXPECT_EQ(d[2].second, std::string("\x00\x00", 2));
  EXPECT_EQ(d[4].second, std::string("\x80", 1));
}

// Random member: short (inline) or long (heap), from a small alphabet so ties on score and
// common prefixes are frequent.
std::string RandomMember(std::mt19937_64& rng) {
  size_t len = rng() % 4 == 0 ? 8 + rng() % 20 : rng() % 8;
  std::string s(len, 'a');
  for (char& c : s) c = static_cast<char>('a' + rng() % 3);
  if (rng() % 50 == 0 && !s.empty()) s[0] = '\xff';
  return s;
}

double RandomScore(std::mt19937_64& rng) {
  switch (rng() % 10) {
    case 0: return std::numeric_limits<double>::infinity();
    case 1: return -std::numeric_limits<double>::infinity();
    default: return static_cast<double>(static_cast<int>(rng() % 200) - 100) / 4;
  }
}

uint64_t RefCountBelow(const Ref& ref, double v, bool inclusive) {
  uint64_t n = 0;
  for (auto& [s, m] : ref) n += inclusive ? (s <= v) : (s < v);
  return n;
}

void CheckAgainst(const SortedIndex& idx, const Ref& ref, std::mt19937_64& rng) {
  ASSERT_TRUE(idx.CheckInvariants());
  ASSERT_EQ(idx.size(), ref.size());
  std::vector<std::pair<double, std::string>> fwd(ref.begin(), ref.end());
  ASSERT_EQ(Dump(idx), fwd);
  std::vector<std::pair<double, std::string>> bwd(ref.rbegin(), ref.rend());
  ASSERT_EQ(DumpBackward(idx), bwd);
  for (int q = 0; q < 50 && !fwd.empty(); ++q) {
    uint64_t r = rng() % fwd.size();
    ASSERT_EQ(idx.Rank(fwd[r].first, fwd[r].second), r);
    auto e = idx.At(r);
    ASSERT_EQ(e.score, fwd[r].first);
    ASSERT_EQ(e.member, fwd[r].second);
    // Iterate a few steps both ways from a random rank.
    auto it = idx.Seek(r);
    for (uint64_t k = r; k < std::min<uint64_t>(r + 40, fwd.size()); ++k, it.Next()) {
      ASSERT_TRUE(it.Valid());
      ASSERT_EQ(it.member(), fwd[k].second);
    }
    it = idx.Seek(r);
    for (int64_t k = static_cast<int64_t>(r); k >= 0 && k + 40 > static_cast<int64_t>(r);
         --k, it.Prev()) {
      ASSERT_TRUE(it.Valid());
      ASSERT_EQ(it.member(), fwd[k].second);
    }
  }
  for (int q = 0; q < 10; ++q) {
    double v = RandomScore(rng);
    ASSERT_EQ(idx.ScoreLowerRank(v, false), RefCountBelow(ref, v, false));
    ASSERT_EQ(idx.ScoreLowerRank(v, true), RefCountBelow(ref, v, true));
    ASSERT_EQ(idx.ScoreUpperRank(v, false), RefCountBelow(ref, v, true));
    ASSERT_EQ(idx.ScoreUpperRank(v, true), RefCountBelow(ref, v, false));
  }
}

TEST(SortedIndexTest, RandomDifferentialAgainstStdSet) {
  std::mt19937_64 rng(42);
  SortedIndex idx;
  Ref ref;
  std::vector<std::pair<double, std::string>> live;  // may hold stale entries; fine for picks
  constexpr int kOps = 300000;
  for (int op = 0; op < kOps; ++op) {
    // Phases: grow, then mixed, then shrink, so merges and root collapses happen too.
    int phase = op * 3 / kOps;
    uint64_t dice = rng() % 100;
    int insert_pct = phase == 0 ? 80 : (phase == 1 ? 50 : 25);
    if (dice < static_cast<uint64_t>(insert_pct)) {
      double s = RandomScore(rng);
      std::string m = RandomMember(rng);
      ASSERT_EQ(idx.Insert(s, m), ref.emplace(s, m).second);
      live.emplace_back(s, m);
    } else if (dice < 95 || ref.empty()) {
      if (live.empty()) continue;
      size_t k = rng() % live.size();
      auto [s, m] = live[k];
      ASSERT_EQ(idx.Delete(s, m), ref.erase({s, m}) == 1);
      live[k] = live.back();
      live.pop_back();
    } else {
      // Update score of an existing element.
      auto it = ref.begin();
      std::advance(it, rng() % std::min<size_t>(ref.size(), 64));
      auto [s, m] = *it;
      double ns = RandomScore(rng);
      if (ref.count({ns, m}) && ns != s) continue;
      ASSERT_TRUE(idx.UpdateScore(s, m, ns));
      ref.erase(it);
      ref.emplace(ns, m);
      live.emplace_back(ns, m);
    }
    if (op % 20000 == 0) CheckAgainst(idx, ref, rng);
  }
  CheckAgainst(idx, ref, rng);
}

TEST(SortedIndexTest, RangeDeletesAgainstStdSet) {
  std::mt19937_64 rng(7);
  for (int round = 0; round < 30; ++round) {
    SortedIndex idx;
    Ref ref;
    int n = static_cast<int>(rng() % 5000);
    for (int i = 0; i < n; ++i) {
      double s = RandomScore(rng);
      std::string m = RandomMember(rng);
      idx.Insert(s, m);
      ref.emplace(s, m);
    }
    std::vector<std::pair<double, std::string>> deleted;
    auto cb = [&](double s, std::string_view m) { deleted.emplace_back(s, std::string(m)); };
    switch (round % 3) {
      case 0: {
        uint64_t a = ref.empty() ? 0 : rng() % ref.size();
        uint64_t b = a + rng() % 2000;
        std::vector<std::pair<double, std::string>> want;
        auto it = ref.begin();
        std::advance(it, a);
        for (uint64_t k = a; k < b && it != ref.end(); ++k) want.push_back(*it), it = ref.erase(it);
        EXPECT_EQ(idx.DeleteRankRange(a, b, cb), want.size());
        EXPECT_EQ(deleted, want);
        break;
      }
      case 1: {
        ScoreRange r{RandomScore(rng), RandomScore(rng), rng() % 2 == 0, rng() % 2 == 0};
        std::vector<std::pair<double, std::string>> want;
        for (auto it = ref.begin(); it != ref.end();) {
          if (!r.IsEmpty() && r.Contains(it->first)) {
            want.push_back(*it);
            it = ref.erase(it);
          } else {
            ++it;
          }
        }
        auto [first, last] = idx.ScoreRangeRanks(r);
        EXPECT_EQ(last - first, want.size());
        EXPECT_EQ(idx.DeleteScoreRange(r, cb), want.size());
        EXPECT_EQ(deleted, want);
        break;
      }
      default: {
        // Lex: all scores equal.
        SortedIndex lex;
        std::set<std::string> lref;
        for (int i = 0; i < n; ++i) {
          std::string m = RandomMember(rng);
          lex.Insert(0, m);
          lref.insert(m);
        }
        auto pick = [&]() -> std::string {
          switch (rng() % 5) {
            case 0: return "-";
            case 1: return "+";
            case 2: return "(" + RandomMember(rng);
            default: return "[" + RandomMember(rng);
          }
        };
        for (int q = 0; q < 20; ++q) {
          auto range = ParseLexRange(pick(), pick());
          ASSERT_TRUE(range);
          uint64_t count = 0;
          for (auto& m : lref) count += range->IsEmpty() ? 0 : range->Contains(m);
          auto [first, last] = lex.LexRangeRanks(*range);
          ASSERT_EQ(last - first, count);
          if (count > 0) {
            ASSERT_TRUE(range->Contains(lex.At(first).member));
            if (first > 0) {
              ASSERT_FALSE(range->Contains(lex.At(first - 1).member));
            }
          }
        }
        auto range = ParseLexRange(pick(), pick());
        std::vector<std::pair<double, std::string>> want;
        for (auto it = lref.begin(); it != lref.end();) {
          if (!range->IsEmpty() && range->Contains(*it)) {
            want.emplace_back(0, *it);
            it = lref.erase(it);
          } else {
            ++it;
          }
        }
        EXPECT_EQ(lex.DeleteLexRange(*range, cb), want.size());
        EXPECT_EQ(deleted, want);
        EXPECT_TRUE(lex.CheckInvariants());
        EXPECT_EQ(lex.size(), lref.size());
        break;
      }
    }
    ASSERT_TRUE(idx.CheckInvariants());
    std::vector<std::pair<double, std::string>> fwd(ref.begin(), ref.end());
    ASSERT_EQ(Dump(idx), fwd);
  }
}

TEST(SortedIndexTest, SequentialInsertDeleteBothEnds) {
  SortedIndex idx;
  for (int i = 0; i < 50000; ++i) ASSERT_TRUE(idx.Insert(i, "m" + std::to_string(i)));
  ASSERT_TRUE(idx.CheckInvariants());
  EXPECT_EQ(idx.Rank(49999, "m49999"), 49999u);
  for (int i = 0; i < 25000; ++i) {
    // Pop min and pop max alternately.
    auto e = idx.At(i % 2 == 0 ? 0 : idx.size() - 1);
    std::string m(e.member);
    ASSERT_TRUE(idx.Delete(e.score, m));
  }
  ASSERT_TRUE(idx.CheckInvariants());
  EXPECT_EQ(idx.At(0).score, 12500);
  idx.DeleteRankRange(0, idx.size(), [](double, std::string_view) {});
  EXPECT_TRUE(idx.empty());
  EXPECT_TRUE(idx.CheckInvariants());
  EXPECT_FALSE(idx.Begin().Valid());
  EXPECT_FALSE(idx.Last().Valid());
}

TEST(SortedIndexTest, UpdateScoreInPlaceAndMoving) {
  SortedIndex idx;
  for (int i = 0; i < 1000; ++i) idx.Insert(i, "member-" + std::to_string(i));
  size_t mem = idx.MemoryUsage();
  EXPECT_TRUE(idx.UpdateScore(10, "member-10", 10.5));  // stays in place
  EXPECT_EQ(idx.Rank(10.5, "member-10"), 10u);
  EXPECT_TRUE(idx.UpdateScore(10.5, "member-10", 2000));  // moves to the end
  EXPECT_EQ(idx.Rank(2000, "member-10"), 999u);
  EXPECT_FALSE(idx.UpdateScore(10, "member-10", 3));
  // Same member blobs (no reallocation); nodes may split or merge differently.
  EXPECT_LT(std::abs(static_cast<long>(idx.MemoryUsage()) - static_cast<long>(mem)), 2000);
  EXPECT_TRUE(idx.CheckInvariants());
}

TEST(SortedIndexTest, MoveAndClear) {
  SortedIndex a;
  for (int i = 0; i < 100; ++i) a.Insert(i, std::string(20, static_cast<char>('a' + i % 26)) +
                                                std::to_string(i));
  SortedIndex b = std::move(a);
  EXPECT_EQ(b.size(), 100u);
  EXPECT_TRUE(a.empty());  // NOLINT: moved-from is empty and usable
  a.Insert(1, "x");
  a = std::move(b);
  EXPECT_EQ(a.size(), 100u);
  a.Clear();
  EXPECT_TRUE(a.empty());
  EXPECT_TRUE(a.CheckInvariants());
}

}  // namespace
}  // namespace dashkv
