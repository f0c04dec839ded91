// Sorted-set commands (Redis 7.0 semantics; scores in replies in the shortest round-trip form of
// Redis 7.2, ZRANK/ZREVRANK accept 7.2's WITHSCORE). Single-key commands run on the owning shard.
// ZUNION/ZINTER/ZDIFF/ZINTERCARD and the STORE forms, ZRANGESTORE and ZMPOP run on one shard
// when their keys allow it; otherwise the elements are gathered (one hop per shard), combined on
// the connection's thread (server/values/zset_algebra.h) and written in a second hop, all under
// intent locks on every key (server/tx/transaction.h), so the command is atomic.
#include <cmath>
#include <memory>
#include <vector>

#include "server/cmd_context.h"
#include "server/command_registry.h"
#include "server/commands/random_reply.h"
#include "server/commands/set_ops.h"
#include "server/commands/zset_ops.h"
#include "server/config.h"
#include "server/conn_state.h"
#include "server/storage/shard_set.h"

namespace dashkv {

namespace {

using boost::asio::awaitable;

ZsetLimits Limits(const ShardCmdContext& ctx) { return ZsetLimits::From(ctx.config); }

// Returns the entry of the sorted set at key for reading (kKeyNotFound / kWrongType otherwise).
OpResult<PrimeIterator> FindZset(ShardCmdContext& ctx, std::string_view key) {
  return ctx.db.FindReadOnlyOfType(key, ObjType::kZset, ctx.now_ms);
}

// Returns the entry of the sorted set at key for changing.
OpResult<PrimeIterator> FindMutableZset(ShardCmdContext& ctx, std::string_view key) {
  return ctx.db.FindMutableOfType(key, ObjType::kZset, ctx.now_ms);
}

// After members were removed from the zset at `it` (a mutable lookup of `key`): raises `event`,
// then deletes the key (raising `del`) when it became empty.
void FinishRemoval(ShardCmdContext& ctx, PrimeIterator it, std::string_view key,
                   std::string_view event) {
  ctx.db.Notify(kNotifyZset, event, key);
  if (!AsZset(it->second).empty()) return;
  ctx.db.Erase(it, RemoveReason::kDeleted);
  ctx.db.Notify(kNotifyGeneric, "del", key);
}

struct ZAddFlags {
  bool nx = false, xx = false, gt = false, lt = false, ch = false, incr = false;
};

// ZADD key [NX|XX] [GT|LT] [CH] [INCR] score member [score member ...]
void CmdZAdd(CmdArgs args, ShardCmdContext& ctx) {
  ZAddFlags f;
  ArgParser p(args, 2);
  while (true) {
    if (p.Check("NX")) f.nx = true;
    else if (p.Check("XX")) f.xx = true;
    else if (p.Check("GT")) f.gt = true;
    else if (p.Check("LT")) f.lt = true;
    else if (p.Check("CH")) f.ch = true;
    else if (p.Check("INCR")) f.incr = true;
    else break;
  }
  size_t first = p.position(), pairs = (args.size() - first) / 2;
  if ((args.size() - first) % 2 != 0 || pairs == 0) return ctx.SendStatus(OpStatus::kSyntaxError);
  if (f.nx && f.xx) return ctx.SendStatus(OpStatus::kZaddXxNx);
  if ((f.gt && f.lt) || ((f.gt || f.lt) && f.nx)) return ctx.SendStatus(OpStatus::kZaddGtLtNx);
  if (f.incr && pairs > 1) return ctx.SendStatus(OpStatus::kZaddIncrPair);
  std::vector<double> scores(pairs);
  size_t max_len = 0;
  for (size_t i = 0; i < pairs; ++i) {
    std::optional<double> s = ParseScore(args[first + 2 * i]);
    if (!s) return ctx.SendStatus(OpStatus::kNotAFloat);
    scores[i] = *s;
    max_len = std::max(max_len, args[first + 2 * i + 1].size());
  }
  OpResult<PrimeIterator> found = FindMutableZset(ctx, args[1]);
  if (!found && found.status() != OpStatus::kKeyNotFound) return ctx.SendStatus(found.status());
  ZsetLimits limits = Limits(ctx);
  PrimeIterator it;
  if (found) {
    it = *found;
  } else {
    if (f.xx) {
      ctx.NoChange();
      return f.incr ? ctx.rb.SendNull() : ctx.rb.SendLong(0);
    }
    OpResult<DbSlice::AddResult> added = ctx.db.FindOrAdd(args[1], ctx.now_ms);
    if (!added) return ctx.SendStatus(added.status());
    it = added->it;
    it->second.SetObject(ObjType::kZset, 0, ZsetValue::Create(pairs, max_len, limits).release());
  }
  ZsetValue& z = AsZset(it->second);
  int64_t added = 0, changed = 0;
  std::optional<double> result;  // INCR: the new score, unless skipped
  for (size_t i = 0; i < pairs; ++i) {
    std::string_view m = args[first + 2 * i + 1];
    double s = scores[i];
    std::optional<double> old = z.Score(m);
    if (old) {
      if (f.nx) continue;
      if (f.incr) {
        s += *old;
        if (std::isnan(s)) {
          if (z.empty()) ctx.db.Erase(it, RemoveReason::kDeleted);
          return ctx.SendStatus(OpStatus::kScoreNan);
        }
      }
      if ((f.gt && !(s > *old)) || (f.lt && !(s < *old))) continue;
      if (s != *old) {
        z.Set(m, s, limits);
        ++changed;
      }
      result = s;
    } else {
      if (f.xx) continue;
      z.Set(m, s, limits);
      ++added;
      result = s;
    }
  }
  if (z.empty()) ctx.db.Erase(it, RemoveReason::kDeleted);
  // Redis raises the event (and touches WATCH) only when a member was added or its score moved.
  if (added + changed > 0) {
    ctx.db.Notify(kNotifyZset, f.incr ? "zincr" : "zadd", args[1]);
  } else {
    ctx.NoChange();
  }
  if (f.incr) return result ? SendScore(ctx.rb, *result) : ctx.rb.SendNull();
  ctx.rb.SendLong(added + (f.ch ? changed : 0));
}

// ZINCRBY key increment member
void CmdZIncrBy(CmdArgs args, ShardCmdContext& ctx) {
  std::optional<double> incr = ParseScore(args[2]);
  if (!incr) return ctx.SendStatus(OpStatus::kNotAFloat);
  OpResult<DbSlice::AddResult> added = ctx.db.FindOrAddOfType(args[1], ObjType::kZset, ctx.now_ms);
  if (!added) return ctx.SendStatus(added.status());
  ZsetLimits limits = Limits(ctx);
  PrimeIterator it = added->it;
  if (added->inserted) {
    it->second.SetObject(ObjType::kZset, 0,
                         ZsetValue::Create(1, args[3].size(), limits).release());
  }
  ZsetValue& z = AsZset(it->second);
  std::optional<double> old = z.Score(args[3]);
  double s = old.value_or(0) + *incr;
  if (std::isnan(s)) {
    if (z.empty()) ctx.db.Erase(it, RemoveReason::kDeleted);
    return ctx.SendStatus(OpStatus::kScoreNan);
  }
  if (!old || s != *old) {
    z.Set(args[3], s, limits);
    ctx.db.Notify(kNotifyZset, "zincr", args[1]);
  } else {
    ctx.NoChange();  // the score stays (increment 0): no event, as Redis
  }
  SendScore(ctx.rb, s);
}

// ZREM key member [member ...]
void CmdZRem(CmdArgs args, ShardCmdContext& ctx) {
  OpResult<PrimeIterator> found = FindMutableZset(ctx, args[1]);
  if (!found) return SendLongOrError(ctx, found.status(), 0);
  ZsetValue& z = AsZset((*found)->second);
  int64_t n = 0;
  for (size_t i = 2; i < args.size() && !z.empty(); ++i) n += z.Remove(args[i]);
  if (n == 0) {
    ctx.NoChange();
    return ctx.rb.SendLong(0);
  }
  FinishRemoval(ctx, *found, args[1], "zrem");
  ctx.rb.SendLong(n);
}

// ZCARD key
void CmdZCard(CmdArgs args, ShardCmdContext& ctx) {
  OpResult<PrimeIterator> found = FindZset(ctx, args[1]);
  if (!found) return SendLongOrError(ctx, found.status(), 0);
  ctx.rb.SendLong(static_cast<int64_t>(AsZset((*found)->second).size()));
}

// ZSCORE key member
void CmdZScore(CmdArgs args, ShardCmdContext& ctx) {
  OpResult<PrimeIterator> found = FindZset(ctx, args[1]);
  if (!found) {
    if (found.status() != OpStatus::kKeyNotFound) return ctx.SendStatus(found.status());
    return ctx.rb.SendNull();
  }
  std::optional<double> s = AsZset((*found)->second).Score(args[2]);
  s ? SendScore(ctx.rb, *s) : ctx.rb.SendNull();
}

// ZMSCORE key member [member ...]
void CmdZMScore(CmdArgs args, ShardCmdContext& ctx) {
  OpResult<PrimeIterator> found = FindZset(ctx, args[1]);
  if (!found && found.status() != OpStatus::kKeyNotFound) return ctx.SendStatus(found.status());
  ctx.rb.StartArray(args.size() - 2);
  for (size_t i = 2; i < args.size(); ++i) {
    std::optional<double> s;
    if (found) s = AsZset((*found)->second).Score(args[i]);
    s ? SendScore(ctx.rb, *s) : ctx.rb.SendNull();
  }
}

// ZRANK / ZREVRANK key member [WITHSCORE]
template <bool kReverse>
void CmdZRank(CmdArgs args, ShardCmdContext& ctx) {
  bool withscore = false;
  if (args.size() == 4) {
    if (!EqualsIgnoreCase(args[3], "WITHSCORE")) return ctx.SendStatus(OpStatus::kSyntaxError);
    withscore = true;
  } else if (args.size() > 4) {
    return ctx.SendStatus(OpStatus::kSyntaxError);
  }
  OpResult<PrimeIterator> found = FindZset(ctx, args[1]);
  if (!found && found.status() != OpStatus::kKeyNotFound) return ctx.SendStatus(found.status());
  std::optional<uint64_t> rank;
  std::optional<double> score;
  if (found) {
    const ZsetValue& z = AsZset((*found)->second);
    rank = z.Rank(args[2]);
    if (rank && kReverse) *rank = z.size() - 1 - *rank;
    if (rank && withscore) score = z.Score(args[2]);
  }
  if (!rank) return withscore ? ctx.rb.SendNullArray() : ctx.rb.SendNull();
  if (!withscore) return ctx.rb.SendLong(static_cast<int64_t>(*rank));
  ctx.rb.StartArray(2);
  ctx.rb.SendLong(static_cast<int64_t>(*rank));
  SendScore(ctx.rb, *score);
}

// ZCOUNT key min max / ZLEXCOUNT key min max
template <RangeSpec::By kBy>
void CmdZCount(CmdArgs args, ShardCmdContext& ctx) {
  RangeSpec spec;
  spec.by = kBy;
  spec.start = args[2];
  spec.stop = args[3];
  OpStatus bounds = CheckRangeBounds(spec);
  if (bounds != OpStatus::kOk) return ctx.SendStatus(bounds);
  OpResult<PrimeIterator> found = FindZset(ctx, args[1]);
  if (!found) return SendLongOrError(ctx, found.status(), 0);
  OpResult<RankWindow> w = SelectRanks(AsZset((*found)->second), spec);
  ctx.rb.SendLong(static_cast<int64_t>(w->last - w->first));
}

// ZRANGE key start stop [BYSCORE|BYLEX] [REV] [LIMIT offset count] [WITHSCORES], and the older
// ZREVRANGE, ZRANGEBYSCORE, ZREVRANGEBYSCORE, ZRANGEBYLEX, ZREVRANGEBYLEX.
template <RangeCommand kCmd>
void CmdZRange(CmdArgs args, ShardCmdContext& ctx) {
  OpResult<RangeSpec> spec = ParseRangeSpec(args, 2, kCmd);
  if (!spec) return ctx.SendStatus(spec.status());
  OpStatus bounds = CheckRangeBounds(*spec);
  if (bounds != OpStatus::kOk) return ctx.SendStatus(bounds);
  OpResult<PrimeIterator> found = FindZset(ctx, args[1]);
  if (!found) {
    if (found.status() != OpStatus::kKeyNotFound) return ctx.SendStatus(found.status());
    return ctx.rb.SendEmptyArray();
  }
  const ZsetValue& z = AsZset((*found)->second);
  OpResult<RankWindow> w = SelectRanks(z, *spec);
  uint64_t n = w->last > w->first ? w->last - w->first : 0;
  bool pairs = spec->withscores && ctx.rb.resp3();
  ctx.rb.StartArray(spec->withscores && !pairs ? 2 * n : n);
  z.Range(w->first, w->last, spec->reverse, [&](std::string_view m, double s) {
    if (pairs) ctx.rb.StartArray(2);
    ctx.rb.SendBulk(m);
    if (spec->withscores) SendScore(ctx.rb, s);
  });
}

// ZRANGESTORE dst src min max [BYSCORE|BYLEX] [REV] [LIMIT offset count], both keys here.
void CmdZRangeStore(CmdArgs args, ShardCmdContext& ctx) {
  OpResult<RangeSpec> spec = ParseRangeSpec(args, 3, RangeCommand::kZRangeStore);
  if (!spec) return ctx.SendStatus(spec.status());
  OpStatus bounds = CheckRangeBounds(*spec);
  if (bounds != OpStatus::kOk) return ctx.SendStatus(bounds);
  OpResult<PrimeIterator> found = FindZset(ctx, args[2]);
  if (!found && found.status() != OpStatus::kKeyNotFound) return ctx.SendStatus(found.status());
  ScoredMembers items;
  if (found) items = CollectRange(AsZset((*found)->second), *spec);
  OpResult<StoreResult> n = StoreZset(ctx.db, args[1], items, Limits(ctx), "zrangestore",
                                      ctx.now_ms);
  if (!n) return ctx.SendStatus(n.status());
  if (!n->changed) ctx.NoChange();
  ctx.rb.SendLong(n->size);
}

// ZRANGESTORE with the two keys on different shards: collect on the source, store on the
// destination.
awaitable<void> CmdZRangeStoreMulti(CmdArgs args, ConnCmdContext& ctx) {
  OpResult<RangeSpec> spec = ParseRangeSpec(args, 3, RangeCommand::kZRangeStore);
  if (!spec) co_return ctx.SendStatus(spec.status());
  OpStatus bounds = CheckRangeBounds(*spec);
  if (bounds != OpStatus::kOk) co_return ctx.SendStatus(bounds);
  ShardSet& ss = ctx.shard_set();
  unsigned db = ctx.state.db;
  int64_t now = ctx.now_ms;
  OpResult<ScoredMembers> items =
      co_await ss.Await(ss.ShardOf(args[2]), [&](Shard& shard) -> OpResult<ScoredMembers> {
        OpResult<PrimeIterator> f = shard.db(db).FindReadOnlyOfType(args[2], ObjType::kZset, now);
        if (!f) {
          if (f.status() == OpStatus::kKeyNotFound) return ScoredMembers{};
          return f.status();
        }
        return CollectRange(AsZset((*f)->second), *spec);
      });
  if (!items) co_return ctx.SendStatus(items.status());
  ZsetLimits limits = ZsetLimits::From(ctx.config());
  OpResult<StoreResult> n = co_await ss.Await(ss.ShardOf(args[1]), [&](Shard& shard) {
    return StoreZset(shard.db(db), args[1], *items, limits, "zrangestore", now);
  });
  if (!n) co_return ctx.SendStatus(n.status());
  ctx.rb.SendLong(n->size);
}

// ZREMRANGEBYRANK / ZREMRANGEBYSCORE / ZREMRANGEBYLEX key min max
template <RangeSpec::By kBy>
void CmdZRemRange(CmdArgs args, ShardCmdContext& ctx) {
  RangeSpec spec;
  spec.by = kBy;
  spec.start = args[2];
  spec.stop = args[3];
  OpStatus bounds = CheckRangeBounds(spec);
  if (bounds != OpStatus::kOk) return ctx.SendStatus(bounds);
  OpResult<PrimeIterator> found = FindMutableZset(ctx, args[1]);
  if (!found) return SendLongOrError(ctx, found.status(), 0);
  ZsetValue& z = AsZset((*found)->second);
  OpResult<RankWindow> w = SelectRanks(z, spec);
  uint64_t n = z.RemoveRanks(w->first, w->last);
  if (n == 0) {
    ctx.NoChange();
    return ctx.rb.SendLong(0);
  }
  constexpr std::string_view kEvent = kBy == RangeSpec::By::kRank    ? "zremrangebyrank"
                                      : kBy == RangeSpec::By::kScore ? "zremrangebyscore"
                                                                     : "zremrangebylex";
  FinishRemoval(ctx, *found, args[1], kEvent);
  ctx.rb.SendLong(static_cast<int64_t>(n));
}

// ZPOPMIN / ZPOPMAX key [count]
template <bool kMax>
void CmdZPop(CmdArgs args, ShardCmdContext& ctx) {
  if (args.size() > 3) return ctx.SendStatus(OpStatus::kSyntaxError);
  int64_t count = 1;
  if (args.size() == 3) {
    std::optional<int64_t> c = ParseInt64(args[2]);
    if (!c || *c < 0) return ctx.SendStatus(OpStatus::kNotPositive);
    count = *c;
  }
  OpResult<PrimeIterator> found = FindMutableZset(ctx, args[1]);
  if (!found) {
    if (found.status() != OpStatus::kKeyNotFound) return ctx.SendStatus(found.status());
    return ctx.rb.SendEmptyArray();
  }
  if (count == 0) {  // nothing popped, no event (Redis)
    ctx.NoChange();
    return ctx.rb.SendEmptyArray();
  }
  ScoredMembers items = PopElements(ctx.db, *found, args[1], static_cast<uint64_t>(count), kMax);
  if (args.size() == 3) return SendScoredMembers(ctx.rb, items, true);
  ctx.rb.StartArray(2 * items.size());  // no count: one flat pair
  for (const auto& [m, s] : items) {
    ctx.rb.SendBulk(m);
    SendScore(ctx.rb, s);
  }
}

// ZMPOP numkeys key [key ...] MIN|MAX [COUNT count]
awaitable<void> CmdZMPop(CmdArgs args, ConnCmdContext& ctx) {
  OpResult<size_t> numkeys = ParseNumKeys(args, 1);
  if (!numkeys) co_return ctx.SendStatus(numkeys.status());
  ArgParser p(args, 2 + *numkeys);
  bool max = false;
  if (p.Check("MAX")) {
    max = true;
  } else if (!p.Check("MIN")) {
    co_return ctx.SendStatus(OpStatus::kSyntaxError);
  }
  int64_t count = 1;
  if (p.Check("COUNT")) {
    count = p.NextInt(OpStatus::kCountNotPositive);
    if (!p.HasError() && count < 1) p.SetError(OpStatus::kCountNotPositive);
  }
  if (p.HasNext()) p.SetError(OpStatus::kSyntaxError);
  if (p.HasError()) co_return ctx.SendStatus(p.error());
  // Keys in order: the first non-empty sorted set is popped (one hop per key's shard).
  ShardSet& ss = ctx.shard_set();
  unsigned db = ctx.state.db;
  int64_t now = ctx.now_ms;
  for (size_t i = 2; i < 2 + *numkeys; ++i) {
    OpResult<ScoredMembers> popped =
        co_await ss.Await(ss.ShardOf(args[i]), [&](Shard& shard) -> OpResult<ScoredMembers> {
          OpResult<PrimeIterator> f = shard.db(db).FindMutableOfType(args[i], ObjType::kZset, now);
          if (!f) {
            if (f.status() == OpStatus::kKeyNotFound) return ScoredMembers{};
            return f.status();
          }
          return PopElements(shard.db(db), *f, args[i], static_cast<uint64_t>(count), max);
        });
    if (!popped) co_return ctx.SendStatus(popped.status());
    if (popped->empty()) continue;
    ctx.rb.StartArray(2);
    ctx.rb.SendBulk(args[i]);
    co_return SendScoredMembers(ctx.rb, *popped, true, /*nested=*/true);
  }
  ctx.rb.SendNullArray();
}

// Sends one member of ZRANDMEMBER, with its score when asked (RESP3: a pair array).
void SendRandomMember(io::ReplyBuilder& rb, bool withscores, std::string_view m, double s) {
  if (!withscores) return rb.SendBulk(m);
  if (rb.resp3()) rb.StartArray(2);
  rb.SendBulk(m);
  SendScore(rb, s);
}

// ZRANDMEMBER key [count [WITHSCORES]]
void CmdZRandMember(CmdArgs args, ShardCmdContext& ctx) {
  std::optional<RandCount> rc;
  if (args.size() >= 3) {
    OpResult<RandCount> parsed = ParseRandCount(args, "WITHSCORES");
    if (!parsed) return ctx.SendStatus(parsed.status());
    rc = *parsed;
  }
  OpResult<PrimeIterator> found = FindZset(ctx, args[1]);
  if (!found) {
    if (found.status() != OpStatus::kKeyNotFound) return ctx.SendStatus(found.status());
    return rc ? ctx.rb.SendEmptyArray() : ctx.rb.SendNull();
  }
  const ZsetValue& z = AsZset((*found)->second);
  const uint64_t n = z.size();
  auto at = [&](uint64_t rank) {
    std::pair<std::string, double> e;
    z.Range(rank, rank + 1, false, [&](std::string_view m, double s) { e = {std::string(m), s}; });
    return e;
  };
  if (!rc) return ctx.rb.SendBulk(at(ShardRandom() % n).first);
  const bool withscores = rc->with_values;
  if (rc->count < 0) {
    const uint64_t draws = uint64_t(0) - uint64_t(rc->count);
    DrawReply guard(ctx.rb, ctx.config, draws, withscores ? 2 : 1);
    if (!guard.MayFit()) return ctx.SendStatus(OpStatus::kRandReplyTooLarge);
    ctx.rb.StartArray(withscores && !ctx.rb.resp3() ? draws * 2 : draws);
    if (draws < n / 8) {  // few draws: one rank lookup each
      for (uint64_t i = 0; i < draws; ++i) {
        auto [m, s] = at(ShardRandom() % n);
        SendRandomMember(ctx.rb, withscores, m, s);
      }
      return;
    }
    ScoredMembers all;  // many draws: copy the elements once (bounded by the value, not count)
    all.reserve(n);
    z.Range(0, n, false, [&](std::string_view m, double s) { all.emplace_back(m, s); });
    for (uint64_t i = 0; i < draws && !guard.Exceeded(); ++i) {
      const auto& [m, s] = all[ShardRandom() % n];
      SendRandomMember(ctx.rb, withscores, m, s);
    }
    if (guard.Exceeded()) guard.Abort();
    return;
  }
  const uint64_t count = static_cast<uint64_t>(rc->count);
  ScoredMembers items;
  if (count >= n) {
    z.Range(0, n, false, [&](std::string_view m, double s) { items.emplace_back(m, s); });
  } else {  // distinct ranks: a partial Fisher-Yates over rank numbers
    std::vector<uint64_t> ranks(n);
    for (uint64_t i = 0; i < n; ++i) ranks[i] = i;
    for (uint64_t i = 0; i < count; ++i) {
      std::swap(ranks[i], ranks[i + ShardRandom() % (n - i)]);
      items.push_back(at(ranks[i]));
    }
  }
  SendScoredMembers(ctx.rb, items, withscores);
}

// ZSCAN key cursor [MATCH pattern] [COUNT count]
void CmdZScan(CmdArgs args, ShardCmdContext& ctx) {
  OpResult<ScanArgs> sa = ParseScanArgs(args);
  if (!sa) return ctx.SendStatus(sa.status());
  OpResult<PrimeIterator> found = FindZset(ctx, args[1]);
  if (!found && found.status() != OpStatus::kKeyNotFound) return ctx.SendStatus(found.status());
  std::vector<std::string> items;
  uint64_t next = 0;
  if (found) {
    next = AsZset((*found)->second).Scan(sa->cursor, sa->count, [&](std::string_view m, double s) {
      if (!sa->Matches(m)) return;
      items.emplace_back(m);
      items.push_back(FormatScoreShortest(s));
    });
  }
  SendScanReply(ctx.rb, next, items);
}

// ZUNION/ZINTER/ZDIFF numkeys key ... [WEIGHTS ...] [AGGREGATE ...] [WITHSCORES], the STORE forms
// (destination numkeys key ...), and ZINTERCARD numkeys key ... [LIMIT limit].
template <ZOp kOp, bool kStore>
awaitable<void> CmdZAlgebra(CmdArgs args, ConnCmdContext& ctx) {
  OpResult<ZAlgebraArgs> za = ParseZAlgebra(args, kStore, kOp != ZOp::kDiff);
  if (!za) {
    if (za.status() == OpStatus::kNoInputKey) co_return ctx.rb.SendError(NoInputKeyText(ctx.spec.name));
    co_return ctx.SendStatus(za.status());
  }
  ShardSet& ss = ctx.shard_set();
  unsigned db = ctx.state.db;
  int64_t now = ctx.now_ms;
  ZsetLimits limits = ZsetLimits::From(ctx.config());
  size_t first = za->first_key, last = za->first_key + za->numkeys - 1;
  std::optional<unsigned> sid = SingleShardOfRange(ss, args, first, last);
  if (sid && kStore && ss.ShardOf(args[1]) != *sid) sid.reset();
  OpResult<ScoredMembers> result = OpStatus::kOk;
  OpResult<StoreResult> stored = StoreResult{};
  constexpr std::string_view kEvent = kOp == ZOp::kUnion   ? "zunionstore"
                                      : kOp == ZOp::kInter ? "zinterstore"
                                                           : "zdiffstore";
  if (sid) {  // one hop: compute (and store) on the owning shard
    co_await ss.Await(*sid, [&](Shard& shard) {
      OpResult<std::vector<ZOperand>> ops = LocalZOperands(shard.db(db), args, first, last, now);
      if (!ops) {
        result = ops.status();
        return;
      }
      result = ComputeZsetOp(kOp, *ops, za->weights, za->agg);
      if (kStore) stored = StoreZset(shard.db(db), args[1], *result, limits, kEvent, now);
    });
  } else {
    OpResult<std::vector<std::unique_ptr<GatheredZset>>> gathered =
        co_await GatherZsets(ctx, args, first, last);
    if (!gathered) co_return ctx.SendStatus(gathered.status());
    std::vector<ZOperand> ops = ZOperandsOf(*gathered);
    result = ComputeZsetOp(kOp, ops, za->weights, za->agg);
    if (kStore) {
      stored = co_await ss.Await(ss.ShardOf(args[1]), [&](Shard& shard) {
        return StoreZset(shard.db(db), args[1], *result, limits, kEvent, now);
      });
    }
  }
  if (!result) co_return ctx.SendStatus(result.status());
  if (!stored) co_return ctx.SendStatus(stored.status());
  if (kStore) {
    co_return ctx.rb.SendLong(stored->size);
  }
  SendScoredMembers(ctx.rb, *result, za->withscores);
}

awaitable<void> CmdZInterCard(CmdArgs args, ConnCmdContext& ctx) {
  // numkeys is checked as ZUNION's (its own errors), LIMIT as SINTERCARD's.
  std::optional<int64_t> n = ParseInt64(args[1]);
  if (!n) co_return ctx.SendStatus(OpStatus::kNotAnInteger);
  if (*n < 1) co_return ctx.rb.SendError(NoInputKeyText(ctx.spec.name));
  if (static_cast<uint64_t>(*n) > args.size() - 2) co_return ctx.SendStatus(OpStatus::kSyntaxError);
  OpResult<NumKeysArgs> parsed = ParseSInterCard(args);
  if (!parsed) co_return ctx.SendStatus(parsed.status());
  size_t first = 2, last = 1 + parsed->numkeys;
  ShardSet& ss = ctx.shard_set();
  unsigned db = ctx.state.db;
  int64_t now = ctx.now_ms;
  std::optional<unsigned> sid = SingleShardOfRange(ss, args, first, last);
  OpResult<int64_t> card = 0;
  if (sid) {
    card = co_await ss.Await(*sid, [&](Shard& shard) -> OpResult<int64_t> {
      OpResult<std::vector<ZOperand>> ops = LocalZOperands(shard.db(db), args, first, last, now);
      if (!ops) return ops.status();
      return static_cast<int64_t>(ZIntersectionCard(*ops, parsed->limit));
    });
  } else {
    OpResult<std::vector<std::unique_ptr<GatheredZset>>> gathered =
        co_await GatherZsets(ctx, args, first, last);
    if (!gathered) co_return ctx.SendStatus(gathered.status());
    std::vector<ZOperand> ops = ZOperandsOf(*gathered);
    card = static_cast<int64_t>(ZIntersectionCard(ops, parsed->limit));
  }
  if (!card) co_return ctx.SendStatus(card.status());
  ctx.rb.SendLong(*card);
}

CommandSpec Spec(std::string name, int arity, uint32_t flags, int first_key, int last_key,
                 std::string_view since, std::string_view summary) {
  const bool write = (flags & kCmdWrite) != 0;
  return MakeSpec(std::move(name), arity, flags, first_key, last_key,
                  {write ? "write" : "read", "sortedset",
                   (flags & kCmdFast) != 0 ? "fast" : "slow"},
                  "sorted-set", since, summary);
}

// Spec of a command whose keys follow a numkeys argument at args[numkeys_index].
template <typename... A>
CommandSpec WithNumKeys(int numkeys_index, A&&... spec_args) {
  CommandSpec s = Spec(std::forward<A>(spec_args)...);
  s.numkeys_index = numkeys_index;
  return s;
}

constexpr uint32_t kWOF = kCmdWrite | kCmdDenyOom | kCmdFast;
constexpr uint32_t kWO = kCmdWrite | kCmdDenyOom;
constexpr uint32_t kWF = kCmdWrite | kCmdFast;
constexpr uint32_t kW = kCmdWrite;
constexpr uint32_t kRF = kCmdReadOnly | kCmdFast;
constexpr uint32_t kR = kCmdReadOnly;

}  // namespace

void RegisterZsetCommands(CommandRegistry* r) {
  using RC = RangeCommand;
  using By = RangeSpec::By;
  r->RegisterShard(Spec("zadd", -4, kWOF, 1, 1, "1.2.0", "Adds one or more members to a sorted set, or "
              "updates their scores. Creates the key if it doesn't exist."), CmdZAdd);
  r->RegisterShard(Spec("zincrby", 4, kWOF, 1, 1, "1.2.0",
              "Increments the score of a member in a sorted set."), CmdZIncrBy);
  r->RegisterShard(Spec("zrem", -3, kWF, 1, 1, "1.2.0", "Removes one or more members from a sorted set. "
              "Deletes the sorted set if all members were removed."), CmdZRem);
  r->RegisterShard(Spec("zcard", 2, kRF, 1, 1, "1.2.0", "Returns the number of members in a sorted set."),
      CmdZCard);
  r->RegisterShard(Spec("zscore", 3, kRF, 1, 1, "1.2.0",
              "Returns the score of a member in a sorted set."), CmdZScore);
  r->RegisterShard(Spec("zmscore", -3, kRF, 1, 1, "6.2.0",
              "Returns the score of one or more members in a sorted set."), CmdZMScore);
  r->RegisterShard(Spec("zrank", -3, kRF, 1, 1, "2.0.0",
              "Returns the index of a member in a sorted set ordered by ascending scores."),
      CmdZRank<false>);
  r->RegisterShard(Spec("zrevrank", -3, kRF, 1, 1, "2.0.0",
              "Returns the index of a member in a sorted set ordered by descending scores."),
      CmdZRank<true>);
  r->RegisterShard(Spec("zcount", 4, kRF, 1, 1, "2.0.0",
              "Returns the count of members in a sorted set that have scores within a range."),
      CmdZCount<By::kScore>);
  r->RegisterShard(Spec("zlexcount", 4, kRF, 1, 1, "2.8.9", "Returns the number of members in a sorted "
              "set within a lexicographical range."), CmdZCount<By::kLex>);
  r->RegisterShard(Spec("zrange", -4, kR, 1, 1, "1.2.0",
              "Returns members in a sorted set within a range of indexes."),
      CmdZRange<RC::kZRange>);
  r->RegisterShard(Spec("zrevrange", -4, kR, 1, 1, "1.2.0", "Returns members in a sorted set within a "
              "range of indexes in reverse order."), CmdZRange<RC::kZRevRange>);
  r->RegisterShard(Spec("zrangebyscore", -4, kR, 1, 1, "1.0.5",
              "Returns members in a sorted set within a range of scores."),
      CmdZRange<RC::kZRangeByScore>);
  r->RegisterShard(Spec("zrevrangebyscore", -4, kR, 1, 1, "2.2.0", "Returns members in a sorted set "
              "within a range of scores in reverse order."), CmdZRange<RC::kZRevRangeByScore>);
  r->RegisterShard(Spec("zrangebylex", -4, kR, 1, 1, "2.8.9", "Returns members in a sorted set within a "
              "lexicographical range."), CmdZRange<RC::kZRangeByLex>);
  r->RegisterShard(Spec("zrevrangebylex", -4, kR, 1, 1, "2.8.9", "Returns members in a sorted set within "
              "a lexicographical range in reverse order."), CmdZRange<RC::kZRevRangeByLex>);
  r->RegisterShard(Spec("zrangestore", -5, kWO, 1, 2, "6.2.0",
              "Stores a range of members from sorted set in a key."),
      CmdZRangeStore, CmdZRangeStoreMulti);
  r->RegisterShard(Spec("zremrangebyrank", 4, kW, 1, 1, "2.0.0", "Removes members in a sorted set within "
              "a range of indexes. Deletes the sorted set if all members were removed."),
      CmdZRemRange<By::kRank>);
  r->RegisterShard(Spec("zremrangebyscore", 4, kW, 1, 1, "1.2.0", "Removes members in a sorted set "
              "within a range of scores. Deletes the sorted set if all members were removed."),
      CmdZRemRange<By::kScore>);
  r->RegisterShard(Spec("zremrangebylex", 4, kW, 1, 1, "2.8.9", "Removes members in a sorted set within "
              "a lexicographical range. Deletes the sorted set if all members were removed."),
      CmdZRemRange<By::kLex>);
  r->RegisterShard(Spec("zpopmin", -2, kWF, 1, 1, "5.0.0", "Returns the lowest-scoring members from a "
              "sorted set after removing them. Deletes the sorted set if the last member was "
              "popped."), CmdZPop<false>);
  r->RegisterShard(Spec("zpopmax", -2, kWF, 1, 1, "5.0.0", "Returns the highest-scoring members from a "
              "sorted set after removing them. Deletes the sorted set if the last member was "
              "popped."), CmdZPop<true>);
  r->RegisterShard(Spec("zrandmember", -2, kR, 1, 1, "6.2.0",
              "Returns one or more random members from a sorted set."), CmdZRandMember);
  r->RegisterShard(Spec("zscan", -3, kR, 1, 1, "2.8.0",
              "Iterates over members and scores of a sorted set."), CmdZScan);
  r->RegisterCoord(WithNumKeys(1, "zmpop", -4, kW, 0, 0, "7.0.0", "Returns the highest- or lowest-scoring "
                   "members from one or more sorted sets after removing them. Deletes the "
                   "sorted set if the last member was popped."), CmdZMPop);
  r->RegisterCoord(WithNumKeys(1, "zunion", -3, kR, 0, 0, "6.2.0", "Returns the union of multiple sorted sets."),
           CmdZAlgebra<ZOp::kUnion, false>);
  r->RegisterCoord(WithNumKeys(1, "zinter", -3, kR, 0, 0, "6.2.0",
                   "Returns the intersect of multiple sorted sets."),
           CmdZAlgebra<ZOp::kInter, false>);
  r->RegisterCoord(WithNumKeys(1, "zdiff", -3, kR, 0, 0, "6.2.0",
                   "Returns the difference between multiple sorted sets."),
           CmdZAlgebra<ZOp::kDiff, false>);
  r->RegisterCoord(WithNumKeys(2, "zunionstore", -4, kWO, 1, 1, "2.0.0",
                   "Stores the union of multiple sorted sets in a key."),
           CmdZAlgebra<ZOp::kUnion, true>);
  r->RegisterCoord(WithNumKeys(2, "zinterstore", -4, kWO, 1, 1, "2.0.0",
                   "Stores the intersect of multiple sorted sets in a key."),
           CmdZAlgebra<ZOp::kInter, true>);
  r->RegisterCoord(WithNumKeys(2, "zdiffstore", -4, kWO, 1, 1, "6.2.0",
                   "Stores the difference of multiple sorted sets in a key."),
           CmdZAlgebra<ZOp::kDiff, true>);
  r->RegisterCoord(WithNumKeys(1, "zintercard", -3, kR, 0, 0, "7.0.0",
                   "Returns the number of members of the intersect of multiple sorted sets."),
           CmdZInterCard);
}

}  // namespace dashkv
