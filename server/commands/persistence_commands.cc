// Persistence commands: SAVE, BGSAVE, LASTSAVE (server/persistence/snapshot_manager.h).
#include "core/str_util.h"
#include "server/cmd_context.h"
#include "server/command_registry.h"
#include "server/persistence/snapshot_manager.h"

namespace dashkv {

namespace {

using boost::asio::awaitable;

// Replies to a save that could not start or failed, as Redis: a bare -ERR, or its text for a
// save already running.
void SendSaveError(const absl::Status& st, ConnCmdContext& ctx) {
  ctx.SendStatus(absl::IsFailedPrecondition(st) ? OpStatus::kSaveInProgress
                                                : OpStatus::kSaveFailed);
}

// SAVE: takes the cut like BGSAVE and waits for the file; other clients keep being served.
awaitable<void> CmdSave(CmdArgs, ConnCmdContext& ctx) {
  absl::Status st = co_await ctx.snapshots().SaveWithLocks(/*wait=*/true);
  if (!st.ok()) co_return SendSaveError(st, ctx);
  ctx.rb.SendOk();
}

// BGSAVE [SCHEDULE]: runs holding every shard (its lock scope), so the cut is one global step.
// As Redis 7.0: SCHEDULE changes nothing when no save runs, and a running save is an error
// either way (Redis schedules only behind an AOF rewrite, which dashkv does not have). Inside
// EXEC the save starts at once, at the transaction's place in the order, with Redis's reply.
awaitable<void> CmdBgSave(CmdArgs args, ConnCmdContext& ctx) {
  if (args.size() > 2 || (args.size() == 2 && !EqualsIgnoreCase(args[1], "SCHEDULE"))) {
    co_return ctx.SendStatus(OpStatus::kSyntaxError);
  }
  absl::Status st = co_await ctx.snapshots().Start(SnapshotManager::SaveKind::kBackground);
  if (!st.ok()) co_return SendSaveError(st, ctx);
  ctx.rb.SendSimpleString(ctx.in_exec ? "Background saving scheduled"
                                      : "Background saving started");
}

// LASTSAVE
void CmdLastSave(CmdArgs, ConnCmdContext& ctx) {
  ctx.rb.SendLong(ctx.snapshots().last_save_time());
}

}  // namespace

void RegisterPersistenceCommands(CommandRegistry* r) {
  CommandSpec s = MakeSpec("save", 1, kCmdAdmin | kCmdNoScript | kCmdNoMulti, 0, 0,
                           {"admin", "slow", "dangerous"}, "server", "1.0.0",
                           "Synchronously saves the database(s) to disk.");
  s.kind = HandlerKind::kCoord;
  s.coord_handler = CmdSave;
  s.tx_scope = TxScope::kNone;  // SaveWithLocks takes the shards for the cut only
  r->Register(std::move(s));
  s = MakeSpec("bgsave", -1, kCmdAdmin | kCmdNoScript, 0, 0, {"admin", "slow", "dangerous"},
               "server", "1.0.0", "Asynchronously saves the database(s) to disk.");
  s.kind = HandlerKind::kCoord;
  s.coord_handler = CmdBgSave;
  s.tx_scope = TxScope::kAllShared;
  r->Register(std::move(s));
  s = MakeSpec("lastsave", 1, kCmdLoading | kCmdStale | kCmdFast, 0, 0,
               {"admin", "fast", "dangerous"}, "server", "1.0.0",
               "Returns the Unix timestamp of the last successful save to disk.");
  s.kind = HandlerKind::kConn;
  s.conn_handler = CmdLastSave;
  s.tips = {"nondeterministic_output"};
  r->Register(std::move(s));
}

}  // namespace dashkv
