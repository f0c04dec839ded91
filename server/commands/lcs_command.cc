// LCS key1 key2 [LEN] [IDX] [MINMATCHLEN len] [WITHMATCHLEN]: the longest common subsequence of
// two string values (core/lcs.h), with Redis 7's options, replies and error texts. Keys on one
// shard run there; keys on two shards are copied in one hop and compared on the connection's
// thread.
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/lcs.h"
#include "server/cmd_args.h"
#include "server/cmd_context.h"
#include "server/command_registry.h"
#include "server/commands/string_ops.h"
#include "server/tx/multi_key.h"
#include "server/config.h"
#include "server/storage/shard_set.h"

namespace dashkv {
namespace {

using boost::asio::awaitable;

constexpr std::string_view kNotStringsText = "ERR The specified keys must contain string values";

struct LcsOptions {
  bool len = false;
  bool idx = false;
  bool with_match_len = false;
  uint64_t min_match_len = 0;
  OpStatus error = OpStatus::kOk;  // reported after the operands' types, as Redis does
};

LcsOptions ParseLcsOptions(CmdArgs args) {
  LcsOptions o;
  ArgParser p(args, 3);
  while (p.HasNext()) {
    if (p.Check("LEN")) {
      o.len = true;
    } else if (p.Check("IDX")) {
      o.idx = true;
    } else if (p.Check("WITHMATCHLEN")) {
      o.with_match_len = true;
    } else if (p.Check("MINMATCHLEN")) {
      const int64_t n = p.NextInt();  // none left: kSyntaxError, as Redis
      o.min_match_len = n < 0 ? 0 : static_cast<uint64_t>(n);  // Redis takes a negative as 0
    } else {
      p.SetError(OpStatus::kSyntaxError);
    }
  }
  o.error = p.error();
  return o;
}

// One operand: a missing key reads as "", a value of another type is refused (nullopt).
std::optional<std::string> LcsOperand(DbSlice& db, std::string_view key, int64_t now_ms) {
  OpResult<PrimeIterator> res = db.FindReadOnlyOfType(key, ObjType::kString, now_ms);
  if (res) return CopyString((*res)->second);
  if (res.status() == OpStatus::kWrongType) return std::nullopt;
  return std::string();
}

void ReplyLcs(io::ReplyBuilder& rb, const LcsOptions& o, const std::optional<std::string>& a,
              const std::optional<std::string>& b, int64_t table_limit) {
  if (!a || !b) return rb.SendError(kNotStringsText);
  if (o.error != OpStatus::kOk) return SendStatus(rb, o.error);
  if (o.idx && o.len) {
    return rb.SendError("ERR If you want both the length and indexes, please just use IDX.");
  }
  constexpr size_t kMaxLen = std::numeric_limits<uint32_t>::max() - 1;
  if (a->size() >= kMaxLen || b->size() >= kMaxLen) {
    return rb.SendError("ERR String too long for LCS");
  }
  if (LcsTableBytes(a->size(), b->size()) > static_cast<uint64_t>(table_limit)) {
    return rb.SendError(
        "ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len");
  }
  std::optional<LcsResult> r = ComputeLcs(*a, *b, o.idx ? o.min_match_len : 0);
  if (!r) {
    return rb.SendError("ERR Insufficient memory, failed allocating transient memory for LCS");
  }
  if (o.len) return rb.SendLong(static_cast<int64_t>(r->sequence.size()));
  if (!o.idx) return rb.SendBulk(r->sequence);
  rb.StartMap(2);
  rb.SendBulk("matches");
  rb.StartArray(r->matches.size());
  for (const LcsMatch& m : r->matches) {
    rb.StartArray(o.with_match_len ? 3 : 2);
    rb.StartArray(2);
    rb.SendLong(m.a_start);
    rb.SendLong(m.a_end);
    rb.StartArray(2);
    rb.SendLong(m.b_start);
    rb.SendLong(m.b_end);
    if (o.with_match_len) rb.SendLong(m.length());
  }
  rb.SendBulk("len");
  rb.SendLong(static_cast<int64_t>(r->sequence.size()));
}

// Both keys on this shard.
void CmdLcsShard(CmdArgs args, ShardCmdContext& ctx) {
  const LcsOptions o = ParseLcsOptions(args);
  std::optional<std::string> a = LcsOperand(ctx.db, args[1], ctx.now_ms);
  std::optional<std::string> b = LcsOperand(ctx.db, args[2], ctx.now_ms);
  ReplyLcs(ctx.rb, o, a, b, ctx.config.proto_max_bulk_len.load(std::memory_order_relaxed));
}

// The keys on two shards: one hop copies both values (one_hop: it also releases the locks).
awaitable<void> CmdLcsMulti(CmdArgs args, ConnCmdContext& ctx) {
  const LcsOptions o = ParseLcsOptions(args);
  ShardSet& ss = ctx.shard_set();
  KeysByShard groups(ss, args, 1, 2);
  std::optional<std::string> values[3];
  const unsigned db = ctx.state.db;
  const int64_t now = ctx.now_ms;
  co_await OnlyHop(ss, ctx.locks, groups.shards, [&](Shard& shard) {
    DbSlice& slice = shard.db(db);
    for (uint32_t i : groups.indexes[shard.index()]) values[i] = LcsOperand(slice, args[i], now);
  });
  ReplyLcs(ctx.rb, o, values[1], values[2],
           ctx.config().proto_max_bulk_len.load(std::memory_order_relaxed));
}

}  // namespace

void RegisterLcsCommand(CommandRegistry* r) {
  r->RegisterShard(
      OneHop(MakeSpec("lcs", -3, kCmdReadOnly, 1, 2, {"read", "string", "slow"}, "string",
                      "7.0.0", "Finds the longest common substring.")),
      CmdLcsShard, CmdLcsMulti);
}

}  // namespace dashkv
