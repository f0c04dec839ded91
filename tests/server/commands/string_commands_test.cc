// String command tests against a real 2-shard server. Expected replies were taken from
// redis-server 7.0.15 (same commands run by hand), not from dashkv's output.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "server/cmd_context.h"
#include "tests/testing/test_server.h"

namespace dashkv {
namespace {

using testing::RespValue;
using testing::TestServer;

constexpr char kWrongType[] = "WRONGTYPE Operation against a key holding the wrong kind of value";
constexpr char kNotInt[] = "ERR value is not an integer or out of range";
constexpr char kSyntax[] = "ERR syntax error";

// Returns the error text of `v`, or "<not an error: ...>".
// A stand-in for a list value (see MakeNonString).
class FakeList : public ObjectBase {
 public:
  size_t MallocUsed() const override { return sizeof(*this); }
};

std::string Err(const RespValue& v) {
  if (v.is_error()) return v.str;
  std::ostringstream os;
  os << "<not an error: " << v << ">";
  return os.str();
}

class StringCommandsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    c_ = srv_.Connect();
    ASSERT_TRUE(c_->connected());
  }
  RespValue Run(std::initializer_list<std::string_view> args) { return c_->Run(args); }
  RespValue Run(const std::vector<std::string>& args) { return c_->Run(args); }
  // Makes `key` hold a non-string value (a stand-in list object put straight into its shard), so
  // WRONGTYPE paths are testable without the list family.
  void MakeNonString(std::string_view key) {
    std::string k(key);
    ShardSet& ss = srv_.server().shard_set();
    unsigned sid = ss.ShardOf(k);
    ss.RunOnAllBlocking([&](Shard& shard) {
      if (shard.index() != sid) return;
      OpResult<DbSlice::AddResult> res = shard.db(0).FindOrAdd(k, NowMs());
      if (res) res->it->second.SetObject(ObjType::kList, 0, new FakeList);
    });
    ASSERT_EQ(Run({"TYPE", key}), "list");
  }

  TestServer srv_{2};
  std::unique_ptr<testing::RespClient> c_;
};

TEST_F(StringCommandsTest, SetGetBasics) {
  EXPECT_TRUE(Run({"GET", "k"}).is_null());
  EXPECT_EQ(Run({"SET", "k", "v"}), "OK");
  EXPECT_EQ(Run({"GET", "k"}), "v");
  EXPECT_EQ(Run({"SET", "k", ""}), "OK");
  EXPECT_EQ(Run({"GET", "k"}), "");
  EXPECT_EQ(Run({"STRLEN", "k"}), 0);
  EXPECT_EQ(Err(Run({"GET"})), "ERR wrong number of arguments for 'get' command");
  EXPECT_EQ(Err(Run({"SET", "k"})), "ERR wrong number of arguments for 'set' command");
}

TEST_F(StringCommandsTest, BinaryAndBoundaryValues) {
  std::string bin("a\0b\r\nc\0", 7);
  EXPECT_EQ(Run({"SET", bin, bin}), "OK");
  EXPECT_EQ(Run({"GET", bin}), bin);
  EXPECT_EQ(Run({"STRLEN", bin}), 7);
  for (size_t n : {0, 1, 14, 15, 16, 17, 20, 21, 44, 45, 100, 4096}) {
    std::string v(n, 'x');
    for (size_t i = 0; i < n; ++i) v[i] = static_cast<char>('a' + i % 26);
    std::string key = "len" + std::to_string(n);
    ASSERT_EQ(Run({"SET", key, v}), "OK") << n;
    EXPECT_EQ(Run({"GET", key}), v) << n;
    EXPECT_EQ(Run({"STRLEN", key}), static_cast<int64_t>(n)) << n;
    EXPECT_EQ(Run({"APPEND", key, "!"}), static_cast<int64_t>(n + 1)) << n;
    EXPECT_EQ(Run({"GET", key}), v + "!") << n;
  }
  std::string big(1 << 20, '\0');
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>(i * 7);
  EXPECT_EQ(Run({"SET", "big", big}), "OK");
  EXPECT_EQ(Run({"GET", "big"}), big);
  EXPECT_EQ(Run({"STRLEN", "big"}), 1 << 20);
  EXPECT_EQ(Run({"GETRANGE", "big", "-3", "-1"}), big.substr(big.size() - 3));
  EXPECT_EQ(Run({"APPEND", "big", "xyz"}), (1 << 20) + 3);
  EXPECT_EQ(Run({"GETRANGE", "big", "-3", "-1"}), "xyz");
}

