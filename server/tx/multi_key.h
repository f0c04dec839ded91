// Helpers for commands over several keys: group the keys by owning shard, run one hop per shard
// (in parallel), and combine the per-key results in argument order.
// Thread: coroutines on the connection's thread; the per-key functions run on the shards.
#pragma once

#include <utility>  // before asio: awaitable.hpp uses std::exchange

#include <boost/asio/awaitable.hpp>
#include <cstdint>
#include <string_view>
#include <vector>

#include "server/cmd_context.h"
#include "server/conn_state.h"
#include "server/config.h"
#include "server/storage/shard_set.h"
#include "server/tx/multi_part.h"
#include "server/tx/transaction.h"

namespace dashkv {

// Keys of one command grouped by shard: for each shard, the argument indexes it owns.
struct KeysByShard {
  std::vector<std::vector<uint32_t>> indexes;  // per shard, ascending argument indexes
  std::vector<unsigned> shards;                // shards that own at least one key

  // Groups args[first], args[first+step], ... up to args[last] (inclusive).
  KeysByShard(const ShardSet& shard_set, CmdArgs args, size_t first, size_t last,
              size_t step = 1);
};

// Runs fn(db, key, now_ms) -> int64_t on the owning shard of every key args[first..last] and
// returns the sum of the results. One hop (OnlyHop: fits one_hop commands).
template <typename Fn>
boost::asio::awaitable<int64_t> SumOverKeys(ConnCmdContext& ctx, CmdArgs args, size_t first,
                                            size_t last, Fn fn) {
  ShardSet& ss = ctx.shard_set();
  KeysByShard groups(ss, args, first, last);
  std::vector<int64_t> sums(ss.size(), 0);
  unsigned db = ctx.state.db;
  int64_t now = ctx.now_ms;
  co_await OnlyHop(ss, ctx.locks, groups.shards, [&](Shard& shard) {
    DbSlice& slice = shard.db(db);
    int64_t sum = 0;
    for (uint32_t i : groups.indexes[shard.index()]) sum += fn(slice, args[i], now);
    sums[shard.index()] = sum;
  });
  int64_t total = 0;
  for (int64_t s : sums) total += s;
  co_return total;
}

// The part of a SumOverKeys command in a multi-shard group (server/tx/multi_part.h): the sum
// of Fn(db, key, now_ms) over its keys on the shard.
template <int64_t (*Fn)(DbSlice&, std::string_view, int64_t)>
void SumPart(CmdArgs args, std::span<const uint32_t> keys, ShardCmdContext& ctx,
             PartSink& sink) {
  int64_t sum = 0;
  for (uint32_t i : keys) sum += Fn(ctx.db, args[i], ctx.now_ms);
  sink.set_word(sum);
}

// Replies the sum of the parts' words.
void SumCombine(CmdArgs args, PartReader& parts, io::ReplyBuilder& out);

}  // namespace dashkv
