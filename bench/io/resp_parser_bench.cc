// Benchmarks of RespParser on pipelines typical of memtier/redis-benchmark traffic.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <string>

#include "io/resp_parser.h"

namespace dashkv::io {
namespace {

std::string Bulk(std::string_view s) {
  return "$" + std::to_string(s.size()) + "\r\n" + std::string(s) + "\r\n";
}

std::string Key(int i) {
  char key[16];
  std::snprintf(key, sizeof(key), "key:%08d", i);
  return key;
}

// `n` commands `SET key:xxxxxxxx <value_len bytes>` (or GET when value_len < 0) in one buffer.
std::string Pipeline(int n, int value_len) {
  std::string out;
  for (int i = 0; i < n; ++i) {
    if (value_len < 0) {
      out += "*2\r\n" + Bulk("GET") + Bulk(Key(i));
    } else {
      out += "*3\r\n" + Bulk("SET") + Bulk(Key(i)) + Bulk(std::string(value_len, 'v'));
    }
  }
  return out;
}

// Parses the whole pipeline per iteration; items = commands.
void ParsePipeline(benchmark::State& state, const std::string& wire) {
  RespParser parser;
  int64_t commands = 0;
  for (auto _ : state) {
    std::string_view buf = wire;
    while (parser.Parse(buf) == RespParser::Status::kCommand) {
      benchmark::DoNotOptimize(parser.args().data());
      buf.remove_prefix(parser.consumed());
      ++commands;
    }
  }
  state.SetItemsProcessed(commands);
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * wire.size()));
}

void BM_RespParserSetPipeline(benchmark::State& state) {
  ParsePipeline(state, Pipeline(static_cast<int>(state.range(0)), 256));
}
BENCHMARK(BM_RespParserSetPipeline)->Arg(1)->Arg(30);

void BM_RespParserGetPipeline(benchmark::State& state) {
  ParsePipeline(state, Pipeline(static_cast<int>(state.range(0)), -1));
}
BENCHMARK(BM_RespParserGetPipeline)->Arg(1)->Arg(30);

void BM_RespParserInlinePipeline(benchmark::State& state) {
  std::string wire;
  for (int i = 0; i < 30; ++i) wire += "SET " + Key(i) + " \"some value\"\r\n";
  ParsePipeline(state, wire);
}
BENCHMARK(BM_RespParserInlinePipeline);

// A bulk of range(0) bytes arriving in 16KB reads, the buffer growing in place.
void BM_RespParserLargeBulkIncremental(benchmark::State& state) {
  const std::string wire = Pipeline(1, static_cast<int>(state.range(0)));
  constexpr size_t kRead = 16 * 1024;
  RespParser parser;
  for (auto _ : state) {
    size_t have = 0;
    RespParser::Status st = RespParser::Status::kNeedMore;
    while (st == RespParser::Status::kNeedMore) {
      have = std::min(wire.size(), have + kRead);
      st = parser.Parse(std::string_view(wire).substr(0, have));
    }
    benchmark::DoNotOptimize(parser.args().data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * wire.size()));
}
BENCHMARK(BM_RespParserLargeBulkIncremental)->Range(64 << 10, 16 << 20);

}  // namespace
}  // namespace dashkv::io

BENCHMARK_MAIN();
