// LoadRdbFile into a real ShardSet (2 and 3 shards, in-process server): the golden files Redis
// 7.0.15 wrote load to exactly what Redis serves from them (tests/data/rdb/expected_*.txt),
// Redis's master rules (expired keys dropped, empty collections skipped, duplicates fatal),
// errors naming key and offset, refusals of streams, function libraries handed over, flow control with tiny
// batches, progress figures, and damaged files.
#include "server/persistence/rdb_load.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "core/base/clock.h"
#include "core/rdb_encoding.h"
#include "server/config.h"
#include "server/persistence/value_loader.h"
#include "tests/testing/rdb_builder.h"
#include "tests/testing/test_server.h"

namespace dashkv {
namespace {

using ::testing::HasSubstr;
using testing::RdbBuilder;
using testing::RdbLen;
using testing::RdbStr;
using testing::RespValue;
using testing::TestServer;
using testing::WriteTempFile;

std::string Golden(const std::string& name) { return testing::RdbTestDataDir() + "/" + name; }

uint64_t Fnv(std::string_view data) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : data) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

std::string Item(std::string_view s) { return std::to_string(s.size()) + ":" + std::string(s); }

std::string Unhex(const std::string& hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    out.push_back(static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16)));
  }
  return out;
}

class RdbLoadTest : public ::testing::TestWithParam<unsigned> {
 protected:
  RdbLoadTest() : srv_(GetParam()) {
    config_.Init();
    client_ = srv_.Connect();
  }

  absl::StatusOr<LoadStats> Load(const std::string& path, const LoadOptions& opts = {}) {
    return LoadRdbFile(path, srv_.server().shard_set(), config_, &progress_, opts);
  }
  absl::StatusOr<LoadStats> LoadBytes(const std::string& bytes, const LoadOptions& opts = {}) {
    return Load(WriteTempFile(bytes, "load.rdb"), opts);
  }
  RespValue Run(std::vector<std::string> args) { return client_->Run(args); }

  // The canonical value of `key` as make_golden.py computes it from Redis's replies.
  std::string Canonical(const std::string& key, const std::string& type) {
    std::string out;
    if (type == "string") return Run({"GET", key}).str;
    if (type == "list") {
      for (const auto& e : Run({"LRANGE", key, "0", "-1"}).elems) out += Item(e.str);
    } else if (type == "set") {
      std::vector<std::string> m = Run({"SMEMBERS", key}).strings();
      std::sort(m.begin(), m.end());
      for (const auto& e : m) out += Item(e);
    } else if (type == "zset") {
      std::vector<std::string> flat = Run({"ZRANGE", key, "0", "-1", "WITHSCORES"}).strings();
      for (size_t i = 0; i + 1 < flat.size(); i += 2) {
        char buf[64];
        std::snprintf(buf, sizeof(buf), "%.17g", std::strtod(flat[i + 1].c_str(), nullptr));
        out += Item(flat[i]) + Item(buf);
      }
    } else if (type == "hash") {
      std::vector<std::string> flat = Run({"HGETALL", key}).strings();
      std::vector<std::pair<std::string, std::string>> pairs;
      for (size_t i = 0; i + 1 < flat.size(); i += 2) pairs.emplace_back(flat[i], flat[i + 1]);
      std::sort(pairs.begin(), pairs.end());
      for (const auto& [f, v] : pairs) out += Item(f) + Item(v);
    }
    return out;
  }

  // Checks the server holds exactly what expected_<name>.txt lists.
  void ExpectContent(const std::string& expected_file) {
    std::ifstream in(Golden(expected_file));
    ASSERT_TRUE(in.good()) << expected_file;
    std::string line;
    std::map<int, int64_t> per_db;
    int lines = 0;
    while (std::getline(in, line)) {
      std::istringstream fields(line);
      int db;
      std::string hexkey, type, digest;
      int64_t pexpiretime;
      fields >> db >> hexkey >> type >> pexpiretime >> digest;
      std::string key = Unhex(hexkey);
      ++per_db[db];
      ++lines;
      ASSERT_EQ(Run({"SELECT", std::to_string(db)}), "OK");
      EXPECT_EQ(Run({"TYPE", key}), type) << line;
      EXPECT_EQ(Run({"PEXPIRETIME", key}), pexpiretime) << line;
      char hex[17];
      std::snprintf(hex, sizeof(hex), "%016llx",
                    static_cast<unsigned long long>(Fnv(Canonical(key, type))));
      EXPECT_EQ(hex, digest) << line << " value " << Canonical(key, type).substr(0, 200);
    }
    EXPECT_GT(lines, 0);
    for (int db = 0; db < 16; ++db) {
      ASSERT_EQ(Run({"SELECT", std::to_string(db)}), "OK");
      EXPECT_EQ(Run({"DBSIZE"}), per_db[db]) << "db " << db;
    }
  }