TEST_F(StringCommandsTest, IntegerValuesRoundTrip) {
  for (const char* v : {"0", "-1", "123", "9223372036854775807", "-9223372036854775808",
                        "01", "-0", "+1", " 1", "1 ", "12345678901234567890", "1.5"}) {
    ASSERT_EQ(Run({"SET", "n", v}), "OK");
    EXPECT_EQ(Run({"GET", "n"}), v);
    EXPECT_EQ(Run({"STRLEN", "n"}), static_cast<int64_t>(std::string_view(v).size()));
  }
  EXPECT_EQ(Run({"SET", "n", "123"}), "OK");
  EXPECT_EQ(Run({"OBJECT", "ENCODING", "n"}), "int");
  EXPECT_EQ(Run({"SET", "n", "01"}), "OK");
  EXPECT_EQ(Run({"OBJECT", "ENCODING", "n"}), "embstr");
  EXPECT_EQ(Run({"APPEND", "n", "x"}), 3);
  EXPECT_EQ(Run({"OBJECT", "ENCODING", "n"}), "raw");
  EXPECT_EQ(Run({"SET", "m", "5"}), "OK");
  EXPECT_EQ(Run({"INCR", "m"}), 6);
  EXPECT_EQ(Run({"OBJECT", "ENCODING", "m"}), "int");
  EXPECT_EQ(Run({"INCRBYFLOAT", "m", "1.5"}), "7.5");
  EXPECT_EQ(Run({"OBJECT", "ENCODING", "m"}), "embstr");
  EXPECT_EQ(Run({"APPEND", "fresh", "123"}), 3);
  EXPECT_EQ(Run({"OBJECT", "ENCODING", "fresh"}), "int");
  EXPECT_EQ(Run({"SETRANGE", "sr", "0", "123"}), 3);
  EXPECT_EQ(Run({"OBJECT", "ENCODING", "sr"}), "raw");
}

TEST_F(StringCommandsTest, SetConditions) {
  EXPECT_TRUE(Run({"SET", "k", "v", "XX"}).is_null());
  EXPECT_TRUE(Run({"GET", "k"}).is_null());
  EXPECT_EQ(Run({"SET", "k", "v", "NX"}), "OK");
  EXPECT_TRUE(Run({"SET", "k", "w", "NX"}).is_null());
  EXPECT_EQ(Run({"SET", "k", "w", "XX"}), "OK");
  EXPECT_EQ(Run({"GET", "k"}), "w");
  EXPECT_TRUE(Run({"SET", "k", "z", "nx", "nx"}).is_null());
  EXPECT_EQ(Err(Run({"SET", "k", "v", "NX", "XX"})), kSyntax);
  EXPECT_EQ(Err(Run({"SET", "k", "v", "XX", "NX"})), kSyntax);
  EXPECT_EQ(Err(Run({"SET", "k", "v", "foo"})), kSyntax);
  EXPECT_EQ(Err(Run({"SET", "k", "v", "PERSIST"})), kSyntax);
}

TEST_F(StringCommandsTest, SetGetOption) {
  EXPECT_TRUE(Run({"SET", "k", "v", "GET"}).is_null());
  EXPECT_EQ(Run({"SET", "k", "w", "GET"}), "v");
  EXPECT_EQ(Run({"SET", "k", "x", "GET", "GET"}), "w");
  // NX with GET is allowed in 7.0: replies the old value and does not write.
  EXPECT_EQ(Run({"SET", "k", "y", "NX", "GET"}), "x");
  EXPECT_EQ(Run({"GET", "k"}), "x");
  EXPECT_EQ(Run({"SET", "k", "y", "XX", "GET"}), "x");
  EXPECT_TRUE(Run({"SET", "nokey", "v", "XX", "GET"}).is_null());
  EXPECT_EQ(Run({"EXISTS", "nokey"}), 0);
  EXPECT_TRUE(Run({"SET", "new", "v", "NX", "GET"}).is_null());
  EXPECT_EQ(Run({"GET", "new"}), "v");
  EXPECT_EQ(Run({"GETSET", "k", "z"}), "y");
  EXPECT_TRUE(Run({"GETSET", "nok", "z"}).is_null());
  EXPECT_EQ(Run({"GET", "nok"}), "z");
}

TEST_F(StringCommandsTest, SetWrongType) {
  MakeNonString("l");
  EXPECT_EQ(Err(Run({"SET", "l", "v", "GET"})), kWrongType);
  EXPECT_EQ(Err(Run({"GETSET", "l", "v"})), kWrongType);
  // The time is checked before the type.
  EXPECT_EQ(Err(Run({"SET", "l", "v", "GET", "EX", "abc"})), kNotInt);
  EXPECT_EQ(Err(Run({"GET", "l"})), kWrongType);
  EXPECT_EQ(Err(Run({"GETDEL", "l"})), kWrongType);
  EXPECT_EQ(Err(Run({"GETEX", "l"})), kWrongType);
  EXPECT_EQ(Err(Run({"GETEX", "l", "EX", "0"})), kWrongType);
  EXPECT_EQ(Err(Run({"APPEND", "l", "x"})), kWrongType);
  EXPECT_EQ(Err(Run({"STRLEN", "l"})), kWrongType);
  EXPECT_EQ(Err(Run({"INCR", "l"})), kWrongType);
  EXPECT_EQ(Err(Run({"INCRBYFLOAT", "l", "abc"})), kWrongType);
  EXPECT_EQ(Err(Run({"GETRANGE", "l", "0", "1"})), kWrongType);
  EXPECT_EQ(Err(Run({"SETRANGE", "l", "0", "x"})), kWrongType);
  EXPECT_EQ(Run({"SETNX", "l", "v"}), 0);
  // Plain SET overwrites any type.
  EXPECT_EQ(Run({"SET", "l", "v"}), "OK");
  EXPECT_EQ(Run({"GET", "l"}), "v");
}

