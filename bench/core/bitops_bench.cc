// Benchmarks for core/bitops.h (BITCOUNT, BITPOS, BITOP over large strings) and core/glob.h
// (typical KEYS/SCAN MATCH patterns). Run: ./build/bench/bitops_bench
#include <benchmark/benchmark.h>

#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "core/bitops.h"
#include "core/glob.h"

namespace dashkv {
namespace {

std::string RandomBytes(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::string s(n, '\0');
  for (char& c : s) c = static_cast<char>(rng());
  return s;
}

void BM_BitCount(benchmark::State& state) {
  const std::string s = RandomBytes(state.range(0), 1);
  for (auto _ : state) benchmark::DoNotOptimize(BitCount(s));
  state.SetBytesProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_BitCount)->Range(64, 1 << 20);

void BM_BitCountBitRange(benchmark::State& state) {
  const std::string s = RandomBytes(state.range(0), 2);
  for (auto _ : state) benchmark::DoNotOptimize(BitCount(s, 3, -5, BitUnit::kBit));
  state.SetBytesProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_BitCountBitRange)->Arg(1 << 20);

// BITPOS k 0 on a string of all ones: scans the whole string.
void BM_BitPosScan(benchmark::State& state) {
  const std::string s(state.range(0), '\xff');
  for (auto _ : state) benchmark::DoNotOptimize(BitPos(s, 0));
  state.SetBytesProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_BitPosScan)->Arg(1 << 20);

void BM_BitOp(benchmark::State& state) {
  const size_t n = 1 << 20;
  std::vector<std::string> srcs;
  for (int i = 0; i < state.range(1); ++i) srcs.push_back(RandomBytes(n, 10 + i));
  std::vector<std::string_view> views(srcs.begin(), srcs.end());
  const auto kind = static_cast<BitOpKind>(state.range(0));
  for (auto _ : state) benchmark::DoNotOptimize(BitOp(kind, views));
  state.SetBytesProcessed(state.iterations() * n * state.range(1));
}
BENCHMARK(BM_BitOp)
    ->Args({static_cast<int>(BitOpKind::kAnd), 2})
    ->Args({static_cast<int>(BitOpKind::kOr), 4})
    ->Args({static_cast<int>(BitOpKind::kXor), 2})
    ->Args({static_cast<int>(BitOpKind::kNot), 1});

void BM_BitfieldIncrBy(benchmark::State& state) {
  std::string s(1024, '\0');
  const BitfieldType type{true, 13};
  uint64_t off = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(BitfieldIncrBy(s, off, type, 7, BitfieldOverflow::kWrap));
    off = (off + 101) % 8000;
  }
}
BENCHMARK(BM_BitfieldIncrBy);

// Matches one pattern against 1024 keys of the form "user:<n>:profile" / "session:<n>".
void BM_GlobMatch(benchmark::State& state, std::string_view pattern) {
  std::vector<std::string> keys;
  for (int i = 0; i < 1024; ++i) {
    keys.push_back(i % 2 ? "user:" + std::to_string(i * 7919) + ":profile"
                         : "session:" + std::to_string(i));
  }
  for (auto _ : state) {
    int hits = 0;
    for (const std::string& k : keys) hits += GlobMatch(pattern, k);
    benchmark::DoNotOptimize(hits);
  }
  state.SetItemsProcessed(state.iterations() * keys.size());
}
BENCHMARK_CAPTURE(BM_GlobMatch, prefix, "user:*");
BENCHMARK_CAPTURE(BM_GlobMatch, suffix, "*:profile");
BENCHMARK_CAPTURE(BM_GlobMatch, infix, "user:*1*:profile");
BENCHMARK_CAPTURE(BM_GlobMatch, set_and_any, "[su]???*:[0-9]*");
BENCHMARK_CAPTURE(BM_GlobMatch, exact, "session:42");

void BM_GlobBacktrack(benchmark::State& state) {
  const std::string subject(state.range(0), 'a');
  for (auto _ : state) benchmark::DoNotOptimize(GlobMatch("a*a*a*a*a*a*a*a*b", subject));
  state.SetBytesProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_GlobBacktrack)->Range(64, 16384);

}  // namespace
}  // namespace dashkv

BENCHMARK_MAIN();
