// LuaInterp: one Lua state (LuaJIT, the Lua 5.1 API) set up as Redis 7.0 sets up its script
// interpreter — the same globals and libraries (cjson, cmsgpack, bit, struct), the `redis`
// table, protected globals — and the runs of compiled scripts in it, with the conversions
// between RESP replies and Lua values that Redis documents.
// Thread: engine-local. A state runs one script at a time; a thread keeps a small pool of them
// (server/scripting/script_runner.h), so a script suspended in a hop does not block others.
//
// Design
//   A script runs in a Lua coroutine (one reusable thread per state) as
//   xpcall(script, __redis__err__handler). redis.call and redis.pcall are small Lua wrappers
//   around two C functions: the first hands the command to the ScriptHost, which either runs
//   it at once (its keys are on the shard running the script) or asks the coroutine to yield
//   while the executor hops to another shard (LuaJIT yields across pcall); the second turns the
//   reply, by then in call_reply(), into Lua values (raising for redis.call's errors). So the
//   same script code runs inline on a shard or as a coordinator, and errors get Redis's
//   "script: <sha>, on @user_script:<line>." suffix from the handler, which records the line
//   of the innermost user-script frame.
//   Globals: scripts and code they load see a proxy of the globals table whose reads fall
//   through to it and whose writes fail ("Attempt to modify a readonly table"); reading a
//   global that does not exist fails as in Redis. Library tables are read-only proxies too.
#pragma once

#include <absl/container/flat_hash_map.h>

#include <optional>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "io/reply_builder.h"
#include "server/cmd_args.h"

struct lua_State;
struct lua_Debug;

namespace dashkv {

struct FunctionInfo;
struct FunctionLibrary;
struct RunSlot;
struct StoredScript;
class FunctionStore;

// What a running script's redis.call asks of the executor that runs it.
class ScriptHost {
 public:
  enum class CallStatus {
    kReady,  // the reply is in the reply builder
    kYield,  // suspend the script; the executor resumes it with the reply
    kAbort,  // stop the script (the executor runs it again another way, or fails it)
  };
  virtual ~ScriptHost() = default;
  // Runs the command `args` (name first) for the script, replying into `reply` (whose RESP
  // version is the script's, see redis.setresp).
  virtual CallStatus Call(std::span<const std::string> args, io::ReplyBuilder& reply) = 0;
  // Returns whether the script's caller may run `args` (redis.acl_check_cmd), or nullopt when
  // it names no command.
  virtual std::optional<bool> AclAllows(std::span<const std::string> args) const = 0;
};

class LuaInterp {
 public:
  enum class RunStatus { kDone, kYield };

  // `generation`: the ScriptStore generation the state belongs to (dropped when it changes).
  explicit LuaInterp(uint64_t generation);
  ~LuaInterp();
  LuaInterp(const LuaInterp&) = delete;
  LuaInterp& operator=(const LuaInterp&) = delete;

  uint64_t generation() const { return generation_; }

  // Compiles `script` unless it already is; returns "" or Redis's error text.
  std::string Load(const StoredScript& script);

  // Starts a run of the loaded script `sha` with KEYS = keys and ARGV = argv, calling commands
  // through `host`. Until kDone, Resume() continues it after each kYield.
  RunStatus Start(std::string_view sha, CmdArgs keys, CmdArgs argv, ScriptHost* host);

  // Functions (server/scripting/lua_functions.cc).
  // Runs the code of `lib` (its metadata line already parsed into lib->name) as FUNCTION LOAD
  // does, filling lib->functions; with `keep`, the callbacks become this state's functions.
  // Returns "" or Redis's error text.
  std::string LoadLibrary(FunctionLibrary* lib, bool keep);
  // Makes this state's functions those of `store` (loads every library again when the store
  // changed since the last call).
  void SyncFunctions(const FunctionStore& store);
  // Starts a run of function `fn` (SyncFunctions ran) with its keys and arguments.
  RunStatus StartFunction(const FunctionInfo& fn, CmdArgs keys, CmdArgs argv, ScriptHost* host);
  RunStatus Resume();
  // The slot of the run about to start (SCRIPT KILL asks through it), or nullptr.
  void set_run_slot(RunSlot* slot) { slot_ = slot; }
  // After kDone: whether a call asked to abort (ScriptHost::kAbort) during the run.
  bool aborted() const { return aborted_; }
  // After kDone (and not aborted): sends the script's result, or its error, to `out`.
  void SendResult(io::ReplyBuilder& out);
  // Drops a run that yielded and will not be resumed, so the state can be reused.
  void Reset();

  // The pending call of a yielded run: its arguments, and where its reply goes.
  io::ReplyBuilder& call_reply() { return call_reply_; }

  // Bytes the Lua state uses.
  size_t memory() const;

 private:
  friend struct LuaInterpAccess;
  friend struct LuaFunctionsAccess;

  RunStatus Continue(int nargs);
  // Begins a run: the current-run fields, then the trampoline on the coroutine's stack.
  void BeginRun(std::string_view name, ScriptHost* host);
  void SetupFunctionSupport();
  // The count hook: stops a run whose slot asks for it (see KillRequested).
  static void CountHook(lua_State* L, lua_Debug* ar);
  // Returns whether the run must stop now (SCRIPT KILL, SHUTDOWN NOSAVE); then every further
  // instruction of user code raises the kill error, so pcall cannot keep it running.
  bool KillRequested();

  lua_State* L_ = nullptr;
  lua_State* co_ = nullptr;  // the coroutine scripts run in
  int co_ref_ = -1;
  int globals_ref_ = -1;  // the real globals table
  int handler_ref_ = -1;  // __redis__err__handler
  int trampoline_ref_ = -1;
  int abort_ref_ = -1;    // the error value that stops an aborted run
  uint64_t generation_;
  absl::flat_hash_map<std::string, int> functions_;  // sha -> registry ref

  // Functions: name -> callback table, the load-time `redis` table, and the library being
  // loaded (redis.register_function adds to it).
  int fcall_table_ref_ = -1;
  int load_api_ref_ = -1;
  uint64_t fcall_generation_ = ~uint64_t{0};
  FunctionLibrary* loading_ = nullptr;
  bool loading_keep_ = false;

  // The current run.
  ScriptHost* host_ = nullptr;
  std::string sha_;
  bool aborted_ = false;
  bool killed_ = false;
  RunSlot* slot_ = nullptr;
  bool running_ = false;
  io::RespVersion resp_ = io::RespVersion::kResp2;  // redis.setresp
  std::vector<std::string> call_args_;
  io::ReplyBuilder call_reply_;
};

}  // namespace dashkv
