// RENAME, RENAMENX, COPY and MOVE against a real 2-shard server, with key pairs on one shard and
// on two shards. Expected replies were taken from redis-server 7.0.15 (same commands run by
// hand), not from dashkv's output.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "tests/testing/test_server.h"

namespace dashkv {
namespace {

using testing::RespValue;
using testing::TestServer;

constexpr char kNoSuchKey[] = "ERR no such key";
constexpr char kSame[] = "ERR source and destination objects are the same";
constexpr char kDbRange[] = "ERR DB index is out of range";
constexpr char kNotInt[] = "ERR value is not an integer or out of range";
constexpr char kIntRange[] =
    "ERR value is out of range, value must between -2147483648 and 2147483647";
constexpr char kSyntax[] = "ERR syntax error";

std::string Err(const RespValue& v) {
  if (v.is_error()) return v.str;
  std::ostringstream os;
  os << "<not an error: " << v << ">";
  return os.str();
}

std::vector<std::string> Sorted(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  return v;
}

// A source/destination pair of key names and whether they share a shard.
struct KeyPair {
  std::string src, dst;
  const char* what;
};

class KeyMoveCommandsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    c_ = srv_.Connect();
    ASSERT_TRUE(c_->connected());
  }
  RespValue Run(std::initializer_list<std::string_view> args) { return c_->Run(args); }
  RespValue Run(const std::vector<std::string>& args) { return c_->Run(args); }
  ShardSet& shards() { return srv_.server().shard_set(); }

  // Returns a key named prefix<i> owned by shard `sid`.
  std::string KeyOnShard(unsigned sid, const std::string& prefix) {
    for (int i = 0;; ++i) {
      std::string k = prefix + std::to_string(i);
      if (shards().ShardOf(k) == sid) return k;
    }
  }
  // Returns one same-shard pair (a hash tag) and one cross-shard pair with this prefix.
  std::vector<KeyPair> Pairs(const std::string& p) {
    KeyPair same{"{" + p + "}src", "{" + p + "}dst", "same shard"};
    KeyPair cross{KeyOnShard(0, p + "s"), KeyOnShard(1, p + "d"), "cross shard"};
    EXPECT_NE(shards().ShardOf(cross.src), shards().ShardOf(cross.dst));
    return {same, cross};
  }

  TestServer srv_{2};
  std::unique_ptr<testing::RespClient> c_;
};

TEST_F(KeyMoveCommandsTest, RenameMovesValueAndTtl) {
  for (const KeyPair& k : Pairs("r")) {
    SCOPED_TRACE(k.what);
    ASSERT_EQ(Run({"SET", k.src, "v", "EX", "100"}), "OK");
    EXPECT_EQ(Run({"RENAME", k.src, k.dst}), "OK");
    EXPECT_EQ(Run({"EXISTS", k.src}), 0);
    EXPECT_EQ(Run({"GET", k.dst}), "v");
    RespValue ttl = Run({"TTL", k.dst});
    EXPECT_TRUE(ttl.num > 90 && ttl.num <= 100) << ttl;
    // Overwrites a destination of another type, and drops its TTL when the source has none.
    ASSERT_EQ(Run({"RPUSH", k.src, "a", "b"}), 2);
    EXPECT_EQ(Run({"RENAME", k.src, k.dst}), "OK");
    EXPECT_EQ(Run({"TYPE", k.dst}), "list");
    EXPECT_EQ(Run({"TTL", k.dst}), -1);
    EXPECT_EQ(Run({"LRANGE", k.dst, "0", "-1"}).strings(), (std::vector<std::string>{"a", "b"}));
    EXPECT_EQ(Err(Run({"RENAME", k.src, k.dst})), kNoSuchKey);
    EXPECT_EQ(Run({"DEL", k.dst}), 1);
  }
}

TEST_F(KeyMoveCommandsTest, RenameSameKey) {
  EXPECT_EQ(Err(Run({"RENAME", "k", "k"})), kNoSuchKey);
  EXPECT_EQ(Err(Run({"RENAMENX", "k", "k"})), kNoSuchKey);
  ASSERT_EQ(Run({"SET", "k", "v"}), "OK");
  EXPECT_EQ(Run({"RENAME", "k", "k"}), "OK");
  EXPECT_EQ(Run({"RENAMENX", "k", "k"}), 0);
  EXPECT_EQ(Run({"GET", "k"}), "v");
}

