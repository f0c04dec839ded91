// Connection command tests (PING, ECHO, HELLO, SELECT, AUTH/requirepass, CLIENT, QUIT, RESET)
// against a real 2-shard server. Expected replies were taken from redis-server 7.0.15 (same
// commands run by hand, CLIENT SETINFO from Redis 7.2), not from dashkv's output.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "tests/testing/test_server.h"

namespace dashkv {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;
using testing::RespClient;
using testing::RespValue;
using testing::TestServer;
using Type = RespValue::Type;

constexpr char kNoAuth[] = "NOAUTH Authentication required.";
constexpr char kWrongPass[] = "WRONGPASS invalid username-password pair or user is disabled.";

// Returns the error text of `v`, or "<not an error: ...>".
std::string Err(const RespValue& v) {
  if (v.is_error()) return v.str;
  std::ostringstream os;
  os << "<not an error: " << v << ">";
  return os.str();
}

// Returns the value of `field` in a CLIENT LIST/INFO line ("" when absent).
std::string ClientField(const std::string& line, std::string_view field) {
  std::string needle = " " + std::string(field) + "=";
  std::string text = " " + line;
  size_t pos = text.find(needle);
  if (pos == std::string::npos) return "";
  size_t start = pos + needle.size();
  size_t end = text.find_first_of(" \n", start);
  return text.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

// Returns the value under `key` in a HELLO reply (map in RESP3, flat array in RESP2).
const RespValue* HelloField(const RespValue& hello, std::string_view key) {
  for (size_t i = 0; i + 1 < hello.elems.size(); i += 2) {
    if (hello.elems[i].str == key) return &hello.elems[i + 1];
  }
  return nullptr;
}

class ConnectionCommandsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    c_ = srv_.Connect();
    ASSERT_TRUE(c_->connected());
  }
  RespValue Run(std::initializer_list<std::string_view> args) { return c_->Run(args); }
  int64_t MyId(RespClient& c) { return c.Run({"CLIENT", "ID"}).num; }

  TestServer srv_{2};
  std::unique_ptr<RespClient> c_;
};

TEST_F(ConnectionCommandsTest, PingEcho) {
  EXPECT_EQ(Run({"PING"}), "PONG");
  EXPECT_EQ(Run({"PING"}).type, Type::kSimple);
  EXPECT_EQ(Run({"PING", "hello"}), "hello");
  EXPECT_EQ(Run({"PING", "hello"}).type, Type::kBulk);
  EXPECT_EQ(Err(Run({"PING", "a", "b"})), "ERR wrong number of arguments for 'ping' command");
  std::string bin("a\0b\r\n", 5);
  EXPECT_EQ(Run({"ECHO", bin}), bin);
  EXPECT_EQ(Run({"ECHO", ""}), "");
  EXPECT_EQ(Err(Run({"ECHO"})), "ERR wrong number of arguments for 'echo' command");
  EXPECT_EQ(Err(Run({"ECHO", "a", "b"})), "ERR wrong number of arguments for 'echo' command");
}

TEST_F(ConnectionCommandsTest, Hello3MapReplyAndResp3Replies) {
  int64_t id = MyId(*c_);
  RespValue h = Run({"HELLO", "3"});
  ASSERT_EQ(h.type, Type::kMap) << h;
  ASSERT_EQ(h.elems.size(), 14u);
  ASSERT_NE(HelloField(h, "server"), nullptr);
  EXPECT_EQ(*HelloField(h, "server"), "redis");
  EXPECT_THAT(HelloField(h, "version")->str, StartsWith("7."));
  EXPECT_EQ(*HelloField(h, "proto"), 3);
  EXPECT_EQ(*HelloField(h, "id"), id);
  EXPECT_EQ(*HelloField(h, "mode"), "standalone");
  EXPECT_EQ(*HelloField(h, "role"), "master");
  EXPECT_EQ(HelloField(h, "modules")->type, Type::kArray);
  EXPECT_TRUE(HelloField(h, "modules")->elems.empty());
  // RESP3 replies from now on: null, maps.
  RespValue null = Run({"GET", "nokey"});
  EXPECT_TRUE(null.is_null());
  EXPECT_EQ(Run({"CONFIG", "GET", "maxmemory"}).type, Type::kMap);
  // Replies of keys on both shards arrive in RESP3 too (the shards' builders follow).
  EXPECT_EQ(Run({"SET", "a", "1"}), "OK");
  EXPECT_EQ(Run({"SET", "b", "1"}), "OK");
  EXPECT_EQ(Run({"INCRBYFLOAT", "a", "1.5"}), "2.5");
  // HELLO without a version keeps the current one.
  RespValue again = Run({"HELLO"});
  EXPECT_EQ(again.type, Type::kMap);
  EXPECT_EQ(*HelloField(again, "proto"), 3);
  // Back to RESP2: a flat array, nil bulk.
  RespValue h2 = Run({"HELLO", "2"});
  ASSERT_EQ(h2.type, Type::kArray);
  ASSERT_EQ(h2.elems.size(), 14u);
  EXPECT_EQ(*HelloField(h2, "proto"), 2);
  EXPECT_EQ(Run({"CONFIG", "GET", "maxmemory"}).type, Type::kArray);
}

