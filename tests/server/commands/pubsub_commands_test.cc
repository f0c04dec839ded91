// Pub/Sub command tests against a real 2-engine server: subscribers on both engines, publish
// order, receiver counts, patterns, shard channels, RESP2 subscribed mode, RESP3 pushes,
// unsubscribe-all, cleanup on RESET and disconnect, and the pubsub output buffer limit.
// Expected replies were taken from redis-server 7.0.15 (same commands run by hand).
// Connections are handed to the engines round-robin, so consecutive connections live on
// different engines.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "tests/testing/test_server.h"

namespace dashkv {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::UnorderedElementsAre;
using testing::RespClient;
using testing::RespValue;
using testing::TestServer;
using Type = RespValue::Type;

constexpr char kSubscribedModeError[] =
    "ERR Can't execute 'get': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are "
    "allowed in this context";

// Returns an aggregate reply as strings; integers as their decimal text, nil as "(nil)".
std::vector<std::string> Strs(const RespValue& v) {
  std::vector<std::string> out;
  for (const RespValue& e : v.elems) {
    if (e.type == Type::kInt) {
      out.push_back(std::to_string(e.num));
    } else if (e.is_null()) {
      out.push_back("(nil)");
    } else {
      out.push_back(e.str);
    }
  }
  return out;
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

class PubSubCommandsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    c_ = srv_.Connect();
    ASSERT_TRUE(c_->connected());
  }
  RespValue Run(std::initializer_list<std::string_view> args) { return c_->Run(args); }

