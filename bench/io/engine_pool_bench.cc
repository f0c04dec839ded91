// Cross-engine hop costs: round-trip latency of one Await between two engines (spinning vs
// sleeping engines) and hop throughput with 128 hops in flight.
// Run: build/bench/engine_pool_bench
#include <benchmark/benchmark.h>

#include <atomic>
#include <boost/asio/co_spawn.hpp>
#include <future>

#include "core/base/logging.h"
#include "io/engine_pool.h"

namespace dashkv::io {
namespace {

namespace asio = boost::asio;

asio::awaitable<void> HopLoop(EnginePool* pool, unsigned target, int64_t hops,
                              std::atomic<int64_t>* sink) {
  int64_t sum = 0;
  for (int64_t i = 0; i < hops; ++i) sum += co_await pool->Await(target, [] { return 1; });
  sink->fetch_add(sum, std::memory_order_relaxed);
}

// Runs `coros` coroutines on engine 0, each doing `hops` round trips to engine 1.
void RunHops(EnginePool& pool, int coros, int64_t hops) {
  std::atomic<int64_t> sink{0};
  std::atomic<int> left{coros};
  std::promise<void> done;
  pool.Post(0, [&] {
    for (int c = 0; c < coros; ++c) {
      asio::co_spawn(pool[0].context(), HopLoop(&pool, 1, hops, &sink),
                     [&](std::exception_ptr e) {
                       if (e) LOG(FATAL) << "hop coroutine threw";
                       if (left.fetch_sub(1) == 1) done.set_value();
                     });
    }
  });
  done.get_future().get();
  CHECK(sink.load() == coros * hops) << "lost hops";
}

// Arg 0: spin_us of both engines.
void BM_EnginePoolHopRoundTrip(benchmark::State& state) {
  EnginePool pool(2, EngineOptions{.spin_us = static_cast<uint32_t>(state.range(0))});
  pool.Start();
  const int64_t kHops = 2000;
  for (auto _ : state) RunHops(pool, 1, kHops);
  state.SetItemsProcessed(state.iterations() * kHops);
  pool.Stop();
  pool.Join();
}
BENCHMARK(BM_EnginePoolHopRoundTrip)->Arg(0)->Arg(30)->Arg(100)->UseRealTime()->Unit(
    benchmark::kMillisecond);

// 128 hops in flight from engine 0 to engine 1.
void BM_EnginePoolHopThroughput(benchmark::State& state) {
  EnginePool pool(2, EngineOptions{.spin_us = static_cast<uint32_t>(state.range(0))});
  pool.Start();
  const int kInFlight = 128;
  const int64_t kHopsEach = 500;
  for (auto _ : state) RunHops(pool, kInFlight, kHopsEach);
  state.SetItemsProcessed(state.iterations() * kInFlight * kHopsEach);
  pool.Stop();
  pool.Join();
}
BENCHMARK(BM_EnginePoolHopThroughput)->Arg(0)->Arg(30)->UseRealTime()->Unit(
    benchmark::kMillisecond);

}  // namespace
}  // namespace dashkv::io

BENCHMARK_MAIN();
