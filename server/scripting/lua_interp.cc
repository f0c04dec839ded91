#include "server/scripting/lua_interp.h"

#include <lua.hpp>

#include <cmath>
#include <cstdio>
#include <cstring>

#include "core/base/logging.h"
#include "core/sha1.h"
#include "server/scripting/lua_api.h"
#include "server/scripting/lua_convert.h"
#include "server/scripting/lua_libs.h"
#include "server/scripting/running_scripts.h"
#include "server/scripting/script_store.h"
#include "server/version.h"

namespace dashkv {

// Reaches the interpreter's private state from its C functions.
struct LuaInterpAccess {
  static LuaInterp* Of(lua_State* L) {
    return static_cast<LuaInterp*>(lua_touserdata(L, lua_upvalueindex(1)));
  }
  static ScriptHost* host(LuaInterp* in) { return in->host_; }
  static std::vector<std::string>& args(LuaInterp* in) { return in->call_args_; }
  static io::RespVersion& resp(LuaInterp* in) { return in->resp_; }
  static bool& aborted(LuaInterp* in) { return in->aborted_; }
  static bool killed(LuaInterp* in) { return in->KillRequested(); }
  static lua_State* co(LuaInterp* in) { return in->co_; }
  static int abort_ref(LuaInterp* in) { return in->abort_ref_; }
};

namespace lua_detail {

int RaiseErrorTable(lua_State* L, std::string_view msg) {
  PushErrorTable(L, msg);
  return lua_error(L);
}

int LuaLog(lua_State* L) {
  int argc = lua_gettop(L);
  if (argc < 2) return RaiseErrorTable(L, "ERR redis.log() requires two arguments or more.");
  if (!lua_isnumber(L, 1)) return RaiseErrorTable(L, "ERR First argument must be a number (log level).");
  int level = static_cast<int>(lua_tonumber(L, 1));
  if (level < 0 || level > 3) return RaiseErrorTable(L, "ERR Invalid debug level.");
  std::string line;
  for (int i = 2; i <= argc; ++i) {
    size_t len;
    const char* s = lua_tolstring(L, i, &len);
    if (s == nullptr) continue;
    if (!line.empty()) line.push_back(' ');
    line.append(s, len);
  }
  if (level == 3) {
    LOG(WARNING) << line;
  } else if (level == 2) {
    LOG(INFO) << line;
  }
  return 0;
}

int LuaNonexistentGlobal(lua_State* L) {
  const char* name = lua_tostring(L, 2);
  return luaL_error(L, "Script attempted to access nonexistent global variable '%s'",
                    name == nullptr ? "?" : name);
}

int LuaReadonly(lua_State* L) { return luaL_error(L, "Attempt to modify a readonly table"); }

void PushArray(lua_State* L, CmdArgs items) {
  lua_createtable(L, static_cast<int>(items.size()), 0);
  for (size_t i = 0; i < items.size(); ++i) {
    lua_pushlstring(L, items[i].data(), items[i].size());
    lua_rawseti(L, -2, static_cast<int>(i + 1));
  }
}

}  // namespace lua_detail

namespace {

constexpr std::string_view kKilledText = "ERR Script killed by user with SCRIPT KILL...";
// Instructions between two polls of the kill request (about 0.1-1 ms of Lua).
constexpr int kHookInstructions = 100000;
constexpr char kInterpKey[] = "dashkv.interp";

using A = LuaInterpAccess;
using lua_detail::LuaLog;
using lua_detail::LuaNonexistentGlobal;
using lua_detail::LuaReadonly;
using lua_detail::RaiseErrorTable;

// The Lua arguments of redis.call/pcall as command arguments; "" or the error text.
std::string_view CollectArgs(lua_State* L, std::vector<std::string>& out) {
  int n = lua_gettop(L);
  out.resize(n);
  if (n == 0) return "ERR Please specify at least one argument for this redis lib call";
  for (int i = 1; i <= n; ++i) {
    int t = lua_type(L, i);
    if (t == LUA_TNUMBER) {
      // Redis formats numbers with %.17g (3.0 -> "3", 0.1 -> "0.10000000000000001").
      char buf[64];
      int len = std::snprintf(buf, sizeof buf, "%.17g", lua_tonumber(L, i));
      out[i - 1].assign(buf, len);
    } else if (t == LUA_TSTRING) {
      size_t len;
      const char* s = lua_tolstring(L, i, &len);
      out[i - 1].assign(s, len);
    } else {
      return "ERR Lua redis lib command arguments must be strings or integers";
    }
  }
  return "";
}

// The first half of redis.call/pcall: hands the command to the host. Yields when the host
// runs it elsewhere; the reply is then read by CallResult.
int LuaCallCommand(lua_State* L) {
  LuaInterp* in = A::Of(L);
  io::ReplyBuilder& reply = in->call_reply();
  reply.Clear();
  reply.set_version(A::resp(in));
  if (A::aborted(in)) {  // a pcall caught the abort: stop again
    lua_rawgeti(L, LUA_REGISTRYINDEX, A::abort_ref(in));
    return lua_error(L);
  }
  if (A::killed(in)) return RaiseErrorTable(L, kKilledText);
  std::vector<std::string>& args = A::args(in);
  if (std::string_view err = CollectArgs(L, args); !err.empty()) {
    reply.SendError(err);
    return 0;
  }
  switch (A::host(in)->Call(args, reply)) {
    case ScriptHost::CallStatus::kReady:
      return 0;
    case ScriptHost::CallStatus::kYield:
      // Only the run's own coroutine can be suspended for a hop: a coroutine of the script's
      // would take the yield for its own.
      if (L != A::co(in)) {
        reply.Clear();
        reply.SendError("ERR This call needs another shard, which a script's own coroutine "
                        "cannot wait for; call it outside the coroutine");
        return 0;
      }
      return lua_yield(L, 0);
    case ScriptHost::CallStatus::kAbort:
      A::aborted(in) = true;
      lua_rawgeti(L, LUA_REGISTRYINDEX, A::abort_ref(in));
      return lua_error(L);
  }
  return 0;
}

// The second half of redis.call (upvalue 2 true) or redis.pcall: the reply as Lua values.
int LuaCallResult(lua_State* L) {
  LuaInterp* in = A::Of(L);
  const bool raise = lua_toboolean(L, lua_upvalueindex(2));
  std::string_view reply = in->call_reply().buffer();
  if (!reply.empty() && reply[0] == '-') {
    PushErrorReplyTable(L, reply);
    if (raise) return lua_error(L);
    return 1;
  }
  if (!PushReply(L, reply)) return RaiseErrorTable(L, "ERR reached lua stack limit");
  return 1;
}

int LuaErrorReply(lua_State* L) {
  if (lua_gettop(L) != 1 || lua_type(L, 1) != LUA_TSTRING) {
    PushErrorTable(L, "ERR wrong number or type of arguments");
    return 1;
  }
  size_t len;
  const char* s = lua_tolstring(L, 1, &len);
  std::string msg = s[0] == '-' ? std::string(s, len) : "-" + std::string(s, len);
  PushErrorReplyTable(L, msg);
  return 1;
}

int LuaStatusReply(lua_State* L) {
  if (lua_gettop(L) != 1 || lua_type(L, 1) != LUA_TSTRING) {
    PushErrorTable(L, "ERR wrong number or type of arguments");
    return 1;
  }
  lua_newtable(L);
  lua_pushvalue(L, 1);
  lua_setfield(L, -2, "ok");
  return 1;
}

int LuaSha1Hex(lua_State* L) {
  if (lua_gettop(L) != 1) return RaiseErrorTable(L, "ERR wrong number of arguments");
  size_t len;
  const char* s = lua_tolstring(L, 1, &len);
  std::string hex = Sha1Hex(s == nullptr ? std::string_view() : std::string_view(s, len));
  lua_pushlstring(L, hex.data(), hex.size());
  return 1;
}

int LuaSetResp(lua_State* L) {
  LuaInterp* in = A::Of(L);
  if (lua_gettop(L) != 1) return RaiseErrorTable(L, "ERR redis.setresp() requires one argument.");
  int v = static_cast<int>(lua_tonumber(L, 1));
  if (v != 2 && v != 3) return RaiseErrorTable(L, "ERR RESP version must be 2 or 3.");
  A::resp(in) = v == 3 ? io::RespVersion::kResp3 : io::RespVersion::kResp2;
  return 0;
}

int LuaSetRepl(lua_State* L) {
  if (lua_gettop(L) != 1) return RaiseErrorTable(L, "ERR redis.set_repl() requires one argument.");
  int flags = static_cast<int>(lua_tonumber(L, 1));
  if (flags < 0 || flags > 3) {
    return RaiseErrorTable(L, "ERR Invalid replication flags. Use REPL_AOF, REPL_REPLICA, "
                              "REPL_ALL or REPL_NONE.");
  }
  return 0;  // accepted: effects replication is the only mode (there are no replicas yet)
}

int LuaTrue(lua_State* L) {
  lua_pushboolean(L, 1);
  return 1;
}

int LuaFalse(lua_State* L) {
  lua_pushboolean(L, 0);
  return 1;
}

int LuaNothing(lua_State*) { return 0; }

int LuaAclCheckCmd(lua_State* L) {
  if (lua_gettop(L) < 1 || lua_type(L, 1) != LUA_TSTRING) {
    return RaiseErrorTable(L, "ERR Please specify at least one argument for this redis lib call");
  }
  LuaInterp* in = A::Of(L);
  std::vector<std::string> args;
  if (std::string_view err = CollectArgs(L, args); !err.empty()) return RaiseErrorTable(L, err);
  std::optional<bool> allowed = A::host(in)->AclAllows(args);
  if (!allowed) return RaiseErrorTable(L, "ERR Invalid command passed to redis.acl_check_cmd()");
  lua_pushboolean(L, *allowed ? 1 : 0);
  return 1;
}

// rawset that refuses the protected tables (upvalue 1: the set of them, upvalue 2: rawset).
int LuaGuardedRawset(lua_State* L) {
  lua_pushvalue(L, 1);
  lua_rawget(L, lua_upvalueindex(1));
  if (lua_toboolean(L, -1)) {
    lua_pushliteral(L, "Attempt to modify a readonly table");  // no position, as Redis
    return lua_error(L);
  }
  lua_pop(L, 1);
  lua_pushvalue(L, lua_upvalueindex(2));
  lua_insert(L, 1);
  lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
  return lua_gettop(L);
}

void SetCFunction(lua_State* L, const char* name, lua_CFunction fn, void* self) {
  lua_pushlightuserdata(L, self);
  lua_pushcclosure(L, fn, 1);
  lua_setfield(L, -2, name);
}

void SetNumber(lua_State* L, const char* name, double v) {
  lua_pushnumber(L, v);
  lua_setfield(L, -2, name);
}

void OpenLib(lua_State* L, lua_CFunction open, const char* name) {
  lua_pushcfunction(L, open);
  lua_pushstring(L, name);
  lua_call(L, 1, 0);
}

// Runs a chunk of setup code with `nargs` arguments from the stack; leaves `nres` results.
void RunSetupChunk(lua_State* L, const char* code, int nargs, int nres) {
  if (luaL_loadbuffer(L, code, std::strlen(code), "=redis") != 0) {
    LOG(FATAL) << "scripting setup: " << lua_tostring(L, -1);
  }
  lua_insert(L, -nargs - 1);
  lua_call(L, nargs, nres);
}

// The error handler (Redis's __redis__err__handler): a string error becomes {err = "ERR " ..
// msg}; the innermost frame of user code gives source and line. The abort marker passes
// unchanged. Arguments: debug.getinfo, the abort marker.
constexpr char kHandlerCode[] = R"lua(
local getinfo, abort_marker = ...
return function(err)
  if err == abort_marker then return err end
  if type(err) ~= 'table' then err = {err = 'ERR ' .. tostring(err)} end
  local level = 2
  while true do
    local i = getinfo(level, 'Sl')
    if i == nil then break end
    if i.what ~= 'C' and string.sub(i.source, 1, 6) == '@user_' then
      err['source'] = i.source
      err['line'] = i.currentline
      break
    end
    level = level + 1
  end
  return err
end
)lua";

// redis.call and redis.pcall: the command, then its reply (see the Design in the header).
constexpr char kCallWrappersCode[] = R"lua(
local run, call_result, pcall_result = ...
return function(...) run(...) return call_result() end,
       function(...) run(...) return pcall_result() end
)lua";

