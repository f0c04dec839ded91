// Set commands (Redis 7.0 semantics, encodings as Redis 7.2): SADD SREM SCARD SISMEMBER
// SMISMEMBER SMEMBERS SPOP SRANDMEMBER SSCAN SMOVE SINTERCARD SINTER SUNION SDIFF and the STORE
// forms. The algebra runs on the owning shard when all keys are there; otherwise the members are
// gathered (one hop per shard) and the same algebra (server/values/set_algebra.h) runs on the
// connection's thread; STORE forms and SMOVE then write in a second hop. The cross-shard forms
// run under intent locks on all their keys (server/tx/transaction.h): no other command sees
// the sources change between the gather and the write, nor a half-done move.
#include <charconv>
#include <memory>
#include <vector>

#include "core/glob.h"
#include "server/cmd_context.h"
#include "server/command_registry.h"
#include "server/commands/random_reply.h"
#include "server/commands/set_ops.h"
#include "server/tx/multi_key.h"
#include "server/config.h"
#include "server/storage/shard_set.h"
#include "server/values/set_algebra.h"

namespace dashkv {

namespace {

using boost::asio::awaitable;

SetLimits Limits(const ShardCmdContext& ctx) { return SetLimits::From(ctx.config); }

// Deletes the set at `it` (a mutable lookup of `key`) when it became empty, raising `del`.
void EraseIfEmpty(ShardCmdContext& ctx, PrimeIterator it, std::string_view key) {
  if (!AsSet(it->second).empty()) return;
  ctx.db.Erase(it, RemoveReason::kDeleted);
  ctx.db.Notify(kNotifyGeneric, "del", key);
}

// SADD key member [member ...]
void CmdSAdd(CmdArgs args, ShardCmdContext& ctx) {
  OpResult<DbSlice::AddResult> added = ctx.db.FindOrAddOfType(args[1], ObjType::kSet, ctx.now_ms);
  if (!added) return ctx.SendStatus(added.status());
  SetLimits limits = Limits(ctx);
  PrimeIterator it = added->it;
  if (added->inserted) {
    it->second.SetObject(ObjType::kSet, 0,
                         SetValue::Create(args[2], args.size() - 2, limits).release());
  }
  SetValue& set = AsSet(it->second);
  int64_t n = 0;
  for (size_t i = 2; i < args.size(); ++i) n += set.Add(args[i], limits);
  if (n > 0) {
    ctx.db.Notify(kNotifySet, "sadd", args[1]);
  } else {
    ctx.NoChange();
  }
  ctx.rb.SendLong(n);
}

// SREM key member [member ...]
void CmdSRem(CmdArgs args, ShardCmdContext& ctx) {
  OpResult<PrimeIterator> found = ctx.db.FindMutableOfType(args[1], ObjType::kSet, ctx.now_ms);
  if (!found) return SendLongOrError(ctx, found.status(), 0);
  SetValue& set = AsSet((*found)->second);
  int64_t n = 0;
  for (size_t i = 2; i < args.size() && !set.empty(); ++i) n += set.Remove(args[i]);
  if (n == 0) {
    ctx.NoChange();
    return ctx.rb.SendLong(0);
  }
  ctx.db.Notify(kNotifySet, "srem", args[1]);
  EraseIfEmpty(ctx, *found, args[1]);
  ctx.rb.SendLong(n);
}

// SCARD key
void CmdSCard(CmdArgs args, ShardCmdContext& ctx) {
  OpResult<PrimeIterator> found = ctx.db.FindReadOnlyOfType(args[1], ObjType::kSet, ctx.now_ms);
  if (!found) return SendLongOrError(ctx, found.status(), 0);
  ctx.rb.SendLong(static_cast<int64_t>(AsSet((*found)->second).size()));
}

// SISMEMBER key member
void CmdSIsMember(CmdArgs args, ShardCmdContext& ctx) {
  OpResult<PrimeIterator> found = ctx.db.FindReadOnlyOfType(args[1], ObjType::kSet, ctx.now_ms);
  if (!found) return SendLongOrError(ctx, found.status(), 0);
  ctx.rb.SendLong(AsSet((*found)->second).Contains(args[2]) ? 1 : 0);
}

// SMISMEMBER key member [member ...]
void CmdSMIsMember(CmdArgs args, ShardCmdContext& ctx) {
  OpResult<PrimeIterator> found = ctx.db.FindReadOnlyOfType(args[1], ObjType::kSet, ctx.now_ms);
  if (!found && found.status() != OpStatus::kKeyNotFound) return ctx.SendStatus(found.status());
  ctx.rb.StartArray(args.size() - 2);
  for (size_t i = 2; i < args.size(); ++i) {
    ctx.rb.SendLong(found && AsSet((*found)->second).Contains(args[i]) ? 1 : 0);
  }
}

// SMEMBERS key
void CmdSMembers(CmdArgs args, ShardCmdContext& ctx) {
  OpResult<PrimeIterator> found = ctx.db.FindReadOnlyOfType(args[1], ObjType::kSet, ctx.now_ms);
  if (!found) {
    if (found.status() != OpStatus::kKeyNotFound) return ctx.SendStatus(found.status());
    return ctx.rb.StartSet(0);
  }
  const SetValue& set = AsSet((*found)->second);
  ctx.rb.StartSet(set.size());
  set.ForEach([&](std::string_view m) { ctx.rb.SendBulk(m); });
}

// SPOP key [count]
void CmdSPop(CmdArgs args, ShardCmdContext& ctx) {
  if (args.size() > 3) return ctx.SendStatus(OpStatus::kSyntaxError);
  int64_t count = -1;  // no count
  if (args.size() == 3) {
    std::optional<int64_t> c = ParseInt64(args[2]);
    if (!c || *c < 0) return ctx.SendStatus(OpStatus::kNotPositive);
    count = *c;
  }
  OpResult<PrimeIterator> found = ctx.db.FindMutableOfType(args[1], ObjType::kSet, ctx.now_ms);
  if (!found) {
    if (found.status() != OpStatus::kKeyNotFound) return ctx.SendStatus(found.status());
    return count < 0 ? ctx.rb.SendNull() : ctx.rb.StartSet(0);
  }
  if (count == 0) {  // nothing popped, no event (Redis)
    ctx.NoChange();
    return ctx.rb.StartSet(0);
  }
  SetValue& set = AsSet((*found)->second);
  ctx.db.Notify(kNotifySet, "spop", args[1]);
  if (count < 0) {
    ctx.rb.SendBulk(set.PopRandom());
  } else if (static_cast<uint64_t>(count) >= set.size()) {
    ctx.rb.StartSet(set.size());
    set.ForEach([&](std::string_view m) { ctx.rb.SendBulk(m); });
    ctx.db.Erase(*found, RemoveReason::kDeleted);
    ctx.db.Notify(kNotifyGeneric, "del", args[1]);
    return;
  } else {
    ctx.rb.StartSet(static_cast<size_t>(count));
    for (int64_t i = 0; i < count; ++i) ctx.rb.SendBulk(set.PopRandom());
  }
  EraseIfEmpty(ctx, *found, args[1]);
}

// SRANDMEMBER key [count]
void CmdSRandMember(CmdArgs args, ShardCmdContext& ctx) {
  if (args.size() > 3) return ctx.SendStatus(OpStatus::kSyntaxError);
  std::optional<int64_t> count;
  if (args.size() == 3) {
    OpResult<RandCount> rc = ParseRandCount(args, "");
    if (!rc) return ctx.SendStatus(rc.status());
    count = rc->count;
  }
  OpResult<PrimeIterator> found = ctx.db.FindReadOnlyOfType(args[1], ObjType::kSet, ctx.now_ms);
  if (!found) {
    if (found.status() != OpStatus::kKeyNotFound) return ctx.SendStatus(found.status());
    return count ? ctx.rb.SendEmptyArray() : ctx.rb.SendNull();
  }
  const SetValue& set = AsSet((*found)->second);
  if (!count) return ctx.rb.SendBulk(set.RandomMember());
  if (*count < 0) {
    const uint64_t draws = uint64_t(0) - uint64_t(*count);
    DrawReply guard(ctx.rb, ctx.config, draws, 1);
    if (!guard.MayFit()) return ctx.SendStatus(OpStatus::kRandReplyTooLarge);
    ctx.rb.StartArray(draws);
    set.ForEachRandom(draws, [&](std::string_view m) {
      ctx.rb.SendBulk(m);
      return !guard.Exceeded();
    });
    if (guard.Exceeded()) guard.Abort();
    return;
  }
  std::vector<std::string> picked = DistinctRandomMembers(set, static_cast<uint64_t>(*count));
  ctx.rb.SendBulkArray(picked);
}

// SSCAN key cursor [MATCH pattern] [COUNT count]
void CmdSScan(CmdArgs args, ShardCmdContext& ctx) {
  OpResult<ScanArgs> sa = ParseScanArgs(args);
  if (!sa) return ctx.SendStatus(sa.status());
  OpResult<PrimeIterator> found = ctx.db.FindReadOnlyOfType(args[1], ObjType::kSet, ctx.now_ms);
  std::vector<std::string> members;
  uint64_t next = 0;
  if (found) {
    next = AsSet((*found)->second).Scan(sa->cursor, sa->count, [&](std::string_view m) {
      if (sa->Matches(m)) members.emplace_back(m);
    });
  } else if (found.status() != OpStatus::kKeyNotFound) {
    return ctx.SendStatus(found.status());
  }
  SendScanReply(ctx.rb, next, members);
}

// SMOVE source destination member, both keys on this shard.
void CmdSMove(CmdArgs args, ShardCmdContext& ctx) {
  OpResult<int64_t> res = OpSMove(ctx.db, args[1], args[2], args[3], Limits(ctx), ctx.now_ms);
  if (!res) return ctx.SendStatus(res.status());
  if (*res == 0 || args[1] == args[2]) ctx.NoChange();
  ctx.rb.SendLong(*res);
}

// SMOVE source destination member, keys on two shards: check both, remove, then add.
awaitable<void> CmdSMoveMulti(CmdArgs args, ConnCmdContext& ctx) {
  ShardSet& ss = ctx.shard_set();
  unsigned db = ctx.state.db;
  int64_t now = ctx.now_ms;
  SetLimits limits = SetLimits::From(ctx.config());
  std::string_view src = args[1], dst = args[2], member = args[3];
  OpStatus dst_status = co_await ss.Await(ss.ShardOf(dst), [&](Shard& shard) {
    PrimeIterator d = shard.db(db).FindReadOnlyQuiet(dst, now);
    return !d.is_done() && d->second.type() != ObjType::kSet ? OpStatus::kWrongType
                                                             : OpStatus::kOk;
  });
  OpResult<int64_t> removed = co_await ss.Await(ss.ShardOf(src), [&](Shard& shard) {
    return OpSRemoveChecked(shard.db(db), src, member, dst_status, now);
  });
  if (!removed) co_return ctx.SendStatus(removed.status());
  if (*removed == 1) {
    co_await ss.Await(ss.ShardOf(dst), [&](Shard& shard) {
      // A failed insert (the table could not grow) left the destination as it was.
      if (!OpSAddOne(shard.db(db), dst, member, limits, now)) shard.changes().MarkUnmodified();
    });
  }
  ctx.rb.SendLong(*removed);
}

// The keyspace event of a STORE form.
std::string_view StoreEvent(SetOp op) {
  switch (op) {
    case SetOp::kInter: return "sinterstore";
    case SetOp::kUnion: return "sunionstore";
    case SetOp::kDiff: return "sdiffstore";
  }
  return "";
}

// SINTER / SUNION / SDIFF key [key ...] and the STORE forms (destination first), all keys on
// this shard.
template <SetOp kOp, bool kStore>
void CmdSetAlgebra(CmdArgs args, ShardCmdContext& ctx) {
  size_t first = kStore ? 2 : 1;
  std::vector<SetOperand> operands;
  operands.reserve(args.size() - first);
  for (size_t i = first; i < args.size(); ++i) {
    OpResult<PrimeIterator> found = ctx.db.FindReadOnlyOfType(args[i], ObjType::kSet, ctx.now_ms);
    if (!found && found.status() != OpStatus::kKeyNotFound) return ctx.SendStatus(found.status());
    operands.push_back(found ? SetOperand(&AsSet((*found)->second)) : SetOperand());
  }
  std::vector<std::string> result = ComputeSetOp(kOp, operands);
  if (!kStore) return SendMemberSet(ctx.rb, result);
  OpResult<StoreResult> stored =
      StoreSet(ctx.db, args[1], result, Limits(ctx), StoreEvent(kOp), ctx.now_ms);
  if (!stored) return ctx.SendStatus(stored.status());
  if (!stored->changed) ctx.NoChange();
  ctx.rb.SendLong(stored->size);
}

// The same with keys on several shards: gather, compute here, then store in a second hop.
template <SetOp kOp, bool kStore>
awaitable<void> CmdSetAlgebraMulti(CmdArgs args, ConnCmdContext& ctx) {
  size_t first = kStore ? 2 : 1;
  OpResult<std::vector<std::unique_ptr<GatheredSet>>> gathered =
      co_await GatherSets(ctx, args, first, args.size() - 1);
  if (!gathered) co_return ctx.SendStatus(gathered.status());
  std::vector<SetOperand> operands = OperandsOf(*gathered);
  std::vector<std::string> result = ComputeSetOp(kOp, operands);
  if (!kStore) co_return SendMemberSet(ctx.rb, result);
  OpResult<StoreResult> stored = co_await StoreSetRemote(ctx, args[1], result, StoreEvent(kOp));
  if (!stored) co_return ctx.SendStatus(stored.status());
  ctx.rb.SendLong(stored->size);
}

// SINTERCARD numkeys key [key ...] [LIMIT limit]
awaitable<void> CmdSInterCard(CmdArgs args, ConnCmdContext& ctx) {
  OpResult<NumKeysArgs> parsed = ParseSInterCard(args);
  if (!parsed) co_return ctx.SendStatus(parsed.status());
  size_t first = 2, last = 1 + parsed->numkeys;
  ShardSet& ss = ctx.shard_set();
  unsigned db = ctx.state.db;
  int64_t now = ctx.now_ms;
  std::optional<unsigned> sid = SingleShardOfRange(ss, args, first, last);
  OpResult<int64_t> card = OpStatus::kOk;
  if (sid) {
    card = co_await ss.Await(*sid, [&](Shard& shard) -> OpResult<int64_t> {
      std::vector<SetOperand> operands;
      for (size_t i = first; i <= last; ++i) {
        OpResult<PrimeIterator> f = shard.db(db).FindReadOnlyOfType(args[i], ObjType::kSet, now);
        if (!f && f.status() != OpStatus::kKeyNotFound) return f.status();
        operands.push_back(f ? SetOperand(&AsSet((*f)->second)) : SetOperand());
      }
      return static_cast<int64_t>(IntersectionCard(operands, parsed->limit));
    });
  } else {
    OpResult<std::vector<std::unique_ptr<GatheredSet>>> gathered =
        co_await GatherSets(ctx, args, first, last);
    if (!gathered) co_return ctx.SendStatus(gathered.status());
    std::vector<SetOperand> operands = OperandsOf(*gathered);
    card = static_cast<int64_t>(IntersectionCard(operands, parsed->limit));
  }
  if (!card) co_return ctx.SendStatus(card.status());
  ctx.rb.SendLong(*card);
}

CommandSpec Spec(std::string name, int arity, uint32_t flags, int first_key, int last_key,
                 std::vector<std::string_view> cats, std::string_view since,
                 std::string_view summary) {
  return MakeSpec(std::move(name), arity, flags, first_key, last_key, std::move(cats), "set", since,
                  summary);
}

constexpr uint32_t kWriteOomFast = kCmdWrite | kCmdDenyOom | kCmdFast;
constexpr uint32_t kWriteOom = kCmdWrite | kCmdDenyOom;
constexpr uint32_t kReadFast = kCmdReadOnly | kCmdFast;

}  // namespace

void RegisterSetCommands(CommandRegistry* r) {
  using V = std::vector<std::string_view>;
  const V w_fast{"write", "set", "fast"}, w_slow{"write", "set", "slow"};
  const V r_fast{"read", "set", "fast"}, r_slow{"read", "set", "slow"};
  r->RegisterShard(Spec("sadd", -3, kWriteOomFast, 1, 1, w_fast, "1.0.0",
              "Adds one or more members to a set. Creates the key if it doesn't exist."), CmdSAdd);
  r->RegisterShard(Spec("srem", -3, kCmdWrite | kCmdFast, 1, 1, w_fast, "1.0.0",
              "Removes one or more members from a set. Deletes the set if the last member was "
              "removed."), CmdSRem);
  r->RegisterShard(Spec("scard", 2, kReadFast, 1, 1, r_fast, "1.0.0",
              "Returns the number of members in a set."), CmdSCard);
  r->RegisterShard(Spec("sismember", 3, kReadFast, 1, 1, r_fast, "1.0.0",
              "Determines whether a member belongs to a set."), CmdSIsMember);
  r->RegisterShard(Spec("smismember", -3, kReadFast, 1, 1, r_fast, "6.2.0",
              "Determines whether multiple members belong to a set."), CmdSMIsMember);
  r->RegisterShard(Spec("smembers", 2, kCmdReadOnly, 1, 1, r_slow, "1.0.0",
              "Returns all members of a set."), CmdSMembers);
  r->RegisterShard(Spec("spop", -2, kCmdWrite | kCmdFast, 1, 1, w_fast, "1.0.0",
              "Returns one or more random members from a set after removing them. Deletes the "
              "set if the last member was popped."), CmdSPop);
  r->RegisterShard(Spec("srandmember", -2, kCmdReadOnly, 1, 1, r_slow, "1.0.0",
              "Get one or multiple random members from a set"), CmdSRandMember);
  r->RegisterShard(Spec("sscan", -3, kCmdReadOnly, 1, 1, r_slow, "2.8.0",
              "Iterates over members of a set."), CmdSScan);
  r->RegisterShard(Spec("smove", 4, kWriteOomFast, 1, 2, w_fast, "1.0.0",
              "Moves a member from one set to another."), CmdSMove, CmdSMoveMulti);
  r->RegisterShard(Spec("sinter", -2, kCmdReadOnly, 1, -1, r_slow, "1.0.0",
              "Returns the intersect of multiple sets."),
      CmdSetAlgebra<SetOp::kInter, false>, CmdSetAlgebraMulti<SetOp::kInter, false>);
  r->RegisterShard(Spec("sunion", -2, kCmdReadOnly, 1, -1, r_slow, "1.0.0",
              "Returns the union of multiple sets."),
      CmdSetAlgebra<SetOp::kUnion, false>, CmdSetAlgebraMulti<SetOp::kUnion, false>);
  r->RegisterShard(Spec("sdiff", -2, kCmdReadOnly, 1, -1, r_slow, "1.0.0",
              "Returns the difference of multiple sets."),
      CmdSetAlgebra<SetOp::kDiff, false>, CmdSetAlgebraMulti<SetOp::kDiff, false>);
  r->RegisterShard(Spec("sinterstore", -3, kWriteOom, 1, -1, w_slow, "1.0.0",
              "Stores the intersect of multiple sets in a key."),
      CmdSetAlgebra<SetOp::kInter, true>, CmdSetAlgebraMulti<SetOp::kInter, true>);
  r->RegisterShard(Spec("sunionstore", -3, kWriteOom, 1, -1, w_slow, "1.0.0",
              "Stores the union of multiple sets in a key."),
      CmdSetAlgebra<SetOp::kUnion, true>, CmdSetAlgebraMulti<SetOp::kUnion, true>);
  r->RegisterShard(Spec("sdiffstore", -3, kWriteOom, 1, -1, w_slow, "1.0.0",
              "Stores the difference of multiple sets in a key."),
      CmdSetAlgebra<SetOp::kDiff, true>, CmdSetAlgebraMulti<SetOp::kDiff, true>);
  CommandSpec sintercard = Spec("sintercard", -3, kCmdReadOnly, 0, 0, r_slow, "7.0.0",
                                "Returns the number of members of the intersect of multiple sets.");
  sintercard.numkeys_index = 1;
  r->RegisterCoord(std::move(sintercard), CmdSInterCard);
}

}  // namespace dashkv