TEST_F(KeyMoveCommandsTest, RenameNx) {
  for (const KeyPair& k : Pairs("n")) {
    SCOPED_TRACE(k.what);
    EXPECT_EQ(Err(Run({"RENAMENX", k.src, k.dst})), kNoSuchKey);
    ASSERT_EQ(Run({"SET", k.src, "1"}), "OK");
    ASSERT_EQ(Run({"SET", k.dst, "2"}), "OK");
    EXPECT_EQ(Run({"RENAMENX", k.src, k.dst}), 0);
    EXPECT_EQ(Run({"GET", k.src}), "1");
    EXPECT_EQ(Run({"GET", k.dst}), "2");
    ASSERT_EQ(Run({"DEL", k.dst}), 1);
    ASSERT_EQ(Run({"PEXPIRE", k.src, "100000"}), 1);
    EXPECT_EQ(Run({"RENAMENX", k.src, k.dst}), 1);
    EXPECT_EQ(Run({"EXISTS", k.src}), 0);
    EXPECT_EQ(Run({"GET", k.dst}), "1");
    EXPECT_GT(Run({"PTTL", k.dst}).num, 90000);
    EXPECT_EQ(Run({"DEL", k.dst}), 1);
  }
}

// Fills `key` with a value of `type` in the encoding `encoding` (Redis's default thresholds).
std::vector<std::string> FillCommand(const std::string& type, const std::string& encoding,
                                     const std::string& key, int* n) {
  std::vector<std::string> cmd;
  bool big = encoding == "quicklist" || encoding == "hashtable" || encoding == "skiplist";
  *n = big ? 700 : 5;
  std::string pad = big && type == "list" ? std::string(40, 'x') : "";
  if (type == "list") cmd = {"RPUSH", key};
  if (type == "hash") cmd = {"HSET", key};
  if (type == "set") cmd = {"SADD", key};
  if (type == "zset") cmd = {"ZADD", key};
  for (int i = 0; i < *n; ++i) {
    std::string m = (type == "set" && encoding == "intset") ? std::to_string(i * 3)
                                                            : "m" + std::to_string(i) + pad;
    if (type == "zset") cmd.push_back(std::to_string(i % 7) + ".5");
    cmd.push_back(m);
    if (type == "hash") cmd.push_back("v" + std::to_string(i));
  }
  return cmd;
}

// Returns the content of `key` in a comparable form.
std::vector<std::string> Content(testing::RespClient& c, const std::string& type,
                                 const std::string& key) {
  if (type == "list") return c.Run({"LRANGE", key, "0", "-1"}).strings();
  if (type == "hash") return Sorted(c.Run({"HGETALL", key}).strings());
  if (type == "set") return Sorted(c.Run({"SMEMBERS", key}).strings());
  return c.Run({"ZRANGE", key, "0", "-1", "WITHSCORES"}).strings();
}

TEST_F(KeyMoveCommandsTest, CopyEveryTypeAndEncoding) {
  const std::vector<std::pair<std::string, std::string>> kinds = {
      {"list", "listpack"}, {"list", "quicklist"}, {"hash", "listpack"},
      {"hash", "hashtable"}, {"set", "intset"},    {"set", "listpack"},
      {"set", "hashtable"},  {"zset", "listpack"}, {"zset", "skiplist"}};
  for (const auto& [type, encoding] : kinds) {
    for (const KeyPair& k : Pairs(type + encoding)) {
      SCOPED_TRACE(type + " " + encoding + " " + k.what);
      int n = 0;
      ASSERT_EQ(Run(FillCommand(type, encoding, k.src, &n)), n);
      ASSERT_EQ(Run({"OBJECT", "ENCODING", k.src}), encoding);
      std::vector<std::string> before = Content(*c_, type, k.src);
      EXPECT_EQ(Run({"COPY", k.src, k.dst}), 1);
      EXPECT_EQ(Run({"TYPE", k.dst}), type);
      EXPECT_EQ(Run({"OBJECT", "ENCODING", k.dst}), encoding);
      EXPECT_EQ(Content(*c_, type, k.dst), before);
      // A deep copy: changing or deleting the source leaves the copy alone.
      ASSERT_EQ(Run({"DEL", k.src}), 1);
      EXPECT_EQ(Content(*c_, type, k.dst), before);
      // RENAME moves the same value on (and back across shards).
      EXPECT_EQ(Run({"RENAME", k.dst, k.src}), "OK");
      EXPECT_EQ(Content(*c_, type, k.src), before);
      EXPECT_EQ(Run({"OBJECT", "ENCODING", k.src}), encoding);
      ASSERT_EQ(Run({"DEL", k.src}), 1);
    }
  }
}

