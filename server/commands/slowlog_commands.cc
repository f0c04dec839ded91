// SLOWLOG GET [count] | LEN | RESET | HELP (server/observability/slowlog.h).
#include "core/base/parse_int.h"
#include "core/str_util.h"
#include "server/cmd_context.h"
#include "server/command_registry.h"
#include "server/config.h"
#include "server/observability/slowlog.h"
#include "server/op_status.h"
#include "server/server_stats.h"

namespace dashkv {

namespace {

void SlowlogGet(CmdArgs args, ConnCmdContext& ctx) {
  int64_t count = 10;
  if (args.size() > 3) {
    return ctx.rb.SendError(StrCat("ERR unknown subcommand or wrong number of arguments for '",
                                   args[1], "'. Try SLOWLOG HELP."));
  }
  if (args.size() == 3) {
    std::optional<int64_t> n = ParseInt64(args[2]);
    if (!n || *n < -1) return ctx.rb.SendError("ERR count should be greater than or equal to -1");
    count = *n;
  }
  const int64_t max_len = ctx.config().slowlog_max_len.load(std::memory_order_relaxed);
  std::vector<SlowLogEntry> entries = ctx.stats().slowlog().Get(count, max_len);
  ctx.rb.StartArray(entries.size());
  for (const SlowLogEntry& e : entries) {
    ctx.rb.StartArray(6);
    ctx.rb.SendLong(static_cast<int64_t>(e.id));
    ctx.rb.SendLong(e.unix_time);
    ctx.rb.SendLong(e.duration_us);
    ctx.rb.SendBulkArray(e.args);
    ctx.rb.SendBulk(e.client_addr);
    ctx.rb.SendBulk(e.client_name);
  }
}

void SlowlogLen(CmdArgs, ConnCmdContext& ctx) {
  const int64_t max_len = ctx.config().slowlog_max_len.load(std::memory_order_relaxed);
  ctx.rb.SendLong(static_cast<int64_t>(ctx.stats().slowlog().Len(max_len)));
}

void SlowlogReset(CmdArgs, ConnCmdContext& ctx) {
  ctx.stats().slowlog().Reset();
  ctx.rb.SendOk();
}

void SlowlogHelp(CmdArgs, ConnCmdContext& ctx) {
  static constexpr std::string_view kHelp[] = {
      "SLOWLOG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "GET [<count>]",
      "    Return top <count> entries from the slowlog (default: 10, -1 mean all).",
      "    Entries are made of:",
      "    id, timestamp, time in microseconds, arguments array, client IP and port,",
      "    client name",
      "LEN",
      "    Return the length of the slowlog.",
      "RESET",
      "    Reset the slowlog.",
      "HELP",
      "    Prints this help.",
  };
  SendHelp(ctx.rb, kHelp);
}

CommandSpec Sub(std::string name, int arity, std::string_view summary, std::string_view since,
                ConnHandler handler, std::vector<std::string_view> tips) {
  const bool help = name == "help";
  CommandSpec s = MakeSubcommand(
      std::move(name), arity, (help ? 0u : uint32_t{kCmdAdmin}) | kCmdLoading | kCmdStale,
      help ? std::vector<std::string_view>{"slow"}
           : std::vector<std::string_view>{"admin", "slow", "dangerous"},
      since, summary);
  s.tips = std::move(tips);
  return WithConnHandler(std::move(s), handler);
}

}  // namespace

void RegisterSlowlogCommands(CommandRegistry* r) {
  CommandSpec s = MakeSpec("slowlog", -2, 0, 0, 0, {"slow"}, "server", "2.2.12",
                           "A container for slow log commands");
  s.kind = HandlerKind::kConn;
  s.subcommands.push_back(Sub("get", -2, "Get the slow log's entries", "2.2.12", SlowlogGet,
                              {"request_policy:all_nodes", "nondeterministic_output"}));
  s.subcommands.push_back(Sub("help", 2, "Show helpful text about the different subcommands",
                              "6.2.0", SlowlogHelp, {}));
  s.subcommands.push_back(Sub("len", 2, "Get the slow log's length", "2.2.12", SlowlogLen,
                              {"request_policy:all_nodes", "response_policy:agg_sum",
                               "nondeterministic_output"}));
  s.subcommands.push_back(Sub("reset", 2, "Clear all entries from the slow log", "2.2.12",
                              SlowlogReset,
                              {"request_policy:all_nodes", "response_policy:all_succeeded"}));
  r->Register(std::move(s));
}

}  // namespace dashkv
