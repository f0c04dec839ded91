// Redis's math.random: rand48 in a userdata owned by the lua_State, with Lua 5.1's mapping of a
// number in [0,1) to the requested range.
#include <lua.hpp>

#include <cmath>
#include <cstdint>

#include "server/scripting/lua_libs.h"
#include "server/scripting/lua_number.h"

namespace dashkv {
namespace {

// rand48: x' = (a*x + c) mod 2^48; results are the top 31 bits, like lrand48().
constexpr uint64_t kRand48Mask = (uint64_t{1} << 48) - 1;
constexpr uint64_t kRand48A = 0x5DEECE66Dull;
constexpr uint64_t kRand48C = 0xB;
constexpr uint64_t kRand48Initial = 0x1234ABCD330Eull;
constexpr int32_t kRand48Max = INT32_MAX;

struct Rand48 {
  uint64_t x;
};

// Registry key (its address) under which the state userdata is kept for ResetScriptRandom.
char kRandomStateKey;

int32_t NextRand48(Rand48* r) {
  r->x = (kRand48A * r->x + kRand48C) & kRand48Mask;
  return static_cast<int32_t>(r->x >> 17);
}

Rand48* UpvalueState(lua_State* L) {
  return static_cast<Rand48*>(lua_touserdata(L, lua_upvalueindex(1)));
}

int MathRandom(lua_State* L) {
  Rand48* r = UpvalueState(L);
  double x = static_cast<double>(NextRand48(r) % kRand48Max) / static_cast<double>(kRand48Max);
  switch (lua_gettop(L)) {
    case 0:
      lua_pushnumber(L, x);
      break;
    case 1: {
      int u = CheckLuaInt(L, 1);
      luaL_argcheck(L, 1 <= u, 1, "interval is empty");
      lua_pushnumber(L, std::floor(x * u) + 1);
      break;
    }
    case 2: {
      int l = CheckLuaInt(L, 1);
      int u = CheckLuaInt(L, 2);
      luaL_argcheck(L, l <= u, 2, "interval is empty");
      // u - l + 1 wraps in 32 bits, as the int arithmetic of the reference does.
      auto span = static_cast<int32_t>(static_cast<uint32_t>(u) - static_cast<uint32_t>(l) + 1u);
      lua_pushnumber(L, std::floor(x * span) + l);
      break;
    }
    default:
      return luaL_error(L, "wrong number of arguments");
  }
  return 1;
}

int MathRandomseed(lua_State* L) {
  auto seed = static_cast<uint32_t>(CheckLuaInt(L, 1));
  UpvalueState(L)->x = (uint64_t{seed} << 16) | 0x330E;
  return 0;
}

}  // namespace

void InstallScriptRandom(lua_State* L) {
  auto* state = static_cast<Rand48*>(lua_newuserdata(L, sizeof(Rand48)));
  state->x = kRand48Initial;
  lua_pushlightuserdata(L, &kRandomStateKey);
  lua_pushvalue(L, -2);
  lua_rawset(L, LUA_REGISTRYINDEX);

  lua_getglobal(L, "math");
  lua_pushvalue(L, -2);
  lua_pushcclosure(L, MathRandom, 1);
  lua_setfield(L, -2, "random");
  lua_pushvalue(L, -2);
  lua_pushcclosure(L, MathRandomseed, 1);
  lua_setfield(L, -2, "randomseed");
  lua_pop(L, 2);
}

void ResetScriptRandom(lua_State* L) {
  lua_pushlightuserdata(L, &kRandomStateKey);
  lua_rawget(L, LUA_REGISTRYINDEX);
  if (auto* state = static_cast<Rand48*>(lua_touserdata(L, -1))) state->x = kRand48Initial;
  lua_pop(L, 1);
}

}  // namespace dashkv
