// DashTable vs absl::flat_hash_map vs std::unordered_map: insert, find (hit, miss), erase for
// 64-bit keys and 16-byte keys, table bytes per entry, and the worst single-insert latency while
// growing. Every map uses the same dashkv hash (core/hash.h) so the tables, not the hash
// functions, are compared. Sizes are benchmark arguments (1M and 10M by default).
// Per-operation figures use the thread's CPU clock, not the wall clock: on a shared machine a
// preempted thread would otherwise charge other processes' time (and a multi-millisecond
// "latency spike") to whichever map it was running.
#include <benchmark/benchmark.h>
#include <sched.h>
#include <time.h>

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <numeric>
#include <random>
#include <thread>
#include <unordered_map>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "core/chunk_reserve.h"
#include "core/dash_table.h"
#include "core/hash.h"

namespace dashkv {
namespace {

// 16-byte key and value objects, like the server's inline compact objects.
struct Obj16 {
  char data[16];
  bool operator==(const Obj16& o) const { return std::memcmp(data, o.data, 16) == 0; }
};

Obj16 MakeObj(uint64_t i) {
  Obj16 o;
  std::memcpy(o.data, &i, 8);
  const uint64_t tag = 0x6b65792d6b65792dULL;  // "-yek-yek", the rest of the 16 bytes
  std::memcpy(o.data + 8, &tag, 8);
  return o;
}

struct Hasher {
  size_t operator()(uint64_t k) const noexcept { return HashU64(k); }
  size_t operator()(const Obj16& k) const noexcept {
    return HashBytes(std::string_view(k.data, 16));
  }
};

struct U64Policy : DashPolicyBase {
  static constexpr bool kRelocateByMemcpy = true;
  static uint64_t HashFn(uint64_t k) { return HashU64(k); }
};
struct Obj16Policy : DashPolicyBase {
  static constexpr bool kRelocateByMemcpy = true;
  static uint64_t HashFn(const Obj16& k) { return HashBytes(std::string_view(k.data, 16)); }
};

// Bytes allocated through CountingAllocator (std and absl maps): the table's own memory.
size_t g_allocated = 0;

template <typename T>
struct CountingAllocator {
  using value_type = T;
  CountingAllocator() = default;
  template <typename U>
  CountingAllocator(const CountingAllocator<U>&) {}  // NOLINT
  T* allocate(size_t n) {
    g_allocated += n * sizeof(T);
    return std::allocator<T>().allocate(n);
  }
  void deallocate(T* p, size_t n) {
    g_allocated -= n * sizeof(T);
    std::allocator<T>().deallocate(p, n);
  }
  template <typename U>
  bool operator==(const CountingAllocator<U>&) const { return true; }
};

// Refills a ChunkReserve on a thread of its own at SCHED_IDLE, as the server's background engine
// does (io/engine.h): the table's thread never faults a huge page, and the refiller only uses CPU
// time nothing else wants. (A benchmark may start a thread; product code starts them in io/.)
class Refiller {
 public:
  explicit Refiller(ChunkReserve* reserve) : reserve_(reserve) {
    reserve_->set_refill_request([this] {
      std::lock_guard<std::mutex> lock(mu_);
      pending_ = true;
      cv_.notify_one();
    });
    thread_ = std::thread([this] { Loop(); });
  }
  ~Refiller() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
      cv_.notify_one();
    }
    thread_.join();
  }

 private:
  void Loop() {
    sched_param param{};
    (void)sched_setscheduler(0, SCHED_IDLE, &param);
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      cv_.wait(lock, [this] { return pending_ || stop_; });
      if (stop_) return;
      pending_ = false;
      lock.unlock();
      reserve_->Refill();
      lock.lock();
    }
  }

  ChunkReserve* reserve_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool pending_ = false;
  bool stop_ = false;
  std::thread thread_;
};

