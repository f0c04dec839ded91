// MemberTable (large sets, sorted-set member index) and StringMap (large hashes): insert and find
// at up to 1M members in random order, and insert in the iteration order of another table of the
// same members (what a client replaying SMEMBERS into SADD does).
//   build/bench/member_table_bench --benchmark_filter=... --benchmark_min_time=0.2
#include <benchmark/benchmark.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "core/member_table.h"
#include "core/string_map.h"

namespace dashkv {
namespace {

// Returns n distinct members of 4..15 bytes (inline and heap members) in a random order.
std::vector<std::string> Members(size_t n) {
  std::vector<std::string> out;
  out.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    out.push_back(i % 2 == 0 ? std::to_string(i) : "m:" + std::to_string(i * 7919));
  }
  std::shuffle(out.begin(), out.end(), std::mt19937_64(1));
  return out;
}

// Returns the members of a table built from `members`, in the table's iteration order.
std::vector<std::string> InTableOrder(const std::vector<std::string>& members) {
  MemberTable t;
  for (const std::string& m : members) t.Insert(m);
  std::vector<std::string> out;
  out.reserve(members.size());
  t.ForEach([&](uint32_t slot) { out.emplace_back(t.member_view(slot)); });
  return out;
}

void BM_MemberTableInsert(benchmark::State& state) {
  std::vector<std::string> members = Members(state.range(0));
  for (auto _ : state) {
    MemberTable t;
    for (const std::string& m : members) t.Insert(m);
    benchmark::DoNotOptimize(t.size());
  }
  state.SetItemsProcessed(state.iterations() * members.size());
}
BENCHMARK(BM_MemberTableInsert)->RangeMultiplier(10)->Range(1000, 1000000);

// With one key for every iteration each iteration builds the same layout, which the branch
// predictor learns for small tables (every table had one key before per-table keys): compare
// against this to separate the hash's cost from that effect.
void BM_MemberTableInsertFixedKey(benchmark::State& state) {
  std::vector<std::string> members = Members(state.range(0));
  for (auto _ : state) {
    MemberTable t(MemberTable::Scores::kNone, 42);
    for (const std::string& m : members) t.Insert(m);
    benchmark::DoNotOptimize(t.size());
  }
  state.SetItemsProcessed(state.iterations() * members.size());
}
BENCHMARK(BM_MemberTableInsertFixedKey)->RangeMultiplier(10)->Range(1000, 100000);

void BM_StringMapSetFixedKey(benchmark::State& state) {
  std::vector<std::string> fields = Members(state.range(0));
  for (auto _ : state) {
    StringMap map(42);
    for (const std::string& f : fields) map.Set(f, "v");
    benchmark::DoNotOptimize(map.size());
  }
  state.SetItemsProcessed(state.iterations() * fields.size());
}
BENCHMARK(BM_StringMapSetFixedKey)->RangeMultiplier(10)->Range(1000, 100000);

// The members arrive in another table's iteration order (hash order before per-table seeds).
void BM_MemberTableInsertInTableOrder(benchmark::State& state) {
  std::vector<std::string> members = InTableOrder(Members(state.range(0)));
  for (auto _ : state) {
    MemberTable t;
    for (const std::string& m : members) t.Insert(m);
    benchmark::DoNotOptimize(t.size());
  }
  state.SetItemsProcessed(state.iterations() * members.size());
}
BENCHMARK(BM_MemberTableInsertInTableOrder)->RangeMultiplier(10)->Range(1000, 100000);

void BM_MemberTableFind(benchmark::State& state) {
  std::vector<std::string> members = Members(state.range(0));
  MemberTable t;
  for (const std::string& m : members) t.Insert(m);
  std::shuffle(members.begin(), members.end(), std::mt19937_64(2));
  size_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(t.Find(members[i]));
    if (++i == members.size()) i = 0;
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_MemberTableFind)->RangeMultiplier(10)->Range(1000, 1000000);

void BM_MemberTableFindMiss(benchmark::State& state) {
  std::vector<std::string> members = Members(state.range(0));
  MemberTable t;
  for (const std::string& m : members) t.Insert(m);
  for (std::string& m : members) m += "x";
  size_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(t.Find(members[i]));
    if (++i == members.size()) i = 0;
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_MemberTableFindMiss)->RangeMultiplier(10)->Range(1000, 1000000);

void BM_StringMapSet(benchmark::State& state) {
  std::vector<std::string> fields = Members(state.range(0));
  for (auto _ : state) {
    StringMap map;
    for (const std::string& f : fields) map.Set(f, "v");
    benchmark::DoNotOptimize(map.size());
  }
  state.SetItemsProcessed(state.iterations() * fields.size());
}
BENCHMARK(BM_StringMapSet)->RangeMultiplier(10)->Range(1000, 1000000);

void BM_StringMapFind(benchmark::State& state) {
  std::vector<std::string> fields = Members(state.range(0));
  StringMap map;
  for (const std::string& f : fields) map.Set(f, "v");
  std::shuffle(fields.begin(), fields.end(), std::mt19937_64(2));
  size_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(map.Find(fields[i]));
    if (++i == fields.size()) i = 0;
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_StringMapFind)->RangeMultiplier(10)->Range(1000, 1000000);

}  // namespace
}  // namespace dashkv

BENCHMARK_MAIN();
