#include "server/persistence/listpack_check.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "absl/strings/escaping.h"

namespace dashkv {
namespace {

std::string Hex(std::string_view hex) {
  return absl::HexStringToBytes(absl::string_view(hex.data(), hex.size()));
}

std::vector<std::string> Check(std::string_view lp, bool* ok) {
  std::vector<std::string> out;
  *ok = CheckRdbListpack(lp, [&](ListpackValue v) {
    out.push_back(v.ToString());
    return true;
  });
  return out;
}

TEST(ListpackCheckTest, AcceptsRedisListpacks) {
  // RPUSH l a b c 1 2 3 on Redis 7.0.15.
  std::string lp = Hex("160000000600816102816202816302010102010301ff");
  bool ok;
  EXPECT_EQ(Check(lp, &ok), (std::vector<std::string>{"a", "b", "c", "1", "2", "3"}));
  EXPECT_TRUE(ok);
  // Every entry encoding: 13-bit, 16/24/32/64-bit ints, a 12-bit string, a 32-bit string.
  Listpack built;
  std::vector<std::string> items = {"-1000", "30000", "-8000000", "2000000000",
                                    "-9000000000000000000", std::string(100, 'x'),
                                    std::string(5000, 'y')};
  for (const std::string& s : items) {
    built.Push(s, ListEnd::kTail);
  }
  std::vector<std::string> got = Check(built.bytes(), &ok);
  EXPECT_TRUE(ok);
  EXPECT_EQ(got.size(), 7u);
  EXPECT_EQ(got[4], "-9000000000000000000");
}

TEST(ListpackCheckTest, BacklenIsCheckedByValueAsRedisDoes) {
  // "a", then the integer 0 whose one-byte backlen is written 0x81 instead of 0x01: decoding
  // backwards reads 0x81 and then the entry's own 0x00, which gives 1, so Redis accepts it.
  std::string lenient = Hex("0c000000020081610200" "81" "ff");
  bool ok;
  EXPECT_EQ(Check(lenient, &ok), (std::vector<std::string>{"a", "0"}));
  EXPECT_TRUE(ok);
  EXPECT_FALSE(ListpackView::Validate(lenient));  // dashkv's own listpacks must be canonical
  std::string wrong = Hex("0c000000020081610200" "02" "ff");
  Check(wrong, &ok);
  EXPECT_FALSE(ok);
}

TEST(ListpackCheckTest, RefusesDamage) {
  std::string lp = Hex("160000000600816102816202816302010102010301ff");
  bool ok;
  for (size_t cut = 0; cut < lp.size(); ++cut) {
    Check(std::string_view(lp).substr(0, cut), &ok);
    EXPECT_FALSE(ok) << cut;
  }
  std::string bad_count = lp;
  bad_count[4] = 5;
  Check(bad_count, &ok);
  EXPECT_FALSE(ok);
  std::string unknown_count = lp;
  unknown_count[4] = '\xff';
  unknown_count[5] = '\xff';
  Check(unknown_count, &ok);
  EXPECT_TRUE(ok);
  std::string bad_encoding = lp;
  bad_encoding[6] = '\xf5';
  Check(bad_encoding, &ok);
  EXPECT_FALSE(ok);
  std::string long_string = lp;
  long_string[6] = '\xbf';  // a 63-byte string running past the end
  Check(long_string, &ok);
  EXPECT_FALSE(ok);
  EXPECT_FALSE(CheckRdbListpack(lp, [](ListpackValue) { return false; }));
}

}  // namespace
}  // namespace dashkv
