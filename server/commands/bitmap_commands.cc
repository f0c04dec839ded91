// Bitmap commands over string values: SETBIT, GETBIT, BITCOUNT, BITPOS, BITFIELD and
// BITFIELD_RO (Redis 7.0 semantics). All are single-key shard commands.
#include <vector>

#include "server/cmd_context.h"
#include "server/command_registry.h"
#include "server/commands/string_ops.h"

namespace dashkv {

namespace {

// Parses a bit offset (0 .. 8 * 512MB - 1); BITFIELD also takes "#n", meaning n * bits.
OpResult<uint64_t> ParseBitOffset(std::string_view s, unsigned hash_bits = 0) {
  bool hash = hash_bits > 0 && !s.empty() && s[0] == '#';
  std::optional<int64_t> v = ParseStrictInt(hash ? s.substr(1) : s);
  if (!v) return OpStatus::kBitOffset;
  int64_t offset = *v;
  if (hash && __builtin_mul_overflow(offset, static_cast<int64_t>(hash_bits), &offset)) {
    return OpStatus::kBitOffset;
  }
  if (offset < 0 || (offset >> 3) >= kMaxStringBytes) return OpStatus::kBitOffset;
  return static_cast<uint64_t>(offset);
}

// Looks up a string for reading; a missing key reads as the empty string.
OpResult<std::string_view> ReadBits(ShardCmdContext& ctx, std::string_view key,
                                    std::string* scratch) {
  OpResult<PrimeIterator> res = ctx.db.FindOfType(key, ObjType::kString, ctx.now_ms);
  if (!res) {
    if (res.status() == OpStatus::kKeyNotFound) return std::string_view{};
    return res.status();
  }
  return (*res)->second.GetString(scratch);
}

// SETBIT key offset value
void CmdSetBit(CmdArgs args, ShardCmdContext& ctx) {
  OpResult<uint64_t> offset = ParseBitOffset(args[2]);
  if (!offset) return SendOpError(ctx, offset.status());
  std::optional<int64_t> on = ParseStrictInt(args[3]);
  if (!on || (*on != 0 && *on != 1)) return SendOpError(ctx, OpStatus::kBitValue);
  OpResult<DbSlice::AddResult> res = FindOrAddString(ctx.db, args[1], ctx.now_ms);
  if (!res) return SendOpError(ctx, res.status());
  CompactObj& value = res->it->second;
  std::string s = res->inserted ? std::string() : CopyString(value);
  bool old = SetBitAt(s, *offset, *on == 1);
  value.SetString(s);
  value.MarkRaw();
  ctx.rb.SendLong(old ? 1 : 0);
}

// GETBIT key offset
void CmdGetBit(CmdArgs args, ShardCmdContext& ctx) {
  OpResult<uint64_t> offset = ParseBitOffset(args[2]);
  if (!offset) return SendOpError(ctx, offset.status());
  std::string scratch;
  OpResult<std::string_view> s = ReadBits(ctx, args[1], &scratch);
  if (!s) return SendOpError(ctx, s.status());
  ctx.rb.SendLong(GetBitAt(*s, *offset) ? 1 : 0);
}

// A [start end [BYTE|BIT]] range of BITCOUNT/BITPOS, resolved to bit positions.
struct BitSpan {
  uint64_t first;
  uint64_t last;  // inclusive
};

// Resolves start/end in bytes or bits over a string of `size` bytes; nullopt when empty.
std::optional<BitSpan> ResolveSpan(int64_t start, int64_t end, bool bit_unit, size_t size,
                                   bool reject_negative_inversion) {
  int64_t total = static_cast<int64_t>(size) * (bit_unit ? 8 : 1);
  std::optional<IndexRange> r = NormalizeRange(start, end, total, reject_negative_inversion);
  if (!r) return std::nullopt;
  if (bit_unit) return BitSpan{uint64_t(r->start), uint64_t(r->end)};
  return BitSpan{uint64_t(r->start) * 8, uint64_t(r->end) * 8 + 7};
}

// Parses BYTE|BIT; records kSyntaxError for anything else.
bool ParseBitUnit(ArgParser& parser) {
  if (parser.Check("BIT")) return true;
  if (!parser.Check("BYTE")) parser.SetError(OpStatus::kSyntaxError);
  return false;
}

// BITCOUNT key [start end [BYTE|BIT]]
void CmdBitCount(CmdArgs args, ShardCmdContext& ctx) {
  OpResult<PrimeIterator> found = ctx.db.FindOfType(args[1], ObjType::kString, ctx.now_ms);
  if (!found) {  // a missing key counts 0 whatever the other arguments are
    if (found.status() == OpStatus::kKeyNotFound) return ctx.rb.SendLong(0);
    return SendOpError(ctx, found.status());
  }
  std::string scratch;
  std::string_view s = (*found)->second.GetString(&scratch);
  int64_t start = 0, end = -1;
  bool bit_unit = false;
  if (args.size() != 2) {
    if (args.size() != 4 && args.size() != 5) return SendOpError(ctx, OpStatus::kSyntaxError);
    ArgParser parser(args, 2);
    start = parser.NextInt();
    end = parser.NextInt();
    if (args.size() == 5) bit_unit = ParseBitUnit(parser);
    if (parser.HasError()) return SendOpError(ctx, parser.error());
  }
  std::optional<BitSpan> span = ResolveSpan(start, end, bit_unit, s.size(), true);
  ctx.rb.SendLong(span ? CountBits(s, span->first, span->last) : 0);
}

// BITPOS key bit [start [end [BYTE|BIT]]]
void CmdBitPos(CmdArgs args, ShardCmdContext& ctx) {
  std::optional<int64_t> bit = ParseStrictInt(args[2]);
  if (!bit) return SendOpError(ctx, OpStatus::kNotAnInteger);
  if (*bit != 0 && *bit != 1) return SendOpError(ctx, OpStatus::kBitArgument);
  std::string scratch;
  OpResult<PrimeIterator> found = ctx.db.FindOfType(args[1], ObjType::kString, ctx.now_ms);
  if (!found) {
    if (found.status() == OpStatus::kKeyNotFound) return ctx.rb.SendLong(*bit ? -1 : 0);
    return SendOpError(ctx, found.status());
  }
  std::string_view s = (*found)->second.GetString(&scratch);
  if (args.size() > 6) return SendOpError(ctx, OpStatus::kSyntaxError);
  ArgParser parser(args, 3);
  int64_t start = args.size() > 3 ? parser.NextInt() : 0;
  bool bit_unit = false;
  if (args.size() == 6) {
    ArgParser unit(args, 5);
    bit_unit = ParseBitUnit(unit);
    if (unit.HasError()) parser.SetError(unit.error());
  }
  bool end_given = args.size() > 4;
  int64_t end = end_given ? parser.NextInt() : -1;
  if (parser.HasError()) return SendOpError(ctx, parser.error());
  std::optional<BitSpan> span = ResolveSpan(start, end, bit_unit, s.size(), false);
  if (!span) return ctx.rb.SendLong(-1);
  int64_t pos = FindBit(s, *bit == 1, span->first, span->last);
  // Without an explicit end, the string counts as padded with zero bits on the right.
  if (pos == -1 && *bit == 0 && !end_given) pos = static_cast<int64_t>(span->last + 1);
  ctx.rb.SendLong(pos);
}

enum class FieldOpKind : uint8_t { kGet, kSet, kIncrBy };

struct FieldOp {
  FieldOpKind kind;
  bool is_signed;
  unsigned bits;
  uint64_t offset;
  int64_t value;  // SET value or INCRBY increment
  BitOverflow overflow;
};

struct FieldProgram {
  std::vector<FieldOp> ops;
  bool writes = false;
  uint64_t bytes_needed = 0;  // string length the writes need
};

// Parses a bitfield type: i1..i64 or u1..u63.
OpStatus ParseFieldType(std::string_view s, FieldOp* op) {
  if (s.empty() || (s[0] != 'i' && s[0] != 'u')) return OpStatus::kBitfieldType;
  op->is_signed = s[0] == 'i';
  std::optional<int64_t> bits = ParseStrictInt(s.substr(1));
  if (!bits || *bits < 1 || *bits > (op->is_signed ? 64 : 63)) return OpStatus::kBitfieldType;
  op->bits = static_cast<unsigned>(*bits);
  return OpStatus::kOk;
}

// Parses the GET/SET/INCRBY/OVERFLOW list of BITFIELD (args[2..]).
OpStatus ParseFieldProgram(CmdArgs args, FieldProgram* prog) {
  ArgParser parser(args, 2);
  BitOverflow overflow = BitOverflow::kWrap;
  while (parser.HasNext()) {
    size_t rest = parser.remaining() - 1;  // arguments after the sub-command
    FieldOp op{};
    if (parser.Check("OVERFLOW") && rest >= 1) {
      if (parser.Check("WRAP")) overflow = BitOverflow::kWrap;
      else if (parser.Check("SAT")) overflow = BitOverflow::kSat;
      else if (parser.Check("FAIL")) overflow = BitOverflow::kFail;
      else return OpStatus::kBitfieldOverflow;
      continue;
    }
    if (parser.Check("GET") && rest >= 2) op.kind = FieldOpKind::kGet;
    else if (parser.Check("SET") && rest >= 3) op.kind = FieldOpKind::kSet;
    else if (parser.Check("INCRBY") && rest >= 3) op.kind = FieldOpKind::kIncrBy;
    else return OpStatus::kSyntaxError;
    if (OpStatus st = ParseFieldType(parser.Next(), &op); st != OpStatus::kOk) return st;
    OpResult<uint64_t> offset = ParseBitOffset(parser.Next(), op.bits);
    if (!offset) return offset.status();
    op.offset = *offset;
    op.overflow = overflow;
    if (op.kind != FieldOpKind::kGet) {
      op.value = parser.NextInt();
      if (parser.HasError()) return parser.error();
      prog->writes = true;
      prog->bytes_needed = std::max(prog->bytes_needed, (op.offset + op.bits - 1) / 8 + 1);
    }
    prog->ops.push_back(op);
  }
  return OpStatus::kOk;
}

// Reads a field as a (sign-extended) integer.
int64_t ReadField(std::string_view s, const FieldOp& op) {
  uint64_t raw = GetBitsAt(s, op.offset, op.bits);
  if (op.is_signed && op.bits < 64 && ((raw >> (op.bits - 1)) & 1)) {
    raw |= ~((uint64_t{1} << op.bits) - 1);
  }
  return static_cast<int64_t>(raw);
}

// Runs one op over `s`; returns its reply value, nullopt when OVERFLOW FAIL refused it.
// REQUIRES: `s` is long enough for writes (FieldProgram::bytes_needed).
std::optional<int64_t> RunFieldOp(std::string& s, const FieldOp& op) {
  int64_t old = ReadField(s, op);
  if (op.kind == FieldOpKind::kGet) return old;
  __int128 target = op.kind == FieldOpKind::kIncrBy ? __int128{old} + op.value
                    : op.is_signed                  ? __int128{op.value}
                                  : __int128{static_cast<uint64_t>(op.value)};
  std::optional<int64_t> stored = FitBitfield(target, op.bits, op.is_signed, op.overflow);
  if (!stored) return std::nullopt;
  SetBitsAt(s, op.offset, op.bits, static_cast<uint64_t>(*stored));
  return op.kind == FieldOpKind::kSet ? old : *stored;
}

void SendFieldResults(ShardCmdContext& ctx, const std::vector<std::optional<int64_t>>& results) {
  ctx.rb.StartArray(results.size());
  for (const auto& r : results) r ? ctx.rb.SendLong(*r) : ctx.rb.SendNull();
}

// BITFIELD key [GET type offset | [OVERFLOW WRAP|SAT|FAIL] SET type offset value |
//     [OVERFLOW WRAP|SAT|FAIL] INCRBY type offset increment ...]
// BITFIELD_RO key [GET type offset ...]
template <bool kReadOnlyCmd>
void CmdBitField(CmdArgs args, ShardCmdContext& ctx) {
  FieldProgram prog;
  if (OpStatus st = ParseFieldProgram(args, &prog); st != OpStatus::kOk) {
    return SendOpError(ctx, st);
  }
  if (kReadOnlyCmd && prog.writes) return SendOpError(ctx, OpStatus::kBitfieldReadOnly);
  std::vector<std::optional<int64_t>> results;
  results.reserve(prog.ops.size());
  if (!prog.writes) {
    std::string scratch;
    OpResult<std::string_view> s = ReadBits(ctx, args[1], &scratch);
    if (!s) return SendOpError(ctx, s.status());
    for (const FieldOp& op : prog.ops) results.push_back(ReadField(*s, op));
    return SendFieldResults(ctx, results);
  }
  OpResult<DbSlice::AddResult> res = FindOrAddString(ctx.db, args[1], ctx.now_ms);
  if (!res) return SendOpError(ctx, res.status());
  CompactObj& value = res->it->second;
  std::string s = res->inserted ? std::string() : CopyString(value);
  if (s.size() < prog.bytes_needed) s.resize(prog.bytes_needed, '\0');  // even if all FAIL
  for (const FieldOp& op : prog.ops) results.push_back(RunFieldOp(s, op));
  value.SetString(s);
  value.MarkRaw();
  SendFieldResults(ctx, results);
}

CommandSpec Spec(std::string name, int arity, uint32_t flags, std::vector<std::string_view> cats,
                 std::string_view since, std::string_view summary) {
  CommandSpec s;
  s.name = std::move(name);
  s.arity = arity;
  s.flags = flags;
  s.first_key = s.last_key = s.key_step = 1;
  s.categories = std::move(cats);
  s.since = since;
  s.summary = summary;
  s.group = "bitmap";
  s.kind = HandlerKind::kShard;
  return s;
}

void Add(CommandRegistry* r, CommandSpec s, ShardHandler h) {
  s.shard_handler = h;
  r->Register(std::move(s));
}

}  // namespace

void RegisterBitmapCommands(CommandRegistry* r) {
  using V = std::vector<std::string_view>;
  const V w_slow{"write", "bitmap", "slow"}, r_slow{"read", "bitmap", "slow"};
  const V r_fast{"read", "bitmap", "fast"};
  Add(r, Spec("setbit", 4, kCmdWrite | kCmdDenyOom, w_slow, "2.2.0",
              "Sets or clears the bit at offset of the string value. Creates the key if it "
              "doesn't exist."), CmdSetBit);
  Add(r, Spec("getbit", 3, kCmdReadOnly | kCmdFast, r_fast, "2.2.0",
              "Returns a bit value by offset."), CmdGetBit);
  Add(r, Spec("bitcount", -2, kCmdReadOnly, r_slow, "2.6.0",
              "Counts the number of set bits (population counting) in a string."), CmdBitCount);
  Add(r, Spec("bitpos", -3, kCmdReadOnly, r_slow, "2.8.7",
              "Finds the first set (1) or clear (0) bit in a string."), CmdBitPos);
  Add(r, Spec("bitfield", -2, kCmdWrite | kCmdDenyOom, w_slow, "3.2.0",
              "Performs arbitrary bitfield integer operations on strings."), CmdBitField<false>);
  Add(r, Spec("bitfield_ro", -2, kCmdReadOnly | kCmdFast, r_fast, "6.0.0",
              "Performs arbitrary read-only bitfield integer operations on strings."),
      CmdBitField<true>);
}

}  // namespace dashkv
