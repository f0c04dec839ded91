// Routing tests of Server::Dispatch against a real multi-shard server: message counts per
// pipeline (INFO's dashkv_shard_hops), reply order across shards, hash tags, errors inside a
// pipeline, a pipeline behind a transaction's lock, very large pipelines, and concurrent
// pipelining clients (run under TSan too).
// Expected replies follow redis-server 7.0.15.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "core/intent_lock.h"
#include "server/tx/transaction.h"
#include "tests/testing/test_server.h"

namespace dashkv {
namespace {

using testing::RespClient;
using testing::RespValue;
using testing::TestServer;

// Returns the error text of `v`, or "<not an error: ...>".
std::string Err(const RespValue& v) {
  if (v.is_error()) return v.str;
  std::ostringstream os;
  os << "<not an error: " << v << ">";
  return os.str();
}

std::string Cmd(std::initializer_list<std::string_view> args) {
  return RespClient::Encode(std::vector<std::string_view>(args));
}

class DispatchTest : public ::testing::Test {
 protected:
  explicit DispatchTest(unsigned threads = 2) : srv_(threads) {}
  void SetUp() override {
    c_ = srv_.Connect();
    ASSERT_TRUE(c_->connected());
  }
  RespValue Run(std::initializer_list<std::string_view> args) { return c_->Run(args); }
  ShardSet& shards() { return srv_.server().shard_set(); }

  // Returns `n` distinct keys named prefix<i> owned by shard `sid`.
  std::vector<std::string> KeysOnShard(unsigned sid, size_t n, const std::string& prefix) {
    std::vector<std::string> out;
    for (int i = 0; out.size() < n; ++i) {
      std::string k = prefix + std::to_string(i);
      if (shards().ShardOf(k) == sid) out.push_back(k);
    }
    return out;
  }

  // Returns the server-wide count of shard messages sent by pipelines.
  int64_t Hops(RespClient& c) {
    std::string info = c.Run({"INFO", "stats"}).str;
    size_t pos = info.find("dashkv_shard_hops:");
    if (pos == std::string::npos) return -1;
    return std::stoll(info.substr(pos + 18));
  }

  // Sends `batch` in one write and reads `n` replies.
  std::vector<RespValue> Pipeline(RespClient& c, const std::string& batch, size_t n) {
    c.SendRaw(batch);
    std::vector<RespValue> out;
    out.reserve(n);
    for (size_t i = 0; i < n; ++i) out.push_back(c.Read());
    return out;
  }

  // Returns a new connection served by shard `sid`'s thread (a SET of a key there costs no
  // message), or nullptr if none of a few attempts landed there.
  std::unique_ptr<RespClient> ConnectOn(unsigned sid) {
    const std::string key = KeysOnShard(sid, 1, "probe")[0];
    for (int attempt = 0; attempt < 8; ++attempt) {
      std::unique_ptr<RespClient> c = srv_.Connect();
      const int64_t before = Hops(*c);
      if (c->Run({"SET", key, "x"}) == "OK" && Hops(*c) == before) return c;
    }
    return nullptr;
  }

