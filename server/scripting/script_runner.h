// ScriptRunner: runs EVAL-family scripts atomically across shards.
// Thread: the connection's thread (Eval); script code runs on the shard that owns the keys or
// on the connection's thread, each in a Lua state of that thread's pool.
//
// Design
//   A script is one transaction: nothing else sees it half run. How it runs depends on its
//   declared keys (KEYS):
//   - The first run of a script (or function) with declared keys locks every shard and runs
//     as a coordinator (below), noting whether any call went outside its declared keys — to a
//     key on another shard, or a multi-shard or global command. If none did, its later runs
//     take the paths below; if one did, they all lock every shard.
//   - Pipelined EVAL, EVALSHA (or FCALL) of such a script whose keys share a shard joins the
//     batch's per-shard groups (RouteEval, EvalOnShard ...): it runs on the shard as the
//     one-shard case below, without a hop of its own; a run that still goes outside fails
//     there, asking for a rerun.
//   - One shard owns them all (always, with --threads 1): the script runs on that shard's
//     thread from start to end, as one synchronous step, after the transactions that hold or
//     await its keys (a transient lock request, as a one-shard EXEC) and with no lock taken.
//     Its calls to keys of that shard run inline. A call needing another shard (or a command
//     that must hop: a multi-shard or global one) aborts the run: see below.
//   - Several shards, or no declared key, or a script known to touch undeclared keys: the
//     script runs on the connection's thread as a coordinator holding intent locks — its keys
//     (exclusive; shared for read-only scripts), or every shard when it declares none — and
//     each call to another shard suspends the script (a Lua yield) for one hop.
//   A later run that goes outside after all (its keys depend on data) aborts: it is rerun at
//   once with every shard locked when it had not written anything yet (its reads are thrown
//   away); when it had, it fails with an error, since writes cannot be undone. Either way the
//   script is marked, and its later runs lock every shard from the start (INFO counts such
//   runs). Undeclared keys on the script's own shard are fine unless a
//   transaction holds them at that moment (which also aborts).
//   Inside MULTI/EXEC a script runs under the EXEC's locks and cannot take more: they hold its
//   declared keys when it is known to keep to them, else every shard (its first run there
//   learns, as above).
#pragma once

#include <utility>  // before asio: awaitable.hpp uses std::exchange

#include <boost/asio/awaitable.hpp>
#include <atomic>
#include <memory>
#include <optional>
#include <string>

#include "server/cmd_args.h"
#include "server/scripting/running_scripts.h"
#include "server/services.h"

namespace dashkv {

class ConnCmdContext;
class PipelineRunner;
class ShardCmdContext;
class KeyLocks;
class LuaInterp;
class ScriptHost;
struct FunctionInfo;
struct FunctionLibrary;
struct ScriptFlags;
struct StoredScript;

// What a run executes: an EVAL script or a function (exactly one is set).
struct ScriptCallee {
  std::shared_ptr<const StoredScript> script;
  std::shared_ptr<const FunctionInfo> function;

  const ScriptFlags& flags() const;
  std::atomic<uint8_t>& key_mode() const;  // ScriptKeyMode
};

class ScriptRunner {
 public:
  ScriptRunner(const ServerServices& services, PipelineRunner& runner);

  // EVAL script numkeys key... arg... (`by_sha`: EVALSHA; `read_only`: the _RO forms).
  boost::asio::awaitable<void> Eval(CmdArgs args, ConnCmdContext& ctx, bool by_sha,
                                    bool read_only);

  // FCALL function numkeys key... arg... (`read_only`: FCALL_RO).
  boost::asio::awaitable<void> FCall(CmdArgs args, ConnCmdContext& ctx, bool read_only);

  // Compiles `script` in a Lua state of this thread (SCRIPT LOAD); returns "" or the error.
  static std::string Compile(const StoredScript& script, uint64_t generation);

  // Reads the metadata of lib->code and runs it in a Lua state of this thread as FUNCTION
  // LOAD does, filling lib->name and lib->functions; returns "" or Redis's error text.
  static std::string LoadLibrary(FunctionLibrary* lib);

  // A pipelined EVALSHA / EVALSHA_RO joins the per-shard groups of its batch when its script
  // is known to stay within its declared keys and they share a shard: returns that shard, or
  // nullopt (then it runs as a coordinator command). CommandSpec::shard_route.
  static std::optional<unsigned> RouteEvalSha(CmdArgs args, const ServerServices& services);
  static std::optional<unsigned> RouteEval(CmdArgs args, const ServerServices& services);
  // Whether a call queued in MULTI locks every shard (CommandSpec::locks_all_shards): its
  // script is new or not known to keep to its declared keys.
  static bool EvalLocksAllShards(CmdArgs args, const ServerServices& services);
  static bool EvalShaLocksAllShards(CmdArgs args, const ServerServices& services);
  static bool FCallLocksAllShards(CmdArgs args, const ServerServices& services);
  // The same for FCALL / FCALL_RO.
  static std::optional<unsigned> RouteFCall(CmdArgs args, const ServerServices& services);
  // Run such a call on its shard (the specs' shard handlers).
  static void EvalShaOnShard(CmdArgs args, ShardCmdContext& ctx);
  static void EvalOnShard(CmdArgs args, ShardCmdContext& ctx);
  static void FCallOnShard(CmdArgs args, ShardCmdContext& ctx);

  // SCRIPT KILL (`function` false) or FUNCTION KILL: replies as Redis does.
  void Kill(bool function, ConnCmdContext& ctx);
  // Stops every running script, written or not (SHUTDOWN).
  void KillAll() { running_.KillAll(); }
  // The running scripts: Dispatch asks them whether a command gets -BUSY.
  const RunningScripts& running() const { return running_; }

  // Bytes of the idle Lua states of every thread (INFO used_memory_lua).
  static size_t LuaMemory();

 private:
  // The shared part of EvalShaOnShard and FCallOnShard.
  static void RunCalleeOnShard(ShardCmdContext& ctx, const ScriptCallee& callee, CmdArgs keys,
                               CmdArgs argv);
  // Runs the script as a coordinator under `locks` (nullptr: the server has one shard);
  // returns true when it must run again with every shard locked (it touched an undeclared key
  // before writing anything).
  // With `learn` (a first run under every shard's lock), records whether any call went outside
  // the declared keys (their one shard, or the keys themselves) into callee.key_mode().
  boost::asio::awaitable<bool> RunAsCoordinator(ConnCmdContext& ctx, const ScriptCallee& callee,
                                                bool read_only, CmdArgs keys, CmdArgs argv,
                                                KeyLocks* locks, bool may_rerun,
                                                uint64_t generation, bool learn = false);
  // Runs `callee` with its keys and arguments (the shared part of Eval and FCall).
  boost::asio::awaitable<void> Run(ConnCmdContext& ctx, const ScriptCallee& callee,
                                   bool read_only, CmdArgs keys, CmdArgs argv);

  const ServerServices& services_;
  PipelineRunner& runner_;
  RunningScripts running_;
};

}  // namespace dashkv
