// struct for scripts: the binary pack/unpack library Redis bundles (Roberto Ierusalimschy's
// struct 0.2 format language), reimplemented from its documented and observed behaviour on
// redis-server 7.0.15 (tests/server/scripting/lua_struct_test.cc).
//
// Format: a sequence of options, read left to right.
//   >  <     big / little endian from here on (little at the start; there is no '=')
//   ![n]     maximum alignment n (a power of 2; 8 when n is absent); 1 at the start
//   ' '      ignored
//   b B h H  signed/unsigned 1 and 2 byte integers; l L T: 8 bytes (long, unsigned long, size_t)
//   i[n] I[n] signed/unsigned integers of n bytes (default 4, at most 32)
//   f d      float (4 bytes) and double (8 bytes)
//   c[n]     n bytes of a string (default 1); c0: the whole string when packing, and when
//            unpacking a length taken from the previous unpacked value (which it replaces)
//   s        zero-terminated string
//   x        one zero byte of padding
// Digits after any other option are not counts: pack/unpack reject them as options, size
// ignores them (size ignores every unknown letter or digit). An item of size s is aligned to
// min(s, maximum alignment) with Redis's padding formula (a - (pos & (a-1))) & (a-1), which for
// the non-power-of-2 sizes of i3, i5... is not rounding up; 'c' and 's' are never aligned.
// Integers are converted as Redis does on x86-64 (values wrap modulo 2^64, out of range and NaN
// become 0x8000000000000000); sizes over 8 bytes pad with zero bytes when packing and keep only
// the low 8 bytes when unpacking.
//
// Differences from Redis: pack refuses results over kMaxPackBytes, and unpack's bounds check
// cannot wrap around for huge offsets (Redis's can, reading outside the data string).
#include <lua.hpp>

#include <cctype>
#include <climits>
#include <cstdint>
#include <cstring>
#include <utility>

#include "server/scripting/lua_libs.h"
#include "server/scripting/lua_number.h"

