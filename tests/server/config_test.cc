// Config unit tests: ParseMemory's units (Redis's memtoull rules), Get with globs, Set with
// validation, rollback and Redis's error texts. Expected texts follow redis-server 7.0.15.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sys/resource.h>
#include <unistd.h>

#include <memory>
#include <string>
#include <vector>

#include "server/config.h"

namespace dashkv {
namespace {

using ::testing::ElementsAre;
using ::testing::Pair;

TEST(ParseMemoryTest, Units) {
  EXPECT_EQ(ParseMemory("0"), 0);
  EXPECT_EQ(ParseMemory("100"), 100);
  EXPECT_EQ(ParseMemory("5b"), 5);
  EXPECT_EQ(ParseMemory("1k"), 1000);
  EXPECT_EQ(ParseMemory("1kb"), 1024);
  EXPECT_EQ(ParseMemory("1KB"), 1024);
  EXPECT_EQ(ParseMemory("2m"), 2000000);
  EXPECT_EQ(ParseMemory("2mb"), 2LL << 20);
  EXPECT_EQ(ParseMemory("1G"), 1000000000);
  EXPECT_EQ(ParseMemory("1gb"), 1LL << 30);
  EXPECT_EQ(ParseMemory("3Gb"), 3LL << 30);
  EXPECT_EQ(ParseMemory("01"), 1);
}

TEST(ParseMemoryTest, Rejects) {
  // Redis 7.0 rejects all of these in CONFIG SET maxmemory.
  for (const char* bad : {"abc", "-1", "1x", "1.5mb", "0x10", " 1", "1 ", "+1", "1tb", "mb1",
                          "1 kb", "99999999999999999999", "9223372036854775807kb"}) {
    EXPECT_EQ(ParseMemory(bad), std::nullopt) << bad;
  }
}

class ConfigTest : public ::testing::Test {
 protected:
  void SetUp() override { config_.Init(); }
  std::string Value(std::string_view name) {
    auto v = config_.Get({name});
    return v.size() == 1 ? v[0].second : "<" + std::to_string(v.size()) + " matches>";
  }
  Config config_;
};

TEST_F(ConfigTest, GetWithGlobs) {
  auto mm = config_.Get({"maxmemory"});
  EXPECT_THAT(mm, ElementsAre(Pair("maxmemory", "0")));
  // Names are matched without case; each name is reported once, a plain name in the client's
  // own spelling (as Redis 7.0 answers CONFIG GET MAXMEMORY maxmemory max*ory).
  EXPECT_THAT(config_.Get({"MAXMEMORY", "maxmemory", "max*ory"}),
              ElementsAre(Pair("MAXMEMORY", "0")));
  auto star = config_.Get({"maxmemory*"});
  std::vector<std::string> names;
  for (const auto& [n, v] : star) names.push_back(n);
  EXPECT_THAT(names, ::testing::IsSupersetOf({"maxmemory", "maxmemory-policy"}));
  for (const auto& n : names) EXPECT_EQ(n.rfind("maxmemory", 0), 0u) << n;
  EXPECT_TRUE(config_.Get({"nosuch"}).empty());
  EXPECT_TRUE(config_.Get({"nosuch*"}).empty());
  EXPECT_GT(config_.Get({"*"}).size(), 10u);
  EXPECT_THAT(config_.Get({"h?"}), ElementsAre(Pair("hz", "10")));
  EXPECT_THAT(config_.Get({"[d]atabases"}), ElementsAre(Pair("databases", "16")));
  EXPECT_EQ(Value("maxmemory-policy"), "noeviction");
  EXPECT_EQ(Value("appendonly"), "no");
}

TEST_F(ConfigTest, SetUpdatesHotValues) {
  EXPECT_EQ(config_.Set({{"maxmemory", "1kb"}}), "");
  EXPECT_EQ(config_.maxmemory.load(), 1024);
  EXPECT_EQ(Value("maxmemory"), "1024");
  EXPECT_EQ(config_.Set({{"MaxMemory", "0"}, {"hz", "50"}}), "");
  EXPECT_EQ(config_.maxmemory.load(), 0);
  EXPECT_EQ(config_.hz.load(), 50);
  EXPECT_EQ(config_.Set({{"hz", "100000"}}), "");  // clamped like Redis
  EXPECT_EQ(config_.hz.load(), 500);
  EXPECT_EQ(config_.Set({{"proto-max-bulk-len", "1mb"}}), "");
  EXPECT_EQ(config_.proto_max_bulk_len.load(), 1 << 20);
  EXPECT_FALSE(config_.auth_required.load());
  EXPECT_EQ(config_.Set({{"requirepass", "pw"}}), "");
  EXPECT_TRUE(config_.auth_required.load());
  EXPECT_EQ(config_.requirepass(), "pw");
  EXPECT_EQ(config_.Set({{"requirepass", ""}}), "");
  EXPECT_FALSE(config_.auth_required.load());
  EXPECT_EQ(config_.Set({{"maxmemory-policy", "ALLKEYS-LRU"}}), "");
  EXPECT_EQ(config_.maxmemory_policy(), "allkeys-lru");
  EXPECT_EQ(config_.eviction_policy(), MaxmemoryPolicy::kAllKeysLru);
  EXPECT_EQ(Value("maxmemory-policy"), "allkeys-lru");
  EXPECT_EQ(config_.Set({{"timeout", "2147483647"}}), "");
  EXPECT_EQ(Value("timeout"), "2147483647");
}

TEST_F(ConfigTest, SetErrors) {
  EXPECT_EQ(config_.Set({{"nosuch", "1"}}),
            "ERR Unknown option or number of arguments for CONFIG SET - 'nosuch'");
  EXPECT_EQ(config_.Set({{"databases", "3"}}),
            "ERR CONFIG SET failed (possibly related to argument 'databases') - can't set "
            "immutable config");
  EXPECT_EQ(config_.Set({{"port", "1"}}).rfind("ERR CONFIG SET failed", 0), 0u);
  EXPECT_EQ(config_.Set({{"timeout", "abc"}}),
            "ERR CONFIG SET failed (possibly related to argument 'timeout') - argument couldn't "
            "be parsed into an integer");
  EXPECT_EQ(config_.Set({{"timeout", "-1"}}),
            "ERR CONFIG SET failed (possibly related to argument 'timeout') - argument must be "
            "between 0 and 2147483647 inclusive");
  EXPECT_EQ(config_.Set({{"maxclients", "0"}}),
            "ERR CONFIG SET failed (possibly related to argument 'maxclients') - argument must "
            "be between 1 and 4294967295 inclusive");
  EXPECT_EQ(config_.Set({{"maxmemory", "lots"}}),
            "ERR CONFIG SET failed (possibly related to argument 'maxmemory') - argument must be "
            "a memory value");
  // As Redis, these name the argument as the client spelled it.
  EXPECT_EQ(config_.Set({{"maxmemory", "1"}, {"MAXMEMORY", "2"}}),
            "ERR CONFIG SET failed (possibly related to argument 'MAXMEMORY') - duplicate "
            "parameter");
  EXPECT_EQ(config_.Set({{"DATABASES", "3"}}),
            "ERR CONFIG SET failed (possibly related to argument 'DATABASES') - can't set "
            "immutable config");
  EXPECT_EQ(config_.maxmemory.load(), 0);
}

TEST_F(ConfigTest, SetRollsBackOnFailure) {
  ASSERT_EQ(config_.Set({{"timeout", "5"}, {"maxmemory", "100"}}), "");
  // The third pair fails: the first two are restored.
  std::string err = config_.Set({{"maxmemory", "10mb"}, {"timeout", "7"}, {"hz", "x"}});
  EXPECT_EQ(err, "ERR CONFIG SET failed (possibly related to argument 'hz') - argument couldn't "
                 "be parsed into an integer");
  EXPECT_EQ(config_.maxmemory.load(), 100);
  EXPECT_EQ(Value("timeout"), "5");
  EXPECT_EQ(config_.hz.load(), 10);
  err = config_.Set({{"requirepass", "pw"}, {"maxmemory-policy", "bad"}});
  EXPECT_EQ(err.rfind("ERR CONFIG SET failed (possibly related to argument 'maxmemory-policy')",
                      0),
            0u);
  EXPECT_EQ(config_.requirepass(), "");
  EXPECT_FALSE(config_.auth_required.load());
  // An unknown name fails before anything is applied.
  EXPECT_NE(config_.Set({{"timeout", "9"}, {"nosuch", "1"}}), "");
  EXPECT_EQ(Value("timeout"), "5");
}

// CONFIG SET tls-port: Redis's texts; the listener hook sees the new port after the call's
// other settings applied, and a refused port restores every value of the call.
TEST_F(ConfigTest, TlsPortMovesTheListener) {
  std::vector<uint16_t> moves;
  absl::Status answer = absl::OkStatus();
  config_.listen_tls = [&](uint16_t port) {
    moves.push_back(port);
    return answer;
  };
  const std::string failed = "ERR CONFIG SET failed (possibly related to argument 'tls-port') - ";
  EXPECT_EQ(config_.Set({{"tls-port", "70000"}}),
            failed + "argument must be between 0 and 65535 inclusive");
  EXPECT_EQ(config_.Set({{"tls-port", "0100"}}),
            failed + "argument couldn't be parsed into an integer");
  // No certificate: the context cannot be built, the listener is not asked.
  EXPECT_EQ(config_.Set({{"tls-port", "7000"}}),
            failed + "Unable to update TLS configuration. Check server logs.");
  EXPECT_EQ(Value("tls-port"), "0");
  EXPECT_TRUE(moves.empty());
  // Closing needs no context.
  EXPECT_EQ(config_.Set({{"tls-port", "0"}}), "");
  EXPECT_THAT(moves, ElementsAre(0));
  // A port that cannot be bound restores the call's values.
  answer = absl::UnavailableError("cannot bind 127.0.0.1:7000: Address already in use");
  config_.tls_port = 0;
  config_.tls_context.Set(std::make_shared<io::TlsContext>(
      boost::asio::ssl::context(boost::asio::ssl::context::tls_server)));
  ASSERT_EQ(config_.Set({{"timeout", "5"}}), "");
  EXPECT_EQ(config_.Set({{"tls-port", "7000"}, {"timeout", "6"}}),
            failed + "Unable to listen on this port. Check server logs.");
  EXPECT_EQ(Value("tls-port"), "0");
  EXPECT_EQ(Value("timeout"), "5");
  EXPECT_THAT(moves, ElementsAre(0, 7000));
  answer = absl::OkStatus();
  EXPECT_EQ(config_.Set({{"tls-port", "7000"}}), "");
  EXPECT_EQ(Value("tls-port"), "7000");
  EXPECT_TRUE(config_.MovesListener({{"timeout", "1"}, {"TLS-PORT", "1"}}));
  EXPECT_FALSE(config_.MovesListener({{"timeout", "1"}, {"tls-cert-file", "x"}}));
}

// Every setting CONFIG SET accepts takes effect in the value the server reads; the ones dashkv
// cannot apply are refused (texts of redis-server 7.0.15 where Redis refuses them too).
TEST_F(ConfigTest, SetTakesEffectOrIsRefused) {
  EXPECT_EQ(config_.Set({{"proto-max-bulk-len", "2mb"}, {"client-query-buffer-limit", "3mb"}}),
            "");
  EXPECT_EQ(config_.client_limits.max_bulk_len.load(), 2 << 20);
  EXPECT_EQ(config_.client_limits.max_query_buffer.load(), 3 << 20);
  EXPECT_EQ(config_.Set({{"proto-max-bulk-len", "1000"}}),
            "ERR CONFIG SET failed (possibly related to argument 'proto-max-bulk-len') - argument "
            "must be between 1048576 and 9223372036854775807 inclusive");
  EXPECT_EQ(config_.Set({{"client-query-buffer-limit", "1000"}}),
            "ERR CONFIG SET failed (possibly related to argument 'client-query-buffer-limit') - "
            "argument must be between 1048576 and 9223372036854775807 inclusive");
  EXPECT_EQ(config_.Set({{"maxclients", "50"}}), "");
  EXPECT_EQ(config_.client_limits.maxclients.load(), 50);
  EXPECT_EQ(config_.Set({{"timeout", "7"}, {"tcp-keepalive", "60"}}), "");
  EXPECT_EQ(config_.timeout.load(), 7);
  EXPECT_EQ(config_.client_limits.tcp_keepalive.load(), 60);
  EXPECT_EQ(config_.Set({{"requirepass", "pw"}}), "");
  EXPECT_TRUE(config_.client_limits.auth_required.load());
  EXPECT_EQ(config_.Set({{"save", ""}}), "");
  EXPECT_FALSE(config_.has_save_points.load());
  EXPECT_EQ(config_.Set({{"save", "3600 1  300 100"}}), "");
  EXPECT_TRUE(config_.has_save_points.load());
  EXPECT_EQ(SavePointsText(config_.save_points()), "3600 1 300 100");
  for (const char* bad : {"100", "100 x", "-1 1", "1 -1", "1 2 3"}) {
    EXPECT_EQ(config_.Set({{"save", bad}}),
              "ERR CONFIG SET failed (possibly related to argument 'save') - Invalid save "
              "parameters")
        << bad;
  }
  EXPECT_EQ(SavePointsText(config_.save_points()), "3600 1 300 100");
  EXPECT_EQ(config_.Set({{"rdbcompression", "no"}, {"rdbchecksum", "NO"}}), "");
  EXPECT_FALSE(config_.rdbcompression.load());
  EXPECT_FALSE(config_.rdbchecksum.load());
  EXPECT_EQ(config_.Set({{"stop-writes-on-bgsave-error", "maybe"}}),
            "ERR CONFIG SET failed (possibly related to argument 'stop-writes-on-bgsave-error') - "
            "argument must be 'yes' or 'no'");
  for (const char* name : {"dir", "dbfilename"}) {
    EXPECT_EQ(config_.Set({{name, "x"}}),
              std::string("ERR CONFIG SET failed (possibly related to argument '") + name +
                  "') - can't set protected config");
  }
  for (const char* name : {"port", "bind", "databases", "loglevel", "appendonly", "io-threads",
                           "daemonize", "cluster-enabled"}) {
    EXPECT_EQ(config_.Set({{name, "1"}}),
              std::string("ERR CONFIG SET failed (possibly related to argument '") + name +
                  "') - can't set immutable config");
  }
}

TEST(AdjustOpenFilesLimitTest, FitsMaxclientsOrLowersIt) {
  struct rlimit saved;
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &saved), 0);
  // Within the hard limit the soft one is raised.
  struct rlimit low = saved;
  low.rlim_cur = 100;
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &low), 0);
  if (saved.rlim_max >= 1000 || saved.rlim_max == RLIM_INFINITY) {
    EXPECT_EQ(AdjustOpenFilesLimit(900, 40), 900);
    struct rlimit now;
    getrlimit(RLIMIT_NOFILE, &now);
    EXPECT_GE(now.rlim_cur, 940u);
  }
  // Beyond the hard limit (unprivileged): maxclients is lowered to what fits.
  if (geteuid() != 0 && saved.rlim_max != RLIM_INFINITY) {
    const int64_t hard = static_cast<int64_t>(saved.rlim_max);
    EXPECT_EQ(AdjustOpenFilesLimit(hard + 1000, 40), hard - 40);
  }
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &saved), 0);
}

