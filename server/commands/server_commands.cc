// Server commands: DBSIZE, FLUSHDB, FLUSHALL, TIME, CONFIG, COMMAND, SHUTDOWN.
#include <signal.h>
#include <unistd.h>

#include "core/str_util.h"
#include "core/glob.h"
#include "io/connection.h"
#include "server/cmd_context.h"
#include "server/command_registry.h"
#include "server/tx/multi_key.h"
#include "server/server.h"

namespace dashkv {

namespace {

using boost::asio::awaitable;

void SendUnknownSubcommand(io::ReplyBuilder& rb, std::string_view sub, std::string_view cmd) {
  rb.SendError(StrCat("ERR unknown subcommand '", sub, "'. Try ", cmd, " HELP."));
}

void SendSubcommandArity(io::ReplyBuilder& rb, std::string_view cmd, std::string_view sub) {
  rb.SendError(StrCat("ERR wrong number of arguments for '", cmd, "|",
                            AsciiStrToLower(sub), "' command"));
}

// DBSIZE
awaitable<void> CmdDbSize(CmdArgs, ConnCmdContext& ctx) {
  ShardSet& ss = ctx.server.shard_set();
  std::vector<int64_t> sizes(ss.size());
  unsigned db = ctx.state.db;
  co_await ss.AwaitAll([&](Shard& shard) {
    DbSlice* slice = shard.db_if_exists(db);
    sizes[shard.index()] = slice ? static_cast<int64_t>(slice->size()) : 0;
  });
  int64_t total = 0;
  for (int64_t s : sizes) total += s;
  ctx.rb.SendLong(total);
}

// Parses the optional ASYNC|SYNC of FLUSHDB/FLUSHALL; false after replying with an error.
bool ParseFlushMode(CmdArgs args, ConnCmdContext& ctx) {
  if (args.size() == 1) return true;
  if (args.size() == 2 && (EqualsIgnoreCase(args[1], "ASYNC") ||
                           EqualsIgnoreCase(args[1], "SYNC"))) {
    return true;
  }
  ctx.SendStatus(OpStatus::kSyntaxError);
  return false;
}

// FLUSHDB [ASYNC|SYNC]
// Marks dirty the clients watching a key of `db` (all databases if < 0) that exists: a flush
// modifies exactly those (Redis: touchAllWatchedKeysInDb).
void TouchWatchedLiveKeys(Shard& shard, int db, int64_t now_ms) {
  if (shard.watches().empty()) return;
  shard.watches().TouchIf(db, [&](unsigned d, std::string_view key) {
    return shard.KeyLive(d, key, now_ms);
  });
}

awaitable<void> CmdFlushDb(CmdArgs args, ConnCmdContext& ctx) {
  if (!ParseFlushMode(args, ctx)) co_return;
  unsigned db = ctx.state.db;
  int64_t now = ctx.now_ms;
  co_await ctx.server.shard_set().AwaitAll([&](Shard& shard) {
    TouchWatchedLiveKeys(shard, static_cast<int>(db), now);
    if (DbSlice* slice = shard.db_if_exists(db)) slice->Clear();
  });
  ctx.rb.SendOk();
}

// FLUSHALL [ASYNC|SYNC]
awaitable<void> CmdFlushAll(CmdArgs args, ConnCmdContext& ctx) {
  if (!ParseFlushMode(args, ctx)) co_return;
  int64_t now = ctx.now_ms;
  co_await ctx.server.shard_set().AwaitAll([&](Shard& shard) {
    TouchWatchedLiveKeys(shard, -1, now);
    for (unsigned i = 0; i < shard.num_dbs(); ++i) {
      if (DbSlice* slice = shard.db_if_exists(i)) slice->Clear();
    }
  });
  ctx.rb.SendOk();
}

// TIME
void CmdTime(CmdArgs, ConnCmdContext& ctx) {
  int64_t us = NowUs();
  ctx.rb.StartArray(2);
  ctx.rb.SendBulk(StrCat(us / 1000000));
  ctx.rb.SendBulk(StrCat(us % 1000000));
}

// CONFIG GET parameter [parameter ...] | SET parameter value [parameter value ...] | RESETSTAT |
// REWRITE | HELP
void CmdConfig(CmdArgs args, ConnCmdContext& ctx) {
  std::string sub = AsciiStrToUpper(args[1]);
  Config& config = ctx.server.config();
  if (sub == "GET") {
    if (args.size() < 3) return SendSubcommandArity(ctx.rb, "config", sub);
    std::vector<std::string_view> patterns(args.begin() + 2, args.end());
    auto pairs = config.Get(patterns);
    ctx.rb.StartMap(pairs.size());
    for (const auto& [name, value] : pairs) {
      ctx.rb.SendBulk(name);
      ctx.rb.SendBulk(value);
    }
    return;
  }
  if (sub == "SET") {
    if (args.size() < 4) return SendSubcommandArity(ctx.rb, "config", sub);
    // Like Redis 7: a name without a value is a syntax error, not an arity error.
    if (args.size() % 2 != 0) return ctx.SendStatus(OpStatus::kSyntaxError);
    std::vector<std::pair<std::string_view, std::string_view>> pairs;
    for (size_t i = 2; i + 1 < args.size(); i += 2) pairs.emplace_back(args[i], args[i + 1]);
    std::string err = config.Set(pairs);
    if (!err.empty()) return ctx.rb.SendError(err);
    return ctx.rb.SendOk();
  }

  if (sub == "REWRITE") {
    return ctx.rb.SendError("ERR The server is running without a config file");
  }
  if (sub == "HELP") {
    static constexpr std::string_view kHelp[] = {
        "CONFIG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "GET <pattern>",
        "    Return parameters matching the glob-like <pattern> and their values.",
        "SET <directive> <value>",
        "    Set the configuration <directive> to <value>.",
        "RESETSTAT",
        "    Reset statistics reported by the INFO command.",
        "REWRITE",
        "    Rewrite the configuration file.",
        "HELP",
        "    Print this help.",
    };
    SendHelp(ctx.rb, kHelp);
    return;
  }
  SendUnknownSubcommand(ctx.rb, args[1], "CONFIG");
}

// CONFIG RESETSTAT needs a hop to every engine; the other subcommands run synchronously.
awaitable<void> CmdConfigCoord(CmdArgs args, ConnCmdContext& ctx) {
  if (!EqualsIgnoreCase(args[1], "RESETSTAT")) co_return CmdConfig(args, ctx);
  if (args.size() != 2) co_return SendSubcommandArity(ctx.rb, "config", "resetstat");
  Server& server = ctx.server;
  co_await server.pool().AwaitAll([&server](unsigned i) { server.ResetStats(i); });
  ctx.rb.SendOk();
}

// Sends one COMMAND INFO entry (Redis 7's 10-element layout).
void SendCommandInfo(const CommandSpec& spec, io::ReplyBuilder& rb) {
  rb.StartArray(10);
  rb.SendBulk(spec.name);
  rb.SendLong(spec.arity);
  std::vector<std::string_view> flags = FlagNames(spec.flags);
  rb.StartSet(flags.size());
  for (auto f : flags) rb.SendSimpleString(f);
  rb.SendLong(spec.first_key);
  rb.SendLong(spec.last_key);
  rb.SendLong(spec.key_step);
  rb.StartSet(spec.categories.size());
  for (auto c : spec.categories) rb.SendSimpleString(StrCat("@", c));
  rb.SendEmptyArray();  // tips
  rb.SendEmptyArray();  // key specifications
  rb.SendEmptyArray();  // subcommands
}

void SendCommandDocs(const CommandSpec& spec, io::ReplyBuilder& rb) {
  rb.SendBulk(spec.name);
  size_t n = 1 + !spec.since.empty() + !spec.group.empty();
  rb.StartMap(n);
  rb.SendBulk("summary");
  rb.SendBulk(spec.summary);
  if (!spec.since.empty()) {
    rb.SendBulk("since");
    rb.SendBulk(spec.since);
  }
  if (!spec.group.empty()) {
    rb.SendBulk("group");
    rb.SendBulk(spec.group);
  }
}

// COMMAND [COUNT | INFO [name ...] | DOCS [name ...] | LIST [FILTERBY ...] | GETKEYS ...]
void CmdCommand(CmdArgs args, ConnCmdContext& ctx) {
  const CommandRegistry& reg = ctx.server.registry();
  io::ReplyBuilder& rb = ctx.rb;
  if (args.size() == 1) {
    rb.StartArray(reg.size());
    for (const auto& spec : reg.all()) SendCommandInfo(*spec, rb);
    return;
  }
  std::string sub = AsciiStrToUpper(args[1]);
  if (sub == "COUNT") {
    if (args.size() != 2) return SendSubcommandArity(rb, "command", sub);
    return rb.SendLong(static_cast<int64_t>(reg.size()));
  }
  if (sub == "INFO") {
    if (args.size() == 2) {
      rb.StartArray(reg.size());
      for (const auto& spec : reg.all()) SendCommandInfo(*spec, rb);
      return;
    }
    rb.StartArray(args.size() - 2);
    for (size_t i = 2; i < args.size(); ++i) {
      const CommandSpec* spec = reg.Find(args[i]);
      if (spec) {
        SendCommandInfo(*spec, rb);
      } else {
        rb.SendNullArray();
      }
    }
    return;
  }
  if (sub == "DOCS") {
    std::vector<const CommandSpec*> specs;
    if (args.size() == 2) {
      for (const auto& spec : reg.all()) specs.push_back(spec.get());
    } else {
      for (size_t i = 2; i < args.size(); ++i) {
        if (const CommandSpec* spec = reg.Find(args[i])) specs.push_back(spec);
      }
    }
    rb.StartMap(specs.size());
    for (const CommandSpec* spec : specs) SendCommandDocs(*spec, rb);
    return;
  }
  if (sub == "LIST") {
    std::vector<std::string_view> names;
    std::string_view pattern, category;
    bool by_pattern = false, by_category = false;
    if (args.size() == 5 && EqualsIgnoreCase(args[2], "FILTERBY")) {
      std::string kind = AsciiStrToUpper(args[3]);
      if (kind == "PATTERN") {
        by_pattern = true;
        pattern = args[4];
      } else if (kind == "ACLCAT") {
        by_category = true;
        category = args[4];
      } else if (kind != "MODULE") {
        return ctx.SendStatus(OpStatus::kSyntaxError);
      } else {
        return rb.SendEmptyArray();  // no modules
      }
    } else if (args.size() != 2) {
      return ctx.SendStatus(OpStatus::kSyntaxError);
    }
    for (const auto& spec : reg.all()) {
      if (by_pattern && !GlobMatch(pattern, spec->name, GlobCase::kNoCase)) continue;
      if (by_category && std::find_if(spec->categories.begin(), spec->categories.end(),
                                       [&](std::string_view c) {
                                         return EqualsIgnoreCase(c, category);
                                       }) == spec->categories.end()) {
        continue;
      }
      names.push_back(spec->name);
    }
    return rb.SendBulkArray(names);
  }
  if (sub == "GETKEYS") {
    // Redis 7 wants the command and at least one argument of it.
    if (args.size() < 4) return SendSubcommandArity(rb, "command", sub);
    CmdArgs cmd = args.subspan(2);
    const CommandSpec* spec = reg.Find(cmd[0]);
    if (!spec) return rb.SendError("ERR Invalid command specified");
    if (!spec->HasKeys()) return rb.SendError("ERR The command has no key arguments");
    if (!spec->ArityOk(cmd.size())) {
      return rb.SendError("ERR Invalid number of arguments specified for command");
    }
    std::vector<std::string_view> keys;
    for (uint32_t k : spec->KeysOf(cmd)) keys.push_back(cmd[k]);
    if (keys.empty()) return rb.SendError("ERR Invalid arguments specified for command");
    return rb.SendBulkArray(keys);
  }
  if (sub == "HELP") {
    static constexpr std::string_view kHelp[] = {
        "COMMAND <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "(no subcommand)", "    Return details about all Redis commands.",
        "COUNT", "    Return the total number of commands in this Redis server.",
        "LIST", "    Return a list of all commands in this Redis server.",
        "INFO [<command-name> ...]",
        "    Return details about multiple Redis commands.",
        "DOCS [<command-name> ...]",
        "    Return documentation details about multiple Redis commands.",
        "GETKEYS <full-command>", "    Return the keys from a full Redis command.",
        "HELP", "    Print this help.",
    };
    SendHelp(rb, kHelp);
    return;
  }
  SendUnknownSubcommand(rb, args[1], "COMMAND");
}

// SHUTDOWN [NOSAVE|SAVE] [NOW] [FORCE] [ABORT]
void CmdShutdown(CmdArgs args, ConnCmdContext& ctx) {
  ArgParser parser(args);
  while (parser.HasNext()) {
    if (!(parser.Check("NOSAVE") || parser.Check("SAVE") || parser.Check("NOW") ||
          parser.Check("FORCE"))) {
      if (parser.Check("ABORT")) return ctx.rb.SendError("ERR No shutdown in progress.");
      return ctx.SendStatus(OpStatus::kSyntaxError);
    }
  }
  // main() waits for SIGTERM and shuts down cleanly; like Redis, no reply on success.
  ctx.state.conn->RequestClose();
  kill(getpid(), SIGTERM);
}

CommandSpec Spec(std::string name, int arity, uint32_t flags, HandlerKind kind,
                 std::vector<std::string_view> cats, std::string_view summary) {
  CommandSpec s = MakeSpec(std::move(name), arity, flags, 0, 0, std::move(cats), "server", "",
                           summary);
  s.kind = kind;
  return s;
}

}  // namespace

void RegisterServerCommands(CommandRegistry* r) {
  CommandSpec s = Spec("dbsize", 1, kCmdReadOnly | kCmdFast, HandlerKind::kCoord,
                       {"keyspace", "read", "fast"}, "Returns the number of keys in the database.");
  s.coord_handler = CmdDbSize;
  s.tx_scope = TxScope::kAllShared;
  r->Register(std::move(s));
  s = Spec("flushdb", -1, kCmdWrite, HandlerKind::kCoord, {"keyspace", "write", "slow", "dangerous"},
           "Remove all keys from the current database.");
  s.coord_handler = CmdFlushDb;
  s.tx_scope = TxScope::kAllExclusive;
  r->Register(std::move(s));
  s = Spec("flushall", -1, kCmdWrite, HandlerKind::kCoord,
           {"keyspace", "write", "slow", "dangerous"}, "Removes all keys from all databases.");
  s.coord_handler = CmdFlushAll;
  s.tx_scope = TxScope::kAllExclusive;
  r->Register(std::move(s));
  s = Spec("time", 1, kCmdLoading | kCmdStale | kCmdFast, HandlerKind::kConn, {"fast"},
           "Returns the server time.");
  s.conn_handler = CmdTime;
  r->Register(std::move(s));
  s = Spec("config", -2, kCmdAdmin | kCmdNoScript | kCmdLoading | kCmdStale, HandlerKind::kCoord,
           {"admin", "slow", "dangerous"}, "A container for server configuration commands.");
  s.coord_handler = CmdConfigCoord;
  s.container = true;
  r->Register(std::move(s));
  s = Spec("command", -1, kCmdLoading | kCmdStale, HandlerKind::kConn, {"slow", "connection"},
           "Returns detailed information about all commands.");
  s.conn_handler = CmdCommand;
  s.container = true;
  r->Register(std::move(s));
  s = Spec("shutdown", -1, kCmdAdmin | kCmdNoScript | kCmdLoading | kCmdStale | kCmdNoMulti,
           HandlerKind::kConn, {"admin", "slow", "dangerous"},
           "Synchronously saves the database(s) to disk and shuts down the Redis server.");
  s.conn_handler = CmdShutdown;
  r->Register(std::move(s));
}

}  // namespace dashkv