TEST_F(StringCommandsTest, SetExpiryOptions) {
  EXPECT_EQ(Run({"SET", "k", "v", "EX", "100"}), "OK");
  EXPECT_EQ(Run({"TTL", "k"}), 100);
  EXPECT_EQ(Run({"SET", "k", "v", "PX", "100000"}), "OK");
  int64_t pttl = Run({"PTTL", "k"}).num;
  EXPECT_GT(pttl, 99000);
  EXPECT_LE(pttl, 100000);
  EXPECT_EQ(Run({"SET", "k", "v", "EX", "10", "EX", "20"}), "OK");  // same option twice: last
  EXPECT_EQ(Run({"TTL", "k"}), 20);
  EXPECT_EQ(Run({"SET", "k", "w", "KEEPTTL"}), "OK");
  EXPECT_EQ(Run({"TTL", "k"}), 20);
  EXPECT_EQ(Run({"SET", "k", "w"}), "OK");  // plain SET clears the TTL
  EXPECT_EQ(Run({"TTL", "k"}), -1);
  EXPECT_EQ(Run({"SET", "k", "v", "EXAT", "9223372036854775"}), "OK");
  EXPECT_EQ(Run({"EXPIRETIME", "k"}), 9223372036854775);
  EXPECT_EQ(Run({"SET", "k", "v", "PXAT", "9223372036854775807"}), "OK");
  EXPECT_EQ(Run({"PEXPIRETIME", "k"}), 9223372036854775807);
  // A deadline in the past: OK, and the key is gone.
  EXPECT_EQ(Run({"SET", "k", "v", "EXAT", "1"}), "OK");
  EXPECT_TRUE(Run({"GET", "k"}).is_null());
  EXPECT_EQ(Run({"SET", "k", "v", "PXAT", "1"}), "OK");
  EXPECT_EQ(Run({"EXISTS", "k"}), 0);
  EXPECT_EQ(Run({"SET", "k", "v"}), "OK");
  EXPECT_EQ(Run({"SET", "k", "v2", "PXAT", "1", "GET"}), "v");
  EXPECT_EQ(Run({"EXISTS", "k"}), 0);
}

TEST_F(StringCommandsTest, SetExpiryErrors) {
  const std::string kInvalid = "ERR invalid expire time in 'set' command";
  EXPECT_EQ(Err(Run({"SET", "k", "v", "EX", "0"})), kInvalid);
  EXPECT_EQ(Err(Run({"SET", "k", "v", "EX", "-1"})), kInvalid);
  EXPECT_EQ(Err(Run({"SET", "k", "v", "PX", "0"})), kInvalid);
  EXPECT_EQ(Err(Run({"SET", "k", "v", "EXAT", "0"})), kInvalid);
  EXPECT_EQ(Err(Run({"SET", "k", "v", "EX", "9223372036854775807"})), kInvalid);
  EXPECT_EQ(Err(Run({"SET", "k", "v", "EX", "9223372036854775"})), kInvalid);  // + now overflows
  EXPECT_EQ(Err(Run({"SET", "k", "v", "PX", "9223372036854775807"})), kInvalid);
  EXPECT_EQ(Err(Run({"SET", "k", "v", "EXAT", "9223372036854776"})), kInvalid);
  EXPECT_EQ(Err(Run({"SET", "k", "v", "EX", "abc"})), kNotInt);
  EXPECT_EQ(Err(Run({"SET", "k", "v", "EX", "1.5"})), kNotInt);
  EXPECT_EQ(Err(Run({"SET", "k", "v", "EX"})), kSyntax);
  EXPECT_EQ(Err(Run({"SET", "k", "v", "EX", "10", "PX", "10"})), kSyntax);
  EXPECT_EQ(Err(Run({"SET", "k", "v", "KEEPTTL", "EX", "1"})), kSyntax);
  EXPECT_EQ(Err(Run({"SET", "k", "v", "EX", "10", "KEEPTTL"})), kSyntax);
  EXPECT_EQ(Err(Run({"SET", "k", "v", "EXAT", "10", "PXAT", "10"})), kSyntax);
  EXPECT_EQ(Run({"EXISTS", "k"}), 0);
}

TEST_F(StringCommandsTest, SetExPSetExSetNx) {
  EXPECT_EQ(Run({"SETEX", "k", "10", "v"}), "OK");
  EXPECT_EQ(Run({"TTL", "k"}), 10);
  EXPECT_EQ(Run({"GET", "k"}), "v");
  EXPECT_EQ(Run({"PSETEX", "k", "100000", "w"}), "OK");
  EXPECT_GT(Run({"PTTL", "k"}).num, 99000);
  EXPECT_EQ(Run({"GET", "k"}), "w");
  EXPECT_EQ(Err(Run({"SETEX", "k", "0", "v"})), "ERR invalid expire time in 'setex' command");
  EXPECT_EQ(Err(Run({"SETEX", "k", "-5", "v"})), "ERR invalid expire time in 'setex' command");
  EXPECT_EQ(Err(Run({"SETEX", "k", "9223372036854775", "v"})),
            "ERR invalid expire time in 'setex' command");
  EXPECT_EQ(Err(Run({"PSETEX", "k", "0", "v"})), "ERR invalid expire time in 'psetex' command");
  EXPECT_EQ(Err(Run({"SETEX", "k", "abc", "v"})), kNotInt);
  EXPECT_EQ(Run({"SETNX", "k", "x"}), 0);
  EXPECT_EQ(Run({"GET", "k"}), "w");
  EXPECT_EQ(Run({"SETNX", "k2", "x"}), 1);
  EXPECT_EQ(Run({"GET", "k2"}), "x");
  EXPECT_EQ(Run({"TTL", "k2"}), -1);
}

