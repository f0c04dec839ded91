// Expected bytes were returned by redis-server 7.0.15 for the same expressions, e.g.
//   redis-cli eval "return cmsgpack.pack(1, 127, 128)" 0
#include <gtest/gtest.h>

#include "server/scripting/lua_libs.h"
#include "tests/testing/lua_test_state.h"

namespace dashkv {
namespace {

using testing::LuaTestState;

TEST(LuaCmsgpackTest, PackIntegersInSmallestFormatLikeRedis) {
  LuaTestState lua({OpenCmsgpackLib});
  EXPECT_EQ(lua.Eval("return hex(cmsgpack.pack(1, 127, 128, 255, 256, 65535, 65536, 2^32-1, "
                     "2^32, 2^53, 2^63, 2^64))"),
            "017fcc80ccffcd0100cdffffce00010000ceffffffffcf0000000100000000cf0020000000000000"
            "ca5f000000ca5f800000");
  EXPECT_EQ(lua.Eval("return hex(cmsgpack.pack(-1, -32, -33, -128, -129, -32768, -32769, -2^31, "
                     "-2^31-1, -2^53, -2^63, -2^64))"),
            "ffe0d0dfd080d1ff7fd18000d2ffff7fffd280000000d3ffffffff7fffffffd3ffe0000000000000"
            "d38000000000000000cadf800000");
  EXPECT_EQ(lua.Eval("return hex(cmsgpack.pack(-4294967296, -4294967297, 16777217))"),
            "d3ffffffff00000000d3fffffffeffffffffce01000001");
}

TEST(LuaCmsgpackTest, PackFloatsAsFloat32WhenExactLikeRedis) {
  LuaTestState lua({OpenCmsgpackLib});
  EXPECT_EQ(lua.Eval("return hex(cmsgpack.pack(0.5, 0.1, 1.5, -2.25, 1e300, 1/0, -1/0, "
                     "3.4028234663852886e38, 1e-45, -0))"),
            "ca3f000000cb3fb999999999999aca3fc00000cac0100000cb7e37e43c8800759cca7f800000caff8000"
            "00ca7f7fffffcb3696d601ad376ab900");
  EXPECT_EQ(lua.Eval("return hex(cmsgpack.pack(2^64 + 2^12, 1e19, 2^-149, 2^-150, 4294967295.5))"),
            "cb43f0000000000001cb43e158e460913d00ca00000001cb3690000000000000cb41effffffff00000");
  EXPECT_EQ(lua.Eval("return hex(cmsgpack.pack(0/0))"), "cbfff8000000000000");
}

TEST(LuaCmsgpackTest, PackStringsAndScalarsLikeRedis) {
  LuaTestState lua({OpenCmsgpackLib});
  EXPECT_EQ(lua.Eval("return hex(cmsgpack.pack(nil, true, false, '', '1'))"), "c0c3c2a0a131");
  EXPECT_EQ(lua.Eval("return hex(cmsgpack.pack(string.rep('a', 31))):sub(1, 4)"), "bf61");
  EXPECT_EQ(lua.Eval("return hex(cmsgpack.pack(string.rep('a', 32))):sub(1, 6)"), "d92061");
  EXPECT_EQ(lua.Eval("return hex(cmsgpack.pack(string.rep('a', 255))):sub(1, 6)"), "d9ff61");
  EXPECT_EQ(lua.Eval("return hex(cmsgpack.pack(string.rep('a', 256))):sub(1, 8)"), "da010061");
  EXPECT_EQ(lua.Eval("return hex(cmsgpack.pack(string.rep('a', 65536))):sub(1, 12)"),
            "db0001000061");
  EXPECT_EQ(lua.Eval("return hex(cmsgpack.pack(string.len, coroutine.create(print)))"), "c0c0");
}

TEST(LuaCmsgpackTest, PackTablesAsArraysOrMapsLikeRedis) {
  LuaTestState lua({OpenCmsgpackLib});
  EXPECT_EQ(lua.Eval("return hex(cmsgpack.pack({}))"), "90");
  EXPECT_EQ(lua.Eval("return hex(cmsgpack.pack({1, {2, {3}}, 'x'}))"), "930192029103a178");
  EXPECT_EQ(lua.Eval("return hex(cmsgpack.pack({[2]=1}, {[0]=1}, {[1.5]=1}, {a=1}))"),
            "81020181000181ca3fc0000001" "81a16101");
  EXPECT_EQ(lua.Eval("return hex(cmsgpack.pack({a={b={c={}}}}, {[true]=false}, {[{}]=1}))"),
            "81a16181a16281a16390" "81c3c2" "819001");
  EXPECT_EQ(lua.Eval("local t = {} for i = 1, 15 do t[i] = i end return hex(cmsgpack.pack(t))"),
            "9f0102030405060708090a0b0c0d0e0f");
  EXPECT_EQ(lua.Eval("local t = {} for i = 1, 16 do t[i] = i end "
                     "return hex(cmsgpack.pack(t)):sub(1, 10)"),
            "dc00100102");
  EXPECT_EQ(lua.Eval("local t = {} for i = 1, 65536 do t[i] = 0 end "
                     "return hex(cmsgpack.pack(t)):sub(1, 12)"),
            "dd0001000000");
  EXPECT_EQ(lua.Eval("local t = {} for i = 1, 16 do t['k'..i] = 1 end "
                     "return hex(cmsgpack.pack(t)):sub(1, 6)"),
            "de0010");
  // A metatable's __index is not consulted.
  EXPECT_EQ(lua.Eval("return hex(cmsgpack.pack(setmetatable({}, {__index = function() return 1 "
                     "end})))"),
            "90");
}

TEST(LuaCmsgpackTest, PackNestingPastSixteenBecomesNil) {
  LuaTestState lua({OpenCmsgpackLib});
  EXPECT_EQ(lua.Eval("local t = {} local c = t for i = 1, 20 do c[1] = {} c = c[1] end "
                     "return hex(cmsgpack.pack(5, t))"),
            "0591919191919191919191919191919191c0");
  EXPECT_EQ(lua.Eval("local t = {} t[1] = t return hex(cmsgpack.pack(t))"),
            "91919191919191919191919191919191c0");
  EXPECT_EQ(lua.Eval("local t = {} local c = t for i = 1, 20 do local n = {} c[n] = 1 c = n end "
                     "return hex(cmsgpack.pack(t))"),
            "81818181818181818181818181818181c001010101010101010101010101010101");
}

TEST(LuaCmsgpackTest, PackErrors) {
  LuaTestState lua({OpenCmsgpackLib});
  EXPECT_EQ(lua.Eval("local r = cmsgpack.pack() return r"),
            "ERROR: test:1: bad argument #0 to 'pack' (MessagePack pack needs input.)");
}

TEST(LuaCmsgpackTest, UnpackReturnsAllValues) {
  LuaTestState lua({OpenCmsgpackLib});
  EXPECT_EQ(lua.Eval("return table.concat({cmsgpack.unpack(cmsgpack.pack(1, 2, 3))}, ',')"),
            "1,2,3");
  EXPECT_EQ(lua.Eval("return select('#', cmsgpack.unpack(''))"), "0");
  EXPECT_EQ(lua.Eval("return select('#', cmsgpack.unpack('\\192\\192\\192'))"), "3");
  EXPECT_EQ(lua.Eval("return cmsgpack.unpack(1)"), "49");  // the string "1"
  EXPECT_EQ(lua.Eval("local t = cmsgpack.unpack('\\130\\1\\2\\3\\4') return t[1] .. t[3]"), "24");
  EXPECT_EQ(lua.Eval("return cmsgpack.unpack('\\217\\3abc') .. cmsgpack.unpack('\\218\\0\\3abc') "
                     ".. cmsgpack.unpack('\\219\\0\\0\\0\\3abc')"),
            "abcabcabc");
}

TEST(LuaCmsgpackTest, UnpackNumbersLikeRedis) {
  LuaTestState lua({OpenCmsgpackLib});
  EXPECT_EQ(lua.Eval("return string.format('%.17g', cmsgpack.unpack('\\202\\61\\204\\204\\205'))"),
            "0.10000000149011612");
  EXPECT_EQ(lua.Eval("return tostring(cmsgpack.unpack('\\203\\127\\248\\0\\0\\0\\0\\0\\0'))"),
            "nan");
  EXPECT_EQ(lua.Eval("return tostring(cmsgpack.unpack('\\206\\255\\255\\255\\255'))"),
            "4294967295");
  EXPECT_EQ(lua.Eval("return tostring(cmsgpack.unpack('\\210\\255\\255\\255\\255'))"), "-1");
  // uint64 is read as a signed 64-bit integer, as on Redis.
  EXPECT_EQ(lua.Eval("return tostring(cmsgpack.unpack('\\207\\255\\255\\255\\255\\255\\255\\255"
                     "\\255'))"),
            "-1");
  EXPECT_EQ(lua.Eval("return tostring(cmsgpack.unpack('\\207\\128\\0\\0\\0\\0\\0\\0\\0'))"),
            "-9.2233720368548e+18");
}

TEST(LuaCmsgpackTest, UnpackOneAndLimitReturnNextOffsetFirst) {
  LuaTestState lua({OpenCmsgpackLib});
  auto run = [&](const char* call) {
    return lua.Eval(std::string("local s = cmsgpack.pack(1, 2, 3) return table.concat({") + call +
                    "}, ',')");
  };
  EXPECT_EQ(run("cmsgpack.unpack_one(s)"), "1,1");
  EXPECT_EQ(run("cmsgpack.unpack_one(s, 1)"), "2,2");
  EXPECT_EQ(run("cmsgpack.unpack_one(s, 2)"), "-1,3");
  EXPECT_EQ(run("cmsgpack.unpack_one(s, 3)"), "-1");
  EXPECT_EQ(run("cmsgpack.unpack_limit(s, 2)"), "2,1,2");
  EXPECT_EQ(run("cmsgpack.unpack_limit(s, 3)"), "-1,1,2,3");
  EXPECT_EQ(run("cmsgpack.unpack_limit(s, 5)"), "-1,1,2,3");
  EXPECT_EQ(run("cmsgpack.unpack_limit(s, 0)"), "1,2,3");  // no offset, as on Redis
  EXPECT_EQ(run("cmsgpack.unpack_limit(s, 2, 2)"), "-1,3");
  EXPECT_EQ(run("cmsgpack.unpack_limit(s, 1, 1.5)"), "2,2");
  EXPECT_EQ(lua.Eval("return table.concat({cmsgpack.unpack_one('')}, ',')"), "-1");
}

TEST(LuaCmsgpackTest, UnpackArgumentErrorsMatchRedis) {
  LuaTestState lua({OpenCmsgpackLib});
  EXPECT_EQ(lua.Eval("local r = cmsgpack.unpack_one(cmsgpack.pack(1, 2, 3), -1) return r"),
            "ERROR: test:1: Invalid request to unpack with offset of -1 and limit of 3.");
  EXPECT_EQ(lua.Eval("local r = cmsgpack.unpack_limit(cmsgpack.pack(1, 2, 3), -1) return r"),
            "ERROR: test:1: Invalid request to unpack with offset of 0 and limit of 3.");
  EXPECT_EQ(lua.Eval("local r = cmsgpack.unpack_one(cmsgpack.pack(1, 2, 3), 4) return r"),
            "ERROR: test:1: Start offset 4 greater than input length 3.");
  EXPECT_EQ(lua.Eval("local r = cmsgpack.unpack({}) return r"),
            "ERROR: test:1: bad argument #1 to 'unpack' (string expected, got table)");
  EXPECT_EQ(lua.Eval("local r = cmsgpack.unpack_limit('\\1') return r"),
            "ERROR: test:1: bad argument #2 to 'unpack_limit' (number expected, got no value)");
}

TEST(LuaCmsgpackTest, UnpackBadInputErrorsLikeRedis) {
  LuaTestState lua({OpenCmsgpackLib});
  const char* missing[] = {"\\205", "\\205\\1", "\\220\\0\\2\\1", "\\1\\205"};
  for (const char* s : missing) {
    EXPECT_EQ(lua.Eval(std::string("local r = cmsgpack.unpack('") + s + "') return r"),
              "ERROR: test:1: Missing bytes in input.")
        << s;
  }
  // 0xc1, bin8/16/32, ext and fixext are not supported by Redis's decoder.
  const char* bad[] = {"\\193", "\\196\\1a", "\\197\\0\\3abc", "\\198\\0\\0\\0\\3abc",
                       "\\199\\1\\1a", "\\212\\1\\1"};
  for (const char* s : bad) {
    EXPECT_EQ(lua.Eval(std::string("local r = cmsgpack.unpack('") + s + "') return r"),
              "ERROR: test:1: Bad data format in input.")
        << s;
  }
  EXPECT_EQ(lua.Eval("local r = cmsgpack.unpack('\\129\\192\\1') return r"),
            "ERROR: table index is nil");  // no position, as on Redis
}

TEST(LuaCmsgpackTest, UnpackHugeDeclaredLengthsFailWithoutReserving) {
  LuaTestState lua({OpenCmsgpackLib});
  const char* claims[] = {
      "'\\219\\255\\255\\255\\255'",                       // str32 of 4 GiB
      "'\\221\\255\\255\\255\\255' .. string.rep('\\1', 100)",  // array32 of 4G elements
      "'\\223\\255\\255\\255\\255' .. string.rep('\\1', 100)",  // map32 of 4G pairs
      "string.rep('\\221\\255\\255\\255\\255', 3000)",     // nested array32 claims
  };
  for (const char* s : claims) {
    EXPECT_EQ(lua.Eval(std::string("local r = cmsgpack.unpack(") + s + ") return r"),
              "ERROR: test:1: Missing bytes in input.")
        << s;
  }
}

TEST(LuaCmsgpackTest, UnpackDeepNestingStopsAtRedisDepth) {
  LuaTestState lua({OpenCmsgpackLib});
  EXPECT_EQ(lua.Eval("local t = cmsgpack.unpack(string.rep('\\145', 3999) .. '\\1') "
                     "for i = 1, 3998 do t = t[1] end return t[1]"),
            "1");
  EXPECT_EQ(lua.Eval("local r = cmsgpack.unpack(string.rep('\\145', 4000) .. '\\1') return r"),
            "ERROR: test:1: stack overflow (in function mp_decode_to_lua_array)");
  EXPECT_EQ(lua.Eval("local r = cmsgpack.unpack(string.rep('\\145', 1000000)) return r"),
            "ERROR: test:1: stack overflow (in function mp_decode_to_lua_array)");
  EXPECT_EQ(lua.Eval("local r = cmsgpack.unpack(string.rep('\\129\\1', 100000)) return r"),
            "ERROR: test:1: stack overflow (too many return values at once; use unpack_one or "
            "unpack_limit instead.)");
  EXPECT_EQ(lua.Eval("return select('#', cmsgpack.unpack(string.rep('\\1', 7999)))"), "7999");
  EXPECT_EQ(lua.Eval("local r = cmsgpack.unpack(string.rep('\\1', 8000)) return r"),
            "ERROR: test:1: stack overflow (too many return values at once; use unpack_one or "
            "unpack_limit instead.)");
}

TEST(LuaCmsgpackTest, PackOutputIsBounded) {
  LuaTestState lua({OpenCmsgpackLib});
  // Each level references the next 64 times: the output would grow as 64^16.
  EXPECT_EQ(lua.Eval("local t = {} for i = 1, 64 do t[i] = t end t[65] = string.rep('x', 2^20) "
                     "local r = cmsgpack.pack(t) return r"),
            "ERROR: test:1: MessagePack output exceeds 536870912 bytes");
}

TEST(LuaCmsgpackTest, RoundTrip) {
  LuaTestState lua({OpenCmsgpackLib});
  EXPECT_EQ(lua.Eval("local a, b, c = cmsgpack.unpack(cmsgpack.pack({1, {x = 'y'}, -7.5}, "
                     "'s', 2^40)) return a[1] .. a[2].x .. a[3] .. b .. c"),
            "1y-7.5s1099511627776");
}

}  // namespace
}  // namespace dashkv