namespace dashkv {
namespace {

constexpr int kMaxIntSize = 32;
constexpr int kDefaultMaxAlign = 8;
// Largest pack result: Redis's default proto-max-bulk-len.
constexpr size_t kMaxPackBytes = size_t{512} << 20;

enum class Endian { kLittle, kBig };

struct FormatState {
  Endian endian = Endian::kLittle;
  uint64_t max_align = 1;
};

// Reads the digits at *fmt, or returns `def` when there are none.
int ReadNumber(lua_State* L, const char** fmt, int def) {
  if (!std::isdigit(static_cast<unsigned char>(**fmt))) return def;
  int n = 0;
  while (std::isdigit(static_cast<unsigned char>(**fmt))) {
    int digit = *(*fmt)++ - '0';
    if (n > INT_MAX / 10 || n * 10 > INT_MAX - digit) luaL_error(L, "integral size overflow");
    n = n * 10 + digit;
  }
  return n;
}

// Returns the size in bytes of option `opt`, reading its digits if it takes any; 0 for 's',
// control and unknown options.
uint64_t OptionSize(lua_State* L, char opt, const char** fmt) {
  switch (opt) {
    case 'b':
    case 'B':
    case 'x':
      return 1;
    case 'h':
    case 'H':
      return 2;
    case 'l':
    case 'L':
    case 'T':
    case 'd':
      return 8;
    case 'f':
      return 4;
    case 'c':
      return static_cast<uint64_t>(ReadNumber(L, fmt, 1));
    case 'i':
    case 'I': {
      int n = ReadNumber(L, fmt, 4);
      if (n > kMaxIntSize) {
        luaL_error(L, "integral size %d is larger than limit of %d", n, kMaxIntSize);
      }
      return static_cast<uint64_t>(n);
    }
    default:
      return 0;
  }
}

// Returns the padding before an item of `size` at `pos` (Redis's formula; see the file comment).
uint64_t Padding(uint64_t pos, const FormatState& st, char opt, uint64_t size) {
  if (size == 0 || opt == 'c') return 0;
  uint64_t align = size < st.max_align ? size : st.max_align;
  return (align - (pos & (align - 1))) & (align - 1);
}

// Applies a control option (' ', '<', '>', '!n'); raises an argument error for any other.
void ControlOption(lua_State* L, char opt, const char** fmt, FormatState* st) {
  switch (opt) {
    case ' ':
      return;
    case '<':
      st->endian = Endian::kLittle;
      return;
    case '>':
      st->endian = Endian::kBig;
      return;
    case '!': {
      int a = ReadNumber(L, fmt, kDefaultMaxAlign);
      if (a <= 0 || (a & (a - 1)) != 0) luaL_error(L, "alignment %d is not a power of 2", a);
      st->max_align = static_cast<uint64_t>(a);
      return;
    }
    default:
      luaL_argerror(L, 1, lua_pushfstring(L, "invalid format option '%c'", opt));
  }
}

// C's conversion of a double to uint64_t as g++ emits it on x86-64.
uint64_t ToUint64(double d) {
  if (d < 0) return static_cast<uint64_t>(TruncateToInt64(d));
  constexpr double kTwo63 = 9223372036854775808.0;
  if (d >= kTwo63) return static_cast<uint64_t>(TruncateToInt64(d - kTwo63)) ^ (uint64_t{1} << 63);
  return static_cast<uint64_t>(TruncateToInt64(d));  // NaN: 0x8000000000000000
}

// Writes `n` bytes of `v` (low byte first, zeros past the 8th) in `endian` order.
void AddInteger(luaL_Buffer* b, uint64_t v, uint64_t n, Endian endian) {
  char buf[kMaxIntSize];
  for (uint64_t i = 0; i < n; ++i) {
    buf[endian == Endian::kLittle ? i : n - 1 - i] = static_cast<char>(i < 8 ? v >> (8 * i) : 0);
  }
  luaL_addlstring(b, buf, n);
}

// Writes the `n` bytes at `p` (native little-endian) in `endian` order.
void AddRaw(luaL_Buffer* b, const void* p, size_t n, Endian endian) {
  char buf[8];
  std::memcpy(buf, p, n);
  if (endian == Endian::kBig) {
    for (size_t i = 0; i < n / 2; ++i) std::swap(buf[i], buf[n - 1 - i]);
  }
  luaL_addlstring(b, buf, n);
}

// Raises Redis's error for a missing argument `arg` of pack (it reads as nil there). `nargs`
// is the argument count, taken before the luaL_Buffer began pushing onto the stack.
void CheckPresent(lua_State* L, int arg, int nargs, const char* expected) {
  if (arg > nargs) luaL_argerror(L, arg, lua_pushfstring(L, "%s expected, got nil", expected));
}

void CheckPackSize(lua_State* L, uint64_t total) {
  if (total > kMaxPackBytes) {
    luaL_error(L, "struct.pack result exceeds %d bytes", static_cast<int>(kMaxPackBytes));
  }
}

// struct.pack(fmt, v1, ...) -> string
int Pack(lua_State* L) {
  const char* fmt = luaL_checkstring(L, 1);
  int nargs = lua_gettop(L);
  FormatState st;
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  uint64_t pos = 0;
  int arg = 2;
  while (*fmt != '\0') {
    char opt = *fmt++;
    uint64_t size = OptionSize(L, opt, &fmt);
    uint64_t pad = Padding(pos, st, opt, size);
    CheckPackSize(L, pos + pad + size);
    for (uint64_t i = 0; i < pad; ++i) luaL_addchar(&b, '\0');
    pos += pad;
    switch (opt) {
      case 'b':
      case 'B':
      case 'h':
      case 'H':
      case 'l':
      case 'L':
      case 'T':
      case 'i':
      case 'I': {
        CheckPresent(L, arg, nargs, "number");
        AddInteger(&b, ToUint64(luaL_checknumber(L, arg++)), size, st.endian);
        break;
      }
      case 'x':
        luaL_addchar(&b, '\0');
        break;
      case 'f': {
        CheckPresent(L, arg, nargs, "number");
        auto f = static_cast<float>(luaL_checknumber(L, arg++));
        AddRaw(&b, &f, 4, st.endian);
        break;
      }
      case 'd': {
        CheckPresent(L, arg, nargs, "number");
        double d = luaL_checknumber(L, arg++);
        AddRaw(&b, &d, 8, st.endian);
        break;
      }
      case 'c':
      case 's': {
        CheckPresent(L, arg, nargs, "string");
        size_t len;
        const char* s = luaL_checklstring(L, arg, &len);
        if (opt == 's') {
          size = len + 1;
        } else if (size == 0) {
          size = len;
        }
        // Redis names the argument after the string here.
        if (opt == 'c') luaL_argcheck(L, len >= size, arg + 1, "string too short");
        CheckPackSize(L, pos + size);
        luaL_addlstring(&b, s, opt == 's' ? len : size);
        if (opt == 's') luaL_addchar(&b, '\0');
        ++arg;
        break;
      }
      default:
        ControlOption(L, opt, &fmt, &st);
    }
    pos += size;
  }
  luaL_pushresult(&b);
  return 1;
}

// Reads an n-byte integer as Redis does: the low 8 bytes only, sign-extended from bit
// (8n - 1) mod 64 for signed formats.
double ReadInteger(const unsigned char* p, uint64_t n, Endian endian, bool is_signed) {
  uint64_t v = 0;
  for (uint64_t i = 0; i < n; ++i) v = (v << 8) | p[endian == Endian::kLittle ? n - 1 - i : i];
  if (!is_signed) return static_cast<double>(v);
  uint64_t mask = ~uint64_t{0} << ((static_cast<int>(n) * 8 - 1) & 63);
  if (v & mask) v |= mask;
  return static_cast<double>(static_cast<int64_t>(v));
}

void ReadRaw(void* out, const unsigned char* p, size_t n, Endian endian) {
  unsigned char buf[8];
  std::memcpy(buf, p, n);
  if (endian == Endian::kBig) {
    for (size_t i = 0; i < n / 2; ++i) std::swap(buf[i], buf[n - 1 - i]);
  }
  std::memcpy(out, buf, n);
}

void CheckData(lua_State* L, uint64_t pos, uint64_t size, size_t len) {
  luaL_argcheck(L, pos <= len && size <= len - pos, 2, "data string too short");
}

// struct.unpack(fmt, data [, pos]) -> values..., next position (1-based)
int Unpack(lua_State* L) {
  const char* fmt = luaL_checkstring(L, 1);
  size_t len;
  const auto* data = reinterpret_cast<const unsigned char*>(luaL_checklstring(L, 2, &len));
  int64_t start = lua_isnoneornil(L, 3) ? 1 : TruncateToInt64(luaL_checknumber(L, 3));
  luaL_argcheck(L, start != 0, 3, "offset must be 1 or greater");
  uint64_t pos = static_cast<uint64_t>(start) - 1;  // negative offsets wrap, as on Redis
  FormatState st;
  int results = 0;
  while (*fmt != '\0') {
    char opt = *fmt++;
    uint64_t size = OptionSize(L, opt, &fmt);
    pos += Padding(pos, st, opt, size);
    CheckData(L, pos, size, len);
    switch (opt) {
      case 'b':
      case 'B':
      case 'h':
      case 'H':
      case 'l':
      case 'L':
      case 'T':
      case 'i':
      case 'I': {
        luaL_checkstack(L, 2, "too many results");
        bool is_signed = std::islower(static_cast<unsigned char>(opt)) != 0;
        lua_pushnumber(L, ReadInteger(data + pos, size, st.endian, is_signed));
        ++results;
        break;
      }
      case 'x':
        break;
      case 'f': {
        luaL_checkstack(L, 2, "too many results");
        float f;
        ReadRaw(&f, data + pos, 4, st.endian);
        lua_pushnumber(L, f);
        ++results;
        break;
      }
      case 'd': {
        luaL_checkstack(L, 2, "too many results");
        double d;
        ReadRaw(&d, data + pos, 8, st.endian);
        lua_pushnumber(L, d);
        ++results;
        break;
      }
      case 'c': {
        if (size == 0) {
          if (results == 0 || !lua_isnumber(L, -1)) {
            luaL_error(L, "format 'c0' needs a previous size");
          }
          size = ToUint64(lua_tonumber(L, -1));
          lua_pop(L, 1);
          --results;
          CheckData(L, pos, size, len);
        }
        luaL_checkstack(L, 2, "too many results");
        lua_pushlstring(L, reinterpret_cast<const char*>(data + pos), size);
        ++results;
        break;
      }
      case 's': {
        const void* end = std::memchr(data + pos, '\0', len - pos);
        if (end == nullptr) luaL_error(L, "unfinished string in data");
        size = static_cast<const unsigned char*>(end) - (data + pos) + 1;
        luaL_checkstack(L, 2, "too many results");
        lua_pushlstring(L, reinterpret_cast<const char*>(data + pos), size - 1);
        ++results;
        break;
      }
      default:
        ControlOption(L, opt, &fmt, &st);
    }
    pos += size;
  }
  // Redis pushes the position as a signed integer: a wrapped offset gives e.g. -1.
  lua_pushnumber(L, static_cast<double>(static_cast<int64_t>(pos + 1)));
  return results + 1;
}

// struct.size(fmt) -> bytes; refuses formats without a fixed size.
int Size(lua_State* L) {
  const char* fmt = luaL_checkstring(L, 1);
  FormatState st;
  uint64_t pos = 0;
  while (*fmt != '\0') {
    char opt = *fmt++;
    uint64_t size = OptionSize(L, opt, &fmt);
    pos += Padding(pos, st, opt, size);
    if (opt == 's') luaL_argerror(L, 1, "option 's' has no fixed size");
    if (opt == 'c' && size == 0) luaL_argerror(L, 1, "option 'c0' has no fixed size");
    if (!std::isalnum(static_cast<unsigned char>(opt))) ControlOption(L, opt, &fmt, &st);
    pos += size;
  }
  lua_pushnumber(L, static_cast<double>(pos));
  return 1;
}

}  // namespace

void OpenStructLib(lua_State* L) {
  lua_newtable(L);
  lua_pushcfunction(L, Pack);
  lua_setfield(L, -2, "pack");
  lua_pushcfunction(L, Unpack);
  lua_setfield(L, -2, "unpack");
  lua_pushcfunction(L, Size);
  lua_setfield(L, -2, "size");
  lua_setglobal(L, "struct");
}

}  // namespace dashkv
