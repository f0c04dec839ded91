// SWAPDB index1 index2: the two databases trade their contents on every shard at once (Redis
// 7.0). It locks every shard whole (exclusive), so no command sees one shard swapped and
// another not. Through the change seam (Shard::SwapDbs): WATCHed keys that exist in either
// database are dirtied, and clients blocked on keys of either database are checked for data
// (served when the swap's locks are released). As in Redis, it raises no keyspace event and
// connections keep their selected index.
#include "server/cmd_args.h"
#include "server/cmd_context.h"
#include "server/command_registry.h"
#include "server/config.h"
#include "server/storage/shard_set.h"

namespace dashkv {
namespace {

using boost::asio::awaitable;

awaitable<void> CmdSwapDb(CmdArgs args, ConnCmdContext& ctx) {
  std::optional<int64_t> first = ParseInt64(args[1]);
  if (!first) co_return ctx.rb.SendError("ERR invalid first DB index");
  std::optional<int64_t> second = ParseInt64(args[2]);
  if (!second) co_return ctx.rb.SendError("ERR invalid second DB index");
  ShardSet& ss = ctx.shard_set();
  const int64_t dbs = ss.num_dbs();
  if (*first < 0 || *first >= dbs || *second < 0 || *second >= dbs) {
    co_return ctx.SendStatus(OpStatus::kInvalidDbIndex);
  }
  const auto db1 = static_cast<unsigned>(*first);
  const auto db2 = static_cast<unsigned>(*second);
  if (db1 != db2) co_await ss.AwaitAll([&](Shard& shard) { shard.SwapDbs(db1, db2); });
  ctx.rb.SendOk();
}

}  // namespace

void RegisterSwapDbCommand(CommandRegistry* r) {
  CommandSpec s = MakeSpec("swapdb", 3, kCmdWrite | kCmdFast, 0, 0,
                           {"keyspace", "write", "fast", "dangerous"}, "server", "4.0.0",
                           "Swaps two Redis databases.");
  s.kind = HandlerKind::kCoord;
  s.coord_handler = CmdSwapDb;
  s.tx_scope = TxScope::kAllExclusive;
  r->Register(std::move(s));
}

}  // namespace dashkv