TEST(MaxmemoryPolicyTest, NamesRoundTrip) {
  const MaxmemoryPolicy kAll[] = {
      MaxmemoryPolicy::kNoEviction,    MaxmemoryPolicy::kAllKeysLru,
      MaxmemoryPolicy::kVolatileLru,   MaxmemoryPolicy::kAllKeysLfu,
      MaxmemoryPolicy::kVolatileLfu,   MaxmemoryPolicy::kAllKeysRandom,
      MaxmemoryPolicy::kVolatileRandom, MaxmemoryPolicy::kVolatileTtl,
  };
  for (MaxmemoryPolicy p : kAll) EXPECT_EQ(ParseMaxmemoryPolicy(MaxmemoryPolicyName(p)), p);
  EXPECT_EQ(MaxmemoryPolicyName(MaxmemoryPolicy::kVolatileTtl), "volatile-ttl");
  EXPECT_EQ(ParseMaxmemoryPolicy("Volatile-LFU"), MaxmemoryPolicy::kVolatileLfu);
  EXPECT_EQ(ParseMaxmemoryPolicy("lru"), std::nullopt);
  EXPECT_TRUE(IsLfuPolicy(MaxmemoryPolicy::kAllKeysLfu));
  EXPECT_FALSE(IsLfuPolicy(MaxmemoryPolicy::kAllKeysLru));
  EXPECT_TRUE(IsLruPolicy(MaxmemoryPolicy::kVolatileLru));
  EXPECT_FALSE(IsLruPolicy(MaxmemoryPolicy::kNoEviction));
}

