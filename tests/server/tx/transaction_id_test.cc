// Transaction ids: each engine thread numbers its own, unique across the server and growing
// with time; an engine moves past the ids its shard's lock table has seen and follows the
// clock; threads without an engine share one counter.

#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <set>
#include <thread>
#include <vector>

#include "server/tx/transaction.h"
#include "tests/testing/test_server.h"

namespace dashkv {
namespace {

using testing::TestServer;

constexpr uint64_t kEngineMask = (uint64_t{1} << 16) - 1;

TEST(TransactionIdTest, EachEngineNumbersUniqueGrowingIds) {
  TestServer srv{2};
  std::array<std::vector<uint64_t>, 2> ids;
  for (int round = 0; round < 3; ++round) {
    srv.server().shard_set().RunOnAllBlocking([&](Shard& shard) {
      for (int i = 0; i < 100; ++i) ids[shard.index()].push_back(NextTxId());
    });
  }
  std::set<uint64_t> all;
  for (unsigned e = 0; e < ids.size(); ++e) {
    ASSERT_EQ(ids[e].size(), 300u);
    for (size_t i = 0; i < ids[e].size(); ++i) {
      EXPECT_EQ(ids[e][i] & kEngineMask, e + 1) << "engine " << e;
      if (i > 0) {
        EXPECT_GT(ids[e][i], ids[e][i - 1]) << "engine " << e;
      }
      all.insert(ids[e][i]);
    }
  }
  EXPECT_EQ(all.size(), 600u);  // no id given twice, on one engine or across them
}

// An engine does not hand out an id older than one its shard has already queued or granted,
// even one far ahead of the time (the Lamport step).
TEST(TransactionIdTest, AnEngineMovesPastTheIdsItsShardHasSeen) {
  TestServer srv{2};
  std::array<uint64_t, 2> next{};
  srv.server().shard_set().RunOnAllBlocking([&](Shard& shard) {
    if (shard.index() == 1) next[1] = NextTxId();
  });
  // An id of engine 1 a thousand seconds ahead of its clock.
  const uint64_t seen = (((next[1] >> 16) + 1'000'000'000) << 16) | 2;
  srv.server().shard_set().RunOnAllBlocking([&](Shard& shard) {
    if (shard.index() != 0) return;
    LockRequest req;
    req.Add(LockHashOf(0, "k"), LockMode::kExclusive);
    req.txid = seen;
    ASSERT_TRUE(shard.locks().TryAcquire(req));
    shard.locks().Release(req);
    next[0] = NextTxId();
  });
  srv.server().shard_set().RunOnAllBlocking([&](Shard& shard) {
    if (shard.index() == 1) next[1] = NextTxId();
  });
  EXPECT_GT(next[0], seen);
  EXPECT_EQ(next[0] & kEngineMask, 1u);
  EXPECT_LT(next[1], seen);  // engine 1's own shard never saw it
}

// An engine that was idle while another handed out ids starts past them: the clock follows
// the time, so a burst of one engine's ids runs ahead of it by at most one microsecond each.
TEST(TransactionIdTest, AnIdleEngineStartsPastTheIdsOfTheBusyOnes) {
  TestServer srv{2};
  uint64_t busy_last = 0, idle_first = 0;
  srv.server().shard_set().RunOnAllBlocking([&](Shard& shard) {
    if (shard.index() != 0) return;
    for (int i = 0; i < 1000; ++i) busy_last = NextTxId();
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // > 1000 ids' lead of 1 us
  srv.server().shard_set().RunOnAllBlocking([&](Shard& shard) {
    if (shard.index() == 1) idle_first = NextTxId();
  });
  EXPECT_GT(idle_first, busy_last);
}

TEST(TransactionIdTest, ThreadsWithoutAnEngineShareOneCounter) {
  const uint64_t a = NextTxId(), b = NextTxId();
  EXPECT_NE(a, 0u);
  EXPECT_EQ(a & kEngineMask, 0u);
  EXPECT_EQ(b & kEngineMask, 0u);
  EXPECT_GT(b, a);
}

}  // namespace
}  // namespace dashkv