  TestServer srv_;
  Config config_;
  LoadProgress progress_;
  std::unique_ptr<testing::RespClient> client_;
};

TEST_P(RdbLoadTest, GoldenFilesLoadToWhatRedisServes) {
  for (const char* name : {"golden", "golden_nocompress", "golden_nochecksum"}) {
    SCOPED_TRACE(name);
    ASSERT_EQ(Run({"FLUSHALL"}), "OK");
    absl::StatusOr<LoadStats> stats = Load(Golden(std::string(name) + ".rdb"));
    ASSERT_TRUE(stats.ok()) << stats.status();
    EXPECT_EQ(stats->keys_loaded, 32u);
    EXPECT_EQ(stats->keys_expired, 1u);  // ttl_past
    EXPECT_EQ(stats->rdb_version, 10);
    EXPECT_EQ(stats->checksum_disabled, std::string(name) == "golden_nochecksum");
    ASSERT_FALSE(stats->aux.empty());
    EXPECT_EQ(stats->aux[0].second, "7.0.15");
    EXPECT_EQ(progress_.keys_loaded.load(), 32u);
    EXPECT_EQ(progress_.loaded_bytes.load(), progress_.total_bytes.load());
    EXPECT_EQ(progress_.total_bytes.load(), stats->bytes);
    EXPECT_GT(progress_.rdb_used_mem.load(), 0u);
    EXPECT_FALSE(progress_.loading.load());
    ExpectContent(std::string("expected_") + name + ".txt");
  }
}

// The same with one-entry batches and one batch in flight per shard: the flow control path.
TEST_P(RdbLoadTest, GoldenWithTinyBatches) {
  LoadOptions opts;
  opts.batch_entries = 1;
  opts.max_in_flight = 1;
  opts.block_size = 128;
  absl::StatusOr<LoadStats> stats = Load(Golden("golden.rdb"), opts);
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->keys_loaded, 32u);
  ExpectContent("expected_golden.txt");
}

TEST_P(RdbLoadTest, ManyKeysAcrossShards) {
  RdbBuilder b;
  b.SelectDb(0).ResizeDb(20000, 0);
  for (int i = 0; i < 20000; ++i) b.Set("key:" + std::to_string(i), "value:" + std::to_string(i));
  b.SelectDb(5);
  for (int i = 0; i < 100; ++i) b.Set("key:" + std::to_string(i), "db5");  // same names, other db
  LoadOptions opts;
  opts.batch_bytes = 1000;
  opts.max_in_flight = 2;
  absl::StatusOr<LoadStats> stats = LoadBytes(b.Finish(), opts);
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->keys_loaded, 20100u);
  EXPECT_EQ(Run({"DBSIZE"}), 20000);
  EXPECT_EQ(Run({"GET", "key:12345"}), "value:12345");
  Run({"SELECT", "5"});
  EXPECT_EQ(Run({"DBSIZE"}), 100);
  EXPECT_EQ(Run({"GET", "key:99"}), "db5");
}

TEST_P(RdbLoadTest, StopRequestedStopsBetweenRecords) {
  RdbBuilder b;
  constexpr int kKeys = 20000;
  for (int i = 0; i < kKeys; ++i) b.Set("key:" + std::to_string(i), "v");
  const std::string file = b.Finish();
  int asked = 0;
  LoadOptions opts;
  opts.stop_requested = [&asked] { return ++asked == 3; };  // the third check stops
  absl::StatusOr<LoadStats> stats = LoadBytes(file, opts);
  ASSERT_FALSE(stats.ok());
  EXPECT_TRUE(absl::IsCancelled(stats.status())) << stats.status();
  EXPECT_EQ(asked, 3);
  // Stopped after 3 x kStopCheckRecords records: the rest of the file was never read (and
  // batches not yet posted are dropped).
  EXPECT_LE(Run({"DBSIZE"}).num, static_cast<int64_t>(3 * LoadOptions::kStopCheckRecords));
  // Never asked to stop: everything loads.
  Run({"FLUSHALL"});
  opts.stop_requested = [&asked] { return ++asked < 0; };
  stats = LoadBytes(file, opts);
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(Run({"DBSIZE"}), kKeys);
}

