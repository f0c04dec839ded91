// Listpack push/pop/index costs over node-sized listpacks.
#include <benchmark/benchmark.h>

#include <string>

#include "core/listpack.h"

namespace dashkv {
namespace {

const std::string kValue = "in-memory data structure store.";

// Builds a listpack of range(0) elements, one push at a time, at the tail or the head.
void BM_ListpackPush(benchmark::State& state, ListEnd end) {
  const int64_t n = state.range(0);
  for (auto _ : state) {
    Listpack lp;
    for (int64_t i = 0; i < n; ++i) lp.Push(kValue, end);
    benchmark::DoNotOptimize(lp.total_bytes());
  }
  state.SetItemsProcessed(state.iterations() * n);
}
BENCHMARK_CAPTURE(BM_ListpackPush, tail, ListEnd::kTail)->Range(16, 4096);
BENCHMARK_CAPTURE(BM_ListpackPush, head, ListEnd::kHead)->Range(16, 4096);

void BM_ListpackPushInt(benchmark::State& state) {
  const int64_t n = state.range(0);
  for (auto _ : state) {
    Listpack lp;
    for (int64_t i = 0; i < n; ++i) lp.Push(std::to_string(i * 7919), ListEnd::kTail);
    benchmark::DoNotOptimize(lp.total_bytes());
  }
  state.SetItemsProcessed(state.iterations() * n);
}
BENCHMARK(BM_ListpackPushInt)->Range(16, 4096);

// Pop from the head (delete first + copy out) and push back at the tail: steady size.
void BM_ListpackPopHeadPushTail(benchmark::State& state) {
  Listpack lp;
  for (int64_t i = 0; i < state.range(0); ++i) lp.Push(kValue, ListEnd::kTail);
  for (auto _ : state) {
    std::string v = lp.Get(lp.First()).ToString();
    lp.Delete(lp.First());
    lp.Push(v, ListEnd::kTail);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_ListpackPopHeadPushTail)->Range(16, 4096);

void BM_ListpackIndex(benchmark::State& state) {
  const long n = static_cast<long>(state.range(0));
  Listpack lp;
  for (long i = 0; i < n; ++i) lp.Push(kValue, ListEnd::kTail);
  long i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(lp.Get(lp.Seek(i)).str_value().data());
    i = (i + 97) % n;
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_ListpackIndex)->Range(16, 4096);

void BM_ListpackFind(benchmark::State& state) {
  Listpack lp;
  for (int64_t i = 0; i < state.range(0); ++i) lp.Push("f" + std::to_string(i), ListEnd::kTail);
  const std::string needle = "f" + std::to_string(state.range(0) - 1);
  for (auto _ : state) benchmark::DoNotOptimize(lp.Find(needle, lp.First()));
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_ListpackFind)->Range(16, 1024);

}  // namespace
}  // namespace dashkv

BENCHMARK_MAIN();