template <typename K, typename V>
struct DashMap {
  using Policy = std::conditional_t<std::is_same_v<K, uint64_t>, U64Policy, Obj16Policy>;
  DashMap() { t.set_chunk_reserve(&reserve); }
  ChunkReserve reserve;
  Refiller refiller{&reserve};
  DashTable<K, V, Policy> t;  // declared last: destroyed first, while its reserve lives
  void Insert(const K& k, const V& v) { t.Insert(k, v); }
  ABSL_ATTRIBUTE_ALWAYS_INLINE bool Find(const K& k) const { return !t.Find(k).is_done(); }
  void Erase(const K& k) { t.Erase(k); }
  size_t Bytes() const { return t.mem_usage(); }
  double LoadFactor() const { return double(t.size()) / double(t.capacity()); }
};

template <typename K, typename V>
struct AbslMap {
  absl::flat_hash_map<K, V, Hasher, std::equal_to<K>, CountingAllocator<std::pair<const K, V>>> t;
  void Insert(const K& k, const V& v) { t.emplace(k, v); }
  ABSL_ATTRIBUTE_ALWAYS_INLINE bool Find(const K& k) const { return t.find(k) != t.end(); }
  void Erase(const K& k) { t.erase(k); }
  size_t Bytes() const { return g_allocated + sizeof(t); }
  double LoadFactor() const { return t.load_factor(); }
};

template <typename K, typename V>
struct StdMap {
  std::unordered_map<K, V, Hasher, std::equal_to<K>, CountingAllocator<std::pair<const K, V>>> t;
  void Insert(const K& k, const V& v) { t.emplace(k, v); }
  ABSL_ATTRIBUTE_ALWAYS_INLINE bool Find(const K& k) const { return t.find(k) != t.end(); }
  void Erase(const K& k) { t.erase(k); }
  size_t Bytes() const { return g_allocated + sizeof(t); }
  double LoadFactor() const { return t.load_factor(); }
};

template <typename K>
K MakeKey(uint64_t i) {
  if constexpr (std::is_same_v<K, uint64_t>) {
    return i * 0x9E3779B97F4A7C15ULL;  // spread, still unique
  } else {
    return MakeObj(i);
  }
}

// Returns this thread's CPU time in nanoseconds.
int64_t CpuNs() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return int64_t(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

double NsPer(int64_t start, size_t n) { return double(CpuNs() - start) / double(n); }

// One run: insert N keys (timed), bytes per entry, find-hit over the N keys in random order,
// find-miss over N absent keys, erase all N. Reported as counters (ns per operation).
template <template <typename, typename> class Map, typename K, typename V>
void BM_MapOps(benchmark::State& state) {
  const size_t n = size_t(state.range(0));
  std::vector<uint64_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), std::mt19937_64(42));
  for (auto _ : state) {
    g_allocated = 0;
    auto map = std::make_unique<Map<K, V>>();
    int64_t t0 = CpuNs();
    for (uint64_t i = 0; i < n; ++i) map->Insert(MakeKey<K>(i), V{});
    state.counters["insert_ns"] = NsPer(t0, n);
    state.counters["bytes_per_entry"] = double(map->Bytes()) / double(n);
    state.counters["load_factor"] = map->LoadFactor();
    size_t hits = 0;
    t0 = CpuNs();
    for (uint64_t i : order) hits += map->Find(MakeKey<K>(i));
    state.counters["find_hit_ns"] = NsPer(t0, n);
    t0 = CpuNs();
    for (uint64_t i : order) hits += map->Find(MakeKey<K>(i + n));
    state.counters["find_miss_ns"] = NsPer(t0, n);
    t0 = CpuNs();
    for (uint64_t i : order) map->Erase(MakeKey<K>(i));
    state.counters["erase_ns"] = NsPer(t0, n);
    if (hits != n) state.SkipWithError("find-hit count mismatch");
    benchmark::DoNotOptimize(hits);
  }
}