TEST_F(StringCommandsTest, GetDelAndGetEx) {
  EXPECT_EQ(Run({"SET", "k", "hello"}), "OK");
  EXPECT_EQ(Run({"GETDEL", "k"}), "hello");
  EXPECT_TRUE(Run({"GETDEL", "k"}).is_null());
  EXPECT_EQ(Run({"EXISTS", "k"}), 0);

  EXPECT_EQ(Run({"SET", "k", "hello"}), "OK");
  EXPECT_EQ(Run({"GETEX", "k"}), "hello");
  EXPECT_EQ(Run({"TTL", "k"}), -1);
  EXPECT_EQ(Run({"GETEX", "k", "EX", "100"}), "hello");
  EXPECT_EQ(Run({"TTL", "k"}), 100);
  EXPECT_EQ(Run({"GETEX", "k"}), "hello");  // no option keeps the TTL
  EXPECT_EQ(Run({"TTL", "k"}), 100);
  EXPECT_EQ(Run({"GETEX", "k", "PERSIST"}), "hello");
  EXPECT_EQ(Run({"TTL", "k"}), -1);
  EXPECT_EQ(Run({"GETEX", "k", "persist", "persist"}), "hello");
  EXPECT_EQ(Run({"GETEX", "k", "PX", "50000"}), "hello");
  EXPECT_GT(Run({"PTTL", "k"}).num, 49000);
  EXPECT_EQ(Run({"GETEX", "k", "PXAT", "9223372036854775807"}), "hello");
  EXPECT_EQ(Run({"PEXPIRETIME", "k"}), 9223372036854775807);
  EXPECT_EQ(Err(Run({"GETEX", "k", "PX", "0"})), "ERR invalid expire time in 'getex' command");
  EXPECT_EQ(Err(Run({"GETEX", "k", "EX", "9223372036854775"})),
            "ERR invalid expire time in 'getex' command");
  EXPECT_EQ(Err(Run({"GETEX", "k", "EX", "abc"})), kNotInt);
  EXPECT_EQ(Err(Run({"GETEX", "k", "EX", "10", "PX", "10"})), kSyntax);
  EXPECT_EQ(Err(Run({"GETEX", "k", "PERSIST", "EX", "10"})), kSyntax);
  EXPECT_EQ(Err(Run({"GETEX", "k", "KEEPTTL"})), kSyntax);
  EXPECT_EQ(Err(Run({"GETEX", "k", "NX"})), kSyntax);
  EXPECT_EQ(Err(Run({"GETEX", "k", "EX"})), kSyntax);
  // Syntax errors come first; number errors only for an existing key.
  EXPECT_EQ(Err(Run({"GETEX", "nokey", "foo"})), kSyntax);
  EXPECT_TRUE(Run({"GETEX", "nokey", "EX", "abc"}).is_null());
  EXPECT_TRUE(Run({"GETEX", "nokey", "EX", "0"}).is_null());
  // A deadline in the past returns the value and deletes the key.
  EXPECT_EQ(Run({"GETEX", "k", "EXAT", "1"}), "hello");
  EXPECT_EQ(Run({"EXISTS", "k"}), 0);
}

TEST_F(StringCommandsTest, AppendAndStrlen) {
  EXPECT_EQ(Run({"STRLEN", "k"}), 0);
  EXPECT_EQ(Run({"APPEND", "k", "abc"}), 3);
  EXPECT_EQ(Run({"APPEND", "k", ""}), 3);
  EXPECT_EQ(Run({"APPEND", "k", std::string("\0\r\n", 3)}), 6);
  EXPECT_EQ(Run({"GET", "k"}), std::string("abc\0\r\n", 6));
  EXPECT_EQ(Run({"SET", "n", "12345"}), "OK");
  EXPECT_EQ(Run({"STRLEN", "n"}), 5);
  EXPECT_EQ(Run({"APPEND", "n", "6"}), 6);
  EXPECT_EQ(Run({"GET", "n"}), "123456");
  EXPECT_EQ(Run({"INCR", "n"}), 123457);
  // APPEND keeps the TTL.
  EXPECT_EQ(Run({"SET", "t", "a", "EX", "100"}), "OK");
  EXPECT_EQ(Run({"APPEND", "t", "b"}), 2);
  EXPECT_EQ(Run({"TTL", "t"}), 100);
  // Growing across the inline boundary, one byte at a time.
  std::string expect;
  for (int i = 0; i < 40; ++i) {
    expect.push_back(static_cast<char>('a' + i % 26));
    ASSERT_EQ(Run({"APPEND", "grow", expect.substr(i)}), i + 1);
  }
  EXPECT_EQ(Run({"GET", "grow"}), expect);
}

TEST_F(StringCommandsTest, IncrDecr) {
  EXPECT_EQ(Run({"INCR", "n"}), 1);
  EXPECT_EQ(Run({"INCRBY", "n", "10"}), 11);
  EXPECT_EQ(Run({"DECR", "n"}), 10);
  EXPECT_EQ(Run({"DECRBY", "n", "20"}), -10);
  EXPECT_EQ(Run({"GET", "n"}), "-10");
  EXPECT_EQ(Run({"DECR", "fresh"}), -1);
  EXPECT_EQ(Run({"INCRBY", "fresh2", "-5"}), -5);
  // INCR keeps the TTL.
  EXPECT_EQ(Run({"SET", "t", "1", "EX", "100"}), "OK");
  EXPECT_EQ(Run({"INCR", "t"}), 2);
  EXPECT_EQ(Run({"TTL", "t"}), 100);
}

