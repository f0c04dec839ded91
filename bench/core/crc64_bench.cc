// Benchmarks for core/crc64.h: the CRC-64 of RDB files and DUMP payloads.
// Run: ./build/bench/crc64_bench
#include <benchmark/benchmark.h>

#include <random>
#include <string>

#include "core/crc64.h"

namespace dashkv {
namespace {

std::string RandomBytes(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::string s(n, '\0');
  for (char& c : s) c = static_cast<char>(rng());
  return s;
}

// Crc64 as the product calls it (the fastest implementation the CPU has).
void BM_Crc64(benchmark::State& state) {
  const std::string s = RandomBytes(state.range(0), 1);
  for (auto _ : state) benchmark::DoNotOptimize(Crc64(0, s));
  state.SetBytesProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_Crc64)->RangeMultiplier(4)->Range(16, 1 << 20);

// The portable slice-by-8 tables (the only implementation before carry-less folding).
void BM_Crc64SliceBy8(benchmark::State& state) {
  const std::string s = RandomBytes(state.range(0), 1);
  for (auto _ : state) benchmark::DoNotOptimize(detail::Crc64SliceBy8(0, s));
  state.SetBytesProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_Crc64SliceBy8)->RangeMultiplier(4)->Range(16, 1 << 20);

// Carry-less folding without the size threshold (to place the threshold).
void BM_Crc64Clmul(benchmark::State& state) {
  if (!detail::Crc64HasClmul()) return state.SkipWithError("no PCLMULQDQ");
  const std::string s = RandomBytes(state.range(0), 1);
  for (auto _ : state) benchmark::DoNotOptimize(detail::Crc64Clmul(0, s));
  state.SetBytesProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_Crc64Clmul)->DenseRange(16, 128, 16)->Arg(1 << 10)->Arg(1 << 17)->Arg(1 << 20);

// Combining the CRC of a 128 KiB snapshot chunk (and of a length with every bit set).
void BM_Crc64Combine(benchmark::State& state) {
  uint64_t crc = 0x0123456789abcdefULL;
  const uint64_t len = uint64_t(state.range(0));
  for (auto _ : state) {
    crc = Crc64Combine(crc, 0xfedcba9876543210ULL, len);
    benchmark::DoNotOptimize(crc);
  }
}
BENCHMARK(BM_Crc64Combine)->Arg(128 << 10)->Arg(131071)->Arg((1 << 30) - 1);

}  // namespace
}  // namespace dashkv

BENCHMARK_MAIN();
