// LuaInterp's function libraries (FUNCTION LOAD, FCALL): loading a library's code with the
// restricted API Redis 7.0 gives it, redis.register_function, and running a function.
//
// A library's code runs with an environment of its own whose reads, while it loads, see only
// `redis` (register_function, log, the LOG_ levels, the version) and fail for any other name
// as Redis's do; once loaded, the same environment reads the ordinary protected globals, so the
// functions it registered (closures that keep that environment) see everything a script sees.
#include <lua.hpp>

#include <string>

#include "server/scripting/function_store.h"
#include "server/scripting/lua_api.h"
#include "server/scripting/lua_convert.h"
#include "server/scripting/lua_interp.h"
#include "server/version.h"

namespace dashkv {

struct LuaFunctionsAccess {
  static LuaInterp* Of(lua_State* L) {
    return static_cast<LuaInterp*>(lua_touserdata(L, lua_upvalueindex(1)));
  }
  static FunctionLibrary* loading(LuaInterp* in) { return in->loading_; }
  static bool keep(LuaInterp* in) { return in->loading_keep_; }
  static int fcall_table_ref(LuaInterp* in) { return in->fcall_table_ref_; }
};

namespace {

using F = LuaFunctionsAccess;
using lua_detail::RaiseErrorTable;

constexpr std::string_view kBadName =
    "ERR Library names can only contain letters, numbers, or underscores(_) and must be at "
    "least one character long";

// Reads the flags table at `idx` into `flags`; false on an unknown flag.
bool ReadFlags(lua_State* L, int idx, ScriptFlags* flags) {
  flags->shebang = true;
  lua_pushnil(L);
  while (lua_next(L, idx) != 0) {
    size_t len;
    const char* s = lua_type(L, -1) == LUA_TSTRING ? lua_tolstring(L, -1, &len) : nullptr;
    std::string_view f = s == nullptr ? std::string_view() : std::string_view(s, len);
    lua_pop(L, 1);
    if (!SetScriptFlag(f, flags)) {
      lua_pop(L, 1);  // the key
      return false;
    }
  }
  return true;
}

// redis.register_function(name, callback) or redis.register_function{function_name=...,
// callback=..., flags={...}, description=...}, while a library loads.
int LuaRegisterFunction(lua_State* L) {
  LuaInterp* in = F::Of(L);
  FunctionLibrary* lib = F::loading(in);
  if (lib == nullptr) return RaiseErrorTable(L, "ERR redis.register_function can only be called "
                                                "while a library loads");
  auto fn = std::make_shared<FunctionInfo>();
  fn->flags.shebang = true;
  fn->library = lib->name;
  int argc = lua_gettop(L);
  int callback_idx = 0;
  if (argc == 1) {
    if (lua_type(L, 1) != LUA_TTABLE) {
      return RaiseErrorTable(L, "ERR calling redis.register_function with a single argument is "
                                "only applicable to Lua table (representing named arguments).");
    }
    // The named arguments: function_name, callback, flags, description.
    lua_pushnil(L);
    while (lua_next(L, 1) != 0) {
      size_t len = 0;
      const char* k = lua_type(L, -2) == LUA_TSTRING ? lua_tolstring(L, -2, &len) : nullptr;
      std::string_view key = k == nullptr ? std::string_view() : std::string_view(k, len);
      const int type = lua_type(L, -1);
      if (key == "function_name" && type == LUA_TSTRING) {
        fn->name = lua_tostring(L, -1);
      } else if (key == "callback" && type == LUA_TFUNCTION) {
        // read after the walk
      } else if (key == "flags" && type == LUA_TTABLE) {
        if (!ReadFlags(L, lua_gettop(L), &fn->flags)) {
          return RaiseErrorTable(L, "ERR unknown flag given");
        }
      } else if (key == "description" && type == LUA_TSTRING) {
        fn->description = std::string(lua_tostring(L, -1));
      } else {
        return RaiseErrorTable(L, "ERR unknown argument given to redis.register_function");
      }
      lua_pop(L, 1);
    }
    if (fn->name.empty()) {
      return RaiseErrorTable(L, "ERR redis.register_function must get a function name argument");
    }
    lua_getfield(L, 1, "callback");
    if (lua_type(L, -1) != LUA_TFUNCTION) {
      return RaiseErrorTable(L, "ERR redis.register_function must get a callback argument");
    }
    callback_idx = lua_gettop(L);
  } else if (argc == 2) {
    if (lua_type(L, 1) != LUA_TSTRING) {
      return RaiseErrorTable(L, "ERR first argument to redis.register_function must be a string");
    }
    if (lua_type(L, 2) != LUA_TFUNCTION) {
      return RaiseErrorTable(L, "ERR second argument to redis.register_function must be a "
                                "function");
    }
    fn->name = lua_tostring(L, 1);
    callback_idx = 2;
  } else {
    return RaiseErrorTable(L, "ERR wrong number of arguments to redis.register_function");
  }
  if (!ValidFunctionName(fn->name)) return RaiseErrorTable(L, kBadName);
  for (const auto& f : lib->functions) {
    if (f->name == fn->name) return RaiseErrorTable(L, "ERR Function already exists in the library");
  }
  if (F::keep(in)) {
    lua_rawgeti(L, LUA_REGISTRYINDEX, F::fcall_table_ref(in));
    lua_pushstring(L, fn->name.c_str());
    lua_pushvalue(L, callback_idx);
    lua_rawset(L, -3);
    lua_pop(L, 1);
  }
  lib->functions.push_back(std::move(fn));
  return 0;
}

// __index of the load-time `redis` table (upvalue 1: the real one): missing names fail.
int LuaLoadApiIndex(lua_State* L) {
  lua_pushvalue(L, 2);
  lua_rawget(L, lua_upvalueindex(1));
  if (!lua_isnil(L, -1)) return 1;
  return lua_detail::LuaNonexistentGlobal(L);
}

// __index of a library's environment while it loads (upvalue 1: the load-time `redis`).
int LuaLoadEnvIndex(lua_State* L) {
  size_t len;
  const char* k = lua_type(L, 2) == LUA_TSTRING ? lua_tolstring(L, 2, &len) : nullptr;
  if (k != nullptr && std::string_view(k, len) == "redis") {
    lua_pushvalue(L, lua_upvalueindex(1));
    return 1;
  }
  return lua_detail::LuaNonexistentGlobal(L);
}

}  // namespace

void LuaInterp::SetupFunctionSupport() {
  lua_State* L = L_;
  lua_newtable(L);
  fcall_table_ref_ = luaL_ref(L, LUA_REGISTRYINDEX);
  // The load-time `redis`: a proxy over a table of the API a library may use while loading.
  lua_newtable(L);
  const int api = lua_gettop(L);
  lua_pushlightuserdata(L, this);
  lua_pushcclosure(L, LuaRegisterFunction, 1);
  lua_setfield(L, api, "register_function");
  lua_pushcfunction(L, lua_detail::LuaLog);
  lua_setfield(L, api, "log");
  const char* levels[] = {"LOG_DEBUG", "LOG_VERBOSE", "LOG_NOTICE", "LOG_WARNING"};
  for (int i = 0; i < 4; ++i) {
    lua_pushnumber(L, i);
    lua_setfield(L, api, levels[i]);
  }
  lua_pushstring(L, kRedisVersion);
  lua_setfield(L, api, "REDIS_VERSION");
  lua_pushnumber(L, kRedisVersionNum);
  lua_setfield(L, api, "REDIS_VERSION_NUM");
  lua_newtable(L);  // the proxy
  lua_newtable(L);  // its metatable
  lua_pushvalue(L, api);
  lua_pushcclosure(L, LuaLoadApiIndex, 1);
  lua_setfield(L, -2, "__index");
  lua_pushcfunction(L, lua_detail::LuaReadonly);
  lua_setfield(L, -2, "__newindex");
  lua_pushboolean(L, 0);
  lua_setfield(L, -2, "__metatable");
  lua_setmetatable(L, -2);
  load_api_ref_ = luaL_ref(L, LUA_REGISTRYINDEX);
  lua_pop(L, 1);
}

std::string LuaInterp::LoadLibrary(FunctionLibrary* lib, bool keep) {
  lua_State* L = L_;
  std::string_view code = lib->code;
  size_t eol = code.find('\n');
  code = eol == std::string_view::npos ? std::string_view() : code.substr(eol);
  if (luaL_loadbuffer(L, code.data(), code.size(), "@user_function") != 0) {
    std::string err = "Error compiling function: ";
    const char* msg = lua_tostring(L, -1);
    err += msg == nullptr ? "" : msg;
    lua_pop(L, 1);
    return err;
  }
  const int chunk = lua_gettop(L);
  // The library's environment, reading the load-time API for now.
  lua_newtable(L);
  const int env = lua_gettop(L);
  lua_newtable(L);
  const int meta = lua_gettop(L);
  lua_rawgeti(L, LUA_REGISTRYINDEX, load_api_ref_);
  lua_pushcclosure(L, LuaLoadEnvIndex, 1);
  lua_setfield(L, meta, "__index");
  lua_pushcfunction(L, lua_detail::LuaReadonly);
  lua_setfield(L, meta, "__newindex");
  lua_pushboolean(L, 0);
  lua_setfield(L, meta, "__metatable");
  lua_pushvalue(L, meta);
  lua_setmetatable(L, env);
  lua_pushvalue(L, env);
  lua_setfenv(L, chunk);

  loading_ = lib;
  loading_keep_ = keep;
  lua_rawgeti(L, LUA_REGISTRYINDEX, handler_ref_);
  lua_pushvalue(L, chunk);
  int status = lua_pcall(L, 0, 0, -2);
  loading_ = nullptr;
  std::string err;
  if (status != 0) {
    std::string_view msg;
    if (lua_type(L, -1) == LUA_TTABLE) {
      lua_getfield(L, -1, "err");
      size_t len;
      const char* s = lua_tolstring(L, -1, &len);
      err = "Error registering functions: " + std::string(s == nullptr ? "" : std::string_view(s, len));
      lua_pop(L, 1);
    } else {
      const char* s = lua_tostring(L, -1);
      err = "Error registering functions: " + std::string(s == nullptr ? "" : s);
    }
  } else if (lib->functions.empty()) {
    err = "No functions registered";
  }
  // From now on the environment reads the protected globals.
  lua_rawgeti(L, LUA_REGISTRYINDEX, globals_ref_);
  lua_setfield(L, meta, "__index");
  lua_settop(L, chunk - 1);
  return err;
}

void LuaInterp::SyncFunctions(const FunctionStore& store) {
  const uint64_t generation = store.generation();
  if (generation == fcall_generation_) return;
  lua_State* L = L_;
  luaL_unref(L, LUA_REGISTRYINDEX, fcall_table_ref_);
  lua_newtable(L);
  fcall_table_ref_ = luaL_ref(L, LUA_REGISTRYINDEX);
  for (const auto& lib : store.Libraries()) {
    FunctionLibrary copy;
    copy.name = lib->name;
    copy.code = lib->code;
    LoadLibrary(&copy, /*keep=*/true);  // loaded once already: it cannot fail but for memory
  }
  fcall_generation_ = generation;
}

LuaInterp::RunStatus LuaInterp::StartFunction(const FunctionInfo& fn, CmdArgs keys,
                                              CmdArgs argv, ScriptHost* host) {
  lua_State* L = L_;
  // Functions get their keys and arguments as parameters; KEYS and ARGV do not exist.
  lua_rawgeti(L, LUA_REGISTRYINDEX, globals_ref_);
  lua_pushnil(L);
  lua_setfield(L, -2, "KEYS");
  lua_pushnil(L);
  lua_setfield(L, -2, "ARGV");
  lua_pop(L, 1);
  BeginRun(fn.name, host);
  lua_rawgeti(co_, LUA_REGISTRYINDEX, fcall_table_ref_);
  lua_getfield(co_, -1, fn.name.c_str());
  lua_remove(co_, -2);
  lua_detail::PushArray(co_, keys);
  lua_detail::PushArray(co_, argv);
  return Continue(3);
}

}  // namespace dashkv
