// StringMap tests: set/find/erase, a random differential test against std::unordered_map,
// SCAN guarantees across growth and shrink, random entries and memory accounting.
#include "core/string_map.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/hash.h"
#include "tests/testing/chi_square.h"

namespace dashkv {
namespace {

std::string Str(const CompactObj& o) { return o.ToString(); }

TEST(StringMapTest, SetFindErase) {
  StringMap m;
  EXPECT_EQ(m.Find("a"), nullptr);
  EXPECT_FALSE(m.Erase("a"));
  EXPECT_TRUE(m.Set("a", "1"));
  EXPECT_FALSE(m.Set("a", "2"));
  EXPECT_FALSE(m.SetIfMissing("a", "3"));
  EXPECT_TRUE(m.SetIfMissing("b", std::string(100, 'x')));
  ASSERT_NE(m.Find("a"), nullptr);
  EXPECT_EQ(Str(*m.Find("a")), "2");
  EXPECT_EQ(Str(*m.Find("b")), std::string(100, 'x'));
  EXPECT_EQ(m.size(), 2u);
  EXPECT_TRUE(m.Erase("a"));
  EXPECT_EQ(m.Find("a"), nullptr);
  EXPECT_EQ(m.size(), 1u);
  // Fields of every CompactObj form: empty, inline, packed, integer-like, heap.
  for (std::string f : {std::string(""), std::string("12345"), std::string("1234567890123456789"), std::string(16, 'p'),
                        std::string(40, 'h'), std::string("\0bin", 4)}) {
    EXPECT_TRUE(m.Set(f, f + "v"));
    EXPECT_EQ(Str(*m.Find(f)), f + "v");
  }
}

TEST(StringMapTest, RandomDifferential) {
  std::mt19937_64 rng(42);
  StringMap m;
  std::unordered_map<std::string, std::string> ref;
  for (int step = 0; step < 200000; ++step) {
    std::string f = "f" + std::to_string(rng() % 5000);
    switch (rng() % 4) {
      case 0:
      case 1: {
        std::string v = std::string(rng() % 40, 'v') + std::to_string(step);
        EXPECT_EQ(m.Set(f, v), ref.count(f) == 0);
        ref[f] = v;
        break;
      }
      case 2:
        EXPECT_EQ(m.Erase(f), ref.erase(f) == 1);
        break;
      default: {
        const CompactObj* v = m.Find(f);
        auto it = ref.find(f);
        ASSERT_EQ(v != nullptr, it != ref.end());
        if (v) {
          EXPECT_EQ(Str(*v), it->second);
        }
      }
    }
    ASSERT_EQ(m.size(), ref.size());
  }
  size_t n = 0;
  m.ForEach([&](const CompactObj& f, const CompactObj& v) {
    ++n;
    EXPECT_EQ(ref.at(Str(f)), Str(v));
  });
  EXPECT_EQ(n, ref.size());
}

// Every field present during the whole scan is reported, even when the table grows or shrinks
// between the calls.
TEST(StringMapTest, ScanAcrossResize) {
  for (int mode = 0; mode < 2; ++mode) {
    StringMap m;
    for (int i = 0; i < 1000; ++i) m.Set("keep" + std::to_string(i), "v");
    if (mode == 1) {
      for (int i = 0; i < 20000; ++i) m.Set("tmp" + std::to_string(i), "v");
    }
    std::set<std::string> seen;
    uint64_t cursor = 0;
    int calls = 0, extra = 0;
    do {
      cursor = m.Scan(cursor, [&](const CompactObj& f, const CompactObj&) { seen.insert(Str(f)); });
      ++calls;
      if (mode == 0 && calls % 3 == 0 && extra < 5000) {  // grow 1000 -> 6000
        for (int i = 0; i < 100; ++i) m.Set("new" + std::to_string(extra++), "v");
      } else if (mode == 1 && calls % 3 == 0) {  // shrink
        for (int i = 0; i < 500 && extra < 20000; ++i) m.Erase("tmp" + std::to_string(extra++));
      }
    } while (cursor != 0);
    for (int i = 0; i < 1000; ++i) EXPECT_TRUE(seen.count("keep" + std::to_string(i))) << i;
  }
}

TEST(StringMapTest, ShrinksAndRandomEntry) {
  StringMap m;
  for (int i = 0; i < 4096; ++i) m.Set(std::to_string(i) + "x", "v");
  size_t big = m.bucket_count();
  for (int i = 0; i < 4090; ++i) m.Erase(std::to_string(i) + "x");
  EXPECT_LT(m.bucket_count(), big / 8);
  std::mt19937_64 rng(1);
  std::set<std::string> picked;
  for (int i = 0; i < 200; ++i) {
    m.RandomEntry([&] { return rng(); },
                  [&](const CompactObj& f, const CompactObj&) { picked.insert(Str(f)); });
  }
  EXPECT_EQ(picked.size(), 6u);  // all 6 remaining fields show up
}

// Fields in chains of different lengths are drawn equally often (a "random bucket, then a random
// chain entry" draw favours fields alone in their bucket).
TEST(StringMapTest, RandomEntryIsUniform) {
  for (int n : {10, 40, 300}) {
    StringMap m;
    std::unordered_map<std::string, size_t> index;
    for (int i = 0; i < n; ++i) {
      std::string f = "field:" + std::to_string(i);
      m.Set(f, std::string(80, 'v'));
      index.emplace(f, index.size());
    }
    std::mt19937_64 rng(n);
    std::vector<uint64_t> counts(n, 0);
    for (int i = 0; i < n * 2000; ++i) {
      m.RandomEntry([&] { return rng(); },
                    [&](const CompactObj& f, const CompactObj&) { ++counts[index.at(Str(f))]; });
    }
    EXPECT_LT(testing::ChiSquareUniform(counts), testing::ChiSquareCritical(n - 1)) << n;
  }
}

TEST(StringMapTest, MallocUsedTracksStrings) {
  StringMap m;
  EXPECT_EQ(m.MallocUsed(), 0u);
  m.Set("a", "1");
  size_t small = m.MallocUsed();
  m.Set("a", std::string(1000, 'x'));
  EXPECT_GE(m.MallocUsed(), small + 1000);
  m.Set("a", "1");
  EXPECT_EQ(m.MallocUsed(), small);
  m.Erase("a");
  EXPECT_LT(m.MallocUsed(), small);
}

// Fields set in the iteration order of another map (HGETALL replayed into HSET): chaining keeps
// every chain as long as in any order, and each map hashes with its own key besides.
TEST(StringMapTest, SetInAnotherMapsOrderKeepsChainsShort) {
  StringMap source(/*hash_key=*/1);
  for (int i = 0; i < 100000; ++i) source.Set("field:" + std::to_string(i), "v");
  std::vector<std::string> order;
  source.ForEach([&](const CompactObj& f, const CompactObj&) { order.push_back(Str(f)); });
  for (uint64_t key : {uint64_t{1}, uint64_t{2}}) {
    StringMap copy(key);
    size_t worst = 0;
    for (const std::string& f : order) {
      copy.Set(f, "v");
      worst = std::max(worst, copy.max_chain());
    }
    EXPECT_LE(worst, 16u) << key;  // ~8 seen: the longest of 100k chains at load <= 1
  }
}

// Fields that collide under the unkeyed hash whatever its seed (the last 8 of 16 bytes zero a
// multiply operand) used to share one chain: O(n) per HSET. The map's key spreads them.
TEST(StringMapTest, CraftedCollisionsOfTheUnkeyedHashSpreadOut) {
  StringMap m;
  StringMap other;
  EXPECT_NE(m.hash_key(), other.hash_key());
  for (uint64_t i = 0; i < 5000; ++i) {
    char buf[16];
    uint64_t k1 = detail::kK1;
    std::memcpy(buf, &i, 8);
    std::memcpy(buf + 8, &k1, 8);
    m.Set(std::string_view(buf, 16), "v");
  }
  EXPECT_EQ(m.size(), 5000u);
  EXPECT_LE(m.max_chain(), 16u);
}

}  // namespace
}  // namespace dashkv
