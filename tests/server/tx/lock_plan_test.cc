// The lock plan read from the command table: which keys a command locks, in which mode and
// database, and when it locks whole shards; and the check a pipelined command makes against a
// shard's lock table.

#include "server/tx/lock_plan.h"

#include <gtest/gtest.h>

#include <string_view>
#include <vector>

#include "server/command_registry.h"
#include "tests/testing/test_server.h"

namespace dashkv {
namespace {

using testing::TestServer;

class LockPlanTest : public ::testing::Test {
 protected:
  LockPlanTest() { RegisterAllCommands(&registry_); }

  const CommandSpec& Spec(std::vector<std::string_view>& args) {
    const CommandSpec* spec = registry_.Lookup(CmdArgs(args.data(), args.size()));
    EXPECT_NE(spec, nullptr) << args[0];
    return *spec;
  }

  // Adds the locks of `args` run in database `db` to `locks`.
  void Plan(KeyLocks& locks, std::vector<std::string_view> args, unsigned db = 0) {
    AddCommandLocks(locks, Spec(args), CmdArgs(args.data(), args.size()), db);
  }

  CommandRegistry registry_;
  TestServer srv_{2};
};

TEST_F(LockPlanTest, AWriteLocksItsKeysExclusive) {
  KeyLocks locks(srv_.server().shard_set());
  Plan(locks, {"MSET", "a", "1", "b", "2"});
  EXPECT_TRUE(locks.Covers(0, "a", LockMode::kExclusive));
  EXPECT_TRUE(locks.Covers(0, "b", LockMode::kExclusive));
  EXPECT_FALSE(locks.Covers(0, "1", LockMode::kShared));  // values are not keys
  EXPECT_FALSE(locks.Covers(1, "a", LockMode::kShared));  // another database
}

TEST_F(LockPlanTest, AReadLocksItsKeysShared) {
  KeyLocks locks(srv_.server().shard_set());
  Plan(locks, {"MGET", "a", "b"}, 3);
  EXPECT_TRUE(locks.Covers(3, "a", LockMode::kShared));
  EXPECT_FALSE(locks.Covers(3, "a", LockMode::kExclusive));
  EXPECT_TRUE(locks.Covers(3, "b", LockMode::kShared));
}

TEST_F(LockPlanTest, PfcountLocksExclusiveThoughReadOnly) {
  // PFCOUNT rewrites the cached cardinality of its key: a reader holding the key shared must
  // not see its bytes change.
  KeyLocks locks(srv_.server().shard_set());
  Plan(locks, {"PFCOUNT", "a", "b"});
  EXPECT_TRUE(locks.Covers(0, "a", LockMode::kExclusive));
  EXPECT_TRUE(locks.Covers(0, "b", LockMode::kExclusive));
}

TEST_F(LockPlanTest, AKeyWrittenInAnotherDatabaseIsLockedThere) {
  KeyLocks locks(srv_.server().shard_set());
  Plan(locks, {"MOVE", "k", "5"}, 2);
  EXPECT_TRUE(locks.Covers(2, "k", LockMode::kExclusive));
  EXPECT_TRUE(locks.Covers(5, "k", LockMode::kExclusive));
}

TEST_F(LockPlanTest, GlobalCommandsLockEveryShardWhole) {
  KeyLocks flush(srv_.server().shard_set());
  Plan(flush, {"FLUSHALL"});
  KeyLocks size(srv_.server().shard_set());
  Plan(size, {"DBSIZE"});
  ASSERT_EQ(flush.shards().size(), 2u);
  ASSERT_EQ(size.shards().size(), 2u);
  for (unsigned sid = 0; sid < 2; ++sid) {
    EXPECT_TRUE(flush.request(sid).whole_shard);
    EXPECT_EQ(flush.request(sid).whole_mode, LockMode::kExclusive);
    EXPECT_TRUE(size.request(sid).whole_shard);
    EXPECT_EQ(size.request(sid).whole_mode, LockMode::kShared);
  }
}

TEST_F(LockPlanTest, WatchLocksNothing) {
  KeyLocks locks(srv_.server().shard_set());
  Plan(locks, {"WATCH", "a", "b"});
  EXPECT_TRUE(locks.empty());
}

TEST_F(LockPlanTest, APipelinedCommandIsBlockedOnlyByConflictingLocks) {
  std::vector<std::string_view> get = {"GET", "k"};
  std::vector<std::string_view> set = {"SET", "k", "v"};
  std::vector<std::string_view> other = {"GET", "other"};
  IntentLockTable table;
  LockRequest shared;
  shared.Add(LockHashOf(0, "k"), LockMode::kShared);
  ASSERT_TRUE(table.TryAcquire(shared));
  EXPECT_FALSE(LocksBlock(table, Spec(get), CmdArgs(get.data(), get.size()), 0));
  EXPECT_TRUE(LocksBlock(table, Spec(set), CmdArgs(set.data(), set.size()), 0));
  EXPECT_FALSE(LocksBlock(table, Spec(set), CmdArgs(set.data(), set.size()), 1));
  EXPECT_FALSE(LocksBlock(table, Spec(other), CmdArgs(other.data(), other.size()), 0));

  LockRequest req = ShardLockRequest(Spec(set), CmdArgs(set.data(), set.size()), 0);
  ASSERT_EQ(req.keys.size(), 1u);
  EXPECT_EQ(req.keys[0].first, LockHashOf(0, "k"));
  EXPECT_EQ(req.keys[0].second, LockMode::kExclusive);
  table.Release(shared);
}

}  // namespace
}  // namespace dashkv