  TestServer srv_;
  std::unique_ptr<RespClient> c_;
};

class DispatchThreeShardTest : public DispatchTest {
 protected:
  DispatchThreeShardTest() : DispatchTest(3) {}
};

TEST_F(DispatchTest, PipelineOverTwoShardsCostsAtMostOneMessage) {
  std::vector<std::string> a = KeysOnShard(0, 15, "a");
  std::vector<std::string> b = KeysOnShard(1, 15, "b");
  std::string batch;
  for (int i = 0; i < 15; ++i) {
    batch += Cmd({"SET", a[i], "x"});
    batch += Cmd({"SET", b[i], "y"});
  }
  int64_t before = Hops(*c_);
  ASSERT_GE(before, 0);
  std::vector<RespValue> replies = Pipeline(*c_, batch, 30);
  for (const auto& r : replies) EXPECT_EQ(r, "OK");
  int64_t after = Hops(*c_);
  // The connection's own shard runs inline; the other one gets one message.
  EXPECT_LE(after - before, 1);
  EXPECT_EQ(Run({"DBSIZE"}), 30);
}

TEST_F(DispatchTest, OneShardPipelinesCostZeroOrOneMessage) {
  std::vector<std::string> a = KeysOnShard(0, 30, "a");
  std::vector<std::string> b = KeysOnShard(1, 30, "b");
  int64_t hops_a = 0, hops_b = 0;
  for (int round = 0; round < 2; ++round) {
    const auto& keys = round == 0 ? a : b;
    std::string batch;
    for (const auto& k : keys) batch += Cmd({"INCR", k});
    int64_t before = Hops(*c_);
    std::vector<RespValue> replies = Pipeline(*c_, batch, keys.size());
    for (const auto& r : replies) EXPECT_EQ(r, 1);
    (round == 0 ? hops_a : hops_b) = Hops(*c_) - before;
  }
  // One of the two shards is the connection's own (inline, no message); the other costs one.
  EXPECT_EQ(hops_a + hops_b, 1);
}

TEST_F(DispatchTest, RepliesInRequestOrderAcrossShards) {
  std::vector<std::string> a = KeysOnShard(0, 20, "a");
  std::vector<std::string> b = KeysOnShard(1, 20, "b");
  std::string batch;
  std::vector<std::string> expected;
  // 200 commands, interleaving keys of both shards: SET, GET, INCR, GET, APPEND per pair.
  for (int i = 0; i < 20; ++i) {
    const std::string& x = (i % 2) ? a[i] : b[i];
    const std::string& y = (i % 2) ? b[i] : a[i];
    std::string v = std::to_string(i * 10);
    batch += Cmd({"SET", x, v});
    expected.push_back("OK");
    batch += Cmd({"SET", y, "s" + v});
    expected.push_back("OK");
    batch += Cmd({"GET", y});
    expected.push_back("s" + v);
    batch += Cmd({"INCR", x});
    expected.push_back(":" + std::to_string(i * 10 + 1));
    batch += Cmd({"GET", x});
    expected.push_back(std::to_string(i * 10 + 1));
    batch += Cmd({"APPEND", y, "!"});
    expected.push_back(":" + std::to_string(v.size() + 2));
    batch += Cmd({"GET", y});
    expected.push_back("s" + v + "!");
    batch += Cmd({"EXISTS", x});
    expected.push_back(":1");
    batch += Cmd({"INCRBY", x, "5"});
    expected.push_back(":" + std::to_string(i * 10 + 6));
    batch += Cmd({"STRLEN", y});
    expected.push_back(":" + std::to_string(v.size() + 2));
  }
  ASSERT_EQ(expected.size(), 200u);
  std::vector<RespValue> replies = Pipeline(*c_, batch, expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    const RespValue& r = replies[i];
    if (expected[i][0] == ':') {
      EXPECT_EQ(r, std::stoll(expected[i].substr(1))) << "reply " << i;
    } else {
      EXPECT_EQ(r, expected[i]) << "reply " << i;
    }
  }
}

TEST_F(DispatchTest, MixedCommandKindsKeepOrder) {
  std::string a = KeysOnShard(0, 1, "a")[0];
  std::string b = KeysOnShard(1, 1, "b")[0];
  // Shard commands, a connection command, a coordinator command and a multi-shard DEL.
  std::string batch = Cmd({"SET", a, "1"}) + Cmd({"SET", b, "2"}) + Cmd({"PING"}) +
                      Cmd({"GET", a}) + Cmd({"DBSIZE"}) + Cmd({"MGET", a, b, "nokey"}) +
                      Cmd({"ECHO", "e"}) + Cmd({"DEL", a, b}) + Cmd({"GET", b}) +
                      Cmd({"EXISTS", a, b});
  std::vector<RespValue> r = Pipeline(*c_, batch, 10);
  EXPECT_EQ(r[0], "OK");
  EXPECT_EQ(r[1], "OK");
  EXPECT_EQ(r[2], "PONG");
  EXPECT_EQ(r[3], "1");
  EXPECT_EQ(r[4], 2);
  ASSERT_EQ(r[5].elems.size(), 3u);
  EXPECT_EQ(r[5].elems[0], "1");
  EXPECT_EQ(r[5].elems[1], "2");
  EXPECT_TRUE(r[5].elems[2].is_null());
  EXPECT_EQ(r[6], "e");
  EXPECT_EQ(r[7], 2);
  EXPECT_TRUE(r[8].is_null());
  EXPECT_EQ(r[9], 0);
}

TEST_F(DispatchTest, HashTagKeysShareAShard) {
  EXPECT_EQ(HashTagOf("{user}:a"), "user");
  EXPECT_EQ(HashTagOf("{user}:b"), "user");
  EXPECT_EQ(shards().ShardOf("{user}:a"), shards().ShardOf("{user}:b"));
  EXPECT_EQ(shards().ShardOf("{user}:a"), shards().ShardOf("user"));
  // Many tagged keys: all on one shard.
  for (int i = 0; i < 100; ++i) {
    EXPECT_EQ(shards().ShardOf("{user}:" + std::to_string(i)), shards().ShardOf("user")) << i;
  }
  ASSERT_EQ(Run({"SET", "{user}:a", "1"}), "OK");
  ASSERT_EQ(Run({"SET", "{user}:b", "2"}), "OK");
  // The multi-key DEL of tagged keys is a single-shard command: at most one message.
  int64_t before = Hops(*c_);
  EXPECT_EQ(Run({"DEL", "{user}:a", "{user}:b", "{user}:c"}), 2);
  EXPECT_LE(Hops(*c_) - before, 1);
  EXPECT_EQ(Run({"EXISTS", "{user}:a", "{user}:b"}), 0);
  // The key actually lives on the shard ShardOf names.
  ASSERT_EQ(Run({"SET", "{user}:z", "v"}), "OK");
  unsigned sid = shards().ShardOf("{user}:z");
  // One byte per shard (not vector<bool>: its bits share words, the shards write in parallel).
  std::vector<char> found(shards().size(), 0);
  shards().RunOnAllBlocking([&](Shard& shard) {
    DbSlice* db = shard.db_if_exists(0);
    found[shard.index()] = db && !db->table().Find(std::string_view("{user}:z")).is_done();
  });
  for (unsigned i = 0; i < found.size(); ++i) EXPECT_EQ(found[i] != 0, i == sid) << i;
}

TEST_F(DispatchTest, ErrorsInsidePipelineDoNotDisturbOthers) {
  std::string a = KeysOnShard(0, 1, "a")[0];
  std::string b = KeysOnShard(1, 1, "b")[0];
  std::string batch = Cmd({"SET", a, "1"}) + Cmd({"FOO", "x", "y"}) + Cmd({"GET", a}) +
                      Cmd({"GET"}) + Cmd({"INCR", b}) + Cmd({"SET", b}) + Cmd({"INCR", b}) +
                      Cmd({"foo"}) + Cmd({"DEL"}) + Cmd({"GET", b});
  std::vector<RespValue> r = Pipeline(*c_, batch, 10);
  EXPECT_EQ(r[0], "OK");
  EXPECT_EQ(Err(r[1]), "ERR unknown command 'FOO', with args beginning with: 'x' 'y' ");
  EXPECT_EQ(r[2], "1");
  EXPECT_EQ(Err(r[3]), "ERR wrong number of arguments for 'get' command");
  EXPECT_EQ(r[4], 1);
  EXPECT_EQ(Err(r[5]), "ERR wrong number of arguments for 'set' command");
  EXPECT_EQ(r[6], 2);
  EXPECT_EQ(Err(r[7]), "ERR unknown command 'foo', with args beginning with: ");
  EXPECT_EQ(Err(r[8]), "ERR wrong number of arguments for 'del' command");
  EXPECT_EQ(r[9], "2");
  // WRONGTYPE-free command errors from the shards keep order too.
  batch = Cmd({"SET", a, "x"}) + Cmd({"INCR", a}) + Cmd({"INCR", b}) + Cmd({"GET", a});
  r = Pipeline(*c_, batch, 4);
  EXPECT_EQ(r[0], "OK");
  EXPECT_EQ(Err(r[1]), "ERR value is not an integer or out of range");
  EXPECT_EQ(r[2], 3);
  EXPECT_EQ(r[3], "x");
  EXPECT_EQ(Run({"PING"}), "PONG");
}

// A pipelined run of shard 0's commands whose second key a transaction holds: the first
// command runs at once, the others wait for the lock and keep their order. Sent from shard 0's
// thread (PipelineRunner::RunLocalGroup) and from shard 1's (a message to shard 0).
TEST_F(DispatchTest, PipelineWaitsBehindALockedKeyInOrder) {
  for (unsigned conn_sid : {0u, 1u}) {
    SCOPED_TRACE(conn_sid);
    std::unique_ptr<RespClient> c = ConnectOn(conn_sid);
    ASSERT_NE(c, nullptr);
    std::vector<std::string> k = KeysOnShard(0, 3, "w" + std::to_string(conn_sid) + ":");
    LockRequest held;
    held.Add(LockHashOf(0, k[1]), LockMode::kExclusive);
    bool acquired = false;
    shards().RunOnAllBlocking([&](Shard& shard) {
      if (shard.index() == 0) acquired = shard.locks().TryAcquire(held);
    });
    ASSERT_TRUE(acquired);
    c->SendRaw(Cmd({"INCR", k[0]}) + Cmd({"INCR", k[1]}) + Cmd({"INCR", k[2]}));
    // Polled: the pipeline runs on the server's threads, at a time the test does not know.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (Run({"GET", k[0]}) != "1" && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::yield();
    }
    ASSERT_EQ(Run({"GET", k[0]}), "1");
    EXPECT_TRUE(Run({"GET", k[2]}).is_null());  // behind INCR k[1], which waits
    shards().RunOnAllBlocking([&](Shard& shard) {
      if (shard.index() == 0) shard.locks().Release(held);
    });
    for (int i = 0; i < 3; ++i) EXPECT_EQ(c->Read(), 1) << i;
    // Each ran once (the part that ran before the wait is not run again).
    EXPECT_EQ(Run({"MGET", k[0], k[1], k[2]}).strings(),
              (std::vector<std::string>{"1", "1", "1"}));
  }
}

// The same over both shards (commands alternating between them): shard 0's second key is held.
// From shard 0's thread the blocked command is one the connection runs itself as the replies
// are put in order (PipelineRunner::MergeReplies); from shard 1's, one of the hop's.
TEST_F(DispatchTest, TwoShardPipelineWaitsBehindALockedKeyInOrder) {
  for (unsigned conn_sid : {0u, 1u}) {
    SCOPED_TRACE(conn_sid);
    std::unique_ptr<RespClient> c = ConnectOn(conn_sid);
    ASSERT_NE(c, nullptr);
    std::vector<std::string> a = KeysOnShard(0, 3, "x" + std::to_string(conn_sid) + ":");
    std::vector<std::string> b = KeysOnShard(1, 3, "y" + std::to_string(conn_sid) + ":");
    LockRequest held;
    held.Add(LockHashOf(0, a[1]), LockMode::kExclusive);
    bool acquired = false;
    shards().RunOnAllBlocking([&](Shard& shard) {
      if (shard.index() == 0) acquired = shard.locks().TryAcquire(held);
    });
    ASSERT_TRUE(acquired);
    std::string batch;
    for (int i = 0; i < 3; ++i) batch += Cmd({"INCR", a[i]}) + Cmd({"INCR", b[i]});
    c->SendRaw(batch);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (Run({"GET", a[0]}) != "1" && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::yield();
    }
    ASSERT_EQ(Run({"GET", a[0]}), "1");
    EXPECT_TRUE(Run({"GET", a[2]}).is_null());  // behind INCR a[1], which waits
    shards().RunOnAllBlocking([&](Shard& shard) {
      if (shard.index() == 0) shard.locks().Release(held);
    });
    for (int i = 0; i < 6; ++i) EXPECT_EQ(c->Read(), 1) << i;
    EXPECT_EQ(Run({"MGET", a[0], a[1], a[2], b[0], b[1], b[2]}).strings(),
              (std::vector<std::string>{"1", "1", "1", "1", "1", "1"}));
  }
}

// A pipeline over three shards (the other two run in parallel, then the connection's own as
// the replies are put in order) with a key held on another shard and one on its own: every
// command runs once, each shard's in order, the replies in request order.
TEST_F(DispatchThreeShardTest, PipelineWaitsBehindLockedKeysOnTwoShardsInOrder) {
  std::unique_ptr<RespClient> c = ConnectOn(0);
  ASSERT_NE(c, nullptr);
  std::vector<std::vector<std::string>> keys;
  for (unsigned sid = 0; sid < 3; ++sid) {
    keys.push_back(KeysOnShard(sid, 3, "z" + std::to_string(sid) + ":"));
  }
  LockRequest held[2];
  for (unsigned sid = 0; sid < 2; ++sid) {
    held[sid].Add(LockHashOf(0, keys[sid][1]), LockMode::kExclusive);
  }
  std::atomic<int> acquired{0};  // the shards run in parallel
  shards().RunOnAllBlocking([&](Shard& shard) {
    if (shard.index() < 2 && shard.locks().TryAcquire(held[shard.index()])) ++acquired;
  });
  ASSERT_EQ(acquired.load(), 2);
  auto release = [&](unsigned sid) {
    shards().RunOnAllBlocking([&](Shard& shard) {
      if (shard.index() == sid) shard.locks().Release(held[sid]);
    });
  };
  std::string batch;
  for (int i = 0; i < 3; ++i) {
    for (unsigned sid = 0; sid < 3; ++sid) batch += Cmd({"INCR", keys[sid][i]});
  }
  c->SendRaw(batch);
  // Polled: the pipeline runs on the server's threads, at a time the test does not know.
  auto wait_for_one = [&](const std::string& key) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (Run({"GET", key}) != "1" && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::yield();
    }
    return Run({"GET", key}) == "1";
  };
  ASSERT_TRUE(wait_for_one(keys[1][0]));
  ASSERT_TRUE(wait_for_one(keys[2][2]));  // shard 2 holds nothing back
  EXPECT_TRUE(Run({"GET", keys[1][2]}).is_null());  // behind INCR keys[1][1], which waits
  release(1);
  ASSERT_TRUE(wait_for_one(keys[0][0]));
  EXPECT_TRUE(Run({"GET", keys[0][2]}).is_null());  // behind INCR keys[0][1], which waits
  release(0);
  for (int i = 0; i < 9; ++i) EXPECT_EQ(c->Read(), 1) << i;
  for (unsigned sid = 0; sid < 3; ++sid) {
    EXPECT_EQ(Run({"MGET", keys[sid][0], keys[sid][1], keys[sid][2]}).strings(),
              (std::vector<std::string>{"1", "1", "1"}))
        << sid;
  }
}