// The coroutine's body: the script (or function, with its arguments) under xpcall with the
// handler (LuaJIT's xpcall passes extra arguments on).
constexpr char kTrampolineCode[] = R"lua(
local xpcall, handler = ...
return function(f, ...) return xpcall(f, handler, ...) end
)lua";

}  // namespace

LuaInterp::LuaInterp(uint64_t generation) : generation_(generation) {
  L_ = luaL_newstate();
  CHECK(L_ != nullptr) << "cannot create a Lua state";
  lua_State* L = L_;
  // The interpreter always (LuaJIT's compiler would skip the count hook of busy scripts).
  luaJIT_setmode(L, 0, LUAJIT_MODE_ENGINE | LUAJIT_MODE_OFF);

  OpenLib(L, luaopen_base, "");
  OpenLib(L, luaopen_table, LUA_TABLIBNAME);
  OpenLib(L, luaopen_string, LUA_STRLIBNAME);
  OpenLib(L, luaopen_math, LUA_MATHLIBNAME);
  OpenLib(L, luaopen_debug, LUA_DBLIBNAME);  // for the error handler only; removed below
  OpenCjsonLib(L);
  OpenBitLib(L);
  OpenCmsgpackLib(L);
  OpenStructLib(L);
  InstallScriptRandom(L);

  // Lua 5.1 names Redis's interpreter has and LuaJIT's lacks, and the reverse.
  lua_getglobal(L, "math");
  lua_getfield(L, -1, "fmod");
  lua_setfield(L, -2, "mod");
  lua_pop(L, 1);
  lua_getglobal(L, "string");
  lua_getfield(L, -1, "gmatch");
  lua_setfield(L, -2, "gfind");
  lua_pop(L, 1);
  lua_getglobal(L, "table");
  lua_pushnil(L);
  lua_setfield(L, -2, "move");
  lua_pop(L, 1);

  // The abort marker: a unique table.
  lua_newtable(L);
  abort_ref_ = luaL_ref(L, LUA_REGISTRYINDEX);

  // The error handler, from debug.getinfo (debug itself is not left to scripts).
  lua_getglobal(L, "debug");
  lua_getfield(L, -1, "getinfo");
  lua_remove(L, -2);
  lua_rawgeti(L, LUA_REGISTRYINDEX, abort_ref_);
  RunSetupChunk(L, kHandlerCode, 2, 1);
  lua_pushvalue(L, -1);
  handler_ref_ = luaL_ref(L, LUA_REGISTRYINDEX);
  lua_setglobal(L, "__redis__err__handler");

  lua_getglobal(L, "xpcall");
  lua_rawgeti(L, LUA_REGISTRYINDEX, handler_ref_);
  RunSetupChunk(L, kTrampolineCode, 2, 1);
  trampoline_ref_ = luaL_ref(L, LUA_REGISTRYINDEX);

  for (const char* name : {"dofile", "loadfile", "print", "setfenv", "getfenv", "newproxy",
                           "debug", "module", "require", "jit", "package"}) {
    lua_pushnil(L);
    lua_setglobal(L, name);
  }

  // The redis table.
  lua_newtable(L);
  lua_pushlightuserdata(L, this);
  lua_pushcclosure(L, LuaCallCommand, 1);
  lua_pushlightuserdata(L, this);
  lua_pushboolean(L, 1);
  lua_pushcclosure(L, LuaCallResult, 2);
  lua_pushlightuserdata(L, this);
  lua_pushboolean(L, 0);
  lua_pushcclosure(L, LuaCallResult, 2);
  RunSetupChunk(L, kCallWrappersCode, 3, 2);
  lua_setfield(L, -3, "pcall");
  lua_setfield(L, -2, "call");
  SetCFunction(L, "error_reply", LuaErrorReply, this);
  SetCFunction(L, "status_reply", LuaStatusReply, this);
  SetCFunction(L, "sha1hex", LuaSha1Hex, this);
  SetCFunction(L, "log", LuaLog, this);
  SetCFunction(L, "setresp", LuaSetResp, this);
  SetCFunction(L, "set_repl", LuaSetRepl, this);
  SetCFunction(L, "replicate_commands", LuaTrue, this);
  SetCFunction(L, "breakpoint", LuaFalse, this);
  SetCFunction(L, "debug", LuaNothing, this);
  SetCFunction(L, "acl_check_cmd", LuaAclCheckCmd, this);
  SetNumber(L, "LOG_DEBUG", 0);
  SetNumber(L, "LOG_VERBOSE", 1);
  SetNumber(L, "LOG_NOTICE", 2);
  SetNumber(L, "LOG_WARNING", 3);
  SetNumber(L, "REPL_NONE", 0);
  SetNumber(L, "REPL_AOF", 1);
  SetNumber(L, "REPL_SLAVE", 2);
  SetNumber(L, "REPL_REPLICA", 2);
  SetNumber(L, "REPL_ALL", 3);
  lua_pushstring(L, kRedisVersion);
  lua_setfield(L, -2, "REDIS_VERSION");
  SetNumber(L, "REDIS_VERSION_NUM", kRedisVersionNum);
  lua_setglobal(L, "redis");

  // Protection. `protected` holds every read-only proxy (for rawset's guard).
  lua_newtable(L);
  const int protected_idx = lua_gettop(L);
  // Each library table becomes a proxy: reads fall through, writes fail.
  auto make_proxy = [&](int real_idx) {
    lua_newtable(L);  // the proxy
    lua_newtable(L);  // its metatable
    lua_pushvalue(L, real_idx);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, LuaReadonly);
    lua_setfield(L, -2, "__newindex");
    lua_pushboolean(L, 0);
    lua_setfield(L, -2, "__metatable");
    lua_setmetatable(L, -2);
    lua_pushvalue(L, -1);
    lua_pushboolean(L, 1);
    lua_rawset(L, protected_idx);
  };
  for (const char* lib : {"string", "math", "table", "coroutine", "bit", "cjson", "cmsgpack",
                          "struct", "redis"}) {
    lua_getglobal(L, lib);
    make_proxy(lua_gettop(L));
    lua_setglobal(L, lib);
    lua_pop(L, 1);
  }
  // The string metatable's __index is the real string table: hide the metatable.
  lua_pushliteral(L, "");
  if (lua_getmetatable(L, -1)) {
    lua_pushboolean(L, 0);
    lua_setfield(L, -2, "__metatable");
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
  // rawset that refuses proxies.
  lua_pushvalue(L, protected_idx);
  lua_getglobal(L, "rawset");
  lua_pushcclosure(L, LuaGuardedRawset, 2);
  lua_setglobal(L, "rawset");
  // The globals: the real table gets a metatable failing reads of missing names; scripts see
  // a proxy of it (also as _G), and so does code they load (the thread's globals).
  lua_pushvalue(L, LUA_GLOBALSINDEX);
  const int real_g = lua_gettop(L);
  lua_newtable(L);
  lua_pushcfunction(L, LuaNonexistentGlobal);
  lua_setfield(L, -2, "__index");
  lua_setmetatable(L, real_g);
  make_proxy(real_g);
  const int proxy_g = lua_gettop(L);
  lua_pushvalue(L, proxy_g);
  lua_setfield(L, real_g, "_G");
  lua_pushvalue(L, real_g);
  globals_ref_ = luaL_ref(L, LUA_REGISTRYINDEX);
  lua_pushvalue(L, proxy_g);
  lua_replace(L, LUA_GLOBALSINDEX);
  lua_settop(L, 0);

  lua_pushlightuserdata(L, this);
  lua_setfield(L, LUA_REGISTRYINDEX, kInterpKey);
  co_ = lua_newthread(L);
  co_ref_ = luaL_ref(L, LUA_REGISTRYINDEX);
  lua_sethook(co_, CountHook, LUA_MASKCOUNT, kHookInstructions);
  SetupFunctionSupport();
}

