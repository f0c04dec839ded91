// String commands: SET, GET, GETSET, GETDEL, GETEX, SETNX, SETEX, PSETEX, MGET, APPEND, STRLEN,
// INCR, DECR, INCRBY, DECRBY, INCRBYFLOAT, GETRANGE, SUBSTR, SETRANGE, MSET and MSETNX (Redis 7.0
// semantics). All but MGET, MSET and MSETNX are single-key shard commands; those run on one shard
// when their keys allow it and otherwise fan out one hop per shard (MSETNX: a first round checks
// that no key exists, a second one writes; the server's intent locks keep the rounds atomic).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "core/bitops.h"
#include "core/numbers.h"

#include "server/cmd_context.h"
#include "server/command_registry.h"
#include "server/commands/string_ops.h"
#include "server/tx/multi_key.h"
#include "server/config.h"
#include "server/storage/shard_set.h"

namespace dashkv {

namespace {

using boost::asio::awaitable;

// Sends the string value of a lookup, nil when missing, or the lookup's error.
void SendStringOrNull(ShardCmdContext& ctx, OpResult<PrimeIterator> res) {
  if (!res) {
    if (res.status() == OpStatus::kKeyNotFound) return ctx.rb.SendNull();
    return SendOpError(ctx, res.status());
  }
  std::string scratch;
  ctx.rb.SendBulk((*res)->second.GetString(&scratch));
}

// GET key
void CmdGet(CmdArgs args, ShardCmdContext& ctx) {
  SendStringOrNull(ctx, ctx.db.FindReadOnlyOfType(args[1], ObjType::kString, ctx.now_ms));
}

enum class SetCondition : uint8_t { kAlways, kIfMissing, kIfExists };

struct SetParams {
  SetCondition cond = SetCondition::kAlways;
  bool get = false;  // reply with the previous value
  ExpireKind expire = ExpireKind::kNone;
  int64_t deadline_ms = 0;
};

struct SetOutcome {
  bool written = false;
  std::optional<std::string> old;  // with SetParams::get, when the key held a string
};

// Writes `value` at `key` under `p` (the core of SET, GETSET, SETNX, SETEX, PSETEX) and raises
// Redis's events: `set`, then `expire` when a deadline was given. With GET the key is first read
// as GET reads it (a hit or a miss, `keymiss`).
OpResult<SetOutcome> OpSet(DbSlice& db, std::string_view key, std::string_view value,
                           const SetParams& p, int64_t now_ms) {
  SetOutcome out;
  if (p.get || p.cond != SetCondition::kAlways) {
    PrimeIterator it = p.get ? db.FindReadOnly(key, now_ms) : db.FindReadOnlyQuiet(key, now_ms);
    bool exists = !it.is_done();
    if (p.get && exists) {
      if (it->second.type() != ObjType::kString) return OpStatus::kWrongType;
      out.old = CopyString(it->second);
    }
    if ((p.cond == SetCondition::kIfMissing && exists) ||
        (p.cond == SetCondition::kIfExists && !exists)) {
      return out;
    }
  }
  // Any old value of any type is replaced in place.
  OpResult<DbSlice::AddResult> added = db.FindOrAdd(key, now_ms);
  if (!added) return added.status();
  out.written = true;
  StoreString(added->it->second, value);
  ApplyExpire(db, added->it, p.expire, p.deadline_ms);
  db.Notify(kNotifyString, "set", key);
  if (HasDeadline(p.expire)) db.Notify(kNotifyGeneric, "expire", key);
  return out;
}

// Parses SET's options (args[3..]) into `p`; returns kOk or the error to send.
OpStatus ParseSetOptions(CmdArgs args, int64_t now_ms, SetParams* p) {
  ArgParser parser(args, 3);
  ExpireSpec spec;
  while (parser.HasNext()) {
    if (parser.Check("NX")) {
      if (p->cond == SetCondition::kIfExists) parser.SetError(OpStatus::kSyntaxError);
      p->cond = SetCondition::kIfMissing;
    } else if (parser.Check("XX")) {
      if (p->cond == SetCondition::kIfMissing) parser.SetError(OpStatus::kSyntaxError);
      p->cond = SetCondition::kIfExists;
    } else if (parser.Check("GET")) {
      p->get = true;
    } else if (!ParseExpireOption(parser, ExpireExtra::kKeepTtl, &spec)) {
      parser.SetError(OpStatus::kSyntaxError);
    }
  }
  if (parser.HasError()) return parser.error();
  OpResult<int64_t> deadline = ExpireDeadline(spec, now_ms);
  if (!deadline) return deadline.status();
  p->expire = spec.kind;
  p->deadline_ms = *deadline;
  return OpStatus::kOk;
}

// SET key value [NX|XX] [GET] [EX seconds|PX milliseconds|EXAT unix-time-seconds|
//     PXAT unix-time-milliseconds|KEEPTTL]
void CmdSet(CmdArgs args, ShardCmdContext& ctx) {
  SetParams p;
  if (OpStatus st = ParseSetOptions(args, ctx.now_ms, &p); st != OpStatus::kOk) {
    return SendOpError(ctx, st);
  }
  OpResult<SetOutcome> res = OpSet(ctx.db, args[1], args[2], p, ctx.now_ms);
  if (!res) return SendOpError(ctx, res.status());
  if (!res->written) ctx.NoChange();
  if (p.get) return res->old ? ctx.rb.SendBulk(*res->old) : ctx.rb.SendNull();
  res->written ? ctx.rb.SendOk() : ctx.rb.SendNull();
}

// GETSET key value
void CmdGetSet(CmdArgs args, ShardCmdContext& ctx) {
  SetParams p;
  p.get = true;
  OpResult<SetOutcome> res = OpSet(ctx.db, args[1], args[2], p, ctx.now_ms);
  if (!res) return SendOpError(ctx, res.status());
  res->old ? ctx.rb.SendBulk(*res->old) : ctx.rb.SendNull();
}

// SETNX key value
void CmdSetNx(CmdArgs args, ShardCmdContext& ctx) {
  SetParams p;
  p.cond = SetCondition::kIfMissing;
  OpResult<SetOutcome> res = OpSet(ctx.db, args[1], args[2], p, ctx.now_ms);
  if (!res) return SendOpError(ctx, res.status());
  if (!res->written) ctx.NoChange();
  ctx.rb.SendLong(res->written ? 1 : 0);
}

// SETEX key seconds value / PSETEX key milliseconds value
template <ExpireKind kKind>
void CmdSetEx(CmdArgs args, ShardCmdContext& ctx) {
  OpResult<int64_t> deadline = ExpireDeadline(ExpireSpec{kKind, args[2]}, ctx.now_ms);
  if (!deadline) return SendOpError(ctx, deadline.status());
  SetParams p;
  p.expire = kKind;
  p.deadline_ms = *deadline;
  OpResult<SetOutcome> res = OpSet(ctx.db, args[1], args[3], p, ctx.now_ms);
  if (!res) return SendOpError(ctx, res.status());
  ctx.rb.SendOk();
}

// GETDEL key
void CmdGetDel(CmdArgs args, ShardCmdContext& ctx) {
  OpResult<PrimeIterator> res = ctx.db.FindReadOnlyOfType(args[1], ObjType::kString, ctx.now_ms);
  SendStringOrNull(ctx, res);
  if (!res) return ctx.NoChange();
  ctx.db.Erase(*res, RemoveReason::kDeleted);
  ctx.db.Notify(kNotifyGeneric, "del", args[1]);
}

// GETEX key [EX seconds|PX milliseconds|EXAT unix-time-seconds|PXAT unix-time-milliseconds|
//     PERSIST]
void CmdGetEx(CmdArgs args, ShardCmdContext& ctx) {
  ArgParser parser(args, 2);
  ExpireSpec spec;
  while (parser.HasNext()) {
    if (!ParseExpireOption(parser, ExpireExtra::kPersist, &spec)) {
      parser.SetError(OpStatus::kSyntaxError);
    }
  }
  if (parser.HasError()) return SendOpError(ctx, parser.error());
  std::string_view key = args[1];
  OpResult<PrimeIterator> res = ctx.db.FindReadOnlyOfType(key, ObjType::kString, ctx.now_ms);
  if (!res) {
    ctx.NoChange();
    return SendStringOrNull(ctx, res);
  }
  OpResult<int64_t> deadline = ExpireDeadline(spec, ctx.now_ms);
  if (!deadline) return SendOpError(ctx, deadline.status());
  SendStringOrNull(ctx, res);
  if (*deadline > 0 && *deadline <= ctx.now_ms) {  // EXAT/PXAT in the past: deleted at once
    ctx.db.Erase(*res, RemoveReason::kDeleted);
    return ctx.db.Notify(kNotifyGeneric, "del", key);
  }
  if (*deadline > 0) {
    ctx.db.SetExpire(ctx.db.FindMutable(key, ctx.now_ms), *deadline);
    return ctx.db.Notify(kNotifyGeneric, "expire", key);
  }
  if (spec.kind == ExpireKind::kPersist && (*res)->first.HasExpire()) {
    ctx.db.SetExpire(ctx.db.FindMutable(key, ctx.now_ms), 0);
    return ctx.db.Notify(kNotifyGeneric, "persist", key);
  }
  ctx.NoChange();  // no option, or PERSIST of a key without deadline
}

// APPEND key value
void CmdAppend(CmdArgs args, ShardCmdContext& ctx) {
  std::string_view tail = args[2];
  OpResult<DbSlice::AddResult> res = FindOrAddString(ctx.db, args[1], ctx.now_ms);
  if (!res) return SendOpError(ctx, res.status());
  CompactObj& value = res->it->second;
  if (res->inserted) {
    StoreString(value, tail);
  } else {
    StringOpError e = CheckStringLength(value.StringSize(), tail.size());
    if (e != StringOpError::kOk) return SendOpError(ctx, e);  // an error: nothing changed
    value.AppendString(tail);  // amortized O(1) per byte; marks the value raw
  }
  ctx.db.Notify(kNotifyString, "append", args[1]);
  ctx.rb.SendLong(static_cast<int64_t>(value.StringSize()));
}

// STRLEN key
void CmdStrlen(CmdArgs args, ShardCmdContext& ctx) {
  OpResult<PrimeIterator> res = ctx.db.FindReadOnlyOfType(args[1], ObjType::kString, ctx.now_ms);
  if (!res) {
    if (res.status() == OpStatus::kKeyNotFound) return ctx.rb.SendLong(0);
    return SendOpError(ctx, res.status());
  }
  ctx.rb.SendLong(static_cast<int64_t>((*res)->second.StringSize()));
}

// Returns the integer held by a string value, or kNotAnInteger.
OpResult<int64_t> ValueAsInt(const CompactObj& value) {
  int64_t v;
  if (value.TryGetInt(&v)) return v;
  if (value.StringSize() > 20) return OpStatus::kNotAnInteger;
  std::optional<int64_t> parsed = ParseInt64(CopyString(value));
  if (!parsed) return OpStatus::kNotAnInteger;
  return *parsed;
}

// Adds `delta` to the integer at `key` (0 when missing); the core of INCR/DECR/INCRBY/DECRBY,
// which all raise `incrby`.
OpResult<int64_t> OpIncrBy(DbSlice& db, std::string_view key, int64_t delta, int64_t now_ms) {
  OpResult<DbSlice::AddResult> res = FindOrAddString(db, key, now_ms);
  if (!res) return res.status();
  CompactObj& value = res->it->second;
  int64_t result = delta;
  if (!res->inserted) {
    OpResult<int64_t> current = ValueAsInt(value);
    if (!current) return current.status();
    if (__builtin_add_overflow(*current, delta, &result)) return OpStatus::kIncrOverflow;
  }
  value.SetInt(result);
  db.Notify(kNotifyString, "incrby", key);
  return result;
}

void ReplyIncr(ShardCmdContext& ctx, std::string_view key, int64_t delta) {
  OpResult<int64_t> res = OpIncrBy(ctx.db, key, delta, ctx.now_ms);
  if (!res) return SendOpError(ctx, res.status());
  ctx.rb.SendLong(*res);
}

// INCR key / DECR key
template <int64_t kDelta>
void CmdIncrOne(CmdArgs args, ShardCmdContext& ctx) {
  ReplyIncr(ctx, args[1], kDelta);
}

// INCRBY key increment
void CmdIncrBy(CmdArgs args, ShardCmdContext& ctx) {
  std::optional<int64_t> delta = ParseInt64(args[2]);
  if (!delta) return SendOpError(ctx, OpStatus::kNotAnInteger);
  ReplyIncr(ctx, args[1], *delta);
}

// DECRBY key decrement
void CmdDecrBy(CmdArgs args, ShardCmdContext& ctx) {
  std::optional<int64_t> delta = ParseInt64(args[2]);
  if (!delta) return SendOpError(ctx, OpStatus::kNotAnInteger);
  if (*delta == INT64_MIN) return SendOpError(ctx, OpStatus::kDecrOverflow);
  ReplyIncr(ctx, args[1], -*delta);
}

// Adds the float `incr_arg` to the value at `key`; returns the stored text. The key is read
// first and written only when the sum is valid.
OpResult<std::string> OpIncrByFloat(DbSlice& db, std::string_view key, std::string_view incr_arg,
                                    int64_t now_ms) {
  PrimeIterator it = db.FindReadOnlyQuiet(key, now_ms);
  long double current = 0;
  if (!it.is_done()) {
    if (it->second.type() != ObjType::kString) return OpStatus::kWrongType;
    std::optional<long double> v = it->second.StringSize() < kLongDoubleMaxChars
                                       ? ParseLongDouble(CopyString(it->second))
                                       : std::nullopt;
    if (!v) return OpStatus::kNotAFloat;
    current = *v;
  }
  std::optional<long double> incr = ParseLongDouble(incr_arg);
  if (!incr) return OpStatus::kNotAFloat;
  long double sum = current + *incr;
  if (std::isnan(sum) || std::isinf(sum)) return OpStatus::kNanOrInf;
  std::string text = FormatLongDouble(sum);
  OpResult<DbSlice::AddResult> added = db.FindOrAdd(key, now_ms);
  if (!added) return added.status();
  added->it->second.SetString(text);  // Redis keeps INCRBYFLOAT results as strings, never "int"
  db.Notify(kNotifyString, "incrbyfloat", key);
  return text;
}

// INCRBYFLOAT key increment
void CmdIncrByFloat(CmdArgs args, ShardCmdContext& ctx) {
  OpResult<std::string> res = OpIncrByFloat(ctx.db, args[1], args[2], ctx.now_ms);
  if (!res) return SendOpError(ctx, res.status());
  ctx.rb.SendBulk(*res);  // a bulk string in RESP3 too, as Redis 7.0 replies
}

// GETRANGE key start end / SUBSTR key start end
void CmdGetRange(CmdArgs args, ShardCmdContext& ctx) {
  std::optional<int64_t> start = ParseInt64(args[2]);
  std::optional<int64_t> end = ParseInt64(args[3]);
  if (!start || !end) return SendOpError(ctx, OpStatus::kNotAnInteger);
  OpResult<PrimeIterator> res = ctx.db.FindReadOnlyOfType(args[1], ObjType::kString, ctx.now_ms);
  if (!res) {
    if (res.status() == OpStatus::kKeyNotFound) return ctx.rb.SendBulk("");
    return SendOpError(ctx, res.status());
  }
  std::string scratch;
  ctx.rb.SendBulk(GetRange((*res)->second.GetString(&scratch), *start, *end));
}

// SETRANGE key offset value
void CmdSetRange(CmdArgs args, ShardCmdContext& ctx) {
  std::optional<int64_t> offset = ParseInt64(args[2]);
  if (!offset) return SendOpError(ctx, OpStatus::kNotAnInteger);
  std::string_view patch = args[3];
  StringOpError check = CheckSetRange(*offset, patch.size());
  if (check == StringOpError::kOffsetOutOfRange) return SendOpError(ctx, check);
  PrimeIterator it = ctx.db.FindReadOnlyQuiet(args[1], ctx.now_ms);
  if (!it.is_done() && it->second.type() != ObjType::kString) {
    return SendOpError(ctx, OpStatus::kWrongType);
  }
  if (patch.empty()) {  // only reports the length; never creates the key
    ctx.NoChange();
    return ctx.rb.SendLong(it.is_done() ? 0 : static_cast<int64_t>(it->second.StringSize()));
  }
  if (check != StringOpError::kOk) return SendOpError(ctx, check);
  OpResult<DbSlice::AddResult> added = ctx.db.FindOrAdd(args[1], ctx.now_ms);
  if (!added) return SendOpError(ctx, added.status());
  CompactObj& value = added->it->second;
  size_t off = static_cast<size_t>(*offset);
  absl::Span<char> bytes = value.ResizeString(std::max(value.StringSize(), off + patch.size()));
  std::memcpy(bytes.data() + off, patch.data(), patch.size());
  ctx.db.Notify(kNotifyString, "setrange", args[1]);
  ctx.rb.SendLong(static_cast<int64_t>(bytes.size()));
}

// Sends MGET's reply for one key: its string value, or null for a missing key or a value of
// another type.
void SendMGetValue(std::string_view key, ShardCmdContext& ctx, std::string* scratch) {
  OpResult<PrimeIterator> res = ctx.db.FindReadOnlyOfType(key, ObjType::kString, ctx.now_ms);
  if (res) {
    ctx.rb.SendBulk((*res)->second.GetString(scratch));
  } else {
    ctx.rb.SendNull();
  }
}

// MGET key [key ...] with all keys on this shard.
void CmdMGetShard(CmdArgs args, ShardCmdContext& ctx) {
  ctx.rb.StartArray(args.size() - 1);
  std::string scratch;
  for (size_t i = 1; i < args.size(); ++i) SendMGetValue(args[i], ctx, &scratch);
}

// MGET key [key ...] with keys on several shards: one hop per shard (one_hop: the same message
// takes the locks), replies in argument order.
awaitable<void> CmdMGetMulti(CmdArgs args, ConnCmdContext& ctx) {
  ShardSet& ss = ctx.shard_set();
  KeysByShard groups(ss, args, 1, args.size() - 1);
  std::vector<std::optional<std::string>> values(args.size());  // each shard fills its indexes
  unsigned db = ctx.state.db;
  int64_t now = ctx.now_ms;
  co_await OnlyHop(ss, ctx.locks, groups.shards, [&](Shard& shard) {
    DbSlice& slice = shard.db(db);
    for (uint32_t i : groups.indexes[shard.index()]) {
      OpResult<PrimeIterator> res = slice.FindReadOnlyOfType(args[i], ObjType::kString, now);
      values[i] = res ? std::optional<std::string>(CopyString((*res)->second)) : std::nullopt;
    }
  });
  ctx.rb.StartArray(args.size() - 1);
  for (size_t i = 1; i < args.size(); ++i) {
    values[i] ? ctx.rb.SendBulk(*values[i]) : ctx.rb.SendNull();
  }
}

// MGET's part in a multi-shard group (server/tx/multi_part.h): one piece per key, its value
// or null.
void MGetPart(CmdArgs args, std::span<const uint32_t> keys, ShardCmdContext& ctx,
              PartSink& sink) {
  std::string scratch;
  for (uint32_t i : keys) {
    SendMGetValue(args[i], ctx, &scratch);
    sink.EndPiece();
  }
}

void MGetCombine(CmdArgs args, PartReader& parts, io::ReplyBuilder& out) {
  out.StartArray(args.size() - 1);
  for (size_t i = 1; i < args.size(); ++i) out.SendRaw(parts.NextPiece(i));
}

constexpr MultiShardOps kMGetOps{nullptr, MGetPart, MGetCombine};

// Stores the string `value` at `key` as SET does without options (any old type, no TTL), with
// its `set` event.
OpStatus SetPlain(DbSlice& db, std::string_view key, std::string_view value, int64_t now_ms) {
  OpResult<DbSlice::AddResult> added = db.FindOrAdd(key, now_ms);
  if (!added) return added.status();
  StoreString(added->it->second, value);
  db.SetExpire(added->it, 0);
  db.Notify(kNotifyString, "set", key);
  return OpStatus::kOk;
}

// Sets the pairs args[i], args[i + 1] for the key indexes `keys` in order (a repeated key: the
// last value wins); returns the first error (kOutOfMemory), after which it stops.
template <typename Indexes>
OpStatus SetPairs(DbSlice& db, CmdArgs args, const Indexes& keys, int64_t now_ms) {
  for (size_t i : keys) {
    if (OpStatus st = SetPlain(db, args[i], args[i + 1], now_ms); st != OpStatus::kOk) return st;
  }
  return OpStatus::kOk;
}

// Returns whether any of the keys at indexes `keys` exists.
template <typename Indexes>
bool AnyExists(DbSlice& db, CmdArgs args, const Indexes& keys, int64_t now_ms) {
  for (size_t i : keys) {
    if (!db.FindReadOnlyQuiet(args[i], now_ms).is_done()) return true;
  }
  return false;
}

// The key indexes 1, 3, 5, ... of an MSET-style command.
std::vector<uint32_t> PairKeys(CmdArgs args) {
  std::vector<uint32_t> keys;
  keys.reserve(args.size() / 2);
  for (uint32_t i = 1; i + 1 < args.size(); i += 2) keys.push_back(i);
  return keys;
}

enum class MSetMode : uint8_t { kAlways, kIfNoneExists };  // MSET, MSETNX

// Sends the reply of MSET (OK) or MSETNX (1 written, 0 skipped), or the error.
void ReplyMSet(io::ReplyBuilder& rb, MSetMode mode, OpStatus st) {
  if (st == OpStatus::kOk) return mode == MSetMode::kAlways ? rb.SendOk() : rb.SendLong(1);
  if (st == OpStatus::kSkipped) return rb.SendLong(0);
  SendStatus(rb, st);
}

// MSET key value [key value ...] / MSETNX key value [key value ...] with all keys on this shard.
template <MSetMode kMode>
void CmdMSetShard(CmdArgs args, ShardCmdContext& ctx) {
  if (args.size() % 2 == 0) return ctx.rb.SendError(WrongArgsText(ctx.spec.name));
  std::vector<uint32_t> keys = PairKeys(args);
  if (kMode == MSetMode::kIfNoneExists && AnyExists(ctx.db, args, keys, ctx.now_ms)) {
    ctx.NoChange();
    return ReplyMSet(ctx.rb, kMode, OpStatus::kSkipped);
  }
  ReplyMSet(ctx.rb, kMode, SetPairs(ctx.db, args, keys, ctx.now_ms));
}

// MSET / MSETNX with keys on several shards: one hop per shard (MSETNX: a checking round first;
// MSET is one_hop: its hop also releases its locks).
template <MSetMode kMode>
awaitable<void> CmdMSetMulti(CmdArgs args, ConnCmdContext& ctx) {
  if (args.size() % 2 == 0) co_return ctx.rb.SendError(WrongArgsText(ctx.spec.name));
  ShardSet& ss = ctx.shard_set();
  KeysByShard groups(ss, args, 1, args.size() - 1, 2);
  unsigned db = ctx.state.db;
  int64_t now = ctx.now_ms;
  if (kMode == MSetMode::kIfNoneExists) {
    std::vector<char> found(ss.size(), 0);
    co_await ss.AwaitMany(groups.shards, [&](Shard& shard) {
      found[shard.index()] = AnyExists(shard.db(db), args, groups.indexes[shard.index()], now);
    });
    for (char f : found) {
      if (!f) continue;
      co_return ReplyMSet(ctx.rb, kMode, OpStatus::kSkipped);
    }
  }
  std::vector<OpStatus> status(ss.size(), OpStatus::kOk);
  co_await OnlyHop(ss, ctx.locks, groups.shards, [&](Shard& shard) {
    status[shard.index()] = SetPairs(shard.db(db), args, groups.indexes[shard.index()], now);
  });
  OpStatus st = OpStatus::kOk;
  for (OpStatus s : status) {
    if (s != OpStatus::kOk) st = s;
  }
  ReplyMSet(ctx.rb, kMode, st);
}

// MSET's part in a multi-shard group: its pairs on the shard; the word is the OpStatus.
void MSetPart(CmdArgs args, std::span<const uint32_t> keys, ShardCmdContext& ctx,
              PartSink& sink) {
  sink.set_word(static_cast<int64_t>(SetPairs(ctx.db, args, keys, ctx.now_ms)));
}

void MSetCombine(CmdArgs, PartReader& parts, io::ReplyBuilder& out) {
  OpStatus st = OpStatus::kOk;
  for (int64_t w : parts.words()) {
    if (static_cast<OpStatus>(w) != OpStatus::kOk) st = static_cast<OpStatus>(w);
  }
  ReplyMSet(out, MSetMode::kAlways, st);
}

// A call with a key and no value answers its arity error alone (CmdMSetMulti).
bool MSetAccepts(CmdArgs args) { return args.size() % 2 == 1; }

constexpr MultiShardOps kMSetOps{MSetAccepts, MSetPart, MSetCombine};

CommandSpec Spec(std::string name, int arity, uint32_t flags, int last_key,
                 std::vector<std::string_view> cats, std::string_view since,
                 std::string_view summary) {
  return MakeSpec(std::move(name), arity, flags, 1, last_key, std::move(cats), "string",
                  since, summary);
}

constexpr uint32_t kWriteOom = kCmdWrite | kCmdDenyOom;
constexpr uint32_t kWriteOomFast = kCmdWrite | kCmdDenyOom | kCmdFast;
constexpr uint32_t kReadFast = kCmdReadOnly | kCmdFast;

}  // namespace

void RegisterStringCommands(CommandRegistry* r) {
  using V = std::vector<std::string_view>;
  const V w_slow{"write", "string", "slow"}, w_fast{"write", "string", "fast"};
  const V r_slow{"read", "string", "slow"}, r_fast{"read", "string", "fast"};
  r->RegisterShard(Spec("set", -3, kWriteOom, 1, w_slow, "1.0.0",
              "Sets the string value of a key, ignoring its type. The key is created if it "
              "doesn't exist."), CmdSet);
  r->RegisterShard(Spec("get", 2, kReadFast, 1, r_fast, "1.0.0", "Returns the string value of a key."),
      CmdGet);
  r->RegisterShard(Spec("getset", 3, kWriteOomFast, 1, w_fast, "1.0.0",
              "Returns the previous string value of a key after setting it to a new value."),
      CmdGetSet);
  r->RegisterShard(Spec("getdel", 2, kCmdWrite | kCmdFast, 1, w_fast, "6.2.0",
              "Returns the string value of a key after deleting the key."), CmdGetDel);
  r->RegisterShard(Spec("getex", -2, kCmdWrite | kCmdFast, 1, w_fast, "6.2.0",
              "Returns the string value of a key after setting its expiration time."), CmdGetEx);
  r->RegisterShard(Spec("setnx", 3, kWriteOomFast, 1, w_fast, "1.0.0",
              "Set the string value of a key only when the key doesn't exist."), CmdSetNx);
  r->RegisterShard(Spec("setex", 4, kWriteOom, 1, w_slow, "2.0.0",
              "Sets the string value and expiration time of a key. Creates the key if it "
              "doesn't exist."), CmdSetEx<ExpireKind::kEx>);
  r->RegisterShard(Spec("psetex", 4, kWriteOom, 1, w_slow, "2.6.0",
              "Sets both string value and expiration time in milliseconds of a key. The key is "
              "created if it doesn't exist."), CmdSetEx<ExpireKind::kPx>);
  CommandSpec mget = OneHop(Spec("mget", -2, kReadFast, -1, r_fast, "1.0.0",
                                 "Atomically returns the string values of one or more keys."));
  mget.multi_ops = &kMGetOps;
  r->RegisterShard(std::move(mget), CmdMGetShard, CmdMGetMulti);
  r->RegisterShard(Spec("append", 3, kWriteOomFast, 1, w_fast, "2.0.0",
              "Appends a string to the value of a key. Creates the key if it doesn't exist."),
      CmdAppend);
  r->RegisterShard(Spec("strlen", 2, kReadFast, 1, r_fast, "2.2.0",
              "Returns the length of a string value."), CmdStrlen);
  r->RegisterShard(Spec("incr", 2, kWriteOomFast, 1, w_fast, "1.0.0",
              "Increments the integer value of a key by one. Uses 0 as initial value if the key "
              "doesn't exist."), CmdIncrOne<1>);
  r->RegisterShard(Spec("decr", 2, kWriteOomFast, 1, w_fast, "1.0.0",
              "Decrements the integer value of a key by one. Uses 0 as initial value if the key "
              "doesn't exist."), CmdIncrOne<-1>);
  r->RegisterShard(Spec("incrby", 3, kWriteOomFast, 1, w_fast, "1.0.0",
              "Increments the integer value of a key by a number. Uses 0 as initial value if the "
              "key doesn't exist."), CmdIncrBy);
  r->RegisterShard(Spec("decrby", 3, kWriteOomFast, 1, w_fast, "1.0.0",
              "Decrements a number from the integer value of a key. Uses 0 as initial value if "
              "the key doesn't exist."), CmdDecrBy);
  r->RegisterShard(Spec("incrbyfloat", 3, kWriteOomFast, 1, w_fast, "2.6.0",
              "Increment the floating point value of a key by a number. Uses 0 as initial value "
              "if the key doesn't exist."), CmdIncrByFloat);
  r->RegisterShard(Spec("getrange", 4, kCmdReadOnly, 1, r_slow, "2.4.0",
              "Returns a substring of the string stored at a key."), CmdGetRange);
  r->RegisterShard(Spec("substr", 4, kCmdReadOnly, 1, r_slow, "1.0.0",
              "Returns a substring from a string value."), CmdGetRange);
  r->RegisterShard(Spec("setrange", 4, kWriteOom, 1, w_slow, "2.2.0",
              "Overwrites a part of a string value with another by an offset. Creates the key if "
              "it doesn't exist."), CmdSetRange);
  CommandSpec mset = Spec("mset", -3, kWriteOom, -1, w_slow, "1.0.1",
                          "Atomically creates or modifies the string values of one or more keys.");
  mset.key_step = 2;
  mset.one_hop = true;
  mset.multi_ops = &kMSetOps;
  r->RegisterShard(std::move(mset), CmdMSetShard<MSetMode::kAlways>,
                   CmdMSetMulti<MSetMode::kAlways>);
  CommandSpec msetnx = Spec("msetnx", -3, kWriteOom, -1, w_slow, "1.0.1",
                            "Atomically modifies the string values of one or more keys only when "
                            "all keys don't exist.");
  msetnx.key_step = 2;
  r->RegisterShard(std::move(msetnx), CmdMSetShard<MSetMode::kIfNoneExists>,
                   CmdMSetMulti<MSetMode::kIfNoneExists>);
}

}  // namespace dashkv