TEST_F(KeyMoveCommandsTest, CopyStringsKeepTheirEncoding) {
  for (const KeyPair& k : Pairs("str")) {
    SCOPED_TRACE(k.what);
    for (const std::string& v : {std::string("12345"), std::string("short"),
                                 std::string(100, 'z')}) {
      ASSERT_EQ(Run({"SET", k.src, v}), "OK");
      std::string enc = Run({"OBJECT", "ENCODING", k.src}).str;
      EXPECT_EQ(Run({"COPY", k.src, k.dst, "REPLACE"}), 1);
      EXPECT_EQ(Run({"GET", k.dst}), v);
      EXPECT_EQ(Run({"OBJECT", "ENCODING", k.dst}), enc);
    }
    ASSERT_EQ(Run({"APPEND", k.src, "!"}), 101);
    EXPECT_EQ(Run({"COPY", k.src, k.dst, "REPLACE"}), 1);
    EXPECT_EQ(Run({"OBJECT", "ENCODING", k.dst}), "raw");
    EXPECT_EQ(Run({"DEL", k.src, k.dst}), 2);
  }
}

TEST_F(KeyMoveCommandsTest, CopyOptionsAndTtl) {
  for (const KeyPair& k : Pairs("c")) {
    SCOPED_TRACE(k.what);
    EXPECT_EQ(Run({"COPY", k.src, k.dst}), 0);  // no source
    ASSERT_EQ(Run({"SET", k.src, "v", "PX", "100000"}), "OK");
    ASSERT_EQ(Run({"SET", k.dst, "old"}), "OK");
    EXPECT_EQ(Run({"COPY", k.src, k.dst}), 0);  // destination exists
    EXPECT_EQ(Run({"GET", k.dst}), "old");
    EXPECT_EQ(Run({"COPY", k.src, k.dst, "REPLACE"}), 1);
    EXPECT_EQ(Run({"GET", k.dst}), "v");
    EXPECT_GT(Run({"PTTL", k.dst}).num, 90000);
    EXPECT_GT(Run({"PTTL", k.src}).num, 90000);
    // Another database: the key keeps its name's shard whatever the database.
    EXPECT_EQ(Run({"COPY", k.src, k.dst, "DB", "3"}), 1);
    EXPECT_EQ(Run({"COPY", k.src, k.dst, "db", "3"}), 0);
    EXPECT_EQ(Run({"COPY", k.src, k.dst, "REPLACE", "DB", "3"}), 1);
    ASSERT_EQ(Run({"SELECT", "3"}), "OK");
    EXPECT_EQ(Run({"GET", k.dst}), "v");
    EXPECT_GT(Run({"PTTL", k.dst}).num, 90000);
    EXPECT_EQ(Run({"EXISTS", k.src}), 0);
    EXPECT_EQ(Run({"FLUSHDB"}), "OK");
    ASSERT_EQ(Run({"SELECT", "0"}), "OK");
    EXPECT_EQ(Run({"DEL", k.src, k.dst}), 2);
  }
}