TEST_F(StringCommandsTest, IncrErrorsAndOverflow) {
  const std::string kOverflow = "ERR increment or decrement would overflow";
  EXPECT_EQ(Run({"SET", "i", "9223372036854775807"}), "OK");
  EXPECT_EQ(Err(Run({"INCR", "i"})), kOverflow);
  EXPECT_EQ(Err(Run({"INCRBY", "i", "1"})), kOverflow);
  EXPECT_EQ(Run({"GET", "i"}), "9223372036854775807");
  EXPECT_EQ(Run({"SET", "i", "-9223372036854775808"}), "OK");
  EXPECT_EQ(Err(Run({"DECR", "i"})), kOverflow);
  EXPECT_EQ(Err(Run({"DECRBY", "i", "-9223372036854775808"})), "ERR decrement would overflow");
  EXPECT_EQ(Run({"SET", "i", "5"}), "OK");
  EXPECT_EQ(Err(Run({"DECRBY", "i", "-9223372036854775808"})), "ERR decrement would overflow");
  EXPECT_EQ(Err(Run({"INCRBY", "i", "9223372036854775807"})), kOverflow);
  EXPECT_EQ(Run({"INCRBY", "i", "-9223372036854775808"}), -9223372036854775803);
  for (const char* bad : {" 1", "1 ", "abc", "12345678901234567890", "1.5", "", "01", "+1"}) {
    EXPECT_EQ(Run({"SET", "s", bad}), "OK");
    EXPECT_EQ(Err(Run({"INCR", "s"})), kNotInt) << bad;
    EXPECT_EQ(Run({"GET", "s"}), bad);
  }
  EXPECT_EQ(Run({"SET", "i", "1"}), "OK");
  EXPECT_EQ(Err(Run({"INCRBY", "i", "1.5"})), kNotInt);
  EXPECT_EQ(Err(Run({"INCRBY", "i", "abc"})), kNotInt);
  EXPECT_EQ(Err(Run({"DECRBY", "i", "abc"})), kNotInt);
  EXPECT_EQ(Err(Run({"INCRBY", "missing", "x"})), kNotInt);
  EXPECT_EQ(Run({"EXISTS", "missing"}), 0);
}

TEST_F(StringCommandsTest, IncrByFloat) {
  const std::string kNotFloat = "ERR value is not a valid float";
  const std::string kNanInf = "ERR increment would produce NaN or Infinity";
  EXPECT_EQ(Run({"INCRBYFLOAT", "f", "1.1"}), "1.1");
  EXPECT_EQ(Run({"INCRBYFLOAT", "f", "0.2"}), "1.3");
  EXPECT_EQ(Run({"INCRBYFLOAT", "f2", "10.5e3"}), "10500");
  EXPECT_EQ(Run({"INCRBYFLOAT", "f3", "3.0e3"}), "3000");
  EXPECT_EQ(Run({"INCRBYFLOAT", "f3", "1e-20"}), "3000");
  EXPECT_EQ(Run({"INCRBYFLOAT", "f4", "-0"}), "0");
  EXPECT_EQ(Run({"INCRBYFLOAT", "f5", "0x10"}), "16");
  EXPECT_EQ(Run({"INCRBYFLOAT", "f6", "5.0e-324"}), "0");
  EXPECT_EQ(Run({"SET", "f7", "1.5e10"}), "OK");
  EXPECT_EQ(Run({"INCRBYFLOAT", "f7", "0"}), "15000000000");
  EXPECT_EQ(Run({"SET", "i", "5"}), "OK");
  EXPECT_EQ(Run({"INCRBYFLOAT", "i", "-1.5"}), "3.5");
  RespValue huge = Run({"INCRBYFLOAT", "h", "1.7976931348623157e308"});
  EXPECT_EQ(huge.str.substr(0, 20), "17976931348623156999");
  EXPECT_EQ(huge.str.size(), 309u);
  EXPECT_EQ(Run({"INCRBYFLOAT", "h", "1.7976931348623157e308"}).str.size(), 309u);
  EXPECT_EQ(Run({"INCRBYFLOAT", "e400", "1e400"}).str.size(), 401u);  // long double range
  EXPECT_EQ(Err(Run({"INCRBYFLOAT", "i", "abc"})), kNotFloat);
  EXPECT_EQ(Err(Run({"INCRBYFLOAT", "i", "nan"})), kNotFloat);
  EXPECT_EQ(Err(Run({"INCRBYFLOAT", "i", ""})), kNotFloat);
  EXPECT_EQ(Err(Run({"INCRBYFLOAT", "i", " 1"})), kNotFloat);
  EXPECT_EQ(Err(Run({"INCRBYFLOAT", "i", "inf"})), kNanInf);
  EXPECT_EQ(Run({"SET", "inf", "inf"}), "OK");
  EXPECT_EQ(Err(Run({"INCRBYFLOAT", "inf", "1"})), kNanInf);
  EXPECT_EQ(Run({"SET", "sp", " 1.5"}), "OK");
  EXPECT_EQ(Err(Run({"INCRBYFLOAT", "sp", "1"})), kNotFloat);
  EXPECT_EQ(Run({"SET", "sp", "1.5 "}), "OK");
  EXPECT_EQ(Err(Run({"INCRBYFLOAT", "sp", "1"})), kNotFloat);
  // INCRBYFLOAT keeps the TTL.
  EXPECT_EQ(Run({"SET", "t", "1", "EX", "100"}), "OK");
  EXPECT_EQ(Run({"INCRBYFLOAT", "t", "1"}), "2");
  EXPECT_EQ(Run({"TTL", "t"}), 100);
}

