// MEMORY STATS | DOCTOR | MALLOC-STATS | PURGE | USAGE key [SAMPLES count] | HELP.
#include <absl/strings/str_format.h>
#include <mimalloc.h>

#include <string>
#include <vector>

#include "core/compact_object.h"
#include "core/str_util.h"
#include "server/cmd_args.h"
#include "server/cmd_context.h"
#include "server/command_registry.h"
#include "server/commands/memory_figures.h"
#include "server/conn_state.h"
#include "server/op_status.h"
#include "server/storage/shard_set.h"

namespace dashkv {

namespace {

using boost::asio::awaitable;

// Bytes an entry takes: its slot (key and value objects), a share of bucket metadata, and the
// heap memory both objects own. Exact for every encoding (each structure keeps its own byte
// count), so SAMPLES, which makes Redis estimate from a sample, changes nothing here.
int64_t EntryBytes(const PrimeIterator& it) {
  constexpr int64_t kSlotBytes = 2 * sizeof(CompactObj) + 3;
  return kSlotBytes + static_cast<int64_t>(it->first.MallocUsed() + it->second.MallocUsed());
}

// MEMORY USAGE key [SAMPLES count]
awaitable<void> MemoryUsage(CmdArgs args, ConnCmdContext& ctx) {
  ArgParser parser(args, 3);
  while (parser.HasNext()) {
    if (!parser.Check("SAMPLES") || !parser.HasNext()) {
      co_return ctx.SendStatus(OpStatus::kSyntaxError);
    }
    int64_t samples = parser.NextInt();
    if (parser.HasError()) co_return ctx.SendStatus(parser.error());
    if (samples < 0) co_return ctx.SendStatus(OpStatus::kSyntaxError);
  }
  ShardSet& ss = ctx.shard_set();
  unsigned db = ctx.state.db;
  int64_t now = ctx.now_ms;
  std::string_view key = args[2];
  int64_t bytes = co_await ss.Await(ss.ShardOf(key), [&](Shard& shard) -> int64_t {
    PrimeIterator it = shard.db(db).FindReadOnlyQuiet(key, now);
    return it.is_done() ? -1 : EntryBytes(it);
  });
  if (bytes < 0) co_return ctx.rb.SendNull();
  ctx.rb.SendLong(bytes);
}

awaitable<MemoryFigures> Gather(ConnCmdContext& ctx) {
  ShardSet& ss = ctx.shard_set();
  std::vector<EngineMemory> engines(ss.size());
  co_await ss.AwaitAll([&](Shard& shard) {
    engines[shard.index()] = GatherEngineMemory(shard, ctx.clients());
  });
  co_return ComputeMemoryFigures(ctx.services(), engines);
}

// MEMORY STATS: Redis 7.0's fields, in its order, from dashkv's accounting.
awaitable<void> MemoryStats(CmdArgs, ConnCmdContext& ctx) {
  const MemoryFigures f = co_await Gather(ctx);
  io::ReplyBuilder& rb = ctx.rb;
  auto ratio = [](int64_t a, int64_t b) {
    return b > 0 ? static_cast<double>(a) / static_cast<double>(b) : 0.0;
  };
  rb.StartMap(27 + f.db_tables.size());  // the fields below
  auto num = [&](std::string_view name, int64_t v) {
    rb.SendBulk(name);
    rb.SendLong(v);
  };
  auto dbl = [&](std::string_view name, double v) {
    rb.SendBulk(name);
    rb.SendDouble(v);
  };
  num("peak.allocated", f.peak);
  num("total.allocated", f.used);
  num("startup.allocated", f.startup);
  num("replication.backlog", 0);
  num("clients.slaves", 0);
  num("clients.normal", f.clients_normal);
  num("cluster.links", 0);
  num("aof.buffer", 0);
  num("lua.caches", f.scripts);
  num("functions.caches", f.functions);
  for (const auto& [db, bytes] : f.db_tables) {
    rb.SendBulk(StrCat("db.", db));
    rb.StartMap(3);
    num("overhead.hashtable.main", bytes);
    num("overhead.hashtable.expires", 0);  // deadlines live in the key entries
    num("overhead.hashtable.slot-to-keys", 0);
  }
  num("overhead.total", f.overhead());
  num("keys.count", f.keys);
  num("keys.bytes-per-key", f.keys > 0 ? (f.used - f.startup) / f.keys : 0);
  num("dataset.bytes", f.dataset());
  dbl("dataset.percentage", f.dataset_percentage());
  dbl("peak.percentage", f.peak_percentage());
  num("allocator.allocated", f.used);
  num("allocator.active", f.allocator_active);
  num("allocator.resident", f.allocator_resident);
  dbl("allocator-fragmentation.ratio", ratio(f.allocator_active, f.used));
  num("allocator-fragmentation.bytes", f.allocator_active - f.used);
  dbl("allocator-rss.ratio", ratio(f.allocator_resident, f.allocator_active));
  num("allocator-rss.bytes", f.allocator_resident - f.allocator_active);
  dbl("rss-overhead.ratio", ratio(f.rss, f.allocator_resident));
  num("rss-overhead.bytes", f.rss - f.allocator_resident);
  dbl("fragmentation", f.frag_ratio());
  num("fragmentation.bytes", f.rss - f.used);
}

// MEMORY DOCTOR: what stands out in the figures, in plain words.
awaitable<void> MemoryDoctor(CmdArgs, ConnCmdContext& ctx) {
  const MemoryFigures f = co_await Gather(ctx);
  std::vector<std::string> findings;
  constexpr int64_t kSmall = 5 << 20;  // below this, ratios say nothing
  if (f.used < kSmall) {
    co_return ctx.rb.SendVerbatim(
        StrCat("The server uses ", HumanBytes(f.used),
               ": too little for its memory figures to show a problem.\n"));
  }
  if (f.peak_percentage() < 50.0) {
    findings.push_back(StrCat("Peak memory: the server once used ", HumanBytes(f.peak),
                              ", more than twice today's ", HumanBytes(f.used),
                              ". The allocator may keep part of the difference; MEMORY PURGE "
                              "asks it to return free pages to the OS."));
  }
  if (f.frag_ratio() > 1.4 && f.rss - f.used > (10 << 20)) {
    findings.push_back(StrCat("Fragmentation: the process holds ", HumanBytes(f.rss),
                              " of RAM for ", HumanBytes(f.used), " in use (ratio ",
                              absl::StrFormat("%.2f", f.frag_ratio()),
                              "). MEMORY PURGE may give some of it back."));
  }
  if (f.clients_normal > f.used / 4 && f.clients_normal > (32 << 20)) {
    findings.push_back(StrCat("Client buffers hold ", HumanBytes(f.clients_normal),
                              ": look for clients that read their replies slowly (CLIENT LIST "
                              "omem) and for large pipelines; client-output-buffer-limit "
                              "bounds them."));
  }
  const int64_t maxmemory = ctx.config().maxmemory.load(std::memory_order_relaxed);
  if (maxmemory > 0 && f.used > maxmemory * 9 / 10) {
    findings.push_back(StrCat("The server uses ", HumanBytes(f.used), " of its maxmemory ",
                              HumanBytes(maxmemory), ": writes will soon be refused (policy ",
                              ctx.config().maxmemory_policy(), ")."));
  }
  if (findings.empty()) {
    co_return ctx.rb.SendVerbatim(
        StrCat("No memory problem found: ", HumanBytes(f.used), " in use, ", HumanBytes(f.rss),
               " resident, peak ", HumanBytes(f.peak), ".\n"));
  }
  std::string out = "Memory findings:\n\n";
  for (size_t i = 0; i < findings.size(); ++i) StrAppend(&out, i + 1, ". ", findings[i], "\n\n");
  ctx.rb.SendVerbatim(out);
}

// MEMORY MALLOC-STATS: the allocator's own report.
void MemoryMallocStats(CmdArgs, ConnCmdContext& ctx) {
#ifdef DASHKV_SANITIZER
  ctx.rb.SendVerbatim("Stats not supported for the current allocator\n");
#else
  std::string out;
  mi_stats_print_out(
      [](const char* msg, void* arg) { static_cast<std::string*>(arg)->append(msg); }, &out);
  ctx.rb.SendVerbatim(out);
#endif
}

// MEMORY PURGE: every engine's heap gives its free pages back to the OS.
awaitable<void> MemoryPurge(CmdArgs, ConnCmdContext& ctx) {
  co_await ctx.shard_set().AwaitAll([](Shard&) {
#ifndef DASHKV_SANITIZER
    mi_collect(true);
#endif
  });
  ctx.rb.SendOk();
}

void MemoryHelp(CmdArgs, ConnCmdContext& ctx) {
  static constexpr std::string_view kHelp[] = {
      "MEMORY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "DOCTOR",
      "    Return memory problems reports.",
      "MALLOC-STATS",
      "    Return internal statistics report from the memory allocator.",
      "PURGE",
      "    Attempt to purge dirty pages for reclamation by the allocator.",
      "STATS",
      "    Return information about the memory usage of the server.",
      "USAGE <key> [SAMPLES <count>]",
      "    Return memory in bytes used by <key> and its value. Nested values are",
      "    sampled up to <count> times (default: 5, 0 means sample all).",
      "HELP",
      "    Prints this help.",
  };
  SendHelp(ctx.rb, kHelp);
}

CommandSpec AllShards(CommandSpec s, bool special) {
  if (special) {
    s.tips = {"nondeterministic_output", "request_policy:all_shards", "response_policy:special"};
  } else {
    s.tips = {"request_policy:all_shards", "response_policy:all_succeeded"};
  }
  return s;
}

}  // namespace

void RegisterMemoryCommands(CommandRegistry* r) {
  const std::vector<std::string_view> kSlow = {"slow"};
  CommandSpec memory = MakeSpec("memory", -2, 0, 0, 0, kSlow, "server", "4.0.0",
                                "A container for memory diagnostics commands");
  memory.kind = HandlerKind::kCoord;
  memory.subcommands.push_back(WithCoordHandler(
      AllShards(MakeSubcommand("doctor", 2, 0, kSlow, "4.0.0", "Outputs memory problems report"),
                true),
      MemoryDoctor));
  memory.subcommands.push_back(WithConnHandler(
      MakeSubcommand("help", 2, kCmdLoading | kCmdStale, kSlow, "4.0.0",
                     "Show helpful text about the different subcommands"),
      MemoryHelp));
  memory.subcommands.push_back(WithConnHandler(
      AllShards(MakeSubcommand("malloc-stats", 2, 0, kSlow, "4.0.0",
                               "Show allocator internal stats"),
                true),
      MemoryMallocStats));
  memory.subcommands.push_back(WithCoordHandler(
      AllShards(MakeSubcommand("purge", 2, 0, kSlow, "4.0.0",
                               "Ask the allocator to release memory"),
                false),
      MemoryPurge));
  memory.subcommands.push_back(WithCoordHandler(
      AllShards(MakeSubcommand("stats", 2, 0, kSlow, "4.0.0",
                               "Show memory usage details"),
                true),
      MemoryStats));
  memory.subcommands.push_back(WithCoordHandler(
      WithSingleKey(MakeSubcommand("usage", -3, kCmdReadOnly, {"read", "slow"}, "4.0.0",
                                   "Estimate the memory usage of a key"),
                    2, {"RO"}),
      MemoryUsage));
  r->Register(std::move(memory));
}

}  // namespace dashkv