TEST_F(KeyMoveCommandsTest, CopyErrors) {
  for (const KeyPair& k : Pairs("e")) {
    SCOPED_TRACE(k.what);
    ASSERT_EQ(Run({"SET", k.src, "v"}), "OK");
    EXPECT_EQ(Err(Run({"COPY", k.src, k.dst, "DB", "abc"})), kNotInt);
    EXPECT_EQ(Err(Run({"COPY", k.src, k.dst, "DB", "99999999999"})), kIntRange);
    EXPECT_EQ(Err(Run({"COPY", k.src, k.dst, "DB", "16"})), kDbRange);
    EXPECT_EQ(Err(Run({"COPY", k.src, k.dst, "DB", "-1"})), kDbRange);
    EXPECT_EQ(Err(Run({"COPY", k.src, k.dst, "DB"})), kSyntax);
    EXPECT_EQ(Err(Run({"COPY", k.src, k.dst, "FOO"})), kSyntax);
    EXPECT_EQ(Err(Run({"COPY", k.src, k.dst, "DB", "99", "FOO"})), kDbRange);
    EXPECT_EQ(Err(Run({"COPY", k.src, k.dst, "FOO", "DB", "99"})), kSyntax);
    EXPECT_EQ(Run({"EXISTS", k.dst}), 0);
  }
  EXPECT_EQ(Err(Run({"COPY", "a", "a"})), kSame);
  EXPECT_EQ(Err(Run({"COPY", "a", "a", "DB", "0"})), kSame);
  EXPECT_EQ(Run({"COPY", "a", "a", "DB", "1"}), 0);
  EXPECT_EQ(Err(Run({"COPY", "a"})), "ERR wrong number of arguments for 'copy' command");
}

TEST_F(KeyMoveCommandsTest, Move) {
  ASSERT_EQ(Run({"SADD", "s", "1", "2", "x"}), 3);
  ASSERT_EQ(Run({"EXPIRE", "s", "100"}), 1);
  EXPECT_EQ(Run({"MOVE", "s", "2"}), 1);
  EXPECT_EQ(Run({"EXISTS", "s"}), 0);
  EXPECT_EQ(Run({"MOVE", "s", "2"}), 0);  // missing
  ASSERT_EQ(Run({"SET", "s", "here"}), "OK");
  EXPECT_EQ(Run({"MOVE", "s", "2"}), 0);  // exists in the target
  EXPECT_EQ(Run({"GET", "s"}), "here");
  ASSERT_EQ(Run({"SELECT", "2"}), "OK");
  EXPECT_EQ(Sorted(Run({"SMEMBERS", "s"}).strings()), (std::vector<std::string>{"1", "2", "x"}));
  EXPECT_EQ(Run({"OBJECT", "ENCODING", "s"}), "listpack");
  RespValue ttl = Run({"TTL", "s"});
  EXPECT_TRUE(ttl.num > 90 && ttl.num <= 100) << ttl;
  EXPECT_EQ(Err(Run({"MOVE", "s", "2"})), kSame);
  EXPECT_EQ(Err(Run({"MOVE", "nokey", "2"})), kSame);
  EXPECT_EQ(Err(Run({"MOVE", "s", "x"})), kNotInt);
  EXPECT_EQ(Err(Run({"MOVE", "s", "16"})), kDbRange);
  EXPECT_EQ(Err(Run({"MOVE", "s", "-1"})), kDbRange);
  EXPECT_EQ(Err(Run({"MOVE", "s", "4294967296"})), kIntRange);
  EXPECT_EQ(Run({"FLUSHDB"}), "OK");
}

TEST_F(KeyMoveCommandsTest, CommandInfoKeyPositions) {
  struct Want {
    const char* name;
    int64_t arity, first, last, step;
  };
  for (const Want& w : {Want{"rename", 3, 1, 2, 1}, Want{"renamenx", 3, 1, 2, 1},
                        Want{"copy", -3, 1, 2, 1}, Want{"move", 3, 1, 1, 1},
                        Want{"mset", -3, 1, -1, 2}, Want{"msetnx", -3, 1, -1, 2},
                        Want{"bitop", -4, 2, -1, 1}}) {
    SCOPED_TRACE(w.name);
    RespValue info = Run({"COMMAND", "INFO", w.name});
    ASSERT_EQ(info.elems.size(), 1u);
    const RespValue& e = info.elems[0];
    ASSERT_GE(e.elems.size(), 6u);
    EXPECT_EQ(e.elems[1], w.arity);
    EXPECT_EQ(e.elems[3], w.first);
    EXPECT_EQ(e.elems[4], w.last);
    EXPECT_EQ(e.elems[5], w.step);
    EXPECT_THAT(e.elems[2].strings(), ::testing::Contains("write"));
  }
}

}  // namespace
}  // namespace dashkv