TEST_F(StringCommandsTest, IncrByFloatResp3IsBulk) {
  ASSERT_FALSE(Run({"HELLO", "3"}).is_error());
  RespValue v = Run({"INCRBYFLOAT", "f", "1.5"});
  EXPECT_EQ(v.type, RespValue::Type::kBulk);  // Redis 7.0 replies a bulk string, not ','
  EXPECT_EQ(v.str, "1.5");
  EXPECT_EQ(Run({"GETEX", "nokey"}).type, RespValue::Type::kNull);
  RespValue m = Run({"MGET", "f", "nokey"});
  ASSERT_EQ(m.elems.size(), 2u);
  EXPECT_EQ(m.elems[0], "1.5");
  EXPECT_TRUE(m.elems[1].is_null());
}

TEST_F(StringCommandsTest, GetRange) {
  EXPECT_EQ(Run({"SET", "s", "Hello World"}), "OK");
  EXPECT_EQ(Run({"GETRANGE", "s", "0", "-1"}), "Hello World");
  EXPECT_EQ(Run({"GETRANGE", "s", "-3", "-1"}), "rld");
  EXPECT_EQ(Run({"GETRANGE", "s", "5", "2"}), "");
  EXPECT_EQ(Run({"GETRANGE", "s", "-100", "-50"}), "H");
  EXPECT_EQ(Run({"GETRANGE", "s", "-50", "-100"}), "");
  EXPECT_EQ(Run({"GETRANGE", "s", "100", "200"}), "");
  EXPECT_EQ(Run({"GETRANGE", "s", "-1", "-5"}), "");
  EXPECT_EQ(Run({"GETRANGE", "s", "0", "-100"}), "H");
  EXPECT_EQ(Run({"GETRANGE", "s", "3", "-100"}), "");
  EXPECT_EQ(Run({"GETRANGE", "s", "-5", "100"}), "World");
  EXPECT_EQ(Run({"GETRANGE", "s", "-9223372036854775808", "9223372036854775807"}),
            "Hello World");
  EXPECT_EQ(Run({"SUBSTR", "s", "0", "3"}), "Hell");
  EXPECT_EQ(Run({"GETRANGE", "nokey", "0", "-1"}), "");
  EXPECT_EQ(Err(Run({"GETRANGE", "s", "0", "abc"})), kNotInt);
  EXPECT_EQ(Err(Run({"GETRANGE", "nokey", "x", "1"})), kNotInt);
  EXPECT_EQ(Run({"SET", "e", ""}), "OK");
  EXPECT_EQ(Run({"GETRANGE", "e", "0", "-1"}), "");
  EXPECT_EQ(Run({"SET", "n", "12345"}), "OK");
  EXPECT_EQ(Run({"GETRANGE", "n", "1", "2"}), "23");
}

TEST_F(StringCommandsTest, SetRange) {
  EXPECT_EQ(Run({"SET", "s", "Hello World"}), "OK");
  EXPECT_EQ(Run({"SETRANGE", "s", "6", "Redis"}), 11);
  EXPECT_EQ(Run({"GET", "s"}), "Hello Redis");
  EXPECT_EQ(Run({"SETRANGE", "s", "11", "!"}), 12);
  EXPECT_EQ(Run({"GET", "s"}), "Hello Redis!");
  EXPECT_EQ(Run({"SETRANGE", "new", "5", "x"}), 6);
  EXPECT_EQ(Run({"GET", "new"}), std::string("\0\0\0\0\0x", 6));
  EXPECT_EQ(Run({"SETRANGE", "new2", "0", ""}), 0);
  EXPECT_EQ(Run({"EXISTS", "new2"}), 0);
  EXPECT_EQ(Run({"SETRANGE", "new3", "536870912", ""}), 0);  // empty: no size check
  EXPECT_EQ(Run({"SETRANGE", "s", "536870912", ""}), 12);
  EXPECT_EQ(Err(Run({"SETRANGE", "s", "-1", "x"})), "ERR offset is out of range");
  EXPECT_EQ(Err(Run({"SETRANGE", "nokey", "-1", ""})), "ERR offset is out of range");
  EXPECT_EQ(Err(Run({"SETRANGE", "s", "536870912", "x"})),
            "ERR string exceeds maximum allowed size (proto-max-bulk-len)");
  EXPECT_EQ(Err(Run({"SETRANGE", "s", "536870911", "xy"})),
            "ERR string exceeds maximum allowed size (proto-max-bulk-len)");
  EXPECT_EQ(Err(Run({"SETRANGE", "s", "x", "y"})), kNotInt);
  EXPECT_EQ(Run({"SET", "n", "12345"}), "OK");
  EXPECT_EQ(Run({"SETRANGE", "n", "1", "x"}), 5);
  EXPECT_EQ(Run({"GET", "n"}), "1x345");
  EXPECT_EQ(Run({"SET", "t", "abc", "EX", "100"}), "OK");
  EXPECT_EQ(Run({"SETRANGE", "t", "1", std::string("\0\r\n", 3)}), 4);
  EXPECT_EQ(Run({"GET", "t"}), std::string("a\0\r\n", 4));
  EXPECT_EQ(Run({"TTL", "t"}), 100);
}

