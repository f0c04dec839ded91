// CompactObj micro-benchmarks: key comparison, hashing and construction per representation.
// Argument: 0 = inline raw (10 bytes), 1 = packed ASCII (16 bytes), 2 = int (7 digits),
// 3 = heap (40 bytes), 4 = heap with expiry (16 bytes).
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "core/compact_object.h"
#include "core/hash.h"

namespace dashkv {
namespace {

constexpr int kKeys = 1024;

std::string KeyOf(int form, int i) {
  switch (form) {
    case 0: return "key:" + std::to_string(100000 + i);
    case 1: return "value:" + std::to_string(1000000000 + i);
    case 2: return std::to_string(1000000 + i);
    default: {
      std::string s = "user:session:" + std::to_string(100000 + i);
      s.resize(form == 3 ? 40 : 16, '.');
      return s;
    }
  }
}

struct Keys {
  std::vector<std::string> strings;
  std::vector<CompactObj> objs;
};

Keys MakeKeys(int form) {
  Keys k;
  for (int i = 0; i < kKeys; ++i) {
    k.strings.push_back(KeyOf(form, i));
    k.objs.push_back(CompactObj::FromString(k.strings.back()));
    if (form == 4) k.objs.back().SetExpireTimeMs(1000);
  }
  return k;
}

void BM_CompactObjEqualsString(benchmark::State& state) {
  Keys k = MakeKeys(static_cast<int>(state.range(0)));
  size_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(k.objs[i % kKeys].EqualsString(k.strings[i % kKeys]));
    ++i;
  }
}
BENCHMARK(BM_CompactObjEqualsString)->DenseRange(0, 4);

// A miss of the same length: what a probe of a full bucket mostly sees.
void BM_CompactObjEqualsStringMiss(benchmark::State& state) {
  Keys k = MakeKeys(static_cast<int>(state.range(0)));
  size_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(k.objs[i % kKeys].EqualsString(k.strings[(i + 1) % kKeys]));
    ++i;
  }
}
BENCHMARK(BM_CompactObjEqualsStringMiss)->DenseRange(0, 4);

void BM_CompactObjHash(benchmark::State& state) {
  Keys k = MakeKeys(static_cast<int>(state.range(0)));
  size_t i = 0;
  for (auto _ : state) benchmark::DoNotOptimize(k.objs[i++ % kKeys].Hash());
}
BENCHMARK(BM_CompactObjHash)->DenseRange(0, 4);

// Baseline: hashing the same bytes held in a std::string.
void BM_HashBytesBaseline(benchmark::State& state) {
  Keys k = MakeKeys(static_cast<int>(state.range(0)));
  size_t i = 0;
  for (auto _ : state) benchmark::DoNotOptimize(HashBytes(k.strings[i++ % kKeys]));
}
BENCHMARK(BM_HashBytesBaseline)->DenseRange(0, 3);

void BM_CompactObjFromString(benchmark::State& state) {
  Keys k = MakeKeys(static_cast<int>(state.range(0)));
  size_t i = 0;
  for (auto _ : state) {
    CompactObj o = CompactObj::FromString(k.strings[i++ % kKeys]);
    benchmark::DoNotOptimize(o);
  }
}
BENCHMARK(BM_CompactObjFromString)->DenseRange(0, 3);

void BM_CompactObjGetString(benchmark::State& state) {
  Keys k = MakeKeys(static_cast<int>(state.range(0)));
  std::string scratch;
  size_t i = 0;
  for (auto _ : state) benchmark::DoNotOptimize(k.objs[i++ % kKeys].GetString(&scratch));
}
BENCHMARK(BM_CompactObjGetString)->DenseRange(0, 4);

void BM_CompactObjAppend(benchmark::State& state) {
  for (auto _ : state) {
    CompactObj o;
    for (int i = 0; i < 1000; ++i) o.AppendString("0123456789");
    benchmark::DoNotOptimize(o);
  }
  state.SetItemsProcessed(state.iterations() * 1000);
}
BENCHMARK(BM_CompactObjAppend);

}  // namespace
}  // namespace dashkv

BENCHMARK_MAIN();