TEST_P(RdbLoadTest, ExpiredKeysAreDropped) {
  int64_t now = NowMs();
  RdbBuilder b;
  b.ExpireMs(now - 1000).Set("past_ms", "x");
  b.ExpireMs(now + 3600000).Set("future_ms", "x");
  b.ExpireSec(static_cast<int32_t>(now / 1000 - 10)).Set("past_s", "x");
  b.ExpireSec(static_cast<int32_t>(now / 1000 + 3600)).Set("future_s", "x");
  b.ExpireMs(1).Entry(kRdbSet, "past_set", RdbLen(1) + RdbStr("m"));
  b.Set("plain", "x");
  absl::StatusOr<LoadStats> stats = LoadBytes(b.Finish());
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->keys_loaded, 3u);
  EXPECT_EQ(stats->keys_expired, 3u);
  EXPECT_EQ(Run({"EXISTS", "past_ms", "past_s", "past_set"}), 0);
  EXPECT_EQ(Run({"PEXPIRETIME", "future_ms"}), now + 3600000);
  EXPECT_EQ(Run({"PEXPIRETIME", "future_s"}), (now / 1000 + 3600) * 1000);
  EXPECT_EQ(Run({"PEXPIRETIME", "plain"}), -1);
}

TEST_P(RdbLoadTest, EmptyCollectionsAreSkipped) {
  RdbBuilder b;
  b.Entry(kRdbSet, "empty_set", RdbLen(0));
  b.Entry(kRdbHash, "empty_hash", RdbLen(0));
  b.Entry(kRdbListQuicklist2, "empty_list", RdbLen(0));
  b.Set("k", "v");
  absl::StatusOr<LoadStats> stats = LoadBytes(b.Finish());
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->keys_loaded, 1u);
  EXPECT_EQ(stats->empty_keys_skipped, 3u);
  EXPECT_EQ(Run({"DBSIZE"}), 1);
}

TEST_P(RdbLoadTest, DuplicateKeyIsFatal) {
  RdbBuilder b;
  for (int i = 0; i < 100; ++i) b.Set("k" + std::to_string(i), "v");
  b.SelectDb(1).Set("k7", "other db: fine");
  b.SelectDb(0).Set("k7", "again");
  absl::StatusOr<LoadStats> stats = LoadBytes(b.Finish());
  ASSERT_FALSE(stats.ok());
  EXPECT_TRUE(absl::IsDataLoss(stats.status())) << stats.status();
  EXPECT_THAT(stats.status().message(), HasSubstr("Duplicated key found in RDB file"));
  EXPECT_THAT(stats.status().message(), HasSubstr("'k7' in DB 0"));
}

TEST_P(RdbLoadTest, CorruptValueNamesKeyAndOffset) {
  RdbBuilder b;
  b.Set("good", "v");
  size_t value_offset = b.bytes().size() + 1 + 4;  // type byte, key "\x03bad"
  b.Entry(kRdbHashListpack, "bad", RdbStr("this is not a listpack"));
  absl::StatusOr<LoadStats> stats = LoadBytes(b.Finish());
  ASSERT_FALSE(stats.ok());
  EXPECT_TRUE(absl::IsDataLoss(stats.status())) << stats.status();
  EXPECT_THAT(stats.status().message(),
              HasSubstr("at offset " + std::to_string(value_offset) + " (key 'bad', type 16"));
}

// stream.rdb: XADD events 1-1 f v; XGROUP CREATE events g1 0; XREADGROUP GROUP g1 c1 COUNT 1
// STREAMS events > (Redis 7.0.15).
TEST_P(RdbLoadTest, StreamWithConsumerGroupLoads) {
  absl::StatusOr<LoadStats> stats = Load(Golden("stream.rdb"));
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(Run({"XLEN", "events"}), 1);
  RespValue pending = Run({"XPENDING", "events", "g1"});
  ASSERT_EQ(pending.elems.size(), 4u);
  EXPECT_EQ(pending.elems[0], 1);
  EXPECT_EQ(pending.elems[1], "1-1");
  ASSERT_EQ(pending.elems[3].elems.size(), 1u);
  EXPECT_EQ(pending.elems[3].elems[0].strings(), (std::vector<std::string>{"c1", "1"}));
  std::vector<std::string> group = Run({"XINFO", "GROUPS", "events"}).elems[0].strings();
  EXPECT_EQ(group[1], "g1");
  EXPECT_EQ(group[7], "1-1");  // last-delivered-id
  EXPECT_EQ(Run({"XACK", "events", "g1", "1-1"}), 1);
}

TEST_P(RdbLoadTest, FunctionLibrariesAreHandedToTheCaller) {
  absl::StatusOr<LoadStats> stats = Load(Golden("function.rdb"));
  ASSERT_TRUE(stats.ok()) << stats.status();
  ASSERT_EQ(stats->functions.size(), 1u);
  EXPECT_THAT(stats->functions[0], ::testing::StartsWith("#!lua name=mylib"));
}

TEST_P(RdbLoadTest, MissingFileIsNotFound) {
  absl::StatusOr<LoadStats> stats = Load("/nonexistent/dashkv/dump.rdb");
  EXPECT_TRUE(absl::IsNotFound(stats.status())) << stats.status();
}