// Find-hit in batches of 16: hash all, Prefetch all, then Find(key, hash) (the server's pipeline
// path).
template <typename K>
void BM_DashTableFindPrefetched(benchmark::State& state) {
  const size_t n = size_t(state.range(0));
  DashMap<K, Obj16> map;
  for (uint64_t i = 0; i < n; ++i) map.Insert(MakeKey<K>(i), Obj16{});
  std::vector<uint64_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), std::mt19937_64(42));
  using Policy = typename DashMap<K, Obj16>::Policy;
  for (auto _ : state) {
    size_t hits = 0;
    int64_t t0 = CpuNs();
    constexpr size_t kBatch = 16;
    for (size_t i = 0; i + kBatch <= n; i += kBatch) {
      K keys[kBatch];
      uint64_t hashes[kBatch];
      for (size_t j = 0; j < kBatch; ++j) {
        keys[j] = MakeKey<K>(order[i + j]);
        hashes[j] = Policy::HashFn(keys[j]);
        map.t.Prefetch(hashes[j]);
      }
      for (size_t j = 0; j < kBatch; ++j) hits += !map.t.Find(keys[j], hashes[j]).is_done();
    }
    state.counters["find_hit_ns"] = NsPer(t0, n);
    benchmark::DoNotOptimize(hits);
  }
}

// Find only, on a table built once (not timed) from keys 0..N-1: random-order hits and misses
// (absent keys N..2N-1), then the same with the server's batched path (hash 16 keys, prefetch
// each, then find each: DashTable::Prefetch / flat_hash_map::prefetch). Every map sees the same
// keys in the same order. Counters in ns per lookup, thread CPU time.
template <typename K>
bool FindWithHash(const DashMap<K, K>& m, const K& k, uint64_t h) {
  return !m.t.Find(k, h).is_done();
}
template <typename K>
void PrefetchHash(const DashMap<K, K>& m, const K&, uint64_t h) { m.t.Prefetch(h); }
template <typename K>
bool FindWithHash(const AbslMap<K, K>& m, const K& k, uint64_t h) {
  return m.t.find(k, h) != m.t.end();
}
template <typename K>
void PrefetchHash(const AbslMap<K, K>& m, const K& k, uint64_t) { m.t.prefetch(k); }

template <template <typename, typename> class Map, typename K>
size_t FindBatched(const Map<K, K>& map, const std::vector<uint64_t>& order, uint64_t offset) {
  constexpr size_t kBatch = 16;
  size_t hits = 0;
  for (size_t i = 0; i + kBatch <= order.size(); i += kBatch) {
    K keys[kBatch];
    uint64_t hashes[kBatch];
    for (size_t j = 0; j < kBatch; ++j) {
      keys[j] = MakeKey<K>(order[i + j] + offset);
      hashes[j] = Hasher()(keys[j]);
      PrefetchHash(map, keys[j], hashes[j]);
    }
    for (size_t j = 0; j < kBatch; ++j) hits += FindWithHash(map, keys[j], hashes[j]);
  }
  return hits;
}

template <template <typename, typename> class Map, typename K>
void BM_Find(benchmark::State& state) {
  const size_t n = size_t(state.range(0));
  std::vector<uint64_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), std::mt19937_64(42));
  auto map = std::make_unique<Map<K, K>>();
  for (uint64_t i = 0; i < n; ++i) map->Insert(MakeKey<K>(i), K{});
  state.counters["load_factor"] = map->LoadFactor();
  for (auto _ : state) {
    size_t hits = 0, misses = 0;
    int64_t t0 = CpuNs();
    for (uint64_t i : order) hits += map->Find(MakeKey<K>(i));
    state.counters["hit_ns"] = NsPer(t0, n);
    t0 = CpuNs();
    for (uint64_t i : order) misses += map->Find(MakeKey<K>(i + n));
    state.counters["miss_ns"] = NsPer(t0, n);
    t0 = CpuNs();
    hits += FindBatched(*map, order, 0);
    state.counters["hit_batch_ns"] = NsPer(t0, n);
    t0 = CpuNs();
    misses += FindBatched(*map, order, n);
    state.counters["miss_batch_ns"] = NsPer(t0, n);
    if (hits != 2 * n || misses != 0) state.SkipWithError("find count mismatch");
  }
}

