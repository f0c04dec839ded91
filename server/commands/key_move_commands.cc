// Commands that move or copy whole keys: RENAME, RENAMENX, COPY and MOVE (Redis 7.0 semantics:
// the value keeps its type and encoding, the deadline travels with it, the destination of any
// type is overwritten where the command allows it).
//
// When both keys live on one shard (always for MOVE, whose key keeps its name), the command runs
// whole on that shard and moves the value without copying it. When RENAME/RENAMENX/COPY name
// keys on two shards, a coordinator runs on the connection's thread: hop 1 deep-copies the
// source (CloneValue) on its shard, hop 2 stores the copy on the destination's shard, and RENAME
// then deletes the source in hop 3. The source is deleted only after the destination holds the
// value, so no value is ever lost; the server's intent locks on both keys make the hops atomic.
#include <climits>
#include <utility>

#include "server/cmd_context.h"
#include "server/command_registry.h"
#include "server/commands/key_move_ops.h"
#include "server/config.h"
#include "server/conn_state.h"
#include "server/storage/shard_set.h"

namespace dashkv {

namespace {

using boost::asio::awaitable;

enum class RenameMode : uint8_t { kOverwrite, kNx };  // RENAME, RENAMENX

// Sends RENAME's / RENAMENX's reply for the outcome of the move.
void ReplyRename(io::ReplyBuilder& rb, OpStatus st, RenameMode mode) {
  switch (st) {
    case OpStatus::kOk:
      return mode == RenameMode::kNx ? rb.SendLong(1) : rb.SendOk();
    case OpStatus::kSkipped:
      return rb.SendLong(0);
    case OpStatus::kKeyNotFound:
      return SendStatus(rb, OpStatus::kNoSuchKey);
    default:
      return SendStatus(rb, st);
  }
}

// Raises RENAME's events, in Redis's order: rename_from (source), rename_to (destination).
void NotifyRename(DbSlice& db, std::string_view src, std::string_view dst) {
  db.Notify(kNotifyGeneric, "rename_from", src);
  db.Notify(kNotifyGeneric, "rename_to", dst);
}

// RENAME key newkey / RENAMENX key newkey, both keys on this shard.
template <RenameMode kMode>
void CmdRename(CmdArgs args, ShardCmdContext& ctx) {
  if (args[1] == args[2]) {  // Redis: OK (RENAME) or 0 (RENAMENX) when the key exists
    ctx.NoChange();
    if (ctx.db.FindReadOnlyQuiet(args[1], ctx.now_ms).is_done()) {
      return ctx.SendStatus(OpStatus::kNoSuchKey);
    }
    return kMode == RenameMode::kNx ? ctx.rb.SendLong(0) : ctx.rb.SendOk();
  }
  IfExists mode = kMode == RenameMode::kNx ? IfExists::kSkip : IfExists::kReplace;
  OpStatus st = OpMoveEntry(ctx.db, args[1], ctx.db, args[2], mode, ctx.now_ms);
  if (st == OpStatus::kOk) NotifyRename(ctx.db, args[1], args[2]);
  ReplyRename(ctx.rb, st, kMode);
}

// Copies `src_key` of database `db` to `dst_key` of database `dst_db` on their two shards (the
// source looked up as `lookup` says); raises `store_event` (unless empty) for the destination
// once stored. Returns kKeyNotFound, kSkipped, kOutOfMemory or kOk (hops 1 and 2 of the file
// comment).
awaitable<OpStatus> CopyAcrossShards(ConnCmdContext& ctx, std::string_view src_key,
                                     SourceLookup lookup, std::string_view dst_key,
                                     unsigned dst_db, IfExists mode,
                                     std::string_view store_event) {
  ShardSet& ss = ctx.shard_set();
  unsigned db = ctx.state.db;
  int64_t now = ctx.now_ms;
  OpResult<DetachedEntry> entry = co_await ss.Await(ss.ShardOf(src_key), [&](Shard& shard) {
    return OpCopyOut(shard.db(db), src_key, lookup, now);
  });
  if (!entry) co_return entry.status();
  co_return co_await ss.Await(ss.ShardOf(dst_key), [&](Shard& shard) {
    DbSlice& slice = shard.db(dst_db);
    OpStatus st = OpStoreEntry(slice, dst_key, std::move(*entry), mode, now);
    if (st == OpStatus::kOk && !store_event.empty()) {
      slice.Notify(kNotifyGeneric, store_event, dst_key);
    }
    return st;
  });
}

// RENAME / RENAMENX with the two keys on different shards.
template <RenameMode kMode>
awaitable<void> CmdRenameMulti(CmdArgs args, ConnCmdContext& ctx) {
  IfExists mode = kMode == RenameMode::kNx ? IfExists::kSkip : IfExists::kReplace;
  std::string_view src = args[1];
  std::string_view dst = args[2];
  OpStatus st = co_await CopyAcrossShards(ctx, src, SourceLookup::kWrite, dst, ctx.state.db,
                                          mode, /*store_event=*/"");
  if (st == OpStatus::kOk) {
    ShardSet& ss = ctx.shard_set();
    unsigned db = ctx.state.db;
    int64_t now = ctx.now_ms;
    // The last hop raises both events, so that they come in Redis's order after the
    // destination's `new`.
    co_await ss.Await(ss.ShardOf(src), [&](Shard& shard) {
      DbSlice& slice = shard.db(db);
      slice.EraseKey(src, now, RemoveReason::kDeleted);
      NotifyRename(slice, src, dst);
    });
  }
  ReplyRename(ctx.rb, st, kMode);
}

// Parses a database index argument as Redis's getIntFromObjectOrReply + selectDb do.
OpResult<unsigned> ParseDbIndex(std::string_view arg, unsigned num_dbs) {
  std::optional<int64_t> v = ParseInt64(arg);
  if (!v) return OpStatus::kNotAnInteger;
  if (*v < INT_MIN || *v > INT_MAX) return OpStatus::kIntRange;
  if (*v < 0 || *v >= static_cast<int64_t>(num_dbs)) return OpStatus::kInvalidDbIndex;
  return static_cast<unsigned>(*v);
}

struct CopyOptions {
  unsigned dst_db = 0;
  IfExists mode = IfExists::kSkip;
};

// Parses COPY's [DB destination-db] [REPLACE] (in any order, first error wins) and checks that
// source and destination differ.
OpResult<CopyOptions> ParseCopy(CmdArgs args, unsigned db, unsigned num_dbs) {
  CopyOptions opts;
  opts.dst_db = db;
  ArgParser parser(args, 3);
  while (parser.HasNext()) {
    if (parser.Check("REPLACE")) {
      opts.mode = IfExists::kReplace;
    } else if (parser.remaining() >= 2 && parser.Check("DB")) {
      OpResult<unsigned> index = ParseDbIndex(parser.Next(), num_dbs);
      if (!index) return index.status();
      opts.dst_db = *index;
    } else {
      return OpStatus::kSyntaxError;
    }
  }
  if (opts.dst_db == db && args[1] == args[2]) return OpStatus::kSameObject;
  return opts;
}

// The key COPY ... DB n and MOVE key n write in database n (CommandSpec::other_db_key). The db
// bound is the widest possible: a call with an index out of range fails when it runs.
constexpr unsigned kAnyDb = 1u << 16;
std::optional<std::pair<unsigned, std::string_view>> CopyOtherDbKey(CmdArgs args) {
  OpResult<CopyOptions> opts = ParseCopy(args, kAnyDb, kAnyDb);
  if (!opts || opts->dst_db == kAnyDb) return std::nullopt;
  return std::make_pair(opts->dst_db, args[2]);
}
std::optional<std::pair<unsigned, std::string_view>> MoveOtherDbKey(CmdArgs args) {
  OpResult<unsigned> db = ParseDbIndex(args[2], kAnyDb);
  if (!db) return std::nullopt;
  return std::make_pair(*db, args[1]);
}

// Sends COPY's reply for the outcome of the copy.
void ReplyCopy(io::ReplyBuilder& rb, OpStatus st) {
  if (st == OpStatus::kOk) return rb.SendLong(1);
  if (st == OpStatus::kKeyNotFound || st == OpStatus::kSkipped) return rb.SendLong(0);
  SendStatus(rb, st);
}

// COPY source destination [DB destination-db] [REPLACE], both keys on this shard.
void CmdCopy(CmdArgs args, ShardCmdContext& ctx) {
  OpResult<CopyOptions> opts = ParseCopy(args, ctx.db_index, ctx.shard.num_dbs());
  if (!opts) return ctx.SendStatus(opts.status());
  OpResult<DetachedEntry> entry = OpCopyOut(ctx.db, args[1], SourceLookup::kRead, ctx.now_ms);
  if (!entry) {
    ctx.NoChange();
    return ReplyCopy(ctx.rb, entry.status());
  }
  DbSlice& dst = ctx.shard.db(opts->dst_db);
  OpStatus st = OpStoreEntry(dst, args[2], std::move(*entry), opts->mode, ctx.now_ms);
  if (st == OpStatus::kOk) dst.Notify(kNotifyGeneric, "copy_to", args[2]);
  ReplyCopy(ctx.rb, st);
}

// COPY with the two keys on different shards.
awaitable<void> CmdCopyMulti(CmdArgs args, ConnCmdContext& ctx) {
  OpResult<CopyOptions> opts = ParseCopy(args, ctx.state.db, ctx.shard_set().num_dbs());
  if (!opts) co_return ctx.SendStatus(opts.status());
  OpStatus st = co_await CopyAcrossShards(ctx, args[1], SourceLookup::kRead, args[2],
                                          opts->dst_db, opts->mode, "copy_to");
  ReplyCopy(ctx.rb, st);
}

// MOVE key db (the key keeps its name, hence its shard).
void CmdMove(CmdArgs args, ShardCmdContext& ctx) {
  OpResult<unsigned> db = ParseDbIndex(args[2], ctx.shard.num_dbs());
  if (!db) return ctx.SendStatus(db.status());
  if (*db == ctx.db_index) return ctx.SendStatus(OpStatus::kSameObject);
  DbSlice& dst = ctx.shard.db(*db);
  OpStatus st = OpMoveEntry(ctx.db, args[1], dst, args[1], IfExists::kSkip, ctx.now_ms);
  if (st == OpStatus::kOk) {
    ctx.db.Notify(kNotifyGeneric, "move_from", args[1]);
    dst.Notify(kNotifyGeneric, "move_to", args[1]);
    return ctx.rb.SendLong(1);
  }
  if (st == OpStatus::kKeyNotFound || st == OpStatus::kSkipped) {
    ctx.NoChange();
    return ctx.rb.SendLong(0);
  }
  ctx.SendStatus(st);
}

CommandSpec Spec(std::string name, int arity, uint32_t flags, int last_key,
                 std::vector<std::string_view> cats, std::string_view since,
                 std::string_view summary) {
  return MakeSpec(std::move(name), arity, flags, 1, last_key, std::move(cats), "generic", since,
                  summary);
}

}  // namespace

void RegisterKeyMoveCommands(CommandRegistry* r) {
  r->RegisterShard(Spec("rename", 3, kCmdWrite, 2, {"keyspace", "write", "slow"}, "1.0.0",
                        "Renames a key and overwrites the destination."),
                   CmdRename<RenameMode::kOverwrite>, CmdRenameMulti<RenameMode::kOverwrite>);
  r->RegisterShard(Spec("renamenx", 3, kCmdWrite | kCmdFast, 2, {"keyspace", "write", "fast"},
                        "1.0.0", "Renames a key only when the target key name doesn't exist."),
                   CmdRename<RenameMode::kNx>, CmdRenameMulti<RenameMode::kNx>);
  CommandSpec copy = Spec("copy", -3, kCmdWrite | kCmdDenyOom, 2, {"keyspace", "write", "slow"},
                          "6.2.0", "Copies the value of a key to a new key.");
  copy.other_db_key = CopyOtherDbKey;
  r->RegisterShard(std::move(copy), CmdCopy, CmdCopyMulti);
  CommandSpec move = Spec("move", 3, kCmdWrite | kCmdFast, 1, {"keyspace", "write", "fast"},
                          "1.0.0", "Moves a key to another database.");
  move.other_db_key = MoveOtherDbKey;
  r->RegisterShard(std::move(move), CmdMove);
}

}  // namespace dashkv
