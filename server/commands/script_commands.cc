// EVAL, EVALSHA, EVAL_RO, EVALSHA_RO, FCALL, FCALL_RO and SCRIPT (LOAD, EXISTS, FLUSH, KILL,
// HELP): Lua scripts and functions
// run by server/scripting/script_runner.h over the server's script cache
// (server/scripting/script_store.h) and function libraries (function_store.h).
#include "core/sha1.h"
#include "core/str_util.h"
#include "server/cmd_context.h"
#include "server/scripting/lua_interp.h"
#include "server/scripting/script_runner.h"
#include "server/scripting/script_store.h"

namespace dashkv {

namespace {

using boost::asio::awaitable;

awaitable<void> CmdEval(CmdArgs args, ConnCmdContext& ctx) {
  co_await ctx.services().scripting.Eval(args, ctx, /*by_sha=*/false, /*read_only=*/false);
}

awaitable<void> CmdEvalSha(CmdArgs args, ConnCmdContext& ctx) {
  co_await ctx.services().scripting.Eval(args, ctx, /*by_sha=*/true, /*read_only=*/false);
}

awaitable<void> CmdEvalRo(CmdArgs args, ConnCmdContext& ctx) {
  co_await ctx.services().scripting.Eval(args, ctx, /*by_sha=*/false, /*read_only=*/true);
}

awaitable<void> CmdEvalShaRo(CmdArgs args, ConnCmdContext& ctx) {
  co_await ctx.services().scripting.Eval(args, ctx, /*by_sha=*/true, /*read_only=*/true);
}

awaitable<void> CmdFCall(CmdArgs args, ConnCmdContext& ctx) {
  co_await ctx.services().scripting.FCall(args, ctx, /*read_only=*/false);
}

awaitable<void> CmdFCallRo(CmdArgs args, ConnCmdContext& ctx) {
  co_await ctx.services().scripting.FCall(args, ctx, /*read_only=*/true);
}

// SCRIPT LOAD script: stores and compiles it (a compile error is the reply).
void ScriptLoad(CmdArgs args, ConnCmdContext& ctx) {
  ScriptStore& store = ctx.services().scripts;
  std::string err;
  std::string sha = Sha1Hex(args[2]);
  std::shared_ptr<const StoredScript> script = store.Add(sha, args[2], &err);
  if (script == nullptr) return ctx.rb.SendError("ERR " + err);
  err = ScriptRunner::Compile(*script, store.generation());
  if (!err.empty()) return ctx.rb.SendError("ERR " + err);
  ctx.rb.SendBulk(sha);
}

// SCRIPT EXISTS sha [sha ...]
void ScriptExists(CmdArgs args, ConnCmdContext& ctx) {
  ScriptStore& store = ctx.services().scripts;
  ctx.rb.StartArray(args.size() - 2);
  for (size_t i = 2; i < args.size(); ++i) ctx.rb.SendLong(store.Find(args[i]) != nullptr);
}

// SCRIPT FLUSH [ASYNC|SYNC]
void ScriptFlush(CmdArgs args, ConnCmdContext& ctx) {
  if (args.size() > 3 ||
      (args.size() == 3 && !EqualsIgnoreCase(args[2], "sync") &&
       !EqualsIgnoreCase(args[2], "async"))) {
    return ctx.rb.SendError("ERR SCRIPT FLUSH only support SYNC|ASYNC option");
  }
  ctx.services().scripts.Flush();
  ctx.rb.SendOk();
}

// SCRIPT KILL: stops the script running for longer than busy-reply-threshold, unless it wrote.
void ScriptKill(CmdArgs, ConnCmdContext& ctx) {
  ctx.services().scripting.Kill(/*function=*/false, ctx);
}

void ScriptHelp(CmdArgs, ConnCmdContext& ctx) {
  static constexpr std::string_view kHelp[] = {
      "SCRIPT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "EXISTS <sha1> [<sha1> ...]",
      "    Return information about the existence of the scripts in the script cache.",
      "FLUSH [ASYNC|SYNC]",
      "    Flush the Lua scripts cache. Very dangerous on replicas.",
      "    When called without the optional mode argument, the behavior is determined by the",
      "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
      "    * ASYNC: Asynchronously flush the scripts cache.",
      "    * SYNC: Synchronously flush the scripts cache.",
      "KILL",
      "    Kill the currently executing Lua script.",
      "LOAD <script>",
      "    Load a script into the scripts cache without executing it.",
      "HELP",
      "    Print this help.",
  };
  SendHelp(ctx.rb, kHelp);
}

// The key spec Redis gives the EVAL and FCALL families: the declared keys may be read or
// written (only read by the _RO forms); EVALSHA and EVALSHA_RO carry no notes.
KeySpec EvalKeySpec(std::string_view name, bool read_only) {
  const bool notes = name.find("sha") == std::string_view::npos;
  if (read_only) {
    return KeySpec::KeyNum(
        {"RO", "access"}, 2,
        notes ? "We cannot tell how the keys will be used so we assume the worst, RO and ACCESS"
              : "");
  }
  return KeySpec::KeyNum(
      {"RW", "access", "update"}, 2,
      notes ? "We cannot tell how the keys will be used so we assume the worst, RW and UPDATE"
            : "");
}

CommandSpec EvalSpec(std::string name, uint32_t extra_flags, CoordHandler handler,
                     std::string_view since, std::string_view summary) {
  CommandSpec s = MakeSpec(
      std::move(name), -3,
      kCmdNoScript | kCmdStale | kCmdSkipMonitor | kCmdNoMandatoryKeys | extra_flags, 0, 0,
      {"slow", "scripting"}, "scripting", since, summary);
  s.numkeys_index = 2;
  s.key_specs.push_back(EvalKeySpec(s.name, (extra_flags & kCmdReadOnly) != 0));
  s.tx_scope = TxScope::kScript;
  return WithCoordHandler(std::move(s), handler);
}

std::vector<CommandSpec> ScriptSubcommands() {
  const std::vector<std::string_view> kCats = {"slow", "scripting"};
  std::vector<CommandSpec> subs;
  subs.push_back(WithConnHandler(
      MakeSubcommand("exists", -3, kCmdNoScript, kCats, "2.6.0",
                     "Determines whether server-side Lua scripts exist in the script cache."),
      ScriptExists));
  subs.push_back(WithConnHandler(
      MakeSubcommand("flush", -2, kCmdNoScript, kCats, "2.6.0",
                     "Removes all server-side Lua scripts from the script cache."),
      ScriptFlush));
  subs.push_back(WithConnHandler(
      MakeSubcommand("help", 2, kCmdLoading | kCmdStale, kCats, "5.0.0",
                     "Returns helpful text about the different subcommands."),
      ScriptHelp));
  subs.push_back(WithConnHandler(
      MakeSubcommand("kill", 2, kCmdNoScript | kCmdAllowBusy, kCats, "2.6.0",
                     "Terminates a server-side Lua script during execution."),
      ScriptKill));
  subs.push_back(WithConnHandler(
      MakeSubcommand("load", 3, kCmdNoScript | kCmdStale, kCats, "2.6.0",
                     "Loads a server-side Lua script to the script cache."),
      ScriptLoad));
  return subs;
}

}  // namespace

void RegisterScriptCommands(CommandRegistry* r) {
  // EVAL, EVALSHA and FCALL may write: Redis flags them may_replicate (CLIENT PAUSE WRITE
  // holds them); the _RO forms are not.
  CommandSpec eval = EvalSpec("eval", kCmdMayReplicate, CmdEval, "2.6.0",
                              "Executes a server-side Lua script.");
  eval.shard_route = ScriptRunner::RouteEval;
  eval.shard_handler = ScriptRunner::EvalOnShard;
  eval.locks_all_shards = ScriptRunner::EvalLocksAllShards;
  r->Register(std::move(eval));
  CommandSpec evalsha = EvalSpec("evalsha", kCmdMayReplicate, CmdEvalSha, "2.6.0",
                                 "Executes a server-side Lua script by SHA1 digest.");
  evalsha.shard_route = ScriptRunner::RouteEvalSha;
  evalsha.shard_handler = ScriptRunner::EvalShaOnShard;
  evalsha.locks_all_shards = ScriptRunner::EvalShaLocksAllShards;
  r->Register(std::move(evalsha));
  CommandSpec eval_ro = EvalSpec("eval_ro", kCmdReadOnly, CmdEvalRo, "7.0.0",
                                 "Executes a read-only server-side Lua script.");
  eval_ro.shard_route = ScriptRunner::RouteEval;
  eval_ro.shard_handler = ScriptRunner::EvalOnShard;
  eval_ro.locks_all_shards = ScriptRunner::EvalLocksAllShards;
  r->Register(std::move(eval_ro));
  CommandSpec evalsha_ro = EvalSpec("evalsha_ro", kCmdReadOnly, CmdEvalShaRo, "7.0.0",
                                    "Executes a read-only server-side Lua script by SHA1 digest.");
  evalsha_ro.shard_route = ScriptRunner::RouteEvalSha;
  evalsha_ro.shard_handler = ScriptRunner::EvalShaOnShard;
  evalsha_ro.locks_all_shards = ScriptRunner::EvalShaLocksAllShards;
  r->Register(std::move(evalsha_ro));
  CommandSpec fcall =
      EvalSpec("fcall", kCmdMayReplicate, CmdFCall, "7.0.0", "Invokes a function.");
  fcall.shard_route = ScriptRunner::RouteFCall;
  fcall.shard_handler = ScriptRunner::FCallOnShard;
  fcall.locks_all_shards = ScriptRunner::FCallLocksAllShards;
  r->Register(std::move(fcall));
  CommandSpec fcall_ro = EvalSpec("fcall_ro", kCmdReadOnly, CmdFCallRo, "7.0.0",
                                  "Invokes a read-only function.");
  fcall_ro.shard_route = ScriptRunner::RouteFCall;
  fcall_ro.shard_handler = ScriptRunner::FCallOnShard;
  fcall_ro.locks_all_shards = ScriptRunner::FCallLocksAllShards;
  r->Register(std::move(fcall_ro));
  CommandSpec s = MakeSpec("script", -2, 0, 0, 0, {"slow"}, "scripting", "2.6.0",
                           "A container for Lua scripts management commands.");
  s.kind = HandlerKind::kConn;
  s.subcommands = ScriptSubcommands();
  r->Register(std::move(s));
}

}  // namespace dashkv
