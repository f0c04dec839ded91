// A command that cannot get memory (std::bad_alloc, std::length_error) fails alone: its client
// gets "-ERR out of memory" as that command's only reply and the server goes on (server.h,
// "Design: a command that cannot get memory"). The throwing commands below are added to a real
// in-process server through Server's extra_commands hook; each path a command can run on is
// covered: inline on the connection's shard and in a hop, pipelined (one shard and several), in
// MULTI/EXEC, coordinator hops (Await, AwaitMany, one-hop reads and writes) and connection
// handlers, at 1 and 2 shards. Afterwards the keys are still usable: no lock is left behind.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <absl/container/inlined_vector.h>

#include <new>
#include <stdexcept>
#include <string>
#include <vector>

#include "server/cmd_context.h"
#include "server/tx/transaction.h"
#include "tests/testing/test_server.h"

// Sanitizer builds: a huge malloc returns nullptr (so operator new throws) instead of ASan
// reporting it, as in the server run under ASan by the fuzzing step.
extern "C" const char* __asan_default_options() { return "allocator_may_return_null=1"; }

namespace dashkv {
namespace {

namespace asio = boost::asio;
using testing::RespClient;
using testing::RespValue;
using testing::TestServer;

constexpr std::string_view kOom = "ERR out of memory";

// Throws what `kind` names: "badalloc" and "length" throw the exception itself; "reserve" asks
// std::string for max_size() bytes (2^62: operator new finds no memory and throws
// std::bad_alloc, where it used to abort the process); "vector"
// asks a vector for more than max_size() (std::length_error, as vector::reserve(huge count)).
void Throw(std::string_view kind) {
  if (kind == "badalloc") throw std::bad_alloc();
  if (kind == "length") throw std::length_error("vector::reserve");
  if (kind == "reserve") {
    std::string s;
    s.reserve(s.max_size());
  }
  if (kind == "vector") {
    std::vector<std::string> v;
    v.reserve(v.max_size() + 1);
  }
}

// XTHROW key kind: writes part of a reply and sets key, then throws.
void CmdXThrow(CmdArgs args, ShardCmdContext& ctx) {
  ctx.db.FindMutable(args[1], ctx.now_ms);  // about to change the key
  ctx.rb.StartArray(2);
  ctx.rb.SendBulk("partial");
  Throw(args[2]);
  ctx.rb.SendBulk("done");
}

// Hops to the shards of keys args[2..] and throws (`kind` = args[1]) on the first key's shard.
// XHOP uses Await for the first key's shard then AwaitMany for all of them; XHOPREAD and
// XHOPWRITE (one-hop commands) their single OnlyHop.
asio::awaitable<void> CmdXHop(CmdArgs args, ConnCmdContext& ctx) {
  ShardSet& ss = ctx.shard_set();
  const std::string kind(args[1]);
  const unsigned thrower = ss.ShardOf(args[2]);
  absl::InlinedVector<unsigned, 2> sids;
  for (size_t i = 2; i < args.size(); ++i) {
    unsigned sid = ss.ShardOf(args[i]);
    if (std::find(sids.begin(), sids.end(), sid) == sids.end()) sids.push_back(sid);
  }
  std::sort(sids.begin(), sids.end());
  ctx.rb.StartArray(2);
  ctx.rb.SendBulk("partial");
  auto fn = [&](Shard& shard) {
    if (shard.index() == thrower) Throw(kind);
  };
  if (ctx.spec.one_hop) {
    co_await OnlyHop(ss, ctx.locks, sids, fn);
  } else {
    co_await ss.Await(sids.back(), [&](Shard& shard) {
      fn(shard);
      return 1;
    });
    co_await ss.AwaitMany(sids, fn);
  }
  ctx.rb.SendBulk("done");
}

// XCONN kind: a connection handler that throws.
void CmdXConn(CmdArgs args, ConnCmdContext& ctx) {
  ctx.rb.StartArray(2);
  ctx.rb.SendBulk("partial");
  Throw(args[1]);
  ctx.rb.SendBulk("done");
}

void RegisterThrowingCommands(CommandRegistry* registry) {
  registry->RegisterShard(MakeSpec("xthrow", 3, kCmdWrite, 1, 1, {}, "test", "0", ""),
                          CmdXThrow);
  registry->RegisterCoord(MakeSpec("xhop", -3, kCmdWrite, 2, -1, {}, "test", "0", ""), CmdXHop);
  registry->RegisterCoord(OneHop(MakeSpec("xhopread", -3, kCmdReadOnly, 2, -1, {}, "test", "0",
                                          "")),
                          CmdXHop);
  registry->RegisterCoord(OneHop(MakeSpec("xhopwrite", -3, kCmdWrite, 2, -1, {}, "test", "0",
                                          "")),
                          CmdXHop);
  CommandSpec conn = MakeSpec("xconn", 2, 0, 0, 0, {}, "test", "0", "");
  conn.kind = HandlerKind::kConn;
  conn.conn_handler = CmdXConn;
  registry->Register(std::move(conn));
}

const char* const kKinds[] = {"badalloc", "length", "reserve", "vector"};

class CommandFailureTest : public ::testing::TestWithParam<unsigned> {
 protected:
  void SetUp() override {
    c_ = srv_.Connect();
    ASSERT_TRUE(c_->connected());
  }
  ShardSet& shards() { return srv_.server().shard_set(); }

