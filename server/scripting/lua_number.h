// Number-argument helpers shared by the script libraries.
// Thread: pure functions on the calling thread's lua_State.
#pragma once

#include <lua.hpp>

#include <cstdint>

namespace dashkv {

// Returns `d` as C's (int64_t)d evaluates on x86-64 (cvttsd2si): truncated toward zero, and
// INT64_MIN for NaN and values out of range. Redis's Lua converts numbers this way.
inline int64_t TruncateToInt64(double d) {
  return (d >= -9223372036854775808.0 && d < 9223372036854775808.0) ? static_cast<int64_t>(d)
                                                                     : INT64_MIN;
}

// Returns argument `arg` as Redis's luaL_checkint yields it: the number truncated to 64 bits
// (TruncateToInt64), then its low 32 bits. Raises Lua's usual "number expected" error.
inline int CheckLuaInt(lua_State* L, int arg) {
  auto wide = static_cast<uint64_t>(TruncateToInt64(luaL_checknumber(L, arg)));
  return static_cast<int32_t>(static_cast<uint32_t>(wide));
}

// As CheckLuaInt, but returns `def` when the argument is absent or nil.
inline int OptLuaInt(lua_State* L, int arg, int def) {
  return lua_isnoneornil(L, arg) ? def : CheckLuaInt(L, arg);
}

}  // namespace dashkv
