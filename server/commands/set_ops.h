// Helpers shared by the set and sorted-set command families: SCAN-style arguments, numkeys
// parsing, the set operations that touch the keyspace (store, move), and the cross-shard gather
// of set members.
// Thread: Op* functions run on the owning shard's thread; coroutines on the connection's thread.
#pragma once

#include <utility>  // before asio: awaitable.hpp uses std::exchange

#include <boost/asio/awaitable.hpp>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "server/cmd_context.h"
#include "server/storage/db_slice.h"
#include "server/values/set_algebra.h"
#include "server/values/set_value.h"
#include "server/storage/shard_set.h"

namespace dashkv {

// Sends `missing_value` for kKeyNotFound, else the error of `status`.
void SendLongOrError(ShardCmdContext& ctx, OpStatus status, int64_t missing_value);

// Parsed SSCAN / ZSCAN arguments (key cursor [MATCH pattern] [COUNT count]).
struct ScanArgs {
  uint64_t cursor = 0;
  size_t count = 10;
  std::string_view pattern;  // empty: no MATCH (or MATCH *)

  bool Matches(std::string_view m) const;
};
// Parses args[2..]: kInvalidCursor, kSyntaxError (COUNT < 1, unknown option), kNotAnInteger.
OpResult<ScanArgs> ParseScanArgs(CmdArgs args);
// Sends [cursor, [items...]].
void SendScanReply(io::ReplyBuilder& rb, uint64_t cursor, const std::vector<std::string>& items);

// Returns the shard owning every key args[first..last], or nullopt if they span shards.
std::optional<unsigned> SingleShardOfRange(const ShardSet& ss, CmdArgs args, size_t first,
                                           size_t last);

// numkeys key [key ...] [LIMIT limit] of SINTERCARD / ZINTERCARD.
struct NumKeysArgs {
  size_t numkeys = 0;
  size_t limit = 0;  // 0: none
};
OpResult<NumKeysArgs> ParseSInterCard(CmdArgs args);
// Parses args[1] as numkeys for a command whose keys follow it: kNumkeysNotPositive when < 1
// (REQUIRES the caller to map it for ZUNION & co.), kNumkeysTooMany when beyond the arguments.
OpResult<size_t> ParseNumKeys(CmdArgs args, size_t numkeys_index);

// Returns `count` distinct random members (all of them when count >= size).
std::vector<std::string> DistinctRandomMembers(const SetValue& set, uint64_t count);

// Sends `members` as a RESP3 set (array in RESP2).
void SendMemberSet(io::ReplyBuilder& rb, const std::vector<std::string>& members);

// What a STORE command did to its destination.
struct StoreResult {
  int64_t size = 0;      // the new size (0: the key is gone)
  bool changed = false;  // false: an empty result where no key was (nothing to tell WATCH)
};
// Replaces `key` by a set of `members`, raising `event` (sinterstore ...); an empty result
// deletes the key instead (raising `del` if it existed), as Redis 7.0.
OpResult<StoreResult> StoreSet(DbSlice& db, std::string_view key,
                               const std::vector<std::string>& members, const SetLimits& limits,
                               std::string_view event, int64_t now_ms);
// Adds one member to the set at `key`, creating it, and raises `sadd` if it was new. Returns
// whether it was new; a set that held it already is left untouched (no change is told).
OpResult<bool> OpSAddOne(DbSlice& db, std::string_view key, std::string_view member,
                         const SetLimits& limits, int64_t now_ms);
// SMOVE with both keys in `db`: 1 if moved (or present with src == dst), 0 otherwise. Raises
// `srem` (and `del`) on the source and `sadd` on the destination when it moved.
OpResult<int64_t> OpSMove(DbSlice& db, std::string_view src, std::string_view dst,
                          std::string_view member, const SetLimits& limits, int64_t now_ms);
// The source half of a cross-shard SMOVE: checks the source type, then `dst_status` (the
// destination's type check), then removes `member` from `src` (raising `srem`, and `del` when
// it empties); returns 1 if it did.
OpResult<int64_t> OpSRemoveChecked(DbSlice& db, std::string_view src, std::string_view member,
                                   OpStatus dst_status, int64_t now_ms);

// Copies the members of the sets args[first..last] out of their shards (one hop per shard);
// a missing key gives nullptr. kWrongType if any key holds another type.
boost::asio::awaitable<OpResult<std::vector<std::unique_ptr<GatheredSet>>>> GatherSets(
    ConnCmdContext& ctx, CmdArgs args, size_t first, size_t last);
// Returns operands over gathered sets (missing for nullptr).
std::vector<SetOperand> OperandsOf(const std::vector<std::unique_ptr<GatheredSet>>& sets);
// StoreSet on the shard owning `key`.
boost::asio::awaitable<OpResult<StoreResult>> StoreSetRemote(
    ConnCmdContext& ctx, std::string_view key, const std::vector<std::string>& members,
    std::string_view event);

}  // namespace dashkv
