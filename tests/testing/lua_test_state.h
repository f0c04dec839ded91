// LuaTestState: a bare lua_State for tests of the scripting libraries, with base, string, table
// and math open plus the libraries a test asks for, and a global hex(s) (lowercase hex of s's
// bytes) so byte strings compare readably against output recorded from Redis.
#pragma once

#include <lua.hpp>

#include <initializer_list>
#include <string>
#include <string_view>

namespace dashkv::testing {

class LuaTestState {
 public:
  using OpenFn = void (*)(lua_State*);

  explicit LuaTestState(std::initializer_list<OpenFn> libs) : L_(luaL_newstate()) {
    for (lua_CFunction open : {luaopen_base, luaopen_string, luaopen_table, luaopen_math}) {
      lua_pushcfunction(L_, open);
      lua_call(L_, 0, 0);
    }
    for (OpenFn open : libs) open(L_);
    Run("function hex(s) return (s:gsub('.', function(c) return string.format('%02x', "
        "c:byte()) end)) end");
  }
  ~LuaTestState() { lua_close(L_); }
  LuaTestState(const LuaTestState&) = delete;
  LuaTestState& operator=(const LuaTestState&) = delete;

  lua_State* get() { return L_; }

  // Result of one chunk: ok and its first result passed through tostring ("nil" if none), or
  // !ok and the error message.
  struct Result {
    bool ok;
    std::string value;
  };

  // Runs `code` as a chunk.
  Result Run(std::string_view code) {
    int top = lua_gettop(L_);
    Result r{true, "nil"};
    if (luaL_loadbuffer(L_, code.data(), code.size(), "=test") != 0 ||
        lua_pcall(L_, 0, 1, 0) != 0) {
      r.ok = false;
    } else if (!lua_isnil(L_, -1) && !lua_isstring(L_, -1)) {
      lua_getglobal(L_, "tostring");
      lua_insert(L_, -2);
      lua_call(L_, 1, 1);
    }
    if (const char* s = lua_tostring(L_, -1)) r.value.assign(s, lua_objlen(L_, -1));
    lua_settop(L_, top);
    return r;
  }

  // Returns the chunk's result; an error becomes "ERROR: <message>" so mismatches show it.
  std::string Eval(std::string_view code) {
    Result r = Run(code);
    return r.ok ? r.value : "ERROR: " + r.value;
  }

 private:
  lua_State* L_;
};

}  // namespace dashkv::testing