bool LuaInterp::KillRequested() {
  if (killed_) return true;
  if (slot_ == nullptr || slot_->kill.load(std::memory_order_relaxed) == RunSlot::kNone) {
    return false;
  }
  killed_ = true;
  lua_sethook(co_, CountHook, LUA_MASKCOUNT, 1);
  return true;
}

void LuaInterp::CountHook(lua_State* L, lua_Debug* ar) {
  lua_getfield(L, LUA_REGISTRYINDEX, kInterpKey);
  auto* in = static_cast<LuaInterp*>(lua_touserdata(L, -1));
  lua_pop(L, 1);
  if (in == nullptr) return;
  // Past busy-reply-threshold: serves the thread's clients (until a kill unwinds the run).
  if (in->slot_ != nullptr && !in->killed_) in->slot_->owner->OnHook(*in->slot_);
  if (!in->KillRequested()) return;
  // Only inside user code: the error handler and the call wrappers must run to report it.
  if (lua_getinfo(L, "S", ar) == 0 || std::strncmp(ar->source, "@user_", 6) != 0) return;
  PushErrorTable(L, kKilledText);
  lua_error(L);
}

LuaInterp::~LuaInterp() { lua_close(L_); }

size_t LuaInterp::memory() const {
  return static_cast<size_t>(lua_gc(L_, LUA_GCCOUNT, 0)) * 1024 + lua_gc(L_, LUA_GCCOUNTB, 0);
}