TEST_F(ConnectionCommandsTest, HelloErrorsAndSetName) {
  EXPECT_EQ(Err(Run({"HELLO", "4"})), "NOPROTO unsupported protocol version");
  EXPECT_EQ(Err(Run({"HELLO", "1"})), "NOPROTO unsupported protocol version");
  EXPECT_EQ(Err(Run({"HELLO", "abc"})), "ERR Protocol version is not an integer or out of range");
  EXPECT_EQ(Err(Run({"HELLO", "3", "foo"})), "ERR Syntax error in HELLO option 'foo'");
  EXPECT_EQ(Err(Run({"HELLO", "3", "auth", "default"})),
            "ERR Syntax error in HELLO option 'auth'");
  EXPECT_EQ(Err(Run({"HELLO", "3", "SETNAME"})), "ERR Syntax error in HELLO option 'SETNAME'");
  EXPECT_EQ(Err(Run({"HELLO", "3", "SETNAME", "a b"})),
            "ERR Client names cannot contain spaces, newlines or special characters.");
  // Failed HELLOs changed nothing: still RESP2, no name.
  EXPECT_EQ(Run({"CONFIG", "GET", "maxmemory"}).type, Type::kArray);
  EXPECT_TRUE(Run({"CLIENT", "GETNAME"}).is_null());
  RespValue h = Run({"HELLO", "3", "SETNAME", "foo"});
  EXPECT_EQ(h.type, Type::kMap);
  EXPECT_EQ(Run({"CLIENT", "GETNAME"}), "foo");
  // Without requirepass, HELLO AUTH accepts the default user with any password.
  EXPECT_EQ(Run({"HELLO", "2", "AUTH", "default", "whatever"}).type, Type::kArray);
  EXPECT_EQ(Err(Run({"HELLO", "2", "AUTH", "other", "whatever"})), kWrongPass);
}

TEST_F(ConnectionCommandsTest, Select) {
  EXPECT_EQ(Run({"SET", "k", "db0"}), "OK");
  EXPECT_EQ(Run({"SELECT", "15"}), "OK");
  EXPECT_TRUE(Run({"GET", "k"}).is_null());
  EXPECT_EQ(Run({"SET", "k", "db15"}), "OK");
  EXPECT_EQ(Run({"SELECT", "0"}), "OK");
  EXPECT_EQ(Run({"GET", "k"}), "db0");
  EXPECT_EQ(Err(Run({"SELECT", "16"})), "ERR DB index is out of range");
  EXPECT_EQ(Err(Run({"SELECT", "-1"})), "ERR DB index is out of range");
  EXPECT_EQ(Err(Run({"SELECT", "abc"})), "ERR value is not an integer or out of range");
  EXPECT_EQ(Err(Run({"SELECT"})), "ERR wrong number of arguments for 'select' command");
  // A failed SELECT keeps the database.
  EXPECT_EQ(Run({"GET", "k"}), "db0");
  // Each connection has its own database.
  auto other = srv_.Connect();
  EXPECT_EQ(other->Run({"SELECT", "15"}), "OK");
  EXPECT_EQ(other->Run({"GET", "k"}), "db15");
  EXPECT_EQ(Run({"GET", "k"}), "db0");
}

TEST_F(ConnectionCommandsTest, AuthWithoutPassword) {
  EXPECT_EQ(Err(Run({"AUTH", "x"})),
            "ERR AUTH <password> called without any password configured for the default user. "
            "Are you sure your configuration is correct?");
  EXPECT_EQ(Err(Run({"AUTH", "a", "b", "c"})), "ERR syntax error");
  EXPECT_EQ(Run({"AUTH", "default", "anything"}), "OK");
  EXPECT_EQ(Err(Run({"AUTH", "nosuchuser", "x"})), kWrongPass);
  EXPECT_EQ(Err(Run({"AUTH"})), "ERR wrong number of arguments for 'auth' command");
}

