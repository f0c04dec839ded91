// ShardSet key routing: the hash tag rule of HashTagOf (Redis Cluster's), the spread of
// ShardOf over 2 and 4 shards, and its stability (same key, same shard, in every instance);
// the chunk reserve the shards' tables grow from; the no_touch() twin's and the views' tasks.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <future>
#include <memory>
#include <string>
#include <vector>

#include "core/access_record.h"
#include "core/base/clock.h"
#include "core/hash.h"
#include "core/memory.h"
#include "server/storage/shard_set.h"
#include "server/tx/transaction.h"
#include "tests/testing/test_server.h"

namespace dashkv {
namespace {

using testing::TestServer;

TEST(HashTagOfTest, Rules) {
  EXPECT_EQ(HashTagOf("foo"), "foo");
  EXPECT_EQ(HashTagOf(""), "");
  EXPECT_EQ(HashTagOf("{user}:a"), "user");
  EXPECT_EQ(HashTagOf("{user}:b"), "user");
  EXPECT_EQ(HashTagOf("a{b}c"), "b");
  EXPECT_EQ(HashTagOf("user{1000}.following"), "1000");
  // Only the first '{' and the first '}' after it count.
  EXPECT_EQ(HashTagOf("{a}{b}"), "a");
  EXPECT_EQ(HashTagOf("{{a}}"), "{a");
  EXPECT_EQ(HashTagOf("a}b{c}"), "c");
  EXPECT_EQ(HashTagOf("x{y}z}"), "y");
  // An empty tag, or no closing brace: the whole key.
  EXPECT_EQ(HashTagOf("{}"), "{}");
  EXPECT_EQ(HashTagOf("{}{a}"), "{}{a}");
  EXPECT_EQ(HashTagOf("foo{}{bar}"), "foo{}{bar}");
  EXPECT_EQ(HashTagOf("{a"), "{a");
  EXPECT_EQ(HashTagOf("}{"), "}{");
  EXPECT_EQ(HashTagOf("a{"), "a{");
  // Binary bytes inside the tag are kept.
  std::string bin("{\0\r\n}x", 6);
  EXPECT_EQ(HashTagOf(bin), std::string_view("\0\r\n", 3));
}

// Returns how many of `n` keys prefix<i> land on each shard of `ss`.
std::vector<int> Spread(const ShardSet& ss, const std::string& prefix, const std::string& suffix,
                        int n) {
  std::vector<int> counts(ss.size(), 0);
  for (int i = 0; i < n; ++i) ++counts[ss.ShardOf(prefix + std::to_string(i) + suffix)];
  return counts;
}

TEST(ShardOfTest, UniformOverTwoAndFourShards) {
  constexpr int kN = 100000;
  for (unsigned shards : {2u, 4u}) {
    TestServer srv(shards);
    const ShardSet& ss = srv.server().shard_set();
    ASSERT_EQ(ss.size(), shards);
    for (const auto& [prefix, suffix] : std::vector<std::pair<std::string, std::string>>{
             {"key:", ""}, {"", ""}, {"user:", ":profile"}, {"{t", "}x"}}) {
      std::vector<int> counts = Spread(ss, prefix, suffix, kN);
      for (unsigned s = 0; s < shards; ++s) {
        double share = static_cast<double>(counts[s]) / kN;
        // Expected 1/shards; 2% of slack is > 10 standard deviations at this sample size.
        EXPECT_NEAR(share, 1.0 / shards, 0.02) << shards << " shards, prefix " << prefix
                                               << ", shard " << s;
      }
    }
  }
}

TEST(ShardOfTest, StableAndTagDriven) {
  TestServer a(4);
  TestServer b(4);
  const ShardSet& sa = a.server().shard_set();
  const ShardSet& sb = b.server().shard_set();
  std::vector<unsigned> first;
  for (int i = 0; i < 1000; ++i) {
    std::string k = "k" + std::to_string(i);
    unsigned s = sa.ShardOf(k);
    EXPECT_EQ(sa.ShardOf(k), s);  // same key, same shard
    EXPECT_EQ(sb.ShardOf(k), s);  // in another instance too (a fixed hash, no random seed)
    EXPECT_LT(s, 4u);
    // A tagged key goes where its tag alone goes.
    EXPECT_EQ(sa.ShardOf("{" + k + "}:suffix"), s);
    EXPECT_EQ(sa.ShardOf("prefix:{" + k + "}"), s);
  }
  // Keys that only share a tag-less prefix are spread.
  std::vector<int> counts = Spread(sa, "{}", "", 4000);
  for (int c : counts) EXPECT_GT(c, 800);
}

TEST(ShardOfTest, KeyHashGivesTheSameShard) {
  TestServer srv(4);
  const ShardSet& ss = srv.server().shard_set();
  for (int i = 0; i < 2000; ++i) {
    const std::string n = std::to_string(i);
    for (const std::string& k : {"k" + n, "{" + n + "}:x", "a{b" + n + "}c", "{}" + n, "{" + n}) {
      EXPECT_EQ(ss.ShardOf(k, HashBytes(k)), ss.ShardOf(k)) << k;
    }
  }
}

// The shard and the table take their bits from the same hash (a tag-less key's HashBytes):
// the keys of one shard still spread over the table's directory (top bits) and fingerprints
// (low bits), or each shard would use part of its table only.
TEST(ShardOfTest, KeysOfOneShardSpreadOverTheirTable) {
  constexpr int kN = 80000;
  TestServer srv(2);
  const ShardSet& ss = srv.server().shard_set();
  std::vector<int> top(8, 0), low(8, 0);
  int on_zero = 0;
  for (int i = 0; i < kN; ++i) {
    const std::string k = "key:" + std::to_string(i);
    if (ss.ShardOf(k) != 0) continue;
    const uint64_t h = HashBytes(k);
    ++top[(h >> 1) >> 60];  // the directory index at global depth 3
    ++low[h & 7];
    ++on_zero;
  }
  for (int b = 0; b < 8; ++b) {
    // Expected 1/8 each; 2% of slack is > 8 standard deviations at this sample size.
    EXPECT_NEAR(static_cast<double>(top[b]) / on_zero, 0.125, 0.02) << "top " << b;
    EXPECT_NEAR(static_cast<double>(low[b]) / on_zero, 0.125, 0.02) << "low " << b;
  }
}

TEST(ShardOfTest, SingleShardOwnsEverything) {
  TestServer srv(1);
  const ShardSet& ss = srv.server().shard_set();
  for (int i = 0; i < 100; ++i) EXPECT_EQ(ss.ShardOf("k" + std::to_string(i)), 0u);
}

// Waits until every task posted to the background engine so far has run (it runs them in order).
void DrainBackground(TestServer& srv) {
  std::promise<void> done;
  srv.pool().background().Post([&] { done.set_value(); });
  done.get_future().get();
}

// A shard whose table grows past the large-chunk stage asks for chunks; the background engine
// refills the shard's reserve, and the next chunks the table needs come from it.
TEST(ShardSetTest, GrowingTablesTakeChunksTheBackgroundEngineFaultedIn) {
  TestServer srv(1);
  auto c = srv.Connect();
  const ChunkReserve* reserve = srv.server().shard_set().shard(0).chunk_reserve();
  ASSERT_NE(reserve, nullptr);
  EXPECT_EQ(reserve->hits() + reserve->misses(), 0u) << "a small server holds no chunk";
  ASSERT_EQ(c->Run({"DEBUG", "POPULATE", "300000", "a"}), "OK");
  EXPECT_GE(reserve->misses(), 1u) << "the first take finds the reserve cold";
  DrainBackground(srv);
  ASSERT_GT(reserve->ready(), 0u);
  const uint64_t hits = reserve->hits();
  ASSERT_EQ(c->Run({"DEBUG", "POPULATE", "300000", "b"}), "OK");
  EXPECT_GT(reserve->hits(), hits);
  EXPECT_EQ(c->Run({"DBSIZE"}), 600000);
  ASSERT_EQ(c->Run({"FLUSHALL"}), "OK");
  EXPECT_EQ(c->Run({"DBSIZE"}), 0);
}

// Once the tables stop growing, each idle period gives one ready chunk back, down to one, and
// the memory leaves used_memory. The server's timer calls DecayChunkReserve every
// ChunkReserve::kDecayPeriodMs; the test calls it on the shard's thread itself (a timer call in
// between changes nothing the test checks).
TEST(ShardSetTest, IdleChunkReserveShrinksToOneChunk) {
  TestServer srv(1);
  auto c = srv.Connect();
  const ChunkReserve* reserve = srv.server().shard_set().shard(0).chunk_reserve();
  ASSERT_NE(reserve, nullptr);
  ASSERT_EQ(c->Run({"DEBUG", "POPULATE", "300000", "a"}), "OK");
  DrainBackground(srv);
  const unsigned ready = reserve->ready();
  ASSERT_GE(ready, 2u) << "the first take missed, so the target grew past one";
  ASSERT_EQ(c->Run({"FLUSHALL"}), "OK");
  const int64_t used = UsedMemory();
  auto decay = [&] {
    srv.server().shard_set().RunOnAllBlocking([](Shard& s) { (void)s.DecayChunkReserve(); });
  };
  for (unsigned i = 0; i <= ChunkReserve::kCapacity; ++i) decay();
  EXPECT_EQ(reserve->ready(), 1u);
  EXPECT_EQ(reserve->target(), ChunkReserve::kInitialTarget);
  EXPECT_LE(UsedMemory(), used - int64_t((ready - 1) * ChunkReserve::kChunkBytes));
  decay();
  EXPECT_EQ(reserve->ready(), 1u) << "one chunk stays for the next growth";
}

// The no_touch() twin runs its tasks on the same shards with the lookups leaving the access
// records as they are (CLIENT NO-TOUCH across shards); the mode ends with the task.
TEST(ShardSetTest, NoTouchTwinsTasksLeaveAccessRecords) {
  TestServer srv(2);
  auto c = srv.Connect();
  ShardSet& ss = srv.server().shard_set();
  ShardSet& twin = ss.no_touch();
  EXPECT_NE(&twin, &ss);
  EXPECT_EQ(&twin.no_touch(), &twin);
  EXPECT_EQ(twin.size(), ss.size());
  EXPECT_EQ(twin.ShardOf("k"), ss.ShardOf("k"));
  ASSERT_EQ(c->Run({"SET", "k", "v"}), "OK");
  const unsigned sid = ss.ShardOf("k");
  const int64_t now = NowMs();
  const uint32_t old = RestoredRecord(AccessMode::kLru, now, 1000, -1);
  // Gives `k` an old record, reads it through `set` (in database 0 and in a database first
  // used by the task) and returns its record afterwards.
  auto read_through = [&](ShardSet& set) {
    uint32_t record = 0;
    set.RunOnAllBlocking([&](Shard& s) {
      if (s.index() != sid) return;
      DbSlice& db = s.db(0);
      db.SetRecord(db.FindReadOnlyQuiet("k", now), old);
      record = db.Record(db.FindReadOnly("k", now), now);
    });
    return record;
  };
  EXPECT_EQ(read_through(twin), old);
  EXPECT_NE(read_through(ss), old) << "the mode ended with the twin's task";
  // A database created while a twin's task runs starts in the mode too.
  uint32_t in_new_db = 0;
  twin.RunOnAllBlocking([&](Shard& s) {
    if (s.index() != sid) return;
    DbSlice& db = s.db(5);
    ASSERT_TRUE(db.FindOrAdd("k", now).ok());
    db.SetRecord(db.FindReadOnlyQuiet("k", now), old);
    in_new_db = db.Record(db.FindReadOnly("k", now), now);
  });
  EXPECT_EQ(in_new_db, old);
}

// A view's tasks carry its mode's change origin to the shard's listeners for as long as they
// run (their FinishChanges included), the outer origin back after; a task inside another
// (inline, on its own shard) puts back the outer task's; the plain set's tasks carry none.
TEST(ShardSetTest, ViewTasksCarryTheirChangeOrigin) {
  TestServer srv(2);
  ShardSet& ss = srv.server().shard_set();
  std::shared_ptr<ShardSet> view = ss.View(ShardTaskMode(/*no_touch=*/false, 42));
  EXPECT_EQ(view->size(), ss.size());
  EXPECT_EQ(view->mode().origin(), 42u);
  EXPECT_FALSE(view->mode().no_touch());
  std::vector<uint64_t> seen(ss.size(), 7), after(ss.size(), 7), plain(ss.size(), 7);
  view->RunOnAllBlocking([&](Shard& s) { seen[s.index()] = s.changes().origin(); });
  ss.RunOnAllBlocking([&](Shard& s) {
    after[s.index()] = s.changes().origin();
    s.changes().set_origin(5);  // an outer command's
    view->Post(s.index(), [](Shard&) {});  // inline: its own shard
    plain[s.index()] = s.changes().origin();
    s.changes().set_origin(0);
  });
  EXPECT_THAT(seen, ::testing::Each(42u));
  EXPECT_THAT(after, ::testing::Each(0u));
  EXPECT_THAT(plain, ::testing::Each(5u));
  view->set_mode(ShardTaskMode(/*no_touch=*/true, 9));
  EXPECT_TRUE(view->mode().no_touch());
  view->RunOnAllBlocking([&](Shard& s) { seen[s.index()] = s.changes().origin(); });
  EXPECT_THAT(seen, ::testing::Each(9u));
}

// A command's task that releases its locks may run there and then the commands of other
// clients its release lets go: they run without the task's change origin, which is back after.
TEST(ShardSetTest, LockWaitersGrantedInAViewsTaskRunWithoutItsOrigin) {
  TestServer srv(2);
  ShardSet& ss = srv.server().shard_set();
  std::shared_ptr<ShardSet> view = ss.View(ShardTaskMode(/*no_touch=*/false, 42));
  KeyLocks locks(*view);
  locks.Add(0, "k", LockMode::kExclusive);
  const unsigned sid = ss.ShardOf("k");
  uint64_t in_waiter = 7, after = 7;
  bool granted = false;
  view->RunOnAllBlocking([&](Shard& s) {
    if (s.index() != sid) return;
    ASSERT_TRUE(locks.TryAcquireOn(s));
    LockRequest other;
    other.Add(LockHashOf(0, "k"), LockMode::kExclusive);
    s.locks().Enqueue(other, [&] {
      granted = true;
      in_waiter = s.changes().origin();
    }, /*transient=*/true);
    ASSERT_FALSE(granted) << "the key is held";
    locks.ReleaseOn(s);
    after = s.changes().origin();
  });
  EXPECT_TRUE(granted);
  EXPECT_EQ(in_waiter, 0u);
  EXPECT_EQ(after, 42u);
}

}  // namespace
}  // namespace dashkv