std::string LuaInterp::Load(const StoredScript& script) {
  if (functions_.contains(script.sha)) return "";
  // The shebang line is not Lua: compile from its newline, so line numbers stay the file's.
  std::string_view body = script.body;
  if (script.flags.shebang) {
    size_t eol = body.find('\n');
    body = eol == std::string_view::npos ? std::string_view() : body.substr(eol);
  }
  lua_State* L = L_;
  if (luaL_loadbuffer(L, body.data(), body.size(), "@user_script") != 0) {
    std::string err = "Error compiling script (new function): ";
    size_t len;
    const char* msg = lua_tolstring(L, -1, &len);
    err.append(msg == nullptr ? "" : std::string_view(msg, len));
    lua_pop(L, 1);
    return err;
  }
  functions_.emplace(script.sha, luaL_ref(L, LUA_REGISTRYINDEX));
  return "";
}

namespace {

void SetArrayGlobal(lua_State* L, int globals_ref, const char* name, CmdArgs items) {
  lua_rawgeti(L, LUA_REGISTRYINDEX, globals_ref);
  lua_detail::PushArray(L, items);
  lua_setfield(L, -2, name);  // the real table has no __newindex
  lua_pop(L, 1);
}

}  // namespace

void LuaInterp::BeginRun(std::string_view name, ScriptHost* host) {
  DCHECK(!running_);
  host_ = host;
  sha_.assign(name);
  aborted_ = false;
  if (killed_) lua_sethook(co_, CountHook, LUA_MASKCOUNT, kHookInstructions);
  killed_ = false;
  running_ = true;
  resp_ = io::RespVersion::kResp2;
  lua_settop(co_, 0);
  lua_rawgeti(co_, LUA_REGISTRYINDEX, trampoline_ref_);
}

