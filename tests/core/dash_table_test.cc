#include "core/dash_table.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "core/hash.h"
#include "tests/testing/chi_square.h"

namespace dashkv {
namespace {

#ifdef DASHKV_SANITIZER
constexpr int kScale = 10;  // sanitizer builds run 10x fewer random operations
#else
constexpr int kScale = 1;
#endif

template <unsigned R, unsigned S, unsigned N, bool kMemcpy = true>
struct U64Policy : DashPolicyBase {
  static constexpr unsigned kRegularBuckets = R;
  static constexpr unsigned kStashBuckets = S;
  static constexpr unsigned kSlotsPerBucket = N;
  static constexpr bool kRelocateByMemcpy = kMemcpy;
  static uint64_t HashFn(uint64_t k) { return HashU64(k); }
};

using TinyPolicy = U64Policy<4, 1, 4>;
using SmallPolicy = U64Policy<8, 2, 6>;
using ServerPolicy = U64Policy<56, 4, 14>;

struct StrPolicy : DashPolicyBase {
  static uint64_t HashFn(std::string_view s) { return HashBytes(s); }
  static bool Equal(const std::string& a, std::string_view b) { return a == b; }
};
using StrTable = DashTable<std::string, std::string, StrPolicy>;

// Long strings so that relocation by move + destroy is exercised on heap-owning objects.
std::string Str(uint64_t i) { return "key-with-a-long-prefix-to-force-heap-" + std::to_string(i); }

template <typename Table>
absl::flat_hash_set<uint64_t> AllKeys(Table& t) {
  absl::flat_hash_set<uint64_t> keys;
  for (auto it = t.begin(); !it.is_done(); ++it) EXPECT_TRUE(keys.insert(it->first).second);
  return keys;
}

// Runs `ops` random operations on a DashTable and an absl::flat_hash_map side by side.
template <typename Policy>
void RunDifferential(uint64_t seed, int ops, uint64_t key_space) {
  DashTable<uint64_t, uint64_t, Policy> table;
  absl::flat_hash_map<uint64_t, uint64_t> model;
  std::mt19937_64 rng(seed);
  for (int i = 0; i < ops; ++i) {
    const uint64_t k = rng() % key_space;
    const unsigned op = rng() % 100;
    if (op < 40) {
      auto [it, inserted] = table.Insert(k, uint64_t(i));
      ASSERT_FALSE(it.is_done());
      ASSERT_EQ(inserted, model.emplace(k, i).second);
      ASSERT_EQ(it->second, model[k]);
    } else if (op < 55) {
      auto [it, inserted] = table.InsertOrAssign(k, uint64_t(i));
      ASSERT_EQ(inserted, !model.contains(k));
      model[k] = i;
      ASSERT_EQ(it->second, uint64_t(i));
    } else if (op < 70) {
      ASSERT_EQ(table.Erase(k), model.erase(k));
    } else if (op < 75) {
      auto it = table.Find(k);
      ASSERT_EQ(it.is_done(), !model.contains(k));
      if (!it.is_done()) table.Erase(it);
      model.erase(k);
    } else if (op == 99 && rng() % 2000 == 0) {
      table.Clear();
      model.clear();
    } else {
      auto it = table.Find(k);
      ASSERT_EQ(it.is_done(), !model.contains(k));
      if (!it.is_done()) {
        ASSERT_EQ(it->second, model[k]);
      }
    }
    ASSERT_EQ(table.size(), model.size());
    if (i % 50000 == 0 || i == ops - 1) {
      ASSERT_TRUE(table.CheckInvariants().ok()) << table.CheckInvariants();
      auto keys = AllKeys(table);
      ASSERT_EQ(keys.size(), model.size());
      for (auto& [mk, mv] : model) ASSERT_TRUE(keys.contains(mk));
    }
  }
}

TEST(DashTableTest, DifferentialTiny) {
  for (uint64_t seed : {1, 2}) RunDifferential<TinyPolicy>(seed, 1'000'000 / kScale, 20'000);
}
TEST(DashTableTest, DifferentialSmall) {
  for (uint64_t seed : {3, 4}) RunDifferential<SmallPolicy>(seed, 1'000'000 / kScale, 50'000);
}
TEST(DashTableTest, DifferentialServer) {
  for (uint64_t seed : {5, 6}) RunDifferential<ServerPolicy>(seed, 1'000'000 / kScale, 300'000);
}
TEST(DashTableTest, DifferentialNoMemcpyRelocation) {
  RunDifferential<U64Policy<6, 2, 5, false>>(7, 300'000 / kScale, 10'000);
}

TEST(DashTableTest, StringKeysHeterogeneousLookup) {
  StrTable t;
  absl::flat_hash_map<std::string, std::string> model;
  std::mt19937_64 rng(9);
  for (int i = 0; i < 200'000 / kScale; ++i) {
    std::string k = Str(rng() % 20'000);
    if (rng() % 3 == 0) {
      ASSERT_EQ(t.Erase(std::string_view(k)), model.erase(k));
    } else {
      auto [it, inserted] = t.InsertOrAssign(k, k + "v");
      ASSERT_EQ(inserted, model.insert_or_assign(k, k + "v").second);
    }
  }
  ASSERT_EQ(t.size(), model.size());
  for (auto& [k, v] : model) {
    auto it = t.Find(std::string_view(k));
    ASSERT_FALSE(it.is_done());
    EXPECT_EQ(it->second, v);
  }
  EXPECT_TRUE(t.Find(std::string_view("missing")).is_done());
  EXPECT_TRUE(t.CheckInvariants().ok());
  t.Clear();
  EXPECT_EQ(t.size(), 0u);
  EXPECT_EQ(t.segment_count(), 1u);
}

TEST(DashTableTest, InsertExistingReturnsExisting) {
  DashTable<uint64_t, uint64_t, ServerPolicy> t;
  EXPECT_TRUE(t.Insert(uint64_t(1), uint64_t(10)).second);
  auto [it, inserted] = t.Insert(uint64_t(1), uint64_t(20));
  EXPECT_FALSE(inserted);
  EXPECT_EQ(it->second, 10u);
  it->second = 30;  // values are mutable through the iterator
  EXPECT_EQ(t.Find(uint64_t(1))->second, 30u);
  EXPECT_TRUE(t.Find(uint64_t(2)) == t.end());
  const auto& ct = t;
  EXPECT_EQ(ct.Find(uint64_t(1))->second, 30u);
}

TEST(DashTableTest, SplitKeepsAllKeys) {
  DashTable<uint64_t, uint64_t, TinyPolicy> t;
  size_t segments = t.segment_count();
  for (uint64_t k = 0; k < 20'000; ++k) {
    ASSERT_TRUE(t.Insert(k, k).second);
    if (t.segment_count() == segments) continue;
    segments = t.segment_count();
    ASSERT_TRUE(t.CheckInvariants().ok()) << t.CheckInvariants();
    ASSERT_EQ(t.directory_size(), size_t(1) << t.global_depth());
    auto keys = AllKeys(t);
    ASSERT_EQ(keys.size(), k + 1);
    for (uint64_t j = 0; j <= k; j += 7) ASSERT_EQ(t.Find(j)->second, j);
  }
  EXPECT_GT(t.segment_count(), 100u);
  for (uint64_t k = 0; k < 20'000; ++k) ASSERT_EQ(t.Find(k)->second, k);
}

// Interleaves Traverse calls with inserts that split segments and erases of other keys; every key
// present for the whole scan must be returned.
template <typename Policy>
void RunScan(uint64_t seed, uint64_t stable_count) {
  DashTable<uint64_t, uint64_t, Policy> t;
  std::mt19937_64 rng(seed);
  std::vector<uint64_t> stable, doomed;
  for (uint64_t i = 0; i < stable_count; ++i) {
    stable.push_back(rng());
    doomed.push_back(rng());
    t.Insert(stable.back(), 0);
    t.Insert(doomed.back(), 0);
  }
  const size_t segments_before = t.segment_count();
  absl::flat_hash_set<uint64_t> seen;
  uint64_t cursor = 0;
  do {
    cursor = t.Traverse(cursor, [&](auto it) { seen.insert(it->first); });
    constexpr unsigned kBits = DashTable<uint64_t, uint64_t, Policy>::kCursorBits;
    ASSERT_LT(cursor, uint64_t(1) << kBits);
    for (int j = 0; j < 20; ++j) t.Insert(uint64_t(rng()), 1);
    if (!doomed.empty()) {
      t.Erase(doomed.back());
      doomed.pop_back();
    }
  } while (cursor != 0);
  EXPECT_GT(t.segment_count(), segments_before * 2);
  for (uint64_t k : stable) ASSERT_TRUE(seen.contains(k)) << k;
}

TEST(DashTableTest, ScanSurvivesSplits) {
  for (uint64_t seed = 1; seed <= 5; ++seed) RunScan<TinyPolicy>(seed, 300);
  RunScan<SmallPolicy>(11, 2000);
  RunScan<ServerPolicy>(12, 20000);
}

TEST(DashTableTest, ScanWithoutChangesVisitsEachKeyOnce) {
  DashTable<uint64_t, uint64_t, SmallPolicy> t;
  for (uint64_t k = 0; k < 5000; ++k) t.Insert(k, k);
  std::map<uint64_t, int> seen;
  uint64_t cursor = 0;
  do {
    cursor = t.Traverse(cursor, [&](auto it) { ++seen[it->first]; });
  } while (cursor != 0);
  ASSERT_EQ(seen.size(), 5000u);
  for (auto& [k, n] : seen) ASSERT_EQ(n, 1);
}

TEST(DashTableTest, TraverseBucketsSurvivesSplits) {
  DashTable<uint64_t, uint64_t, TinyPolicy> t;
  std::vector<uint64_t> stable;
  for (uint64_t k = 0; k < 1000; ++k) {
    stable.push_back(k);
    t.Insert(k, k);
  }
  absl::flat_hash_set<uint64_t> seen;
  size_t visits = 0, calls = 0;
  uint64_t cursor = 0;
  std::mt19937_64 rng(3);
  do {
    cursor = t.TraverseBuckets(cursor, [&](auto it) {
      ++calls;
      for (; !it.is_done(); ++it) {
        seen.insert(it->first);
        ++visits;
      }
    });
    if (calls % 3 == 0) t.Insert(uint64_t(1'000'000 + rng() % 1'000'000), 1);
  } while (cursor != 0);
  for (uint64_t k : stable) ASSERT_TRUE(seen.contains(k));
  EXPECT_GE(visits, 1000u);

  // Without changes every physical bucket is visited exactly once.
  calls = 0;
  visits = 0;
  cursor = 0;
  do {
    cursor = t.TraverseBuckets(cursor, [&](auto it) {
      ++calls;
      for (; !it.is_done(); ++it) ++visits;
    });
  } while (cursor != 0);
  EXPECT_EQ(calls, t.bucket_count());
  EXPECT_EQ(visits, t.size());
}

TEST(DashTableTest, RandomIterator) {
  DashTable<uint64_t, uint64_t, SmallPolicy> t;
  std::mt19937_64 rng(1);
  EXPECT_TRUE(t.GetRandomIterator(rng).is_done());
  for (uint64_t k = 0; k < 3000; ++k) t.Insert(k, k);
  absl::flat_hash_set<uint64_t> seen;
  for (int i = 0; i < 2000; ++i) {
    auto it = t.GetRandomIterator(rng);
    ASSERT_FALSE(it.is_done());
    seen.insert(it->first);
  }
  EXPECT_GT(seen.size(), 500u);
}

// Every entry is drawn equally often: in a one-segment table with empty regions, in a table of
// segments with different local depths, and in one emptied by erases (the fallback walk).
TEST(DashTableTest, RandomIteratorIsUniform) {
  struct Case {
    uint64_t inserted, kept;
  };
  for (Case c : {Case{60, 60}, Case{5000, 5000}, Case{20000, 30}}) {
    DashTable<uint64_t, uint64_t, ServerPolicy> t;
    for (uint64_t k = 0; k < c.inserted; ++k) t.Insert(k, k);
    for (uint64_t k = c.kept; k < c.inserted; ++k) t.Erase(k);
    ASSERT_EQ(t.size(), c.kept);
    std::mt19937_64 rng(c.inserted);
    std::vector<uint64_t> counts(c.kept, 0);
    for (uint64_t i = 0; i < c.kept * 500; ++i) {
      auto it = t.GetRandomIterator(rng);
      ASSERT_FALSE(it.is_done());
      ++counts[it->first];
    }
    EXPECT_LT(testing::ChiSquareUniform(counts), testing::ChiSquareCritical(c.kept - 1))
        << c.inserted << " " << c.kept;
  }
}

// An entry's place finds it again while nothing moves; an emptied place or one beyond the
// directory finds nothing; after a split the place holds another entry or none.
TEST(DashTableTest, AtPlaceFindsTheEntryWhileNothingMoves) {
  DashTable<uint64_t, uint64_t, SmallPolicy> t;
  for (uint64_t k = 0; k < 20; ++k) t.Insert(k, k * 10);
  std::vector<std::pair<uint64_t, DashTable<uint64_t, uint64_t, SmallPolicy>::Place>> places;
  for (auto it = t.begin(); !it.is_done(); ++it) places.emplace_back(it->first, it.place());
  ASSERT_EQ(places.size(), 20u);
  for (const auto& [key, place] : places) {
    auto it = t.AtPlace(place);
    ASSERT_FALSE(it.is_done());
    EXPECT_EQ(it->first, key);
    EXPECT_EQ(it->second, key * 10);
  }
  t.Erase(places[0].first);
  EXPECT_TRUE(t.AtPlace(places[0].second).is_done());
  EXPECT_TRUE(t.AtPlace({uint32_t(t.directory_size()), 0, 0}).is_done());
  for (uint64_t k = 20; k < 2000; ++k) t.Insert(k, k * 10);  // splits move entries
  size_t same = 0;
  for (const auto& [key, place] : places) {
    auto it = t.AtPlace(place);
    if (!it.is_done() && it->first == key) ++same;
  }
  EXPECT_LT(same, places.size());
}

TEST(DashTableTest, MemoryFigures) {
  struct Obj16 {
    uint64_t a, b;
    bool operator==(const Obj16& o) const { return a == o.a && b == o.b; }
  };
  struct P : DashPolicyBase {
    static uint64_t HashFn(const Obj16& o) { return HashU64(o.a ^ o.b); }
  };
  using T = DashTable<Obj16, Obj16, P>;
  EXPECT_EQ(T::kSegmentCapacity, 840u);
  EXPECT_LE(T::segment_bytes(), 32u * 1024);
  const double overhead = double(T::segment_bytes() - 840 * 32) / 840;
  EXPECT_LT(overhead, 4.0);
  T t;
  double min_fill = 1;
  for (uint64_t i = 0; i < 200'000; ++i) {
    t.Insert(Obj16{i, 0}, Obj16{i, 1});
    if (i > 1000) min_fill = std::min(min_fill, double(t.size()) / double(t.capacity()));
  }
  // Segments split in waves: the fill swings between ~50% (just after a wave) and ~96%.
  EXPECT_GT(min_fill, 0.45);
  // Segments come from 2 MiB chunks once the table is big: less than one chunk ahead, and the
  // allocator's rounding stays under 2% of the segments. A chunk is the usable size the allocator
  // gives a 2 MiB-aligned 2 MiB request, which the arena fills: mimalloc's can be up to 4 MiB.
  const size_t exact = sizeof(T) + t.directory_size() * 8 + t.segment_count() * T::segment_bytes();
  EXPECT_GE(t.mem_usage(), exact);
  EXPECT_LE(t.mem_usage(), exact * 102 / 100 + 4 * 1024 * 1024);
  t.Clear();
  EXPECT_GE(t.mem_usage(), sizeof(T) + t.directory_size() * 8 + T::segment_bytes());
  EXPECT_LE(t.mem_usage(), sizeof(T) + t.directory_size() * 8 + T::segment_bytes() * 9 / 8);
}


// Large segment chunks come from the table's reserve while it has some, and from the allocator
// when it is empty (nothing refills this one): both kinds hold segments correctly.
TEST(DashTableTest, TakesLargeChunksFromItsReserveAndFallsBackWhenEmpty) {
  ChunkReserve reserve;
  (void)reserve.TryTake();  // target 1 -> 2
  reserve.Refill();
  ASSERT_EQ(reserve.ready(), 2u);
  DashTable<uint64_t, uint64_t, ServerPolicy> t;
  t.set_chunk_reserve(&reserve);
  // Grows until the arena has allocated two chunks itself. How many segments a chunk holds
  // depends on the usable size the allocator gives a 2 MiB-aligned request (2 to 4 MiB), so the
  // test counts chunks, not keys.
  uint64_t n = 0;
  while (reserve.misses() < 2) {
    ASSERT_LT(n, 8'000'000u) << "the table never took chunks past the reserve's two";
    ASSERT_TRUE(t.Insert(n, n).second);
    ++n;
  }
  EXPECT_EQ(reserve.hits(), 2u);
  EXPECT_EQ(reserve.ready(), 0u);
  ASSERT_TRUE(t.CheckInvariants().ok());
  for (uint64_t i = 0; i < n; ++i) ASSERT_FALSE(t.Find(i).is_done()) << i;
  t.Clear();  // frees the reserve's chunks with the others
  EXPECT_EQ(t.size(), 0u);
}

// Emulates a snapshot: before every change, the buckets reported by the CVC calls are stamped
// with the current version. Every bucket that gained or lost an entry must have been reported
// (or, for a segment created by a split, its source bucket), and no version may go down.
TEST(DashTableTest, VersionsNeverDecreaseAndChangeReportCoversChanges) {
  using T = DashTable<uint64_t, uint64_t, SmallPolicy>;
  using Loc = std::pair<uint64_t, unsigned>;  // segment prefix (40 bits), physical bucket
  T t;
  std::mt19937_64 rng(5);
  auto loc_of = [&](const T::const_iterator& it) {
    return Loc{uint64_t(it.segment_id()) << (T::kMaxGlobalDepth - t.global_depth()),
               it.bucket_id()};
  };
  auto locations = [&] {
    std::map<uint64_t, Loc> m;
    for (auto it = t.begin(); !it.is_done(); ++it) m[it->first] = loc_of(it);
    return m;
  };
  auto version_at = [&](Loc l) {
    const uint32_t idx = uint32_t(l.first >> (T::kMaxGlobalDepth - t.global_depth()));
    return t.GetVersion(t.BucketBegin(idx, l.second));
  };
  size_t reports = 0, moves = 0;
  for (uint64_t v = 1; v <= 6000; ++v) {
    const uint64_t k = rng() % 3000;
    std::set<Loc> reported;
    auto stamp = [&](auto it) {
      ASSERT_LT(t.GetVersion(it), v);
      reported.insert(loc_of(it));
      t.SetVersion(it, v);
    };
    const auto before = locations();
    std::set<uint64_t> segments_before;
    for (auto& [key, loc] : before) segments_before.insert(loc.first);
    std::map<Loc, uint64_t> versions_before;
    for (auto& [key, loc] : before) versions_before[loc] = version_at(loc);
    if (rng() % 3 != 0) {
      t.CVCUponInsert(v, k, stamp);
      t.Insert(k, v);
    } else if (auto it = t.Find(k); !it.is_done()) {
      t.CVCUponErase(v, it, stamp);
      t.Erase(it);
    }
    reports += reported.size();
    auto covered = [&](Loc l) {
      if (reported.contains(l) || segments_before.contains(l.first)) return reported.contains(l);
      auto parent = segments_before.upper_bound(l.first);  // a segment made by a split
      return parent != segments_before.begin() && reported.contains({*--parent, l.second});
    };
    const auto after = locations();
    for (auto& [loc, ver] : versions_before) ASSERT_GE(version_at(loc), ver);
    for (auto& [key, loc] : before) {
      auto a = after.find(key);
      if (a != after.end() && a->second == loc) continue;
      ++moves;
      ASSERT_TRUE(covered(loc)) << "op " << v;
      ASSERT_EQ(version_at(loc), v);
    }
    for (auto& [key, loc] : after) {
      auto b = before.find(key);
      if (b != before.end() && b->second == loc) continue;
      ASSERT_TRUE(covered(loc)) << "op " << v;
      ASSERT_EQ(version_at(loc), v);
    }
  }
  EXPECT_GT(t.segment_count(), 20u);
  EXPECT_GT(reports, 1000u);
  EXPECT_GT(moves, 1000u);
}

struct TestHooks {
  static constexpr uint64_t kExpired = ~uint64_t(0);
  bool gc_enabled = false;
  bool allow_growth = true;
  unsigned gc_calls = 0, splits = 0;

  template <typename HB, typename T>
  unsigned GarbageCollect(const HB& hb, T* t) {
    ++gc_calls;
    if (!gc_enabled) return 0;
    unsigned freed = 0;
    for (auto it : hb.buckets) {
      for (; !it.is_done(); ++it) {
        if (it->second != kExpired) continue;
        t->Erase(it);  // other entries do not move: ++it stays valid
        ++freed;
      }
    }
    return freed;
  }
  template <typename T>
  bool CanGrow(const T&) { return allow_growth; }
  template <typename T>
  void RecordSplit(const T&) { ++splits; }
};

// Emulates snapshots with per-entry state, as server/persistence/shard_snapshot.cc runs them:
// a walk over the physical buckets (TraverseBuckets) saves each bucket's unsaved entries and
// marks it saved; between its steps, random overwrites and erases save the entry they change
// first (CVCEntryUponChange), and inserts mark their free slot or save whole buckets when
// entries move (CVCEntryUponInsert). The table grows all along, so segments split, entries are
// displaced and stash buckets unload while walks run. Every key present at the cut must be saved
// exactly once with its value at the cut, and nothing else. Every third snapshot is abandoned
// halfway, and the next must not trust the state it left.
template <typename Policy>
void RunSnapshotModel(uint64_t seed, int snapshots, uint64_t max_keys) {
  using T = DashTable<uint64_t, uint64_t, Policy>;
  T t;
  std::mt19937_64 rng(seed);
  uint64_t next_value = 1, key_space = 64;
  size_t entry_saves = 0, bucket_saves = 0, marked_inserts = 0;
  const size_t segments_at_start = t.segment_count();
  for (uint64_t v = 1; v <= uint64_t(snapshots); ++v) {
    std::map<uint64_t, uint64_t> cut;
    for (auto it = t.begin(); !it.is_done(); ++it) cut[it->first] = it->second;
    std::map<uint64_t, std::vector<uint64_t>> saved;  // key -> values saved
    auto save = [&](typename T::iterator it) { saved[it->first].push_back(it->second); };
    auto save_bucket = [&](typename T::bucket_iterator b) {
      const uint16_t done = t.SavedSlots(b, v);
      for (auto it = b; !it.is_done(); ++it) {
        if (((done >> it.slot_id()) & 1) == 0) save(it);
      }
      t.SetVersion(b, v);
      ASSERT_TRUE(t.IsBucketSaved(b, v));
    };
    const bool abandon = v % 3 == 0;
    uint64_t cursor = 0;
    for (int step = 0;; ++step) {
      if (abandon && step == 40) break;
      bool walk_done = false;
      for (unsigned n = unsigned(rng() % 3); n > 0 && !walk_done; --n) {
        cursor = t.TraverseBuckets(cursor, save_bucket);
        walk_done = cursor == 0;
      }
      if (walk_done) break;
      for (unsigned n = unsigned(rng() % 6); n > 0; --n) {
        const uint64_t k = rng() % key_space;
        const uint64_t h = Policy::HashFn(k);
        auto it = t.Find(k, h);
        const unsigned op = unsigned(rng() % 4);
        if (it.is_done()) {
          const uint64_t before = saved.size();
          t.CVCEntryUponInsert(v, h, save_bucket);
          marked_inserts += saved.size() == before;
          auto [pos, inserted] = t.Insert(k, next_value++);
          ASSERT_TRUE(inserted);
          ASSERT_TRUE(t.IsEntrySaved(pos, v)) << "a new entry would be saved";
        } else if (op == 0) {
          t.CVCEntryUponChange(v, it, save);
          ASSERT_TRUE(t.IsEntrySaved(it, v));
          t.Erase(it);
        } else {
          t.CVCEntryUponChange(v, it, save);
          it->second = next_value++;
        }
        ++entry_saves;
      }
      // Mostly inserts of new keys, so the table keeps splitting, up to max_keys.
      if (key_space < max_keys) key_space += rng() % 4;
    }
    if (abandon) {
      // The abandoned snapshot's saves are not checked; plain changes follow.
      for (int n = 0; n < 50; ++n) {
        const uint64_t k = rng() % key_space;
        if (rng() % 4 == 0) {
          t.Erase(k);
        } else {
          t.InsertOrAssign(k, next_value++);
        }
      }
      continue;
    }
    bucket_saves += t.bucket_count();
    for (auto& [key, values] : saved) {
      auto c = cut.find(key);
      ASSERT_NE(c, cut.end()) << "snapshot " << v << " saved key " << key << " made after the cut";
      ASSERT_EQ(values.size(), 1u) << "snapshot " << v << " saved key " << key << " twice";
      ASSERT_EQ(values[0], c->second) << "snapshot " << v << " key " << key;
    }
    ASSERT_EQ(saved.size(), cut.size()) << "snapshot " << v << " lost keys";
    ASSERT_TRUE(t.CheckInvariants().ok());
  }
  EXPECT_GT(t.segment_count(), segments_at_start + 10);
  EXPECT_GT(entry_saves, 1000u);
  EXPECT_GT(marked_inserts, 100u);
  EXPECT_GT(bucket_saves, 1000u);
}

TEST(DashTableTest, SnapshotStateTiny) { RunSnapshotModel<TinyPolicy>(1, 120, 3000); }
TEST(DashTableTest, SnapshotStateSmall) { RunSnapshotModel<SmallPolicy>(2, 120, 6000); }
TEST(DashTableTest, SnapshotStateServer) {
  RunSnapshotModel<ServerPolicy>(3, 90, 40000);
}

// The per-entry calls in isolation: a change saves the entry once, an insert into a free slot
// saves nothing, the walk then skips both, and a later snapshot starts afresh.
TEST(DashTableTest, EntryStateSavesChangedEntryOnceAndNeverANewOne) {
  using T = DashTable<uint64_t, uint64_t, ServerPolicy>;
  T t;
  for (uint64_t k = 0; k < 100; ++k) t.Insert(k, k);
  const uint64_t v = 7;
  std::vector<uint64_t> saved;
  auto save = [&](T::iterator it) { saved.push_back(it->first); };
  auto it = t.Find(uint64_t{5});
  EXPECT_FALSE(t.IsEntrySaved(it, v));
  t.CVCEntryUponChange(v, it, save);
  t.CVCEntryUponChange(v, it, save);
  EXPECT_EQ(saved, std::vector<uint64_t>{5});
  EXPECT_FALSE(t.IsBucketSaved(it, v));
  EXPECT_EQ(t.GetVersion(it), v);
  const uint64_t h = ServerPolicy::HashFn(uint64_t{1000});
  t.CVCEntryUponInsert(v, h, [&](T::bucket_iterator) { ADD_FAILURE() << "no bucket changes"; });
  auto [pos, inserted] = t.Insert(uint64_t{1000}, uint64_t{1});
  ASSERT_TRUE(inserted);
  EXPECT_TRUE(t.IsEntrySaved(pos, v));
  // The walk's view of the two buckets: their other entries are still to be saved.
  for (T::iterator e : {t.Find(uint64_t{5}), pos}) {
    T::bucket_iterator b = t.BucketBegin(e.segment_id(), e.bucket_id());
    const uint16_t done = t.SavedSlots(b, v);
    for (auto x = b; !x.is_done(); ++x) {
      EXPECT_EQ((done >> x.slot_id()) & 1, x == e ? 1u : 0u) << x->first;
    }
    t.SetVersion(b, v);
    EXPECT_TRUE(t.IsBucketSaved(b, v));
    EXPECT_EQ(t.SavedSlots(b, v), 0xffff);
    EXPECT_EQ(t.SavedSlots(b, v + 1), 0);  // the next snapshot
    EXPECT_FALSE(t.IsEntrySaved(e, v + 1));
  }
}

TEST(DashTableTest, GarbageCollectionAvoidsSplit) {
  DashTable<uint64_t, uint64_t, ServerPolicy> t;
  TestHooks hooks;
  hooks.allow_growth = false;
  uint64_t k = 0;
  while (!t.Insert(k, TestHooks::kExpired, hooks).first.is_done()) ++k;
  ASSERT_EQ(t.segment_count(), 1u);
  const size_t full_size = t.size();
  EXPECT_GT(full_size, 700u);  // ~90% of 840 slots before the first full segment
  EXPECT_EQ(hooks.gc_calls, 1u);

  hooks.gc_enabled = true;
  hooks.allow_growth = true;
  auto [it, inserted] = t.Insert(k, uint64_t(7), hooks);
  ASSERT_TRUE(inserted);
  EXPECT_EQ(it->second, 7u);
  EXPECT_EQ(hooks.gc_calls, 2u);
  EXPECT_EQ(hooks.splits, 0u);
  EXPECT_EQ(t.segment_count(), 1u);
  EXPECT_LT(t.size(), full_size);
  EXPECT_TRUE(t.CheckInvariants().ok());
}

TEST(DashTableTest, StashUnloadingAvoidsSplit) {
  using T = DashTable<uint64_t, uint64_t, SmallPolicy>;
  using Seg = detail::Segment<uint64_t, uint64_t, SmallPolicy>;
  T t;
  TestHooks hooks;
  hooks.allow_growth = false;
  for (uint64_t k = 0; !t.Insert(k, k, hooks).first.is_done(); ++k) {
  }
  unsigned h = T::kRegularBuckets;
  for (auto it = t.begin(); !it.is_done(); ++it) {
    if (it.bucket_id() >= T::kRegularBuckets) h = it.home_bucket();
  }
  ASSERT_LT(h, T::kRegularBuckets) << "a full segment has a full stash";
  // Empty buckets h and h + 1 physically.
  for (unsigned b : {h, Seg::NextBucket(h)}) {
    for (auto it = t.BucketBegin(0, b); !it.is_done(); ++it) t.Erase(it);
  }
  // A key that can use neither h nor h + 1 directly or by displacement needs the stash.
  uint64_t key = 1'000'000;
  auto dist = [&](unsigned x) { return (x + T::kRegularBuckets - h) % T::kRegularBuckets; };
  while (true) {
    const unsigned d = dist(Seg::HomeBucket(HashU64(key)));
    if (d > 2 && d < T::kRegularBuckets - 2) break;
    ++key;
  }
  const size_t size_before = t.size();
  auto [it, inserted] = t.Insert(key, key, hooks);
  ASSERT_TRUE(inserted);
  EXPECT_EQ(it.bucket_id() >= T::kRegularBuckets, true);
  EXPECT_EQ(t.segment_count(), 1u);
  EXPECT_EQ(t.size(), size_before + 1);
  EXPECT_TRUE(t.CheckInvariants().ok()) << t.CheckInvariants();
}

TEST(DashTableTest, RefusedGrowthReturnsEnd) {
  DashTable<uint64_t, uint64_t, TinyPolicy> t;
  TestHooks hooks;
  hooks.allow_growth = false;
  size_t refused = 0;
  for (uint64_t k = 0; k < 1000; ++k) refused += t.Insert(k, k, hooks).first.is_done();
  EXPECT_GT(refused, 900u);
  EXPECT_EQ(t.segment_count(), 1u);
  EXPECT_EQ(hooks.splits, 0u);
}

}  // namespace
}  // namespace dashkv