TEST_F(ConnectionCommandsTest, RequirePass) {
  ASSERT_EQ(Run({"SET", "k", "v"}), "OK");
  ASSERT_EQ(Run({"CONFIG", "SET", "requirepass", "secret"}), "OK");
  // (Redis keeps connections opened before the password authenticated; AUTH is harmless.)
  ASSERT_EQ(Run({"AUTH", "secret"}), "OK");
  EXPECT_EQ(Run({"CONFIG", "GET", "requirepass"}).elems[1], "secret");

  auto c = srv_.Connect();
  EXPECT_EQ(Err(c->Run({"GET", "k"})), kNoAuth);
  EXPECT_EQ(Err(c->Run({"PING"})), kNoAuth);
  EXPECT_EQ(Err(c->Run({"DEL", "k", "other"})), kNoAuth);  // multi-shard form
  EXPECT_EQ(Err(c->Run({"DBSIZE"})), kNoAuth);
  EXPECT_EQ(Err(c->Run({"HELLO", "3"})),
            "NOAUTH HELLO must be called with the client already authenticated, otherwise the "
            "HELLO AUTH <user> <pass> option can be used to authenticate the client and select "
            "the RESP protocol version at the same time");
  EXPECT_EQ(Err(c->Run({"AUTH", "wrong"})), kWrongPass);
  EXPECT_EQ(Err(c->Run({"AUTH", "foo", "secret"})), kWrongPass);
  EXPECT_EQ(Err(c->Run({"GET", "k"})), kNoAuth);
  EXPECT_EQ(c->Run({"AUTH", "secret"}), "OK");
  EXPECT_EQ(c->Run({"GET", "k"}), "v");
  EXPECT_EQ(c->Run({"EXISTS", "k"}), 1);

  // AUTH and a command in one pipeline.
  auto p = srv_.Connect();
  p->SendRaw(RespClient::Encode({"GET", "k"}) + RespClient::Encode({"AUTH", "default", "secret"}) +
             RespClient::Encode({"GET", "k"}));
  EXPECT_EQ(Err(p->Read()), kNoAuth);
  EXPECT_EQ(p->Read(), "OK");
  EXPECT_EQ(p->Read(), "v");

  // HELLO AUTH authenticates and switches protocol at once.
  auto h = srv_.Connect();
  EXPECT_EQ(Err(h->Run({"HELLO", "3", "AUTH", "default", "wrong"})), kWrongPass);
  EXPECT_EQ(Err(h->Run({"GET", "k"})), kNoAuth);
  RespValue hello = h->Run({"HELLO", "3", "AUTH", "default", "secret"});
  EXPECT_EQ(hello.type, Type::kMap) << hello;
  EXPECT_EQ(h->Run({"GET", "k"}), "v");
  // RESET drops the authentication again.
  EXPECT_EQ(h->Run({"RESET"}), "RESET");
  EXPECT_EQ(Err(h->Run({"GET", "k"})), kNoAuth);
  // QUIT needs no authentication.
  EXPECT_EQ(h->Run({"QUIT"}), "OK");
  EXPECT_EQ(h->Read().type, Type::kClosed);

  ASSERT_EQ(Run({"CONFIG", "SET", "requirepass", ""}), "OK");
  auto free_conn = srv_.Connect();
  EXPECT_EQ(free_conn->Run({"GET", "k"}), "v");
}

// Redis keeps a connection opened before CONFIG SET requirepass authenticated (it was
// authenticated as the password-less default user when it connected). dashkv's ConnState
// starts unauthenticated, so the setting connection itself gets NOAUTH. Reported to the lead
// (the fix belongs in Server::OnConnect); enable once fixed.
TEST_F(ConnectionCommandsTest, RequirePassKeepsOpenConnections) {
  auto before = srv_.Connect();
  ASSERT_EQ(before->Run({"PING"}), "PONG");
  ASSERT_EQ(Run({"CONFIG", "SET", "requirepass", "secret"}), "OK");
  EXPECT_EQ(Run({"PING"}), "PONG");
  EXPECT_EQ(before->Run({"PING"}), "PONG");
  EXPECT_EQ(Err(srv_.Connect()->Run({"PING"})), kNoAuth);
  EXPECT_EQ(Run({"CONFIG", "SET", "requirepass", ""}), "OK");
}

