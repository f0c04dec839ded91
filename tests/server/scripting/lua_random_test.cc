// Expected values were printed by Redis 7.0.15 right after start (EVAL ... 0), e.g.
//   EVAL "local t={} for i=1,5 do t[#t+1]=string.format('%.17g', math.random()) end return t" 0
#include <gtest/gtest.h>

#include "server/scripting/lua_libs.h"
#include "tests/testing/lua_test_state.h"

namespace dashkv {
namespace {

using testing::LuaTestState;

constexpr char kFiveFloats[] =
    "local t = {} for i = 1, 5 do t[#t + 1] = string.format('%.17g', math.random()) end "
    "return table.concat(t, ' ')";

TEST(LuaRandomTest, UnseededSequenceMatchesRedisAfterStart) {
  LuaTestState lua({InstallScriptRandom});
  EXPECT_EQ(lua.Eval(kFiveFloats),
            "0.39646477363839039 0.84048536971234034 0.35333609737145533 0.44658343468167977 "
            "0.31869277233197019");
  // The next draws of the same script on Redis.
  EXPECT_EQ(lua.Eval("return table.concat({math.random(100), math.random(1000000), "
                     "math.random(-5, 5), math.random(-2147483648, 2147483647), "
                     "math.random(2.7), math.random(-2.5, 3.9), math.random(2147483647)}, ' ')"),
            "89 15583 1 -2147483648 1 2 126398555");
}

TEST(LuaRandomTest, SeededSequenceMatchesRedis) {
  LuaTestState lua({InstallScriptRandom});
  EXPECT_EQ(lua.Eval("math.randomseed(12345) local t = {} "
                     "for i = 1, 3 do t[#t + 1] = string.format('%.17g', math.random()) end "
                     "t[#t + 1] = math.random(6) t[#t + 1] = math.random(10, 20) "
                     "return table.concat(t, ' ')"),
            "0.22532851259472245 0.91918306887111767 0.20684125330617709 5 18");
  EXPECT_EQ(lua.Eval("math.randomseed(-7) return string.format('%.17g', math.random())"),
            "0.075211875175690224");
  EXPECT_EQ(lua.Eval("math.randomseed(42) return string.format('%.17g', math.random())"),
            "0.74452500033403046");
}

TEST(LuaRandomTest, SeedUsesLow32BitsAndTruncates) {
  LuaTestState lua({InstallScriptRandom});
  EXPECT_EQ(lua.Eval("math.randomseed(4294967296 + 5) return string.format('%.17g', "
                     "math.random())"),
            "0.52483957937212644");
  EXPECT_EQ(lua.Eval("math.randomseed(5.9) return string.format('%.17g', math.random())"),
            "0.52483957937212644");
  // 1e30 is out of int64 range: seed 0 on Redis (x86-64).
  EXPECT_EQ(lua.Eval("math.randomseed(1e30) return string.format('%.17g', math.random())"),
            "0.1708280361121651");
}

TEST(LuaRandomTest, SequenceContinuesAcrossChunksLikeRedis7) {
  LuaTestState lua({InstallScriptRandom});
  EXPECT_EQ(lua.Eval("return string.format('%.17g', math.random())"), "0.39646477363839039");
  EXPECT_EQ(lua.Eval("return string.format('%.17g', math.random())"), "0.84048536971234034");
}

TEST(LuaRandomTest, ResetRestoresInitialState) {
  LuaTestState lua({InstallScriptRandom});
  lua.Eval("math.randomseed(99) math.random()");
  ResetScriptRandom(lua.get());
  EXPECT_EQ(lua.Eval("return string.format('%.17g', math.random())"), "0.39646477363839039");
}

TEST(LuaRandomTest, StatesAreIndependent) {
  LuaTestState a({InstallScriptRandom});
  LuaTestState b({InstallScriptRandom});
  a.Eval("math.random() math.random()");
  EXPECT_EQ(b.Eval("return string.format('%.17g', math.random())"), "0.39646477363839039");
}

// Calls are not tail calls: LuaJIT drops a tail-called C function's caller frame, and with it
// the name and line in the message.
TEST(LuaRandomTest, ArgumentErrorsMatchRedis) {
  LuaTestState lua({InstallScriptRandom});
  EXPECT_EQ(lua.Eval("local r = math.random(0) return r"),
            "ERROR: test:1: bad argument #1 to 'random' (interval is empty)");
  EXPECT_EQ(lua.Eval("local r = math.random(3, 1) return r"),
            "ERROR: test:1: bad argument #2 to 'random' (interval is empty)");
  EXPECT_EQ(lua.Eval("local r = math.random(1e20) return r"),
            "ERROR: test:1: bad argument #1 to 'random' (interval is empty)");
  EXPECT_EQ(lua.Eval("local r = math.random(1, 2, 3) return r"),
            "ERROR: test:1: wrong number of arguments");
  EXPECT_EQ(lua.Eval("local r = math.random('a') return r"),
            "ERROR: test:1: bad argument #1 to 'random' (number expected, got string)");
  EXPECT_EQ(lua.Eval("math.randomseed()"),
            "ERROR: test:1: bad argument #1 to 'randomseed' (number expected, got no value)");
  EXPECT_EQ(lua.Eval("math.randomseed('x')"),
            "ERROR: test:1: bad argument #1 to 'randomseed' (number expected, got string)");
}

}  // namespace
}  // namespace dashkv
