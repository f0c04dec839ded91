// Transaction commands: MULTI, EXEC, DISCARD, WATCH, UNWATCH (Redis 7 semantics). Queueing
// is MultiExec::Queue (called by Server::Dispatch), EXEC MultiExec::Exec (server/tx/multi_exec.h).
#include "core/str_util.h"
#include "server/cmd_context.h"
#include "server/command_registry.h"
#include "server/conn_state.h"
#include "server/tx/multi_key.h"
#include "server/config.h"
#include "server/storage/shard_set.h"
#include "server/tx/multi_exec.h"
#include "server/storage/shard_set.h"
#include "server/tx/transaction.h"
#include "server/tx/watch.h"

namespace dashkv {

namespace {

using boost::asio::awaitable;

// MULTI
void CmdMulti(CmdArgs, ConnCmdContext& ctx) {
  if (ctx.state.in_multi) return ctx.SendStatus(OpStatus::kMultiNested);
  ctx.state.in_multi = true;
  ctx.rb.SendOk();
}

// EXEC
awaitable<void> CmdExec(CmdArgs, ConnCmdContext& ctx) {
  if (!ctx.state.in_multi) co_return ctx.SendStatus(OpStatus::kExecWithoutMulti);
  co_await ctx.multi().Exec(ctx);
}

// DISCARD
void CmdDiscard(CmdArgs, ConnCmdContext& ctx) {
  if (!ctx.state.in_multi) return ctx.SendStatus(OpStatus::kDiscardWithoutMulti);
  ctx.multi().Discard(ctx.state);
  ctx.rb.SendOk();
}

// WATCH key [key ...]
awaitable<void> CmdWatch(CmdArgs args, ConnCmdContext& ctx) {
  if (ctx.state.in_multi) co_return ctx.SendStatus(OpStatus::kWatchInMulti);
  ConnState& state = ctx.state;
  if (!state.watch_state) state.watch_state = std::make_shared<WatchState>();
  ShardSet& ss = ctx.shard_set();
  unsigned db = state.db;
  int64_t now = ctx.now_ms;
  // Keys not watched yet by this client, and whether each is live now (on its shard).
  std::vector<size_t> fresh;
  for (size_t i = 1; i < args.size(); ++i) {
    bool seen = false;
    for (const WatchedKey& w : state.watched) seen = seen || (w.db == db && w.key == args[i]);
    for (size_t f : fresh) seen = seen || args[f] == args[i];
    if (!seen) fresh.push_back(i);
  }
  std::vector<uint8_t> live(args.size(), 0);
  KeysByShard groups(ss, args, 1, args.size() - 1);
  std::shared_ptr<WatchState> ws = state.watch_state;
  co_await ss.AwaitMany(groups.shards, [&](Shard& shard) {
    for (size_t i : fresh) {
      if (ss.ShardOf(args[i]) != shard.index()) continue;
      live[i] = shard.KeyLive(db, args[i], now) ? 1 : 0;
      shard.watches().Watch(LockKeyOf(db, args[i]), ws);
    }
  });
  for (size_t i : fresh) state.watched.push_back({db, std::string(args[i]), live[i] != 0});
  ctx.rb.SendOk();
}

// UNWATCH
void CmdUnwatch(CmdArgs, ConnCmdContext& ctx) {
  ctx.multi().Unwatch(ctx.state);
  ctx.rb.SendOk();
}

CommandSpec Spec(std::string name, int arity, uint32_t flags, std::vector<std::string_view> cats,
                 std::string_view since, std::string_view summary) {
  return MakeSpec(std::move(name), arity, flags, 0, 0, std::move(cats), "transactions", since,
                  summary);
}

}  // namespace

void RegisterTransactionCommands(CommandRegistry* r) {
  constexpr uint32_t kFlags = kCmdNoScript | kCmdLoading | kCmdStale | kCmdAllowBusy;
  // MULTI, EXEC, DISCARD and WATCH run at once inside MULTI; UNWATCH is queued, as in Redis.
  constexpr uint32_t kControl = kCmdMultiControl;
  CommandSpec s = Spec("multi", 1, kFlags | kCmdFast | kControl, {"fast", "transaction"}, "1.2.0",
                       "Starts a transaction.");
  s.kind = HandlerKind::kConn;
  s.conn_handler = CmdMulti;
  r->Register(std::move(s));
  r->RegisterCoord(Spec("exec", 1,
                        kCmdNoScript | kCmdLoading | kCmdStale | kCmdSkipSlowlog | kControl,
                        {"slow", "transaction"}, "1.2.0",
                        "Executes all commands in a transaction."),
                   CmdExec);
  s = Spec("discard", 1, kFlags | kCmdFast | kControl, {"fast", "transaction"}, "2.0.0",
           "Discards a transaction.");
  s.kind = HandlerKind::kConn;
  s.conn_handler = CmdDiscard;
  r->Register(std::move(s));
  // WATCH names keys, but it must not take their locks (it only registers interest).
  s = Spec("watch", -2, kFlags | kCmdFast | kControl, {"fast", "transaction"}, "2.2.0",
           "Monitors changes to keys to determine the execution of a transaction.");
  s.first_key = 1;
  s.last_key = -1;
  s.key_step = 1;
  s.tx_scope = TxScope::kNone;
  r->RegisterCoord(std::move(s), CmdWatch);
  s = Spec("unwatch", 1, kFlags | kCmdFast, {"fast", "transaction"}, "2.2.0",
           "Forgets about watched keys of a transaction.");
  s.kind = HandlerKind::kConn;
  s.conn_handler = CmdUnwatch;
  r->Register(std::move(s));
}

}  // namespace dashkv