TEST_F(StringCommandsTest, MGetAcrossShards) {
  ShardSet& ss = srv_.server().shard_set();
  std::vector<std::string> keys;
  for (int i = 0; keys.size() < 8; ++i) keys.push_back("key:" + std::to_string(i));
  bool both = false;
  for (const auto& k : keys) both |= ss.ShardOf(k) != ss.ShardOf(keys[0]);
  ASSERT_TRUE(both);
  for (size_t i = 0; i < keys.size(); i += 2) {
    ASSERT_EQ(Run({"SET", keys[i], "v" + std::to_string(i)}), "OK");
  }
  std::vector<std::string> cmd{"MGET"};
  cmd.insert(cmd.end(), keys.begin(), keys.end());
  cmd.push_back(keys[0]);  // repeated key
  RespValue r = Run(cmd);
  ASSERT_EQ(r.type, RespValue::Type::kArray);
  ASSERT_EQ(r.elems.size(), keys.size() + 1);
  for (size_t i = 0; i < keys.size(); ++i) {
    if (i % 2 == 0) {
      EXPECT_EQ(r.elems[i], "v" + std::to_string(i)) << i;
    } else {
      EXPECT_TRUE(r.elems[i].is_null()) << i;
    }
  }
  EXPECT_EQ(r.elems.back(), "v0");
  // Keys sharing a hash tag live on one shard (the single-shard path).
  EXPECT_EQ(Run({"SET", "{t}a", "1"}), "OK");
  RespValue t = Run({"MGET", "{t}a", "{t}b", "{t}a"});
  ASSERT_EQ(t.elems.size(), 3u);
  EXPECT_EQ(t.elems[0], "1");
  EXPECT_TRUE(t.elems[1].is_null());
  EXPECT_EQ(t.elems[2], "1");
  EXPECT_EQ(Err(Run({"MGET"})), "ERR wrong number of arguments for 'mget' command");
}

TEST_F(StringCommandsTest, MGetNonStringIsNil) {
  MakeNonString("list");
  EXPECT_EQ(Run({"SET", "str", "x"}), "OK");
  RespValue r = Run({"MGET", "list", "str"});
  ASSERT_EQ(r.elems.size(), 2u);
  EXPECT_TRUE(r.elems[0].is_null());
  EXPECT_EQ(r.elems[1], "x");
}

TEST_F(StringCommandsTest, CommandInfoMatchesRedis) {
  struct Expect {
    const char* name;
    int64_t arity;
    std::vector<std::string> flags;
    int64_t first, last, step;
    std::vector<std::string> categories;
  };
  const std::vector<Expect> expected = {
      {"set", -3, {"write", "denyoom"}, 1, 1, 1, {"@write", "@string", "@slow"}},
      {"get", 2, {"readonly", "fast"}, 1, 1, 1, {"@read", "@string", "@fast"}},
      {"getset", 3, {"write", "denyoom", "fast"}, 1, 1, 1, {"@write", "@string", "@fast"}},
      {"getdel", 2, {"write", "fast"}, 1, 1, 1, {"@write", "@string", "@fast"}},
      {"getex", -2, {"write", "fast"}, 1, 1, 1, {"@write", "@string", "@fast"}},
      {"setnx", 3, {"write", "denyoom", "fast"}, 1, 1, 1, {"@write", "@string", "@fast"}},
      {"setex", 4, {"write", "denyoom"}, 1, 1, 1, {"@write", "@string", "@slow"}},
      {"psetex", 4, {"write", "denyoom"}, 1, 1, 1, {"@write", "@string", "@slow"}},
      {"mget", -2, {"readonly", "fast"}, 1, -1, 1, {"@read", "@string", "@fast"}},
      {"append", 3, {"write", "denyoom", "fast"}, 1, 1, 1, {"@write", "@string", "@fast"}},
      {"strlen", 2, {"readonly", "fast"}, 1, 1, 1, {"@read", "@string", "@fast"}},
      {"incr", 2, {"write", "denyoom", "fast"}, 1, 1, 1, {"@write", "@string", "@fast"}},
      {"decrby", 3, {"write", "denyoom", "fast"}, 1, 1, 1, {"@write", "@string", "@fast"}},
      {"incrbyfloat", 3, {"write", "denyoom", "fast"}, 1, 1, 1,
       {"@write", "@string", "@fast"}},
      {"getrange", 4, {"readonly"}, 1, 1, 1, {"@read", "@string", "@slow"}},
      {"substr", 4, {"readonly"}, 1, 1, 1, {"@read", "@string", "@slow"}},
      {"setrange", 4, {"write", "denyoom"}, 1, 1, 1, {"@write", "@string", "@slow"}},
      {"mset", -3, {"write", "denyoom"}, 1, -1, 2, {"@write", "@string", "@slow"}},
      {"msetnx", -3, {"write", "denyoom"}, 1, -1, 2, {"@write", "@string", "@slow"}},
  };
  for (const Expect& e : expected) {
    RespValue r = Run({"COMMAND", "INFO", e.name});
    ASSERT_EQ(r.elems.size(), 1u) << e.name;
    const RespValue& info = r.elems[0];
    ASSERT_GE(info.elems.size(), 7u) << e.name;
    EXPECT_EQ(info.elems[0], e.name);
    EXPECT_EQ(info.elems[1], e.arity) << e.name;
    EXPECT_THAT(info.elems[2].strings(), ::testing::UnorderedElementsAreArray(e.flags))
        << e.name;
    EXPECT_EQ(info.elems[3], e.first) << e.name;
    EXPECT_EQ(info.elems[4], e.last) << e.name;
    EXPECT_EQ(info.elems[5], e.step) << e.name;
    EXPECT_THAT(info.elems[6].strings(), ::testing::UnorderedElementsAreArray(e.categories))
        << e.name;
  }
}