  // Returns a key named prefix<i> owned by shard `sid` (the last shard if there are fewer).
  std::string KeyOn(unsigned sid, const std::string& prefix) {
    sid = std::min(sid, shards().size() - 1);
    for (int i = 0;; ++i) {
      std::string k = prefix + std::to_string(i);
      if (shards().ShardOf(k) == sid) return k;
    }
  }

  // Sends every command of `cmds` in one write and reads one reply per command.
  std::vector<RespValue> Pipeline(RespClient& c, const std::vector<std::vector<std::string>>& cmds) {
    std::string batch;
    for (const auto& cmd : cmds) {
      batch += RespClient::Encode(std::vector<std::string_view>(cmd.begin(), cmd.end()));
    }
    c.SendRaw(batch);
    std::vector<RespValue> out;
    for (size_t i = 0; i < cmds.size(); ++i) out.push_back(c.Read());
    return out;
  }

  // Asserts that `c` and a new client can still use `keys` (no lock left behind, no stray
  // reply bytes on `c`).
  void ExpectUsable(RespClient& c, const std::vector<std::string>& keys) {
    EXPECT_EQ(c.Run({"PING"}), "PONG");
    auto other = srv_.Connect();
    for (const std::string& k : keys) {
      EXPECT_EQ(other->Run({"SET", k, "v-" + k}), "OK") << k;
      EXPECT_EQ(c.Run({"GET", k}), "v-" + k) << k;
    }
    if (keys.size() > 1) {
      std::vector<std::string> mset = {"MSET"};
      for (const std::string& k : keys) mset.insert(mset.end(), {k, "m"});
      EXPECT_EQ(other->Run(mset), "OK");
    }
  }

