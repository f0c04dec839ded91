// Server command tests (DBSIZE, FLUSHDB/FLUSHALL, TIME, CONFIG, COMMAND, INFO, DEBUG, MEMORY)
// against a real 2-shard server. Expected replies were taken from redis-server 7.0.15 (same
// commands run by hand), not from dashkv's output; where dashkv's figures legitimately differ
// (memory sizes, addresses) only the shape is checked.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <ctime>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "server/cmd_context.h"
#include "tests/testing/test_server.h"

namespace dashkv {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::StartsWith;
using testing::RespValue;
using testing::TestServer;

constexpr char kNotInt[] = "ERR value is not an integer or out of range";
constexpr char kSyntax[] = "ERR syntax error";

// Returns the error text of `v`, or "<not an error: ...>".
std::string Err(const RespValue& v) {
  if (v.is_error()) return v.str;
  std::ostringstream os;
  os << "<not an error: " << v << ">";
  return os.str();
}

// Returns the value of `field` in an INFO text, or "" when absent.
std::string InfoValue(const std::string& info, std::string_view field) {
  std::string needle = "\r\n" + std::string(field) + ":";
  std::string text = "\r\n" + info;
  size_t pos = text.find(needle);
  if (pos == std::string::npos) return "";
  size_t start = pos + needle.size();
  return text.substr(start, text.find("\r\n", start) - start);
}

class ServerCommandsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    c_ = srv_.Connect();
    ASSERT_TRUE(c_->connected());
  }
  RespValue Run(std::initializer_list<std::string_view> args) { return c_->Run(args); }
  RespValue Run(const std::vector<std::string>& args) { return c_->Run(args); }
  ShardSet& shards() { return srv_.server().shard_set(); }

  int64_t Stat(std::string_view field) {
    std::string v = InfoValue(Run({"INFO", "stats"}).str, field);
    return v.empty() ? -1 : std::stoll(v);
  }
  // Returns the number of keys of db `db` on each shard.
  std::vector<size_t> SizesPerShard(unsigned db = 0) {
    std::vector<size_t> sizes(shards().size());
    shards().RunOnAllBlocking([&](Shard& shard) {
      DbSlice* slice = shard.db_if_exists(db);
      sizes[shard.index()] = slice ? slice->size() : 0;
    });
    return sizes;
  }
  // Returns a config value (CONFIG GET name).
  std::string ConfigValue(std::string_view name) {
    RespValue v = Run({"CONFIG", "GET", name});
    if (v.elems.size() != 2) return "<missing>";
    return v.elems[1].str;
  }

  TestServer srv_{2};
  std::unique_ptr<testing::RespClient> c_;
};

TEST_F(ServerCommandsTest, DbSizeCountsAllShards) {
  EXPECT_EQ(Run({"DBSIZE"}), 0);
  for (int i = 0; i < 100; ++i) ASSERT_EQ(Run({"SET", "k" + std::to_string(i), "v"}), "OK");
  EXPECT_EQ(Run({"DBSIZE"}), 100);
  std::vector<size_t> sizes = SizesPerShard();
  EXPECT_GT(sizes[0], 0u);
  EXPECT_GT(sizes[1], 0u);
  EXPECT_EQ(sizes[0] + sizes[1], 100u);
  ASSERT_EQ(Run({"SELECT", "2"}), "OK");
  EXPECT_EQ(Run({"DBSIZE"}), 0);
  EXPECT_EQ(Err(Run({"DBSIZE", "x"})), "ERR wrong number of arguments for 'dbsize' command");
}

