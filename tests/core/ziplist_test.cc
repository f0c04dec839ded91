#include "core/ziplist.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

namespace dashkv {
namespace {

void PutLE(std::string* out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out->push_back(static_cast<char>(v >> (8 * i)));
}

// Builds a ziplist from encoded entry bodies (<encoding><data>), adding prevlens and header.
std::string MakeZiplist(const std::vector<std::string>& bodies, int zllen = -1) {
  std::string entries;
  size_t prev = 0;
  size_t last = 10;
  for (const std::string& body : bodies) {
    last = 10 + entries.size();
    std::string e;
    if (prev < 254) {
      e.push_back(static_cast<char>(prev));
    } else {
      e.push_back('\xfe');
      PutLE(&e, prev, 4);
    }
    e += body;
    prev = e.size();
    entries += e;
  }
  std::string zl;
  PutLE(&zl, 10 + entries.size() + 1, 4);
  PutLE(&zl, last, 4);
  PutLE(&zl, zllen < 0 ? bodies.size() : static_cast<size_t>(zllen), 2);
  return zl + entries + "\xff";
}

std::string ShortStr(std::string_view s) { return std::string(1, static_cast<char>(s.size())) + std::string(s); }

std::vector<std::string> Decode(std::string_view zl, bool* ok) {
  std::vector<std::string> out;
  *ok = ValidateZiplist(zl, [&](ListpackValue v) {
    out.push_back(v.ToString());
    return true;
  });
  return out;
}

TEST(ZiplistTest, DecodesEveryEncoding) {
  std::string big(300, 'x');  // 14-bit length, and a 5-byte prevlen after it
  std::string int16("\xc0", 1);
  PutLE(&int16, static_cast<uint16_t>(-1000), 2);
  std::string int32("\xd0", 1);
  PutLE(&int32, 100000, 4);
  std::string int64("\xe0", 1);
  PutLE(&int64, static_cast<uint64_t>(-5000000000LL), 8);
  std::string int24("\xf0", 1);
  PutLE(&int24, static_cast<uint32_t>(-70000) & 0xffffff, 3);
  std::string int8("\xfe\x85", 2);
  std::string big_body = std::string("\x41\x2c", 2) + big;
  std::string str32 = std::string("\x80\x00\x00\x00\x02", 5) + "hi";
  std::string zl = MakeZiplist({ShortStr("a"), big_body, "\xf1", "\xfd", int16, int32, int64,
                                int24, int8, str32});
  bool ok;
  std::vector<std::string> got = Decode(zl, &ok);
  ASSERT_TRUE(ok);
  EXPECT_EQ(got, (std::vector<std::string>{"a", big, "0", "12", "-1000", "100000", "-5000000000",
                                           "-70000", "-123", "hi"}));
  bool empty_ok;
  EXPECT_TRUE(Decode(MakeZiplist({}), &empty_ok).empty());
  EXPECT_TRUE(empty_ok);
}

TEST(ZiplistTest, RefusesDamage) {
  std::string good = MakeZiplist({ShortStr("ab"), ShortStr("cd"), "\xf3"});
  bool ok;
  Decode(good, &ok);
  ASSERT_TRUE(ok);
  for (size_t cut = 0; cut < good.size(); ++cut) {  // every truncation
    Decode(std::string_view(good).substr(0, cut), &ok);
    EXPECT_FALSE(ok) << cut;
  }
  std::string bad = good;
  bad[8] = 5;  // zllen
  Decode(bad, &ok);
  EXPECT_FALSE(ok);
  bad = good;
  bad[4] = 10;  // zltail
  Decode(bad, &ok);
  EXPECT_FALSE(ok);
  bad = good;
  bad[14] = 9;  // the second entry's prevlen
  Decode(bad, &ok);
  EXPECT_FALSE(ok);
  bad = good;
  bad[11] = '\x3f';  // a string running past the end
  Decode(bad, &ok);
  EXPECT_FALSE(ok);
  bad = good;
  bad[bad.size() - 2] = '\xc5';  // no such integer encoding
  Decode(bad, &ok);
  EXPECT_FALSE(ok);
  // A saturated count is counted instead.
  Decode(MakeZiplist({ShortStr("x")}, 0xffff), &ok);
  EXPECT_TRUE(ok);
  // The callback may refuse.
  EXPECT_FALSE(ValidateZiplist(good, [](ListpackValue) { return false; }));
}

}  // namespace
}  // namespace dashkv
