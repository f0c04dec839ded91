// CommandRegistry tests: subcommand tables (naming, lookup, inherited handlers, ids) and the
// dispatch flags of the real command table. The expected metadata follows redis-server 7.0.15's
// COMMAND INFO (run by hand), not dashkv's output.

#include "server/command_registry.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "core/str_util.h"
#include "server/cmd_context.h"

namespace dashkv {
namespace {

using ::testing::ElementsAre;
using ::testing::UnorderedElementsAre;
using ::testing::UnorderedElementsAreArray;

void NoopConn(CmdArgs, ConnCmdContext&) {}
void OtherConn(CmdArgs, ConnCmdContext&) {}

std::vector<std::string_view> Args(std::initializer_list<std::string_view> args) { return args; }

// A container "box" with subcommands "put" (own handler, one key) and "help" (inherits).
CommandRegistry BoxRegistry() {
  CommandRegistry reg;
  CommandSpec box = MakeSpec("BOX", -2, 0, 0, 0, {"slow"}, "server", "1.0.0", "A container.");
  box.kind = HandlerKind::kConn;
  box.conn_handler = NoopConn;
  box.subcommands.push_back(WithConnHandler(
      WithSingleKey(MakeSubcommand("PUT", 3, kCmdWrite, {"write"}, "1.0.0", "Puts."), 2, {"RW"}),
      OtherConn));
  box.subcommands.push_back(MakeSubcommand("help", 2, kCmdLoading, {"slow"}, "1.0.0", "Helps."));
  reg.Register(std::move(box));
  reg.Register(WithConnHandler(MakeSpec("plain", 1, 0, 0, 0, {}, "server", "", "Plain."),
                               NoopConn));
  return reg;
}

TEST(CommandRegistryTest, SubcommandsAreNamedAfterTheirContainer) {
  CommandRegistry reg = BoxRegistry();
  const CommandSpec* box = reg.Find("box");
  ASSERT_NE(box, nullptr);
  EXPECT_TRUE(box->container());
  ASSERT_EQ(box->subcommands.size(), 2u);
  EXPECT_EQ(box->subcommands[0].name, "box|put");
  EXPECT_EQ(box->subcommands[1].name, "box|help");
  EXPECT_EQ(box->subcommands[0].parent, box);
  EXPECT_EQ(box->subcommands[0].group, "server");  // inherited when unset
  EXPECT_FALSE(reg.Find("plain")->container());
}

TEST(CommandRegistryTest, CountsTopLevelCommandsAndGivesEverySpecAnId) {
  CommandRegistry reg = BoxRegistry();
  EXPECT_EQ(reg.size(), 2u);
  EXPECT_EQ(reg.num_ids(), 4u);
  std::set<uint32_t> ids;
  reg.ForEachSpec([&](const CommandSpec& s) { ids.insert(s.id); });
  EXPECT_THAT(ids, ElementsAre(0u, 1u, 2u, 3u));
}

TEST(CommandRegistryTest, LookupResolvesTheSubcommand) {
  CommandRegistry reg = BoxRegistry();
  const CommandSpec* box = reg.Find("box");
  auto a = Args({"Box", "pUt", "k"});
  EXPECT_EQ(reg.Lookup(CmdArgs(a.data(), a.size())), &box->subcommands[0]);
  auto unknown = Args({"box", "nope"});
  EXPECT_EQ(reg.Lookup(CmdArgs(unknown.data(), unknown.size())), nullptr);
  auto bare = Args({"box"});
  EXPECT_EQ(reg.Lookup(CmdArgs(bare.data(), bare.size())), box);  // its arity then refuses it
  auto plain = Args({"plain", "x"});
  EXPECT_EQ(reg.Lookup(CmdArgs(plain.data(), plain.size())), reg.Find("plain"));
  auto none = Args({"nosuch", "x"});
  EXPECT_EQ(reg.Lookup(CmdArgs(none.data(), none.size())), nullptr);
}

TEST(CommandRegistryTest, FindFullName) {
  CommandRegistry reg = BoxRegistry();
  EXPECT_EQ(reg.FindFullName("BOX|Help"), &reg.Find("box")->subcommands[1]);
  EXPECT_EQ(reg.FindFullName("box"), reg.Find("box"));
  EXPECT_EQ(reg.FindFullName("box|nope"), nullptr);
  EXPECT_EQ(reg.FindFullName("box|help|x"), nullptr);
  EXPECT_EQ(reg.FindFullName("plain|x"), nullptr);
  EXPECT_EQ(reg.FindFullName("box|"), nullptr);
}

TEST(CommandRegistryTest, RenameMovesTheNameAndEmptyDisables) {
  CommandRegistry reg = BoxRegistry();
  const CommandSpec* box = reg.Find("box");
  const CommandSpec* plain = reg.Find("plain");
  EXPECT_EQ(reg.Rename("nosuch", "x"), "No such command in rename-command");
  EXPECT_EQ(reg.Rename("box", "PLAIN"), "Target command name already exists");
  // A name longer than the lookup's stack buffer works too.
  const std::string long_name = "a_box_renamed_to_a_name_longer_than_thirty_two_bytes";
  EXPECT_EQ(reg.Rename("BOX", long_name), "");
  EXPECT_EQ(reg.Find("box"), nullptr);
  EXPECT_EQ(reg.Find(AsciiStrToUpper(long_name)), box);
  EXPECT_EQ(box->name, "box");  // COMMAND INFO keeps the command's own name
  EXPECT_EQ(reg.Lookup(Args({long_name, "put", "k"})), &box->subcommands[0]);
  EXPECT_TRUE(reg.reachable(*box));
  EXPECT_TRUE(reg.reachable(box->subcommands[0]));
  EXPECT_EQ(reg.Rename("plain", ""), "");
  EXPECT_EQ(reg.Find("plain"), nullptr);
  EXPECT_FALSE(reg.reachable(*plain));
  EXPECT_EQ(reg.size(), 1u);
  EXPECT_EQ(reg.Rename("plain", "again"), "No such command in rename-command");
}

TEST(CommandRegistryTest, MemoizedFindAnswersAsFindForEverySpelling) {
  CommandRegistry reg = BoxRegistry();
  const CommandSpec* box = reg.Find("box");
  const CommandSpec* plain = reg.Find("plain");
  CommandNameMemo memo;
  EXPECT_EQ(reg.Find("", memo), nullptr);
  EXPECT_EQ(reg.Find("BOX", memo), box);
  EXPECT_EQ(reg.Find("BOX", memo), box);  // from the memo
  EXPECT_EQ(memo.spec, box);
  EXPECT_EQ(reg.Find("box", memo), box);  // another spelling: looked up again
  EXPECT_EQ(reg.Find("bo", memo), nullptr);
  EXPECT_EQ(reg.Find("bo", memo), nullptr);  // unknown names are memoized too
  EXPECT_EQ(reg.Find("plain", memo), plain);
  EXPECT_EQ(reg.Find("plaiN", memo), plain);
  EXPECT_EQ(reg.Find("plainx", memo), nullptr);
  // A name longer than the memo holds is looked up every time and leaves the memo as it was.
  const std::string long_name = "box_with_a_name_longer_than_the_memo";
  EXPECT_EQ(reg.Rename("box", long_name), "");
  EXPECT_EQ(reg.Find("plain", memo), plain);
  EXPECT_EQ(reg.Find(long_name, memo), box);
  EXPECT_EQ(memo.spec, plain);
  EXPECT_EQ(reg.Find(long_name, memo), box);
  auto a = Args({"PLAIN", "x"});
  EXPECT_EQ(reg.Lookup(CmdArgs(a.data(), a.size()), memo), plain);
  auto put = Args({long_name, "put", "k"});
  EXPECT_EQ(reg.Lookup(CmdArgs(put.data(), put.size()), memo), &box->subcommands[0]);
}

TEST(CommandRegistryTest, SubcommandWithoutHandlerRunsTheContainers) {
  CommandRegistry reg = BoxRegistry();
  const CommandSpec* box = reg.Find("box");
  EXPECT_EQ(box->subcommands[0].conn_handler, &OtherConn);
  EXPECT_EQ(box->subcommands[1].conn_handler, &NoopConn);
  EXPECT_EQ(box->subcommands[1].kind, HandlerKind::kConn);
}

TEST(CommandRegistryTest, SingleKeySubcommandHasKeyPositionsAndKeySpec) {
  CommandRegistry reg = BoxRegistry();
  const CommandSpec& put = reg.Find("box")->subcommands[0];
  EXPECT_TRUE(put.HasKeys());
  auto a = Args({"box", "put", "k"});
  EXPECT_THAT(put.KeysOf(CmdArgs(a.data(), a.size())), ElementsAre(2u));
  ASSERT_EQ(put.key_specs.size(), 1u);
  EXPECT_EQ(put.key_specs[0].begin_index, 2);
  EXPECT_EQ(put.key_specs[0].last_key, 0);
  EXPECT_THAT(put.key_specs[0].flags, ElementsAre("RW"));
  EXPECT_FALSE(reg.Find("box")->HasKeys());
}

TEST(CommandRegistryTest, DispatchFlagsHaveNoRedisName) {
  EXPECT_TRUE(FlagNames(kCmdMultiControl | kCmdSubscribedOk).empty());
  EXPECT_THAT(FlagNames(kCmdWrite | kCmdMultiControl), ElementsAre("write"));
}

// The real table.
class CommandTableTest : public ::testing::Test {
 protected:
  void SetUp() override { RegisterAllCommands(&reg_); }

