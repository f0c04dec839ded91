// Blocking commands against a real 2-shard server with several connections: wake-ups by
// pushes from other clients, FIFO order, keys on several shards, BLMOVE across shards,
// timeouts, disconnects, CLIENT UNBLOCK. Replies as redis-server 7.0 gives them.
// Synchronisation: a test waits for INFO blocked_clients to show its clients parked (bounded
// polling), never for a fixed time.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "tests/testing/test_server.h"

namespace dashkv {
namespace {

using testing::RespClient;
using testing::RespValue;
using testing::TestServer;
using ::testing::ElementsAre;

class BlockingCommandsTest : public ::testing::Test {
 protected:
  BlockingCommandsTest() : c_(server_.Connect()) {}

  // Returns a key owned by shard `sid`.
  std::string KeyOn(unsigned sid, std::string_view prefix) {
    for (int i = 0;; ++i) {
      std::string k = std::string(prefix) + std::to_string(i);
      if (server_.server().shard_set().ShardOf(k) == sid) return k;
    }
  }

  int64_t BlockedClients() {
    RespValue info = c_->Run({"INFO", "clients"});
    std::string_view text = info.str;
    size_t pos = text.find("blocked_clients:");
    if (pos == std::string_view::npos) return -1;
    return std::stoll(std::string(text.substr(pos + 16)));
  }

