// Expected values were returned by redis-server 7.0.15 for the same expressions.
#include <gtest/gtest.h>

#include "server/scripting/lua_libs.h"
#include "tests/testing/lua_test_state.h"

namespace dashkv {
namespace {

using testing::LuaTestState;

TEST(LuaBitTest, OperationsMatchRedis) {
  LuaTestState lua({OpenBitLib});
  EXPECT_EQ(lua.Eval("return bit.tohex(65535)"), "0000ffff");
  EXPECT_EQ(lua.Eval("return bit.tohex(-1)"), "ffffffff");
  EXPECT_EQ(lua.Eval("return bit.tohex(255, 4)"), "00ff");
  EXPECT_EQ(lua.Eval("return bit.tohex(255, -4)"), "00FF");
  EXPECT_EQ(lua.Eval("return bit.band(0xff00ff, 0x0ff0f0)"), "983280");
  EXPECT_EQ(lua.Eval("return bit.band(1, 3, 7, 15)"), "1");
  EXPECT_EQ(lua.Eval("return bit.bor(1, 2, 4, 8)"), "15");
  EXPECT_EQ(lua.Eval("return bit.bxor(0xf0, 0xff, 1)"), "14");
  EXPECT_EQ(lua.Eval("return bit.bnot(0)"), "-1");
  EXPECT_EQ(lua.Eval("return bit.lshift(1, 31)"), "-2147483648");
  EXPECT_EQ(lua.Eval("return bit.lshift(1, 33)"), "2");
  EXPECT_EQ(lua.Eval("return bit.rshift(-1, 28)"), "15");
  EXPECT_EQ(lua.Eval("return bit.arshift(-256, 4)"), "-16");
  EXPECT_EQ(lua.Eval("return bit.arshift(0x80000000, 31)"), "-1");
  EXPECT_EQ(lua.Eval("return bit.rol(0x12345678, 12)"), "1164411171");
  EXPECT_EQ(lua.Eval("return bit.ror(0x12345678, 12)"), "1736516421");
  EXPECT_EQ(lua.Eval("return bit.rol(1, -1)"), "-2147483648");
  EXPECT_EQ(lua.Eval("return bit.bswap(0x12345678)"), "2018915346");
}

TEST(LuaBitTest, TobitWrapsAndRoundsLikeRedis) {
  LuaTestState lua({OpenBitLib});
  EXPECT_EQ(lua.Eval("return bit.tobit(0xffffffff)"), "-1");
  EXPECT_EQ(lua.Eval("return bit.tobit(2^32 + 7)"), "7");
  EXPECT_EQ(lua.Eval("return bit.tobit(-2^31 - 1)"), "2147483647");
  EXPECT_EQ(lua.Eval("return bit.tobit(2^53 + 2)"), "1");
  EXPECT_EQ(lua.Eval("return bit.tobit(1.5)"), "2");
  EXPECT_EQ(lua.Eval("return bit.tobit(2.5)"), "2");
  EXPECT_EQ(lua.Eval("return bit.tobit(-1.5)"), "-2");
  EXPECT_EQ(lua.Eval("return bit.tobit(1e300)"), "-2013235812");
  EXPECT_EQ(lua.Eval("return bit.tobit(0/0)"), "0");
  EXPECT_EQ(lua.Eval("return bit.tobit('12')"), "12");
  EXPECT_EQ(lua.Eval("return bit.lshift(1, 1.7)"), "4");
}

TEST(LuaBitTest, ArgumentErrorsMatchRedis) {
  LuaTestState lua({OpenBitLib});
  EXPECT_EQ(lua.Eval("local r = bit.tobit('x') return r"),
            "ERROR: test:1: bad argument #1 to 'tobit' (number expected, got string)");
  EXPECT_EQ(lua.Eval("local r = bit.band() return r"),
            "ERROR: test:1: bad argument #1 to 'band' (number expected, got no value)");
}

}  // namespace
}  // namespace dashkv
