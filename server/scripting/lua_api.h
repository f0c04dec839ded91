// Pieces of the Lua setup shared by server/scripting/lua_interp.cc (scripts) and
// lua_functions.cc (function libraries): C functions of the `redis` table and of the protected
// globals.
// Thread: as the lua_State they run in.
#pragma once

#include <string_view>

#include "server/cmd_args.h"

struct lua_State;

namespace dashkv::lua_detail {

// Raises {err = msg} (Redis's error tables).
int RaiseErrorTable(lua_State* L, std::string_view msg);
// redis.log(level, message...)
int LuaLog(lua_State* L);
// __index of the globals: fails for a name that does not exist.
int LuaNonexistentGlobal(lua_State* L);
// __newindex of protected tables.
int LuaReadonly(lua_State* L);
// Pushes `items` as an array of strings.
void PushArray(lua_State* L, CmdArgs items);

}  // namespace dashkv::lua_detail
