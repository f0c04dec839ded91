#include "server/scripting/lua_convert.h"

#include <lua.hpp>

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <string>

#include "server/scripting/lua_number.h"

namespace dashkv {

namespace {

// Deeper replies or results are refused (Lua's C stack is limited too).
constexpr int kMaxDepth = 200;

void SetStringField(lua_State* L, const char* field, std::string_view v) {
  lua_pushlstring(L, v.data(), v.size());
  lua_setfield(L, -2, field);
}

// Reads "<line>\r\n" from p; returns the line, advancing p. Our own replies are well formed.
std::string_view ReadLine(const char*& p, const char* end) {
  const char* start = p;
  while (p + 1 < end && !(p[0] == '\r' && p[1] == '\n')) ++p;
  std::string_view line(start, p - start);
  p = p + 2 <= end ? p + 2 : end;
  return line;
}

int64_t ReadCount(const char*& p, const char* end) {
  std::string_view line = ReadLine(p, end);
  int64_t n = 0;
  std::from_chars(line.data(), line.data() + line.size(), n);
  return n;
}

// The body of a bulk-like element ("$", "=", "!") of `n` bytes.
std::string_view ReadBody(const char*& p, const char* end, int64_t n) {
  if (n < 0 || n > end - p) n = end - p;
  std::string_view body(p, static_cast<size_t>(n));
  p += n;
  p = p + 2 <= end ? p + 2 : end;
  return body;
}

bool Push(lua_State* L, const char*& p, const char* end, int depth);

// Pushes the elements of an aggregate of `n` items into the table on top: as an array, or
// (as_map) as key/value pairs, or (as_set) as members set to true.
bool PushAggregate(lua_State* L, const char*& p, const char* end, int64_t n, int depth,
                   bool as_map, bool as_set) {
  if (!lua_checkstack(L, 4) || depth > kMaxDepth) return false;
  lua_createtable(L, as_map || as_set ? 0 : static_cast<int>(std::min<int64_t>(n, 1 << 20)),
                  as_map || as_set ? static_cast<int>(std::min<int64_t>(n, 1 << 20)) : 0);
  for (int64_t i = 0; i < n; ++i) {
    if (as_map) {
      if (!Push(L, p, end, depth + 1) || !Push(L, p, end, depth + 1)) return false;
      if (lua_isnil(L, -2)) {
        lua_pop(L, 2);
      } else {
        lua_rawset(L, -3);
      }
    } else if (as_set) {
      if (!Push(L, p, end, depth + 1)) return false;
      if (lua_isnil(L, -1)) {
        lua_pop(L, 1);
      } else {
        lua_pushboolean(L, 1);
        lua_rawset(L, -3);
      }
    } else {
      if (!Push(L, p, end, depth + 1)) return false;
      lua_rawseti(L, -2, static_cast<int>(i + 1));
    }
  }
  return true;
}

// Wraps the value on top as {field = value}.
void WrapInField(lua_State* L, const char* field) {
  lua_newtable(L);
  lua_insert(L, -2);
  lua_setfield(L, -2, field);
}

bool Push(lua_State* L, const char*& p, const char* end, int depth) {
  if (p >= end) {
    lua_pushnil(L);
    return true;
  }
  if (!lua_checkstack(L, 4)) return false;
  char type = *p++;
  switch (type) {
    case '+': {
      std::string_view s = ReadLine(p, end);
      lua_newtable(L);
      SetStringField(L, "ok", s);
      return true;
    }
    case '-': {
      const char* start = p - 1;
      ReadLine(p, end);
      PushErrorReplyTable(L, std::string_view(start, p - start));
      return true;
    }
    case ':': {
      lua_pushnumber(L, static_cast<lua_Number>(ReadCount(p, end)));
      return true;
    }
    case '$': {
      int64_t n = ReadCount(p, end);
      if (n < 0) {
        lua_pushboolean(L, 0);
        return true;
      }
      std::string_view body = ReadBody(p, end, n);
      lua_pushlstring(L, body.data(), body.size());
      return true;
    }
    case '!': {  // RESP3 blob error
      std::string_view body = ReadBody(p, end, ReadCount(p, end));
      PushErrorReplyTable(L, "-" + std::string(body));
      return true;
    }
    case '*':
    case '>': {
      int64_t n = ReadCount(p, end);
      if (n < 0) {
        lua_pushboolean(L, 0);
        return true;
      }
      return PushAggregate(L, p, end, n, depth, false, false);
    }
    case '%': {
      int64_t n = ReadCount(p, end);
      if (!PushAggregate(L, p, end, n, depth, true, false)) return false;
      WrapInField(L, "map");
      return true;
    }
    case '~': {
      int64_t n = ReadCount(p, end);
      if (!PushAggregate(L, p, end, n, depth, false, true)) return false;
      WrapInField(L, "set");
      return true;
    }
    case '|': {  // attributes: skipped, the value follows
      int64_t n = ReadCount(p, end);
      if (!PushAggregate(L, p, end, n, depth, true, false)) return false;
      lua_pop(L, 1);
      return Push(L, p, end, depth);
    }
    case '_':
      ReadLine(p, end);
      lua_pushnil(L);
      return true;
    case '#': {
      std::string_view s = ReadLine(p, end);
      lua_pushboolean(L, s == "t");
      return true;
    }
    case ',': {
      std::string text(ReadLine(p, end));
      lua_pushnumber(L, std::strtod(text.c_str(), nullptr));  // also "inf", "-inf", "nan"
      WrapInField(L, "double");
      return true;
    }
    case '(': {
      std::string_view s = ReadLine(p, end);
      lua_pushlstring(L, s.data(), s.size());
      WrapInField(L, "big_number");
      return true;
    }
    case '=': {
      std::string_view body = ReadBody(p, end, ReadCount(p, end));
      std::string_view format = body.substr(0, std::min<size_t>(3, body.size()));
      std::string_view text = body.size() > 4 ? body.substr(4) : std::string_view();
      lua_newtable(L);
      SetStringField(L, "format", format);
      SetStringField(L, "string", text);
      WrapInField(L, "verbatim_string");
      return true;
    }
    default:
      ReadLine(p, end);
      lua_pushnil(L);
      return true;
  }
}

// Returns the string field `name` of the table on top, or false.
bool StringField(lua_State* L, const char* name, std::string_view* out) {
  lua_pushstring(L, name);
  lua_rawget(L, -2);
  bool ok = lua_type(L, -1) == LUA_TSTRING;
  if (ok) {
    size_t len;
    const char* s = lua_tolstring(L, -1, &len);
    *out = std::string_view(s, len);  // the table keeps the string alive
  }
  lua_pop(L, 1);
  return ok;
}

void Send(lua_State* L, io::ReplyBuilder& out, io::RespVersion resp, int depth);

// Counts the pairs of the table on top (map/set fields).
size_t CountPairs(lua_State* L) {
  size_t n = 0;
  lua_pushnil(L);
  while (lua_next(L, -2) != 0) {
    ++n;
    lua_pop(L, 1);
  }
  return n;
}

void SendTable(lua_State* L, io::ReplyBuilder& out, io::RespVersion resp, int depth) {
  std::string_view s;
  if (StringField(L, "err", &s)) {
    out.SendError(s);
    return;
  }
  if (StringField(L, "ok", &s)) {
    std::string status(s);
    for (char& c : status) {
      if (c == '\r' || c == '\n') c = ' ';
    }
    out.SendSimpleString(status);
    return;
  }
  lua_pushliteral(L, "double");
  lua_rawget(L, -2);
  if (lua_type(L, -1) == LUA_TNUMBER) {
    out.SendDouble(lua_tonumber(L, -1));
    lua_pop(L, 1);
    return;
  }
  lua_pop(L, 1);
  if (StringField(L, "big_number", &s)) {
    out.SendBigNumber(s);
    return;
  }
  lua_pushliteral(L, "map");
  lua_rawget(L, -2);
  if (lua_type(L, -1) == LUA_TTABLE) {
    out.StartMap(CountPairs(L));
    lua_pushnil(L);
    while (lua_next(L, -2) != 0) {
      lua_pushvalue(L, -2);  // the key, sent first
      Send(L, out, resp, depth + 1);
      lua_pop(L, 1);
      Send(L, out, resp, depth + 1);
      lua_pop(L, 1);
    }
    lua_pop(L, 1);
    return;
  }
  lua_pop(L, 1);
  lua_pushliteral(L, "set");
  lua_rawget(L, -2);
  if (lua_type(L, -1) == LUA_TTABLE) {
    out.StartSet(CountPairs(L));
    lua_pushnil(L);
    while (lua_next(L, -2) != 0) {
      lua_pop(L, 1);
      Send(L, out, resp, depth + 1);
    }
    lua_pop(L, 1);
    return;
  }
  lua_pop(L, 1);
  lua_pushliteral(L, "verbatim_string");
  lua_rawget(L, -2);
  if (lua_type(L, -1) == LUA_TTABLE) {
    std::string_view format, text;
    if (StringField(L, "format", &format) && StringField(L, "string", &text)) {
      out.SendVerbatim(text, format);
      lua_pop(L, 1);
      return;
    }
  }
  lua_pop(L, 1);
  // An array: items 1..n up to the first nil.
  size_t n = 0;
  while (true) {
    lua_rawgeti(L, -1, static_cast<int>(n + 1));
    bool nil = lua_isnil(L, -1);
    lua_pop(L, 1);
    if (nil) break;
    ++n;
  }
  out.StartArray(n);
  for (size_t i = 1; i <= n; ++i) {
    lua_rawgeti(L, -1, static_cast<int>(i));
    Send(L, out, resp, depth + 1);
    lua_pop(L, 1);
  }
}

void Send(lua_State* L, io::ReplyBuilder& out, io::RespVersion resp, int depth) {
  switch (lua_type(L, -1)) {
    case LUA_TSTRING: {
      size_t len;
      const char* s = lua_tolstring(L, -1, &len);
      out.SendBulk(std::string_view(s, len));
      return;
    }
    case LUA_TBOOLEAN:
      if (resp == io::RespVersion::kResp2) {
        if (lua_toboolean(L, -1)) {
          out.SendLong(1);
        } else {
          out.SendNull();
        }
      } else {
        out.SendBool(lua_toboolean(L, -1));
      }
      return;
    case LUA_TNUMBER:
      out.SendLong(TruncateToInt64(lua_tonumber(L, -1)));  // Redis's cast (x86)
      return;
    case LUA_TTABLE:
      if (depth > kMaxDepth || !lua_checkstack(L, 8)) {
        out.SendError("ERR reached lua stack limit");
        return;
      }
      SendTable(L, out, resp, depth);
      return;
    default:
      out.SendNull();
  }
}

}  // namespace

void PushErrorTable(lua_State* L, std::string_view msg) {
  lua_newtable(L);
  SetStringField(L, "err", msg);
}

void PushErrorReplyTable(lua_State* L, std::string_view reply) {
  if (!reply.empty() && reply[0] == '-') reply.remove_prefix(1);
  while (!reply.empty() && (reply.back() == '\n' || reply.back() == '\r')) reply.remove_suffix(1);
  if (reply.find(' ') == std::string_view::npos) {
    PushErrorTable(L, "ERR " + std::string(reply));
  } else {
    PushErrorTable(L, reply);
  }
}

bool PushReply(lua_State* L, std::string_view reply) {
  const char* p = reply.data();
  const int top = lua_gettop(L);
  if (!Push(L, p, reply.data() + reply.size(), 0)) {
    lua_settop(L, top);
    return false;
  }
  return true;
}

void SendLuaValue(lua_State* L, io::ReplyBuilder& out, io::RespVersion script_resp) {
  Send(L, out, script_resp, 0);
}

void SendScriptError(lua_State* L, io::ReplyBuilder& out, std::string_view sha) {
  std::string_view msg;
  if (lua_type(L, -1) != LUA_TTABLE || !StringField(L, "err", &msg)) {
    out.SendError("ERR Error running script (call to f_" + std::string(sha) +
                  "): the script raised an error that is not a string or an error table");
    return;
  }
  std::string text(msg);
  std::string_view source;
  lua_getfield(L, -1, "line");
  const bool has_line = lua_type(L, -1) == LUA_TNUMBER;
  const int64_t line = has_line ? static_cast<int64_t>(lua_tonumber(L, -1)) : 0;
  lua_pop(L, 1);
  if (has_line && StringField(L, "source", &source)) {
    text += " script: ";
    text += sha;
    text += ", on ";
    text += source;
    text += ':';
    text += std::to_string(line);
    text += '.';
  }
  out.SendError(text);
}

}  // namespace dashkv
