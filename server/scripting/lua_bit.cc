// bit for scripts: LuaJIT's built-in BitOp library, the C library Redis bundles (LuaBitOp 1.0.2)
// as a fast-function set.
#include <lua.hpp>

#include "server/scripting/lua_libs.h"

namespace dashkv {

void OpenBitLib(lua_State* L) {
  lua_pushcfunction(L, luaopen_bit);
  lua_pushstring(L, LUA_BITLIBNAME);
  lua_call(L, 1, 1);
  lua_setglobal(L, LUA_BITLIBNAME);
}

}  // namespace dashkv