TEST_F(ServerCommandsTest, FlushDbAndFlushAllWithSelect) {
  for (int i = 0; i < 20; ++i) ASSERT_EQ(Run({"SET", "a" + std::to_string(i), "v"}), "OK");
  ASSERT_EQ(Run({"SELECT", "1"}), "OK");
  for (int i = 0; i < 10; ++i) ASSERT_EQ(Run({"SET", "b" + std::to_string(i), "v"}), "OK");
  EXPECT_EQ(Run({"DBSIZE"}), 10);
  // FLUSHDB clears only the selected database.
  EXPECT_EQ(Run({"FLUSHDB"}), "OK");
  EXPECT_EQ(Run({"DBSIZE"}), 0);
  ASSERT_EQ(Run({"SELECT", "0"}), "OK");
  EXPECT_EQ(Run({"DBSIZE"}), 20);
  EXPECT_EQ(Run({"GET", "a3"}), "v");
  // Another connection has its own selected database.
  auto other = srv_.Connect();
  ASSERT_EQ(other->Run({"SELECT", "1"}), "OK");
  ASSERT_EQ(other->Run({"SET", "x", "1"}), "OK");
  EXPECT_EQ(Run({"EXISTS", "x"}), 0);
  EXPECT_EQ(Run({"FLUSHDB", "SYNC"}), "OK");
  EXPECT_EQ(Run({"DBSIZE"}), 0);
  EXPECT_EQ(other->Run({"DBSIZE"}), 1);
  ASSERT_EQ(Run({"SET", "y", "1"}), "OK");
  // FLUSHALL clears every database.
  EXPECT_EQ(Run({"FLUSHALL", "ASYNC"}), "OK");
  EXPECT_EQ(Run({"DBSIZE"}), 0);
  EXPECT_EQ(other->Run({"DBSIZE"}), 0);
  EXPECT_EQ(Run({"FLUSHALL"}), "OK");
  EXPECT_EQ(Run({"FLUSHALL", "sync"}), "OK");
  EXPECT_EQ(Err(Run({"FLUSHDB", "foo"})), kSyntax);
  EXPECT_EQ(Err(Run({"FLUSHDB", "SYNC", "ASYNC"})), kSyntax);
  EXPECT_EQ(Err(Run({"FLUSHALL", "foo"})), kSyntax);
  // Keys written after a flush are kept.
  ASSERT_EQ(Run({"SET", "z", "1"}), "OK");
  EXPECT_EQ(Run({"DBSIZE"}), 1);
  // A flushed key's TTL is gone with it.
  ASSERT_EQ(Run({"SET", "t", "1", "EX", "100"}), "OK");
  ASSERT_EQ(Run({"FLUSHDB"}), "OK");
  ASSERT_EQ(Run({"SET", "t", "1"}), "OK");
  EXPECT_EQ(Run({"TTL", "t"}), -1);
}

TEST_F(ServerCommandsTest, Time) {
  RespValue t = Run({"TIME"});
  ASSERT_EQ(t.type, RespValue::Type::kArray);
  ASSERT_EQ(t.elems.size(), 2u);
  int64_t secs = std::stoll(t.elems[0].str);
  int64_t usecs = std::stoll(t.elems[1].str);
  int64_t now = static_cast<int64_t>(std::time(nullptr));
  EXPECT_LE(std::abs(secs - now), 5);
  EXPECT_GE(usecs, 0);
  EXPECT_LT(usecs, 1000000);
  EXPECT_EQ(Err(Run({"TIME", "x"})), "ERR wrong number of arguments for 'time' command");
}

TEST_F(ServerCommandsTest, ConfigGetSet) {
  EXPECT_EQ(ConfigValue("maxmemory"), "0");
  EXPECT_EQ(Run({"CONFIG", "SET", "maxmemory", "1kb"}), "OK");
  EXPECT_EQ(ConfigValue("maxmemory"), "1024");
  EXPECT_EQ(Run({"CONFIG", "SET", "MAXMEMORY", "1k"}), "OK");
  EXPECT_EQ(ConfigValue("maxmemory"), "1000");
  EXPECT_EQ(Run({"CONFIG", "SET", "maxmemory", "0"}), "OK");
  EXPECT_EQ(Run({"CONFIG", "SET", "maxmemory-policy", "allkeys-lru", "timeout", "30"}), "OK");
  EXPECT_EQ(ConfigValue("maxmemory-policy"), "allkeys-lru");
  EXPECT_EQ(ConfigValue("timeout"), "30");
  // hz is clamped like Redis (0 -> 1).
  EXPECT_EQ(Run({"CONFIG", "SET", "hz", "0"}), "OK");
  EXPECT_EQ(ConfigValue("hz"), "1");
  EXPECT_EQ(Run({"CONFIG", "SET", "hz", "10"}), "OK");
  // Globs; each name once even when several patterns match it.
  RespValue all = Run({"CONFIG", "GET", "maxmemory*"});
  std::vector<std::string> names;
  for (size_t i = 0; i < all.elems.size(); i += 2) names.push_back(all.elems[i].str);
  EXPECT_THAT(names, Contains("maxmemory"));
  EXPECT_THAT(names, Contains("maxmemory-policy"));
  RespValue twice = Run({"CONFIG", "GET", "hz", "hz", "h?"});
  EXPECT_EQ(twice.elems.size(), 2u) << twice;
  EXPECT_TRUE(Run({"CONFIG", "GET", "nosuch"}).elems.empty());
  RespValue star = Run({"CONFIG", "GET", "*"});
  EXPECT_GT(star.elems.size(), 10u);
  EXPECT_EQ(star.elems.size() % 2, 0u);
}

