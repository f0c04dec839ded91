// Keyspace command tests (DEL/UNLINK/EXISTS/TOUCH, TYPE, the EXPIRE and TTL families, PERSIST,
// expiry, KEYS, SCAN, RANDOMKEY, OBJECT) against a real 2-shard server. Expected replies were
// taken from redis-server 7.0.15 (same commands run by hand), not from dashkv's output.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "server/cmd_context.h"
#include "tests/testing/test_server.h"

namespace dashkv {
namespace {

using ::testing::UnorderedElementsAre;
using testing::RespValue;
using testing::TestServer;

constexpr char kNotInt[] = "ERR value is not an integer or out of range";
constexpr char kSyntax[] = "ERR syntax error";

// Returns the error text of `v`, or "<not an error: ...>".
std::string Err(const RespValue& v) {
  if (v.is_error()) return v.str;
  std::ostringstream os;
  os << "<not an error: " << v << ">";
  return os.str();
}

// A stand-in for a list value (see MakeList).
class FakeList : public ObjectBase {
 public:
  size_t MallocUsed() const override { return sizeof(*this); }
};

class GenericCommandsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    c_ = srv_.Connect();
    ASSERT_TRUE(c_->connected());
  }
  RespValue Run(std::initializer_list<std::string_view> args) { return c_->Run(args); }
  RespValue Run(const std::vector<std::string>& args) { return c_->Run(args); }

  ShardSet& shards() { return srv_.server().shard_set(); }

  // Returns `n` distinct keys named prefix<i> owned by shard `sid`.
  std::vector<std::string> KeysOnShard(unsigned sid, size_t n, const std::string& prefix = "k") {
    std::vector<std::string> out;
    for (int i = 0; out.size() < n; ++i) {
      std::string k = prefix + std::to_string(i);
      if (shards().ShardOf(k) == sid) out.push_back(k);
    }
    return out;
  }

  // Runs fn(DbSlice&) on db 0 of the shard owning `key`, blocking.
  template <typename F>
  void OnOwner(std::string_view key, F fn) {
    unsigned sid = shards().ShardOf(key);
    shards().RunOnAllBlocking([&](Shard& shard) {
      if (shard.index() == sid) fn(shard.db(0));
    });
  }

  // Makes `key` hold a non-string value (a stand-in list object put straight into its shard).
  void MakeList(std::string_view key) {
    std::string k(key);
    OnOwner(k, [&](DbSlice& db) {
      OpResult<DbSlice::AddResult> res = db.FindOrAdd(k, NowMs());
      if (res) res->it->second.SetObject(ObjType::kList, 0, new FakeList);
    });
    ASSERT_EQ(Run({"TYPE", key}), "list");
  }

  // Moves the deadline of existing `key` into the past without going through a command, so
  // the next access has to expire it lazily.
  void ExpireInThePast(std::string_view key) {
    std::string k(key);
    OnOwner(k, [&](DbSlice& db) {
      PrimeIterator it = db.table().Find(k);
      ASSERT_FALSE(it.is_done());
      db.SetExpire(it, NowMs() - 1000);
    });
  }

  // Returns the integer INFO field `name` (e.g. "expired_keys"), or -1.
  int64_t InfoField(std::string_view name) {
    RespValue v = Run({"INFO", "stats"});
    std::string needle = std::string(name) + ":";
    size_t pos = v.str.find(needle);
    if (pos == std::string::npos) return -1;
    return std::stoll(v.str.substr(pos + needle.size()));
  }

