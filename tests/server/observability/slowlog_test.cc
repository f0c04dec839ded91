#include "server/observability/slowlog.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "server/command_registry.h"

namespace dashkv {
namespace {

CommandSpec Named(std::string name) {
  CommandSpec s;
  s.name = std::move(name);
  return s;
}

std::vector<std::string> Recorded(std::string cmd, std::vector<std::string_view> args) {
  return SlowLog::RecordedArgs(Named(std::move(cmd)), CmdArgs(args.data(), args.size()));
}

TEST(SlowLogTest, KeepsShortArguments) {
  EXPECT_EQ(Recorded("set", {"set", "k", "v"}), (std::vector<std::string>{"set", "k", "v"}));
}

TEST(SlowLogTest, CutsLongArguments) {
  std::string big(300, 'x');
  auto got = Recorded("set", {"set", "k", big});
  EXPECT_EQ(got[2], std::string(128, 'x') + "... (172 more bytes)");
}

TEST(SlowLogTest, KeepsAtMost32Arguments) {
  std::vector<std::string> storage;
  for (int i = 0; i < 100; ++i) storage.push_back(std::to_string(i));
  std::vector<std::string_view> args(storage.begin(), storage.end());
  auto got = SlowLog::RecordedArgs(Named("rpush"), CmdArgs(args.data(), args.size()));
  ASSERT_EQ(got.size(), 32u);
  EXPECT_EQ(got[30], "30");
  EXPECT_EQ(got[31], "... (69 more arguments)");
}

TEST(SlowLogTest, RedactsSecrets) {
  EXPECT_EQ(Recorded("auth", {"AUTH", "pw"}), (std::vector<std::string>{"AUTH", "(redacted)"}));
  EXPECT_EQ(Recorded("hello", {"HELLO", "3", "AUTH", "u", "p", "SETNAME", "n"}),
            (std::vector<std::string>{"HELLO", "3", "AUTH", "(redacted)", "(redacted)",
                                      "SETNAME", "n"}));
  EXPECT_EQ(Recorded("hello", {"HELLO", "3", "AUTH"}),
            (std::vector<std::string>{"HELLO", "3", "AUTH"}));
  EXPECT_EQ(Recorded("acl|setuser", {"ACL", "SETUSER", "bob", ">pw"}),
            (std::vector<std::string>{"ACL", "SETUSER", "(redacted)", "(redacted)"}));
  EXPECT_EQ(Recorded("config|set", {"CONFIG", "SET", "maxmemory", "1", "requirepass", "pw"}),
            (std::vector<std::string>{"CONFIG", "SET", "maxmemory", "1", "requirepass",
                                      "(redacted)"}));
  EXPECT_EQ(Recorded("migrate", {"MIGRATE", "h", "1", "", "0", "10", "AUTH2", "u", "p", "KEYS",
                                 "a"}),
            (std::vector<std::string>{"MIGRATE", "h", "1", "", "0", "10", "AUTH2", "(redacted)",
                                      "(redacted)", "KEYS", "a"}));
}

TEST(SlowLogTest, MergesEnginesNewestFirstAndBoundsLength) {
  SlowLog log(2);
  CommandSpec set = Named("set");
  std::vector<std::string_view> args = {"set", "k", "v"};
  for (int i = 0; i < 10; ++i) {
    log.Add(i % 2, set, CmdArgs(args.data(), args.size()), i, "1.2.3.4:5", "", 128);
  }
  auto got = log.Get(-1, 128);
  ASSERT_EQ(got.size(), 10u);
  for (size_t i = 1; i < got.size(); ++i) EXPECT_GT(got[i - 1].id, got[i].id);
  EXPECT_EQ(got[0].duration_us, 9);
  EXPECT_EQ(log.Get(3, 128).size(), 3u);
  EXPECT_EQ(log.Len(4), 4u);
  EXPECT_EQ(log.Get(-1, 4).size(), 4u);
  log.Add(0, set, CmdArgs(args.data(), args.size()), 1, "", "", 0);  // max len 0: not kept
  EXPECT_EQ(log.Len(128), 10u);
  log.Reset();
  EXPECT_EQ(log.Len(128), 0u);
}

TEST(SlowLogTest, ConcurrentAddsFromEveryEngine) {
  SlowLog log(4);
  CommandSpec set = Named("set");
  std::vector<std::thread> threads;
  for (unsigned e = 0; e < 4; ++e) {
    threads.emplace_back([&, e] {
      std::vector<std::string_view> args = {"set", "k", "v"};
      for (int i = 0; i < 1000; ++i) {
        log.Add(e, set, CmdArgs(args.data(), args.size()), i, "", "", 100);
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(log.Len(1000), 400u);
  auto got = log.Get(-1, 1000);
  EXPECT_EQ(got.size(), 400u);
}

}  // namespace
}  // namespace dashkv