TEST_P(RdbLoadTest, DatabaseIndexBeyondConfig) {
  config_.databases = 4;
  absl::StatusOr<LoadStats> stats = LoadBytes(RdbBuilder().SelectDb(4).Set("k", "v").Finish());
  EXPECT_THAT(stats.status().message(), HasSubstr("more than 4 databases"));
  EXPECT_TRUE(LoadBytes(RdbBuilder().SelectDb(3).Set("k", "v").Finish()).ok());
}

TEST_P(RdbLoadTest, Version11AndBadChecksum) {
  EXPECT_EQ(LoadBytes(RdbBuilder(11).Set("k", "v").Finish()).status().message(),
            "Can't handle RDB format version 11");
  absl::StatusOr<LoadStats> stats = LoadBytes(RdbBuilder().Set("k", "v").FinishWithCrc(12345));
  EXPECT_THAT(stats.status().message(), HasSubstr("Wrong RDB checksum"));
  config_.rdbchecksum = false;
  ASSERT_EQ(Run({"FLUSHALL"}), "OK");
  EXPECT_TRUE(LoadBytes(RdbBuilder().Set("k", "v").FinishWithCrc(12345)).ok());
}

// Cut copies of the golden file (a sample of offsets, every one near the ends) all fail.
TEST_P(RdbLoadTest, TruncatedGoldenFails) {
  std::string golden = testing::ReadWholeFile(Golden("golden.rdb"));
  ASSERT_FALSE(golden.empty());
  for (size_t cut = 0; cut < golden.size();
       cut += (cut < 300 || cut > golden.size() - 300) ? 1 : 97) {
    ASSERT_EQ(Run({"FLUSHALL"}), "OK");
    absl::StatusOr<LoadStats> stats = LoadBytes(golden.substr(0, cut));
    ASSERT_FALSE(stats.ok()) << cut;
  }
}

// Random flips in the golden file never crash the load (run under ASan/UBSan). With the
// checksum on every damaged file is refused (unless the version digits now read below 5:
// no trailer); with it off the damage reaches the value decoders on the shards.
TEST_P(RdbLoadTest, RandomBitFlipsInGolden) {
  std::string golden = testing::ReadWholeFile(Golden("golden.rdb"));
  ASSERT_FALSE(golden.empty());
  std::mt19937_64 rng(GetParam());
  for (int i = 0; i < 300; ++i) {
    std::string f = golden;
    size_t at = rng() % f.size();
    f[at] ^= static_cast<char>(1 << (rng() % 8));
    config_.rdbchecksum = i % 2 == 0;
    ASSERT_EQ(Run({"FLUSHALL"}), "OK");
    absl::StatusOr<LoadStats> stats = LoadBytes(f);
    if (config_.rdbchecksum && std::atoi(f.substr(5, 4).c_str()) >= 5) {
      EXPECT_FALSE(stats.ok()) << "flip at " << at;
    }
  }
}

TEST(LoadProgressTest, PercentAndEtaAsRedis) {
  LoadProgress p;
  p.start_time_ms = 1000000;
  p.total_bytes = 999;
  p.loaded_bytes = 249;
  EXPECT_DOUBLE_EQ(p.LoadedPercent(), 24.9);
  EXPECT_EQ(p.EtaSeconds(1000500), 1);  // no whole second elapsed
  EXPECT_EQ(p.EtaSeconds(1010000), 30);  // 10 s * 750 / 250
}

INSTANTIATE_TEST_SUITE_P(Shards, RdbLoadTest, ::testing::Values(2u, 3u));

// Load-time measurement, skipped unless DASHKV_LOAD_BENCH_FILE names an RDB file
// (DASHKV_LOAD_BENCH_THREADS: shards, default 2). Prints the wall time of LoadRdbFile.
TEST(RdbLoadBench, LoadFile) {
  const char* path = std::getenv("DASHKV_LOAD_BENCH_FILE");
  if (path == nullptr) GTEST_SKIP() << "DASHKV_LOAD_BENCH_FILE not set";
  const char* threads = std::getenv("DASHKV_LOAD_BENCH_THREADS");
  TestServer srv(threads ? static_cast<unsigned>(std::atoi(threads)) : 2);
  Config config;
  config.Init();
  LoadProgress progress;
  int64_t start = NowUs();
  absl::StatusOr<LoadStats> stats = LoadRdbFile(path, srv.server().shard_set(), config, &progress);
  int64_t us = NowUs() - start;
  ASSERT_TRUE(stats.ok()) << stats.status();
  std::printf("loaded %llu keys (%llu bytes) in %.3f s\n",
              static_cast<unsigned long long>(stats->keys_loaded),
              static_cast<unsigned long long>(stats->bytes), us / 1e6);
}

}  // namespace
}  // namespace dashkv