  TestServer srv_{GetParam(), RegisterThrowingCommands};
  std::unique_ptr<RespClient> c_;
};

TEST_P(CommandFailureTest, ShardCommandFailsAloneInlineAndInAHop) {
  for (unsigned sid = 0; sid < 2; ++sid) {
    std::string k = KeyOn(sid, "k");
    for (const char* kind : kKinds) {
      RespValue v = c_->Run({"XTHROW", k, kind});
      ASSERT_TRUE(v.is_error()) << kind << " on shard " << sid << ": " << v;
      EXPECT_EQ(v.str, kOom) << kind;
      ExpectUsable(*c_, {k});
    }
  }
}

TEST_P(CommandFailureTest, PipelineKeepsOneReplyPerCommand) {
  std::string a = KeyOn(0, "a"), b = KeyOn(1, "b");
  // One group over both shards (replies merged in request order), then one over a single one.
  std::vector<RespValue> r = Pipeline(*c_, {{"SET", a, "1"},
                                            {"XTHROW", a, "badalloc"},
                                            {"GET", a},
                                            {"XTHROW", b, "length"},
                                            {"SET", b, "2"},
                                            {"XTHROW", b, "reserve"},
                                            {"GET", b},
                                            {"PING"},
                                            {"XTHROW", a, "vector"},
                                            {"XTHROW", a, "badalloc"},
                                            {"GET", a}});
  ASSERT_EQ(r.size(), 11u);
  EXPECT_EQ(r[0], "OK");
  EXPECT_EQ(r[1].str, kOom);
  EXPECT_EQ(r[2], "1");
  EXPECT_EQ(r[3].str, kOom);
  EXPECT_EQ(r[4], "OK");
  EXPECT_EQ(r[5].str, kOom);
  EXPECT_EQ(r[6], "2");
  EXPECT_EQ(r[7], "PONG");
  EXPECT_EQ(r[8].str, kOom);
  EXPECT_EQ(r[9].str, kOom);
  EXPECT_EQ(r[10], "1");
  ExpectUsable(*c_, {a, b});
}

TEST_P(CommandFailureTest, MultiExecGoesOnAfterAFailedCommand) {
  std::string a = KeyOn(0, "a"), b = KeyOn(1, "b");
  std::vector<RespValue> r = Pipeline(*c_, {{"MULTI"},
                                            {"SET", a, "1"},
                                            {"XTHROW", a, "length"},
                                            {"SET", b, "2"},
                                            {"XTHROW", b, "badalloc"},
                                            {"XHOP", "reserve", a, b},
                                            {"XCONN", "vector"},
                                            {"GET", a},
                                            {"GET", b},
                                            {"EXEC"}});
  ASSERT_EQ(r.size(), 10u);
  for (size_t i = 1; i < 9; ++i) EXPECT_EQ(r[i], "QUEUED") << i;
  const RespValue& exec = r[9];
  ASSERT_EQ(exec.elems.size(), 8u) << exec;
  EXPECT_EQ(exec.elems[0], "OK");
  EXPECT_EQ(exec.elems[1].str, kOom);
  EXPECT_EQ(exec.elems[2], "OK");
  EXPECT_EQ(exec.elems[3].str, kOom);
  EXPECT_EQ(exec.elems[4].str, kOom);
  EXPECT_EQ(exec.elems[5].str, kOom);
  EXPECT_EQ(exec.elems[6], "1");
  EXPECT_EQ(exec.elems[7], "2");
  ExpectUsable(*c_, {a, b});
  // EXEC on one shard (one hop, no locks).
  r = Pipeline(*c_, {{"MULTI"}, {"XTHROW", a, "vector"}, {"GET", a}, {"EXEC"}});
  ASSERT_EQ(r[3].elems.size(), 2u) << r[3];
  EXPECT_EQ(r[3].elems[0].str, kOom);
  EXPECT_EQ(r[3].elems[1], "m");  // ExpectUsable's MSET
  ExpectUsable(*c_, {a, b});
}

TEST_P(CommandFailureTest, CoordinatorHopFailureReleasesItsLocks) {
  std::string a = KeyOn(0, "a"), b = KeyOn(1, "b");
  for (const char* cmd : {"XHOP", "XHOPREAD", "XHOPWRITE"}) {
    for (const char* kind : kKinds) {
      // The thrower is the first key's shard: the other shard's branch (if any) still runs.
      for (const auto& keys : {std::vector<std::string>{a, b}, std::vector<std::string>{b, a},
                               std::vector<std::string>{a}}) {
        std::vector<std::string> call = {cmd, kind};
        call.insert(call.end(), keys.begin(), keys.end());
        RespValue v = c_->Run(call);
        ASSERT_TRUE(v.is_error()) << cmd << " " << kind << ": " << v;
        EXPECT_EQ(v.str, kOom);
        ExpectUsable(*c_, {a, b});
      }
    }
  }
}

TEST_P(CommandFailureTest, ConnectionCommandFailsAlone) {
  for (const char* kind : kKinds) {
    std::vector<RespValue> r = Pipeline(*c_, {{"XCONN", kind}, {"PING"}});
    EXPECT_EQ(r[0].str, kOom) << kind;
    EXPECT_EQ(r[1], "PONG");
  }
  ExpectUsable(*c_, {KeyOn(0, "a")});
}

TEST_P(CommandFailureTest, FailedWriteTouchesItsWatchers) {
  std::string a = KeyOn(0, "a");
  ASSERT_EQ(c_->Run({"SET", a, "1"}), "OK");
  ASSERT_EQ(c_->Run({"WATCH", a}), "OK");
  auto other = srv_.Connect();
  EXPECT_EQ(other->Run({"XTHROW", a, "badalloc"}).str, kOom);
  std::vector<RespValue> r = Pipeline(*c_, {{"MULTI"}, {"GET", a}, {"EXEC"}});
  EXPECT_TRUE(r[2].is_null()) << r[2];  // it may have changed the key: the EXEC fails
}

INSTANTIATE_TEST_SUITE_P(Shards, CommandFailureTest, ::testing::Values(1u, 2u),
                         [](const auto& info) { return "Threads" + std::to_string(info.param); });

}  // namespace
}  // namespace dashkv
