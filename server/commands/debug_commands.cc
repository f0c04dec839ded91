// DEBUG (POPULATE, OBJECT, SET-ACTIVE-EXPIRE, SLEEP, HELP) and the subcommand table of OBJECT (whose handler lives with the keyspace commands in
// generic_commands.cc).
#include <unistd.h>

#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdlib>

#include "core/base/logging.h"
#include "core/str_util.h"
#include "io/connection.h"
#include "io/engine.h"
#include "server/cmd_context.h"
#include "server/tracking/tracking_hub.h"
#include "server/command_registry.h"
#include "server/values/list_value.h"
#include "server/config.h"
#include "server/conn_state.h"
#include "server/persistence/snapshot_manager.h"
#include "server/storage/shard_set.h"
#include "server/tx/transaction.h"

namespace dashkv {

namespace {

using boost::asio::awaitable;

// Length of the RDB encoding of a string value (without LZF compression).
int64_t RdbStringLength(const CompactObj& value) {
  int64_t v;
  if (value.TryGetInt(&v) && v >= INT32_MIN && v <= INT32_MAX) {
    return v >= -128 && v <= 127 ? 2 : v >= -32768 && v <= 32767 ? 3 : 5;
  }
  int64_t n = static_cast<int64_t>(value.StringSize());
  int64_t header = n < 64 ? 1 : n < 16384 ? 2 : n <= UINT32_MAX ? 5 : 9;
  return header + n;
}

// Redis's one error for an unknown DEBUG subcommand or a wrong number of arguments.
void SendDebugUsage(ConnCmdContext& ctx, std::string_view sub) {
  ctx.rb.SendError(SubcommandSyntaxText("DEBUG", sub));
}

// Returns whether `count` keys with values of `size` bytes could fit in maxmemory (when set) or
// else in the machine's memory. Each key takes at least its slot (two 16-byte objects) plus the
// value bytes beyond the 15 kept inline, so a refused count could never have been populated.
bool PopulateMayFit(int64_t count, int64_t size, int64_t maxmemory) {
  uint64_t limit = maxmemory > 0 ? static_cast<uint64_t>(maxmemory)
                                 : static_cast<uint64_t>(sysconf(_SC_PHYS_PAGES)) *
                                       static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  uint64_t per_key = 2 * sizeof(CompactObj) + (size > 15 ? static_cast<uint64_t>(size) : 0);
  return static_cast<uint64_t>(count) <= limit / per_key;
}

// DEBUG POPULATE count [prefix] [size]
awaitable<void> DebugPopulate(CmdArgs args, ConnCmdContext& ctx) {
  std::optional<int64_t> count = ParseInt64(args[2]);
  if (!count || *count < 0) {
    co_return ctx.SendStatus(OpStatus::kNotPositive);
  }
  std::string_view prefix = args.size() > 3 ? args[3] : "key";
  int64_t size = 0;
  if (args.size() > 4) {
    std::optional<int64_t> s = ParseInt64(args[4]);
    if (!s || *s < 0) co_return ctx.SendStatus(OpStatus::kNotPositive);
    size = *s;
  }
  const Config& config = ctx.config();
  if (size > config.proto_max_bulk_len.load(std::memory_order_relaxed)) {
    co_return ctx.SendStatus(OpStatus::kStringTooLong);
  }
  if (!PopulateMayFit(*count, size, config.maxmemory.load(std::memory_order_relaxed))) {
    co_return ctx.SendStatus(OpStatus::kPopulateTooLarge);
  }
  ShardSet& ss = ctx.shard_set();
  unsigned db = ctx.state.db;
  int64_t now = ctx.now_ms;
  // One byte per shard: the shards write in parallel (vector<bool> would share words).
  std::vector<char> oom(ss.size(), 0);
  // Every shard walks the whole index range and inserts the keys it owns: no messages between
  // shards, all of them in parallel.
  co_await ss.AwaitAll([&](Shard& shard) {
    DbSlice& slice = shard.db(db);
    std::string key(prefix);
    key += ':';
    const size_t base = key.size();
    std::string value;
    char digits[24];
    for (int64_t i = 0; i < *count; ++i) {
      char* end = std::to_chars(digits, digits + sizeof(digits), i).ptr;
      key.resize(base);
      key.append(digits, end);
      if (ss.ShardOf(key) != shard.index()) continue;
      if (slice.IsLive(key, now)) continue;  // like Redis: existing keys are left alone
      OpResult<DbSlice::AddResult> res = slice.FindOrAdd(key, now);
      if (!res.ok()) {
        oom[shard.index()] = 1;
        return;
      }
      value.assign("value:");
      value.append(digits, end);
      if (size > 0) value.resize(size, '\0');
      res->it->second.SetString(value);
    }
  });
  for (char o : oom) {
    if (o) co_return ctx.SendStatus(OpStatus::kOutOfMemory);
  }
  ctx.rb.SendOk();
}

// DEBUG OBJECT key
awaitable<void> DebugObject(CmdArgs args, ConnCmdContext& ctx) {
  ShardSet& ss = ctx.shard_set();
  unsigned db = ctx.state.db;
  int64_t now = ctx.now_ms;
  std::string_view key = args[2];
  std::optional<std::string> line = co_await ss.Await(ss.ShardOf(key), [&](Shard& shard) {
    std::optional<std::string> out;
    PrimeIterator it = shard.db(db).FindReadOnlyQuiet(key, now);
    if (it.is_done()) return out;
    const CompactObj& value = it->second;
    // As Redis: the raw record and the idle time it gives read as an LRU clock, whatever the
    // policy.
    const uint32_t record = shard.db(db).Record(it, now);
    char addr[32];
    snprintf(addr, sizeof(addr), "%p", static_cast<const void*>(&value));
    out = StrCat("Value at:", std::string_view(addr),
                       " refcount:1 encoding:", value.EncodingName(),
                       " serializedlength:",
                 value.IsString() ? RdbStringLength(value) : ObjectSerializedLength(value),
                 " lru:", record, " lru_seconds_idle:", LruIdleMs(record, now) / 1000,
                 DebugObjectExtra(value));
    return out;
  });
  if (!line) co_return ctx.SendStatus(OpStatus::kNoSuchKey);
  ctx.rb.SendSimpleString(*line);
}

// Returns the microseconds DEBUG SLEEP waits for `arg`, as Redis 7.0 computes them: strtod of
// the longest numeric prefix (no prefix: 0), times 1e6, converted to long long, where a value out
// of its range (inf, 1e300, NaN) yields LLONG_MIN on x86; <= 0 means no wait. The conversion is
// range-checked here instead of relying on that undefined behaviour.
int64_t DebugSleepMicros(std::string_view arg) {
  std::string buf(arg);
  double micros = std::strtod(buf.c_str(), nullptr) * 1e6;
  constexpr double kTwo63 = 9223372036854775808.0;
  if (!(micros > -kTwo63 && micros < kTwo63)) return INT64_MIN;
  return static_cast<int64_t>(micros);
}

// DEBUG SLEEP seconds: suspends this connection only (the engine keeps serving others). Answers
// OK like Redis for any argument: text that is no number, NaN, negative or out-of-range values
// answer at once.
awaitable<void> DebugSleep(CmdArgs args, ConnCmdContext& ctx) {
  int64_t micros = DebugSleepMicros(args[2]);
  if (micros > 0) {
    // A century stands for "forever" and keeps the timer's deadline representable.
    constexpr int64_t kMaxMicros = int64_t{100} * 365 * 24 * 3600 * 1000000;
    boost::asio::steady_timer timer(ctx.state.conn->engine().context());
    timer.expires_after(std::chrono::microseconds(std::min(micros, kMaxMicros)));
    boost::system::error_code ec;
    co_await timer.async_wait(boost::asio::redirect_error(boost::asio::use_awaitable, ec));
  }
  ctx.rb.SendOk();
}

// DEBUG SET-ACTIVE-EXPIRE 0|1
// The argument is read as Redis reads it (atoi): a number other than 0 turns the cycle on;
// 0, or text that does not start with a number, turns it off.
awaitable<void> DebugSetActiveExpire(CmdArgs args, ConnCmdContext& ctx) {
  const bool on = std::atoi(std::string(args[2]).c_str()) != 0;
  co_await ctx.shard_set().AwaitAll([on](Shard& shard) { shard.set_active_expire(on); });
  ctx.rb.SendOk();
}

// DEBUG RELOAD [MERGE] [NOFLUSH] [NOSAVE]: saves, empties every database and loads the file
// back, holding every shard exclusive throughout (no other command runs meanwhile, as in Redis).
// MERGE lets a loaded key replace one already held (with NOFLUSH: two datasets merged).
awaitable<void> DebugReload(CmdArgs args, ConnCmdContext& ctx) {
  bool merge = false, flush = true, save = true;
  ArgParser parser(args, 2);
  while (parser.HasNext()) {
    if (parser.Check("MERGE")) {
      merge = true;
    } else if (parser.Check("NOFLUSH")) {
      flush = false;
    } else if (parser.Check("NOSAVE")) {
      save = false;
    } else {
      co_return ctx.SendStatus(OpStatus::kReloadOption);
    }
  }
  // Inside EXEC the transaction holds locks this could wait behind forever.
  if (ctx.in_exec) co_return ctx.SendStatus(OpStatus::kReloadInExec);
  ShardSet& ss = ctx.shard_set();
  SnapshotManager& snapshots = ctx.snapshots();
  KeyLocks locks(ss);
  locks.AddAllShards(LockMode::kExclusive);
  co_await locks.Acquire();
  if (save) {
    if (absl::Status st = co_await snapshots.SaveHoldingShards(); !st.ok()) {
      locks.Release();
      co_return ctx.SendStatus(OpStatus::kSaveFailed);
    }
  }
  if (flush) {
    TrackingHub& tracking = ctx.tracking();
    co_await ss.AwaitAll([&](Shard& shard) {
      snapshots.AbortOnShard(shard);
      shard.ClearAllDbs();
      tracking.table(shard.index()).ClearKeys();
    });
    tracking.InvalidateAll();  // as Redis's emptyData: the null invalidation of a flush
  }
  LoadOptions options;
  options.replace_existing = merge;
  absl::StatusOr<LoadStats> loaded = co_await snapshots.Load(options);
  locks.Release();
  if (!loaded.ok()) {
    LOG(WARNING) << "DEBUG RELOAD: " << loaded.status().message();
    co_return ctx.SendStatus(OpStatus::kReloadFailed);
  }
  LOG(INFO) << "DB reloaded by DEBUG RELOAD";
  ctx.rb.SendOk();
}

// DEBUG HELP
awaitable<void> DebugHelp(CmdArgs, ConnCmdContext& ctx) {
  static constexpr std::string_view kHelp[] = {
      "DEBUG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "OBJECT <key>",
      "    Show low level info about the `key` and associated value.",
      "POPULATE <count> [<prefix>] [<size>]",
      "    Create <count> string keys named key:<num>. If <prefix> is specified then",
      "    it is used instead of the 'key' prefix. These are not propagated to",
      "    replicas. Cluster slots are not respected so keys not belonging to the",
      "    current node can be created in cluster mode.",
      "RELOAD [option ...]",
      "    Save the RDB on disk and reload it back to memory. Available <option> values:",
      "    * MERGE: Merge the content of the RDB file into the current dataset.",
      "    * NOFLUSH: Do not empty the current dataset before loading the RDB file.",
      "    * NOSAVE: the database will be loaded from an existing RDB file.",
      "    Examples:",
      "    * DEBUG RELOAD: verify that the server is able to persist, flush and reload",
      "      the database.",
      "    * DEBUG RELOAD NOSAVE: replace the current database with the contents of an",
      "      existing RDB file.",
      "    * DEBUG RELOAD NOSAVE NOFLUSH MERGE: add the contents of an existing RDB",
      "      file to the database.",
      "SET-ACTIVE-EXPIRE <0|1>",
      "    Setting it to 0 disables expiring keys in background when they are not",
      "    accessed (otherwise the Redis behavior). Setting it to 1 reenables back the",
      "    default.",
      "SLEEP <seconds>",
      "    Stop the server for <seconds>. Decimals allowed.",
      "HELP",
      "    Print this help.",
  };
  SendHelp(ctx.rb, kHelp);
  co_return;
}

// DEBUG's subcommands. Redis 7.0 does not list them in COMMAND (DEBUG is one command there), so
// they stay out of the registry; a wrong name and a wrong argument count get the same error.
// A handler runs only with an argument count inside its entry's bounds.
struct DebugSubcommand {
  std::string_view name;
  size_t min_args;  // name and subcommand included
  size_t max_args;
  CoordHandler handler;
};

constexpr DebugSubcommand kDebugSubcommands[] = {
    {"populate", 3, 5, DebugPopulate},
    {"object", 3, 3, DebugObject},
    {"set-active-expire", 3, 3, DebugSetActiveExpire},
    {"reload", 2, 5, DebugReload},
    {"sleep", 3, 3, DebugSleep},
    {"help", 2, 2, DebugHelp},
};

// DEBUG subcommand ...
awaitable<void> CmdDebug(CmdArgs args, ConnCmdContext& ctx) {
  for (const DebugSubcommand& sub : kDebugSubcommands) {
    if (!EqualsIgnoreCase(args[1], sub.name)) continue;
    if (args.size() < sub.min_args || args.size() > sub.max_args) break;
    co_return co_await sub.handler(args, ctx);
  }
  SendDebugUsage(ctx, args[1]);
}

}  // namespace

std::vector<CommandSpec> ObjectSubcommands() {
  const std::vector<std::string_view> kCats = {"keyspace", "read", "slow"};
  auto keyed = [&](std::string name, std::string_view since, std::string_view summary) {
    CommandSpec s = WithSingleKey(MakeSubcommand(std::move(name), 3, kCmdReadOnly, kCats, since,
                                                 summary),
                                  2, {"RO"});
    s.tips = {"nondeterministic_output"};
    return s;
  };
  std::vector<CommandSpec> subs;
  subs.push_back(keyed("encoding", "2.2.3", "Returns the internal encoding of a Redis object."));
  subs.push_back(keyed("refcount", "2.2.3", "Returns the reference count of a value of a key."));
  subs.push_back(keyed("idletime", "2.2.3",
                       "Returns the time since the last access to a Redis object."));
  subs.push_back(keyed("freq", "4.0.0", "Returns the logarithmic access frequency counter of a "
                       "Redis object."));
  subs.push_back(MakeSubcommand("help", 2, kCmdLoading | kCmdStale, {"keyspace", "slow"}, "6.2.0",
                                "Returns helpful text about the different subcommands."));
  return subs;
}

void RegisterDebugCommands(CommandRegistry* r) {
  CommandSpec debug;
  debug.name = "debug";
  debug.arity = -2;
  debug.flags = kCmdAdmin | kCmdNoScript | kCmdLoading | kCmdStale | kCmdDebugGated;
  debug.kind = HandlerKind::kCoord;
  debug.coord_handler = CmdDebug;
  debug.categories = {"admin", "slow", "dangerous"};
  debug.summary = "A container for debugging commands.";
  debug.since = "1.0.0";
  debug.group = "server";
  r->Register(std::move(debug));
}

}  // namespace dashkv
