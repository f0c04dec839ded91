// Bitmap command tests against a real 2-shard server. Expected replies were taken from
// redis-server 7.0.15 (same commands run by hand), not from dashkv's output.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
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
constexpr char kBitOffset[] = "ERR bit offset is not an integer or out of range";
constexpr char kBadType[] =
    "ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but "
    "i64 is.";

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

// Returns the integers of an array reply; nil elements become "nil" in `nils`.
std::vector<std::string> Items(const RespValue& v) {
  std::vector<std::string> out;
  if (v.is_error()) return {"error: " + v.str};
  for (const auto& e : v.elems) out.push_back(e.is_null() ? "nil" : std::to_string(e.num));
  return out;
}

class BitmapCommandsTest : public ::testing::Test {
 protected:
  void SetUp() override { c_ = srv_.Connect(); }
  RespValue Run(std::initializer_list<std::string_view> args) { return c_->Run(args); }
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

TEST_F(BitmapCommandsTest, SetBitGetBit) {
  EXPECT_EQ(Run({"SETBIT", "b", "7", "1"}), 0);
  EXPECT_EQ(Run({"GET", "b"}), "\x01");
  EXPECT_EQ(Run({"SETBIT", "b", "7", "0"}), 1);
  EXPECT_EQ(Run({"GET", "b"}), std::string("\0", 1));
  EXPECT_EQ(Run({"SETBIT", "b", "0", "1"}), 0);
  EXPECT_EQ(Run({"GETBIT", "b", "0"}), 1);
  EXPECT_EQ(Run({"GETBIT", "b", "1"}), 0);
  EXPECT_EQ(Run({"GETBIT", "b", "1000"}), 0);
  EXPECT_EQ(Run({"GETBIT", "nob", "100"}), 0);
  EXPECT_EQ(Run({"EXISTS", "nob"}), 0);
  EXPECT_EQ(Run({"OBJECT", "ENCODING", "b"}), "raw");
  EXPECT_EQ(Run({"SETBIT", "z", "100", "0"}), 0);  // setting 0 still grows the string
  EXPECT_EQ(Run({"STRLEN", "z"}), 13);
  EXPECT_EQ(Run({"SETBIT", "grow", "1000000", "1"}), 0);  // ~125 KB
  EXPECT_EQ(Run({"STRLEN", "grow"}), 125001);
  EXPECT_EQ(Run({"GETBIT", "grow", "1000000"}), 1);
  EXPECT_EQ(Run({"BITCOUNT", "grow"}), 1);
  // Bits of an int-encoded value are those of its decimal text ("1" is 0x31).
  EXPECT_EQ(Run({"SET", "n", "1"}), "OK");
  EXPECT_EQ(Run({"GETBIT", "n", "2"}), 1);
  EXPECT_EQ(Run({"SETBIT", "n", "7", "0"}), 1);
  EXPECT_EQ(Run({"GET", "n"}), "0");
  // The TTL survives.
  EXPECT_EQ(Run({"SET", "t", "a", "EX", "100"}), "OK");
  EXPECT_EQ(Run({"SETBIT", "t", "100", "1"}), 0);
  EXPECT_EQ(Run({"TTL", "t"}), 100);
}

TEST_F(BitmapCommandsTest, SetBitErrors) {
  const std::string kBitValue = "ERR bit is not an integer or out of range";
  EXPECT_EQ(Err(Run({"SETBIT", "b", "7", "2"})), kBitValue);
  EXPECT_EQ(Err(Run({"SETBIT", "b", "7", "-1"})), kBitValue);
  EXPECT_EQ(Err(Run({"SETBIT", "b", "1", "abc"})), kBitValue);
  EXPECT_EQ(Err(Run({"SETBIT", "b", "-1", "1"})), kBitOffset);
  EXPECT_EQ(Err(Run({"SETBIT", "b", "abc", "1"})), kBitOffset);
  EXPECT_EQ(Err(Run({"SETBIT", "b", "4294967296", "1"})), kBitOffset);
  EXPECT_EQ(Err(Run({"GETBIT", "b", "4294967296"})), kBitOffset);
  EXPECT_EQ(Err(Run({"GETBIT", "b", "-1"})), kBitOffset);
  EXPECT_EQ(Run({"GETBIT", "b", "4294967295"}), 0);
  EXPECT_EQ(Run({"EXISTS", "b"}), 0);
  MakeNonString("l");
  EXPECT_EQ(Err(Run({"SETBIT", "l", "0", "1"})), kWrongType);
  EXPECT_EQ(Err(Run({"GETBIT", "l", "0"})), kWrongType);
  EXPECT_EQ(Err(Run({"BITCOUNT", "l"})), kWrongType);
  EXPECT_EQ(Err(Run({"BITPOS", "l", "0"})), kWrongType);
  EXPECT_EQ(Err(Run({"BITFIELD", "l", "GET", "u8", "0"})), kWrongType);
  EXPECT_EQ(Err(Run({"BITFIELD_RO", "l", "GET", "u8", "0"})), kWrongType);
  EXPECT_EQ(Err(Run({"BITFIELD", "l", "foo"})), kSyntax);  // parsed before the lookup
}

TEST_F(BitmapCommandsTest, BitCount) {
  EXPECT_EQ(Run({"SET", "s", "foobar"}), "OK");
  EXPECT_EQ(Run({"BITCOUNT", "s"}), 26);
  EXPECT_EQ(Run({"BITCOUNT", "s", "0", "0"}), 4);
  EXPECT_EQ(Run({"BITCOUNT", "s", "1", "1"}), 6);
  EXPECT_EQ(Run({"BITCOUNT", "s", "1", "1", "BIT"}), 1);
  EXPECT_EQ(Run({"BITCOUNT", "s", "5", "30", "bit"}), 17);
  EXPECT_EQ(Run({"BITCOUNT", "s", "5", "30", "BYTE"}), 4);
  EXPECT_EQ(Run({"BITCOUNT", "s", "-1", "-1"}), 4);
  EXPECT_EQ(Run({"BITCOUNT", "s", "-100", "-50"}), 4);
  EXPECT_EQ(Run({"BITCOUNT", "s", "-50", "-100"}), 0);
  EXPECT_EQ(Run({"BITCOUNT", "s", "3", "1"}), 0);
  EXPECT_EQ(Run({"BITCOUNT", "s", "-2", "-1", "BIT"}), 1);
  EXPECT_EQ(Run({"BITCOUNT", "s", "0", "9223372036854775807", "BIT"}), 26);
  EXPECT_EQ(Run({"BITCOUNT", "s", "-9223372036854775808", "-1"}), 26);
  EXPECT_EQ(Err(Run({"BITCOUNT", "s", "0"})), kSyntax);
  EXPECT_EQ(Err(Run({"BITCOUNT", "s", "0", "1", "2"})), kSyntax);
  EXPECT_EQ(Err(Run({"BITCOUNT", "s", "0", "1", "foo"})), kSyntax);
  EXPECT_EQ(Err(Run({"BITCOUNT", "s", "a", "b"})), kNotInt);
  // A missing key answers 0 before the arguments are looked at.
  EXPECT_EQ(Run({"BITCOUNT", "nokey"}), 0);
  EXPECT_EQ(Run({"BITCOUNT", "nokey", "0"}), 0);
  EXPECT_EQ(Run({"BITCOUNT", "nokey", "a", "b"}), 0);
  EXPECT_EQ(Run({"SET", "e", ""}), "OK");
  EXPECT_EQ(Run({"BITCOUNT", "e"}), 0);
  EXPECT_EQ(Err(Run({"BITCOUNT", "e", "0"})), kSyntax);
  std::string big(1 << 20, '\xff');
  EXPECT_EQ(c_->Run(std::vector<std::string_view>{"SET", "big", big}), "OK");
  EXPECT_EQ(Run({"BITCOUNT", "big"}), 8 << 20);
  EXPECT_EQ(Run({"BITCOUNT", "big", "1", "-2"}), 8 * ((1 << 20) - 2));
  EXPECT_EQ(Run({"BITCOUNT", "big", "3", "-4", "BIT"}), (8 << 20) - 6);
}

TEST_F(BitmapCommandsTest, BitPos) {
  EXPECT_EQ(c_->Run(std::vector<std::string_view>{"SET", "p", std::string("\xff\xf0\x00", 3)}),
            "OK");
  EXPECT_EQ(Run({"BITPOS", "p", "0"}), 12);
  EXPECT_EQ(Run({"BITPOS", "p", "1"}), 0);
  EXPECT_EQ(Run({"BITPOS", "p", "1", "2"}), -1);
  EXPECT_EQ(Run({"BITPOS", "p", "0", "0", "0"}), -1);
  EXPECT_EQ(Run({"BITPOS", "p", "0", "0", "1"}), 12);
  EXPECT_EQ(Run({"BITPOS", "p", "0", "0", "0", "BIT"}), -1);
  EXPECT_EQ(Run({"BITPOS", "p", "0", "0", "11", "BIT"}), -1);
  EXPECT_EQ(Run({"BITPOS", "p", "0", "0", "12", "bit"}), 12);
  EXPECT_EQ(Run({"BITPOS", "p", "1", "1", "-1", "BIT"}), 1);
  EXPECT_EQ(Run({"BITPOS", "p", "1", "7", "15", "BIT"}), 7);
  EXPECT_EQ(Run({"BITPOS", "p", "1", "17", "23", "BIT"}), -1);
  EXPECT_EQ(Run({"BITPOS", "p", "0", "-1"}), 16);
  EXPECT_EQ(Run({"BITPOS", "p", "0", "-1", "-1", "BIT"}), 23);
  EXPECT_EQ(Run({"BITPOS", "p", "0", "100"}), -1);
  EXPECT_EQ(Run({"BITPOS", "p", "1", "0", "-1"}), 0);
  EXPECT_EQ(Run({"BITPOS", "p", "0", "2", "1"}), -1);
  EXPECT_EQ(Run({"BITPOS", "p", "0", "0", "-1", "BYTE"}), 12);
  EXPECT_EQ(Run({"BITPOS", "p", "1", "-9223372036854775808", "-1", "BIT"}), 0);
  EXPECT_EQ(Err(Run({"BITPOS", "p", "0", "9223372036854775807", "BIT"})), kNotInt);
  EXPECT_EQ(Err(Run({"BITPOS", "p", "2"})), "ERR The bit argument must be 1 or 0.");
  EXPECT_EQ(Err(Run({"BITPOS", "nokey", "2"})), "ERR The bit argument must be 1 or 0.");
  EXPECT_EQ(Err(Run({"BITPOS", "p", "abc"})), kNotInt);
  EXPECT_EQ(Err(Run({"BITPOS", "p", "1", "0", "-1", "foo"})), kSyntax);
  EXPECT_EQ(Err(Run({"BITPOS", "p", "1", "a"})), kNotInt);
  EXPECT_EQ(Err(Run({"BITPOS", "p", "1", "0", "a"})), kNotInt);
  EXPECT_EQ(Err(Run({"BITPOS", "p", "1", "0", "1", "BIT", "x"})), kSyntax);
  EXPECT_EQ(Run({"BITPOS", "nokey", "0"}), 0);
  EXPECT_EQ(Run({"BITPOS", "nokey", "1"}), -1);
  EXPECT_EQ(Run({"BITPOS", "nokey", "1", "0", "foo"}), -1);
  EXPECT_EQ(c_->Run(std::vector<std::string_view>{"SET", "ones", "\xff\xff"}), "OK");
  EXPECT_EQ(Run({"BITPOS", "ones", "0"}), 16);      // no end: zero padding on the right
  EXPECT_EQ(Run({"BITPOS", "ones", "0", "0"}), 16);
  EXPECT_EQ(Run({"BITPOS", "ones", "0", "0", "-1"}), -1);  // explicit end: -1
  EXPECT_EQ(Run({"BITPOS", "ones", "0", "0", "15", "BIT"}), -1);
  EXPECT_EQ(Run({"BITPOS", "ones", "0", "-100", "-50"}), -1);
  EXPECT_EQ(c_->Run(std::vector<std::string_view>{"SET", "z", std::string(2, '\0')}), "OK");
  EXPECT_EQ(Run({"BITPOS", "z", "1"}), -1);
  EXPECT_EQ(Run({"BITPOS", "z", "0"}), 0);
  EXPECT_EQ(Run({"BITPOS", "z", "0", "5"}), -1);
  EXPECT_EQ(Run({"BITPOS", "z", "0", "1", "1"}), 8);
  EXPECT_EQ(Run({"SET", "e", ""}), "OK");
  EXPECT_EQ(Run({"BITPOS", "e", "0"}), -1);
  EXPECT_EQ(Run({"BITPOS", "e", "1"}), -1);
  EXPECT_EQ(Run({"SET", "s", "foobar"}), "OK");
  EXPECT_EQ(Run({"BITPOS", "s", "0", "-50", "-100"}), 0);  // no inversion shortcut in BITPOS
  EXPECT_EQ(Run({"BITPOS", "s", "1", "-50", "-100"}), 1);
  std::string big(1 << 20, '\0');
  big[big.size() - 1] = '\x01';
  EXPECT_EQ(c_->Run(std::vector<std::string_view>{"SET", "big", big}), "OK");
  EXPECT_EQ(Run({"BITPOS", "big", "1"}), (8 << 20) - 1);
}

TEST_F(BitmapCommandsTest, BitFieldBasics) {
  EXPECT_EQ(Run({"BITFIELD", "bf"}).elems.size(), 0u);
  EXPECT_EQ(Run({"BITFIELD", "bf"}).type, RespValue::Type::kArray);
  EXPECT_THAT(Items(Run({"BITFIELD", "bf", "SET", "u8", "0", "255", "GET", "u8", "0"})),
              ::testing::ElementsAre("0", "255"));
  EXPECT_THAT(Items(Run({"BITFIELD", "bf", "INCRBY", "u8", "0", "10"})),
              ::testing::ElementsAre("9"));
  EXPECT_THAT(Items(Run({"BITFIELD", "bf", "OVERFLOW", "SAT", "INCRBY", "u8", "0", "300",
                         "INCRBY", "u8", "0", "-300"})),
              ::testing::ElementsAre("255", "0"));
  EXPECT_THAT(Items(Run({"BITFIELD", "bf", "overflow", "fail", "incrby", "i8", "0", "200"})),
              ::testing::ElementsAre("nil"));
  EXPECT_THAT(Items(Run({"BITFIELD", "bf", "OVERFLOW", "WRAP", "INCRBY", "i8", "0", "200"})),
              ::testing::ElementsAre("-56"));
  EXPECT_THAT(Items(Run({"BITFIELD", "bf", "GET", "u8", "#1"})), ::testing::ElementsAre("0"));
  EXPECT_THAT(Items(Run({"BITFIELD", "bf", "SET", "u8", "#2", "7", "GET", "u8", "16"})),
              ::testing::ElementsAre("0", "7"));
  EXPECT_THAT(Items(Run({"BITFIELD", "bf", "SET", "i8", "0", "200", "GET", "i8", "0"})),
              ::testing::ElementsAre("-56", "-56"));
  EXPECT_THAT(Items(Run({"BITFIELD", "bf", "SET", "u8", "0", "-1", "GET", "u8", "0"})),
              ::testing::ElementsAre("200", "255"));
  EXPECT_THAT(Items(Run({"BITFIELD", "bf", "SET", "u8", "0", "256", "GET", "u8", "0"})),
              ::testing::ElementsAre("255", "0"));
  EXPECT_THAT(Items(Run({"BITFIELD", "bf", "OVERFLOW", "SAT", "SET", "i8", "0", "300", "GET",
                         "i8", "0"})),
              ::testing::ElementsAre("0", "127"));
  EXPECT_THAT(Items(Run({"BITFIELD", "bf", "OVERFLOW", "FAIL", "SET", "i8", "0", "300", "GET",
                         "i8", "0"})),
              ::testing::ElementsAre("nil", "127"));
  EXPECT_THAT(Items(Run({"BITFIELD", "bf", "OVERFLOW", "SAT", "SET", "u8", "0", "-5", "GET",
                         "u8", "0"})),
              ::testing::ElementsAre("127", "255"));
  EXPECT_THAT(Items(Run({"BITFIELD", "bf", "OVERFLOW", "FAIL", "SET", "u8", "0", "-5", "GET",
                         "u8", "0"})),
              ::testing::ElementsAre("nil", "255"));
  EXPECT_THAT(Items(Run({"BITFIELD", "bf", "OVERFLOW", "SAT", "SET", "u2", "0", "5", "GET",
                         "u2", "0"})),
              ::testing::ElementsAre("3", "3"));
  EXPECT_THAT(Items(Run({"BITFIELD", "bf", "SET", "u2", "0", "5", "GET", "u2", "0"})),
              ::testing::ElementsAre("3", "1"));
  EXPECT_THAT(Items(Run({"BITFIELD", "bf", "SET", "i1", "0", "1", "GET", "i1", "0"})),
              ::testing::ElementsAre("0", "-1"));
  EXPECT_THAT(Items(Run({"BITFIELD", "bf", "SET", "i64", "0", "-1", "GET", "i64", "0", "GET",
                         "u63", "0"})),
              ::testing::ElementsAre(::testing::_, "-1", "9223372036854775807"));
  EXPECT_THAT(Items(Run({"BITFIELD", "bf", "OVERFLOW", "SAT", "INCRBY", "i64", "0",
                         "-9223372036854775808", "INCRBY", "i64", "0",
                         "-9223372036854775808"})),
              ::testing::ElementsAre("-9223372036854775808", "-9223372036854775808"));
  EXPECT_THAT(Items(Run({"BITFIELD", "bf", "GET", "u8", "4294967288"})),
              ::testing::ElementsAre("0"));
}

TEST_F(BitmapCommandsTest, BitFieldKeyCreation) {
  EXPECT_THAT(Items(Run({"BITFIELD", "nk", "GET", "u8", "0"})), ::testing::ElementsAre("0"));
  EXPECT_EQ(Run({"EXISTS", "nk"}), 0);
  // A write that FAILs still creates (and sizes) the string, as in Redis.
  EXPECT_THAT(Items(Run({"BITFIELD", "nk", "OVERFLOW", "FAIL", "INCRBY", "u8", "0", "300"})),
              ::testing::ElementsAre("nil"));
  EXPECT_EQ(Run({"EXISTS", "nk"}), 1);
  EXPECT_EQ(Run({"STRLEN", "nk"}), 1);
  EXPECT_THAT(Items(Run({"BITFIELD", "nk", "SET", "u8", "100", "0"})),
              ::testing::ElementsAre("0"));
  EXPECT_EQ(Run({"STRLEN", "nk"}), 14);
  EXPECT_THAT(Items(Run({"BITFIELD_RO", "nk", "GET", "u8", "0"})), ::testing::ElementsAre("0"));
  EXPECT_THAT(Items(Run({"BITFIELD_RO", "missing", "GET", "i4", "4"})),
              ::testing::ElementsAre("0"));
  EXPECT_EQ(Run({"EXISTS", "missing"}), 0);
  EXPECT_EQ(Run({"SET", "t", "abc", "EX", "100"}), "OK");
  EXPECT_THAT(Items(Run({"BITFIELD", "t", "SET", "u8", "0", "65"})),
              ::testing::ElementsAre("97"));
  EXPECT_EQ(Run({"GET", "t"}), "Abc");
  EXPECT_EQ(Run({"TTL", "t"}), 100);
}

TEST_F(BitmapCommandsTest, BitFieldErrors) {
  EXPECT_EQ(Err(Run({"BITFIELD", "bf", "GET", "u64", "0"})), kBadType);
  EXPECT_EQ(Err(Run({"BITFIELD", "bf", "GET", "i65", "0"})), kBadType);
  EXPECT_EQ(Err(Run({"BITFIELD", "bf", "GET", "x8", "0"})), kBadType);
  EXPECT_EQ(Err(Run({"BITFIELD", "bf", "GET", "u0", "0"})), kBadType);
  EXPECT_EQ(Err(Run({"BITFIELD", "bf", "GET", "U8", "0"})), kBadType);  // 7.0: lower case only
  EXPECT_EQ(Err(Run({"BITFIELD", "bf", "GET", "I8", "0"})), kBadType);
  EXPECT_EQ(Err(Run({"BITFIELD", "bf", "GET", "u8", "-1"})), kBitOffset);
  EXPECT_EQ(Err(Run({"BITFIELD", "bf", "GET", "u8", "#-1"})), kBitOffset);
  EXPECT_EQ(Err(Run({"BITFIELD", "bf", "GET", "u8", "#"})), kBitOffset);
  EXPECT_EQ(Err(Run({"BITFIELD", "bf", "GET", "u8", "1.5"})), kBitOffset);
  EXPECT_EQ(Err(Run({"BITFIELD", "bf", "GET", "u8", " 1"})), kBitOffset);
  EXPECT_EQ(Err(Run({"BITFIELD", "bf", "GET", "u8", "#9223372036854775807"})), kBitOffset);
  EXPECT_EQ(Err(Run({"BITFIELD", "bf", "SET", "u8", "4294967296", "1"})), kBitOffset);
  EXPECT_EQ(Err(Run({"BITFIELD", "bf", "OVERFLOW", "foo"})),
            "ERR Invalid OVERFLOW type specified");
  EXPECT_EQ(Err(Run({"BITFIELD", "bf", "OVERFLOW"})), kSyntax);
  EXPECT_EQ(Err(Run({"BITFIELD", "bf", "GET", "u8"})), kSyntax);
  EXPECT_EQ(Err(Run({"BITFIELD", "bf", "foo"})), kSyntax);
  EXPECT_EQ(Err(Run({"BITFIELD", "bf", "GET", "u8", "0", "SET", "u8", "0", "1", "foo"})),
            kSyntax);
  EXPECT_EQ(Err(Run({"BITFIELD", "bf", "GET", "i8", "0", "OVERFLOW"})), kSyntax);
  EXPECT_EQ(Err(Run({"BITFIELD", "bf", "SET", "u8", "0", "abc"})), kNotInt);
  EXPECT_EQ(Err(Run({"BITFIELD", "bf", "INCRBY", "u8", "0", "abc"})), kNotInt);
  EXPECT_EQ(Run({"EXISTS", "bf"}), 0);  // nothing ran
  const std::string kRo = "ERR BITFIELD_RO only supports the GET subcommand";
  EXPECT_EQ(Err(Run({"BITFIELD_RO", "bf", "SET", "u8", "0", "1"})), kRo);
  EXPECT_EQ(Err(Run({"BITFIELD_RO", "bf", "INCRBY", "u8", "0", "1"})), kRo);
  EXPECT_EQ(Err(Run({"BITFIELD_RO", "bf", "GET", "u8", "0", "foo"})), kSyntax);
  EXPECT_EQ(Run({"BITFIELD_RO", "bf"}).elems.size(), 0u);
  EXPECT_THAT(Items(Run({"BITFIELD_RO", "bf", "OVERFLOW", "SAT", "GET", "u8", "0"})),
              ::testing::ElementsAre("0"));
}

TEST_F(BitmapCommandsTest, BitFieldResp3FailIsNull) {
  ASSERT_FALSE(Run({"HELLO", "3"}).is_error());
  RespValue r = Run({"BITFIELD", "bf", "SET", "u8", "0", "255", "GET", "u8", "0", "INCRBY", "u8",
                     "0", "1", "OVERFLOW", "FAIL", "INCRBY", "u8", "0", "300"});
  ASSERT_EQ(r.elems.size(), 4u);
  EXPECT_EQ(r.elems[0], 0);
  EXPECT_EQ(r.elems[1], 255);
  EXPECT_EQ(r.elems[2], 0);
  EXPECT_EQ(r.elems[3].type, RespValue::Type::kNull);
}

TEST_F(BitmapCommandsTest, CommandInfoMatchesRedis) {
  struct Expect {
    const char* name;
    int64_t arity;
    std::vector<std::string> flags;
    std::vector<std::string> categories;
  };
  const std::vector<Expect> expected = {
      {"setbit", 4, {"write", "denyoom"}, {"@write", "@bitmap", "@slow"}},
      {"getbit", 3, {"readonly", "fast"}, {"@read", "@bitmap", "@fast"}},
      {"bitcount", -2, {"readonly"}, {"@read", "@bitmap", "@slow"}},
      {"bitpos", -3, {"readonly"}, {"@read", "@bitmap", "@slow"}},
      {"bitfield", -2, {"write", "denyoom"}, {"@write", "@bitmap", "@slow"}},
      {"bitfield_ro", -2, {"readonly", "fast"}, {"@read", "@bitmap", "@fast"}},
  };
  for (const Expect& e : expected) {
    RespValue r = Run({"COMMAND", "INFO", e.name});
    ASSERT_EQ(r.elems.size(), 1u) << e.name;
    const RespValue& info = r.elems[0];
    ASSERT_GE(info.elems.size(), 7u) << e.name;
    EXPECT_EQ(info.elems[1], e.arity) << e.name;
    EXPECT_THAT(info.elems[2].strings(), ::testing::UnorderedElementsAreArray(e.flags));
    EXPECT_EQ(info.elems[3], 1);
    EXPECT_EQ(info.elems[4], 1);
    EXPECT_EQ(info.elems[5], 1);
    EXPECT_THAT(info.elems[6].strings(), ::testing::UnorderedElementsAreArray(e.categories));
  }
}

// A byte-at-a-time reference for BITOP (missing bytes are zero).
std::string RefBitOp(const std::string& op, const std::vector<std::string>& srcs) {
  size_t len = 0;
  for (const auto& s : srcs) len = std::max(len, s.size());
  std::string out(len, '\0');
  for (size_t i = 0; i < len; ++i) {
    auto at = [&](size_t k) -> unsigned char { return i < srcs[k].size() ? srcs[k][i] : 0; };
    unsigned char b = at(0);
    for (size_t k = 1; k < srcs.size(); ++k) {
      if (op == "AND") b &= at(k);
      if (op == "OR") b |= at(k);
      if (op == "XOR") b ^= at(k);
    }
    out[i] = static_cast<char>(op == "NOT" ? ~b : b);
  }
  return out;
}

TEST_F(BitmapCommandsTest, BitOpMatchesReference) {
  ShardSet& ss = srv_.server().shard_set();
  // Sources on both shards with lengths around the 8-byte word size; plus a missing key.
  std::vector<std::string> cross, tagged;
  for (int i = 0; cross.size() < 4; ++i) {
    std::string k = "bo" + std::to_string(i);
    if (cross.empty() || ss.ShardOf(k) != ss.ShardOf(cross.back())) cross.push_back(k);
  }
  for (int i = 0; i < 4; ++i) tagged.push_back("{bo}" + std::to_string(i));
  const std::vector<std::string> values = {std::string("\xff\x0f\xf0\x55\xaa\x01\x80\x7f\x33", 9),
                                           std::string(17, '\xa5'), "abc",
                                           std::string(1000, '\x3c') + "tail"};
  for (const auto* keys : {&cross, &tagged}) {
    for (size_t i = 0; i < keys->size(); ++i) ASSERT_EQ(Run({"SET", (*keys)[i], values[i]}), "OK");
    std::string dest = keys == &cross ? "bodest" : "{bo}dest";
    for (std::string op : {"AND", "OR", "XOR"}) {
      std::vector<std::string> cmd{"BITOP", op, dest};
      cmd.insert(cmd.end(), keys->begin(), keys->end());
      cmd.push_back(keys == &cross ? "bomissing" : "{bo}missing");
      std::vector<std::string> srcs = values;
      srcs.push_back("");
      std::string want = RefBitOp(op, srcs);
      EXPECT_EQ(c_->Run(cmd), static_cast<int64_t>(want.size())) << op;
      EXPECT_EQ(Run({"GET", dest}), want) << op;
    }
    for (size_t i = 0; i < keys->size(); ++i) {
      EXPECT_EQ(Run({"BITOP", "not", dest, (*keys)[i]}), static_cast<int64_t>(values[i].size()));
      EXPECT_EQ(Run({"GET", dest}), RefBitOp("NOT", {values[i]}));
    }
  }
}

TEST_F(BitmapCommandsTest, BitOpDestination) {
  for (std::string p : {"{d}", ""}) {
    std::string a = p + "a", b = p + "b", dst = p + "dst";
    ASSERT_EQ(Run({"SET", a, "1"}), "OK");
    ASSERT_EQ(Run({"SET", dst, "old", "EX", "100"}), "OK");
    EXPECT_EQ(Run({"BITOP", "OR", dst, a, p + "nothere"}), 1);
    EXPECT_EQ(Run({"GET", dst}), "1");
    EXPECT_EQ(Run({"TTL", dst}), -1);
    EXPECT_EQ(Run({"OBJECT", "ENCODING", dst}), "raw");
    // The destination may be a source, and a result of any length replaces any type.
    EXPECT_EQ(Run({"BITOP", "XOR", a, a, a}), 1);
    EXPECT_EQ(Run({"GET", a}), std::string(1, '\0'));
    MakeNonString(dst);
    EXPECT_EQ(Run({"BITOP", "AND", dst, a}), 1);
    EXPECT_EQ(Run({"TYPE", dst}), "string");
    // An empty result deletes the destination.
    EXPECT_EQ(Run({"BITOP", "AND", dst, p + "x", p + "y"}), 0);
    EXPECT_EQ(Run({"EXISTS", dst}), 0);
    ASSERT_EQ(Run({"SET", b, ""}), "OK");
    ASSERT_EQ(Run({"SET", dst, "v"}), "OK");
    EXPECT_EQ(Run({"BITOP", "NOT", dst, b}), 0);
    EXPECT_EQ(Run({"EXISTS", dst}), 0);
    EXPECT_EQ(Run({"DEL", a, b}), 2);
  }
}

TEST_F(BitmapCommandsTest, BitOpErrors) {
  MakeNonString("blist");
  ASSERT_EQ(Run({"SET", "bs", "x"}), "OK");
  ASSERT_EQ(Run({"SET", "bd", "keep"}), "OK");
  EXPECT_EQ(Err(Run({"BITOP", "OR", "bd", "bs", "blist"})), kWrongType);
  EXPECT_EQ(Run({"GET", "bd"}), "keep");
  EXPECT_EQ(Err(Run({"BITOP", "NOT", "bd", "bs", "bs"})),
            "ERR BITOP NOT must be called with a single source key.");
  EXPECT_EQ(Err(Run({"BITOP", "NAND", "bd", "bs"})), kSyntax);
  EXPECT_EQ(Err(Run({"BITOP", "AND", "bd"})),
            "ERR wrong number of arguments for 'bitop' command");
  RespValue r = Run({"COMMAND", "INFO", "bitop"});
  ASSERT_EQ(r.elems.size(), 1u);
  const RespValue& info = r.elems[0];
  ASSERT_GE(info.elems.size(), 7u);
  EXPECT_EQ(info.elems[1], -4);
  EXPECT_THAT(info.elems[2].strings(), ::testing::UnorderedElementsAre("write", "denyoom"));
  EXPECT_EQ(info.elems[3], 2);
  EXPECT_EQ(info.elems[4], -1);
  EXPECT_EQ(info.elems[5], 1);
  EXPECT_THAT(info.elems[6].strings(),
              ::testing::UnorderedElementsAre("@write", "@bitmap", "@slow"));
}

}  // namespace
}  // namespace dashkv
