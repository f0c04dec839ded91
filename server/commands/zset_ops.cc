#include "server/commands/zset_ops.h"

#include <algorithm>

#include "server/tx/multi_key.h"
#include "server/config.h"
#include "server/storage/shard_set.h"

namespace dashkv {

void SendScore(io::ReplyBuilder& rb, double score) {
  char buf[kMaxScoreChars];
  rb.SendDoubleText(std::string_view(buf, FormatScoreShortest(score, buf)));
}

void SendScoredMembers(io::ReplyBuilder& rb, const ScoredMembers& items, bool withscores,
                       bool nested) {
  if (!withscores) {
    rb.StartArray(items.size());
    for (const auto& [m, s] : items) rb.SendBulk(m);
    return;
  }
  if (rb.resp3() || nested) {
    rb.StartArray(items.size());
    for (const auto& [m, s] : items) {
      rb.StartArray(2);
      rb.SendBulk(m);
      SendScore(rb, s);
    }
    return;
  }
  rb.StartArray(items.size() * 2);
  for (const auto& [m, s] : items) {
    rb.SendBulk(m);
    SendScore(rb, s);
  }
}

namespace {

// Parses "LIMIT offset count" after the LIMIT word.
void ParseLimit(ArgParser& p, RangeSpec* spec) {
  spec->has_limit = true;
  spec->offset = p.NextInt();
  spec->count = p.NextInt();
}

}  // namespace

OpResult<RangeSpec> ParseRangeSpec(CmdArgs args, size_t first, RangeCommand cmd) {
  RangeSpec spec;
  spec.start = args[first];
  spec.stop = args[first + 1];
  ArgParser p(args, first + 2);
  bool by_score = false, by_lex = false;
  switch (cmd) {
    case RangeCommand::kZRange:
    case RangeCommand::kZRangeStore:
      while (p.HasNext()) {
        if (p.Check("BYSCORE")) {
          by_score = true;
        } else if (p.Check("BYLEX")) {
          by_lex = true;
        } else if (p.Check("REV")) {
          spec.reverse = true;
        } else if (p.Check("LIMIT")) {
          ParseLimit(p, &spec);
        } else if (cmd == RangeCommand::kZRange && p.Check("WITHSCORES")) {
          spec.withscores = true;
        } else {
          return OpStatus::kSyntaxError;
        }
      }
      if (p.HasError()) return p.error();
      if (by_score && by_lex) return OpStatus::kSyntaxError;
      if (spec.has_limit && !by_score && !by_lex) return OpStatus::kLimitNeedsBy;
      if (spec.withscores && by_lex) return OpStatus::kWithScoresByLex;
      spec.by = by_score ? RangeSpec::By::kScore : by_lex ? RangeSpec::By::kLex
                                                          : RangeSpec::By::kRank;
      if (spec.reverse && spec.by != RangeSpec::By::kRank) std::swap(spec.start, spec.stop);
      return spec;
    case RangeCommand::kZRevRange:
      spec.reverse = true;
      while (p.HasNext()) {
        if (!p.Check("WITHSCORES")) return OpStatus::kSyntaxError;
        spec.withscores = true;
      }
      return spec;
    case RangeCommand::kZRangeByScore:
    case RangeCommand::kZRevRangeByScore:
    case RangeCommand::kZRangeByLex:
    case RangeCommand::kZRevRangeByLex: {
      bool lex = cmd == RangeCommand::kZRangeByLex || cmd == RangeCommand::kZRevRangeByLex;
      spec.by = lex ? RangeSpec::By::kLex : RangeSpec::By::kScore;
      spec.reverse = cmd == RangeCommand::kZRevRangeByScore || cmd == RangeCommand::kZRevRangeByLex;
      while (p.HasNext()) {
        if (!lex && p.Check("WITHSCORES")) {
          spec.withscores = true;
        } else if (p.Check("LIMIT")) {
          ParseLimit(p, &spec);
        } else {
          return OpStatus::kSyntaxError;
        }
      }
      if (p.HasError()) return p.error();
      if (spec.reverse) std::swap(spec.start, spec.stop);
      return spec;
    }
  }
  return OpStatus::kSyntaxError;
}

OpStatus CheckRangeBounds(const RangeSpec& spec) {
  switch (spec.by) {
    case RangeSpec::By::kRank:
      if (!ParseInt64(spec.start) || !ParseInt64(spec.stop)) return OpStatus::kNotAnInteger;
      return OpStatus::kOk;
    case RangeSpec::By::kScore:
      return ParseScoreRange(spec.start, spec.stop) ? OpStatus::kOk : OpStatus::kMinMaxNotFloat;
    case RangeSpec::By::kLex:
      return ParseLexRange(spec.start, spec.stop) ? OpStatus::kOk : OpStatus::kLexRangeInvalid;
  }
  return OpStatus::kOk;
}

OpResult<RankWindow> SelectRanks(const ZsetValue& z, const RangeSpec& spec) {
  OpStatus bounds = CheckRangeBounds(spec);
  if (bounds != OpStatus::kOk) return bounds;
  const int64_t n = static_cast<int64_t>(z.size());
  RankWindow w;
  if (spec.by == RangeSpec::By::kRank) {
    int64_t start = *ParseInt64(spec.start), end = *ParseInt64(spec.stop);
    if (start < 0) start += n;
    if (end < 0) end += n;
    if (start < 0) start = 0;
    if (start > end || start >= n) return w;
    if (end >= n) end = n - 1;
    if (spec.reverse) {
      w.first = static_cast<uint64_t>(n - 1 - end);
      w.last = static_cast<uint64_t>(n - start);
    } else {
      w.first = static_cast<uint64_t>(start);
      w.last = static_cast<uint64_t>(end + 1);
    }
    return w;
  }
  std::pair<uint64_t, uint64_t> r;
  if (spec.by == RangeSpec::By::kScore) {
    ScoreRange range = *ParseScoreRange(spec.start, spec.stop);
    if (range.IsEmpty()) return w;
    r = z.ScoreRanks(range);
  } else {
    LexRange range = *ParseLexRange(spec.start, spec.stop);
    if (range.IsEmpty()) return w;
    r = z.LexRanks(range);
  }
  w.first = r.first;
  w.last = std::max(r.first, r.second);
  if (!spec.has_limit) return w;
  if (spec.offset < 0) return RankWindow{};
  uint64_t off = std::min<uint64_t>(static_cast<uint64_t>(spec.offset), w.last - w.first);
  if (spec.reverse) {
    w.last -= off;
    if (spec.count >= 0 && w.last - w.first > static_cast<uint64_t>(spec.count)) {
      w.first = w.last - static_cast<uint64_t>(spec.count);
    }
  } else {
    w.first += off;
    if (spec.count >= 0 && w.last - w.first > static_cast<uint64_t>(spec.count)) {
      w.last = w.first + static_cast<uint64_t>(spec.count);
    }
  }
  return w;
}

ScoredMembers CollectRange(const ZsetValue& z, const RangeSpec& spec) {
  ScoredMembers out;
  OpResult<RankWindow> w = SelectRanks(z, spec);
  if (!w || w->first >= w->last) return out;
  out.reserve(w->last - w->first);
  z.Range(w->first, w->last, spec.reverse,
          [&](std::string_view m, double s) { out.emplace_back(m, s); });
  return out;
}

OpResult<StoreResult> StoreZset(DbSlice& db, std::string_view key, const ScoredMembers& items,
                                const ZsetLimits& limits, std::string_view event,
                                int64_t now_ms) {
  if (items.empty()) {
    if (!db.EraseKey(key, now_ms, RemoveReason::kDeleted)) return StoreResult{0, false};
    db.Notify(kNotifyGeneric, "del", key);
    return StoreResult{0, true};
  }
  size_t max_len = 0;
  for (const auto& [m, s] : items) max_len = std::max(max_len, m.size());
  auto z = ZsetValue::Create(items.size(), max_len, limits);
  for (const auto& [m, s] : items) z->Set(m, s, limits);
  // An existing key of any type is replaced in place (Redis's setKey: no `new` event).
  OpResult<DbSlice::AddResult> added = db.FindOrAdd(key, now_ms);
  if (!added) return added.status();
  added->it->second.SetObject(ObjType::kZset, 0, z.release());
  db.SetExpire(added->it, 0);
  db.Notify(kNotifyZset, event, key);
  return StoreResult{static_cast<int64_t>(items.size()), true};
}

OpResult<ZAlgebraArgs> ParseZAlgebra(CmdArgs args, bool store, bool allow_weights) {
  ZAlgebraArgs out;
  size_t idx = store ? 2 : 1;
  std::optional<int64_t> n = ParseInt64(args[idx]);
  if (!n) return OpStatus::kNotAnInteger;
  if (*n < 1) return OpStatus::kNoInputKey;
  if (static_cast<uint64_t>(*n) > args.size() - idx - 1) return OpStatus::kSyntaxError;
  out.numkeys = static_cast<size_t>(*n);
  out.first_key = idx + 1;
  out.weights.assign(out.numkeys, 1.0);
  ArgParser p(args, idx + 1 + out.numkeys);
  while (p.HasNext()) {
    if (allow_weights && p.Check("WEIGHTS")) {
      if (p.remaining() < out.numkeys) return OpStatus::kSyntaxError;
      for (size_t i = 0; i < out.numkeys; ++i) {
        std::optional<double> w = ParseScore(p.Next());
        if (!w) return OpStatus::kWeightNotFloat;
        out.weights[i] = *w;
      }
    } else if (allow_weights && p.Check("AGGREGATE")) {
      if (p.Check("SUM")) {
        out.agg = Aggregate::kSum;
      } else if (p.Check("MIN")) {
        out.agg = Aggregate::kMin;
      } else if (p.Check("MAX")) {
        out.agg = Aggregate::kMax;
      } else {
        return OpStatus::kSyntaxError;
      }
    } else if (!store && p.Check("WITHSCORES")) {
      out.withscores = true;
    } else {
      return OpStatus::kSyntaxError;
    }
  }
  if (p.HasError()) return p.error();
  return out;
}

OpResult<std::vector<ZOperand>> LocalZOperands(DbSlice& db, CmdArgs args, size_t first,
                                               size_t last, int64_t now_ms) {
  std::vector<ZOperand> out;
  for (size_t i = first; i <= last; ++i) {
    PrimeIterator it = db.FindReadOnly(args[i], now_ms);
    if (it.is_done()) {
      out.emplace_back();
    } else if (it->second.type() == ObjType::kZset) {
      out.emplace_back(&AsZset(it->second));
    } else if (it->second.type() == ObjType::kSet) {
      out.emplace_back(&AsSet(it->second));
    } else {
      return OpStatus::kWrongType;
    }
  }
  return out;
}

boost::asio::awaitable<OpResult<std::vector<std::unique_ptr<GatheredZset>>>> GatherZsets(
    ConnCmdContext& ctx, CmdArgs args, size_t first, size_t last) {
  ShardSet& ss = ctx.shard_set();
  KeysByShard groups(ss, args, first, last);
  std::vector<std::unique_ptr<GatheredZset>> sets(last - first + 1);
  std::vector<OpStatus> status(last - first + 1, OpStatus::kOk);
  unsigned db = ctx.state.db;
  int64_t now = ctx.now_ms;
  co_await ss.AwaitMany(groups.shards, [&](Shard& shard) {
    for (uint32_t i : groups.indexes[shard.index()]) {
      OpResult<std::vector<ZOperand>> ops = LocalZOperands(shard.db(db), args, i, i, now);
      if (!ops) {
        status[i - first] = ops.status();
        continue;
      }
      const ZOperand& op = (*ops)[0];
      if (op.size() == 0) continue;
      auto g = std::make_unique<GatheredZset>();
      g->reserve(op.size());
      op.ForEach([&](std::string_view m, double s) { g->emplace(m, s); });
      sets[i - first] = std::move(g);
    }
  });
  for (OpStatus s : status) {
    if (s != OpStatus::kOk) co_return s;
  }
  co_return std::move(sets);
}

std::vector<ZOperand> ZOperandsOf(const std::vector<std::unique_ptr<GatheredZset>>& sets) {
  std::vector<ZOperand> out;
  out.reserve(sets.size());
  for (const auto& s : sets) out.push_back(s ? ZOperand(s.get()) : ZOperand());
  return out;
}

ScoredMembers PopElements(DbSlice& db, PrimeIterator it, std::string_view key, uint64_t count,
                          bool max) {
  ZsetValue& z = AsZset(it->second);
  uint64_t n = std::min<uint64_t>(count, z.size());
  ScoredMembers out;
  out.reserve(n);
  uint64_t first = max ? z.size() - n : 0;
  z.Range(first, first + n, max, [&](std::string_view m, double s) { out.emplace_back(m, s); });
  z.RemoveRanks(first, first + n);
  db.Notify(kNotifyZset, max ? "zpopmax" : "zpopmin", key);
  if (z.empty()) {
    db.Erase(it, RemoveReason::kDeleted);
    db.Notify(kNotifyGeneric, "del", key);
  }
  return out;
}

}  // namespace dashkv
