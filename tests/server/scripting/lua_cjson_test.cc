// Expected strings were returned by redis-server 7.0.15 for the same expressions.
#include <gtest/gtest.h>

#include "server/scripting/lua_libs.h"
#include "tests/testing/lua_test_state.h"

namespace dashkv {
namespace {

using testing::LuaTestState;

TEST(LuaCjsonTest, EncodeMatchesRedis) {
  LuaTestState lua({OpenCjsonLib});
  EXPECT_EQ(lua.Eval("return cjson.encode({})"), "{}");
  EXPECT_EQ(lua.Eval("return cjson.encode({1,2,{a=1}})"), "[1,2,{\"a\":1}]");
  EXPECT_EQ(lua.Eval("return cjson.encode({a={b={c={1,2}}}})"), "{\"a\":{\"b\":{\"c\":[1,2]}}}");
  EXPECT_EQ(lua.Eval("return cjson.encode({[1]=1,[3]=3})"), "[1,null,3]");
  EXPECT_EQ(lua.Eval("return cjson.encode({1,2,nil,4})"), "[1,2,null,4]");
  EXPECT_EQ(lua.Eval("return cjson.encode({[1.5]=1})"), "{\"1.5\":1}");
  EXPECT_EQ(lua.Eval("return cjson.encode(cjson.null)"), "null");
  EXPECT_EQ(lua.Eval("return cjson.encode(nil)"), "null");
  EXPECT_EQ(lua.Eval("return cjson.encode(true)"), "true");
  EXPECT_EQ(lua.Eval("return cjson.encode('a/b\"\\\\\\n\\1\\127')"),
            "\"a\\/b\\\"\\\\\\n\\u0001\\u007f\"");
}

TEST(LuaCjsonTest, EncodeNumbersWithRedisPrecision) {
  LuaTestState lua({OpenCjsonLib});
  EXPECT_EQ(lua.Eval("return cjson.encode(1e300)"), "1e+300");
  EXPECT_EQ(lua.Eval("return cjson.encode(0.1)"), "0.1");
  EXPECT_EQ(lua.Eval("return cjson.encode(2^53)"), "9.007199254741e+15");
  EXPECT_EQ(lua.Eval("return cjson.encode(-2^31)"), "-2147483648");
  EXPECT_EQ(lua.Eval("return cjson.encode(1/3)"), "0.33333333333333");
  EXPECT_EQ(lua.Eval("return cjson.encode(-0)"), "-0");
  EXPECT_EQ(lua.Eval("return cjson.encode(123456789012345)"), "1.2345678901234e+14");
  EXPECT_EQ(lua.Eval("return cjson.encode(5e-324)"), "4.9406564584125e-324");
}

TEST(LuaCjsonTest, EncodeErrorsMatchRedis) {
  LuaTestState lua({OpenCjsonLib});
  EXPECT_EQ(lua.Eval("local r = cjson.encode({[1]=1,[20]=3}) return r"),
            "ERROR: test:1: Cannot serialise table: excessively sparse array");
  EXPECT_EQ(lua.Eval("local r = cjson.encode(1/0) return r"),
            "ERROR: test:1: Cannot serialise number: must not be NaN or Inf");
  EXPECT_EQ(lua.Eval("local r = cjson.encode(string.len) return r"),
            "ERROR: test:1: Cannot serialise function: type not supported");
  EXPECT_EQ(lua.Eval("local r = cjson.encode({[true]=1}) return r"),
            "ERROR: test:1: Cannot serialise boolean: table key must be a number or string");
  EXPECT_EQ(lua.Eval("local r = cjson.encode() return r"),
            "ERROR: test:1: bad argument #1 to 'encode' (expected 1 argument)");
  EXPECT_EQ(lua.Eval("local t = {} t[1] = t local r = cjson.encode(t) return r"),
            "ERROR: test:1: Cannot serialise, excessive nesting (1001)");
}

TEST(LuaCjsonTest, DecodeMatchesRedis) {
  LuaTestState lua({OpenCjsonLib});
  EXPECT_EQ(lua.Eval("local t = cjson.decode('[1,2,3,\"a\",null,true]') return #t .. "
                     "type(t[5]) .. tostring(t[5] == cjson.null) .. tostring(t[6])"),
            "6userdatatruetrue");
  EXPECT_EQ(lua.Eval("local t = cjson.decode('{\"a\":1,\"b\":[1,{\"c\":null}]}') "
                     "return t.a .. #t.b .. tostring(t.b[2].c == cjson.null)"),
            "12true");
  EXPECT_EQ(lua.Eval("return cjson.decode('null') == cjson.null"), "true");
  EXPECT_EQ(lua.Eval("return tostring(cjson.decode('1e400'))"), "inf");
  EXPECT_EQ(lua.Eval("return tostring(cjson.decode('0x10'))"), "16");
  EXPECT_EQ(lua.Eval("return tostring(cjson.decode('12345678901234567890'))"),
            "1.2345678901235e+19");
  EXPECT_EQ(lua.Eval("return hex(cjson.decode('\"\\\\u00e9\\\\ud83d\\\\ude00\"'))"),
            "c3a9f09f9880");
}

TEST(LuaCjsonTest, DecodeErrorsMatchRedis) {
  LuaTestState lua({OpenCjsonLib});
  EXPECT_EQ(lua.Eval("local r = cjson.decode('[1,2') return r"),
            "ERROR: test:1: Expected comma or array end but found T_END at character 5");
  EXPECT_EQ(lua.Eval("local r = cjson.decode('{1:2}') return r"),
            "ERROR: test:1: Expected object key string but found T_NUMBER at character 2");
  EXPECT_EQ(lua.Eval("local r = cjson.decode('[1] x') return r"),
            "ERROR: test:1: Expected the end but found invalid token at character 5");
  EXPECT_EQ(lua.Eval("local r = cjson.decode('') return r"),
            "ERROR: test:1: Expected value but found T_END at character 1");
}

TEST(LuaCjsonTest, DeepNestingErrorsAtRedisLimits) {
  LuaTestState lua({OpenCjsonLib});
  EXPECT_EQ(lua.Eval("return #cjson.decode(string.rep('[', 1000) .. string.rep(']', 1000))"),
            "1");
  EXPECT_EQ(lua.Eval("local r = cjson.decode(string.rep('[', 100000)) return r"),
            "ERROR: test:1: Found too many nested data structures (1001) at character 1001");
  EXPECT_EQ(lua.Eval("local t = {} local c = t for i = 1, 1001 do c[1] = {} c = c[1] end "
                     "local r = cjson.encode(t) return r"),
            "ERROR: test:1: Cannot serialise, excessive nesting (1001)");
}

TEST(LuaCjsonTest, SettingsExistWithRedisDefaults) {
  LuaTestState lua({OpenCjsonLib});
  EXPECT_EQ(lua.Eval("return cjson._VERSION"), "2.1.0");
  EXPECT_EQ(lua.Eval("return cjson.encode_max_depth()"), "1000");
  EXPECT_EQ(lua.Eval("return cjson.decode_max_depth()"), "1000");
  EXPECT_EQ(lua.Eval("return cjson.encode_number_precision()"), "14");
  EXPECT_EQ(lua.Eval("return cjson.encode_keep_buffer()"), "true");
  EXPECT_EQ(lua.Eval("return cjson.encode_invalid_numbers()"), "false");
  EXPECT_EQ(lua.Eval("return cjson.decode_invalid_numbers()"), "true");
  EXPECT_EQ(lua.Eval("return type(cjson.encode_sparse_array)"), "function");
  EXPECT_EQ(lua.Eval("cjson.encode_max_depth(5) local r = cjson.encode({{{{{{1}}}}}}) return r"),
            "ERROR: test:1: Cannot serialise, excessive nesting (6)");
}

TEST(LuaCjsonTest, EncodeRefusesOutputPastOneGibibyte) {
  LuaTestState lua({OpenCjsonLib});
  // 128 MiB of control bytes escape to 768 MiB: accepted. Twice that is refused up front.
  EXPECT_EQ(lua.Eval("local s = string.rep('\\1', 2^27) return #cjson.encode({s})"),
            "805306372");
  EXPECT_EQ(lua.Eval("local s = string.rep('\\1', 2^27) local r = cjson.encode({s, {s}}) "
                     "return r"),
            "ERROR: test:1: Cannot serialise: output may exceed 1073741824 bytes");
}

}  // namespace
}  // namespace dashkv
