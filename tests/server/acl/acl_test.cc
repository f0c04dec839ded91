// ACL unit tests: SHA-256, rule parsing and descriptions, the permission check (commands, keys
// by their key specs' needs, channels, selectors), the registry (config-file user lines,
// requirepass, authentication) and the bounded ACL LOG. Expected texts are redis-server
// 7.0.15's.
#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <vector>

#include "server/acl/acl_check.h"
#include "server/acl/acl_log.h"
#include "server/acl/acl_registry.h"
#include "server/acl/sha256.h"
#include "server/command_registry.h"

namespace dashkv {
namespace {

const CommandRegistry& Registry() {
  static const CommandRegistry* registry = [] {
    auto* r = new CommandRegistry();
    RegisterAllCommands(r);
    return r;
  }();
  return *registry;
}

const AclRules& Rules() {
  static const AclRules rules(Registry());
  return rules;
}

AclUser Make(std::vector<std::string_view> ops, std::string* err = nullptr) {
  AclUser u = Rules().NewUser("u");
  std::string e = Rules().Apply(&u, ops);
  if (err != nullptr) *err = e;
  EXPECT_TRUE(err != nullptr || e.empty()) << e;
  return u;
}

AclDenied Check(const AclUser& u, std::vector<std::string_view> args, int* index = nullptr) {
  CmdArgs cargs(args.data(), args.size());
  const CommandSpec* spec = Registry().Lookup(cargs);
  EXPECT_NE(spec, nullptr) << args[0];
  AclVerdict v = AclCheck(Rules(), u, *spec, cargs);
  if (index != nullptr) *index = v.arg_index;
  return v.reason;
}

TEST(Sha256Test, KnownDigests) {
  EXPECT_EQ(Sha256Hex(Sha256("")),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(Sha256Hex(Sha256("abc")),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  // Two blocks of padding (56 bytes) and several blocks.
  EXPECT_EQ(Sha256Hex(Sha256("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(Sha256Hex(Sha256(std::string(1000000, 'a'))),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  EXPECT_EQ(Sha256Hex(Sha256("p")),
            "148de9c5a7a44d19e56cd9ae1a554bf67847afb0c58f6e12fa29ac7ddfca9940");
}

TEST(Sha256Test, HexAndCompare) {
  Sha256Digest d;
  EXPECT_TRUE(ParseSha256Hex(Sha256Hex(Sha256("x")), &d));
  EXPECT_TRUE(DigestsEqual(d, Sha256("x")));
  EXPECT_FALSE(DigestsEqual(d, Sha256("y")));
  EXPECT_FALSE(ParseSha256Hex("abc", &d));
  EXPECT_FALSE(ParseSha256Hex(std::string(64, 'A'), &d));  // lowercase only
  EXPECT_FALSE(ParseSha256Hex(std::string(63, 'a') + "g", &d));
}

TEST(AclRulesTest, DescribesLikeRedis) {
  EXPECT_EQ(Rules().Describe(Rules().DefaultUser()), "user default on nopass ~* &* +@all");
  AclUser u = Make({"on", ">pw", "~k*", "%R~r*", "&ch*", "+get", "-@all", "+set",
                    "(+hset ~h*)"});
  EXPECT_EQ(Rules().Describe(u),
            "user u on #30c952fab122c3f9759f02a6d95c3758b246b4fee239957b2d4fee46e26170c4 ~k* "
            "%R~r* resetchannels &ch* -@all +set (~h* resetchannels -@all +hset)");
  AclUser all_but = Make({"+@all", "-flushall", "~*"});
  EXPECT_EQ(Rules().DescribeCommands(all_but.root), "+@all -flushall");
  AclUser first = Make({"+select|0", "+select|1", "-@all", "+select|2"});
  EXPECT_EQ(Rules().DescribeCommands(first.root), "-@all +select|2");
  AclUser sub = Make({"+config|get"});
  EXPECT_EQ(Rules().DescribeCommands(sub.root), "-@all +config|get");
  AclUser reset = Make({"on", "nopass", "+@all", "reset"});
  EXPECT_EQ(Rules().Describe(reset), "user u off sanitize-payload resetchannels -@all");
  AclUser merged = Make({"~a", "%R~a", "%W~b", "%R"});
  EXPECT_EQ(AclRules::DescribeKeys(merged.root), "~a %W~b %R~");
}

TEST(AclRulesTest, Errors) {
  struct Case {
    std::vector<std::string_view> ops;
    std::string error;
  } cases[] = {
      {{"+foo"}, "Error in ACL SETUSER modifier '+foo': Unknown command or category name in ACL"},
      {{"-select|0"},
       "Error in ACL SETUSER modifier '-select|0': Unknown command or category name in ACL"},
      {{"+config|"}, "Error in ACL SETUSER modifier '+config|': Syntax error"},
      {{"+config|get|x"},
       "Error in ACL SETUSER modifier '+config|get|x': Allowing first-arg of a subcommand is "
       "not supported"},
      {{"%~a"}, "Error in ACL SETUSER modifier '%~a': Syntax error"},
      {{"~a b"}, "Error in ACL SETUSER modifier '~a b': Syntax error"},
      {{"(on)"}, "Error in ACL SETUSER modifier '(on)': Syntax error"},
      {{"allkeys", "~a"},
       "Error in ACL SETUSER modifier '~a': Adding a pattern after the * pattern (or the "
       "'allkeys' flag) is not valid and does not have any effect. Try 'resetkeys' to start "
       "with an empty list of patterns"},
      {{"bogus", "(~a"}, "Unmatched parenthesis in acl selector starting at '(~a'."},
      {{"<x"},
       "Error in ACL SETUSER modifier '<x': The password you are trying to remove from the "
       "user does not exist"},
  };
  for (const Case& c : cases) {
    std::string err;
    Make(c.ops, &err);
    EXPECT_EQ(err, c.error);
  }
  // Thousands of rules, an empty rule and a huge pattern are fine.
  std::vector<std::string> many;
  for (int i = 0; i < 5000; ++i) many.push_back("~k" + std::to_string(i));
  std::vector<std::string_view> views(many.begin(), many.end());
  views.push_back("");
  std::string huge = "~" + std::string(1 << 20, 'x');
  views.push_back(huge);
  AclUser u = Make(views);
  EXPECT_EQ(u.root.keys.size(), 5001u);
}

TEST(AclCheckTest, Commands) {
  AclUser u = Make({"allkeys", "+@read", "-hgetall", "+config|get", "+select|0"});
  EXPECT_EQ(Check(u, {"get", "k"}), AclDenied::kOk);
  EXPECT_EQ(Check(u, {"set", "k", "v"}), AclDenied::kCommand);
  EXPECT_EQ(Check(u, {"hgetall", "h"}), AclDenied::kCommand);
  EXPECT_EQ(Check(u, {"config", "get", "x"}), AclDenied::kOk);
  EXPECT_EQ(Check(u, {"config", "set", "x", "y"}), AclDenied::kCommand);
  EXPECT_EQ(Check(u, {"SELECT", "0"}), AclDenied::kOk);
  EXPECT_EQ(Check(u, {"select", "1"}), AclDenied::kCommand);
  EXPECT_EQ(Check(u, {"auth", "a", "b"}), AclDenied::kOk);  // no-auth commands always pass
  EXPECT_TRUE(Rules().DefaultUser().Unrestricted());
  EXPECT_FALSE(u.Unrestricted());
}

TEST(AclCheckTest, KeysByTheirNeeds) {
  AclUser u = Make({"+@all", "~rw*", "%R~ro*", "%W~wo*"});
  EXPECT_EQ(Check(u, {"get", "ro1"}), AclDenied::kOk);
  EXPECT_EQ(Check(u, {"get", "wo1"}), AclDenied::kKey);
  EXPECT_EQ(Check(u, {"set", "wo1", "v"}), AclDenied::kOk);  // SET only writes
  EXPECT_EQ(Check(u, {"set", "wo1", "v", "GET"}), AclDenied::kKey);  // unless GET
  EXPECT_EQ(Check(u, {"lpush", "wo1", "a"}), AclDenied::kOk);  // insert: write only
  EXPECT_EQ(Check(u, {"incr", "wo1"}), AclDenied::kKey);        // access and update
  EXPECT_EQ(Check(u, {"exists", "wo1"}), AclDenied::kOk);       // no access: any pattern
  int index = 0;
  EXPECT_EQ(Check(u, {"mset", "rw1", "v", "ro1", "v"}, &index), AclDenied::kKey);
  EXPECT_EQ(index, 3);
  EXPECT_EQ(Check(u, {"zunionstore", "wo1", "2", "ro1", "rw2"}), AclDenied::kOk);
  EXPECT_EQ(Check(u, {"zunionstore", "wo1", "2", "ro1", "wo2"}, &index), AclDenied::kKey);
  EXPECT_EQ(index, 4);
  // XREAD STREAMS: the keys are the first half after the keyword; the ids are not keys.
  EXPECT_EQ(Check(u, {"xread", "STREAMS", "ro1", "ro2", "0", "0"}), AclDenied::kOk);
  EXPECT_EQ(Check(u, {"xread", "STREAMS", "ro1", "x", "0", "0"}), AclDenied::kKey);
  EXPECT_EQ(Check(u, {"dbsize"}), AclDenied::kOk);
}

TEST(AclCheckTest, ChannelsAndSelectors) {
  AclUser u = Make({"+@all", "allkeys", "&news.*"});
  EXPECT_EQ(Check(u, {"publish", "news.a", "m"}), AclDenied::kOk);
  EXPECT_EQ(Check(u, {"publish", "x", "m"}), AclDenied::kChannel);
  EXPECT_EQ(Check(u, {"subscribe", "news.a", "x"}), AclDenied::kChannel);
  EXPECT_EQ(Check(u, {"psubscribe", "news.*"}), AclDenied::kOk);
  EXPECT_EQ(Check(u, {"psubscribe", "news.a*"}), AclDenied::kChannel);  // literal patterns
  EXPECT_EQ(Check(u, {"ssubscribe", "news.b"}), AclDenied::kOk);  // shard channels are no keys
  AclUser s = Make({"+get", "~a*", "(+set ~b*)"});
  EXPECT_EQ(Check(s, {"get", "a1"}), AclDenied::kOk);
  EXPECT_EQ(Check(s, {"set", "b1", "v"}), AclDenied::kOk);
  EXPECT_EQ(Check(s, {"set", "a1", "v"}), AclDenied::kKey);  // the greatest reason wins
  EXPECT_EQ(Check(s, {"del", "a1"}), AclDenied::kCommand);
}

TEST(AclRulesTest, PubsubDefaultForNewSelectorsAndReset) {
  std::atomic<bool> all_channels{true};
  AclRules rules(Registry(), &all_channels);
  AclUser u = rules.NewUser("u");
  std::vector<std::string_view> ops = {"(~x +get)"};
  ASSERT_EQ(rules.Apply(&u, ops), "");
  EXPECT_TRUE(u.root.all_channels);
  EXPECT_TRUE(u.selectors[0].all_channels);
  all_channels = false;
  std::vector<std::string_view> reset = {"reset", "(~y +set)"};
  ASSERT_EQ(rules.Apply(&u, reset), "");
  EXPECT_FALSE(u.root.all_channels);
  EXPECT_FALSE(u.selectors[0].all_channels);
  EXPECT_TRUE(rules.DefaultUser().root.all_channels);  // the default user: every channel
  EXPECT_FALSE(Rules().NewUser("v").root.all_channels);  // no setting: resetchannels
}

TEST(AclRegistryTest, ConfigFileUserLines) {
  std::atomic<bool> auth_required{false};
  AclRegistry acl(Registry(), &auth_required);
  std::vector<std::string_view> line = {"user", "alice", "on", ">p", "~a*", "+get"};
  ASSERT_TRUE(acl.LoadUserLine(line).ok());
  ASSERT_NE(acl.Authenticate("alice", "p"), nullptr);
  EXPECT_EQ(acl.Authenticate("alice", "q"), nullptr);
  EXPECT_FALSE(acl.LoadUserLine(line).ok());  // defined once
  std::vector<std::string_view> bad = {"user", "bob", "+nosuch"};
  absl::Status st = acl.LoadUserLine(bad);
  EXPECT_FALSE(st.ok());
  EXPECT_EQ(acl.Find("bob"), nullptr);
  std::vector<std::string_view> no_user = {"usr", "x"};
  EXPECT_FALSE(acl.LoadUserLine(no_user).ok());
  std::vector<std::string_view> def = {"user", "default", "on", ">secret", "+@all", "~*"};
  ASSERT_TRUE(acl.LoadUserLine(def).ok());
  EXPECT_TRUE(auth_required.load());
  EXPECT_EQ(acl.Authenticate("default", "x"), nullptr);
  EXPECT_NE(acl.Authenticate("default", "secret"), nullptr);
}

TEST(AclRegistryTest, RequirepassAndGenerations) {
  std::atomic<bool> auth_required{true};
  AclRegistry acl(Registry(), &auth_required);
  EXPECT_FALSE(auth_required.load());
  const uint64_t g = acl.generation();
  acl.SetDefaultPassword("pw");
  EXPECT_GT(acl.generation(), g);
  EXPECT_TRUE(auth_required.load());
  EXPECT_NE(acl.Authenticate("default", "pw"), nullptr);
  acl.SetDefaultPassword("");
  EXPECT_FALSE(auth_required.load());
  EXPECT_TRUE(acl.default_user()->nopass);
  std::vector<std::string_view> ops = {"on", "nopass"};
  EXPECT_EQ(acl.SetUser("x", ops), "");
  std::vector<std::string_view> names = {"x", "default", "nosuch"};
  EXPECT_EQ(acl.DelUsers(names), std::vector<std::string>{"x"});
  EXPECT_EQ(acl.SetUser("a b", ops), "Usernames can't contain spaces or null characters");
}

TEST(AclLogTest, MergesRepeatsAndStaysBounded) {
  AclLog log;
  for (int i = 0; i < 1000; ++i) {
    AclLogEntry e;
    e.reason = AclDenied::kAuth;
    e.object = "auth";
    e.username = "user" + std::to_string(i);
    e.updated_ms = 1000 + i;
    log.Add(e, 5);
  }
  EXPECT_EQ(log.size(), 5u);
  std::vector<AclLogEntry> newest = log.Newest(10);
  ASSERT_EQ(newest.size(), 5u);
  EXPECT_EQ(newest[0].username, "user999");
  AclLogEntry e;
  e.reason = AclDenied::kAuth;
  e.object = "auth";
  e.username = "user995";
  e.updated_ms = 3000;
  log.Add(e, 5);  // like the oldest one, within a minute: merged and moved to the front
  newest = log.Newest(10);
  EXPECT_EQ(newest[0].username, "user995");
  EXPECT_EQ(newest[0].count, 2u);
  EXPECT_EQ(log.size(), 5u);
  e.updated_ms = 3000 + AclLog::kMergeWindowMs;  // a minute later: a new entry
  log.Add(e, 5);
  EXPECT_EQ(log.Newest(1)[0].count, 1u);
  log.Reset();
  EXPECT_EQ(log.size(), 0u);
}

}  // namespace
}  // namespace dashkv
