// cmsgpack for scripts: MessagePack with the API and byte choices of Redis's lua-cmsgpack 0.4.0
// (checked byte for byte against redis-server 7.0.15, tests/server/scripting/
// lua_cmsgpack_test.cc).
//
// Encoding: numbers equal to their int64 truncation use the smallest integer format (positive
// fixint, uint8..uint64 for >= 0; negative fixint, int8..int64 below 0); other numbers are
// float32 when the float32 holds them exactly (infinities included), else float64. Strings use
// fixstr, str8, str16, str32. Tables whose keys are exactly the integers 1..n are arrays,
// others (including {1, nil, 3}) maps, in lua_next order. Tables deeper than kMaxPackNesting are
// written as nil; functions, userdata and threads as nil.
// Decoding accepts every MessagePack type except bin and ext ("Bad data format in input.");
// short input raises "Missing bytes in input.".
//
// Differences from Redis:
// - Maps with several keys are written in table iteration order, which LuaJIT and PUC-Lua do not
//   share; single-key maps and arrays are identical.
// - pack refuses output past kMaxPackBytes (self-referencing tables make output exponential in
//   the nesting limit); Redis would keep allocating.
#include <lua.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>

#include "server/scripting/lua_libs.h"
#include "server/scripting/lua_number.h"

namespace dashkv {
namespace {

// Tables nested deeper than this are packed as nil (Redis's LUACMSGPACK_MAX_NESTING).
constexpr int kMaxPackNesting = 16;
// Largest pack output: Redis's default proto-max-bulk-len.
constexpr size_t kMaxPackBytes = size_t{512} << 20;

constexpr char kTooManyValues[] =
    "too many return values at once; use unpack_one or unpack_limit instead.";

// ---- Encoding ----

// Appends MessagePack to a std::string. Raises no Lua errors (so the string's destructor always
// runs); failures are reported through ok() and turned into a Lua error by the caller.
class Packer {
 public:
  explicit Packer(lua_State* L) : L_(L) {}

  bool ok() const { return !too_big_ && !no_stack_; }
  bool too_big() const { return too_big_; }
  std::string& out() { return out_; }

  // Appends the value at stack index `idx` (absolute) at nesting `level`.
  void Value(int idx, int level) {
    if (!ok()) return;
    switch (lua_type(L_, idx)) {
      case LUA_TNUMBER:
        Number(lua_tonumber(L_, idx));
        break;
      case LUA_TSTRING: {
        size_t len;
        const char* s = lua_tolstring(L_, idx, &len);
        String(s, len);
        break;
      }
      case LUA_TBOOLEAN:
        Byte(lua_toboolean(L_, idx) ? 0xc3 : 0xc2);
        break;
      case LUA_TTABLE:
        if (level >= kMaxPackNesting) {
          Byte(0xc0);
        } else {
          Table(idx, level);
        }
        break;
      default:  // nil, functions, userdata, threads
        Byte(0xc0);
        break;
    }
  }

 private:
  void Byte(uint8_t b) { Bytes(&b, 1); }

  void Bytes(const void* p, size_t n) {
    if (out_.size() + n > kMaxPackBytes) {
      too_big_ = true;
      return;
    }
    out_.append(static_cast<const char*>(p), n);
  }

  // Writes `tag` then the low `width` bytes of `v`, big-endian.
  void Tagged(uint8_t tag, uint64_t v, int width) {
    uint8_t buf[9];
    buf[0] = tag;
    for (int i = 0; i < width; ++i) buf[1 + i] = static_cast<uint8_t>(v >> (8 * (width - 1 - i)));
    Bytes(buf, 1 + width);
  }

  void Number(double d) {
    int64_t i = TruncateToInt64(d);
    if (static_cast<double>(i) == d) return Integer(i);
    bool fits_float = std::isinf(d) || std::fabs(d) <= std::numeric_limits<float>::max();
    if (fits_float && static_cast<double>(static_cast<float>(d)) == d) {
      float f = static_cast<float>(d);
      uint32_t bits;
      std::memcpy(&bits, &f, 4);
      return Tagged(0xca, bits, 4);
    }
    uint64_t bits;
    std::memcpy(&bits, &d, 8);
    Tagged(0xcb, bits, 8);
  }