  // Waits (bounded) until exactly `n` clients are parked.
  void WaitBlocked(int64_t n) {
    for (int i = 0; i < 5000; ++i) {
      if (BlockedClients() == n) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    FAIL() << "blocked_clients never reached " << n << " (now " << BlockedClients() << ")";
  }

  // Sends a command on `c` without reading its reply.
  static void Send(RespClient& c, const std::vector<std::string_view>& args) {
    c.SendRaw(RespClient::Encode(args));
  }

  // Returns a new client whose home is engine `engine`: the listener deals connections to the
  // engines in turn, the fixture's first (fillers keep the turn).
  std::unique_ptr<RespClient> ConnectOn(unsigned engine) {
    for (;;) {
      auto c = server_.Connect();
      c->Run({"PING"});  // accepted before the next one connects
      if (connections_++ % 2 == engine) return c;
      fillers_.push_back(std::move(c));
    }
  }

  // Holds engine 0 with a spinning task until the returned function is called.
  std::function<void()> HoldEngine0() {
    auto hold = std::make_shared<std::atomic<int>>(0);  // 1: spinning; 2: released
    server_.pool().Post(0, [hold] {
      hold->store(1);
      while (hold->load() != 2) std::this_thread::yield();
    });
    while (hold->load() != 1) std::this_thread::yield();
    return [hold] { hold->store(2); };
  }

  // Parks `block` on a new client whose home is engine 0, holds engine 0, runs `push` from
  // `pusher` (home engine 1; the keys on shard 1: the client is served while its home cannot
  // write the reply), closes the client, then lets engine 0 go. Returns what `push` answered.
  RespValue ServeThenLeaveBeforeTheReply(RespClient& pusher,
                                         const std::vector<std::string_view>& block,
                                         const std::vector<std::string_view>& push) {
    auto leaving = ConnectOn(0);
    Send(*leaving, block);
    WaitBlocked(1);
    std::function<void()> release = HoldEngine0();
    EXPECT_EQ(pusher.Run({"PING"}), "PONG");  // the pusher's home is engine 1
    RespValue pushed = pusher.Run(push);
    leaving.reset();  // FIN, before engine 0 could write the reply
    release();
    WaitBlocked(0);
    return pushed;
  }

  // Polls (bounded) until `cmd` answers `want` on the fixture's client.
  template <typename T>
  void WaitFor(const std::vector<std::string_view>& cmd, const T& want) {
    for (int i = 0; i < 5000; ++i) {
      if (c_->Run(cmd) == want) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    ADD_FAILURE() << "never answered as expected: " << cmd[0];
  }

  TestServer server_{2};
  std::unique_ptr<RespClient> c_;
  unsigned connections_ = 1;  // made so far (c_ included)
  std::vector<std::unique_ptr<RespClient>> fillers_;
};

TEST_F(BlockingCommandsTest, TagsOfTheIntegrationTestsLandOnTwoShards) {
  // tests/integration/test_blocking.py SHARD0 / SHARD1 rely on this.
  ShardSet& ss = server_.server().shard_set();
  EXPECT_EQ(ss.ShardOf("{a}src"), 0u);
  EXPECT_EQ(ss.ShardOf("{c}src"), 1u);
}

TEST_F(BlockingCommandsTest, ElementsServedToAClientThatLeftGoBack) {
  auto pusher = ConnectOn(1);
  std::string k = KeyOn(1, "k");
  // BLMPOP took a and b from the head: they go back there, in their order.
  EXPECT_EQ(ServeThenLeaveBeforeTheReply(*pusher, {"BLMPOP", "0", "1", k, "LEFT", "COUNT", "2"},
                                         {"RPUSH", k, "a", "b", "c"}),
            3);
  WaitFor({"LLEN", k}, 3);
  EXPECT_THAT(c_->Run({"LRANGE", k, "0", "-1"}).strings(), ElementsAre("a", "b", "c"));
  c_->Run({"DEL", k});
  // BRPOP: back at the tail.
  EXPECT_EQ(ServeThenLeaveBeforeTheReply(*pusher, {"BRPOP", k, "0"}, {"RPUSH", k, "x", "y"}), 2);
  WaitFor({"LLEN", k}, 2);
  EXPECT_THAT(c_->Run({"LRANGE", k, "0", "-1"}).strings(), ElementsAre("x", "y"));
  c_->Run({"DEL", k});
  // Sorted-set members come back with their scores.
  EXPECT_EQ(ServeThenLeaveBeforeTheReply(*pusher, {"BZMPOP", "0", "1", k, "MIN", "COUNT", "2"},
                                         {"ZADD", k, "1", "a", "2", "b", "3", "c"}),
            3);
  WaitFor({"ZCARD", k}, 3);
  EXPECT_THAT(c_->Run({"ZRANGE", k, "0", "-1", "WITHSCORES"}).strings(),
              ElementsAre("a", "1", "b", "2", "c", "3"));
}

TEST_F(BlockingCommandsTest, ReturnedElementGoesToTheNextWaiter) {
  auto pusher = ConnectOn(1);
  std::string k = KeyOn(1, "k");
  auto leaving = ConnectOn(0);
  auto next = ConnectOn(1);
  Send(*leaving, {"BLPOP", k, "0"});
  WaitBlocked(1);
  Send(*next, {"BLPOP", k, "0"});  // parks behind the leaving client
  WaitBlocked(2);
  std::function<void()> release = HoldEngine0();
  EXPECT_EQ(pusher->Run({"RPUSH", k, "v"}), 1);
  leaving.reset();
  release();
  EXPECT_THAT(next->Read().strings(), ElementsAre(k, "v"));
  WaitBlocked(0);
  EXPECT_EQ(c_->Run({"EXISTS", k}), 0);
}

TEST_F(BlockingCommandsTest, CrossShardClientThatLeftTakesNothingOnItsRetry) {
  auto pusher = ConnectOn(1);
  std::string k1 = KeyOn(1, "k"), k0 = KeyOn(0, "j");
  EXPECT_EQ(ServeThenLeaveBeforeTheReply(*pusher, {"BLPOP", k1, k0, "0"}, {"RPUSH", k1, "v"}),
            1);
  WaitFor({"LLEN", k1}, 1);
  EXPECT_THAT(c_->Run({"LRANGE", k1, "0", "-1"}).strings(), ElementsAre("v"));
}

TEST_F(BlockingCommandsTest, ServesAtOnceWhenDataIsThere) {
  c_->Run({"RPUSH", "l", "a", "b"});
  EXPECT_THAT(c_->Run({"BLPOP", "l", "0"}).strings(), ElementsAre("l", "a"));
  EXPECT_THAT(c_->Run({"BRPOP", "l", "0"}).strings(), ElementsAre("l", "b"));
  EXPECT_EQ(c_->Run({"EXISTS", "l"}), 0);
  c_->Run({"SET", "s", "x"});
  EXPECT_TRUE(c_->Run({"BLPOP", "s", "0"}).is_error());
  EXPECT_EQ(c_->Run({"BLPOP", "l", "-1"}).str, "ERR timeout is negative");
  EXPECT_EQ(c_->Run({"BLPOP", "l", "x"}).str, "ERR timeout is not a float or out of range");
  EXPECT_EQ(c_->Run({"BLMOVE", "a", "b", "UP", "LEFT", "0"}).str, "ERR syntax error");
  EXPECT_EQ(c_->Run({"BLMPOP", "0", "0", "l", "LEFT"}).str,
            "ERR numkeys should be greater than 0");
  EXPECT_EQ(c_->Run({"BZMPOP", "0", "1", "z", "MIN", "COUNT", "0"}).str,
            "ERR count should be greater than 0");
}

TEST_F(BlockingCommandsTest, WakesOnPushFromAnotherClient) {
  auto blocked = server_.Connect();
  Send(*blocked, {"BLPOP", "q", "0"});
  WaitBlocked(1);
  EXPECT_EQ(c_->Run({"LPUSH", "q", "a"}), 1);
  EXPECT_THAT(blocked->Read().strings(), ElementsAre("q", "a"));
  EXPECT_EQ(c_->Run({"EXISTS", "q"}), 0);
  WaitBlocked(0);
}

TEST_F(BlockingCommandsTest, FifoAmongThreeClients) {
  std::vector<std::unique_ptr<RespClient>> clients;
  for (int i = 0; i < 3; ++i) {
    clients.push_back(server_.Connect());
    Send(*clients.back(), {"BLPOP", "q", "0"});
    WaitBlocked(i + 1);
  }
  EXPECT_EQ(c_->Run({"RPUSH", "q", "a", "b", "c"}), 3);
  EXPECT_THAT(clients[0]->Read().strings(), ElementsAre("q", "a"));
  EXPECT_THAT(clients[1]->Read().strings(), ElementsAre("q", "b"));
  EXPECT_THAT(clients[2]->Read().strings(), ElementsAre("q", "c"));
}

TEST_F(BlockingCommandsTest, MultiKeyAcrossShards) {
  std::string k0 = KeyOn(0, "a"), k1 = KeyOn(1, "b");
  // Data already there: the first non-empty key in argument order.
  c_->Run({"RPUSH", k0, "x0"});
  c_->Run({"RPUSH", k1, "x1"});
  EXPECT_THAT(c_->Run({"BLPOP", k1, k0, "0"}).strings(), ElementsAre(k1, "x1"));
  EXPECT_THAT(c_->Run({"BLPOP", k1, k0, "0"}).strings(), ElementsAre(k0, "x0"));
  // Parked on both shards: a push on either wakes it, exactly once.
  for (const std::string& k : {k0, k1}) {
    auto blocked = server_.Connect();
    Send(*blocked, {"BRPOP", k0, k1, "0"});
    WaitBlocked(1);
    EXPECT_EQ(c_->Run({"RPUSH", k, "v"}), 1);
    EXPECT_THAT(blocked->Read().strings(), ElementsAre(k, "v"));
    WaitBlocked(0);
    EXPECT_EQ(c_->Run({"EXISTS", k0, k1}), 0);
  }
}

TEST_F(BlockingCommandsTest, CrossShardClientsKeepFifoOrder) {
  std::string k0 = KeyOn(0, "a"), k1 = KeyOn(1, "b");
  auto first = server_.Connect(), second = server_.Connect();
  Send(*first, {"BLPOP", k0, k1, "0"});
  WaitBlocked(1);
  Send(*second, {"BLPOP", k0, "0"});
  WaitBlocked(2);
  EXPECT_EQ(c_->Run({"RPUSH", k0, "a", "b"}), 2);
  EXPECT_THAT(first->Read().strings(), ElementsAre(k0, "a"));
  EXPECT_THAT(second->Read().strings(), ElementsAre(k0, "b"));
}

// Returns the keys of an XREAD reply and, per key, the ids of its entries ("key:id,id").
std::vector<std::string> XReadSummary(const RespValue& reply) {
  std::vector<std::string> out;
  for (const RespValue& stream : reply.elems) {
    std::string line = stream.elems[0].str + ":";
    for (const RespValue& e : stream.elems[1].elems) line += e.elems[0].str + ",";
    out.push_back(line);
  }
  return out;
}

TEST_F(BlockingCommandsTest, StreamReadersAreAllServedWithoutConsuming) {
  std::string k0 = KeyOn(0, "a"), k1 = KeyOn(1, "b");
  auto ahead = server_.Connect(), one_shard = server_.Connect(), cross = server_.Connect();
  // First in line: a reader whose id is ahead of what comes; it must not hold back the others.
  Send(*ahead, {"XREAD", "BLOCK", "0", "STREAMS", k1, "9-0"});
  WaitBlocked(1);
  Send(*one_shard, {"XREAD", "BLOCK", "0", "STREAMS", k1, "$"});
  WaitBlocked(2);
  Send(*cross, {"XREAD", "COUNT", "1", "BLOCK", "0", "STREAMS", k0, k1, "$", "$"});
  WaitBlocked(3);
  c_->Run({"MULTI"});
  c_->Run({"XADD", k1, "1-0", "f", "v"});
  c_->Run({"XADD", k1, "2-0", "f", "v"});
  c_->Run({"EXEC"});
  EXPECT_THAT(XReadSummary(one_shard->Read()), ElementsAre(k1 + ":1-0,2-0,"));
  EXPECT_THAT(XReadSummary(cross->Read()), ElementsAre(k1 + ":1-0,"));  // COUNT 1
  WaitBlocked(1);
  EXPECT_EQ(c_->Run({"XLEN", k1}), 2);  // nothing taken
  EXPECT_EQ(c_->Run({"XADD", k1, "10-0", "f", "v"}), "10-0");
  EXPECT_THAT(XReadSummary(ahead->Read()), ElementsAre(k1 + ":10-0,"));
  WaitBlocked(0);
}

TEST_F(BlockingCommandsTest, BLMoveAcrossShards) {
  std::string src = KeyOn(0, "src"), dst = KeyOn(1, "dst");
  auto blocked = server_.Connect();
  Send(*blocked, {"BLMOVE", src, dst, "LEFT", "RIGHT", "0"});
  WaitBlocked(1);
  c_->Run({"RPUSH", src, "e1", "e2"});
  EXPECT_EQ(blocked->Read(), "e1");
  EXPECT_THAT(c_->Run({"LRANGE", dst, "0", "-1"}).strings(), ElementsAre("e1"));
  EXPECT_THAT(c_->Run({"LRANGE", src, "0", "-1"}).strings(), ElementsAre("e2"));
  // Same shard, through BRPOPLPUSH; the destination wakes a client blocked on it.
  std::string src0 = KeyOn(0, "s"), dst0 = KeyOn(0, "d");
  auto on_dst = server_.Connect();
  Send(*blocked, {"BRPOPLPUSH", src0, dst0, "0"});
  WaitBlocked(1);
  Send(*on_dst, {"BLPOP", dst0, "0"});
  WaitBlocked(2);
  c_->Run({"RPUSH", src0, "z"});
  EXPECT_EQ(blocked->Read(), "z");
  EXPECT_THAT(on_dst->Read().strings(), ElementsAre(dst0, "z"));
  // A wrong-typed destination: WRONGTYPE, the element stays.
  c_->Run({"SET", dst, "str"});
  EXPECT_TRUE(c_->Run({"BLMOVE", src, dst, "LEFT", "LEFT", "0"}).is_error());
  EXPECT_THAT(c_->Run({"LRANGE", src, "0", "-1"}).strings(), ElementsAre("e2"));
}

TEST_F(BlockingCommandsTest, Timeouts) {
  std::string k0 = KeyOn(0, "a"), k1 = KeyOn(1, "b");
  EXPECT_EQ(c_->Run({"BLPOP", k0, "0.01"}).type, RespValue::Type::kNull);
  EXPECT_EQ(c_->Run({"BRPOP", k0, k1, "0.01"}).type, RespValue::Type::kNull);
  EXPECT_EQ(c_->Run({"BLMOVE", k0, k1, "LEFT", "LEFT", "0.01"}).type, RespValue::Type::kNull);
  EXPECT_EQ(c_->Run({"BZPOPMIN", k0, "0.01"}).type, RespValue::Type::kNull);
  EXPECT_EQ(c_->Run({"BZMPOP", "0.01", "2", k0, k1, "MAX"}).type, RespValue::Type::kNull);
  EXPECT_EQ(c_->Run({"BLMPOP", "0.01", "1", k0, "LEFT"}).type, RespValue::Type::kNull);
  c_->Run({"HELLO", "3"});
  EXPECT_EQ(c_->Run({"BLPOP", k0, "0.01"}).type, RespValue::Type::kNull);
  EXPECT_EQ(BlockedClients(), 0);
  // Nothing stays registered: a later push keeps its element.
  c_->Run({"RPUSH", k0, "v"});
  EXPECT_EQ(c_->Run({"LLEN", k0}), 1);
}

TEST_F(BlockingCommandsTest, DisconnectWhileBlockedLeavesNoTrace) {
  std::string k0 = KeyOn(0, "a"), k1 = KeyOn(1, "b");
  {
    auto one = server_.Connect(), both = server_.Connect();
    Send(*one, {"BLPOP", k0, "0"});
    Send(*both, {"BLPOP", k1, k0, "0"});
    WaitBlocked(2);
  }  // both connections close
  WaitBlocked(0);
  EXPECT_EQ(c_->Run({"RPUSH", k0, "a"}), 1);
  EXPECT_EQ(c_->Run({"RPUSH", k1, "b"}), 1);
  EXPECT_THAT(c_->Run({"LRANGE", k0, "0", "-1"}).strings(), ElementsAre("a"));
  EXPECT_THAT(c_->Run({"LRANGE", k1, "0", "-1"}).strings(), ElementsAre("b"));
}

TEST_F(BlockingCommandsTest, ClientUnblock) {
  auto blocked = server_.Connect();
  std::string id = std::to_string(blocked->Run({"CLIENT", "ID"}).num);
  EXPECT_EQ(c_->Run({"CLIENT", "UNBLOCK", id}), 0);  // not blocked
  Send(*blocked, {"BLPOP", "q", "0"});
  WaitBlocked(1);
  EXPECT_THAT(c_->Run({"CLIENT", "LIST", "ID", id}).str, ::testing::HasSubstr("flags=b"));
  EXPECT_EQ(c_->Run({"CLIENT", "UNBLOCK", id}), 1);
  EXPECT_EQ(blocked->Read().type, RespValue::Type::kNull);
  std::string k1 = KeyOn(1, "b");
  Send(*blocked, {"BZPOPMAX", "q", k1, "0"});
  WaitBlocked(1);
  EXPECT_EQ(c_->Run({"CLIENT", "UNBLOCK", id, "ERROR"}), 1);
  EXPECT_EQ(blocked->Read().str, "UNBLOCKED client unblocked via CLIENT UNBLOCK");
  WaitBlocked(0);
  EXPECT_EQ(c_->Run({"CLIENT", "UNBLOCK", id, "NOW"}).str,
            "ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR");
  EXPECT_EQ(blocked->Run({"PING"}), "PONG");  // still usable
}

TEST_F(BlockingCommandsTest, SortedSetsAndCounts) {
  auto blocked = server_.Connect();
  blocked->Run({"HELLO", "3"});
  Send(*blocked, {"BZPOPMIN", "z", "0"});
  WaitBlocked(1);
  c_->Run({"ZADD", "z", "2", "b", "1.5", "a"});
  RespValue r = blocked->Read();
  ASSERT_EQ(r.elems.size(), 3u);
  EXPECT_EQ(r.elems[0], "z");
  EXPECT_EQ(r.elems[1], "a");
  EXPECT_EQ(r.elems[2].type, RespValue::Type::kDouble);
  EXPECT_EQ(r.elems[2].str, "1.5");
  // BLMPOP COUNT pops up to count from the key that became ready.
  Send(*blocked, {"BLMPOP", "0", "2", "x", "y", "RIGHT", "COUNT", "2"});
  WaitBlocked(1);
  c_->Run({"RPUSH", "y", "1", "2", "3"});
  r = blocked->Read();
  ASSERT_EQ(r.elems.size(), 2u);
  EXPECT_EQ(r.elems[0], "y");
  EXPECT_THAT(r.elems[1].strings(), ElementsAre("3", "2"));
  // A client waiting for a zset is not served by a list, and vice versa.
  Send(*blocked, {"BZPOPMAX", "w", "0"});
  WaitBlocked(1);
  c_->Run({"RPUSH", "w", "l"});
  c_->Run({"DEL", "w"});
  c_->Run({"ZADD", "w", "7", "m"});
  r = blocked->Read();
  ASSERT_EQ(r.elems.size(), 3u);
  EXPECT_EQ(r.elems[1], "m");
}

TEST_F(BlockingCommandsTest, WokenByMultiKeyWrites) {
  std::string src = KeyOn(0, "s"), dst = KeyOn(1, "d");
  auto blocked = server_.Connect();
  Send(*blocked, {"BLPOP", dst, "0"});
  WaitBlocked(1);
  c_->Run({"RPUSH", src, "v"});
  EXPECT_EQ(c_->Run({"LMOVE", src, dst, "LEFT", "LEFT"}), "v");  // a transaction
  EXPECT_THAT(blocked->Read().strings(), ElementsAre(dst, "v"));
  Send(*blocked, {"BLPOP", dst, "0"});
  WaitBlocked(1);
  c_->Run({"RPUSH", src, "w"});
  EXPECT_EQ(c_->Run({"RENAME", src, dst}).str, "OK");
  EXPECT_THAT(blocked->Read().strings(), ElementsAre(dst, "w"));
}

TEST_F(BlockingCommandsTest, PipelinedCommandsAfterABlockedOne) {
  auto blocked = server_.Connect();
  blocked->SendRaw(RespClient::Encode({"BLPOP", "q", "0"}) + RespClient::Encode({"PING"}));
  WaitBlocked(1);
  c_->Run({"RPUSH", "q", "a"});
  EXPECT_THAT(blocked->Read().strings(), ElementsAre("q", "a"));
  EXPECT_EQ(blocked->Read(), "PONG");
  // Commands sent while the client is parked are read meanwhile and run after it.
  Send(*blocked, {"BLPOP", "q", "0"});
  WaitBlocked(1);
  blocked->SendRaw(RespClient::Encode({"ECHO", "later"}) + RespClient::Encode({"LLEN", "q"}));
  EXPECT_EQ(BlockedClients(), 1);
  c_->Run({"RPUSH", "q", "b", "c"});
  EXPECT_THAT(blocked->Read().strings(), ElementsAre("q", "b"));
  EXPECT_EQ(blocked->Read(), "later");
  EXPECT_EQ(blocked->Read(), 1);
}

TEST_F(BlockingCommandsTest, InsideMultiNeverBlocks) {
  if (c_->Run({"MULTI"}).is_error()) GTEST_SKIP() << "no MULTI yet";
  c_->Run({"BLPOP", "q", "0"});
  c_->Run({"BLMOVE", "q", "r", "LEFT", "LEFT", "0"});
  RespValue r = c_->Run({"EXEC"});
  ASSERT_EQ(r.elems.size(), 2u);
  EXPECT_EQ(r.elems[0].type, RespValue::Type::kNull);
  EXPECT_EQ(r.elems[1].type, RespValue::Type::kNull);
}

TEST_F(BlockingCommandsTest, ServerStopsWithClientsBlocked) {
  std::string k0 = KeyOn(0, "a"), k1 = KeyOn(1, "b");
  auto one = server_.Connect(), both = server_.Connect();
  Send(*one, {"BLPOP", k0, "0"});
  Send(*both, {"BLMOVE", k0, k1, "LEFT", "LEFT", "0"});
  WaitBlocked(2);
  // The fixture's server stops with both parked: they get their timeout reply, nothing leaks.
}

}  // namespace
}  // namespace dashkv
