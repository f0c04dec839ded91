// The conversions between RESP replies and Lua values (server/scripting/lua_convert.h), as
// Redis 7.0 documents them: replies to Lua for redis.call/pcall, Lua results to replies.

#include "server/scripting/lua_convert.h"

#include <gtest/gtest.h>

#include <string>

#include "tests/testing/lua_test_state.h"

namespace dashkv {
namespace {

using testing::LuaTestState;

// Pushes `reply` as a Lua value into global `v` and returns what `expr` evaluates to.
std::string ReplyToLua(std::string_view reply, std::string_view expr) {
  LuaTestState lua({});
  lua_State* L = lua.get();
  EXPECT_TRUE(PushReply(L, reply));
  lua_setglobal(L, "v");
  return lua.Eval("return " + std::string(expr));
}

// Evaluates `lua_expr` and returns the reply it converts to.
std::string LuaToReply(std::string_view lua_expr, io::RespVersion client,
                       io::RespVersion script = io::RespVersion::kResp2) {
  LuaTestState lua({});
  lua_State* L = lua.get();
  std::string code = "return " + std::string(lua_expr);
  EXPECT_EQ(luaL_dostring(L, code.c_str()), 0);
  io::ReplyBuilder rb(client);
  SendLuaValue(L, rb, script);
  return rb.buffer();
}

TEST(ReplyToLuaTest, Resp2Types) {
  EXPECT_EQ(ReplyToLua(":42\r\n", "v"), "42");
  EXPECT_EQ(ReplyToLua("$3\r\nabc\r\n", "v"), "abc");
  EXPECT_EQ(ReplyToLua("$-1\r\n", "tostring(v)"), "false");
  EXPECT_EQ(ReplyToLua("*-1\r\n", "tostring(v)"), "false");
  EXPECT_EQ(ReplyToLua("+OK\r\n", "v.ok"), "OK");
  EXPECT_EQ(ReplyToLua("-WRONGTYPE Operation\r\n", "v.err"), "WRONGTYPE Operation");
  EXPECT_EQ(ReplyToLua("*3\r\n:1\r\n$1\r\nx\r\n*1\r\n:2\r\n", "v[1] .. v[2] .. v[3][1] .. #v"),
            "1x23");
}

TEST(ReplyToLuaTest, ErrorWithoutCodeGetsErr) {
  EXPECT_EQ(ReplyToLua("-oops\r\n", "v.err"), "ERR oops");
}

TEST(ReplyToLuaTest, Resp3Types) {
  EXPECT_EQ(ReplyToLua("_\r\n", "tostring(v)"), "nil");
  EXPECT_EQ(ReplyToLua("#t\r\n", "tostring(v)"), "true");
  EXPECT_EQ(ReplyToLua("#f\r\n", "tostring(v)"), "false");
  EXPECT_EQ(ReplyToLua(",3.5\r\n", "v.double"), "3.5");
  EXPECT_EQ(ReplyToLua(",inf\r\n", "tostring(v.double)"), "inf");
  EXPECT_EQ(ReplyToLua("(12345678901234567890\r\n", "v.big_number"), "12345678901234567890");
  EXPECT_EQ(ReplyToLua("=7\r\ntxt:abc\r\n", "v.verbatim_string.format .. v.verbatim_string.string"),
            "txtabc");
  EXPECT_EQ(ReplyToLua("%2\r\n$1\r\na\r\n:1\r\n$1\r\nb\r\n:2\r\n", "v.map.a + v.map.b"), "3");
  EXPECT_EQ(ReplyToLua("~2\r\n$1\r\na\r\n$1\r\nb\r\n", "tostring(v.set.a and v.set.b)"), "true");
}

TEST(LuaToReplyTest, Resp2Rules) {
  using io::RespVersion;
  EXPECT_EQ(LuaToReply("3.99", RespVersion::kResp2), ":3\r\n");
  EXPECT_EQ(LuaToReply("-2.7", RespVersion::kResp2), ":-2\r\n");
  EXPECT_EQ(LuaToReply("1e20", RespVersion::kResp2), ":-9223372036854775808\r\n");
  EXPECT_EQ(LuaToReply("'x'", RespVersion::kResp2), "$1\r\nx\r\n");
  EXPECT_EQ(LuaToReply("true", RespVersion::kResp2), ":1\r\n");
  EXPECT_EQ(LuaToReply("false", RespVersion::kResp2), "$-1\r\n");
  EXPECT_EQ(LuaToReply("nil", RespVersion::kResp2), "$-1\r\n");
  EXPECT_EQ(LuaToReply("{1, 'a', nil, 3}", RespVersion::kResp2), "*2\r\n:1\r\n$1\r\na\r\n");
  EXPECT_EQ(LuaToReply("{ok='fine'}", RespVersion::kResp2), "+fine\r\n");
  EXPECT_EQ(LuaToReply("{ok='a\\r\\nb'}", RespVersion::kResp2), "+a  b\r\n");
  EXPECT_EQ(LuaToReply("{err='MY err'}", RespVersion::kResp2), "-MY err\r\n");
  EXPECT_EQ(LuaToReply("{a=1}", RespVersion::kResp2), "*0\r\n");
  EXPECT_EQ(LuaToReply("{double=1.5}", RespVersion::kResp2), "$3\r\n1.5\r\n");
}

TEST(LuaToReplyTest, Resp3Rules) {
  using io::RespVersion;
  EXPECT_EQ(LuaToReply("true", RespVersion::kResp3, RespVersion::kResp3), "#t\r\n");
  EXPECT_EQ(LuaToReply("false", RespVersion::kResp3, RespVersion::kResp3), "#f\r\n");
  // A RESP2 script's false is null whatever the client speaks.
  EXPECT_EQ(LuaToReply("false", RespVersion::kResp3), "_\r\n");
  EXPECT_EQ(LuaToReply("{double=1.5}", RespVersion::kResp3), ",1.5\r\n");
  EXPECT_EQ(LuaToReply("{map={a=1}}", RespVersion::kResp3), "%1\r\n$1\r\na\r\n:1\r\n");
  EXPECT_EQ(LuaToReply("{set={a=true}}", RespVersion::kResp3), "~1\r\n$1\r\na\r\n");
  EXPECT_EQ(LuaToReply("{big_number='123'}", RespVersion::kResp3), "(123\r\n");
  EXPECT_EQ(LuaToReply("{verbatim_string={format='txt', string='abc'}}", RespVersion::kResp3),
            "=7\r\ntxt:abc\r\n");
  // RESP2 clients get maps flattened and sets as arrays.
  EXPECT_EQ(LuaToReply("{map={a=1}}", RespVersion::kResp2), "*2\r\n$1\r\na\r\n:1\r\n");
}

TEST(LuaToReplyTest, CyclicTableIsBounded) {
  std::string out;
  {
    LuaTestState lua({});
    lua_State* L = lua.get();
    ASSERT_EQ(luaL_dostring(L, "local t = {} t[1] = t return t"), 0);
    io::ReplyBuilder rb;
    SendLuaValue(L, rb, io::RespVersion::kResp2);
    out = rb.buffer();
  }
  EXPECT_NE(out.find("-ERR reached lua stack limit\r\n"), std::string::npos);
}

TEST(ScriptErrorTest, SuffixNamesScriptAndLine) {
  LuaTestState lua({});
  lua_State* L = lua.get();
  ASSERT_EQ(luaL_dostring(L, "return {err='ERR boom', source='@user_script', line=3}"), 0);
  io::ReplyBuilder rb;
  SendScriptError(L, rb, "abc");
  EXPECT_EQ(rb.buffer(), "-ERR boom script: abc, on @user_script:3.\r\n");
  ASSERT_EQ(luaL_dostring(L, "return {err='ERR plain'}"), 0);
  io::ReplyBuilder rb2;
  SendScriptError(L, rb2, "abc");
  EXPECT_EQ(rb2.buffer(), "-ERR plain\r\n");
}

}  // namespace
}  // namespace dashkv