  // Polls `pred` every millisecond for up to 10 seconds; returns whether it became true.
  template <typename P>
  static bool PollUntil(P pred) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (std::chrono::steady_clock::now() < deadline) {
      if (pred()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return pred();
  }

  // Runs a full SCAN with `extra` options; returns every key returned (with repeats).
  std::vector<std::string> ScanAll(const std::vector<std::string>& extra, int* calls = nullptr) {
    std::vector<std::string> keys;
    std::string cursor = "0";
    int n = 0;
    do {
      std::vector<std::string> cmd = {"SCAN", cursor};
      cmd.insert(cmd.end(), extra.begin(), extra.end());
      RespValue r = Run(cmd);
      if (r.type != RespValue::Type::kArray || r.elems.size() != 2) {
        ADD_FAILURE() << "bad SCAN reply " << r;
        break;
      }
      cursor = r.elems[0].str;
      for (const auto& k : r.elems[1].elems) keys.push_back(k.str);
      ++n;
    } while (cursor != "0" && n < 100000);
    if (calls) *calls = n;
    return keys;
  }

  TestServer srv_{2};
  std::unique_ptr<testing::RespClient> c_;
};

TEST_F(GenericCommandsTest, KeysOnBothShards) {
  std::vector<std::string> a = KeysOnShard(0, 3, "a");
  std::vector<std::string> b = KeysOnShard(1, 3, "b");
  ASSERT_NE(shards().ShardOf(a[0]), shards().ShardOf(b[0]));
}

TEST_F(GenericCommandsTest, DelUnlinkAcrossShards) {
  std::vector<std::string> a = KeysOnShard(0, 2, "a");
  std::vector<std::string> b = KeysOnShard(1, 2, "b");
  for (const auto& k : {a[0], a[1], b[0], b[1]}) ASSERT_EQ(Run({"SET", k, "v"}), "OK");
  // Duplicates count once (a key is deleted only once), missing keys count zero.
  EXPECT_EQ(Run({"DEL", a[0], a[0], b[0], "missing", b[0]}), 2);
  EXPECT_EQ(Run({"EXISTS", a[0], b[0]}), 0);
  EXPECT_EQ(Run({"EXISTS", a[1], b[1]}), 2);
  EXPECT_EQ(Run({"UNLINK", b[1], a[1], a[1]}), 2);
  EXPECT_EQ(Run({"DBSIZE"}), 0);
  EXPECT_EQ(Run({"DEL", "missing"}), 0);
  EXPECT_EQ(Run({"UNLINK", a[0], b[0]}), 0);
  // Single-shard forms.
  ASSERT_EQ(Run({"SET", a[0], "v"}), "OK");
  ASSERT_EQ(Run({"SET", a[1], "v"}), "OK");
  EXPECT_EQ(Run({"DEL", a[0], a[1], a[0]}), 2);
  EXPECT_EQ(Err(Run({"DEL"})), "ERR wrong number of arguments for 'del' command");
  EXPECT_EQ(Err(Run({"UNLINK"})), "ERR wrong number of arguments for 'unlink' command");
}

TEST_F(GenericCommandsTest, ExistsTouchCountDuplicates) {
  std::vector<std::string> a = KeysOnShard(0, 1, "a");
  std::vector<std::string> b = KeysOnShard(1, 1, "b");
  ASSERT_EQ(Run({"SET", a[0], "1"}), "OK");
  ASSERT_EQ(Run({"SET", b[0], "1"}), "OK");
  // Redis counts a key as many times as it is named.
  EXPECT_EQ(Run({"EXISTS", a[0], a[0], b[0], "nokey"}), 3);
  EXPECT_EQ(Run({"TOUCH", a[0], a[0], b[0], "nokey", b[0]}), 4);
  EXPECT_EQ(Run({"EXISTS", a[0], a[0]}), 2);
  EXPECT_EQ(Run({"TOUCH", b[0]}), 1);
  EXPECT_EQ(Run({"EXISTS", "nokey"}), 0);
  EXPECT_EQ(Run({"TOUCH", "nokey"}), 0);
  EXPECT_EQ(Err(Run({"EXISTS"})), "ERR wrong number of arguments for 'exists' command");
  EXPECT_EQ(Err(Run({"TOUCH"})), "ERR wrong number of arguments for 'touch' command");
  // TOUCH and EXISTS don't change values.
  EXPECT_EQ(Run({"GET", a[0]}), "1");
}

TEST_F(GenericCommandsTest, Type) {
  EXPECT_EQ(Run({"TYPE", "nokey"}), "none");
  ASSERT_EQ(Run({"SET", "s", "x"}), "OK");
  EXPECT_EQ(Run({"TYPE", "s"}), "string");
  ASSERT_EQ(Run({"SET", "n", "12"}), "OK");
  EXPECT_EQ(Run({"TYPE", "n"}), "string");
  MakeList("l");
  EXPECT_EQ(Run({"TYPE", "l"}).type, RespValue::Type::kSimple);
  EXPECT_EQ(Err(Run({"TYPE"})), "ERR wrong number of arguments for 'type' command");
  EXPECT_EQ(Err(Run({"TYPE", "a", "b"})), "ERR wrong number of arguments for 'type' command");
}

TEST_F(GenericCommandsTest, ExpireBasics) {
  ASSERT_EQ(Run({"SET", "a", "1"}), "OK");
  EXPECT_EQ(Run({"TTL", "a"}), -1);
  EXPECT_EQ(Run({"PTTL", "a"}), -1);
  EXPECT_EQ(Run({"EXPIRE", "a", "100"}), 1);
  EXPECT_EQ(Run({"TTL", "a"}), 100);
  RespValue pttl = Run({"PTTL", "a"});
  ASSERT_EQ(pttl.type, RespValue::Type::kInt);
  EXPECT_GT(pttl.num, 90000);
  EXPECT_LE(pttl.num, 100000);
  EXPECT_EQ(Run({"PEXPIRE", "a", "50000"}), 1);
  EXPECT_EQ(Run({"TTL", "a"}), 50);
  EXPECT_EQ(Run({"EXPIRE", "nokey", "10"}), 0);
  EXPECT_EQ(Run({"PEXPIRE", "nokey", "10"}), 0);
  EXPECT_EQ(Run({"EXPIREAT", "nokey", "4102444800"}), 0);
  EXPECT_EQ(Run({"PEXPIREAT", "nokey", "4102444800000"}), 0);
  EXPECT_EQ(Run({"TTL", "nokey"}), -2);
  EXPECT_EQ(Run({"PTTL", "nokey"}), -2);
  EXPECT_EQ(Run({"EXPIRETIME", "nokey"}), -2);
  EXPECT_EQ(Run({"PEXPIRETIME", "nokey"}), -2);
  // Absolute deadlines round-trip; EXPIRETIME rounds to the nearest second.
  EXPECT_EQ(Run({"PEXPIREAT", "a", "4102444800123"}), 1);
  EXPECT_EQ(Run({"EXPIRETIME", "a"}), 4102444800);
  EXPECT_EQ(Run({"PEXPIRETIME", "a"}), 4102444800123);
  EXPECT_EQ(Run({"PEXPIREAT", "a", "4102444800600"}), 1);
  EXPECT_EQ(Run({"EXPIRETIME", "a"}), 4102444801);
  EXPECT_EQ(Run({"EXPIREAT", "a", "4102444800"}), 1);
  EXPECT_EQ(Run({"PEXPIRETIME", "a"}), 4102444800000);
  ASSERT_EQ(Run({"SET", "b", "1"}), "OK");
  EXPECT_EQ(Run({"EXPIRETIME", "b"}), -1);
  EXPECT_EQ(Run({"PEXPIRETIME", "b"}), -1);
  // The largest deadline PEXPIREAT accepts.
  EXPECT_EQ(Run({"PEXPIREAT", "b", "9223372036854775807"}), 1);
  EXPECT_EQ(Run({"PEXPIRETIME", "b"}), INT64_MAX);
  EXPECT_EQ(Run({"GET", "b"}), "1");
}

TEST_F(GenericCommandsTest, ExpireInThePastDeletes) {
  for (const char* cmd : {"EXPIRE", "PEXPIRE", "EXPIREAT", "PEXPIREAT"}) {
    ASSERT_EQ(Run({"SET", "a", "1"}), "OK");
    EXPECT_EQ(Run({cmd, "a", "-1"}), 1) << cmd;
    EXPECT_EQ(Run({"EXISTS", "a"}), 0) << cmd;
    ASSERT_EQ(Run({"SET", "a", "1"}), "OK");
    EXPECT_EQ(Run({cmd, "a", "0"}), 1) << cmd;
    EXPECT_EQ(Run({"EXISTS", "a"}), 0) << cmd;
  }
  ASSERT_EQ(Run({"SET", "a", "1"}), "OK");
  EXPECT_EQ(Run({"PEXPIREAT", "a", "1"}), 1);
  EXPECT_TRUE(Run({"GET", "a"}).is_null());
}

TEST_F(GenericCommandsTest, ExpireConditions) {
  ASSERT_EQ(Run({"SET", "a", "1"}), "OK");
  // No TTL yet: GT and XX fail, NX succeeds; LT treats "no TTL" as infinite and succeeds.
  EXPECT_EQ(Run({"EXPIRE", "a", "10", "GT"}), 0);
  EXPECT_EQ(Run({"EXPIRE", "a", "10", "XX"}), 0);
  EXPECT_EQ(Run({"TTL", "a"}), -1);
  EXPECT_EQ(Run({"EXPIRE", "a", "100", "nx"}), 1);
  EXPECT_EQ(Run({"EXPIRE", "a", "200", "NX"}), 0);
  EXPECT_EQ(Run({"TTL", "a"}), 100);
  EXPECT_EQ(Run({"EXPIRE", "a", "100", "XX"}), 1);
  EXPECT_EQ(Run({"EXPIRE", "a", "50", "GT"}), 0);
  EXPECT_EQ(Run({"EXPIRE", "a", "200", "gt"}), 1);
  EXPECT_EQ(Run({"TTL", "a"}), 200);
  EXPECT_EQ(Run({"EXPIRE", "a", "300", "LT"}), 0);
  EXPECT_EQ(Run({"EXPIRE", "a", "100", "lt"}), 1);
  EXPECT_EQ(Run({"TTL", "a"}), 100);
  EXPECT_EQ(Run({"EXPIRE", "a", "50", "XX", "GT"}), 0);
  EXPECT_EQ(Run({"EXPIRE", "a", "150", "XX", "GT"}), 1);
  EXPECT_EQ(Run({"TTL", "a"}), 150);
  // Repeated options are allowed.
  EXPECT_EQ(Run({"EXPIRE", "a", "120", "LT", "lt"}), 1);
  EXPECT_EQ(Run({"PERSIST", "a"}), 1);
  EXPECT_EQ(Run({"EXPIRE", "a", "100", "LT"}), 1);
  EXPECT_EQ(Run({"TTL", "a"}), 100);
  // The same rules in milliseconds and absolute time.
  EXPECT_EQ(Run({"PEXPIRE", "a", "200000", "GT"}), 1);
  EXPECT_EQ(Run({"TTL", "a"}), 200);
  EXPECT_EQ(Run({"EXPIREAT", "a", "4102444800", "LT"}), 0);
  EXPECT_EQ(Run({"PEXPIREAT", "a", "4102444800000", "GT"}), 1);
  EXPECT_EQ(Run({"PEXPIRETIME", "a"}), 4102444800000);
  EXPECT_EQ(Run({"EXPIREAT", "a", "4102444900", "NX"}), 0);
  // Conditions on a missing key: 0 whatever they are.
  EXPECT_EQ(Run({"EXPIRE", "nokey", "10", "NX"}), 0);
  // A condition that fails leaves an expiring-in-the-past time unapplied.
  EXPECT_EQ(Run({"EXPIRE", "a", "-1", "GT"}), 0);
  EXPECT_EQ(Run({"EXISTS", "a"}), 1);
  EXPECT_EQ(Run({"EXPIRE", "a", "-1", "LT"}), 1);
  EXPECT_EQ(Run({"EXISTS", "a"}), 0);
}

TEST_F(GenericCommandsTest, ExpireErrors) {
  ASSERT_EQ(Run({"SET", "a", "1"}), "OK");
  constexpr char kNxXx[] = "ERR NX and XX, GT or LT options at the same time are not compatible";
  constexpr char kGtLt[] = "ERR GT and LT options at the same time are not compatible";
  EXPECT_EQ(Err(Run({"EXPIRE", "a", "10", "NX", "XX"})), kNxXx);
  EXPECT_EQ(Err(Run({"EXPIRE", "a", "10", "NX", "GT"})), kNxXx);
  EXPECT_EQ(Err(Run({"PEXPIRE", "a", "10", "LT", "NX"})), kNxXx);
  EXPECT_EQ(Err(Run({"EXPIRE", "a", "10", "GT", "LT"})), kGtLt);
  EXPECT_EQ(Err(Run({"EXPIREAT", "a", "10", "lt", "gt"})), kGtLt);
  EXPECT_EQ(Err(Run({"EXPIRE", "a", "10", "foo"})), "ERR Unsupported option foo");
  EXPECT_EQ(Err(Run({"PEXPIRE", "a", "1", "2", "3"})), "ERR Unsupported option 2");
  // Options are checked before the time.
  EXPECT_EQ(Err(Run({"EXPIRE", "a", "abc", "foo"})), "ERR Unsupported option foo");
  for (const char* bad : {"abc", "", "1.5", " 1", "1 ", "+1", "01", "-0",
                          "9223372036854775808"}) {
    EXPECT_EQ(Err(Run({"EXPIRE", "a", bad})), kNotInt) << bad;
    EXPECT_EQ(Err(Run({"PEXPIREAT", "a", bad})), kNotInt) << bad;
  }
  EXPECT_EQ(Err(Run({"EXPIRE", "a", "9223372036854775807"})),
            "ERR invalid expire time in 'expire' command");
  EXPECT_EQ(Err(Run({"EXPIRE", "a", "-9223372036854775808"})),
            "ERR invalid expire time in 'expire' command");
  EXPECT_EQ(Err(Run({"PEXPIRE", "a", "9223372036854775807"})),
            "ERR invalid expire time in 'pexpire' command");
  EXPECT_EQ(Err(Run({"EXPIREAT", "a", "9223372036854775807"})),
            "ERR invalid expire time in 'expireat' command");
  // Errors apply to missing keys too (the time is checked first).
  EXPECT_EQ(Err(Run({"EXPIRE", "nokey", "9223372036854775807"})),
            "ERR invalid expire time in 'expire' command");
  EXPECT_EQ(Err(Run({"EXPIRE", "nokey", "x"})), kNotInt);
  EXPECT_EQ(Err(Run({"EXPIRE", "a"})), "ERR wrong number of arguments for 'expire' command");
  EXPECT_EQ(Err(Run({"PEXPIREAT", "a"})),
            "ERR wrong number of arguments for 'pexpireat' command");
  EXPECT_EQ(Err(Run({"TTL"})), "ERR wrong number of arguments for 'ttl' command");
  EXPECT_EQ(Err(Run({"PTTL", "a", "b"})), "ERR wrong number of arguments for 'pttl' command");
  EXPECT_EQ(Err(Run({"EXPIRETIME"})), "ERR wrong number of arguments for 'expiretime' command");
  EXPECT_EQ(Err(Run({"PERSIST"})), "ERR wrong number of arguments for 'persist' command");
  // Nothing above changed the key.
  EXPECT_EQ(Run({"TTL", "a"}), -1);
  EXPECT_EQ(Run({"GET", "a"}), "1");
}

TEST_F(GenericCommandsTest, Persist) {
  EXPECT_EQ(Run({"PERSIST", "nokey"}), 0);
  ASSERT_EQ(Run({"SET", "a", "1"}), "OK");
  EXPECT_EQ(Run({"PERSIST", "a"}), 0);
  EXPECT_EQ(Run({"EXPIRE", "a", "100"}), 1);
  EXPECT_EQ(Run({"PERSIST", "a"}), 1);
  EXPECT_EQ(Run({"TTL", "a"}), -1);
  EXPECT_EQ(Run({"PERSIST", "a"}), 0);
  EXPECT_EQ(Run({"GET", "a"}), "1");
  // A plain SET clears the TTL too.
  EXPECT_EQ(Run({"EXPIRE", "a", "100"}), 1);
  ASSERT_EQ(Run({"SET", "a", "2"}), "OK");
  EXPECT_EQ(Run({"TTL", "a"}), -1);
}

TEST_F(GenericCommandsTest, LazyExpiryOnAccess) {
  int64_t expired_before = InfoField("expired_keys");
  int64_t misses_before = InfoField("keyspace_misses");
  std::vector<std::string> keys = KeysOnShard(0, 2, "a");
  for (const auto& k : KeysOnShard(1, 2, "b")) keys.push_back(k);
  for (const auto& k : keys) {
    ASSERT_EQ(Run({"SET", k, "v"}), "OK");
    ExpireInThePast(k);
  }
  // Every access path treats the key as gone.
  EXPECT_TRUE(Run({"GET", keys[0]}).is_null());
  EXPECT_EQ(Run({"EXISTS", keys[1]}), 0);
  EXPECT_EQ(Run({"TTL", keys[2]}), -2);
  EXPECT_EQ(Run({"TYPE", keys[3]}), "none");
  EXPECT_EQ(Run({"DBSIZE"}), 0);
  EXPECT_EQ(InfoField("expired_keys") - expired_before, 4);
  EXPECT_GE(InfoField("keyspace_misses") - misses_before, 1);
  // A write to an expired key starts a fresh key without a TTL.
  ASSERT_EQ(Run({"SET", "w", "old"}), "OK");
  ExpireInThePast("w");
  EXPECT_EQ(Run({"APPEND", "w", "new"}), 3);
  EXPECT_EQ(Run({"GET", "w"}), "new");
  EXPECT_EQ(Run({"TTL", "w"}), -1);
}

TEST_F(GenericCommandsTest, ShortTtlExpiresByPolling) {
  ASSERT_EQ(Run({"SET", "a", "1"}), "OK");
  EXPECT_EQ(Run({"PEXPIRE", "a", "1"}), 1);
  EXPECT_TRUE(PollUntil([&] { return Run({"GET", "a"}).is_null(); }));
  EXPECT_EQ(Run({"EXISTS", "a"}), 0);
  EXPECT_EQ(Run({"PTTL", "a"}), -2);
}

TEST_F(GenericCommandsTest, ActiveExpiryDeletesUntouchedKeys) {
  int64_t expired_before = InfoField("expired_keys");
  for (int i = 0; i < 200; ++i) {
    ASSERT_EQ(Run({"SET", "e" + std::to_string(i), "v", "PX", "1"}), "OK");
  }
  for (int i = 0; i < 10; ++i) ASSERT_EQ(Run({"SET", "keep" + std::to_string(i), "v"}), "OK");
  // DBSIZE counts stored entries without touching them: only the active cycle shrinks it.
  EXPECT_TRUE(PollUntil([&] { return Run({"DBSIZE"}) == int64_t{10}; }));
  EXPECT_EQ(InfoField("expired_keys") - expired_before, 200);
  EXPECT_EQ(Run({"EXISTS", "keep0", "keep9"}), 2);
}

TEST_F(GenericCommandsTest, KeysPatterns) {
  for (const char* k : {"hello", "hallo", "hxllo", "hllo", "heeeello", "world", "h*llo"}) {
    ASSERT_EQ(Run({"SET", k, "1"}), "OK");
  }
  EXPECT_THAT(Run({"KEYS", "h?llo"}).strings(),
              UnorderedElementsAre("hello", "hallo", "hxllo", "h*llo"));
  EXPECT_THAT(Run({"KEYS", "h*llo"}).strings(),
              UnorderedElementsAre("hello", "hallo", "hxllo", "hllo", "heeeello", "h*llo"));
  EXPECT_THAT(Run({"KEYS", "h[ae]llo"}).strings(), UnorderedElementsAre("hello", "hallo"));
  EXPECT_THAT(Run({"KEYS", "h[^e]llo"}).strings(),
              UnorderedElementsAre("hallo", "hxllo", "h*llo"));
  EXPECT_THAT(Run({"KEYS", "h[a-b]llo"}).strings(), UnorderedElementsAre("hallo"));
  EXPECT_THAT(Run({"KEYS", "h\\*llo"}).strings(), UnorderedElementsAre("h*llo"));
  EXPECT_THAT(Run({"KEYS", "*"}).strings(),
              UnorderedElementsAre("hello", "hallo", "hxllo", "hllo", "heeeello", "world",
                                   "h*llo"));
  EXPECT_THAT(Run({"KEYS", "world"}).strings(), UnorderedElementsAre("world"));
  EXPECT_TRUE(Run({"KEYS", "nomatch*"}).elems.empty());
  EXPECT_EQ(Run({"KEYS", "nomatch*"}).type, RespValue::Type::kArray);
  // Expired keys are not listed.
  ExpireInThePast("world");
  EXPECT_TRUE(Run({"KEYS", "w*"}).elems.empty());
  EXPECT_EQ(Err(Run({"KEYS"})), "ERR wrong number of arguments for 'keys' command");
}

TEST_F(GenericCommandsTest, KeysSeesOnlySelectedDb) {
  ASSERT_EQ(Run({"SET", "a", "1"}), "OK");
  ASSERT_EQ(Run({"SELECT", "5"}), "OK");
  EXPECT_TRUE(Run({"KEYS", "*"}).elems.empty());
  ASSERT_EQ(Run({"SET", "b", "1"}), "OK");
  EXPECT_THAT(Run({"KEYS", "*"}).strings(), UnorderedElementsAre("b"));
}

TEST_F(GenericCommandsTest, ScanFullIterationAcrossShards) {
  EXPECT_EQ(Run({"SCAN", "0"}).elems[0], "0");
  EXPECT_TRUE(Run({"SCAN", "0"}).elems[1].elems.empty());
  ASSERT_EQ(Run({"DEBUG", "POPULATE", "1000", "key"}), "OK");
  for (const std::vector<std::string>& opts :
       {std::vector<std::string>{}, {"COUNT", "1"}, {"COUNT", "7"}, {"COUNT", "1000"}}) {
    int calls = 0;
    std::vector<std::string> keys = ScanAll(opts, &calls);
    std::set<std::string> unique(keys.begin(), keys.end());
    EXPECT_EQ(unique.size(), 1000u);
    for (int i = 0; i < 1000; ++i) {
      EXPECT_TRUE(unique.count("key:" + std::to_string(i))) << i;
    }
    EXPECT_GE(calls, 1);
  }
}

TEST_F(GenericCommandsTest, ScanMatchAndType) {
  ASSERT_EQ(Run({"DEBUG", "POPULATE", "300", "key"}), "OK");
  std::vector<std::string> keys = ScanAll({"MATCH", "key:1*", "COUNT", "5"});
  std::set<std::string> unique(keys.begin(), keys.end());
  std::set<std::string> expected;
  for (int i = 0; i < 300; ++i) {
    std::string k = "key:" + std::to_string(i);
    if (k.rfind("key:1", 0) == 0) expected.insert(k);
  }
  EXPECT_EQ(unique, expected);
  MakeList("alist");
  MakeList("blist");
  std::vector<std::string> lists = ScanAll({"TYPE", "list"});
  std::set<std::string> ulists(lists.begin(), lists.end());
  EXPECT_EQ(ulists, (std::set<std::string>{"alist", "blist"}));
  std::vector<std::string> strings = ScanAll({"TYPE", "STRING", "MATCH", "key:29*"});
  std::set<std::string> ustrings(strings.begin(), strings.end());
  EXPECT_EQ(ustrings, (std::set<std::string>{"key:29", "key:290", "key:291", "key:292",
                                             "key:293", "key:294", "key:295", "key:296",
                                             "key:297", "key:298", "key:299"}));
  EXPECT_TRUE(ScanAll({"TYPE", "nosuchtype"}).empty());
  EXPECT_TRUE(ScanAll({"MATCH", "nomatch*"}).empty());
}

TEST_F(GenericCommandsTest, ScanErrors) {
  EXPECT_EQ(Err(Run({"SCAN", "abc"})), "ERR invalid cursor");
  EXPECT_EQ(Err(Run({"SCAN", "18446744073709551616"})), "ERR invalid cursor");
  EXPECT_EQ(Err(Run({"SCAN", "1x"})), "ERR invalid cursor");
  EXPECT_EQ(Err(Run({"SCAN", "0", "COUNT", "0"})), kSyntax);
  EXPECT_EQ(Err(Run({"SCAN", "0", "COUNT", "-1"})), kSyntax);
  EXPECT_EQ(Err(Run({"SCAN", "0", "COUNT", "abc"})), kNotInt);
  EXPECT_EQ(Err(Run({"SCAN", "0", "foo"})), kSyntax);
  EXPECT_EQ(Err(Run({"SCAN", "0", "MATCH"})), kSyntax);
  EXPECT_EQ(Err(Run({"SCAN"})), "ERR wrong number of arguments for 'scan' command");
  // A cursor past the end finishes the scan.
  RespValue r = Run({"SCAN", "18446744073709551615"});
  ASSERT_EQ(r.elems.size(), 2u);
  EXPECT_EQ(r.elems[0], "0");
}

TEST_F(GenericCommandsTest, ScanWhileKeysAreAdded) {
  std::set<std::string> original;
  for (int i = 0; i < 500; ++i) {
    std::string k = "orig:" + std::to_string(i);
    ASSERT_EQ(Run({"SET", k, "v"}), "OK");
    original.insert(k);
  }
  std::set<std::string> seen;
  std::string cursor = "0";
  int added = 0;
  int steps = 0;
  do {
    RespValue r = Run({"SCAN", cursor, "COUNT", "10"});
    ASSERT_EQ(r.elems.size(), 2u) << r;
    cursor = r.elems[0].str;
    for (const auto& k : r.elems[1].elems) seen.insert(k.str);
    // Grow the tables (segment splits) while the scan is in progress: 100 pipelined SETs
    // after each of the first 40 steps.
    if (steps < 40) {
      std::string batch;
      for (int j = 0; j < 100; ++j) {
        batch += testing::RespClient::Encode({"SET", "new:" + std::to_string(added++), "v"});
      }
      c_->SendRaw(batch);
      for (int j = 0; j < 100; ++j) ASSERT_EQ(c_->Read(), "OK");
    }
  } while (cursor != "0" && ++steps < 100000);
  EXPECT_EQ(cursor, "0");
  for (const auto& k : original) EXPECT_TRUE(seen.count(k)) << k;
}

TEST_F(GenericCommandsTest, RandomKey) {
  EXPECT_TRUE(Run({"RANDOMKEY"}).is_null());
  std::string a = KeysOnShard(0, 1, "a")[0];
  std::string b = KeysOnShard(1, 1, "b")[0];
  ASSERT_EQ(Run({"SET", a, "1"}), "OK");
  ASSERT_EQ(Run({"SET", b, "1"}), "OK");
  std::set<std::string> got;
  for (int i = 0; i < 200; ++i) {
    RespValue r = Run({"RANDOMKEY"});
    ASSERT_EQ(r.type, RespValue::Type::kBulk) << r;
    got.insert(r.str);
  }
  EXPECT_EQ(got, (std::set<std::string>{a, b}));
  // Expired keys are never returned.
  ExpireInThePast(a);
  for (int i = 0; i < 50; ++i) EXPECT_EQ(Run({"RANDOMKEY"}), b);
  ExpireInThePast(b);
  EXPECT_TRUE(Run({"RANDOMKEY"}).is_null());
  EXPECT_EQ(Err(Run({"RANDOMKEY", "x"})),
            "ERR wrong number of arguments for 'randomkey' command");
}

TEST_F(GenericCommandsTest, ObjectEncodingAndRefcount) {
  ASSERT_EQ(Run({"SET", "i", "12345"}), "OK");
  ASSERT_EQ(Run({"SET", "e", "hello"}), "OK");
  ASSERT_EQ(Run({"SET", "r", std::string(50, 'x')}), "OK");
  ASSERT_EQ(Run({"SET", "small", "5"}), "OK");
  ASSERT_EQ(Run({"SET", "large", "100000"}), "OK");
  EXPECT_EQ(Run({"OBJECT", "ENCODING", "i"}), "int");
  EXPECT_EQ(Run({"OBJECT", "encoding", "e"}), "embstr");
  EXPECT_EQ(Run({"OBJECT", "ENCODING", "r"}), "raw");
  EXPECT_TRUE(Run({"OBJECT", "ENCODING", "nokey"}).is_null());
  // Redis shares the integers 0..9999 (refcount INT_MAX); other values have refcount 1.
  EXPECT_EQ(Run({"OBJECT", "REFCOUNT", "small"}), 2147483647);
  EXPECT_EQ(Run({"OBJECT", "REFCOUNT", "large"}), 1);
  EXPECT_EQ(Run({"OBJECT", "REFCOUNT", "e"}), 1);
  EXPECT_TRUE(Run({"OBJECT", "REFCOUNT", "nokey"}).is_null());
  EXPECT_TRUE(Run({"OBJECT", "IDLETIME", "nokey"}).is_null());
  EXPECT_EQ(Err(Run({"OBJECT", "FREQ", "e"})),
            "ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please "
            "note that when switching between policies at runtime LRU and LFU data will take "
            "some time to adjust.");
}

TEST_F(GenericCommandsTest, ObjectHelpAndErrors) {
  RespValue help = Run({"OBJECT", "HELP"});
  ASSERT_EQ(help.type, RespValue::Type::kArray);
  ASSERT_GE(help.elems.size(), 3u);
  EXPECT_EQ(help.elems[0], "OBJECT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:");
  EXPECT_EQ(help.elems[1], "ENCODING <key>");
  EXPECT_EQ(Err(Run({"OBJECT", "foo", "s"})), "ERR unknown subcommand 'foo'. Try OBJECT HELP.");
  EXPECT_EQ(Err(Run({"OBJECT", "ENCODING"})),
            "ERR wrong number of arguments for 'object|encoding' command");
  EXPECT_EQ(Err(Run({"OBJECT", "encoding", "a", "b"})),
            "ERR wrong number of arguments for 'object|encoding' command");
  EXPECT_EQ(Err(Run({"OBJECT", "REFCOUNT"})),
            "ERR wrong number of arguments for 'object|refcount' command");
  EXPECT_EQ(Err(Run({"OBJECT"})), "ERR wrong number of arguments for 'object' command");
}

}  // namespace
}  // namespace dashkv
