#include "server/commands/set_ops.h"

#include <algorithm>

#include "core/glob.h"
#include "server/tx/multi_key.h"
#include "server/config.h"
#include "server/storage/shard_set.h"

namespace dashkv {

void SendLongOrError(ShardCmdContext& ctx, OpStatus status, int64_t missing_value) {
  if (status == OpStatus::kKeyNotFound) return ctx.rb.SendLong(missing_value);
  ctx.SendStatus(status);
}

bool ScanArgs::Matches(std::string_view m) const {
  return pattern.empty() || GlobMatch(pattern, m);
}

OpResult<ScanArgs> ParseScanArgs(CmdArgs args) {
  ScanArgs sa;
  const std::optional<uint64_t> cursor = ParseUint64(args[2]);
  if (!cursor) return OpStatus::kInvalidCursor;
  sa.cursor = *cursor;
  ArgParser parser(args, 3);
  while (parser.HasNext()) {
    if (parser.Check("COUNT")) {
      int64_t n = parser.NextInt();
      if (parser.HasError()) return parser.error();
      if (n < 1) return OpStatus::kSyntaxError;
      sa.count = static_cast<size_t>(n);
    } else if (parser.Check("MATCH")) {
      sa.pattern = parser.Next();
      if (IsMatchAllPattern(sa.pattern)) sa.pattern = {};
    } else {
      return OpStatus::kSyntaxError;
    }
  }
  if (parser.HasError()) return parser.error();
  return sa;
}

void SendScanReply(io::ReplyBuilder& rb, uint64_t cursor, const std::vector<std::string>& items) {
  rb.StartArray(2);
  rb.SendBulk(std::to_string(cursor));
  rb.SendBulkArray(items);
}

std::optional<unsigned> SingleShardOfRange(const ShardSet& ss, CmdArgs args, size_t first,
                                           size_t last) {
  unsigned sid = ss.ShardOf(args[first]);
  for (size_t i = first + 1; i <= last; ++i) {
    if (ss.ShardOf(args[i]) != sid) return std::nullopt;
  }
  return sid;
}

OpResult<size_t> ParseNumKeys(CmdArgs args, size_t numkeys_index) {
  std::optional<int64_t> n = ParseInt64(args[numkeys_index]);
  if (!n || *n < 1) return OpStatus::kNumkeysNotPositive;
  if (static_cast<uint64_t>(*n) > args.size() - numkeys_index - 1) {
    return OpStatus::kNumkeysTooMany;
  }
  return static_cast<size_t>(*n);
}

OpResult<NumKeysArgs> ParseSInterCard(CmdArgs args) {
  OpResult<size_t> n = ParseNumKeys(args, 1);
  if (!n) return n.status();
  NumKeysArgs out;
  out.numkeys = *n;
  ArgParser parser(args, 2 + *n);
  while (parser.HasNext()) {
    if (!parser.Check("LIMIT")) return OpStatus::kSyntaxError;
    int64_t limit = parser.NextInt(OpStatus::kLimitNegative);
    if (parser.HasError()) return parser.error();
    if (limit < 0) return OpStatus::kLimitNegative;
    out.limit = static_cast<size_t>(limit);
  }
  if (parser.HasError()) return parser.error();
  return out;
}

std::vector<std::string> DistinctRandomMembers(const SetValue& set, uint64_t count) {
  std::vector<std::string> out;
  if (count >= set.size()) return set.Members();
  if (count * 3 > set.size()) {  // dense: shuffle a copy and keep a prefix
    out = set.Members();
    for (size_t i = 0; i < count; ++i) {
      size_t j = i + ShardRandom() % (out.size() - i);
      std::swap(out[i], out[j]);
    }
    out.resize(count);
    return out;
  }
  GatheredSet seen;
  while (seen.size() < count) {
    std::string m = set.RandomMember();
    if (seen.insert(m).second) out.push_back(std::move(m));
  }
  return out;
}

void SendMemberSet(io::ReplyBuilder& rb, const std::vector<std::string>& members) {
  rb.StartSet(members.size());
  for (const std::string& m : members) rb.SendBulk(m);
}

OpResult<StoreResult> StoreSet(DbSlice& db, std::string_view key,
                               const std::vector<std::string>& members, const SetLimits& limits,
                               std::string_view event, int64_t now_ms) {
  if (members.empty()) {
    if (!db.EraseKey(key, now_ms, RemoveReason::kDeleted)) return StoreResult{0, false};
    db.Notify(kNotifyGeneric, "del", key);
    return StoreResult{0, true};
  }
  // An existing key of any type is replaced in place (Redis's setKey: no `new` event).
  OpResult<DbSlice::AddResult> added = db.FindOrAdd(key, now_ms);
  if (!added) return added.status();
  PrimeIterator it = added->it;
  auto set = SetValue::Create(members[0], 1, limits);  // grows like Redis's SINTERSTORE result
  for (const std::string& m : members) set->Add(m, limits);
  it->second.SetObject(ObjType::kSet, 0, set.release());
  db.SetExpire(it, 0);
  db.Notify(kNotifySet, event, key);
  return StoreResult{static_cast<int64_t>(members.size()), true};
}

OpResult<bool> OpSAddOne(DbSlice& db, std::string_view key, std::string_view member,
                         const SetLimits& limits, int64_t now_ms) {
  // A set that holds the member already stays as it is: no mutable lookup, so its watchers are
  // not told of a change.
  PrimeIterator present = db.FindReadOnlyQuiet(key, now_ms);
  if (!present.is_done() && present->second.type() == ObjType::kSet &&
      AsSet(present->second).Contains(member)) {
    return false;
  }
  OpResult<DbSlice::AddResult> added = db.FindOrAddOfType(key, ObjType::kSet, now_ms);
  if (!added) return added.status();
  bool is_new = true;
  if (added->inserted) {
    auto set = SetValue::Create(member, 1, limits);
    set->Add(member, limits);
    added->it->second.SetObject(ObjType::kSet, 0, set.release());
  } else {
    is_new = AsSet(added->it->second).Add(member, limits);
  }
  if (is_new) db.Notify(kNotifySet, "sadd", key);
  return is_new;
}

OpResult<int64_t> OpSRemoveChecked(DbSlice& db, std::string_view src, std::string_view member,
                                   OpStatus dst_status, int64_t now_ms) {
  PrimeIterator s = db.FindReadOnlyQuiet(src, now_ms);
  if (s.is_done()) return 0;
  if (s->second.type() != ObjType::kSet) return OpStatus::kWrongType;
  if (dst_status != OpStatus::kOk) return dst_status;
  if (!AsSet(s->second).Contains(member)) return 0;
  OpResult<PrimeIterator> m = db.FindMutableOfType(src, ObjType::kSet, now_ms);
  SetValue& set = AsSet((*m)->second);
  set.Remove(member);
  db.Notify(kNotifySet, "srem", src);
  if (set.empty()) {
    db.Erase(*m, RemoveReason::kDeleted);
    db.Notify(kNotifyGeneric, "del", src);
  }
  return 1;
}

OpResult<int64_t> OpSMove(DbSlice& db, std::string_view src, std::string_view dst,
                          std::string_view member, const SetLimits& limits, int64_t now_ms) {
  PrimeIterator d = db.FindReadOnlyQuiet(dst, now_ms);
  OpStatus dst_status =
      !d.is_done() && d->second.type() != ObjType::kSet ? OpStatus::kWrongType : OpStatus::kOk;
  if (src == dst) {
    if (d.is_done()) return 0;
    if (dst_status != OpStatus::kOk) return dst_status;
    return AsSet(d->second).Contains(member) ? 1 : 0;
  }
  OpResult<int64_t> removed = OpSRemoveChecked(db, src, member, dst_status, now_ms);
  if (!removed || *removed == 0) return removed;
  OpResult<bool> added = OpSAddOne(db, dst, member, limits, now_ms);
  if (!added) return added.status();
  return 1;
}

boost::asio::awaitable<OpResult<std::vector<std::unique_ptr<GatheredSet>>>> GatherSets(
    ConnCmdContext& ctx, CmdArgs args, size_t first, size_t last) {
  ShardSet& ss = ctx.shard_set();
  KeysByShard groups(ss, args, first, last);
  std::vector<std::unique_ptr<GatheredSet>> sets(last - first + 1);
  std::vector<OpStatus> status(last - first + 1, OpStatus::kOk);
  unsigned db = ctx.state.db;
  int64_t now = ctx.now_ms;
  co_await ss.AwaitMany(groups.shards, [&](Shard& shard) {
    DbSlice& slice = shard.db(db);
    for (uint32_t i : groups.indexes[shard.index()]) {
      OpResult<PrimeIterator> f = slice.FindReadOnlyOfType(args[i], ObjType::kSet, now);
      if (!f) {
        if (f.status() != OpStatus::kKeyNotFound) status[i - first] = f.status();
        continue;
      }
      const SetValue& set = AsSet((*f)->second);
      auto g = std::make_unique<GatheredSet>();
      g->reserve(set.size());
      set.ForEach([&](std::string_view m) { g->emplace(m); });
      sets[i - first] = std::move(g);
    }
  });
  for (OpStatus s : status) {
    if (s != OpStatus::kOk) co_return s;
  }
  co_return std::move(sets);
}

std::vector<SetOperand> OperandsOf(const std::vector<std::unique_ptr<GatheredSet>>& sets) {
  std::vector<SetOperand> out;
  out.reserve(sets.size());
  for (const auto& s : sets) out.push_back(s ? SetOperand(s.get()) : SetOperand());
  return out;
}

boost::asio::awaitable<OpResult<StoreResult>> StoreSetRemote(
    ConnCmdContext& ctx, std::string_view key, const std::vector<std::string>& members,
    std::string_view event) {
  ShardSet& ss = ctx.shard_set();
  unsigned db = ctx.state.db;
  int64_t now = ctx.now_ms;
  SetLimits limits = SetLimits::From(ctx.config());
  co_return co_await ss.Await(ss.ShardOf(key), [&](Shard& shard) {
    return StoreSet(shard.db(db), key, members, limits, event, now);
  });
}

}  // namespace dashkv