TEST_F(DispatchTest, LargePipelines) {
  constexpr int kN = 10000;
  std::string batch;
  for (int i = 0; i < kN; ++i) {
    batch += Cmd({"SET", "key" + std::to_string(i), "v" + std::to_string(i)});
  }
  std::vector<RespValue> r = Pipeline(*c_, batch, kN);
  for (int i = 0; i < kN; ++i) ASSERT_EQ(r[i], "OK") << i;
  EXPECT_EQ(Run({"DBSIZE"}), kN);
  batch.clear();
  for (int i = 0; i < kN; ++i) batch += Cmd({"GET", "key" + std::to_string(kN - 1 - i)});
  r = Pipeline(*c_, batch, kN);
  for (int i = 0; i < kN; ++i) ASSERT_EQ(r[i], "v" + std::to_string(kN - 1 - i)) << i;
  // Mixed: INCR on a handful of counters spread over both shards.
  batch.clear();
  for (int i = 0; i < kN; ++i) batch += Cmd({"INCR", "ctr" + std::to_string(i % 7)});
  r = Pipeline(*c_, batch, kN);
  for (int i = 0; i < kN; ++i) ASSERT_EQ(r[i], i / 7 + 1) << i;
}

TEST_F(DispatchTest, ConcurrentPipeliningClients) {
  constexpr int kClients = 4;
  constexpr int kRounds = 20;
  constexpr int kPerRound = 50;
  std::vector<std::thread> threads;
  std::vector<int> failures(kClients, 0);
  for (int t = 0; t < kClients; ++t) {
    threads.emplace_back([&, t] {
      RespClient c(srv_.port());
      for (int round = 0; round < kRounds; ++round) {
        std::string batch;
        for (int i = 0; i < kPerRound; ++i) {
          batch += Cmd({"INCR", "shared" + std::to_string(i % 10)});
          batch += Cmd({"SET", "own" + std::to_string(t) + ":" + std::to_string(i), "v"});
        }
        c.SendRaw(batch);
        for (int i = 0; i < 2 * kPerRound; ++i) {
          RespValue v = c.Read();
          bool ok = (i % 2) ? v == "OK" : v.type == RespValue::Type::kInt;
          if (!ok) ++failures[t];
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < kClients; ++t) EXPECT_EQ(failures[t], 0) << t;
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(Run({"GET", "shared" + std::to_string(i)}),
              std::to_string(kClients * kRounds * kPerRound / 10))
        << i;
  }
  EXPECT_EQ(Run({"DBSIZE"}), 10 + kClients * kPerRound);
}

TEST(DispatchSingleShardTest, OneShardServerRoutesEverythingInline) {
  TestServer srv(1);
  RespClient c(srv.port());
  std::string batch;
  for (int i = 0; i < 100; ++i) batch += Cmd({"SET", "k" + std::to_string(i), "v"});
  batch += Cmd({"DEL", "k1", "k2", "{x}y", "k3"});
  c.SendRaw(batch);
  for (int i = 0; i < 100; ++i) ASSERT_EQ(c.Read(), "OK");
  EXPECT_EQ(c.Read(), 3);
  std::string info = c.Run({"INFO", "stats"}).str;
  EXPECT_NE(info.find("dashkv_shard_hops:0\r\n"), std::string::npos) << info;
  EXPECT_EQ(c.Run({"DBSIZE"}), 97);
}

}  // namespace
}  // namespace dashkv
