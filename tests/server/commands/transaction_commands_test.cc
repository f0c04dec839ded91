// MULTI / EXEC / DISCARD / WATCH / UNWATCH against a real 2-shard server. Expected replies were
// taken from redis-server 7.0.15 (tests/integration/test_transactions.py runs the same cases
// against it); the randomized test checks atomicity and WATCH under concurrent clients.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/testing/test_server.h"

namespace dashkv {
namespace {

using testing::RespClient;
using testing::RespValue;
using testing::TestServer;
using Type = RespValue::Type;

constexpr char kExecAbort[] = "EXECABORT Transaction discarded because of previous errors.";

class TransactionCommandsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    c_ = srv_.Connect();
    other_ = srv_.Connect();
    ASSERT_TRUE(c_->connected() && other_->connected());
    // Two keys on each shard.
    for (int i = 0; keys_[0].size() < 2 || keys_[1].size() < 2; ++i) {
      std::string k = "key" + std::to_string(i);
      auto& on = keys_[srv_.server().shard_set().ShardOf(k)];
      if (on.size() < 2) on.push_back(k);
    }
  }
  RespValue Run(std::initializer_list<std::string_view> args) { return c_->Run(args); }
  // Runs MULTI, `cmds` (each must be QUEUED), EXEC on `c`; returns EXEC's reply.
  static RespValue Tx(RespClient& c, const std::vector<std::vector<std::string>>& cmds) {
    EXPECT_EQ(c.Run({"MULTI"}), "OK");
    for (const auto& cmd : cmds) {
      RespValue q = c.Run(cmd);
      EXPECT_EQ(q.type, Type::kSimple) << q;
      EXPECT_EQ(q, "QUEUED");
    }
    return c.Run({"EXEC"});
  }

  TestServer srv_{2};
  std::unique_ptr<RespClient> c_;
  std::unique_ptr<RespClient> other_;
  std::vector<std::string> keys_[2];  // keys_[s]: keys owned by shard s
};

TEST_F(TransactionCommandsTest, QueuedAndExecReplies) {
  const std::string& a = keys_[0][0];
  const std::string& b = keys_[1][0];
  ASSERT_EQ(Run({"SET", "s", "str"}), "OK");
  RespValue r = Tx(*c_, {{"MSET", a, "1", b, "2"},
                         {"INCR", a},
                         {"SADD", "s", "x"},  // WRONGTYPE, does not stop the transaction
                         {"MGET", a, b},
                         {"RENAME", a, keys_[1][1]},
                         {"EXISTS", a, b, keys_[1][1]}});
  ASSERT_EQ(r.type, Type::kArray) << r;
  ASSERT_EQ(r.elems.size(), 6u);
  EXPECT_EQ(r.elems[0], "OK");
  EXPECT_EQ(r.elems[1], 2);
  EXPECT_EQ(r.elems[2].str, "WRONGTYPE Operation against a key holding the wrong kind of value");
  EXPECT_THAT(r.elems[3].strings(), ::testing::ElementsAre("2", "2"));
  EXPECT_EQ(r.elems[4], "OK");
  EXPECT_EQ(r.elems[5], 2);
  // An empty transaction.
  EXPECT_EQ(Run({"MULTI"}), "OK");
  RespValue empty = Run({"EXEC"});
  EXPECT_EQ(empty.type, Type::kArray);
  EXPECT_TRUE(empty.elems.empty());
}

TEST_F(TransactionCommandsTest, ErrorsOutsideAndWhileQueueing) {
  EXPECT_EQ(Run({"EXEC"}).str, "ERR EXEC without MULTI");
  EXPECT_EQ(Run({"DISCARD"}).str, "ERR DISCARD without MULTI");
  EXPECT_EQ(Run({"MULTI"}), "OK");
  EXPECT_EQ(Run({"MULTI"}).str, "ERR MULTI calls can not be nested");
  EXPECT_EQ(Run({"WATCH", "x"}).str, "ERR WATCH inside MULTI is not allowed");
  EXPECT_EQ(Run({"SET", "a", "1"}), "QUEUED");
  EXPECT_EQ(Run({"SET", "b"}).str, "ERR wrong number of arguments for 'set' command");
  EXPECT_EQ(Run({"NOSUCH"}).str, "ERR unknown command 'NOSUCH', with args beginning with: ");
  EXPECT_EQ(Run({"EXEC"}).str, kExecAbort);
  EXPECT_EQ(Run({"EXISTS", "a"}), 0);
  EXPECT_EQ(Run({"EXEC"}).str, "ERR EXEC without MULTI");
  // DISCARD drops the queue; RESET too.
  EXPECT_EQ(Run({"MULTI"}), "OK");
  EXPECT_EQ(Run({"SET", "a", "1"}), "QUEUED");
  EXPECT_EQ(Run({"DISCARD"}), "OK");
  EXPECT_EQ(Run({"MULTI"}), "OK");
  EXPECT_EQ(Run({"SET", "a", "1"}), "QUEUED");
  EXPECT_EQ(Run({"RESET"}), "RESET");
  EXPECT_EQ(Run({"EXISTS", "a"}), 0);
}