TEST_F(ConnectionCommandsTest, ClientIdNames) {
  int64_t id = MyId(*c_);
  EXPECT_GT(id, 0);
  auto other = srv_.Connect();
  int64_t other_id = MyId(*other);
  EXPECT_NE(id, other_id);
  EXPECT_EQ(MyId(*c_), id);
  EXPECT_TRUE(Run({"CLIENT", "GETNAME"}).is_null());
  EXPECT_EQ(Run({"CLIENT", "SETNAME", "conn-1"}), "OK");
  EXPECT_EQ(Run({"CLIENT", "GETNAME"}), "conn-1");
  EXPECT_TRUE(other->Run({"CLIENT", "GETNAME"}).is_null());
  EXPECT_EQ(Err(Run({"CLIENT", "SETNAME", "a b"})),
            "ERR Client names cannot contain spaces, newlines or special characters.");
  EXPECT_EQ(Err(Run({"CLIENT", "SETNAME", "a\nb"})),
            "ERR Client names cannot contain spaces, newlines or special characters.");
  EXPECT_EQ(Run({"CLIENT", "GETNAME"}), "conn-1");
  // An empty name clears it.
  EXPECT_EQ(Run({"CLIENT", "SETNAME", ""}), "OK");
  EXPECT_TRUE(Run({"CLIENT", "GETNAME"}).is_null());
  EXPECT_EQ(Err(Run({"CLIENT", "GETNAME", "x"})),
            "ERR wrong number of arguments for 'client|getname' command");
  EXPECT_EQ(Err(Run({"CLIENT", "ID", "x"})), "ERR wrong number of arguments for 'client|id' command");
  EXPECT_EQ(Err(Run({"CLIENT", "foo"})), "ERR unknown subcommand 'foo'. Try CLIENT HELP.");
  EXPECT_EQ(Err(Run({"CLIENT"})), "ERR wrong number of arguments for 'client' command");
  EXPECT_EQ(Err(Run({"CLIENT", "NO-EVICT", "maybe"})), "ERR syntax error");
}

TEST_F(ConnectionCommandsTest, ClientInfoAndList) {
  int64_t id = MyId(*c_);
  ASSERT_EQ(Run({"CLIENT", "SETNAME", "foo"}), "OK");
  ASSERT_EQ(Run({"SELECT", "3"}), "OK");
  std::string info = Run({"CLIENT", "INFO"}).str;
  EXPECT_THAT(info, StartsWith("id=" + std::to_string(id) + " addr=127.0.0.1:"));
  EXPECT_EQ(info.back(), '\n');
  EXPECT_EQ(ClientField(info, "name"), "foo");
  EXPECT_EQ(ClientField(info, "db"), "3");
  EXPECT_EQ(ClientField(info, "flags"), "N");
  EXPECT_EQ(ClientField(info, "cmd"), "client|info");
  EXPECT_EQ(ClientField(info, "user"), "default");
  EXPECT_EQ(ClientField(info, "resp"), "2");
  EXPECT_THAT(ClientField(info, "laddr"), StartsWith("127.0.0.1:"));

  // Connections on every engine are listed.
  std::vector<std::unique_ptr<RespClient>> others;
  std::vector<int64_t> ids = {id};
  for (int i = 0; i < 4; ++i) {
    others.push_back(srv_.Connect());
    ids.push_back(MyId(*others.back()));
  }
  std::string list = Run({"CLIENT", "LIST"}).str;
  for (int64_t i : ids) EXPECT_THAT(list, HasSubstr("id=" + std::to_string(i) + " ")) << list;
  EXPECT_THAT(Run({"CLIENT", "LIST", "TYPE", "normal"}).str,
              HasSubstr("id=" + std::to_string(ids[3]) + " "));
  std::string one = Run({"CLIENT", "LIST", "ID", std::to_string(ids[2])}).str;
  EXPECT_THAT(one, StartsWith("id=" + std::to_string(ids[2]) + " "));
  EXPECT_EQ(std::count(one.begin(), one.end(), '\n'), 1);
  std::string two = Run({"CLIENT", "LIST", "ID", std::to_string(ids[1]), std::to_string(ids[4]),
                         "999999"}).str;
  EXPECT_EQ(std::count(two.begin(), two.end(), '\n'), 2);
  EXPECT_EQ(Err(Run({"CLIENT", "LIST", "TYPE", "foo"})), "ERR Unknown client type 'foo'");
  EXPECT_EQ(Err(Run({"CLIENT", "LIST", "ID", "abc"})), "ERR Invalid client ID");
  EXPECT_EQ(Err(Run({"CLIENT", "INFO", "x"})),
            "ERR wrong number of arguments for 'client|info' command");
}