  void Integer(int64_t i) {
    auto u = static_cast<uint64_t>(i);
    if (i >= 0) {
      if (i <= 0x7f) return Byte(static_cast<uint8_t>(i));
      if (i <= 0xff) return Tagged(0xcc, u, 1);
      if (i <= 0xffff) return Tagged(0xcd, u, 2);
      if (i <= 0xffffffffLL) return Tagged(0xce, u, 4);
      return Tagged(0xcf, u, 8);
    }
    if (i >= -32) return Byte(static_cast<uint8_t>(u));
    if (i >= -128) return Tagged(0xd0, u, 1);
    if (i >= -32768) return Tagged(0xd1, u, 2);
    if (i >= INT32_MIN) return Tagged(0xd2, u, 4);
    Tagged(0xd3, u, 8);
  }

  void String(const char* s, size_t len) {
    if (len < 32) {
      Byte(static_cast<uint8_t>(0xa0 | len));
    } else if (len <= 0xff) {
      Tagged(0xd9, len, 1);
    } else if (len <= 0xffff) {
      Tagged(0xda, len, 2);
    } else {
      Tagged(0xdb, len, 4);  // len <= kMaxPackBytes, so it fits
    }
    Bytes(s, len);
  }

  // Header of an array (fix 0x90, 0xdc, 0xdd) or map (fix 0x80, 0xde, 0xdf) of n entries.
  void Header(size_t n, uint8_t fix, uint8_t tag16) {
    if (n < 16) return Byte(static_cast<uint8_t>(fix | n));
    if (n <= 0xffff) return Tagged(tag16, n, 2);
    Tagged(tag16 + 1, n, 4);
  }

  // Returns the number of keys and whether they are exactly 1..count.
  bool IsArray(int idx, size_t* count) {
    size_t n = 0;
    double max = 0;
    bool array = true;
    lua_pushnil(L_);
    while (lua_next(L_, idx) != 0) {
      lua_pop(L_, 1);
      ++n;
      if (array) {
        if (lua_type(L_, -1) != LUA_TNUMBER) {
          array = false;
        } else {
          double k = lua_tonumber(L_, -1);
          if (!(k > 0) || std::floor(k) != k) {
            array = false;
          } else {
            max = std::max(max, k);
          }
        }
      }
    }
    *count = n;
    return array && max == static_cast<double>(n);
  }

  void Table(int idx, int level) {
    if (!lua_checkstack(L_, 3)) {
      no_stack_ = true;
      return;
    }
    size_t n;
    if (IsArray(idx, &n)) {
      Header(n, 0x90, 0xdc);
      for (size_t i = 1; i <= n && ok(); ++i) {
        lua_rawgeti(L_, idx, static_cast<int>(i));
        Value(lua_gettop(L_), level + 1);
        lua_pop(L_, 1);
      }
      return;
    }
    Header(n, 0x80, 0xde);
    lua_pushnil(L_);
    while (lua_next(L_, idx) != 0) {
      int top = lua_gettop(L_);
      Value(top - 1, level + 1);
      Value(top, level + 1);
      lua_pop(L_, 1);
      if (!ok()) {
        lua_pop(L_, 1);
        return;
      }
    }
  }