TEST_F(ServerCommandsTest, ConfigErrorsAndRollback) {
  EXPECT_EQ(Err(Run({"CONFIG", "GET"})), "ERR wrong number of arguments for 'config|get' command");
  EXPECT_EQ(Err(Run({"CONFIG", "SET", "maxmemory"})),
            "ERR wrong number of arguments for 'config|set' command");
  EXPECT_EQ(Err(Run({"CONFIG", "SET", "maxmemory", "1mb", "hz"})), kSyntax);
  EXPECT_EQ(Err(Run({"CONFIG", "SET", "nosuch", "1"})),
            "ERR Unknown option or number of arguments for CONFIG SET - 'nosuch'");
  EXPECT_EQ(Err(Run({"CONFIG", "SET", "databases", "3"})),
            "ERR CONFIG SET failed (possibly related to argument 'databases') - can't set "
            "immutable config");
  EXPECT_EQ(Err(Run({"CONFIG", "SET", "timeout", "abc"})),
            "ERR CONFIG SET failed (possibly related to argument 'timeout') - argument couldn't "
            "be parsed into an integer");
  EXPECT_EQ(Err(Run({"CONFIG", "SET", "timeout", "-1"})),
            "ERR CONFIG SET failed (possibly related to argument 'timeout') - argument must be "
            "between 0 and 2147483647 inclusive");
  EXPECT_EQ(Err(Run({"CONFIG", "SET", "maxmemory", "foo"})),
            "ERR CONFIG SET failed (possibly related to argument 'maxmemory') - argument must be "
            "a memory value");
  EXPECT_EQ(Err(Run({"CONFIG", "SET", "maxmemory", "10mb", "maxmemory", "20mb"})),
            "ERR CONFIG SET failed (possibly related to argument 'maxmemory') - duplicate "
            "parameter");
  EXPECT_EQ(Err(Run({"CONFIG", "SET", "maxmemory-policy", "foo"})),
            "ERR CONFIG SET failed (possibly related to argument 'maxmemory-policy') - "
            "argument(s) must be one of the following: volatile-lru, volatile-lfu, "
            "volatile-random, volatile-ttl, allkeys-lru, allkeys-lfu, allkeys-random, "
            "noeviction");
  EXPECT_EQ(Err(Run({"CONFIG", "SET", "hz", "abc"})),
            "ERR CONFIG SET failed (possibly related to argument 'hz') - argument couldn't be "
            "parsed into an integer");
  // A failing pair undoes the pairs applied before it.
  EXPECT_EQ(Err(Run({"CONFIG", "SET", "maxmemory", "10mb", "timeout", "abc"})),
            "ERR CONFIG SET failed (possibly related to argument 'timeout') - argument couldn't "
            "be parsed into an integer");
  EXPECT_EQ(ConfigValue("maxmemory"), "0");
  EXPECT_EQ(Err(Run({"CONFIG", "SET", "timeout", "7", "maxmemory-policy", "bad"})),
            "ERR CONFIG SET failed (possibly related to argument 'maxmemory-policy') - "
            "argument(s) must be one of the following: volatile-lru, volatile-lfu, "
            "volatile-random, volatile-ttl, allkeys-lru, allkeys-lfu, allkeys-random, "
            "noeviction");
  EXPECT_EQ(ConfigValue("timeout"), "0");
  EXPECT_EQ(Err(Run({"CONFIG", "foo"})), "ERR unknown subcommand 'foo'. Try CONFIG HELP.");
  EXPECT_EQ(Err(Run({"CONFIG"})), "ERR wrong number of arguments for 'config' command");
}

