// Expected bytes and errors were returned by redis-server 7.0.15 for the same expressions.
#include <gtest/gtest.h>

#include <string>

#include "server/scripting/lua_libs.h"
#include "tests/testing/lua_test_state.h"

namespace dashkv {
namespace {

using testing::LuaTestState;

// Returns hex(struct.pack(args)) or the error.
std::string PackHex(LuaTestState& lua, const std::string& args) {
  return lua.Eval("return hex(struct.pack(" + args + "))");
}

// Returns the results of struct.unpack(args) joined with ',' or the error.
std::string Unpack(LuaTestState& lua, const std::string& args) {
  return lua.Eval("return table.concat({struct.unpack(" + args + ")}, ',')");
}

TEST(LuaStructTest, PackIntegersLikeRedis) {
  LuaTestState lua({OpenStructLib});
  EXPECT_EQ(PackHex(lua, "'b', -1"), "ff");
  EXPECT_EQ(PackHex(lua, "'B', 256"), "00");
  EXPECT_EQ(PackHex(lua, "'b', 200"), "c8");
  EXPECT_EQ(PackHex(lua, "'h', 1"), "0100");
  EXPECT_EQ(PackHex(lua, "'>h', 1"), "0001");
  EXPECT_EQ(PackHex(lua, "'l', -2"), "feffffffffffffff");
  EXPECT_EQ(PackHex(lua, "'>L', 1"), "0000000000000001");
  EXPECT_EQ(PackHex(lua, "'T', 5"), "0500000000000000");
  EXPECT_EQ(PackHex(lua, "'i', -1"), "ffffffff");
  EXPECT_EQ(PackHex(lua, "'>i3', 0x123456"), "123456");
  EXPECT_EQ(PackHex(lua, "'I1', 300"), "2c");
  EXPECT_EQ(PackHex(lua, "'i10', -1"), "ffffffffffffffff0000");
  EXPECT_EQ(PackHex(lua, "'>i10', -1"), "0000ffffffffffffffff");
  EXPECT_EQ(PackHex(lua, "'i0', 1"), "");
  EXPECT_EQ(PackHex(lua, "'h', -1.7"), "ffff");
  EXPECT_EQ(PackHex(lua, "'b', '12'"), "0c");
}

TEST(LuaStructTest, PackOutOfRangeNumbersWrapLikeRedisOnX86) {
  LuaTestState lua({OpenStructLib});
  EXPECT_EQ(PackHex(lua, "'i', 2^31"), "00000080");
  EXPECT_EQ(PackHex(lua, "'I', 2^32 + 5"), "05000000");
  EXPECT_EQ(PackHex(lua, "'l', 2^63"), "0000000000000080");
  EXPECT_EQ(PackHex(lua, "'L', 2^63 + 2^11"), "0008000000000080");
  EXPECT_EQ(PackHex(lua, "'L', 2^64"), "0000000000000000");
  EXPECT_EQ(PackHex(lua, "'l', -2^64"), "0000000000000080");
  EXPECT_EQ(PackHex(lua, "'l', 1e30"), "0000000000000000");
  EXPECT_EQ(PackHex(lua, "'i', 0/0"), "00000000");
}

TEST(LuaStructTest, PackFloatsAndStringsLikeRedis) {
  LuaTestState lua({OpenStructLib});
  EXPECT_EQ(PackHex(lua, "'f', 1.5"), "0000c03f");
  EXPECT_EQ(PackHex(lua, "'>d', 1.5"), "3ff8000000000000");
  EXPECT_EQ(PackHex(lua, "'d', 0.1"), "9a9999999999b93f");
  EXPECT_EQ(PackHex(lua, "'f', 1e300"), "0000807f");
  EXPECT_EQ(PackHex(lua, "'s', 'ab'"), "616200");
  EXPECT_EQ(PackHex(lua, "'s', 'a\\0b'"), "61006200");
  EXPECT_EQ(PackHex(lua, "'s', 1"), "3100");
  EXPECT_EQ(PackHex(lua, "'c', 'ab'"), "61");
  EXPECT_EQ(PackHex(lua, "'c2', 'ab'"), "6162");
  EXPECT_EQ(PackHex(lua, "'c0', 123"), "313233");
  EXPECT_EQ(PackHex(lua, "'xxbx', 1"), "00000100");
  EXPECT_EQ(PackHex(lua, "'> b h', 1, 2"), "010002");
  EXPECT_EQ(PackHex(lua, "'>bh<h', 1, 2, 3"), "0100020300");
}

TEST(LuaStructTest, AlignmentLikeRedis) {
  LuaTestState lua({OpenStructLib});
  EXPECT_EQ(PackHex(lua, "'bh', 1, 2"), "010200");
  EXPECT_EQ(PackHex(lua, "'!bh', 1, 2"), "01000200");
  EXPECT_EQ(PackHex(lua, "'!2bi', 1, 2"), "010002000000");
  EXPECT_EQ(PackHex(lua, "'!bd', 1, 2"), "01000000000000000000000000000040");
  EXPECT_EQ(PackHex(lua, "'!4d', 1"), "000000000000f03f");
  EXPECT_EQ(PackHex(lua, "'b!4bi', 1, 2, 3"), "0102000003000000");
  EXPECT_EQ(PackHex(lua, "'!bc3i', 1, 'abc', 2"), "0161626302000000");
  EXPECT_EQ(PackHex(lua, "'!bsi', 1, 'ab', 2"), "0161620002000000");
  EXPECT_EQ(PackHex(lua, "'!1073741824bd', 1, 2"), "01000000000000000000000000000040");
  // Sizes that are not powers of 2 use Redis's mask formula, not rounding up.
  EXPECT_EQ(PackHex(lua, "'!bbi3', 1, 2, 3"), "0102030000");
  EXPECT_EQ(PackHex(lua, "'!bbi5', 1, 2, 3"), "0102000000000300000000");
  EXPECT_EQ(PackHex(lua, "'!bbbi6', 1, 2, 3, 4"), "0102030000000000040000000000");
  EXPECT_EQ(PackHex(lua, "'<!4i3i3', 1, 2"), "00000100000000020000");
  EXPECT_EQ(lua.Eval("return struct.size('!bhi')"), "8");
  EXPECT_EQ(lua.Eval("return struct.size('!bd')"), "16");
}

TEST(LuaStructTest, PackErrorsLikeRedis) {
  LuaTestState lua({OpenStructLib});
  EXPECT_EQ(PackHex(lua, "'z', 'ab'"),
            "ERROR: test:1: bad argument #1 to 'pack' (invalid format option 'z')");
  EXPECT_EQ(PackHex(lua, "'=h', 1"),
            "ERROR: test:1: bad argument #1 to 'pack' (invalid format option '=')");
  EXPECT_EQ(PackHex(lua, "'3b', 1"),
            "ERROR: test:1: bad argument #1 to 'pack' (invalid format option '3')");
  EXPECT_EQ(PackHex(lua, "'b3', 1"),
            "ERROR: test:1: bad argument #1 to 'pack' (invalid format option '3')");
  EXPECT_EQ(PackHex(lua, "'c3', 'ab'"),
            "ERROR: test:1: bad argument #3 to 'pack' (string too short)");
  EXPECT_EQ(PackHex(lua, "'bc3', 1, 'ab'"),
            "ERROR: test:1: bad argument #4 to 'pack' (string too short)");
  EXPECT_EQ(PackHex(lua, "'bb', 1"),
            "ERROR: test:1: bad argument #3 to 'pack' (number expected, got nil)");
  EXPECT_EQ(PackHex(lua, "'bs', 1"),
            "ERROR: test:1: bad argument #3 to 'pack' (string expected, got nil)");
  EXPECT_EQ(PackHex(lua, "'b', 'x'"),
            "ERROR: test:1: bad argument #2 to 'pack' (number expected, got string)");
  EXPECT_EQ(PackHex(lua, "'!3bi', 1, 2"), "ERROR: test:1: alignment 3 is not a power of 2");
  EXPECT_EQ(PackHex(lua, "'!0bi', 1, 2"), "ERROR: test:1: alignment 0 is not a power of 2");
  EXPECT_EQ(PackHex(lua, "'i33', 1"),
            "ERROR: test:1: integral size 33 is larger than limit of 32");
  EXPECT_EQ(PackHex(lua, "'c99999999999', 'a'"), "ERROR: test:1: integral size overflow");
  EXPECT_EQ(PackHex(lua, "'!2147483648b', 1"), "ERROR: test:1: integral size overflow");
}

TEST(LuaStructTest, UnpackLikeRedis) {
  LuaTestState lua({OpenStructLib});
  EXPECT_EQ(Unpack(lua, "'bhi', struct.pack('bhi', 1, 2, 3)"), "1,2,3,8");
  EXPECT_EQ(Unpack(lua, "'>I3', '\\1\\2\\3'"), "66051,4");
  EXPECT_EQ(Unpack(lua, "'<i3', '\\255\\255\\255'"), "-1,4");
  EXPECT_EQ(Unpack(lua, "'<I8', '\\255\\255\\255\\255\\255\\255\\255\\255'"),
            "1.844674407371e+19,9");
  EXPECT_EQ(Unpack(lua, "'<i8', '\\0\\0\\0\\0\\0\\0\\0\\128'"), "-9.2233720368548e+18,9");
  EXPECT_EQ(Unpack(lua, "'>i10', '\\255\\255\\255\\255\\255\\255\\255\\255\\255\\254'"), "-2,11");
  EXPECT_EQ(Unpack(lua, "'<i9', '\\128\\0\\0\\0\\0\\0\\0\\0\\0'"), "-128,10");
  EXPECT_EQ(Unpack(lua, "'<I10', '\\1\\0\\0\\0\\0\\0\\0\\0\\1\\0'"), "1,11");
  EXPECT_EQ(Unpack(lua, "'<i0', 'ab'"), "0,1");
  EXPECT_EQ(Unpack(lua, "'!bi', '\\1\\0\\0\\0\\2\\0\\0\\0'"), "1,2,9");
  EXPECT_EQ(Unpack(lua, "'f', struct.pack('f', 0.1)"), "0.10000000149012,5");
  EXPECT_EQ(Unpack(lua, "'>f', '\\63\\192\\0\\0'"), "1.5,5");
  EXPECT_EQ(Unpack(lua, "'c3', 'abcdef'"), "abc,4");
  EXPECT_EQ(Unpack(lua, "'sb', 'ab\\0\\1'"), "ab,1,5");
  EXPECT_EQ(Unpack(lua, "'x', 'abc'"), "2");
  EXPECT_EQ(Unpack(lua, "'', 'abc'"), "1");
  EXPECT_EQ(Unpack(lua, "'i', 123456"), "875770417,5");
  EXPECT_EQ(Unpack(lua, "'b', 'abc', 2"), "98,3");
  EXPECT_EQ(Unpack(lua, "'b', 'abc', 3.9"), "99,4");
  EXPECT_EQ(Unpack(lua, "'', 'abc', -1"), "-1");
}

TEST(LuaStructTest, UnpackC0TakesThePreviousValueAsLength) {
  LuaTestState lua({OpenStructLib});
  EXPECT_EQ(Unpack(lua, "'bc0', '\\3abcdef'"), "abc,5");
  EXPECT_EQ(Unpack(lua, "'bc0b', '\\2ab\\3'"), "ab,3,5");
  EXPECT_EQ(Unpack(lua, "'bbc0', '\\1\\2ab'"), "1,ab,5");
  EXPECT_EQ(Unpack(lua, "'sc0', '3\\0abc'"), "abc,6");
  EXPECT_EQ(Unpack(lua, "'dc0', struct.pack('d', 2.7) .. 'abc'"), "ab,11");
  EXPECT_EQ(Unpack(lua, "'c0', 'abcdef'"), "ERROR: test:1: format 'c0' needs a previous size");
  EXPECT_EQ(Unpack(lua, "'sc0', 'x\\0abc'"), "ERROR: test:1: format 'c0' needs a previous size");
  EXPECT_EQ(Unpack(lua, "'bc0', '\\9abcdef'"),
            "ERROR: test:1: bad argument #2 to 'unpack' (data string too short)");
  EXPECT_EQ(Unpack(lua, "'bc0', '\\255abc'"),
            "ERROR: test:1: bad argument #2 to 'unpack' (data string too short)");
}

TEST(LuaStructTest, UnpackErrorsLikeRedis) {
  LuaTestState lua({OpenStructLib});
  const std::string too_short =
      "ERROR: test:1: bad argument #2 to 'unpack' (data string too short)";
  EXPECT_EQ(Unpack(lua, "'b', ''"), too_short);
  EXPECT_EQ(Unpack(lua, "'h', 'a'"), too_short);
  EXPECT_EQ(Unpack(lua, "'x', ''"), too_short);
  EXPECT_EQ(Unpack(lua, "'c4', 'abc'"), too_short);
  EXPECT_EQ(Unpack(lua, "'b', 'abc', 4"), too_short);
  EXPECT_EQ(Unpack(lua, "'b', 'abc', -1"), too_short);
  EXPECT_EQ(Unpack(lua, "'s', 'ab', -1"), too_short);
  EXPECT_EQ(Unpack(lua, "'!4h', 'abcd', -1"), too_short);
  EXPECT_EQ(Unpack(lua, "'b', 'ab', 2^64"), too_short);
  EXPECT_EQ(Unpack(lua, "'b', 'abc', 0"),
            "ERROR: test:1: bad argument #3 to 'unpack' (offset must be 1 or greater)");
  EXPECT_EQ(Unpack(lua, "'s', 'abc'"), "ERROR: test:1: unfinished string in data");
  EXPECT_EQ(Unpack(lua, "'z', 'abc'"),
            "ERROR: test:1: bad argument #1 to 'unpack' (invalid format option 'z')");
  EXPECT_EQ(Unpack(lua, "'c99999999999', 'a'"), "ERROR: test:1: integral size overflow");
}

TEST(LuaStructTest, UnpackResultCountStopsAtRedisLimit) {
  LuaTestState lua({OpenStructLib});
  EXPECT_EQ(lua.Eval("return select('#', struct.unpack(string.rep('b', 7997), "
                     "string.rep('a', 7997)))"),
            "7998");
  EXPECT_EQ(lua.Eval("local r = struct.unpack(string.rep('b', 7998), string.rep('a', 7998)) "
                     "return r"),
            "ERROR: test:1: stack overflow (too many results)");
  EXPECT_EQ(lua.Eval("return select('#', struct.unpack(string.rep('x', 9000), "
                     "string.rep('a', 9000)))"),
            "1");
}

TEST(LuaStructTest, SizeLikeRedis) {
  LuaTestState lua({OpenStructLib});
  EXPECT_EQ(lua.Eval("return struct.size('bhi')"), "7");
  EXPECT_EQ(lua.Eval("return struct.size('c10')"), "10");
  EXPECT_EQ(lua.Eval("return struct.size('c2147483647c2147483647c2147483647')"), "6442450941");
  // Unknown letters and digits count 0 in size (but not in pack/unpack).
  EXPECT_EQ(lua.Eval("return struct.size('z')"), "0");
  EXPECT_EQ(lua.Eval("return struct.size('x99')"), "1");
  EXPECT_EQ(lua.Eval("return struct.size('d10')"), "8");
  EXPECT_EQ(lua.Eval("return struct.size(12)"), "0");
  EXPECT_EQ(lua.Eval("local r = struct.size('s') return r"),
            "ERROR: test:1: bad argument #1 to 'size' (option 's' has no fixed size)");
  EXPECT_EQ(lua.Eval("local r = struct.size('c0') return r"),
            "ERROR: test:1: bad argument #1 to 'size' (option 'c0' has no fixed size)");
  EXPECT_EQ(lua.Eval("local r = struct.size('=') return r"),
            "ERROR: test:1: bad argument #1 to 'size' (invalid format option '=')");
  EXPECT_EQ(lua.Eval("local r = struct.size('i99999999999') return r"),
            "ERROR: test:1: integral size overflow");
  EXPECT_EQ(lua.Eval("local r = struct.size('!99b') return r"),
            "ERROR: test:1: alignment 99 is not a power of 2");
}

TEST(LuaStructTest, PackResultIsBounded) {
  LuaTestState lua({OpenStructLib});
  // 200 references to one 4 MiB string packed whole: 800 MiB, refused (Redis would build it).
  EXPECT_EQ(lua.Eval("local s = string.rep('x', 2^22) local t = {} for i = 1, 200 do t[i] = s "
                     "end local r = struct.pack(string.rep('c0', 200), unpack(t)) return r"),
            "ERROR: test:1: struct.pack result exceeds 536870912 bytes");
}

}  // namespace
}  // namespace dashkv