LuaInterp::RunStatus LuaInterp::Start(std::string_view sha, CmdArgs keys, CmdArgs argv,
                                      ScriptHost* host) {
  SetArrayGlobal(L_, globals_ref_, "KEYS", keys);
  SetArrayGlobal(L_, globals_ref_, "ARGV", argv);
  BeginRun(sha, host);
  auto it = functions_.find(sha_);
  DCHECK(it != functions_.end());
  lua_rawgeti(co_, LUA_REGISTRYINDEX, it->second);
  return Continue(1);
}

LuaInterp::RunStatus LuaInterp::Resume() { return Continue(0); }

LuaInterp::RunStatus LuaInterp::Continue(int nargs) {
  int status = lua_resume(co_, nargs);
  if (status == LUA_YIELD) return RunStatus::kYield;
  running_ = false;
  if (status != 0) {
    // Only an error outside xpcall's reach (out of memory in the trampoline): report it.
    const char* msg = lua_tostring(co_, -1);
    lua_settop(co_, 0);
    lua_pushboolean(co_, 0);
    PushErrorTable(co_, std::string("ERR ") + (msg == nullptr ? "script failed" : msg));
  }
  return RunStatus::kDone;
}

void LuaInterp::SendResult(io::ReplyBuilder& out) {
  lua_State* co = co_;
  // The trampoline returned xpcall's results: true and the script's values, or false and the
  // handler's error table.
  if (lua_toboolean(co, 1)) {
    if (lua_gettop(co) >= 2) {
      lua_settop(co, 2);
      SendLuaValue(co, out, resp_);
    } else {
      out.SendNull();
    }
  } else {
    lua_settop(co, 2);
    SendScriptError(co, out, sha_);
  }
  lua_settop(co, 0);
}

void LuaInterp::Reset() {
  if (!running_) return;
  // A suspended coroutine cannot be restarted: replace it.
  luaL_unref(L_, LUA_REGISTRYINDEX, co_ref_);
  co_ = lua_newthread(L_);
  co_ref_ = luaL_ref(L_, LUA_REGISTRYINDEX);
  lua_sethook(co_, CountHook, LUA_MASKCOUNT, kHookInstructions);
  killed_ = false;
  running_ = false;
}

}  // namespace dashkv