TEST_F(ServerCommandsTest, CommandCountInfoDocsList) {
  RespValue count = Run({"COMMAND", "COUNT"});
  ASSERT_EQ(count.type, RespValue::Type::kInt);
  EXPECT_GT(count.num, 40);
  RespValue all = Run({"COMMAND"});
  EXPECT_EQ(static_cast<int64_t>(all.elems.size()), count.num);
  // COMMAND COUNT counts top-level commands; COMMAND LIST names subcommands too (Redis 7.0).
  RespValue list = Run({"COMMAND", "LIST"});
  EXPECT_GT(static_cast<int64_t>(list.elems.size()), count.num);
  EXPECT_THAT(list.strings(), Contains("get"));
  EXPECT_THAT(list.strings(), Contains("scan"));
  EXPECT_THAT(list.strings(), Contains("client|list"));

  RespValue info = Run({"COMMAND", "INFO", "GET", "nosuchcmd", "del"});
  ASSERT_EQ(info.elems.size(), 3u);
  const RespValue& get = info.elems[0];
  ASSERT_EQ(get.elems.size(), 10u) << get;
  EXPECT_EQ(get.elems[0], "get");
  EXPECT_EQ(get.elems[1], 2);
  EXPECT_THAT(get.elems[2].strings(), ::testing::UnorderedElementsAre("readonly", "fast"));
  EXPECT_EQ(get.elems[3], 1);
  EXPECT_EQ(get.elems[4], 1);
  EXPECT_EQ(get.elems[5], 1);
  EXPECT_THAT(get.elems[6].strings(), Contains("@read"));
  EXPECT_THAT(get.elems[6].strings(), Contains("@string"));
  EXPECT_TRUE(info.elems[1].is_null());
  const RespValue& del = info.elems[2];
  ASSERT_EQ(del.elems.size(), 10u);
  EXPECT_EQ(del.elems[0], "del");
  EXPECT_EQ(del.elems[1], -2);
  EXPECT_EQ(del.elems[3], 1);
  EXPECT_EQ(del.elems[4], -1);
  EXPECT_EQ(del.elems[5], 1);

  RespValue docs = Run({"COMMAND", "DOCS", "get", "nosuchcmd"});
  ASSERT_EQ(docs.elems.size(), 2u) << docs;  // name, then its doc map (flattened pairs)
  EXPECT_EQ(docs.elems[0], "get");
  std::vector<std::string> fields = docs.elems[1].strings();
  ASSERT_GE(fields.size(), 2u);
  EXPECT_EQ(fields[0], "summary");
  EXPECT_THAT(fields, Contains("group"));
  EXPECT_TRUE(Run({"COMMAND", "DOCS", "nosuchcmd"}).elems.empty());

  RespValue ge = Run({"COMMAND", "LIST", "FILTERBY", "PATTERN", "get*"});
  EXPECT_THAT(ge.strings(), Contains("get"));
  EXPECT_THAT(ge.strings(), Contains("getrange"));
  for (const auto& name : ge.strings()) EXPECT_THAT(name, StartsWith("get"));
  RespValue cat = Run({"COMMAND", "LIST", "FILTERBY", "ACLCAT", "keyspace"});
  EXPECT_THAT(cat.strings(), Contains("del"));
  EXPECT_THAT(cat.strings(), ::testing::Not(Contains("get")));
  EXPECT_EQ(Err(Run({"COMMAND", "LIST", "foo"})), kSyntax);
  EXPECT_EQ(Err(Run({"COMMAND", "LIST", "FILTERBY", "nope", "x"})), kSyntax);
  EXPECT_EQ(Err(Run({"COMMAND", "COUNT", "x"})),
            "ERR wrong number of arguments for 'command|count' command");
  EXPECT_EQ(Err(Run({"COMMAND", "foo"})), "ERR unknown subcommand 'foo'. Try COMMAND HELP.");
}

