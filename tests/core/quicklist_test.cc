#include "core/quicklist.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <deque>
#include <limits>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"

namespace dashkv {
namespace {

std::vector<std::string> Forward(const QuickList& ql) {
  std::vector<std::string> out;
  for (auto it = ql.Begin(ListEnd::kHead); it.Valid(); it.Next()) out.push_back(it.Value().ToString());
  return out;
}

std::vector<std::string> Backward(const QuickList& ql) {
  std::vector<std::string> out;
  for (auto it = ql.Begin(ListEnd::kTail); it.Valid(); it.Next()) out.push_back(it.Value().ToString());
  return out;
}

TEST(QuickListTest, Empty) {
  QuickList ql;
  EXPECT_TRUE(ql.empty());
  EXPECT_EQ(ql.Pop(ListEnd::kHead), std::nullopt);
  EXPECT_EQ(ql.Pop(ListEnd::kTail), std::nullopt);
  EXPECT_EQ(ql.Index(0), std::nullopt);
  EXPECT_FALSE(ql.Set(0, "x"));
  EXPECT_FALSE(ql.Insert("a", "b", Where::kAfter));
  EXPECT_EQ(ql.DeleteRange(0, 5), 0u);
  EXPECT_EQ(ql.Remove("a", 0), 0u);
  EXPECT_FALSE(ql.Begin().Valid());
  EXPECT_EQ(ql.BytesUsed(), 0u);
  EXPECT_TRUE(ql.CheckInvariants());
}

TEST(QuickListTest, PushPopIndexBothEnds) {
  QuickList ql(4);
  for (int i = 0; i < 10; ++i) ql.Push(std::to_string(i), ListEnd::kTail);
  for (int i = 1; i <= 3; ++i) ql.Push(absl::StrCat("h", i), ListEnd::kHead);
  // h3 h2 h1 0 1 ... 9
  EXPECT_EQ(ql.size(), 13u);
  EXPECT_EQ(ql.node_count(), 4u);  // [h3 h2 h1] [0..3] [4..7] [8 9] as pushes fill nodes of 4
  EXPECT_EQ(ql.Index(0), "h3");
  EXPECT_EQ(ql.Index(3), "0");
  EXPECT_EQ(ql.Index(-1), "9");
  EXPECT_EQ(ql.Index(-13), "h3");
  EXPECT_EQ(ql.Index(13), std::nullopt);
  EXPECT_EQ(ql.Index(-14), std::nullopt);
  EXPECT_EQ(ql.Pop(ListEnd::kHead), "h3");
  EXPECT_EQ(ql.Pop(ListEnd::kTail), "9");
  EXPECT_EQ(ql.size(), 11u);
  auto it = ql.At(-3, ListEnd::kHead);
  std::vector<std::string> got;
  for (; it.Valid(); it.Next()) got.push_back(it.Value().ToString());
  EXPECT_EQ(got, (std::vector<std::string>{"6", "5", "4", "3", "2", "1", "0", "h1", "h2"}));
  EXPECT_TRUE(ql.CheckInvariants());
}

TEST(QuickListTest, SplitWhenInsertingIntoFullNode) {
  QuickList ql(4);
  for (int i = 0; i < 8; ++i) ql.Push(std::to_string(i), ListEnd::kTail);
  EXPECT_EQ(ql.node_count(), 2u);
  ql.InsertAt(2, "x");  // node [0 1 2 3] is full: split into [0 1 x] [2 3]
  EXPECT_EQ(Forward(ql), (std::vector<std::string>{"0", "1", "x", "2", "3", "4", "5", "6", "7"}));
  EXPECT_EQ(ql.node_count(), 3u);
  EXPECT_TRUE(ql.CheckInvariants());
  // Insert at a node edge goes to the neighbour when it has room.
  ql.InsertAt(5, "y");  // after "3": node [2 3] has room
  EXPECT_EQ(ql.Index(5), "y");
  EXPECT_EQ(ql.node_count(), 3u);
  EXPECT_TRUE(ql.Insert("5", "before5", Where::kBefore));
  EXPECT_TRUE(ql.Insert("7", "after7", Where::kAfter));
  EXPECT_FALSE(ql.Insert("nope", "z", Where::kAfter));
  EXPECT_EQ(Forward(ql), (std::vector<std::string>{"0", "1", "x", "2", "3", "y", "4", "before5", "5",
                                                   "6", "7", "after7"}));
  EXPECT_TRUE(ql.CheckInvariants());
}

TEST(QuickListTest, MergeAfterDeletes) {
  QuickList ql(-1);  // 4 KiB nodes
  for (int i = 0; i < 2000; ++i) ql.Push(std::string(20, 'a' + i % 26), ListEnd::kTail);
  size_t nodes = ql.node_count();
  EXPECT_GT(nodes, 10u);
  // Delete most of every node in the middle: the leftovers merge.
  for (long i = 100; i + 100 < static_cast<long>(ql.size()); i += 10) ql.DeleteRange(i, 150);
  EXPECT_TRUE(ql.CheckInvariants());
  auto s = ql.GetStats();
  EXPECT_LT(s.nodes, nodes);
  // Every pair of neighbours is too big to merge (else a merge was missed around a deletion).
  EXPECT_LE(s.nodes, 2 * (s.uncompressed_bytes / 4096) + 2);
}

TEST(QuickListTest, LargeElementsGetTheirOwnNode) {
  QuickList ql(-1);
  ql.Push("a", ListEnd::kTail);
  ql.Push(std::string(5000, 'L'), ListEnd::kTail);
  ql.Push("b", ListEnd::kTail);
  ql.Push("c", ListEnd::kHead);
  EXPECT_EQ(ql.node_count(), 3u);
  ql.InsertAt(1, std::string(4095, 'M'));  // large again: split not needed, [c a] + [M]
  EXPECT_EQ(ql.Index(1)->size(), 4095u);
  EXPECT_EQ(ql.Index(0), "c");
  EXPECT_EQ(ql.Index(2), "a");
  ql.Set(-1, std::string(9000, 'S'));  // replace "b" in place with a large value
  EXPECT_EQ(ql.Index(-1)->size(), 9000u);
  EXPECT_TRUE(ql.CheckInvariants());
  // Positive fill: the 8 KiB safety limit applies too.
  QuickList pos(100);
  pos.Push("x", ListEnd::kTail);
  pos.Push(std::string(10000, 'y'), ListEnd::kTail);
  pos.Push("z", ListEnd::kTail);
  EXPECT_EQ(pos.node_count(), 3u);
}

TEST(QuickListTest, SetReplacesAndResplits) {
  QuickList ql(-1);
  for (int i = 0; i < 300; ++i) ql.Push(std::string(20, 'a'), ListEnd::kTail);
  ASSERT_TRUE(ql.Set(150, std::string(3000, 'b')));  // no longer fits its node
  ASSERT_TRUE(ql.Set(0, "7"));
  ASSERT_TRUE(ql.Set(-1, "last"));
  EXPECT_FALSE(ql.Set(300, "x"));
  EXPECT_EQ(ql.Index(150), std::string(3000, 'b'));
  EXPECT_EQ(ql.Index(149), std::string(20, 'a'));
  EXPECT_EQ(ql.Index(0), "7");
  EXPECT_EQ(ql.Index(-1), "last");
  EXPECT_EQ(ql.size(), 300u);
  EXPECT_TRUE(ql.CheckInvariants());
}

// LREM key -9223372036854775808 v: every match from the tail, without negating LONG_MIN (UBSan
// reported it).
TEST(QuickListTest, RemoveWithExtremeCounts) {
  QuickList ql(3);
  for (const char* s : {"a", "b", "a", "a", "c", "a"}) ql.Push(s, ListEnd::kTail);
  EXPECT_EQ(ql.Remove("a", std::numeric_limits<long>::min()), 4u);
  EXPECT_EQ(Forward(ql), (std::vector<std::string>{"b", "c"}));
  EXPECT_EQ(ql.Remove("b", std::numeric_limits<long>::max()), 1u);
  EXPECT_EQ(Forward(ql), (std::vector<std::string>{"c"}));
}

TEST(QuickListTest, RemoveCountSemantics) {
  QuickList ql(3);
  std::vector<std::string> v = {"a", "b", "a", "c", "a", "1", "a", "b", "1", "a"};
  for (auto& s : v) ql.Push(s, ListEnd::kTail);
  EXPECT_EQ(ql.Remove("a", 2), 2u);  // first two
  EXPECT_EQ(Forward(ql), (std::vector<std::string>{"b", "c", "a", "1", "a", "b", "1", "a"}));
  EXPECT_EQ(ql.Remove("a", -2), 2u);  // last two
  EXPECT_EQ(Forward(ql), (std::vector<std::string>{"b", "c", "a", "1", "b", "1"}));
  EXPECT_EQ(ql.Remove("1", 0), 2u);
  EXPECT_EQ(ql.Remove("zz", 0), 0u);
  EXPECT_EQ(Forward(ql), (std::vector<std::string>{"b", "c", "a", "b"}));
  EXPECT_EQ(ql.Remove("b", 0), 2u);
  EXPECT_EQ(ql.Remove("c", 1), 1u);
  EXPECT_EQ(ql.Remove("a", -1), 1u);
  EXPECT_TRUE(ql.empty());
  EXPECT_EQ(ql.node_count(), 0u);
  EXPECT_TRUE(ql.CheckInvariants());
}

TEST(QuickListTest, TrimLikeLtrim) {
  auto make = [] {
    QuickList ql(2);
    for (int i = 0; i < 10; ++i) ql.Push(std::to_string(i), ListEnd::kTail);
    return ql;
  };
  QuickList a = make();
  a.Trim(2, -3);
  EXPECT_EQ(Forward(a), (std::vector<std::string>{"2", "3", "4", "5", "6", "7"}));
  QuickList b = make();
  b.Trim(5, 2);
  EXPECT_TRUE(b.empty());
  QuickList c = make();
  c.Trim(-100, 100);
  EXPECT_EQ(c.size(), 10u);
  QuickList d = make();
  d.Trim(9, 20);
  EXPECT_EQ(Forward(d), (std::vector<std::string>{"9"}));
  QuickList e = make();
  e.Trim(10, 20);
  EXPECT_TRUE(e.empty());
  EXPECT_TRUE(a.CheckInvariants() && b.CheckInvariants() && d.CheckInvariants());
}

// Compression boundaries: with depth N, exactly max(0, nodes - 2N) inner nodes are compressed,
// through growth and shrinkage at both ends and in the middle.
TEST(QuickListTest, CompressionBoundariesAtEveryDepth) {
  const std::string val(100, 'c');  // 4 per node (fill 4): ~415-byte, compressible nodes
  for (int depth = 0; depth <= 3; ++depth) {
    for (int nodes = 1; nodes <= 12; ++nodes) {
      QuickList ql(4, depth);
      for (int i = 0; i < nodes * 4; ++i) {
        ql.Push(val, i % 2 ? ListEnd::kHead : ListEnd::kTail);
        ASSERT_TRUE(ql.CheckInvariants()) << depth << " " << nodes << " " << i;
      }
      ASSERT_GE(ql.node_count(), static_cast<size_t>(nodes));
      auto expected = [&](size_t n) { return depth == 0 || n <= 2u * depth ? 0 : n - 2 * depth; };
      EXPECT_EQ(ql.GetStats().compressed_nodes, expected(ql.node_count()))
          << "depth " << depth << " nodes " << nodes;
      // Reads do not decompress nodes.
      EXPECT_EQ(Forward(ql).size(), ql.size());
      EXPECT_EQ(ql.Index(static_cast<long>(ql.size() / 2)), val);
      EXPECT_EQ(ql.GetStats().compressed_nodes, expected(ql.node_count()));
      // Middle mutations, then shrink from both ends.
      ql.InsertAt(ql.size() / 2, "mid");
      ql.Set(static_cast<long>(ql.size() / 3), "set");
      ASSERT_TRUE(ql.CheckInvariants());
      ql.Remove("mid", 0);
      ql.DeleteRange(static_cast<long>(ql.size() / 4), ql.size() / 4);
      ASSERT_TRUE(ql.CheckInvariants());
      while (!ql.empty()) {
        ql.Pop(ql.size() % 2 ? ListEnd::kHead : ListEnd::kTail);
        ASSERT_TRUE(ql.CheckInvariants()) << depth << " " << nodes;
        EXPECT_EQ(ql.GetStats().compressed_nodes, expected(ql.node_count()));
      }
    }
  }
}

TEST(QuickListTest, SetOptionsRecompresses) {
  QuickList ql(4, 0);
  for (int i = 0; i < 40; ++i) ql.Push(std::string(100, 'q'), ListEnd::kTail);
  EXPECT_EQ(ql.GetStats().compressed_nodes, 0u);
  ql.SetOptions(4, 1);
  EXPECT_EQ(ql.GetStats().compressed_nodes, 8u);
  EXPECT_TRUE(ql.CheckInvariants());
  ql.SetOptions(4, 0);
  EXPECT_EQ(ql.GetStats().compressed_nodes, 0u);
  EXPECT_TRUE(ql.CheckInvariants());
}

TEST(QuickListTest, IncompressibleNodesStayRaw) {
  QuickList ql(4, 1);
  std::mt19937_64 rng(1);
  for (int i = 0; i < 40; ++i) {
    std::string s(100, ' ');
    for (char& c : s) c = static_cast<char>(rng());
    ql.Push(s, ListEnd::kTail);
  }
  EXPECT_EQ(ql.GetStats().compressed_nodes, 0u);
  EXPECT_TRUE(ql.CheckInvariants());
}

TEST(QuickListTest, NodeBytesRoundTrip) {
  QuickList ql(-2, 1);
  for (int i = 0; i < 5000; ++i) ql.Push(i % 3 ? std::to_string(i) : absl::StrCat("v", i), ListEnd::kTail);
  QuickList copy(-2, 1);
  size_t nodes = 0;
  ql.ForEachNode([&](std::string_view lp) {
    ASSERT_TRUE(ListpackView::Validate(lp));
    copy.AppendNode(Listpack::Copy(lp));
    ++nodes;
  });
  EXPECT_EQ(nodes, ql.node_count());
  EXPECT_EQ(Forward(copy), Forward(ql));
  EXPECT_TRUE(copy.CheckInvariants());
  EXPECT_EQ(copy.GetStats().compressed_nodes, ql.GetStats().compressed_nodes);
  copy.AppendNode(Listpack());
  EXPECT_EQ(copy.node_count(), nodes);
}

// The memory figure of issue 4: 100,000 LPUSH of a 31-byte value.
TEST(QuickListTest, MemoryFigure100kLpush) {
  const std::string v = "in-memory data structure store.";
  ASSERT_EQ(v.size(), 31u);
  for (int depth : {0, 1}) {
    QuickList ql(-2, depth);
    for (int i = 0; i < 100000; ++i) ql.Push(v, ListEnd::kHead);
    auto s = ql.GetStats();
    size_t kb = (ql.BytesUsed() + 1023) / 1024;
    std::printf("depth %d: %zu KiB used, %zu nodes, %.1f entries/node, %zu compressed, "
                "%zu raw bytes, %zu stored bytes\n",
                depth, kb, s.nodes, s.avg_node_entries(), s.compressed_nodes, s.uncompressed_bytes,
                s.stored_bytes);
    EXPECT_LE(kb, depth == 0 ? 3251u : 105u);
    EXPECT_TRUE(ql.CheckInvariants());
  }
}

// Randomized differential test against std::deque for several node limits and depths.
class QuickListDiffTest : public testing::TestWithParam<std::tuple<int, int>> {};

TEST_P(QuickListDiffTest, MatchesDeque) {
  auto [fill, depth] = GetParam();
  std::mt19937 rng(fill * 31 + depth);
  QuickList ql(fill, depth);
  std::deque<std::string> ref;
  auto rand_val = [&]() -> std::string {
    switch (rng() % 8) {
      case 0:
        return std::to_string(static_cast<int>(rng() % 2000) - 1000);
      case 1:
        return std::to_string(rng());
      case 2:
        return std::string(1 + rng() % 8, 'a' + rng() % 3);  // small value set: LREM hits
      case 3:
        return std::string(rng() % 200, 'x');
      case 4:
        if (rng() % 20 == 0) return std::string(4000 + rng() % 6000, 'L');  // large elements
        return absl::StrCat("k", rng() % 50);
      default:
        return absl::StrCat("v", rng() % 1000);
    }
  };
  const int kOps = 60000;
  for (int step = 0; step < kOps; ++step) {
    unsigned op = rng() % 100;
    long n = static_cast<long>(ref.size());
    if (op < 40 || n == 0) {
      std::string v = rand_val();
      if (rng() % 2) {
        ql.Push(v, ListEnd::kHead);
        ref.push_front(v);
      } else {
        ql.Push(v, ListEnd::kTail);
        ref.push_back(v);
      }
    } else if (op < 58) {
      ListEnd end = rng() % 2 ? ListEnd::kHead : ListEnd::kTail;
      auto got = ql.Pop(end);
      ASSERT_TRUE(got.has_value());
      if (end == ListEnd::kHead) {
        ASSERT_EQ(*got, ref.front());
        ref.pop_front();
      } else {
        ASSERT_EQ(*got, ref.back());
        ref.pop_back();
      }
    } else if (op < 66) {
      size_t i = rng() % (n + 1);
      std::string v = rand_val();
      ql.InsertAt(i, v);
      ref.insert(ref.begin() + i, v);
    } else if (op < 70) {
      std::string pivot = ref[rng() % n];
      std::string v = rand_val();
      Where w = rng() % 2 ? Where::kBefore : Where::kAfter;
      ASSERT_TRUE(ql.Insert(pivot, v, w));
      auto it = std::find(ref.begin(), ref.end(), pivot);
      ref.insert(w == Where::kBefore ? it : it + 1, v);
    } else if (op < 78) {
      long i = static_cast<long>(rng() % n) - (rng() % 2 ? n : 0);
      std::string v = rand_val();
      ASSERT_TRUE(ql.Set(i, v));
      ref[i < 0 ? i + n : i] = v;
    } else if (op < 84) {
      long start = static_cast<long>(rng() % n);
      size_t count = rng() % 3 == 0 ? rng() % 600 : rng() % 10;
      size_t d = ql.DeleteRange(start, count);
      size_t expect = std::min<size_t>(count, n - start);
      ASSERT_EQ(d, expect);
      ref.erase(ref.begin() + start, ref.begin() + start + expect);
    } else if (op < 88) {
      std::string v = rng() % 4 ? ref[rng() % n] : rand_val();
      long count = static_cast<long>(rng() % 5) - 2;
      size_t removed = 0;
      if (count >= 0) {
        for (auto it = ref.begin(); it != ref.end() && (count == 0 || removed < size_t(count));) {
          if (*it == v) {
            it = ref.erase(it);
            ++removed;
          } else {
            ++it;
          }
        }
      } else {
        for (long i = n - 1; i >= 0 && removed < size_t(-count); --i) {
          if (ref[i] == v) {
            ref.erase(ref.begin() + i);
            ++removed;
          }
        }
      }
      ASSERT_EQ(ql.Remove(v, count), removed);
    } else if (op < 90) {
      long start = static_cast<long>(rng() % (n + 2)) - 1;
      long stop = static_cast<long>(rng() % (n + 2)) - (rng() % 2 ? n : 0);
      ql.Trim(start, stop);
      long s = start < 0 ? std::max(0L, start + n) : start;
      long e = stop < 0 ? stop + n : std::min(stop, n - 1);
      if (s > e || s >= n) {
        ref.clear();
      } else {
        ref.erase(ref.begin() + e + 1, ref.end());
        ref.erase(ref.begin(), ref.begin() + s);
      }
    } else {
      long i = static_cast<long>(rng() % n) - (rng() % 2 ? n : 0);
      ASSERT_EQ(ql.Index(i), ref[i < 0 ? i + n : i]);
      // A short LRANGE from there.
      auto it = ql.At(i, ListEnd::kTail);
      long j = i < 0 ? i + n : i;
      for (int k = 0; k < 5 && it.Valid(); ++k, ++j, it.Next()) ASSERT_EQ(it.Value().ToString(), ref[j]);
    }
    if (ref.size() > 3000) {  // keep the list in a range where every op stays interesting
      ql.DeleteRange(0, 1500);
      ref.erase(ref.begin(), ref.begin() + 1500);
    }
    ASSERT_EQ(ql.size(), ref.size()) << step;
    if (step % 1000 == 0 || step == kOps - 1) {
      ASSERT_TRUE(ql.CheckInvariants()) << step;
      ASSERT_EQ(Forward(ql), std::vector<std::string>(ref.begin(), ref.end())) << step;
      ASSERT_EQ(Backward(ql), std::vector<std::string>(ref.rbegin(), ref.rend())) << step;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(FillsAndDepths, QuickListDiffTest,
                         testing::Combine(testing::Values(-2, -1, 1, 5, 64),
                                          testing::Values(0, 1, 2, 3)));

}  // namespace
}  // namespace dashkv
