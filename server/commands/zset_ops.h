// Helpers of the sorted-set command family: range specifications (ZRANGE and its older forms),
// score replies, the numkeys/WEIGHTS/AGGREGATE syntax of ZUNION & co., and storing results.
// Thread: Op* functions run on the owning shard's thread; coroutines on the connection's thread.
#pragma once

#include <utility>  // before asio: awaitable.hpp uses std::exchange

#include <boost/asio/awaitable.hpp>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "server/cmd_context.h"
#include "server/commands/set_ops.h"
#include "server/storage/db_slice.h"
#include "server/values/zset_algebra.h"
#include "server/values/zset_value.h"

namespace dashkv {

using ScoredMembers = std::vector<std::pair<std::string, double>>;

// Sends a score: RESP3 double / RESP2 bulk, in the shortest round-trip form (Redis 7.2).
void SendScore(io::ReplyBuilder& rb, double score);
// Sends members, with scores when `withscores`: RESP3 [[m, s], ...], RESP2 [m, s, m, s ...].
// With `nested` the pairs are arrays in RESP2 too (ZMPOP).
void SendScoredMembers(io::ReplyBuilder& rb, const ScoredMembers& items, bool withscores,
                       bool nested = false);

// Pops up to `count` elements from the low (or, with `max`, high) end of the zset at `it` (a
// mutable lookup of `key`), raising `zpopmin` / `zpopmax`; deletes the key when it empties
// (raising `del`). REQUIRES: `it` holds a sorted set; count > 0.
ScoredMembers PopElements(DbSlice& db, PrimeIterator it, std::string_view key, uint64_t count,
                          bool max);

// What a ZRANGE-family command selects.
struct RangeSpec {
  enum class By : uint8_t { kRank, kScore, kLex };
  By by = By::kRank;
  bool reverse = false;
  bool withscores = false;
  int64_t offset = 0;
  int64_t count = -1;  // LIMIT count; < 0: all
  bool has_limit = false;
  std::string_view start, stop;  // as given (ranks, scores or lex bounds; reversed with REV)
};

// Which old-style command is being parsed.
enum class RangeCommand : uint8_t {
  kZRange, kZRangeStore, kZRevRange, kZRangeByScore, kZRevRangeByScore, kZRangeByLex,
  kZRevRangeByLex,
};
// Parses the arguments after the key(s) (`first` = index of start/min).
OpResult<RangeSpec> ParseRangeSpec(CmdArgs args, size_t first, RangeCommand cmd);

// Returns the ascending rank interval [first, last) selected by `spec` in `z` (LIMIT applied),
// or a parse error of the range (kNotAnInteger, kMinMaxNotFloat, kLexRangeInvalid).
struct RankWindow {
  uint64_t first = 0;
  uint64_t last = 0;
};
OpResult<RankWindow> SelectRanks(const ZsetValue& z, const RangeSpec& spec);
// Validates the range bounds of `spec` without a set (errors come before the key lookup).
OpStatus CheckRangeBounds(const RangeSpec& spec);
// Copies the elements selected by `spec` (in reply order).
ScoredMembers CollectRange(const ZsetValue& z, const RangeSpec& spec);

// Replaces `key` by a sorted set of `items`, raising `event` (zunionstore ...); an empty result
// deletes the key instead (raising `del` if it existed), as Redis 7.0.
OpResult<StoreResult> StoreZset(DbSlice& db, std::string_view key, const ScoredMembers& items,
                                const ZsetLimits& limits, std::string_view event,
                                int64_t now_ms);

// numkeys key [key ...] [WEIGHTS w ...] [AGGREGATE SUM|MIN|MAX] [WITHSCORES]
struct ZAlgebraArgs {
  size_t numkeys = 0;
  size_t first_key = 0;  // argument index of the first source key
  std::vector<double> weights;
  Aggregate agg = Aggregate::kSum;
  bool withscores = false;
};
// Parses ZUNION/ZINTER/ZDIFF (store: the STORE forms, numkeys at args[2]). `allow_weights` is
// false for ZDIFF. Returns kNoInputKey for numkeys < 1 (send NoInputKeyText).
OpResult<ZAlgebraArgs> ParseZAlgebra(CmdArgs args, bool store, bool allow_weights);

// Looks up args[first..last] as operands in `db`: kWrongType unless zsets or sets.
OpResult<std::vector<ZOperand>> LocalZOperands(DbSlice& db, CmdArgs args, size_t first,
                                               size_t last, int64_t now_ms);
// Copies the elements of args[first..last] out of their shards (one hop per shard).
boost::asio::awaitable<OpResult<std::vector<std::unique_ptr<GatheredZset>>>> GatherZsets(
    ConnCmdContext& ctx, CmdArgs args, size_t first, size_t last);
std::vector<ZOperand> ZOperandsOf(const std::vector<std::unique_ptr<GatheredZset>>& sets);

}  // namespace dashkv