TEST_F(ServerCommandsTest, CommandInfoOfContainersAndSubcommands) {
  RespValue client = Run({"COMMAND", "INFO", "client"}).elems.at(0);
  ASSERT_EQ(client.elems.size(), 10u) << client;
  EXPECT_EQ(client.elems[0], "client");
  EXPECT_EQ(client.elems[1], -2);
  EXPECT_TRUE(client.elems[2].elems.empty());
  std::vector<std::string> subs;
  for (const RespValue& sub : client.elems[9].elems) {
    ASSERT_EQ(sub.elems.size(), 10u) << sub;
    subs.push_back(sub.elems[0].str);
    EXPECT_TRUE(sub.elems[9].elems.empty());
  }
  EXPECT_THAT(subs, Contains("client|list"));
  EXPECT_THAT(subs, Contains("client|kill"));

  RespValue info = Run({"COMMAND", "INFO", "CLIENT|LIST", "client|nosuch", "get|x", "client|"});
  ASSERT_EQ(info.elems.size(), 4u);
  const RespValue& list = info.elems[0];
  ASSERT_EQ(list.elems.size(), 10u);
  EXPECT_EQ(list.elems[0], "client|list");
  EXPECT_EQ(list.elems[1], -2);
  EXPECT_THAT(list.elems[2].strings(),
              ::testing::UnorderedElementsAre("admin", "noscript", "loading", "stale"));
  EXPECT_THAT(list.elems[7].strings(), Contains("nondeterministic_output"));
  for (size_t i = 1; i < 4; ++i) EXPECT_TRUE(info.elems[i].is_null()) << i;

  // object|encoding: one key at index 2 with its key specification.
  RespValue enc = Run({"COMMAND", "INFO", "object|encoding"}).elems.at(0);
  EXPECT_EQ(enc.elems[3], 2);
  EXPECT_EQ(enc.elems[4], 2);
  EXPECT_EQ(enc.elems[5], 1);
  ASSERT_EQ(enc.elems[8].elems.size(), 1u);
  std::vector<std::string> spec_fields;
  for (size_t i = 0; i < enc.elems[8].elems[0].elems.size(); i += 2) {
    spec_fields.push_back(enc.elems[8].elems[0].elems[i].str);
  }
  EXPECT_THAT(spec_fields, ::testing::ElementsAre("flags", "begin_search", "find_keys"));

  RespValue docs = Run({"COMMAND", "DOCS", "config"});
  ASSERT_EQ(docs.elems.size(), 2u);
  std::vector<std::string> fields;
  const RespValue* sub_docs = nullptr;
  for (size_t i = 0; i + 1 < docs.elems[1].elems.size(); i += 2) {
    fields.push_back(docs.elems[1].elems[i].str);
    if (docs.elems[1].elems[i] == "subcommands") sub_docs = &docs.elems[1].elems[i + 1];
  }
  EXPECT_THAT(fields, Contains("subcommands"));
  ASSERT_NE(sub_docs, nullptr);
  std::vector<std::string> names;
  for (size_t i = 0; i < sub_docs->elems.size(); i += 2) names.push_back(sub_docs->elems[i].str);
  EXPECT_THAT(names, ::testing::UnorderedElementsAre("config|get", "config|set",
                                                      "config|resetstat", "config|rewrite",
                                                      "config|help"));
  EXPECT_EQ(Run({"COMMAND", "DOCS", "config|get"}).elems.at(0), "config|get");
  EXPECT_THAT(Run({"COMMAND", "LIST", "FILTERBY", "PATTERN", "config|*"}).strings(),
              ::testing::UnorderedElementsAre("config|get", "config|set", "config|resetstat",
                                              "config|rewrite", "config|help"));
}

TEST_F(ServerCommandsTest, SubcommandErrors) {
  EXPECT_EQ(Err(Run({"MEMORY", "foo"})), "ERR unknown subcommand 'foo'. Try MEMORY HELP.");
  EXPECT_EQ(Err(Run({"memory", "HELP", "x"})),
            "ERR wrong number of arguments for 'memory|help' command");
  EXPECT_EQ(Err(Run({"Config", "set", "a"})),
            "ERR wrong number of arguments for 'config|set' command");
  EXPECT_EQ(Err(Run({"CONFIG", "RESETSTAT", "x"})),
            "ERR wrong number of arguments for 'config|resetstat' command");
  EXPECT_EQ(Err(Run({"config", "nope"})), "ERR unknown subcommand 'nope'. Try CONFIG HELP.");
  EXPECT_EQ(Err(Run({"PUBSUB", "CHANNELS", "a", "b"})),
            "ERR unknown subcommand or wrong number of arguments for 'CHANNELS'. Try PUBSUB "
            "HELP.");
  EXPECT_EQ(Err(Run({"OBJECT", "HELP", "x"})),
            "ERR wrong number of arguments for 'object|help' command");
  // Subcommands count on their own in INFO commandstats.
  Run({"CONFIG", "GET", "hz"});
  std::string stats = Run({"INFO", "commandstats"}).str;
  EXPECT_THAT(stats, HasSubstr("cmdstat_config|get:calls=1,"));
  EXPECT_THAT(stats, HasSubstr("cmdstat_config|set:calls=0,"));  // the rejected call above
}