TEST_F(ConnectionCommandsTest, ClientSetInfo) {
  EXPECT_EQ(Run({"CLIENT", "SETINFO", "LIB-NAME", "redis-py"}), "OK");
  EXPECT_EQ(Run({"CLIENT", "SETINFO", "lib-ver", "5.0"}), "OK");
  std::string info = Run({"CLIENT", "INFO"}).str;
  EXPECT_EQ(ClientField(info, "lib-name"), "redis-py");
  EXPECT_EQ(ClientField(info, "lib-ver"), "5.0");
  EXPECT_EQ(Err(Run({"CLIENT", "SETINFO", "foo", "bar"})), "ERR Unrecognized option 'foo'");
  EXPECT_EQ(Err(Run({"CLIENT", "SETINFO", "foo", "a b"})), "ERR Unrecognized option 'foo'");
  EXPECT_EQ(Err(Run({"CLIENT", "SETINFO", "lib-name", "a b"})),
            "ERR lib-name cannot contain spaces, newlines or special characters.");
  EXPECT_EQ(Err(Run({"CLIENT", "SETINFO", "lib-name"})),
            "ERR wrong number of arguments for 'client|setinfo' command");
}

TEST_F(ConnectionCommandsTest, ClientKill) {
  auto victim = srv_.Connect();
  int64_t victim_id = MyId(*victim);
  EXPECT_EQ(Run({"CLIENT", "KILL", "ID", std::to_string(victim_id)}), 1);
  EXPECT_EQ(victim->Read().type, Type::kClosed);
  EXPECT_EQ(Run({"CLIENT", "KILL", "ID", "999999"}), 0);
  EXPECT_EQ(Err(Run({"CLIENT", "KILL", "ID", "0"})), "ERR client-id should be greater than 0");
  EXPECT_EQ(Err(Run({"CLIENT", "KILL", "1.2.3.4:5"})), "ERR No such client");
  EXPECT_EQ(Err(Run({"CLIENT", "KILL", "foo", "bar"})), "ERR syntax error");
  // The old form by address.
  auto victim2 = srv_.Connect();
  std::string addr = ClientField(victim2->Run({"CLIENT", "INFO"}).str, "addr");
  ASSERT_FALSE(addr.empty());
  EXPECT_EQ(Run({"CLIENT", "KILL", addr}), "OK");
  EXPECT_EQ(victim2->Read().type, Type::kClosed);
  // SKIPME: by default the caller is spared.
  int64_t me = MyId(*c_);
  EXPECT_EQ(Run({"CLIENT", "KILL", "ID", std::to_string(me)}), 0);
  EXPECT_EQ(Run({"PING"}), "PONG");
  EXPECT_EQ(Err(Run({"CLIENT", "KILL"})), "ERR wrong number of arguments for 'client|kill' command");
}

TEST_F(ConnectionCommandsTest, QuitClosesAfterReplying) {
  auto c = srv_.Connect();
  EXPECT_EQ(c->Run({"QUIT"}), "OK");
  EXPECT_EQ(c->Read().type, Type::kClosed);
  // Commands pipelined after QUIT are not run.
  auto p = srv_.Connect();
  p->SendRaw(RespClient::Encode({"SET", "q", "1"}) + RespClient::Encode({"QUIT"}) +
             RespClient::Encode({"SET", "q", "2"}));
  EXPECT_EQ(p->Read(), "OK");
  EXPECT_EQ(p->Read(), "OK");
  EXPECT_EQ(p->Read().type, Type::kClosed);
  EXPECT_EQ(Run({"GET", "q"}), "1");
}

TEST_F(ConnectionCommandsTest, Reset) {
  ASSERT_EQ(Run({"HELLO", "3"}).type, Type::kMap);
  ASSERT_EQ(Run({"SELECT", "4"}), "OK");
  ASSERT_EQ(Run({"CLIENT", "SETNAME", "foo"}), "OK");
  EXPECT_EQ(Run({"RESET"}), "RESET");
  EXPECT_TRUE(Run({"CLIENT", "GETNAME"}).is_null());
  std::string info = Run({"CLIENT", "INFO"}).str;
  EXPECT_EQ(ClientField(info, "db"), "0");
  EXPECT_EQ(ClientField(info, "resp"), "2");
  EXPECT_EQ(Run({"CONFIG", "GET", "maxmemory"}).type, Type::kArray);
  EXPECT_EQ(Err(Run({"RESET", "x"})), "ERR wrong number of arguments for 'reset' command");
}

}  // namespace
}  // namespace dashkv
