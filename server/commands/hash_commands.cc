// Hash commands (Redis 7.0 semantics, plus HSCAN's NOVALUES from 7.4): HSET, HSETNX, HGET,
// HMGET, HMSET, HDEL, HLEN, HSTRLEN, HEXISTS, HKEYS, HVALS, HGETALL, HINCRBY, HINCRBYFLOAT,
// HRANDFIELD and HSCAN. All are single-key shard commands. Empty hashes are deleted.
#include <cmath>
#include <vector>

#include "core/glob.h"
#include "core/numbers.h"
#include "server/cmd_context.h"
#include "server/command_registry.h"
#include "server/commands/random_reply.h"
#include "server/commands/string_ops.h"
#include "server/values/hash_value.h"

namespace dashkv {

namespace {

HashValue::Limits HashLimits(const Config& config) {
  HashValue::Limits l;
  l.max_entries =
      static_cast<size_t>(config.hash_max_listpack_entries.load(std::memory_order_relaxed));
  l.max_value = static_cast<size_t>(config.hash_max_listpack_value.load(std::memory_order_relaxed));
  return l;
}

HashValue* GetHash(const CompactObj& obj) { return static_cast<HashValue*>(obj.GetObject()); }

// Returns the hash at key for reading.
OpResult<HashValue*> FindHash(DbSlice& db, std::string_view key, int64_t now_ms) {
  OpResult<PrimeIterator> res = db.FindReadOnlyOfType(key, ObjType::kHash, now_ms);
  if (!res) return res.status();
  return GetHash((*res)->second);
}

// Returns the entry of the hash at key for changing (kKeyNotFound / kWrongType otherwise).
OpResult<PrimeIterator> FindMutableHash(DbSlice& db, std::string_view key, int64_t now_ms) {
  return db.FindMutableOfType(key, ObjType::kHash, now_ms);
}

// Returns the entry of the hash at key for changing, creating an empty hash when missing.
// Invalidates iterators.
OpResult<PrimeIterator> FindOrAddHash(DbSlice& db, std::string_view key, int64_t now_ms) {
  OpResult<DbSlice::AddResult> added = db.FindOrAddOfType(key, ObjType::kHash, now_ms);
  if (!added) return added.status();
  if (added->inserted) {
    added->it->second.SetObject(ObjType::kHash, HashValue::kListpack, new HashValue());
  }
  return added->it;
}

// After a write to the hash at `it` (a mutable lookup of `key`): deletes the key when its hash
// became empty (raising `del`), else records the encoding.
void FinishWrite(ShardCmdContext& ctx, PrimeIterator it, std::string_view key) {
  HashValue* hash = GetHash(it->second);
  if (!hash->empty()) return it->second.set_object_encoding(hash->encoding());
  ctx.db.Erase(it, RemoveReason::kDeleted);
  ctx.db.Notify(kNotifyGeneric, "del", key);
}

// Sends the error of a failed lookup; missing keys get `on_missing` instead.
template <typename OnMissing>
void ReplyLookupError(ShardCmdContext& ctx, OpStatus st, OnMissing on_missing) {
  if (st == OpStatus::kKeyNotFound) return on_missing();
  SendOpError(ctx, st);
}

// HSET key field value [field value ...] / HMSET (replies OK)
template <bool kReplyOk>
void CmdHSet(CmdArgs args, ShardCmdContext& ctx) {
  if (args.size() % 2 != 0) {
    return ctx.rb.SendError(WrongArgsText(ctx.spec.name));
  }
  OpResult<PrimeIterator> res = FindOrAddHash(ctx.db, args[1], ctx.now_ms);
  if (!res) return SendOpError(ctx, res.status());
  HashValue* hash = GetHash((*res)->second);
  HashValue::Limits limits = HashLimits(ctx.config);
  int64_t added = 0;
  for (size_t i = 2; i < args.size(); i += 2) added += hash->Set(args[i], args[i + 1], limits);
  FinishWrite(ctx, *res, args[1]);
  ctx.db.Notify(kNotifyHash, "hset", args[1]);
  kReplyOk ? ctx.rb.SendOk() : ctx.rb.SendLong(added);
}

// HSETNX key field value
void CmdHSetNx(CmdArgs args, ShardCmdContext& ctx) {
  OpResult<PrimeIterator> res = FindOrAddHash(ctx.db, args[1], ctx.now_ms);
  if (!res) return SendOpError(ctx, res.status());
  bool added = GetHash((*res)->second)->Set(args[2], args[3], HashLimits(ctx.config),
                                            HashValue::SetMode::kIfMissing);
  FinishWrite(ctx, *res, args[1]);
  if (added) {
    ctx.db.Notify(kNotifyHash, "hset", args[1]);
  } else {
    ctx.NoChange();
  }
  ctx.rb.SendLong(added ? 1 : 0);
}

// HGET key field
void CmdHGet(CmdArgs args, ShardCmdContext& ctx) {
  OpResult<HashValue*> res = FindHash(ctx.db, args[1], ctx.now_ms);
  if (!res) return ReplyLookupError(ctx, res.status(), [&] { ctx.rb.SendNull(); });
  std::string scratch;
  std::optional<std::string_view> v = (*res)->Get(args[2], &scratch);
  v ? ctx.rb.SendBulk(*v) : ctx.rb.SendNull();
}

// HMGET key field [field ...]
void CmdHMGet(CmdArgs args, ShardCmdContext& ctx) {
  OpResult<HashValue*> res = FindHash(ctx.db, args[1], ctx.now_ms);
  if (!res && res.status() != OpStatus::kKeyNotFound) return SendOpError(ctx, res.status());
  ctx.rb.StartArray(args.size() - 2);
  std::string scratch;
  for (size_t i = 2; i < args.size(); ++i) {
    std::optional<std::string_view> v = res ? (*res)->Get(args[i], &scratch) : std::nullopt;
    v ? ctx.rb.SendBulk(*v) : ctx.rb.SendNull();
  }
}

// HDEL key field [field ...]
void CmdHDel(CmdArgs args, ShardCmdContext& ctx) {
  OpResult<PrimeIterator> res = FindMutableHash(ctx.db, args[1], ctx.now_ms);
  if (!res) return ReplyLookupError(ctx, res.status(), [&] { ctx.rb.SendLong(0); });
  HashValue* hash = GetHash((*res)->second);
  int64_t deleted = 0;
  for (size_t i = 2; i < args.size() && !hash->empty(); ++i) deleted += hash->Delete(args[i]);
  if (deleted == 0) {
    ctx.NoChange();
    return ctx.rb.SendLong(0);
  }
  // Redis raises `hdel` before the `del` of an emptied hash.
  ctx.db.Notify(kNotifyHash, "hdel", args[1]);
  FinishWrite(ctx, *res, args[1]);
  ctx.rb.SendLong(deleted);
}

// HLEN key
void CmdHLen(CmdArgs args, ShardCmdContext& ctx) {
  OpResult<HashValue*> res = FindHash(ctx.db, args[1], ctx.now_ms);
  if (!res) return ReplyLookupError(ctx, res.status(), [&] { ctx.rb.SendLong(0); });
  ctx.rb.SendLong(static_cast<int64_t>((*res)->size()));
}

// HSTRLEN key field
void CmdHStrLen(CmdArgs args, ShardCmdContext& ctx) {
  OpResult<HashValue*> res = FindHash(ctx.db, args[1], ctx.now_ms);
  if (!res) return ReplyLookupError(ctx, res.status(), [&] { ctx.rb.SendLong(0); });
  std::string scratch;
  std::optional<std::string_view> v = (*res)->Get(args[2], &scratch);
  ctx.rb.SendLong(v ? static_cast<int64_t>(v->size()) : 0);
}

// HEXISTS key field
void CmdHExists(CmdArgs args, ShardCmdContext& ctx) {
  OpResult<HashValue*> res = FindHash(ctx.db, args[1], ctx.now_ms);
  if (!res) return ReplyLookupError(ctx, res.status(), [&] { ctx.rb.SendLong(0); });
  ctx.rb.SendLong((*res)->Contains(args[2]) ? 1 : 0);
}

enum class Parts : uint8_t { kKeys, kValues, kBoth };

// HKEYS / HVALS / HGETALL key
template <Parts kParts>
void CmdHGetAll(CmdArgs args, ShardCmdContext& ctx) {
  OpResult<HashValue*> res = FindHash(ctx.db, args[1], ctx.now_ms);
  if (!res) {
    return ReplyLookupError(ctx, res.status(), [&] {
      kParts == Parts::kBoth ? ctx.rb.StartMap(0) : ctx.rb.SendEmptyArray();
    });
  }
  size_t n = (*res)->size();
  kParts == Parts::kBoth ? ctx.rb.StartMap(n) : ctx.rb.StartArray(n);
  (*res)->ForEach([&](std::string_view f, std::string_view v) {
    if (kParts != Parts::kValues) ctx.rb.SendBulk(f);
    if (kParts != Parts::kKeys) ctx.rb.SendBulk(v);
  });
}

// HINCRBY key field increment
void CmdHIncrBy(CmdArgs args, ShardCmdContext& ctx) {
  std::optional<int64_t> incr = ParseInt64(args[3]);
  if (!incr) return SendOpError(ctx, OpStatus::kNotAnInteger);
  OpResult<PrimeIterator> res = FindOrAddHash(ctx.db, args[1], ctx.now_ms);
  if (!res) return SendOpError(ctx, res.status());
  HashValue* hash = GetHash((*res)->second);
  std::string scratch;
  int64_t current = 0;
  if (std::optional<std::string_view> v = hash->Get(args[2], &scratch)) {
    std::optional<int64_t> parsed = ParseInt64(*v);
    if (!parsed) {
      FinishWrite(ctx, *res, args[1]);
      return ctx.rb.SendError("ERR hash value is not an integer");
    }
    current = *parsed;
  }
  int64_t result;
  if (__builtin_add_overflow(current, *incr, &result)) {
    FinishWrite(ctx, *res, args[1]);
    return SendOpError(ctx, OpStatus::kIncrOverflow);
  }
  char buf[24];
  size_t len = FormatInt64(result, buf);
  hash->Set(args[2], std::string_view(buf, len), HashLimits(ctx.config));
  FinishWrite(ctx, *res, args[1]);
  ctx.db.Notify(kNotifyHash, "hincrby", args[1]);
  ctx.rb.SendLong(result);
}

// HINCRBYFLOAT key field increment
void CmdHIncrByFloat(CmdArgs args, ShardCmdContext& ctx) {
  std::optional<long double> incr = ParseLongDouble(args[3]);
  if (!incr) return SendOpError(ctx, OpStatus::kNotAFloat);
  if (std::isinf(*incr)) return ctx.rb.SendError("ERR value is NaN or Infinity");
  OpResult<PrimeIterator> res = FindOrAddHash(ctx.db, args[1], ctx.now_ms);
  if (!res) return SendOpError(ctx, res.status());
  HashValue* hash = GetHash((*res)->second);
  std::string scratch;
  long double current = 0;
  if (std::optional<std::string_view> v = hash->Get(args[2], &scratch)) {
    std::optional<long double> parsed = ParseLongDouble(*v);
    if (!parsed) {
      FinishWrite(ctx, *res, args[1]);
      return ctx.rb.SendError("ERR hash value is not a float");
    }
    current = *parsed;
  }
  long double sum = current + *incr;
  if (std::isnan(sum) || std::isinf(sum)) {
    FinishWrite(ctx, *res, args[1]);
    return SendOpError(ctx, OpStatus::kNanOrInf);
  }
  std::string text = FormatLongDouble(sum);
  hash->Set(args[2], text, HashLimits(ctx.config));
  FinishWrite(ctx, *res, args[1]);
  ctx.db.Notify(kNotifyHash, "hincrbyfloat", args[1]);
  ctx.rb.SendBulk(text);
}

// Sends one field, or a field and its value (RESP3: a pair array) of HRANDFIELD.
void SendRandomPair(io::ReplyBuilder& rb, bool with_values, std::string_view f,
                    std::string_view v) {
  if (!with_values) return rb.SendBulk(f);
  if (rb.resp3()) rb.StartArray(2);
  rb.SendBulk(f);
  rb.SendBulk(v);
}

// Starts HRANDFIELD's reply of n fields (or pairs).
void StartRandomReply(io::ReplyBuilder& rb, bool with_values, uint64_t n) {
  rb.StartArray(with_values && !rb.resp3() ? n * 2 : n);
}

// HRANDFIELD key [count [WITHVALUES]]
void CmdHRandField(CmdArgs args, ShardCmdContext& ctx) {
  if (args.size() == 2) {
    OpResult<HashValue*> res = FindHash(ctx.db, args[1], ctx.now_ms);
    if (!res) return ReplyLookupError(ctx, res.status(), [&] { ctx.rb.SendNull(); });
    return (*res)->ForEachRandom(1, [&](std::string_view f, std::string_view) {
      ctx.rb.SendBulk(f);
      return true;
    });
  }
  OpResult<RandCount> rc = ParseRandCount(args, "WITHVALUES");
  if (!rc) return SendOpError(ctx, rc.status());
  OpResult<HashValue*> res = FindHash(ctx.db, args[1], ctx.now_ms);
  if (!res) return ReplyLookupError(ctx, res.status(), [&] { ctx.rb.SendEmptyArray(); });
  const HashValue& hash = **res;
  const bool with_values = rc->with_values;
  if (rc->count < 0) {
    const uint64_t draws = uint64_t(0) - uint64_t(rc->count);
    DrawReply guard(ctx.rb, ctx.config, draws, with_values ? 2 : 1);
    if (!guard.MayFit()) return SendOpError(ctx, OpStatus::kRandReplyTooLarge);
    StartRandomReply(ctx.rb, with_values, draws);
    hash.ForEachRandom(draws, [&](std::string_view f, std::string_view v) {
      SendRandomPair(ctx.rb, with_values, f, v);
      return !guard.Exceeded();
    });
    if (guard.Exceeded()) guard.Abort();
    return;
  }
  const uint64_t count = static_cast<uint64_t>(rc->count);
  if (count == 0) return ctx.rb.SendEmptyArray();
  if (count >= hash.size()) {
    StartRandomReply(ctx.rb, with_values, hash.size());
    return hash.ForEach(
        [&](std::string_view f, std::string_view v) { SendRandomPair(ctx.rb, with_values, f, v); });
  }
  StartRandomReply(ctx.rb, with_values, count);
  for (const auto& [f, v] : hash.RandomDistinct(count)) SendRandomPair(ctx.rb, with_values, f, v);
}

// HSCAN key cursor [MATCH pattern] [COUNT count] [NOVALUES]
void CmdHScan(CmdArgs args, ShardCmdContext& ctx) {
  const std::optional<uint64_t> parsed_cursor = ParseUint64(args[2]);
  if (!parsed_cursor) return ctx.SendStatus(OpStatus::kInvalidCursor);
  const uint64_t cursor = *parsed_cursor;
  ArgParser parser(args, 3);
  std::string_view pattern;
  int64_t count = 10;
  bool no_values = false;
  while (parser.HasNext()) {
    if (parser.Check("MATCH")) {
      pattern = parser.Next();
    } else if (parser.Check("COUNT")) {
      count = parser.NextInt();
      if (!parser.HasError() && count < 1) parser.SetError(OpStatus::kSyntaxError);
    } else if (parser.Check("NOVALUES")) {
      no_values = true;
    } else {
      parser.SetError(OpStatus::kSyntaxError);
    }
  }
  if (parser.HasError()) return SendOpError(ctx, parser.error());
  OpResult<HashValue*> res = FindHash(ctx.db, args[1], ctx.now_ms);
  if (!res && res.status() != OpStatus::kKeyNotFound) return SendOpError(ctx, res.status());
  std::vector<std::string> items;
  uint64_t next = 0;
  if (res) {
    bool match_all = pattern.empty() || IsMatchAllPattern(pattern);
    next = (*res)->Scan(cursor, static_cast<size_t>(count),
                        [&](std::string_view f, std::string_view v) {
                          if (!match_all && !GlobMatch(pattern, f)) return;
                          items.emplace_back(f);
                          if (!no_values) items.emplace_back(v);
                        });
  }
  ctx.rb.StartArray(2);
  ctx.rb.SendBulk(Int64ToString(static_cast<int64_t>(next)));
  ctx.rb.StartArray(items.size());
  for (const std::string& s : items) ctx.rb.SendBulk(s);
}

CommandSpec Spec(std::string name, int arity, uint32_t flags, std::vector<std::string_view> cats,
                 std::string_view since, std::string_view summary) {
  return MakeSpec(std::move(name), arity, flags, 1, 1, std::move(cats), "hash", since, summary);
}

constexpr uint32_t kWriteOomFast = kCmdWrite | kCmdDenyOom | kCmdFast;
constexpr uint32_t kReadFast = kCmdReadOnly | kCmdFast;

}  // namespace

void RegisterHashCommands(CommandRegistry* r) {
  using V = std::vector<std::string_view>;
  const V w_fast{"write", "hash", "fast"}, r_fast{"read", "hash", "fast"};
  const V r_slow{"read", "hash", "slow"};
  r->RegisterShard(Spec("hset", -4, kWriteOomFast, w_fast, "2.0.0",
              "Creates or modifies the value of a field in a hash."), CmdHSet<false>);
  r->RegisterShard(Spec("hmset", -4, kWriteOomFast, w_fast, "2.0.0",
              "Sets the values of multiple fields."), CmdHSet<true>);
  r->RegisterShard(Spec("hsetnx", 4, kWriteOomFast, w_fast, "2.0.0",
              "Sets the value of a field in a hash only when the field doesn't exist."),
      CmdHSetNx);
  r->RegisterShard(Spec("hget", 3, kReadFast, r_fast, "2.0.0", "Returns the value of a field in a hash."),
      CmdHGet);
  r->RegisterShard(Spec("hmget", -3, kReadFast, r_fast, "2.0.0",
              "Returns the values of all fields in a hash."), CmdHMGet);
  r->RegisterShard(Spec("hdel", -3, kCmdWrite | kCmdFast, w_fast, "2.0.0",
              "Deletes one or more fields and their values from a hash. Deletes the hash if no "
              "fields remain."), CmdHDel);
  r->RegisterShard(Spec("hlen", 2, kReadFast, r_fast, "2.0.0", "Returns the number of fields in a hash."),
      CmdHLen);
  r->RegisterShard(Spec("hstrlen", 3, kReadFast, r_fast, "3.2.0",
              "Returns the length of the value of a field."), CmdHStrLen);
  r->RegisterShard(Spec("hexists", 3, kReadFast, r_fast, "2.0.0",
              "Determines whether a field exists in a hash."), CmdHExists);
  r->RegisterShard(Spec("hkeys", 2, kCmdReadOnly, r_slow, "2.0.0", "Returns all fields in a hash."),
      CmdHGetAll<Parts::kKeys>);
  r->RegisterShard(Spec("hvals", 2, kCmdReadOnly, r_slow, "2.0.0", "Returns all values in a hash."),
      CmdHGetAll<Parts::kValues>);
  r->RegisterShard(Spec("hgetall", 2, kCmdReadOnly, r_slow, "2.0.0",
              "Returns all fields and values in a hash."), CmdHGetAll<Parts::kBoth>);
  r->RegisterShard(Spec("hincrby", 4, kWriteOomFast, w_fast, "2.0.0",
              "Increments the integer value of a field in a hash by a number. Uses 0 as initial "
              "value if the field doesn't exist."), CmdHIncrBy);
  r->RegisterShard(Spec("hincrbyfloat", 4, kWriteOomFast, w_fast, "2.6.0",
              "Increments the floating point value of a field by a number. Uses 0 as initial "
              "value if the field doesn't exist."), CmdHIncrByFloat);
  r->RegisterShard(Spec("hrandfield", -2, kCmdReadOnly, r_slow, "6.2.0",
              "Returns one or more random fields from a hash."), CmdHRandField);
  r->RegisterShard(Spec("hscan", -3, kCmdReadOnly, r_slow, "2.8.0",
              "Iterates over fields and values of a hash."), CmdHScan);
}

}  // namespace dashkv