  // Returns PUBSUB NUMSUB of one channel.
  int64_t NumSub(std::string_view channel) {
    RespValue v = Run({"PUBSUB", "NUMSUB", channel});
    return v.elems.size() == 2 ? v.elems[1].num : -1;
  }
  // Polls `cond` (a disconnect is noticed asynchronously by the server); bounded.
  template <typename F>
  bool Eventually(F cond) {
    for (int i = 0; i < 1000; ++i) {
      if (cond()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return false;
  }

  TestServer srv_{2};
  std::unique_ptr<RespClient> c_;  // the publisher (engine 0)
};

TEST_F(PubSubCommandsTest, SubscribersOnBothEnginesReceiveAndAreCounted) {
  std::vector<std::unique_ptr<RespClient>> subs;
  for (int i = 0; i < 4; ++i) {
    subs.push_back(srv_.Connect());
    EXPECT_THAT(Strs(subs.back()->Run({"SUBSCRIBE", "news"})), ElementsAre("subscribe", "news", "1"));
  }
  EXPECT_EQ(NumSub("news"), 4);
  EXPECT_EQ(Run({"PUBLISH", "news", "hello"}), 4);
  for (auto& s : subs) {
    RespValue m = s->Read();
    EXPECT_EQ(m.type, Type::kArray);
    EXPECT_THAT(Strs(m), ElementsAre("message", "news", "hello"));
  }
  EXPECT_EQ(Run({"PUBLISH", "nobody", "x"}), 0);
  EXPECT_THAT(Strs(Run({"PUBSUB", "CHANNELS"})), ElementsAre("news"));
  EXPECT_THAT(Strs(Run({"PUBSUB", "CHANNELS", "n*"})), ElementsAre("news"));
  EXPECT_TRUE(Run({"PUBSUB", "CHANNELS", "x*"}).elems.empty());
  EXPECT_THAT(Strs(Run({"PUBSUB", "NUMSUB", "news", "none"})),
              ElementsAre("news", "4", "none", "0"));
  EXPECT_THAT(Run({"INFO", "stats"}).str, HasSubstr("pubsub_channels:1\r\n"));
}

TEST_F(PubSubCommandsTest, MessagesOfOnePublisherArriveInOrder) {
  auto sub0 = srv_.Connect();  // engine 1
  auto sub1 = srv_.Connect();  // engine 0
  auto pub2 = srv_.Connect();  // engine 1: a second publisher
  sub0->Run({"SUBSCRIBE", "seq"});
  sub1->Run({"PSUBSCRIBE", "se?"});
  // Both publishers pipeline their messages; each one's order must hold at every subscriber.
  constexpr int kN = 300;
  std::string batch_a, batch_b;
  for (int i = 0; i < kN; ++i) {
    batch_a += RespClient::Encode({"PUBLISH", "seq", "a" + std::to_string(i)});
    batch_b += RespClient::Encode({"PUBLISH", "seq", "b" + std::to_string(i)});
  }
  c_->SendRaw(batch_a);
  pub2->SendRaw(batch_b);
  for (int i = 0; i < kN; ++i) {
    EXPECT_EQ(c_->Read(), 2);
    EXPECT_EQ(pub2->Read(), 2);
  }
  for (RespClient* s : {sub0.get(), sub1.get()}) {
    int next_a = 0, next_b = 0;
    for (int i = 0; i < 2 * kN; ++i) {
      std::string msg = s->Read().elems.back().str;
      int& next = msg[0] == 'a' ? next_a : next_b;
      ASSERT_EQ(msg.substr(1), std::to_string(next)) << msg;
      ++next;
    }
  }
}

TEST_F(PubSubCommandsTest, PatternsAndChannelsBothDeliver) {
  auto sub = srv_.Connect();
  EXPECT_THAT(Strs(sub->Run({"SUBSCRIBE", "hello"})), ElementsAre("subscribe", "hello", "1"));
  EXPECT_THAT(Strs(sub->Run({"PSUBSCRIBE", "h?llo"})), ElementsAre("psubscribe", "h?llo", "2"));
  auto other = srv_.Connect();
  other->Run({"PSUBSCRIBE", "h*"});
  EXPECT_EQ(Run({"PUBSUB", "NUMPAT"}), 2);
  EXPECT_EQ(Run({"PUBLISH", "hello", "m"}), 3);
  std::vector<std::vector<std::string>> got = {Strs(sub->Read()), Strs(sub->Read())};
  EXPECT_THAT(got, UnorderedElementsAre(ElementsAre("message", "hello", "m"),
                                        ElementsAre("pmessage", "h?llo", "hello", "m")));
  EXPECT_THAT(Strs(other->Read()), ElementsAre("pmessage", "h*", "hello", "m"));
  EXPECT_EQ(Run({"PUBLISH", "hxllo", "n"}), 2);
  EXPECT_THAT(Strs(sub->Read()), ElementsAre("pmessage", "h?llo", "hxllo", "n"));
  // NUMSUB counts channel subscribers only.
  EXPECT_EQ(NumSub("hello"), 1);
  EXPECT_THAT(Strs(sub->Run({"PUNSUBSCRIBE", "h?llo"})),
              ElementsAre("punsubscribe", "h?llo", "1"));
  EXPECT_EQ(Run({"PUBSUB", "NUMPAT"}), 1);
}

TEST_F(PubSubCommandsTest, ShardChannelsAreTheirOwnNamespace) {
  auto sub = srv_.Connect();
  EXPECT_THAT(Strs(sub->Run({"SUBSCRIBE", "ch"})), ElementsAre("subscribe", "ch", "1"));
  EXPECT_THAT(Strs(sub->Run({"SSUBSCRIBE", "ch", "other"})), ElementsAre("ssubscribe", "ch", "1"));
  EXPECT_THAT(Strs(sub->Read()), ElementsAre("ssubscribe", "other", "2"));
  EXPECT_EQ(Run({"SPUBLISH", "ch", "s"}), 1);
  EXPECT_THAT(Strs(sub->Read()), ElementsAre("smessage", "ch", "s"));
  EXPECT_EQ(Run({"PUBLISH", "ch", "p"}), 1);
  EXPECT_THAT(Strs(sub->Read()), ElementsAre("message", "ch", "p"));
  EXPECT_THAT(Strs(Run({"PUBSUB", "SHARDCHANNELS"})), UnorderedElementsAre("ch", "other"));
  EXPECT_THAT(Strs(Run({"PUBSUB", "SHARDNUMSUB", "ch"})), ElementsAre("ch", "1"));
  EXPECT_THAT(Strs(sub->Run({"SUNSUBSCRIBE", "ch"})), ElementsAre("sunsubscribe", "ch", "1"));
  EXPECT_EQ(Run({"SPUBLISH", "ch", "s"}), 0);
}

TEST_F(PubSubCommandsTest, Resp2SubscribedModeAllowsOnlyPubSubCommands) {
  auto sub = srv_.Connect();
  sub->Run({"SUBSCRIBE", "a"});
  RespValue err = sub->Run({"GET", "x"});
  EXPECT_EQ(err.type, Type::kError);
  EXPECT_EQ(err.str, kSubscribedModeError);
  EXPECT_EQ(sub->Run({"CLIENT", "INFO"}).str,
            "ERR Can't execute 'client|info': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / "
            "QUIT / RESET are allowed in this context");
  EXPECT_THAT(Strs(sub->Run({"PING"})), ElementsAre("pong", ""));
  EXPECT_THAT(Strs(sub->Run({"PING", "hi"})), ElementsAre("pong", "hi"));
  // Pipelined: the GET after an UNSUBSCRIBE that leaves subscribed mode runs normally.
  sub->SendRaw(RespClient::Encode({"GET", "x"}) + RespClient::Encode({"UNSUBSCRIBE"}) +
               RespClient::Encode({"GET", "x"}) + RespClient::Encode({"PING"}));
  EXPECT_EQ(sub->Read().str, kSubscribedModeError);
  EXPECT_THAT(Strs(sub->Read()), ElementsAre("unsubscribe", "a", "0"));
  EXPECT_TRUE(sub->Read().is_null());
  EXPECT_EQ(sub->Read(), "PONG");
  EXPECT_THAT(Run({"INFO", "commandstats"}).str, HasSubstr("cmdstat_get:calls=1,"));
}

TEST_F(PubSubCommandsTest, Resp3PushesAndAnyCommand) {
  auto sub = srv_.Connect();
  sub->Run({"HELLO", "3"});
  RespValue confirm = sub->Run({"SUBSCRIBE", "a"});
  EXPECT_EQ(confirm.type, Type::kPush);
  EXPECT_THAT(Strs(confirm), ElementsAre("subscribe", "a", "1"));
  EXPECT_TRUE(sub->Run({"GET", "x"}).is_null());
  EXPECT_EQ(sub->Run({"PING"}), "PONG");
  EXPECT_EQ(Run({"PUBLISH", "a", "m"}), 1);
  RespValue msg = sub->Read();
  EXPECT_EQ(msg.type, Type::kPush);
  EXPECT_THAT(Strs(msg), ElementsAre("message", "a", "m"));
  // Publishing to itself: the push comes before PUBLISH's reply, as in Redis.
  sub->SendRaw(RespClient::Encode({"PUBLISH", "a", "self"}));
  EXPECT_THAT(Strs(sub->Read()), ElementsAre("message", "a", "self"));
  EXPECT_EQ(sub->Read(), 1);
  EXPECT_EQ(ClientField(sub->Run({"CLIENT", "INFO"}).str, "flags"), "P");
}

TEST_F(PubSubCommandsTest, UnsubscribeAllAndCounts) {
  EXPECT_THAT(Strs(Run({"UNSUBSCRIBE"})), ElementsAre("unsubscribe", "(nil)", "0"));
  EXPECT_THAT(Strs(Run({"PUNSUBSCRIBE"})), ElementsAre("punsubscribe", "(nil)", "0"));
  EXPECT_THAT(Strs(Run({"SUNSUBSCRIBE"})), ElementsAre("sunsubscribe", "(nil)", "0"));
  EXPECT_THAT(Strs(Run({"SUBSCRIBE", "a", "b", "a"})), ElementsAre("subscribe", "a", "1"));
  EXPECT_THAT(Strs(c_->Read()), ElementsAre("subscribe", "b", "2"));
  EXPECT_THAT(Strs(c_->Read()), ElementsAre("subscribe", "a", "2"));
  EXPECT_THAT(Strs(Run({"PSUBSCRIBE", "p*"})), ElementsAre("psubscribe", "p*", "3"));
  EXPECT_THAT(Strs(Run({"UNSUBSCRIBE", "zz"})), ElementsAre("unsubscribe", "zz", "3"));
  std::vector<std::string> first = Strs(Run({"UNSUBSCRIBE"}));
  std::vector<std::string> second = Strs(c_->Read());
  EXPECT_EQ(first[2], "2");
  EXPECT_EQ(second[2], "1");
  EXPECT_THAT((std::vector<std::string>{first[1], second[1]}), UnorderedElementsAre("a", "b"));
  auto other = srv_.Connect();
  EXPECT_TRUE(other->Run({"PUBSUB", "CHANNELS"}).elems.empty());
  EXPECT_EQ(other->Run({"PUBSUB", "NUMPAT"}), 1);
  EXPECT_THAT(Strs(Run({"PUNSUBSCRIBE"})), ElementsAre("punsubscribe", "p*", "0"));
  EXPECT_EQ(Run({"PING"}), "PONG");  // out of subscribed mode
  EXPECT_EQ(other->Run({"PUBSUB", "NUMPAT"}), 0);
}

TEST_F(PubSubCommandsTest, ResetAndDisconnectLeaveNoTrace) {
  auto a = srv_.Connect();
  auto b = srv_.Connect();
  a->Run({"SUBSCRIBE", "x"});
  a->Run({"PSUBSCRIBE", "x*"});
  b->Run({"SSUBSCRIBE", "x"});
  std::string line = Run({"CLIENT", "LIST"}).str;
  EXPECT_THAT(line, HasSubstr("flags=P db=0 sub=1 psub=1 ssub=0"));
  EXPECT_THAT(line, HasSubstr("flags=P db=0 sub=0 psub=0 ssub=1"));
  EXPECT_THAT(Run({"CLIENT", "LIST", "TYPE", "pubsub"}).str, HasSubstr("psub=1"));
  EXPECT_EQ(a->Run({"RESET"}), "RESET");
  EXPECT_EQ(a->Run({"GET", "k"}).type, Type::kNull);
  EXPECT_EQ(NumSub("x"), 0);
  EXPECT_EQ(Run({"PUBSUB", "NUMPAT"}), 0);
  EXPECT_EQ(Run({"PUBLISH", "x", "m"}), 0);
  EXPECT_EQ(Run({"SPUBLISH", "x", "m"}), 1);
  b.reset();  // disconnect
  EXPECT_TRUE(Eventually([&] { return Run({"SPUBLISH", "x", "m"}) == int64_t{0}; }));
  EXPECT_TRUE(Run({"PUBSUB", "SHARDCHANNELS"}).elems.empty());
  std::string stats = Run({"INFO", "stats"}).str;
  EXPECT_THAT(stats, HasSubstr("pubsub_channels:0\r\npubsub_patterns:0\r\n"
                               "pubsubshard_channels:0\r\n"));
}

TEST_F(PubSubCommandsTest, OutputBufferLimitConfig) {
  EXPECT_THAT(Strs(Run({"CONFIG", "GET", "client-output-buffer-limit"})),
              ElementsAre("client-output-buffer-limit",
                          "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60"));
  EXPECT_EQ(Run({"CONFIG", "SET", "client-output-buffer-limit", "pubsub 1mb 512kb 10"}), "OK");
  EXPECT_THAT(Strs(Run({"CONFIG", "GET", "client-output-buffer-limit"})).back(),
              "normal 0 0 0 slave 268435456 67108864 60 pubsub 1048576 524288 10");
  EXPECT_EQ(Run({"CONFIG", "SET", "client-output-buffer-limit", "pubsub 1 2"}).str,
            "ERR CONFIG SET failed (possibly related to argument 'client-output-buffer-limit') - "
            "Wrong number of arguments in buffer limit configuration.");
  EXPECT_EQ(Run({"CONFIG", "SET", "client-output-buffer-limit", "master 1 2 3"}).str,
            "ERR CONFIG SET failed (possibly related to argument 'client-output-buffer-limit') - "
            "Invalid client class specified in buffer limit configuration.");
  EXPECT_EQ(Run({"CONFIG", "SET", "client-output-buffer-limit", "pubsub 1 2 -3"}).str,
            "ERR CONFIG SET failed (possibly related to argument 'client-output-buffer-limit') - "
            "Error in hard, soft or soft_seconds setting in buffer limit configuration.");
}

TEST_F(PubSubCommandsTest, SlowSubscriberOverHardLimitIsDisconnected) {
  ASSERT_EQ(Run({"CONFIG", "SET", "client-output-buffer-limit", "pubsub 1mb 0 0"}), "OK");
  auto slow = srv_.Connect();  // never reads
  auto fast = srv_.Connect();
  slow->Run({"SUBSCRIBE", "flood"});
  fast->Run({"SUBSCRIBE", "other"});
  const std::string payload(256 * 1024, 'x');
  // The socket buffers take a few MB; then the queue passes 1 MB and the client is dropped.
  bool dropped = false;
  for (int i = 0; i < 400 && !dropped; ++i) {
    dropped = Run({"PUBLISH", "flood", payload}) == int64_t{0};
  }
  EXPECT_TRUE(dropped);
  EXPECT_EQ(NumSub("flood"), 0);
  // The slow client's socket is closed once it drains what was already sent.
  RespValue v;
  do {
    v = slow->Read();
  } while (v.type == Type::kArray);
  EXPECT_EQ(v.type, Type::kClosed);
  // Other subscribers are unaffected.
  EXPECT_EQ(Run({"PUBLISH", "other", "still"}), 1);
  EXPECT_THAT(Strs(fast->Read()), ElementsAre("message", "other", "still"));
}

}  // namespace
}  // namespace dashkv
