// Benchmarks of ReplyBuilder encoding.
#include <benchmark/benchmark.h>

#include <string>

#include "io/reply_builder.h"

namespace dashkv::io {
namespace {

// 100 bulk strings of range(0) bytes per iteration, into a reused buffer.
void BM_ReplyBuilderBulk(benchmark::State& state) {
  const std::string value(static_cast<size_t>(state.range(0)), 'v');
  ReplyBuilder rb;
  for (auto _ : state) {
    rb.Clear();
    for (int i = 0; i < 100; ++i) rb.SendBulk(value);
    benchmark::DoNotOptimize(rb.buffer().data());
  }
  state.SetItemsProcessed(state.iterations() * 100);
}
BENCHMARK(BM_ReplyBuilderBulk)->Range(8, 4096);

// 100 integers of mixed magnitude per iteration.
void BM_ReplyBuilderLong(benchmark::State& state) {
  ReplyBuilder rb;
  int64_t values[100];
  for (int i = 0; i < 100; ++i) values[i] = (i % 2 ? -1 : 1) * (int64_t{1} << (i % 60));
  for (auto _ : state) {
    rb.Clear();
    for (int64_t v : values) rb.SendLong(v);
    benchmark::DoNotOptimize(rb.buffer().data());
  }
  state.SetItemsProcessed(state.iterations() * 100);
}
BENCHMARK(BM_ReplyBuilderLong);

void BM_ReplyBuilderOk(benchmark::State& state) {
  ReplyBuilder rb;
  for (auto _ : state) {
    rb.Clear();
    for (int i = 0; i < 100; ++i) rb.SendOk();
    benchmark::DoNotOptimize(rb.buffer().data());
  }
  state.SetItemsProcessed(state.iterations() * 100);
}
BENCHMARK(BM_ReplyBuilderOk);

void BM_ReplyBuilderDouble(benchmark::State& state) {
  ReplyBuilder rb(state.range(0) == 3 ? RespVersion::kResp3 : RespVersion::kResp2);
  for (auto _ : state) {
    rb.Clear();
    for (int i = 0; i < 100; ++i) rb.SendDouble(i * 0.37);
    benchmark::DoNotOptimize(rb.buffer().data());
  }
  state.SetItemsProcessed(state.iterations() * 100);
}
BENCHMARK(BM_ReplyBuilderDouble)->Arg(2)->Arg(3);

}  // namespace
}  // namespace dashkv::io

BENCHMARK_MAIN();
