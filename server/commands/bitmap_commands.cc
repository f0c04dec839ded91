// Bitmap commands over string values: SETBIT, GETBIT, BITCOUNT, BITPOS, BITFIELD and
// BITFIELD_RO and BITOP (Redis 7.0 semantics). All but BITOP are single-key shard commands.
// BITOP runs whole on one shard when its keys share it; otherwise one parallel hop per source
// shard copies the sources out, the result is computed on the connection's thread (core/bitops,
// 8 bytes at a time) and one more hop stores it (the server's intent locks make this atomic).
#include <algorithm>
#include <vector>

#include "core/bitops.h"

#include "server/cmd_context.h"
#include "server/command_registry.h"
#include "server/commands/string_ops.h"
#include "server/tx/multi_key.h"
#include "server/config.h"
#include "server/storage/shard_set.h"

namespace dashkv {

namespace {

// Looks up a string for reading; a missing key reads as the empty string.
OpResult<std::string_view> ReadBits(ShardCmdContext& ctx, std::string_view key,
                                    std::string* scratch) {
  OpResult<PrimeIterator> res = ctx.db.FindReadOnlyOfType(key, ObjType::kString, ctx.now_ms);
  if (!res) {
    if (res.status() == OpStatus::kKeyNotFound) return std::string_view{};
    return res.status();
  }
  return (*res)->second.GetString(scratch);
}

// SETBIT key offset value
// Raises `setbit` (and touches WATCH) only when the key was created or grew, or the bit changed,
// as Redis 7.0 does.
void CmdSetBit(CmdArgs args, ShardCmdContext& ctx) {
  std::optional<uint64_t> offset = ParseBitOffset(args[2]);
  if (!offset) return SendOpError(ctx, StringOpError::kBitOffset);
  std::optional<int64_t> on = ParseInt64(args[3]);
  if (!on || (*on != 0 && *on != 1)) return SendOpError(ctx, StringOpError::kBitValue);
  OpResult<DbSlice::AddResult> res = FindOrAddString(ctx.db, args[1], ctx.now_ms);
  if (!res) return SendOpError(ctx, res.status());
  CompactObj& value = res->it->second;
  size_t need = static_cast<size_t>(*offset >> 3) + 1;
  const bool grows = res->inserted || need > value.StringSize();
  if (!grows) {
    std::string scratch;
    const bool old = GetBit(value.GetString(&scratch), *offset) != 0;
    if (old == (*on != 0)) {
      ctx.NoChange();
      return ctx.rb.SendLong(old ? 1 : 0);
    }
  }
  // In place: O(1) unless the string grows (ResizeString marks it raw, as Redis does).
  absl::Span<char> bytes = value.ResizeString(std::max(value.StringSize(), need));
  auto& byte = reinterpret_cast<unsigned char&>(bytes[*offset >> 3]);
  unsigned mask = 0x80u >> (*offset & 7);
  bool old = (byte & mask) != 0;
  byte = static_cast<unsigned char>(*on ? (byte | mask) : (byte & ~mask));
  ctx.db.Notify(kNotifyString, "setbit", args[1]);
  ctx.rb.SendLong(old ? 1 : 0);
}

// GETBIT key offset
void CmdGetBit(CmdArgs args, ShardCmdContext& ctx) {
  std::optional<uint64_t> offset = ParseBitOffset(args[2]);
  if (!offset) return SendOpError(ctx, StringOpError::kBitOffset);
  std::string scratch;
  OpResult<std::string_view> s = ReadBits(ctx, args[1], &scratch);
  if (!s) return SendOpError(ctx, s.status());
  ctx.rb.SendLong(GetBit(*s, *offset));
}

// Parses BYTE|BIT; records kSyntaxError for anything else.
BitUnit ParseBitUnit(ArgParser& parser) {
  if (parser.Check("BIT")) return BitUnit::kBit;
  if (!parser.Check("BYTE")) parser.SetError(OpStatus::kSyntaxError);
  return BitUnit::kByte;
}

// BITCOUNT key [start end [BYTE|BIT]]
void CmdBitCount(CmdArgs args, ShardCmdContext& ctx) {
  OpResult<PrimeIterator> found =
      ctx.db.FindReadOnlyOfType(args[1], ObjType::kString, ctx.now_ms);
  if (!found) {  // a missing key counts 0 whatever the other arguments are
    if (found.status() == OpStatus::kKeyNotFound) return ctx.rb.SendLong(0);
    return SendOpError(ctx, found.status());
  }
  std::string scratch;
  std::string_view s = (*found)->second.GetString(&scratch);
  if (args.size() == 2) return ctx.rb.SendLong(static_cast<int64_t>(BitCount(s)));
  if (args.size() != 4 && args.size() != 5) return SendOpError(ctx, OpStatus::kSyntaxError);
  ArgParser parser(args, 2);
  int64_t start = parser.NextInt();
  int64_t end = parser.NextInt();
  BitUnit unit = args.size() == 5 ? ParseBitUnit(parser) : BitUnit::kByte;
  if (parser.HasError()) return SendOpError(ctx, parser.error());
  ctx.rb.SendLong(static_cast<int64_t>(BitCount(s, start, end, unit)));
}

// BITPOS key bit [start [end [BYTE|BIT]]]
void CmdBitPos(CmdArgs args, ShardCmdContext& ctx) {
  std::optional<int64_t> bit = ParseInt64(args[2]);
  if (!bit) return SendOpError(ctx, OpStatus::kNotAnInteger);
  if (*bit != 0 && *bit != 1) return SendOpError(ctx, StringOpError::kBitposBit);
  OpResult<PrimeIterator> found =
      ctx.db.FindReadOnlyOfType(args[1], ObjType::kString, ctx.now_ms);
  if (!found) {
    if (found.status() == OpStatus::kKeyNotFound) return ctx.rb.SendLong(*bit ? -1 : 0);
    return SendOpError(ctx, found.status());
  }
  std::string scratch;
  std::string_view s = (*found)->second.GetString(&scratch);
  if (args.size() > 6) return SendOpError(ctx, OpStatus::kSyntaxError);
  // Redis reads start, then BYTE|BIT, then end.
  ArgParser parser(args, 3);
  int64_t start = args.size() > 3 ? parser.NextInt() : 0;
  BitUnit unit = BitUnit::kByte;
  if (args.size() == 6) {
    ArgParser unit_parser(args, 5);
    unit = ParseBitUnit(unit_parser);
    if (unit_parser.HasError()) parser.SetError(unit_parser.error());
  }
  std::optional<int64_t> end;
  if (args.size() > 4) end = parser.NextInt();
  if (parser.HasError()) return SendOpError(ctx, parser.error());
  ctx.rb.SendLong(BitPos(s, static_cast<int>(*bit), start, end, unit));
}

enum class FieldOpKind : uint8_t { kGet, kSet, kIncrBy };

struct FieldOp {
  FieldOpKind kind;
  BitfieldType type;
  uint64_t offset;
  int64_t value;  // SET value or INCRBY increment
  BitfieldOverflow overflow;
};

struct FieldProgram {
  std::vector<FieldOp> ops;
  std::optional<uint64_t> last_write_bit;  // the highest bit a SET/INCRBY names
};

// The first error of a BITFIELD argument list: either an OpStatus or a core/bitops.h check.
struct FieldError {
  OpStatus status = OpStatus::kOk;
  StringOpError check = StringOpError::kOk;
  explicit operator bool() const {
    return status != OpStatus::kOk || check != StringOpError::kOk;
  }
};

// Parses a bitfield type: i1..i64 or u1..u63 (Redis 7.0 wants the letter in lower case).
std::optional<BitfieldType> ParseFieldType(std::string_view s) {
  if (s.empty() || (s[0] != 'i' && s[0] != 'u')) return std::nullopt;
  return ParseBitfieldType(s);
}

// Parses "type offset [value]" of one GET/SET/INCRBY (sub-command consumed) into `op`.
FieldError ParseFieldOp(ArgParser& parser, FieldOp* op) {
  std::optional<BitfieldType> type = ParseFieldType(parser.Next());
  if (!type) return {.check = StringOpError::kBitfieldType};
  op->type = *type;
  std::optional<uint64_t> offset = ParseBitfieldOffset(parser.Next(), *type);
  if (!offset) return {.check = StringOpError::kBitOffset};
  op->offset = *offset;
  if (op->kind != FieldOpKind::kGet) op->value = parser.NextInt();
  return {.status = parser.error()};
}

// Parses the GET/SET/INCRBY/OVERFLOW list of BITFIELD (args[2..]) into `prog`.
FieldError ParseFieldProgram(CmdArgs args, FieldProgram* prog) {
  ArgParser parser(args, 2);
  BitfieldOverflow overflow = BitfieldOverflow::kWrap;
  while (parser.HasNext()) {
    size_t rest = parser.remaining() - 1;  // arguments after the sub-command
    FieldOp op{};
    if (parser.Check("OVERFLOW") && rest >= 1) {
      std::optional<BitfieldOverflow> o = ParseBitfieldOverflow(parser.Next());
      if (!o) return {.check = StringOpError::kBitfieldOverflow};
      overflow = *o;
      continue;
    }
    if (parser.Check("GET") && rest >= 2) {
      op.kind = FieldOpKind::kGet;
    } else if (parser.Check("SET") && rest >= 3) {
      op.kind = FieldOpKind::kSet;
    } else if (parser.Check("INCRBY") && rest >= 3) {
      op.kind = FieldOpKind::kIncrBy;
    } else {
      return {.status = OpStatus::kSyntaxError};
    }
    op.overflow = overflow;
    if (FieldError e = ParseFieldOp(parser, &op)) return e;
    if (op.kind != FieldOpKind::kGet) {
      uint64_t last = op.offset + op.type.bits - 1;
      prog->last_write_bit = std::max(prog->last_write_bit.value_or(0), last);
    }
    prog->ops.push_back(op);
  }
  return {};
}

// Runs one op over `s`; returns its reply value, nullopt when OVERFLOW FAIL refused it. Counts
// in `changes` a SET or INCRBY that changed the field's bits (Redis 7.0 signals only those).
std::optional<int64_t> RunFieldOp(std::string& s, const FieldOp& op, unsigned* changes) {
  if (op.kind == FieldOpKind::kGet) return BitfieldGet(s, op.offset, op.type);
  const int64_t before = BitfieldGet(s, op.offset, op.type);
  std::optional<int64_t> r = op.kind == FieldOpKind::kSet
                                 ? BitfieldSet(s, op.offset, op.type, op.value, op.overflow)
                                 : BitfieldIncrBy(s, op.offset, op.type, op.value, op.overflow);
  if (r && BitfieldGet(s, op.offset, op.type) != before) ++*changes;
  return r;
}

void SendFieldResults(ShardCmdContext& ctx, const std::vector<std::optional<int64_t>>& results) {
  ctx.rb.StartArray(results.size());
  for (const auto& r : results) r ? ctx.rb.SendLong(*r) : ctx.rb.SendNull();
}

// BITFIELD key [GET type offset | [OVERFLOW WRAP|SAT|FAIL] SET type offset value |
//     [OVERFLOW WRAP|SAT|FAIL] INCRBY type offset increment ...]
// BITFIELD_RO key [GET type offset ...]
// Raises `setbit` (and touches WATCH) only when a write changed a field, as Redis 7.0 does; the
// key may still have been created (`new`) or grown.
template <bool kReadOnlyCmd>
void CmdBitField(CmdArgs args, ShardCmdContext& ctx) {
  FieldProgram prog;
  if (FieldError e = ParseFieldProgram(args, &prog)) {
    if (e.check != StringOpError::kOk) return SendOpError(ctx, e.check);
    return SendOpError(ctx, e.status);
  }
  if (kReadOnlyCmd && prog.last_write_bit) return SendOpError(ctx, OpStatus::kBitfieldReadOnly);
  std::vector<std::optional<int64_t>> results;
  results.reserve(prog.ops.size());
  if (!prog.last_write_bit) {  // GETs only: a missing key reads as zeros and is not created
    std::string scratch;
    OpResult<std::string_view> s = ReadBits(ctx, args[1], &scratch);
    if (!s) return SendOpError(ctx, s.status());
    for (const FieldOp& op : prog.ops) results.push_back(BitfieldGet(*s, op.offset, op.type));
    return SendFieldResults(ctx, results);
  }
  OpResult<DbSlice::AddResult> res = FindOrAddString(ctx.db, args[1], ctx.now_ms);
  if (!res) return SendOpError(ctx, res.status());
  // Like Redis, the string grows to the highest bit any write names, even if all of them FAIL.
  unsigned changes = 0;
  res->it->second.MutateString([&](std::string* s) {
    GrowForBit(*s, *prog.last_write_bit);
    for (const FieldOp& op : prog.ops) results.push_back(RunFieldOp(*s, op, &changes));
  });
  if (changes > 0) {
    ctx.db.Notify(kNotifyString, "setbit", args[1]);
  } else {
    ctx.NoChange();
  }
  SendFieldResults(ctx, results);
}

// Parses BITOP's operation (args[1]) and checks NOT's single source.
OpResult<BitOpKind> ParseBitOp(CmdArgs args) {
  ArgParser parser(args, 1);
  BitOpKind kind;
  if (parser.Check("AND")) {
    kind = BitOpKind::kAnd;
  } else if (parser.Check("OR")) {
    kind = BitOpKind::kOr;
  } else if (parser.Check("XOR")) {
    kind = BitOpKind::kXor;
  } else if (parser.Check("NOT")) {
    kind = BitOpKind::kNot;
  } else {
    return OpStatus::kSyntaxError;
  }
  if (kind == BitOpKind::kNot && args.size() != 4) return OpStatus::kBitopNotSingle;
  return kind;
}

// Stores a BITOP result at `key` as Redis does: a raw string without TTL replacing any value
// (the `set` event), or no key at all for an empty result (`del` when there was one). Returns
// kSkipped when it changed nothing (an empty result and no key), else kOk or kOutOfMemory.
OpStatus StoreBitOpResult(DbSlice& db, std::string_view key, std::string_view result,
                          int64_t now_ms) {
  if (result.empty()) {
    if (!db.EraseKey(key, now_ms, RemoveReason::kDeleted)) return OpStatus::kSkipped;
    db.Notify(kNotifyGeneric, "del", key);
    return OpStatus::kOk;
  }
  OpResult<DbSlice::AddResult> added = db.FindOrAdd(key, now_ms);
  if (!added) return added.status();
  CompactObj& value = added->it->second;
  value.SetString(result);
  value.MarkRaw();
  db.SetExpire(added->it, 0);
  db.Notify(kNotifyString, "set", key);
  return OpStatus::kOk;
}

// BITOP AND|OR|XOR|NOT destkey key [key ...] with all keys on this shard.
void CmdBitOp(CmdArgs args, ShardCmdContext& ctx) {
  OpResult<BitOpKind> kind = ParseBitOp(args);
  if (!kind) return ctx.SendStatus(kind.status());
  // First pass: types, and lazy expiry (which may erase entries, so no views are taken yet).
  for (size_t i = 3; i < args.size(); ++i) {
    OpResult<PrimeIterator> res =
        ctx.db.FindReadOnlyOfType(args[i], ObjType::kString, ctx.now_ms);
    if (!res && res.status() != OpStatus::kKeyNotFound) return SendOpError(ctx, res.status());
  }
  // Second pass: views of the live sources; nothing changes the table until BitOp returns.
  std::vector<std::string> scratch(args.size() - 3);
  std::vector<std::string_view> srcs(args.size() - 3);
  for (size_t i = 3; i < args.size(); ++i) {
    PrimeIterator it = ctx.db.FindReadOnlyQuiet(args[i], ctx.now_ms);
    if (!it.is_done()) srcs[i - 3] = it->second.GetString(&scratch[i - 3]);
  }
  std::string result = BitOp(*kind, srcs);
  OpStatus st = StoreBitOpResult(ctx.db, args[2], result, ctx.now_ms);
  if (st != OpStatus::kOk && st != OpStatus::kSkipped) return SendOpError(ctx, st);
  ctx.rb.SendLong(static_cast<int64_t>(result.size()));
}

// BITOP with keys on several shards (see the file comment).
boost::asio::awaitable<void> CmdBitOpMulti(CmdArgs args, ConnCmdContext& ctx) {
  OpResult<BitOpKind> kind = ParseBitOp(args);
  if (!kind) co_return ctx.SendStatus(kind.status());
  ShardSet& ss = ctx.shard_set();
  KeysByShard groups(ss, args, 3, args.size() - 1);
  std::vector<std::string> values(args.size());  // each shard fills its sources' indexes
  std::vector<OpStatus> status(ss.size(), OpStatus::kOk);
  unsigned db = ctx.state.db;
  int64_t now = ctx.now_ms;
  co_await ss.AwaitMany(groups.shards, [&](Shard& shard) {
    DbSlice& slice = shard.db(db);
    for (uint32_t i : groups.indexes[shard.index()]) {
      OpResult<PrimeIterator> res = slice.FindReadOnlyOfType(args[i], ObjType::kString, now);
      if (res) {
        values[i] = CopyString((*res)->second);
      } else if (res.status() != OpStatus::kKeyNotFound) {
        status[shard.index()] = res.status();
        return;
      }
    }
  });
  for (OpStatus st : status) {
    if (st != OpStatus::kOk) co_return ctx.SendStatus(st);
  }
  std::vector<std::string_view> srcs(values.begin() + 3, values.end());
  std::string result = BitOp(*kind, srcs);
  std::string_view dest = args[2];
  OpStatus st = co_await ss.Await(ss.ShardOf(dest), [&](Shard& shard) {
    return StoreBitOpResult(shard.db(db), dest, result, now);
  });
  if (st != OpStatus::kOk && st != OpStatus::kSkipped) co_return ctx.SendStatus(st);
  ctx.rb.SendLong(static_cast<int64_t>(result.size()));
}

CommandSpec Spec(std::string name, int arity, uint32_t flags, std::vector<std::string_view> cats,
                 std::string_view since, std::string_view summary) {
  return MakeSpec(std::move(name), arity, flags, 1, 1, std::move(cats), "bitmap", since, summary);
}

}  // namespace

void RegisterBitmapCommands(CommandRegistry* r) {
  using V = std::vector<std::string_view>;
  const V w_slow{"write", "bitmap", "slow"}, r_slow{"read", "bitmap", "slow"};
  const V r_fast{"read", "bitmap", "fast"};
  r->RegisterShard(Spec("setbit", 4, kCmdWrite | kCmdDenyOom, w_slow, "2.2.0",
              "Sets or clears the bit at offset of the string value. Creates the key if it "
              "doesn't exist."), CmdSetBit);
  r->RegisterShard(Spec("getbit", 3, kCmdReadOnly | kCmdFast, r_fast, "2.2.0",
              "Returns a bit value by offset."), CmdGetBit);
  r->RegisterShard(Spec("bitcount", -2, kCmdReadOnly, r_slow, "2.6.0",
              "Counts the number of set bits (population counting) in a string."), CmdBitCount);
  r->RegisterShard(Spec("bitpos", -3, kCmdReadOnly, r_slow, "2.8.7",
              "Finds the first set (1) or clear (0) bit in a string."), CmdBitPos);
  r->RegisterShard(Spec("bitfield", -2, kCmdWrite | kCmdDenyOom, w_slow, "3.2.0",
              "Performs arbitrary bitfield integer operations on strings."), CmdBitField<false>);
  r->RegisterShard(Spec("bitfield_ro", -2, kCmdReadOnly | kCmdFast, r_fast, "6.0.0",
              "Performs arbitrary read-only bitfield integer operations on strings."),
      CmdBitField<true>);
  CommandSpec bitop = Spec("bitop", -4, kCmdWrite | kCmdDenyOom, w_slow, "2.6.0",
                           "Performs bitwise operations on multiple strings, and stores the "
                           "result.");
  bitop.first_key = 2;
  bitop.last_key = -1;
  r->RegisterShard(std::move(bitop), CmdBitOp, CmdBitOpMulti);
}

}  // namespace dashkv
