// Transaction ids: each engine thread numbers its own, unique across the server and growing
// with time; an engine moves past the ids its shard's lock table has seen; threads without an
// engine share one counter.

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <set>
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

// An engine that seldom coordinates a transaction does not hand out an id older than one its
// shard has already queued or granted (the Lamport clock).
TEST(TransactionIdTest, AnEngineMovesPastTheIdsItsShardHasSeen) {
  TestServer srv{2};
  const uint64_t seen = (uint64_t{5000} << 16) | 2;  // an id of engine 1, far ahead
  std::array<uint64_t, 2> next{};
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
  EXPECT_LT(next[1], seen);  // engine 1's own shard never saw it: its clock is its own
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
