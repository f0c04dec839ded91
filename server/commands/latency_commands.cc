// LATENCY LATEST | HISTORY event | RESET [event ...] | GRAPH event | DOCTOR |
// HISTOGRAM [command ...] | HELP (server/observability/latency_monitor.h, latency_histogram.h).
#include <ctime>
#include <map>

#include "core/str_util.h"
#include "server/cmd_context.h"
#include "server/command_registry.h"
#include "server/config.h"
#include "server/observability/latency_histogram.h"
#include "server/observability/latency_monitor.h"
#include "server/server_stats.h"
#include "server/storage/shard_set.h"

namespace dashkv {

namespace {

using boost::asio::awaitable;

int64_t UnixNow() { return static_cast<int64_t>(std::time(nullptr)); }

void LatencyLatest(CmdArgs, ConnCmdContext& ctx) {
  std::vector<LatencyMonitor::Latest> latest = ctx.stats().latency_monitor().LatestSamples();
  ctx.rb.StartArray(latest.size());
  for (const auto& l : latest) {
    ctx.rb.StartArray(4);
    ctx.rb.SendBulk(l.event);
    ctx.rb.SendLong(l.time);
    ctx.rb.SendLong(l.ms);
    ctx.rb.SendLong(l.max_ms);
  }
}

void LatencyHistory(CmdArgs args, ConnCmdContext& ctx) {
  std::vector<LatencyMonitor::Sample> samples = ctx.stats().latency_monitor().History(args[2]);
  ctx.rb.StartArray(samples.size());
  for (const auto& s : samples) {
    ctx.rb.StartArray(2);
    ctx.rb.SendLong(s.time);
    ctx.rb.SendLong(s.ms);
  }
}

void LatencyReset(CmdArgs args, ConnCmdContext& ctx) {
  std::vector<std::string> events(args.begin() + 2, args.end());
  ctx.rb.SendLong(static_cast<int64_t>(ctx.stats().latency_monitor().Reset(events)));
}

void LatencyGraph(CmdArgs args, ConnCmdContext& ctx) {
  std::string graph = ctx.stats().latency_monitor().Graph(args[2], UnixNow());
  if (graph.empty()) {
    return ctx.rb.SendError(StrCat("ERR No samples available for event '", args[2], "'"));
  }
  ctx.rb.SendVerbatim(graph);
}

void LatencyDoctor(CmdArgs, ConnCmdContext& ctx) {
  ctx.rb.SendVerbatim(ctx.stats().latency_monitor().Doctor(
      ctx.config().latency_monitor_threshold.load(std::memory_order_relaxed)));
}

// Sends one command's histogram (in CycleClock ticks): its calls and the cumulative count at
// each power-of-two microsecond bound where the count grows.
void SendHistogram(io::ReplyBuilder& rb, const LatencyHistogram& h, double ns_per_tick) {
  std::vector<std::pair<int64_t, uint64_t>> steps;
  uint64_t cumulative = 0;
  h.ForEachBucket([&](uint64_t upper, uint64_t count) {
    const double upper_ns = static_cast<double>(upper) * ns_per_tick;
    int64_t bound = 1;
    while (static_cast<double>(bound) * 1000 < upper_ns && bound < (int64_t{1} << 62)) {
      bound *= 2;
    }
    cumulative += count;
    if (!steps.empty() && steps.back().first == bound) {
      steps.back().second = cumulative;
    } else {
      steps.emplace_back(bound, cumulative);
    }
  });
  rb.StartMap(2);
  rb.SendBulk("calls");
  rb.SendLong(static_cast<int64_t>(h.total()));
  rb.SendBulk("histogram_usec");
  rb.StartMap(steps.size());
  for (const auto& [bound, n] : steps) {
    rb.SendLong(bound);
    rb.SendLong(static_cast<int64_t>(n));
  }
}

awaitable<void> LatencyHistogramCmd(CmdArgs args, ConnCmdContext& ctx) {
  // The specs asked for (every spec when none is named; a container stands for its
  // subcommands); unknown names are skipped, as Redis does.
  std::vector<const CommandSpec*> specs;
  if (args.size() == 2) {
    ctx.registry().ForEachSpec([&](const CommandSpec& s) { specs.push_back(&s); });
  } else {
    for (size_t i = 2; i < args.size(); ++i) {
      const CommandSpec* s = ctx.registry().FindFullName(args[i]);
      if (s == nullptr) continue;
      if (s->container()) {
        for (const CommandSpec& sub : s->subcommands) specs.push_back(&sub);
      } else {
        specs.push_back(s);
      }
    }
  }
  std::map<std::string_view, LatencyHistogram> merged;
  std::vector<std::vector<std::pair<std::string_view, LatencyHistogram>>> per_engine(
      ctx.shard_set().size());
  co_await ctx.shard_set().AwaitAll([&](Shard& shard) {
    const EngineStats& es = ctx.stats().engine(shard.index());
    for (const CommandSpec* s : specs) {
      if (s->id < es.latency.size() && es.latency[s->id] != nullptr) {
        per_engine[shard.index()].emplace_back(s->name, *es.latency[s->id]);
      }
    }
  });
  for (const auto& list : per_engine) {
    for (const auto& [name, h] : list) merged[name].Merge(h);
  }
  ctx.rb.StartMap(merged.size());
  for (const auto& [name, h] : merged) {
    ctx.rb.SendBulk(name);
    SendHistogram(ctx.rb, h, ctx.stats().ns_per_tick());
  }
}

void LatencyHelp(CmdArgs, ConnCmdContext& ctx) {
  static constexpr std::string_view kHelp[] = {
      "LATENCY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "DOCTOR",
      "    Return a human readable latency analysis report.",
      "GRAPH <event>",
      "    Return an ASCII latency graph for the <event> class.",
      "HISTORY <event>",
      "    Return time-latency samples for the <event> class.",
      "LATEST",
      "    Return the latest latency samples for all events.",
      "RESET [<event> ...]",
      "    Reset latency data of one or more <event> classes.",
      "    (default: reset all data for all event classes)",
      "HISTOGRAM [COMMAND ...]",
      "    Return a cumulative distribution of latencies in the format of a histogram for the "
      "specified command names.",
      "    If no commands are specified then all histograms are replied.",
      "HELP",
      "    Prints this help.",
  };
  SendHelp(ctx.rb, kHelp);
}

CommandSpec Sub(std::string name, int arity, std::string_view summary, std::string_view since,
                std::vector<std::string_view> tips) {
  const bool help = name == "help";
  CommandSpec s = MakeSubcommand(
      std::move(name), arity,
      help ? kCmdLoading | kCmdStale : kCmdAdmin | kCmdNoScript | kCmdLoading | kCmdStale,
      help ? std::vector<std::string_view>{"slow"}
           : std::vector<std::string_view>{"admin", "slow", "dangerous"},
      since, summary);
  s.tips = std::move(tips);
  return s;
}

}  // namespace

void RegisterLatencyCommands(CommandRegistry* r) {
  const std::vector<std::string_view> kSpecial = {
      "nondeterministic_output", "request_policy:all_nodes", "response_policy:special"};
  CommandSpec s = MakeSpec("latency", -2, 0, 0, 0, {"slow"}, "server", "2.8.13",
                           "A container for latency diagnostics commands");
  s.kind = HandlerKind::kConn;
  s.subcommands.push_back(WithConnHandler(
      Sub("doctor", 2, "Return a human readable latency analysis report.", "2.8.13", kSpecial),
      LatencyDoctor));
  s.subcommands.push_back(WithConnHandler(
      Sub("graph", 3, "Return a latency graph for the event.", "2.8.13", kSpecial),
      LatencyGraph));
  s.subcommands.push_back(WithConnHandler(
      Sub("help", 2, "Show helpful text about the different subcommands.", "2.8.13", {}),
      LatencyHelp));
  s.subcommands.push_back(WithCoordHandler(
      Sub("histogram", -2,
          "Return the cumulative distribution of latencies of a subset of commands or all.",
          "7.0.0", kSpecial),
      LatencyHistogramCmd));
  s.subcommands.push_back(WithConnHandler(
      Sub("history", 3, "Return timestamp-latency samples for the event.", "2.8.13", kSpecial),
      LatencyHistory));
  s.subcommands.push_back(WithConnHandler(
      Sub("latest", 2, "Return the latest latency samples for all events.", "2.8.13", kSpecial),
      LatencyLatest));
  s.subcommands.push_back(WithConnHandler(
      Sub("reset", -2, "Reset latency data for one or more events.", "2.8.13",
          {"request_policy:all_nodes", "response_policy:all_succeeded"}),
      LatencyReset));
  r->Register(std::move(s));
}

}  // namespace dashkv