  std::vector<std::string> NamesWith(CommandFlag flag) const {
    std::vector<std::string> out;
    reg_.ForEachSpec([&](const CommandSpec& s) {
      if (s.HasFlag(flag)) out.push_back(s.name);
    });
    return out;
  }
  std::vector<std::string> SubcommandNames(std::string_view container) const {
    std::vector<std::string> out;
    for (const CommandSpec& s : reg_.Find(container)->subcommands) out.push_back(s.name);
    return out;
  }

  CommandRegistry reg_;
};

TEST_F(CommandTableTest, MultiControlCommands) {
  EXPECT_THAT(NamesWith(kCmdMultiControl),
              UnorderedElementsAre("exec", "discard", "multi", "watch", "quit", "reset"));
}

TEST_F(CommandTableTest, SubscribedModeCommands) {
  EXPECT_THAT(NamesWith(kCmdSubscribedOk),
              UnorderedElementsAre("subscribe", "ssubscribe", "sunsubscribe", "psubscribe",
                                   "unsubscribe", "punsubscribe", "ping", "quit", "reset"));
}

TEST_F(CommandTableTest, OnlySelectSwitchesTheDatabase) {
  std::vector<std::string> names;
  reg_.ForEachSpec([&](const CommandSpec& s) {
    if (s.switch_db != nullptr) names.push_back(s.name);
  });
  EXPECT_THAT(names, ElementsAre("select"));
  const CommandSpec* select = reg_.Find("select");
  auto ok = Args({"select", "3"});
  EXPECT_EQ(select->switch_db(CmdArgs(ok.data(), ok.size()), 16), 3u);
  auto high = Args({"select", "16"});
  EXPECT_EQ(select->switch_db(CmdArgs(high.data(), high.size()), 16), std::nullopt);
  auto bad = Args({"select", "x"});
  EXPECT_EQ(select->switch_db(CmdArgs(bad.data(), bad.size()), 16), std::nullopt);
}

// Redis 7.0.15 flags exactly these of dashkv's commands "movablekeys" (COMMAND INFO): a getkeys
// proc (MIGRATE), a numkeys argument, or a key spec that is not an index and a range.
TEST_F(CommandTableTest, MovableKeysCommands) {
  std::vector<std::string> names;
  reg_.ForEachSpec([&](const CommandSpec& s) {
    if (s.MovableKeys()) names.push_back(s.name);
  });
  EXPECT_THAT(names, UnorderedElementsAre("migrate", "lmpop", "blmpop", "sintercard", "zmpop",
                                          "bzmpop", "zunion", "zinter", "zdiff", "zunionstore",
                                          "zinterstore", "zdiffstore", "zintercard", "eval",
                                          "evalsha", "eval_ro", "evalsha_ro", "fcall",
                                          "fcall_ro", "georadius", "georadiusbymember", "sort",
                                          "sort_ro", "xread", "xreadgroup"));
}

TEST(KeySpecTest, OnlyAKeywordSearchMoves) {
  CommandSpec spec;
  spec.key_specs.push_back(KeySpec::AtIndex({"RW"}, 1, -1, 2));
  EXPECT_FALSE(spec.MovableKeys());
  spec.key_specs.push_back(KeySpec::AfterKeyword({"RO"}, "KEYS", -2, -1));
  EXPECT_TRUE(spec.MovableKeys());
  EXPECT_EQ(spec.key_specs[1].keyword, "KEYS");
  EXPECT_EQ(spec.key_specs[1].startfrom, -2);
  EXPECT_EQ(spec.key_specs[1].last_key, -1);
}

TEST_F(CommandTableTest, ContainersAndTheirSubcommands) {
  std::vector<std::string> containers;
  for (const auto& spec : reg_.all()) {
    if (spec->container()) containers.push_back(spec->name);
  }
  // DEBUG is one command in Redis 7.0's COMMAND output, so it has no public table.
  EXPECT_THAT(containers, UnorderedElementsAre("client", "config", "command", "memory", "pubsub",
                                               "object", "script", "function", "xinfo",
                                               "xgroup", "slowlog", "latency", "acl", "module"));
  EXPECT_THAT(SubcommandNames("client"),
              UnorderedElementsAre("client|id", "client|getname", "client|setname",
                                   "client|setinfo", "client|info", "client|list", "client|kill",
                                   "client|unblock", "client|no-evict", "client|no-touch",
                                   "client|pause", "client|unpause", "client|reply",
                                   "client|tracking", "client|caching", "client|getredir",
                                   "client|trackinginfo", "client|help"));
  EXPECT_THAT(SubcommandNames("config"),
              UnorderedElementsAre("config|get", "config|set", "config|resetstat",
                                   "config|rewrite", "config|help"));
  EXPECT_THAT(SubcommandNames("command"),
              UnorderedElementsAre("command|count", "command|info", "command|docs",
                                   "command|list", "command|getkeys", "command|getkeysandflags",
                                   "command|help"));
  EXPECT_THAT(SubcommandNames("memory"),
              UnorderedElementsAre("memory|doctor", "memory|help", "memory|malloc-stats",
                                   "memory|purge", "memory|stats", "memory|usage"));
  EXPECT_THAT(SubcommandNames("pubsub"),
              UnorderedElementsAre("pubsub|channels", "pubsub|numpat", "pubsub|numsub",
                                   "pubsub|shardchannels", "pubsub|shardnumsub", "pubsub|help"));
  EXPECT_THAT(SubcommandNames("object"),
              UnorderedElementsAre("object|encoding", "object|refcount", "object|idletime",
                                   "object|freq", "object|help"));
  EXPECT_FALSE(reg_.Find("debug")->container());
}

// Arity, flags and keys as redis-server 7.0.15's COMMAND INFO shows them.
TEST_F(CommandTableTest, SubcommandMetadataMatchesRedis) {
  struct Expected {
    std::string_view name;
    int arity;
    std::vector<std::string_view> flags;
    int first_key, last_key, step;
    std::vector<std::string_view> categories;
  };
  const Expected kExpected[] = {
      {"client|kill", -3, {"admin", "noscript", "loading", "stale"}, 0, 0, 0,
       {"admin", "slow", "dangerous", "connection"}},
      {"client|id", 2, {"noscript", "loading", "stale"}, 0, 0, 0, {"slow", "connection"}},
      {"client|help", 2, {"loading", "stale"}, 0, 0, 0, {"slow", "connection"}},
      {"config|get", -3, {"admin", "noscript", "loading", "stale"}, 0, 0, 0,
       {"admin", "slow", "dangerous"}},
      {"config|set", -4, {"admin", "noscript", "loading", "stale"}, 0, 0, 0,
       {"admin", "slow", "dangerous"}},
      {"command|getkeys", -4, {"loading", "stale"}, 0, 0, 0, {"slow", "connection"}},
      {"memory|usage", -3, {"readonly"}, 2, 2, 1, {"read", "slow"}},
      {"pubsub|numpat", 2, {"pubsub", "loading", "stale"}, 0, 0, 0, {"pubsub", "slow"}},
      {"object|encoding", 3, {"readonly"}, 2, 2, 1, {"keyspace", "read", "slow"}},
      {"object|help", 2, {"loading", "stale"}, 0, 0, 0, {"keyspace", "slow"}},
  };
  for (const Expected& e : kExpected) {
    SCOPED_TRACE(e.name);
    const CommandSpec* spec = reg_.FindFullName(e.name);
    ASSERT_NE(spec, nullptr);
    EXPECT_EQ(spec->arity, e.arity);
    EXPECT_THAT(FlagNames(spec->flags), UnorderedElementsAreArray(e.flags));
    EXPECT_EQ(spec->first_key, e.first_key);
    EXPECT_EQ(spec->last_key, e.last_key);
    EXPECT_EQ(spec->key_step, e.step);
    EXPECT_THAT(spec->categories, UnorderedElementsAreArray(e.categories));
  }
  // The containers themselves: no flags and only @slow (COMMAND: loading, stale, @connection).
  for (std::string_view name : {"client", "config", "memory", "pubsub", "object"}) {
    SCOPED_TRACE(name);
    const CommandSpec* spec = reg_.Find(name);
    EXPECT_EQ(spec->arity, -2);
    EXPECT_TRUE(FlagNames(spec->flags).empty());
    EXPECT_EQ(spec->first_key, 0);
    EXPECT_THAT(spec->categories, ElementsAre("slow"));
  }
}

}  // namespace
}  // namespace dashkv
