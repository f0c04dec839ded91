// QuickList push/pop/index costs and the 1M-element queue pattern, with and without compression.
#include <benchmark/benchmark.h>

#include <string>

#include "core/quicklist.h"

namespace dashkv {
namespace {

const std::string kValue = "in-memory data structure store.";

// args: {elements, compress depth}
void BM_QuickListPush(benchmark::State& state, ListEnd end) {
  const int64_t n = state.range(0);
  for (auto _ : state) {
    QuickList ql(-2, static_cast<int>(state.range(1)));
    for (int64_t i = 0; i < n; ++i) ql.Push(kValue, end);
    benchmark::DoNotOptimize(ql.size());
  }
  state.SetItemsProcessed(state.iterations() * n);
}
BENCHMARK_CAPTURE(BM_QuickListPush, head, ListEnd::kHead)
    ->Args({1000, 0})->Args({100000, 0})->Args({100000, 1});
BENCHMARK_CAPTURE(BM_QuickListPush, tail, ListEnd::kTail)
    ->Args({1000, 0})->Args({100000, 0})->Args({100000, 1});

// Pops every element of a list of range(0) elements (refilled outside the timing).
void BM_QuickListPop(benchmark::State& state, ListEnd end) {
  const int64_t n = state.range(0);
  for (auto _ : state) {
    state.PauseTiming();
    QuickList ql(-2, static_cast<int>(state.range(1)));
    for (int64_t i = 0; i < n; ++i) ql.Push(kValue, ListEnd::kTail);
    state.ResumeTiming();
    while (auto v = ql.Pop(end)) benchmark::DoNotOptimize(v->data());
  }
  state.SetItemsProcessed(state.iterations() * n);
}
BENCHMARK_CAPTURE(BM_QuickListPop, head, ListEnd::kHead)->Args({100000, 0})->Args({100000, 1});
BENCHMARK_CAPTURE(BM_QuickListPop, tail, ListEnd::kTail)->Args({100000, 0})->Args({100000, 1});

// LINDEX at pseudo-random positions.
void BM_QuickListIndex(benchmark::State& state) {
  const long n = static_cast<long>(state.range(0));
  QuickList ql(-2, static_cast<int>(state.range(1)));
  for (long i = 0; i < n; ++i) ql.Push(kValue, ListEnd::kTail);
  long i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(ql.Index(i));
    i = (i + 7919) % n;
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_QuickListIndex)->Args({1000, 0})->Args({100000, 0})->Args({1000000, 0})
    ->Args({100000, 1});

// Queue pattern: a list of range(0) elements, each iteration one RPUSH + one LPOP.
void BM_QuickListQueue(benchmark::State& state) {
  QuickList ql(-2, static_cast<int>(state.range(1)));
  for (int64_t i = 0; i < state.range(0); ++i) ql.Push(kValue, ListEnd::kTail);
  for (auto _ : state) {
    ql.Push(kValue, ListEnd::kTail);
    benchmark::DoNotOptimize(ql.Pop(ListEnd::kHead));
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_QuickListQueue)->Args({1000, 0})->Args({1000000, 0})->Args({1000000, 1})
    ->Args({1000000, 2});

// LRANGE 0 99 from the head.
void BM_QuickListRange100(benchmark::State& state) {
  QuickList ql(-2, static_cast<int>(state.range(1)));
  for (int64_t i = 0; i < state.range(0); ++i) ql.Push(kValue, ListEnd::kTail);
  for (auto _ : state) {
    int k = 0;
    for (auto it = ql.Begin(); it.Valid() && k < 100; it.Next(), ++k) {
      benchmark::DoNotOptimize(it.Value().str_value().data());
    }
  }
  state.SetItemsProcessed(state.iterations() * 100);
}
BENCHMARK(BM_QuickListRange100)->Args({100000, 0})->Args({100000, 1});

}  // namespace
}  // namespace dashkv

BENCHMARK_MAIN();