TEST_F(ServerCommandsTest, CommandGetKeysOfSubcommands) {
  EXPECT_EQ(Run({"COMMAND", "GETKEYS", "object", "encoding", "k"}).strings(),
            std::vector<std::string>{"k"});
  EXPECT_EQ(Run({"COMMAND", "GETKEYS", "MEMORY", "USAGE", "k"}).strings(),
            std::vector<std::string>{"k"});
  EXPECT_EQ(Err(Run({"COMMAND", "GETKEYS", "client", "list", "x"})),
            "ERR The command has no key arguments");
  EXPECT_EQ(Err(Run({"COMMAND", "GETKEYS", "object", "foo", "k"})),
            "ERR Invalid command specified");
  EXPECT_EQ(Err(Run({"COMMAND", "GETKEYS", "client|list", "a"})),
            "ERR Invalid command specified");
}

TEST_F(ServerCommandsTest, CommandGetKeys) {
  EXPECT_EQ(Run({"COMMAND", "GETKEYS", "get", "a"}).strings(), std::vector<std::string>{"a"});
  EXPECT_EQ(Run({"COMMAND", "GETKEYS", "set", "a", "b"}).strings(),
            std::vector<std::string>{"a"});
  EXPECT_EQ(Run({"COMMAND", "GETKEYS", "del", "a", "b", "c"}).strings(),
            (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(Run({"COMMAND", "GETKEYS", "mget", "a", "b"}).strings(),
            (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(Err(Run({"COMMAND", "GETKEYS", "nosuch", "a"})), "ERR Invalid command specified");
  EXPECT_EQ(Err(Run({"COMMAND", "GETKEYS", "get"})),
            "ERR wrong number of arguments for 'command|getkeys' command");
  EXPECT_EQ(Err(Run({"COMMAND", "GETKEYS", "ping"})),
            "ERR wrong number of arguments for 'command|getkeys' command");
  EXPECT_EQ(Err(Run({"COMMAND", "GETKEYS"})),
            "ERR wrong number of arguments for 'command|getkeys' command");
  EXPECT_EQ(Err(Run({"COMMAND", "GETKEYS", "ping", "x"})), "ERR The command has no key arguments");
  EXPECT_EQ(Err(Run({"COMMAND", "GETKEYS", "echo", "a", "b"})),
            "ERR The command has no key arguments");
  EXPECT_EQ(Err(Run({"COMMAND", "GETKEYS", "get", "a", "b"})),
            "ERR Invalid number of arguments specified for command");
}

TEST_F(ServerCommandsTest, InfoSections) {
  std::string all = Run({"INFO"}).str;
  for (const char* s : {"# Server", "# Clients", "# Memory", "# Stats", "# CPU", "# Keyspace"}) {
    EXPECT_THAT(all, HasSubstr(s));
  }
  EXPECT_THAT(InfoValue(all, "redis_version"), StartsWith("7."));
  EXPECT_NE(InfoValue(all, "used_memory"), "");
  EXPECT_NE(InfoValue(all, "connected_clients"), "");
  EXPECT_NE(InfoValue(all, "used_cpu_user"), "");
  std::string server = Run({"INFO", "server"}).str;
  EXPECT_THAT(server, StartsWith("# Server\r\n"));
  EXPECT_THAT(server, ::testing::Not(HasSubstr("# Clients")));
  std::string two = Run({"INFO", "SERVER", "clients"}).str;
  EXPECT_THAT(two, HasSubstr("# Server"));
  EXPECT_THAT(two, HasSubstr("# Clients"));
  EXPECT_THAT(two, ::testing::Not(HasSubstr("# Memory")));
  EXPECT_THAT(Run({"INFO", "everything"}).str, HasSubstr("# Keyspace"));
  EXPECT_THAT(Run({"INFO", "all"}).str, HasSubstr("# Stats"));
  EXPECT_THAT(Run({"INFO", "default"}).str, HasSubstr("# Stats"));
  EXPECT_EQ(Run({"INFO", "nosuchsection"}), "");
}

TEST_F(ServerCommandsTest, InfoKeyspaceLines) {
  EXPECT_EQ(Run({"INFO", "keyspace"}), "# Keyspace\r\n");
  ASSERT_EQ(Run({"SET", "a", "1"}), "OK");
  ASSERT_EQ(Run({"SET", "b", "2", "PX", "100000"}), "OK");
  std::string ks = Run({"INFO", "keyspace"}).str;
  EXPECT_THAT(InfoValue(ks, "db0"), StartsWith("keys=2,expires=1,avg_ttl="));
  EXPECT_EQ(InfoValue(ks, "db3"), "");
  ASSERT_EQ(Run({"SELECT", "3"}), "OK");
  ASSERT_EQ(Run({"SET", "c", "1"}), "OK");
  ks = Run({"INFO", "keyspace"}).str;
  EXPECT_THAT(InfoValue(ks, "db0"), StartsWith("keys=2,expires=1,avg_ttl="));
  EXPECT_EQ(InfoValue(ks, "db3"), "keys=1,expires=0,avg_ttl=0");
  EXPECT_LT(ks.find("db0:"), ks.find("db3:"));
}

TEST_F(ServerCommandsTest, InfoCounters) {
  ASSERT_EQ(Run({"SET", "a", "1"}), "OK");
  int64_t hits = Stat("keyspace_hits");
  int64_t misses = Stat("keyspace_misses");
  int64_t expired = Stat("expired_keys");
  ASSERT_GE(hits, 0);
  EXPECT_EQ(Run({"GET", "a"}), "1");
  EXPECT_TRUE(Run({"GET", "zz"}).is_null());
  EXPECT_EQ(Stat("keyspace_hits"), hits + 1);
  EXPECT_EQ(Stat("keyspace_misses"), misses + 1);
  // A key that expires and is then read: one expired key, one more miss.
  ASSERT_EQ(Run({"SET", "e", "1", "PX", "1"}), "OK");
  bool gone = false;
  for (int i = 0; i < 10000 && !gone; ++i) {
    gone = Run({"EXISTS", "e"}) == int64_t{0};
    if (!gone) usleep(1000);
  }
  ASSERT_TRUE(gone);
  EXPECT_EQ(Stat("expired_keys"), expired + 1);
  int64_t processed = Stat("total_commands_processed");
  Run({"PING"});
  EXPECT_GE(Stat("total_commands_processed"), processed + 2);  // PING and the INFO before
  EXPECT_GE(Stat("total_connections_received"), 1);
}

TEST_F(ServerCommandsTest, DebugPopulate) {
  EXPECT_EQ(Run({"DEBUG", "POPULATE", "10"}), "OK");
  EXPECT_EQ(Run({"DBSIZE"}), 10);
  EXPECT_EQ(Run({"GET", "key:0"}), "value:0");
  EXPECT_EQ(Run({"GET", "key:9"}), "value:9");
  EXPECT_TRUE(Run({"GET", "key:10"}).is_null());
  std::vector<size_t> sizes = SizesPerShard();
  EXPECT_GT(sizes[0], 0u);
  EXPECT_GT(sizes[1], 0u);
  // Prefix and size: values are cut or padded with zero bytes.
  EXPECT_EQ(Run({"DEBUG", "POPULATE", "5", "p", "3"}), "OK");
  EXPECT_EQ(Run({"GET", "p:0"}), "val");
  EXPECT_EQ(Run({"GET", "p:4"}), "val");
  EXPECT_EQ(Run({"DEBUG", "POPULATE", "3", "q", "20"}), "OK");
  EXPECT_EQ(Run({"GET", "q:1"}), std::string("value:1") + std::string(13, '\0'));
  EXPECT_EQ(Run({"DEBUG", "POPULATE", "2", "s", "0"}), "OK");
  EXPECT_EQ(Run({"GET", "s:0"}), "value:0");
  // Existing keys are left alone.
  ASSERT_EQ(Run({"SET", "key:1", "mine"}), "OK");
  EXPECT_EQ(Run({"DEBUG", "POPULATE", "12"}), "OK");
  EXPECT_EQ(Run({"GET", "key:1"}), "mine");
  EXPECT_EQ(Run({"GET", "key:11"}), "value:11");
  EXPECT_EQ(Run({"DBSIZE"}), 12 + 5 + 3 + 2);
  EXPECT_EQ(Run({"DEBUG", "POPULATE", "0"}), "OK");
  // Into the selected database.
  ASSERT_EQ(Run({"SELECT", "4"}), "OK");
  EXPECT_EQ(Run({"DEBUG", "POPULATE", "1000", "x"}), "OK");
  EXPECT_EQ(Run({"DBSIZE"}), 1000);
  sizes = SizesPerShard(4);
  EXPECT_GT(sizes[0], 300u);
  EXPECT_GT(sizes[1], 300u);
}

TEST_F(ServerCommandsTest, DebugErrors) {
  constexpr char kRange[] = "ERR value is out of range, must be positive";
  EXPECT_EQ(Err(Run({"DEBUG", "POPULATE", "-1"})), kRange);
  EXPECT_EQ(Err(Run({"DEBUG", "POPULATE", "abc"})), kRange);
  EXPECT_EQ(Err(Run({"DEBUG", "POPULATE", "3", "s", "-1"})), kRange);
  EXPECT_EQ(Err(Run({"DEBUG", "POPULATE"})),
            "ERR unknown subcommand or wrong number of arguments for 'POPULATE'. Try DEBUG HELP.");
  EXPECT_EQ(Err(Run({"DEBUG", "populate", "1", "a", "1", "x"})),
            "ERR unknown subcommand or wrong number of arguments for 'populate'. Try DEBUG HELP.");
  EXPECT_EQ(Err(Run({"DEBUG", "foo"})),
            "ERR unknown subcommand or wrong number of arguments for 'foo'. Try DEBUG HELP.");
  EXPECT_EQ(Err(Run({"DEBUG"})), "ERR wrong number of arguments for 'debug' command");
  EXPECT_EQ(Run({"DBSIZE"}), 0);
}

TEST_F(ServerCommandsTest, DebugObject) {
  EXPECT_EQ(Err(Run({"DEBUG", "OBJECT", "nokey"})), "ERR no such key");
  ASSERT_EQ(Run({"SET", "o", "12345"}), "OK");
  RespValue v = Run({"DEBUG", "OBJECT", "o"});
  ASSERT_EQ(v.type, RespValue::Type::kSimple) << v;
  EXPECT_THAT(v.str, StartsWith("Value at:"));
  EXPECT_THAT(v.str, HasSubstr(" refcount:1 encoding:int serializedlength:3"));
  ASSERT_EQ(Run({"SET", "o2", "hello"}), "OK");
  EXPECT_THAT(Run({"DEBUG", "OBJECT", "o2"}).str,
              HasSubstr(" refcount:1 encoding:embstr serializedlength:6"));
}

TEST_F(ServerCommandsTest, MemoryUsage) {
  EXPECT_TRUE(Run({"MEMORY", "USAGE", "nokey"}).is_null());
  ASSERT_EQ(Run({"SET", "small", "hello"}), "OK");
  ASSERT_EQ(Run({"SET", "big", std::string(10000, 'x')}), "OK");
  RespValue small = Run({"MEMORY", "USAGE", "small"});
  RespValue big = Run({"MEMORY", "USAGE", "big", "SAMPLES", "5"});
  ASSERT_EQ(small.type, RespValue::Type::kInt);
  ASSERT_EQ(big.type, RespValue::Type::kInt);
  EXPECT_GT(small.num, 0);
  EXPECT_GE(big.num, 10000);
  EXPECT_LT(small.num, big.num);
  EXPECT_EQ(Err(Run({"MEMORY", "USAGE", "small", "SAMPLES"})), kSyntax);
  EXPECT_EQ(Err(Run({"MEMORY", "USAGE", "small", "SAMPLES", "x"})), kNotInt);
  EXPECT_EQ(Err(Run({"MEMORY", "USAGE", "small", "foo"})), kSyntax);
  EXPECT_EQ(Err(Run({"MEMORY", "USAGE"})),
            "ERR wrong number of arguments for 'memory|usage' command");
}

}  // namespace
}  // namespace dashkv