// Find only, DashTable and absl::flat_hash_map side by side: both tables hold keys 0..N-1 (built
// untimed), then blocks of 50,000 random-order lookups alternate between the two (hits, then
// misses), twice over the keys. Interleaving puts both maps through the same machine state (the
// other tenants of a VM, the frequency, the caches they share), so the ratio counters are far
// steadier than the ratio of two separate BM_Find runs. Counters in ns per lookup, thread CPU time.
template <typename K>
void BM_FindInterleaved(benchmark::State& state) {
  const size_t n = size_t(state.range(0));
  constexpr size_t kBlock = 50'000;
  std::vector<uint64_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), std::mt19937_64(42));
  auto dash = std::make_unique<DashMap<K, K>>();
  auto absl = std::make_unique<AbslMap<K, K>>();
  for (uint64_t i = 0; i < n; ++i) {
    dash->Insert(MakeKey<K>(i), K{});
    absl->Insert(MakeKey<K>(i), K{});
  }
  for (auto _ : state) {
    int64_t ns[4] = {};  // dash hit, absl hit, dash miss, absl miss
    size_t found[4] = {}, lookups = 0;
    for (int round = 0; round < 2; ++round) {
      for (size_t pos = 0; pos + kBlock <= n; pos += kBlock, lookups += kBlock) {
        for (int k = 0; k < 4; ++k) {
          const uint64_t offset = k < 2 ? 0 : n;
          const int64_t t0 = CpuNs();
          if (k % 2 == 0) {
            for (size_t j = pos; j < pos + kBlock; ++j) {
              found[k] += dash->Find(MakeKey<K>(order[j] + offset));
            }
          } else {
            for (size_t j = pos; j < pos + kBlock; ++j) {
              found[k] += absl->Find(MakeKey<K>(order[j] + offset));
            }
          }
          ns[k] += CpuNs() - t0;
        }
      }
    }
    if (found[0] != lookups || found[1] != lookups || found[2] != 0 || found[3] != 0) {
      state.SkipWithError("find count mismatch");
    }
    const auto per = [&](int k) { return double(ns[k]) / double(lookups); };
    state.counters["dash_hit_ns"] = per(0);
    state.counters["absl_hit_ns"] = per(1);
    state.counters["hit_ratio"] = per(0) / per(1);
    state.counters["dash_miss_ns"] = per(2);
    state.counters["absl_miss_ns"] = per(3);
    state.counters["miss_ratio"] = per(2) / per(3);
  }
}

// Returns the DashTable's segment count (0 for the other maps).
template <typename Map>
size_t SegmentCount(const Map& map) {
  if constexpr (requires { map.t.segment_count(); }) {
    return map.t.segment_count();
  } else {
    return 0;
  }
}

// Inserts N keys one by one, timing each; reports the worst and the 99.9999th percentile, and
// for the DashTable the worst insert that split a segment and how many of its large chunks
// came from the reserve (pre-faulted) or were allocated on the inserting thread.
template <template <typename, typename> class Map>
void BM_MaxInsertLatency(benchmark::State& state) {
  const size_t n = size_t(state.range(0));
  for (auto _ : state) {
    auto map = std::make_unique<Map<uint64_t, uint64_t>>();
    std::vector<float> lat(n);
    float max_split = 0;  // DashMap: the worst insert that split a segment
    for (uint64_t i = 0; i < n; ++i) {
      const size_t segments = SegmentCount(*map);
      int64_t t0 = CpuNs();
      map->Insert(MakeKey<uint64_t>(i), i);
      lat[i] = float(double(CpuNs() - t0) / 1000.0);
      if (SegmentCount(*map) != segments) max_split = std::max(max_split, lat[i]);
    }
    std::sort(lat.begin(), lat.end());
    state.counters["max_insert_us"] = lat.back();
    state.counters["p999999_insert_us"] = lat[size_t(double(n) * 0.999999)];
    if constexpr (requires { map->reserve; }) {
      state.counters["max_split_insert_us"] = max_split;
      state.counters["reserve_hits"] = double(map->reserve.hits());
      state.counters["reserve_misses"] = double(map->reserve.misses());
    }
  }
}

