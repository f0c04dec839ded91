// SortedIndex (order-statistic B-tree) against a skiplist with spans (the structure Redis uses,
// written here only as a baseline), at up to 1M members: insert, rank, select, range, memory.
//   build/bench/sorted_index_bench --benchmark_filter=... --benchmark_min_time=0.2
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "core/sorted_index.h"

namespace dashkv {
namespace {

// ---- Baseline: skiplist with spans (levels p = 1/4, max 32) + heap member strings ----
class SpanSkipList {
 public:
  struct Node;
  struct Level {
    Node* next;
    uint64_t span;
  };
  struct Node {
    double score;
    char* member;  // [u32 len][bytes], malloc'd
    Node* back;
    Level level[];
  };

  SpanSkipList() : head_(NewNode(kMaxLevel, 0, {})) {
    for (int i = 0; i < kMaxLevel; ++i) head_->level[i] = {nullptr, 0};
  }
  ~SpanSkipList() {
    for (Node* x = head_->level[0].next; x != nullptr;) {
      Node* next = x->level[0].next;
      std::free(x->member);
      std::free(x);
      x = next;
    }
    std::free(head_);
  }

  void Insert(double score, std::string_view m) {
    Node* update[kMaxLevel];
    uint64_t rank[kMaxLevel];
    Node* x = head_;
    for (int i = level_ - 1; i >= 0; --i) {
      rank[i] = i == level_ - 1 ? 0 : rank[i + 1];
      while (x->level[i].next != nullptr && Less(x->level[i].next, score, m)) {
        rank[i] += x->level[i].span;
        x = x->level[i].next;
      }
      update[i] = x;
    }
    int lvl = RandomLevel();
    if (lvl > level_) {
      for (int i = level_; i < lvl; ++i) {
        rank[i] = 0;
        update[i] = head_;
        update[i]->level[i].span = size_;
      }
      level_ = lvl;
    }
    x = NewNode(lvl, score, m);
    for (int i = 0; i < lvl; ++i) {
      x->level[i].next = update[i]->level[i].next;
      update[i]->level[i].next = x;
      x->level[i].span = update[i]->level[i].span - (rank[0] - rank[i]);
      update[i]->level[i].span = (rank[0] - rank[i]) + 1;
    }
    for (int i = lvl; i < level_; ++i) update[i]->level[i].span++;
    x->back = update[0] == head_ ? nullptr : update[0];
    if (x->level[0].next != nullptr) x->level[0].next->back = x;
    size_++;
  }

  // Returns the 1-based rank, 0 if absent.
  uint64_t Rank(double score, std::string_view m) const {
    uint64_t r = 0;
    Node* x = head_;
    for (int i = level_ - 1; i >= 0; --i) {
      while (x->level[i].next != nullptr && !Less(score, m, x->level[i].next)) {
        r += x->level[i].span;
        x = x->level[i].next;
      }
      if (x != head_ && Equal(x, score, m)) return r;
    }
    return 0;
  }

  // Returns the node of 1-based rank r.
  Node* AtRank(uint64_t r) const {
    uint64_t traversed = 0;
    Node* x = head_;
    for (int i = level_ - 1; i >= 0; --i) {
      while (x->level[i].next != nullptr && traversed + x->level[i].span <= r) {
        traversed += x->level[i].span;
        x = x->level[i].next;
      }
      if (traversed == r) return x;
    }
    return nullptr;
  }

  // Returns the first node with score >= min.
  Node* FirstAtLeast(double min) const {
    Node* x = head_;
    for (int i = level_ - 1; i >= 0; --i) {
      while (x->level[i].next != nullptr && x->level[i].next->score < min) x = x->level[i].next;
    }
    return x->level[0].next;
  }

  size_t bytes() const { return bytes_; }

 private:
  static constexpr int kMaxLevel = 32;

