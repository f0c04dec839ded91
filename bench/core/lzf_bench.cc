// Benchmarks for core/lzf.h: LZF compression as RDB snapshots and DUMP use it (an output buffer
// of the input's size - 4: incompressible input is given up). Run: ./build/bench/lzf_bench
#include <benchmark/benchmark.h>

#include <random>
#include <string>
#include <vector>

#include "core/lzf.h"

namespace dashkv {
namespace {

enum Kind { kRun, kPrintable, kBinary, kWords };

// kRun: one repeated byte (redis-cli/DEBUG POPULATE-style values); kPrintable: random printable
// characters (redis-benchmark -d values); kBinary: random bytes; kWords: random words from a
// small vocabulary (text-like, compressible about 2x).
std::string Input(Kind kind, size_t n) {
  std::mt19937_64 rng(42);
  std::string s;
  s.reserve(n);
  static const std::vector<std::string> kVocab = {
      "user", "session", "id", "name", "value", "2026-11-26", "true", "false", "null",
      "{\"a\":", "count", "items", "price", "token", "expires", "region", "eu-west-1"};
  while (s.size() < n) {
    switch (kind) {
      case kRun: s.push_back('x'); break;
      case kPrintable: s.push_back(static_cast<char>('!' + rng() % 94)); break;
      case kBinary: s.push_back(static_cast<char>(rng())); break;
      case kWords: s += kVocab[rng() % kVocab.size()]; s.push_back(rng() % 4 ? ' ' : ','); break;
    }
  }
  s.resize(n);
  return s;
}

// probe: LzfCompress's probe (0: none; 256: RdbLzf::kProbe, as snapshot files use it).
void BM_LzfCompress(benchmark::State& state) {
  const std::string in = Input(static_cast<Kind>(state.range(0)), state.range(1));
  const size_t probe = static_cast<size_t>(state.range(2));
  std::string out(in.size() - 4, '\0');
  size_t clen = 0;
  for (auto _ : state) {
    clen = LzfCompress(in, out.data(), out.size(), probe);
    benchmark::DoNotOptimize(clen);
  }
  state.SetBytesProcessed(state.iterations() * in.size());
  state.counters["ratio"] = clen == 0 ? 1.0 : double(clen) / double(in.size());
}
BENCHMARK(BM_LzfCompress)
    ->ArgNames({"kind", "bytes", "probe"})
    ->ArgsProduct({{kRun, kPrintable, kBinary, kWords}, {1024, 16384}, {0, 256}});

}  // namespace
}  // namespace dashkv

BENCHMARK_MAIN();