// The machine's own floor for "worst single operation": random one-byte reads over a 400 MiB
// buffer (already faulted in) for as long as a 10M-key insert run, timed in batches of 100 on
// the same clock as the inserts; reports the worst batch. A table operation slower than this can
// be the table's doing; one at this level may be the host's (this VM stalls memory accesses
// for milliseconds now and then, with or without huge pages).
void BM_StallFloor(benchmark::State& state) {
  const size_t bytes = size_t(400) << 20;
  std::vector<uint8_t> buf(bytes, 1);
  for (auto _ : state) {
    uint64_t x = 88172645463325252ULL, sum = 0;
    float worst = 0;
    const int64_t end = CpuNs() + int64_t(state.range(0)) * 1'000'000'000;
    for (int64_t t0 = CpuNs(); t0 < end; t0 = CpuNs()) {
      for (int k = 0; k < 100; ++k) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        sum += buf[x % bytes];
      }
      worst = std::max(worst, float(double(CpuNs() - t0) / 1000.0));
    }
    benchmark::DoNotOptimize(sum);
    state.counters["worst_100_reads_us"] = worst;
  }
}

constexpr int64_t k1M = 1'000'000, k10M = 10'000'000;

void SizeArgs(benchmark::internal::Benchmark* b) {
  b->Arg(k1M)->Arg(k10M)->Iterations(1)->Unit(benchmark::kMillisecond)->UseRealTime();
}
void GrowArgs(benchmark::internal::Benchmark* b) {
  b->Arg(k10M)->Iterations(1)->Unit(benchmark::kMillisecond)->UseRealTime();
}

BENCHMARK_TEMPLATE(BM_MapOps, DashMap, uint64_t, uint64_t)->Apply(SizeArgs);
BENCHMARK_TEMPLATE(BM_MapOps, AbslMap, uint64_t, uint64_t)->Apply(SizeArgs);
BENCHMARK_TEMPLATE(BM_MapOps, StdMap, uint64_t, uint64_t)->Apply(SizeArgs);
BENCHMARK_TEMPLATE(BM_MapOps, DashMap, Obj16, Obj16)->Apply(SizeArgs);
BENCHMARK_TEMPLATE(BM_MapOps, AbslMap, Obj16, Obj16)->Apply(SizeArgs);
BENCHMARK_TEMPLATE(BM_MapOps, StdMap, Obj16, Obj16)->Apply(SizeArgs);
BENCHMARK_TEMPLATE(BM_Find, DashMap, uint64_t)->Apply(SizeArgs);
BENCHMARK_TEMPLATE(BM_Find, AbslMap, uint64_t)->Apply(SizeArgs);
BENCHMARK_TEMPLATE(BM_Find, DashMap, Obj16)->Apply(SizeArgs);
BENCHMARK_TEMPLATE(BM_Find, AbslMap, Obj16)->Apply(SizeArgs);
BENCHMARK_TEMPLATE(BM_FindInterleaved, uint64_t)->Apply(SizeArgs);
BENCHMARK_TEMPLATE(BM_FindInterleaved, Obj16)->Apply(SizeArgs);
BENCHMARK_TEMPLATE(BM_DashTableFindPrefetched, uint64_t)->Apply(SizeArgs);
BENCHMARK_TEMPLATE(BM_DashTableFindPrefetched, Obj16)->Apply(SizeArgs);
BENCHMARK_TEMPLATE(BM_MaxInsertLatency, DashMap)->Apply(GrowArgs);
BENCHMARK_TEMPLATE(BM_MaxInsertLatency, AbslMap)->Apply(GrowArgs);
BENCHMARK_TEMPLATE(BM_MaxInsertLatency, StdMap)->Apply(GrowArgs);
BENCHMARK(BM_StallFloor)->Arg(15)->Iterations(1)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace dashkv

BENCHMARK_MAIN();