  static std::string_view View(const Node* x) {
    uint32_t len;
    std::memcpy(&len, x->member, 4);
    return {x->member + 4, len};
  }
  static bool Less(const Node* x, double score, std::string_view m) {
    return x->score < score || (x->score == score && View(x) < m);
  }
  static bool Less(double score, std::string_view m, const Node* x) {
    return score < x->score || (score == x->score && m < View(x));
  }
  static bool Equal(const Node* x, double score, std::string_view m) {
    return x->score == score && View(x) == m;
  }
  Node* NewNode(int lvl, double score, std::string_view m) {
    size_t nb = sizeof(Node) + lvl * sizeof(Level);
    auto* x = static_cast<Node*>(std::malloc(nb));
    x->score = score;
    x->member = static_cast<char*>(std::malloc(4 + m.size()));
    uint32_t len = static_cast<uint32_t>(m.size());
    std::memcpy(x->member, &len, 4);
    if (!m.empty()) std::memcpy(x->member + 4, m.data(), m.size());
    bytes_ += nb + 4 + m.size();
    return x;
  }
  int RandomLevel() {
    int lvl = 1;
    while (lvl < kMaxLevel && (rng_() & 3) == 0) ++lvl;
    return lvl;
  }

  Node* head_;
  int level_ = 1;
  uint64_t size_ = 0;
  size_t bytes_ = 0;
  std::mt19937_64 rng_{1};
};

// ---- Data ----

struct Item {
  double score;
  std::string member;
};

const std::vector<Item>& Items(size_t n) {
  static std::vector<Item> items;
  if (items.size() != n) {
    items.clear();
    std::mt19937_64 rng(123);
    for (size_t i = 0; i < n; ++i) {
      items.push_back({static_cast<double>(rng() % 1000000), "member:" + std::to_string(i)});
    }
  }
  return items;
}

size_t RssBytes() {
  FILE* f = std::fopen("/proc/self/statm", "r");
  long pages = 0, rss = 0;
  if (f != nullptr) {
    if (std::fscanf(f, "%ld %ld", &pages, &rss) != 2) rss = 0;
    std::fclose(f);
  }
  return static_cast<size_t>(rss) * 4096;
}

// ---- SortedIndex ----

void BM_SortedIndexInsert(benchmark::State& state) {
  const auto& items = Items(state.range(0));
  size_t rss_delta = 0, mem = 0;
  for (auto _ : state) {
    size_t rss0 = RssBytes();
    SortedIndex idx;
    for (const Item& it : items) idx.Insert(it.score, it.member);
    rss_delta = RssBytes() - rss0;
    mem = idx.MemoryUsage();
    benchmark::DoNotOptimize(idx.size());
  }
  state.SetItemsProcessed(state.iterations() * items.size());
  state.counters["bytes/member"] = static_cast<double>(mem) / items.size();
  state.counters["rss/member"] = static_cast<double>(rss_delta) / items.size();
}
BENCHMARK(BM_SortedIndexInsert)->Arg(1 << 20)->Unit(benchmark::kMillisecond)->Iterations(1);

SortedIndex& Built(size_t n) {
  static SortedIndex* idx = nullptr;
  if (idx == nullptr || idx->size() != Items(n).size()) {
    delete idx;
    idx = new SortedIndex;
    for (const Item& it : Items(n)) idx->Insert(it.score, it.member);
  }
  return *idx;
}

void BM_SortedIndexRank(benchmark::State& state) {
  const auto& items = Items(state.range(0));
  SortedIndex& idx = Built(state.range(0));
  std::mt19937_64 rng(5);
  for (auto _ : state) {
    const Item& it = items[rng() % items.size()];
    benchmark::DoNotOptimize(idx.Rank(it.score, it.member));
  }
}
BENCHMARK(BM_SortedIndexRank)->Arg(1 << 20);

void BM_SortedIndexAt(benchmark::State& state) {
  SortedIndex& idx = Built(state.range(0));
  std::mt19937_64 rng(6);
  for (auto _ : state) benchmark::DoNotOptimize(idx.At(rng() % idx.size()));
}
BENCHMARK(BM_SortedIndexAt)->Arg(1 << 20);

// ZRANGEBYSCORE key min +inf LIMIT 0 10: seek by score, then walk 10 elements.
void BM_SortedIndexRangeByScore10(benchmark::State& state) {
  SortedIndex& idx = Built(state.range(0));
  std::mt19937_64 rng(7);
  for (auto _ : state) {
    uint64_t r = idx.ScoreLowerRank(static_cast<double>(rng() % 1000000), false);
    int n = 0;
    for (auto it = idx.Seek(r); it.Valid() && n < 10; it.Next(), ++n) {
      benchmark::DoNotOptimize(it.member());
    }
  }
}
BENCHMARK(BM_SortedIndexRangeByScore10)->Arg(1 << 20);

// ZREVRANGE key start start+99: seek by rank, walk 100 backward.
void BM_SortedIndexRevRange100(benchmark::State& state) {
  SortedIndex& idx = Built(state.range(0));
  std::mt19937_64 rng(8);
  for (auto _ : state) {
    int n = 0;
    for (auto it = idx.Seek(rng() % idx.size()); it.Valid() && n < 100; it.Prev(), ++n) {
      benchmark::DoNotOptimize(it.score());
    }
  }
}
BENCHMARK(BM_SortedIndexRevRange100)->Arg(1 << 20);

// ZADD of an existing member with a new score (delete + insert, or in place).
void BM_SortedIndexUpdateScore(benchmark::State& state) {
  SortedIndex& idx = Built(state.range(0));
  auto& items = const_cast<std::vector<Item>&>(Items(state.range(0)));
  std::mt19937_64 rng(9);
  for (auto _ : state) {
    Item& it = items[rng() % items.size()];
    double ns = static_cast<double>(rng() % 1000000);
    idx.UpdateScore(it.score, it.member, ns);
    it.score = ns;
  }
}
BENCHMARK(BM_SortedIndexUpdateScore)->Arg(1 << 20);

// ---- Skiplist baseline ----

void BM_SkipListInsert(benchmark::State& state) {
  const auto& items = Items(state.range(0));
  size_t rss_delta = 0, mem = 0;
  for (auto _ : state) {
    size_t rss0 = RssBytes();
    SpanSkipList sl;
    for (const Item& it : items) sl.Insert(it.score, it.member);
    rss_delta = RssBytes() - rss0;
    mem = sl.bytes();
  }
  state.SetItemsProcessed(state.iterations() * items.size());
  state.counters["bytes/member"] = static_cast<double>(mem) / items.size();
  state.counters["rss/member"] = static_cast<double>(rss_delta) / items.size();
}
BENCHMARK(BM_SkipListInsert)->Arg(1 << 20)->Unit(benchmark::kMillisecond)->Iterations(1);

SpanSkipList& BuiltSkipList(size_t n) {
  static SpanSkipList* sl = nullptr;
  if (sl == nullptr) {
    sl = new SpanSkipList;
    for (const Item& it : Items(n)) sl->Insert(it.score, it.member);
  }
  return *sl;
}

void BM_SkipListRank(benchmark::State& state) {
  const auto& items = Items(state.range(0));
  SpanSkipList& sl = BuiltSkipList(state.range(0));
  std::mt19937_64 rng(5);
  for (auto _ : state) {
    const Item& it = items[rng() % items.size()];
    benchmark::DoNotOptimize(sl.Rank(it.score, it.member));
  }
}
BENCHMARK(BM_SkipListRank)->Arg(1 << 20);

void BM_SkipListAt(benchmark::State& state) {
  SpanSkipList& sl = BuiltSkipList(state.range(0));
  std::mt19937_64 rng(6);
  for (auto _ : state) benchmark::DoNotOptimize(sl.AtRank(1 + rng() % state.range(0)));
}
BENCHMARK(BM_SkipListAt)->Arg(1 << 20);

void BM_SkipListRangeByScore10(benchmark::State& state) {
  SpanSkipList& sl = BuiltSkipList(state.range(0));
  std::mt19937_64 rng(7);
  for (auto _ : state) {
    auto* x = sl.FirstAtLeast(static_cast<double>(rng() % 1000000));
    for (int n = 0; x != nullptr && n < 10; x = x->level[0].next, ++n) {
      benchmark::DoNotOptimize(x->member);
    }
  }
}
BENCHMARK(BM_SkipListRangeByScore10)->Arg(1 << 20);

}  // namespace
}  // namespace dashkv

BENCHMARK_MAIN();
