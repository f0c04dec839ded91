// cjson for scripts: Debian's lua-cjson 2.1.0, the release Redis 7.0.15 bundles a patched copy
// of. Checked against redis-server 7.0.15 (tests/server/scripting/lua_cjson_test.cc): defaults
// (number precision 14, encode/decode depth 1000, keep_buffer on, NaN/Inf refused on encode
// and accepted on decode, sparse-array ratio) and results agree, so no setting is changed.
//
// Differences from Redis's copy:
// - Object key order in encode follows table iteration order, which differs between LuaJIT and
//   PUC-Lua for tables with several hash keys ({"a":1,"b":2,"c":{}} here, {"a":1,"c":{},"b":2}
//   on Redis). Not a cjson setting; JSON objects are unordered.
// - Debian's build lacks Redis's fix for CVE-2022-24834 (strbuf sizes held in int, overflowing
//   when the escaped output passes 2 GiB). cjson.encode is therefore wrapped: before encoding,
//   the value is walked and refused if its output (strings measured with cjson's escapes,
//   other values by their longest form) could exceed kMaxEncodeBytes, with
//   "Cannot serialise: output may exceed N bytes".
#include <lua.hpp>

#include <cstddef>

#include "core/base/logging.h"

#include "server/scripting/lua_libs.h"

extern "C" int luaopen_cjson(lua_State* L);

namespace dashkv {
namespace {

// Worst-case encode output accepted; far below INT_MAX so strbuf's int arithmetic cannot wrap.
constexpr size_t kMaxEncodeBytes = size_t{1} << 30;
// The walk stops descending here (cjson's default encode_max_depth, past which it errors).
constexpr int kMaxWalkDepth = 1000;

// Returns the length of `s` as cjson writes it: quoted, with " \\ / and \b \f \n \r \t as
// two-byte escapes and other bytes below 0x20, and 0x7f, as \u00XX.
size_t EscapedLength(const unsigned char* s, size_t len) {
  size_t out = len + 2;
  for (size_t i = 0; i < len; ++i) {
    unsigned char c = s[i];
    if (c == '"' || c == '\\' || c == '/' || c == '\b' || c == '\f' || c == '\n' || c == '\r' ||
        c == '\t') {
      out += 1;
    } else if (c < 0x20 || c == 0x7f) {
      out += 5;
    }
  }
  return out;
}

// Adds to *bound an upper limit on the JSON size of the value at `idx`; stops early once the
// bound is past kMaxEncodeBytes.
void AddEncodeBound(lua_State* L, int idx, int depth, size_t* bound) {
  if (*bound > kMaxEncodeBytes) return;
  switch (lua_type(L, idx)) {
    case LUA_TSTRING: {
      size_t len;
      const char* s = lua_tolstring(L, idx, &len);
      *bound += EscapedLength(reinterpret_cast<const unsigned char*>(s), len);
      return;
    }
    case LUA_TTABLE: {
      *bound += 2;
      if (depth >= kMaxWalkDepth) return;
      luaL_checkstack(L, 3, "cjson.encode");
      lua_pushnil(L);
      while (lua_next(L, idx) != 0) {
        int top = lua_gettop(L);
        *bound += 2;  // separator and colon
        AddEncodeBound(L, top - 1, depth + 1, bound);
        AddEncodeBound(L, top, depth + 1, bound);
        lua_pop(L, 1);
        if (*bound > kMaxEncodeBytes) {
          lua_pop(L, 1);
          return;
        }
      }
      return;
    }
    default:
      *bound += 32;  // numbers (at most ~24 characters), booleans, null
      return;
  }
}

// cjson.encode(value) with the size check described above. The module's encode runs in this
// frame (called as a C function, not through lua_call) so its errors keep the script's line and
// the name 'encode'. Upvalue 1 is the module's config userdata, which encode reads from upvalue 1;
// upvalue 2 holds the module's encode as a light userdata.
int GuardedEncode(lua_State* L) {
  if (lua_gettop(L) == 1) {
    size_t bound = 0;
    AddEncodeBound(L, 1, 0, &bound);
    lua_settop(L, 1);
    if (bound > kMaxEncodeBytes) {
      return luaL_error(L, "Cannot serialise: output may exceed %d bytes",
                        static_cast<int>(kMaxEncodeBytes));
    }
  }
  auto encode = reinterpret_cast<lua_CFunction>(lua_touserdata(L, lua_upvalueindex(2)));
  return encode(L);
}

}  // namespace

void OpenCjsonLib(lua_State* L) {
  lua_pushcfunction(L, luaopen_cjson);
  lua_pushstring(L, "cjson");
  lua_call(L, 1, 1);
  // The module's functions are C closures over its config (lua-cjson 2.1: one upvalue).
  lua_getfield(L, -1, "encode");
  lua_CFunction encode = lua_tocfunction(L, -1);
  CHECK(encode != nullptr && lua_getupvalue(L, -1, 1) != nullptr && lua_isuserdata(L, -1));
  lua_remove(L, -2);
  lua_pushlightuserdata(L, reinterpret_cast<void*>(encode));
  lua_pushcclosure(L, GuardedEncode, 2);
  lua_setfield(L, -2, "encode");
  lua_setglobal(L, "cjson");
}

}  // namespace dashkv