TEST_F(TransactionCommandsTest, SelectInsideMulti) {
  const std::string& a = keys_[0][0];
  const std::string& b = keys_[1][0];
  RespValue r = Tx(*c_, {{"SELECT", "3"}, {"MSET", a, "x", b, "y"}, {"SELECT", "0"}, {"DBSIZE"}});
  ASSERT_EQ(r.elems.size(), 4u) << r;
  EXPECT_EQ(r.elems[3], 0);
  EXPECT_EQ(Run({"SELECT", "3"}), "OK");
  EXPECT_THAT(Run({"MGET", a, b}).strings(), ::testing::ElementsAre("x", "y"));
}

TEST_F(TransactionCommandsTest, WatchAcrossShards) {
  std::vector<std::string> watch = {"WATCH"};
  for (const auto& on : keys_) watch.insert(watch.end(), on.begin(), on.end());
  for (int s = 0; s < 2; ++s) {
    ASSERT_EQ(c_->Run(watch), "OK");
    EXPECT_EQ(other_->Run({"SET", keys_[s][1], "v"}), "OK");
    EXPECT_TRUE(Tx(*c_, {{"PING"}}).is_null()) << "shard " << s;
  }
  // Unmodified: EXEC runs; then the keys are no longer watched.
  ASSERT_EQ(c_->Run(watch), "OK");
  EXPECT_EQ(Tx(*c_, {{"SET", keys_[0][0], "1"}}).elems.size(), 1u);
  EXPECT_EQ(other_->Run({"SET", keys_[1][0], "v"}), "OK");
  EXPECT_EQ(Tx(*c_, {{"PING"}}).elems.size(), 1u);
  // A cross-shard write by another client.
  ASSERT_EQ(Run({"WATCH", keys_[1][1]}), "OK");
  EXPECT_EQ(other_->Run({"MSET", keys_[0][1], "1", keys_[1][1], "2"}), "OK");
  EXPECT_TRUE(Tx(*c_, {{"PING"}}).is_null());
  // UNWATCH forgets.
  ASSERT_EQ(Run({"WATCH", keys_[1][1]}), "OK");
  EXPECT_EQ(other_->Run({"SET", keys_[1][1], "3"}), "OK");
  EXPECT_EQ(Run({"UNWATCH"}), "OK");
  EXPECT_EQ(Tx(*c_, {{"PING"}}).elems.size(), 1u);
}

TEST_F(TransactionCommandsTest, NoOpWritesDoNotTouch) {
  ASSERT_EQ(Run({"SADD", "s", "a"}), 1);
  ASSERT_EQ(Run({"SET", "str", "v"}), "OK");
  ASSERT_EQ(Run({"WATCH", "s", "str", "missing"}), "OK");
  EXPECT_EQ(other_->Run({"SADD", "s", "a"}), 0);
  EXPECT_TRUE(other_->Run({"SET", "str", "w", "NX"}).is_null());
  EXPECT_EQ(other_->Run({"PERSIST", "str"}), 0);
  EXPECT_EQ(other_->Run({"DEL", "missing"}), 0);
  EXPECT_EQ(Tx(*c_, {{"PING"}}).elems.size(), 1u);
  // A real change does.
  ASSERT_EQ(Run({"WATCH", "s"}), "OK");
  EXPECT_EQ(other_->Run({"SADD", "s", "b"}), 1);
  EXPECT_TRUE(Tx(*c_, {{"PING"}}).is_null());
}

TEST_F(TransactionCommandsTest, MoveTouchesBothDatabases) {
  ASSERT_EQ(Run({"SET", "x", "v"}), "OK");
  ASSERT_EQ(Run({"SELECT", "1"}), "OK");
  ASSERT_EQ(Run({"WATCH", "x"}), "OK");
  EXPECT_EQ(other_->Run({"MOVE", "x", "1"}), 1);
  EXPECT_TRUE(Tx(*c_, {{"PING"}}).is_null());
}