TEST_F(ConfigTest, InvalidPolicyKeepsTheOldOne) {
  EXPECT_EQ(config_.Set({{"maxmemory-policy", "volatile-ttl"}}), "");
  EXPECT_EQ(config_.Set({{"maxmemory-policy", "foo"}}),
            "ERR CONFIG SET failed (possibly related to argument 'maxmemory-policy') - "
            "argument(s) must be one of the following: volatile-lru, volatile-lfu, "
            "volatile-random, volatile-ttl, allkeys-lru, allkeys-lfu, allkeys-random, "
            "noeviction");
  EXPECT_EQ(config_.eviction_policy(), MaxmemoryPolicy::kVolatileTtl);
}

TEST_F(ConfigTest, ProtectedConfigsFollowEnableProtectedConfigs) {
  config_.enable_protected_configs = ProtectedAction::kLocal;
  EXPECT_EQ(config_.Set({{"dir", "/tmp"}}, /*local_client=*/false),
            "ERR CONFIG SET failed (possibly related to argument 'dir') - can't set protected "
            "config");
  EXPECT_EQ(config_.Set({{"dir", "/tmp"}}, /*local_client=*/true), "");
  EXPECT_EQ(config_.dir(), "/tmp");
  config_.enable_protected_configs = ProtectedAction::kYes;
  EXPECT_EQ(config_.Set({{"dir", "/nonexistent-dashkv-dir"}}),
            "ERR CONFIG SET failed (possibly related to argument 'dir') - No such file or "
            "directory");
  EXPECT_EQ(config_.Set({{"dbfilename", "a/b.rdb"}}),
            "ERR CONFIG SET failed (possibly related to argument 'dbfilename') - dbfilename "
            "can't be a path, just a filename");
  EXPECT_EQ(config_.Set({{"dbfilename", "x.rdb"}}), "");
  EXPECT_EQ(config_.dbfilename(), "x.rdb");
  EXPECT_EQ(config_.dir(), "/tmp");
}

}  // namespace
}  // namespace dashkv