TEST_F(StringCommandsTest, PipelinedMixAcrossShards) {
  std::string batch;
  std::vector<std::string> keys;
  for (int i = 0; i < 30; ++i) keys.push_back("p" + std::to_string(i));
  for (const auto& k : keys) batch += testing::RespClient::Encode({"INCRBY", k, "7"});
  for (const auto& k : keys) batch += testing::RespClient::Encode({"APPEND", k, "x"});
  for (const auto& k : keys) batch += testing::RespClient::Encode({"GET", k});
  c_->SendRaw(batch);
  for (size_t i = 0; i < keys.size(); ++i) EXPECT_EQ(c_->Read(), 7);
  for (size_t i = 0; i < keys.size(); ++i) EXPECT_EQ(c_->Read(), 2);
  for (size_t i = 0; i < keys.size(); ++i) EXPECT_EQ(c_->Read(), "7x");
}

// Returns keys named prefix<i>, at least one on each of the two shards.
std::vector<std::string> KeysOnBothShards(ShardSet& ss, const std::string& prefix, size_t n) {
  std::vector<std::string> keys;
  bool both = false;
  for (int i = 0; keys.size() < n || !both; ++i) {
    keys.push_back(prefix + std::to_string(i));
    both |= ss.ShardOf(keys.back()) != ss.ShardOf(keys[0]);
  }
  return keys;
}

TEST_F(StringCommandsTest, MSetAcrossAndWithinShards) {
  std::vector<std::string> keys = KeysOnBothShards(srv_.server().shard_set(), "ms", 6);
  for (const std::vector<std::string>& ks :
       {keys, std::vector<std::string>{"{t}a", "{t}b", "{t}c"}}) {
    ASSERT_EQ(Run({"SET", ks[0], "old", "EX", "100"}), "OK");
    MakeNonString(ks[1]);
    std::vector<std::string> cmd{"MSET"};
    for (size_t i = 0; i < ks.size(); ++i) {
      cmd.push_back(ks[i]);
      cmd.push_back("v" + std::to_string(i));
    }
    cmd.push_back(ks[0]);  // a repeated key: the last value wins
    cmd.push_back("last");
    EXPECT_EQ(Run(cmd), "OK");
    EXPECT_EQ(Run({"GET", ks[0]}), "last");
    EXPECT_EQ(Run({"TTL", ks[0]}), -1);  // MSET clears the TTL
    EXPECT_EQ(Run({"TYPE", ks[1]}), "string");
    for (size_t i = 1; i < ks.size(); ++i) EXPECT_EQ(Run({"GET", ks[i]}), "v" + std::to_string(i));
  }
  EXPECT_EQ(Run({"MSET", "n", "123"}), "OK");
  EXPECT_EQ(Run({"OBJECT", "ENCODING", "n"}), "int");
  const std::string arity = "ERR wrong number of arguments for 'mset' command";
  EXPECT_EQ(Err(Run({"MSET", "a"})), arity);
  EXPECT_EQ(Err(Run({"MSET", "{t}a", "1", "{t}b"})), arity);
  EXPECT_EQ(Err(Run({"MSET", keys[0], "1", keys[1], "2", keys[2]})), arity);
  EXPECT_EQ(Run({"GET", "{t}a"}), "last");  // the malformed MSETs changed nothing
}

TEST_F(StringCommandsTest, MSetNx) {
  std::vector<std::string> keys = KeysOnBothShards(srv_.server().shard_set(), "nx", 4);
  for (const std::vector<std::string>& ks :
       {keys, std::vector<std::string>{"{u}a", "{u}b", "{u}c"}}) {
    std::vector<std::string> cmd{"MSETNX"};
    for (const auto& k : ks) {
      cmd.push_back(k);
      cmd.push_back("x" + k);
    }
    ASSERT_EQ(Run({"SET", ks.back(), "there"}), "OK");
    EXPECT_EQ(Run(cmd), 0);
    for (size_t i = 0; i + 1 < ks.size(); ++i) EXPECT_EQ(Run({"EXISTS", ks[i]}), 0);
    EXPECT_EQ(Run({"GET", ks.back()}), "there");
    ASSERT_EQ(Run({"DEL", ks.back()}), 1);
    EXPECT_EQ(Run(cmd), 1);
    for (const auto& k : ks) EXPECT_EQ(Run({"GET", k}), "x" + k);
    EXPECT_EQ(Run(cmd), 0);
  }
  EXPECT_EQ(Run({"MSETNX", "dup", "1", "dup", "2"}), 1);
  EXPECT_EQ(Run({"GET", "dup"}), "2");
  EXPECT_EQ(Err(Run({"MSETNX", "a", "1", "b"})),
            "ERR wrong number of arguments for 'msetnx' command");
}

TEST_F(StringCommandsTest, MSetResp3) {
  ASSERT_EQ(Run({"HELLO", "3"}).type, RespValue::Type::kMap);
  EXPECT_EQ(Run({"MSET", "r3a", "1", "r3b", "2"}), "OK");
  EXPECT_EQ(Run({"MSETNX", "r3a", "1", "r3c", "2"}), 0);
}

}  // namespace
}  // namespace dashkv