  lua_State* L_;
  std::string out_;
  bool too_big_ = false;
  bool no_stack_ = false;
};

// cmsgpack.pack(v1, ...): the encodings of all arguments, concatenated.
int Pack(lua_State* L) {
  int n = lua_gettop(L);
  if (n == 0) return luaL_argerror(L, 0, "MessagePack pack needs input.");
  bool too_big;
  bool ok;
  {
    Packer packer(L);
    for (int i = 1; i <= n; ++i) packer.Value(i, 0);
    ok = packer.ok();
    too_big = packer.too_big();
    if (ok) lua_pushlstring(L, packer.out().data(), packer.out().size());
  }
  if (ok) return 1;
  if (too_big) {
    return luaL_error(L, "MessagePack output exceeds %d bytes", static_cast<int>(kMaxPackBytes));
  }
  return luaL_error(L, "stack overflow (in function mp_encode_lua_table)");
}

// ---- Decoding ----

struct Cursor {
  const uint8_t* p;
  size_t left;
};

[[noreturn]] void MissingBytes(lua_State* L) {
  luaL_error(L, "Missing bytes in input.");
  __builtin_unreachable();
}

uint64_t ReadBig(lua_State* L, Cursor* c, int width) {
  if (c->left < static_cast<size_t>(width)) MissingBytes(L);
  uint64_t v = 0;
  for (int i = 0; i < width; ++i) v = (v << 8) | c->p[i];
  c->p += width;
  c->left -= width;
  return v;
}

void DecodeValue(lua_State* L, Cursor* c);

void DecodeString(lua_State* L, Cursor* c, uint64_t len) {
  if (c->left < len) MissingBytes(L);
  lua_pushlstring(L, reinterpret_cast<const char*>(c->p), len);
  c->p += len;
  c->left -= len;
}

// Each nesting level keeps the table and one key on the stack, so a deep input fails the stack
// check at the depth Redis's does (about 4000).
void DecodeArray(lua_State* L, Cursor* c, uint64_t n) {
  luaL_checkstack(L, 2, "in function mp_decode_to_lua_array");
  // No preallocation: a declared count is only a claim, and a table grown element by element
  // gives # the same border as Redis's for arrays holding nil.
  lua_newtable(L);
  for (uint64_t i = 1; i <= n; ++i) {
    lua_pushnumber(L, static_cast<double>(i));
    DecodeValue(L, c);
    lua_rawset(L, -3);
  }
}

void DecodeMap(lua_State* L, Cursor* c, uint64_t n) {
  luaL_checkstack(L, 3, kTooManyValues);
  lua_newtable(L);
  for (uint64_t i = 0; i < n; ++i) {
    DecodeValue(L, c);
    DecodeValue(L, c);
    lua_settable(L, -3);  // raises "table index is nil" / "is NaN" as Redis does
  }
}

// Pushes the next value of `c`, advancing it.
void DecodeValue(lua_State* L, Cursor* c) {
  if (c->left == 0) MissingBytes(L);
  uint8_t tag = *c->p++;
  c->left--;
  if (tag <= 0x7f) return lua_pushnumber(L, tag);
  if (tag >= 0xe0) return lua_pushnumber(L, static_cast<int8_t>(tag));
  if (tag <= 0x8f) return DecodeMap(L, c, tag & 0x0f);
  if (tag <= 0x9f) return DecodeArray(L, c, tag & 0x0f);
  if (tag <= 0xbf) return DecodeString(L, c, tag & 0x1f);
  switch (tag) {
    case 0xc0:
      return lua_pushnil(L);
    case 0xc2:
      return lua_pushboolean(L, 0);
    case 0xc3:
      return lua_pushboolean(L, 1);
    case 0xca: {
      auto bits = static_cast<uint32_t>(ReadBig(L, c, 4));
      float f;
      std::memcpy(&f, &bits, 4);
      return lua_pushnumber(L, f);
    }
    case 0xcb: {
      uint64_t bits = ReadBig(L, c, 8);
      double d;
      std::memcpy(&d, &bits, 8);
      return lua_pushnumber(L, d);
    }
    case 0xcc:
      return lua_pushnumber(L, static_cast<double>(ReadBig(L, c, 1)));
    case 0xcd:
      return lua_pushnumber(L, static_cast<double>(ReadBig(L, c, 2)));
    case 0xce:
      return lua_pushnumber(L, static_cast<double>(ReadBig(L, c, 4)));
    case 0xcf:  // read as a signed 64-bit integer, as Redis does
      return lua_pushnumber(L, static_cast<double>(static_cast<int64_t>(ReadBig(L, c, 8))));
    case 0xd0:
      return lua_pushnumber(L, static_cast<int8_t>(ReadBig(L, c, 1)));
    case 0xd1:
      return lua_pushnumber(L, static_cast<int16_t>(ReadBig(L, c, 2)));
    case 0xd2:
      return lua_pushnumber(L, static_cast<int32_t>(ReadBig(L, c, 4)));
    case 0xd3:
      return lua_pushnumber(L, static_cast<double>(static_cast<int64_t>(ReadBig(L, c, 8))));
    case 0xd9:
      return DecodeString(L, c, ReadBig(L, c, 1));
    case 0xda:
      return DecodeString(L, c, ReadBig(L, c, 2));
    case 0xdb:
      return DecodeString(L, c, ReadBig(L, c, 4));
    case 0xdc:
      return DecodeArray(L, c, ReadBig(L, c, 2));
    case 0xdd:
      return DecodeArray(L, c, ReadBig(L, c, 4));
    case 0xde:
      return DecodeMap(L, c, ReadBig(L, c, 2));
    case 0xdf:
      return DecodeMap(L, c, ReadBig(L, c, 4));
    default:  // 0xc1 (never used), bin 0xc4-0xc6, ext 0xc7-0xc9 and 0xd4-0xd8
      luaL_error(L, "Bad data format in input.");
  }
}

// Decodes up to `limit` values (0: all) of argument 1 from byte `offset`. Pushes the values,
// preceded by the next offset (-1 once the input is used up) when limit > 0: as on Redis,
// unpack_limit(s, 0) returns the values alone, like unpack.
int Unpack(lua_State* L, int limit, int offset) {
  size_t len;
  const char* s = luaL_checklstring(L, 1, &len);
  if (offset < 0 || limit < 0) {
    return luaL_error(L, "Invalid request to unpack with offset of %d and limit of %d.", offset,
                      static_cast<int>(len));
  }
  if (static_cast<size_t>(offset) > len) {
    return luaL_error(L, "Start offset %d greater than input length %d.", offset,
                      static_cast<int>(len));
  }
  lua_settop(L, 1);  // the string stays referenced while its bytes are read
  Cursor c{reinterpret_cast<const uint8_t*>(s) + offset, len - offset};
  int count = 0;
  while (c.left > 0 && (limit == 0 || count < limit)) {
    luaL_checkstack(L, 1, kTooManyValues);
    DecodeValue(L, &c);
    ++count;
  }
  if (limit == 0) return count;
  lua_pushnumber(L, c.left == 0 ? -1 : static_cast<double>(len - c.left));
  lua_insert(L, 2);
  return count + 1;
}

// cmsgpack.unpack(s): every value in s.
int UnpackAll(lua_State* L) { return Unpack(L, 0, 0); }

// cmsgpack.unpack_one(s [, offset]): next offset, then one value.
int UnpackOne(lua_State* L) { return Unpack(L, 1, OptLuaInt(L, 2, 0)); }

// cmsgpack.unpack_limit(s, limit [, offset]): next offset, then up to limit values.
int UnpackLimit(lua_State* L) {
  int limit = CheckLuaInt(L, 2);
  return Unpack(L, limit, OptLuaInt(L, 3, 0));
}

}  // namespace

void OpenCmsgpackLib(lua_State* L) {
  static const luaL_Reg kFuncs[] = {{"pack", Pack},
                                    {"unpack", UnpackAll},
                                    {"unpack_one", UnpackOne},
                                    {"unpack_limit", UnpackLimit},
                                    {nullptr, nullptr}};
  lua_newtable(L);
  for (const luaL_Reg* f = kFuncs; f->name != nullptr; ++f) {
    lua_pushcfunction(L, f->func);
    lua_setfield(L, -2, f->name);
  }
  lua_pushstring(L, "cmsgpack");
  lua_setfield(L, -2, "_NAME");
  lua_pushstring(L, "lua-cmsgpack 0.4.0");
  lua_setfield(L, -2, "_VERSION");
  lua_pushstring(L, "Copyright (C) 2012, Salvatore Sanfilippo");
  lua_setfield(L, -2, "_COPYRIGHT");
  lua_pushstring(L, "MessagePack C implementation for Lua");
  lua_setfield(L, -2, "_DESCRIPTION");
  lua_setglobal(L, "cmsgpack");
}

}  // namespace dashkv