// Several clients on their own threads: MULTI/EXEC transfers between keys on both shards,
// WATCH-based increments of two counters on both shards, and MGET readers. Every MGET sees a
// constant total and equal counters; no WATCH increment is lost.
TEST_F(TransactionCommandsTest, RandomizedTransfersAndWatchIncrements) {
  const std::string& a = keys_[0][0];
  const std::string& b = keys_[1][0];
  const std::string& c = keys_[0][1];
  const std::string& d = keys_[1][1];
  ASSERT_EQ(Run({"MSET", a, "1000", b, "1000", c, "0", d, "0"}), "OK");
  constexpr int kTransfers = 300;
  constexpr int kIncrements = 100;
  constexpr int kReads = 300;
  std::atomic<int> failures{0};
  std::atomic<int> aborted_execs{0};
  std::mutex mu;
  std::vector<std::string> first_failures;  // a few descriptions, for the failure message
  auto fail = [&](const std::string& what, const RespValue& got) {
    failures.fetch_add(1);
    std::ostringstream os;
    os << what << ": " << got;
    std::lock_guard<std::mutex> lock(mu);
    if (first_failures.size() < 5) first_failures.push_back(os.str());
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t) {
    threads.emplace_back([&, t] {
      RespClient cl(srv_.port());
      std::mt19937 rng(t);
      for (int i = 0; i < kTransfers; ++i) {
        std::string n = std::to_string(rng() % 50 + 1);  // "-0" is no integer for Redis
        const std::string& from = (i + t) % 2 ? a : b;
        const std::string& to = (i + t) % 2 ? b : a;
        RespValue m = cl.Run({"MULTI"});
        if (!(m == "OK")) fail("MULTI", m);
        RespValue q1 = cl.Run({"INCRBY", from, "-" + n});
        RespValue q2 = cl.Run({"INCRBY", to, n});
        if (!(q1 == "QUEUED") || !(q2 == "QUEUED")) fail("INCRBY queued", q1);
        RespValue r = cl.Run({"EXEC"});
        if (!(r.type == Type::kArray && r.elems.size() == 2 && r.elems[0].type == Type::kInt &&
              r.elems[1].type == Type::kInt)) {
          fail("transfer EXEC", r);
        }
      }
    });
  }
  for (int t = 0; t < 2; ++t) {
    threads.emplace_back([&] {
      RespClient cl(srv_.port());
      for (int done = 0, attempts = 0; done < kIncrements && attempts < 100000; ++attempts) {
        RespValue w = cl.Run({"WATCH", c, d});
        if (!(w == "OK")) fail("WATCH", w);
        RespValue got = cl.Run({"MGET", c, d});
        if (got.elems.size() != 2 || got.elems[0].str != got.elems[1].str) {
          fail("watcher MGET", got);
          continue;
        }
        std::string next = std::to_string(std::stoll(got.elems[0].str) + 1);
        RespValue m = cl.Run({"MULTI"});
        RespValue q1 = cl.Run({"SET", c, next});
        RespValue q2 = cl.Run({"SET", d, next});
        if (!(m == "OK") || !(q1 == "QUEUED") || !(q2 == "QUEUED")) fail("increment queue", q1);
        RespValue r = cl.Run({"EXEC"});
        if (r.is_null()) {
          aborted_execs.fetch_add(1);
          continue;
        }
        if (!(r.type == Type::kArray && r.elems.size() == 2)) fail("increment EXEC", r);
        ++done;
      }
    });
  }
  for (int t = 0; t < 2; ++t) {
    threads.emplace_back([&] {
      RespClient cl(srv_.port());
      for (int i = 0; i < kReads; ++i) {
        RespValue r = cl.Run({"MGET", a, b, c, d});
        if (r.elems.size() != 4 || std::stoll(r.elems[0].str) + std::stoll(r.elems[1].str) != 2000 ||
            r.elems[2].str != r.elems[3].str) {
          fail("reader MGET", r);
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0) << ::testing::PrintToString(first_failures);
  RespValue end = Run({"MGET", a, b, c, d});
  ASSERT_EQ(end.elems.size(), 4u);
  EXPECT_EQ(std::stoll(end.elems[0].str) + std::stoll(end.elems[1].str), 2000);
  EXPECT_EQ(end.elems[2], std::to_string(2 * kIncrements));
  EXPECT_EQ(end.elems[3], std::to_string(2 * kIncrements));
  RecordProperty("aborted_execs", aborted_execs.load());
}

}  // namespace
}  // namespace dashkv
