#include "core/zipmap.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace dashkv {
namespace {

using Pairs = std::vector<std::pair<std::string, std::string>>;

Pairs Decode(std::string_view zm, bool* ok) {
  Pairs out;
  *ok = ValidateZipmap(zm, [&](std::string_view f, std::string_view v) {
    out.emplace_back(f, v);
    return true;
  });
  return out;
}

TEST(ZipmapTest, DecodesPairsWithFreeBytes) {
  // 2 pairs: "foo" => "bar" (1 free byte), "k" => 300 x 'v' (a 5-byte length).
  std::string zm("\x02", 1);
  zm += "\x03" "foo" "\x03\x01" "bar" "?";
  zm += std::string("\x01" "k" "\xfe\x2c\x01\x00\x00\x00", 8) + std::string(300, 'v');
  zm += "\xff";
  bool ok;
  Pairs got = Decode(zm, &ok);
  ASSERT_TRUE(ok);
  EXPECT_EQ(got, (Pairs{{"foo", "bar"}, {"k", std::string(300, 'v')}}));
  for (size_t cut = 0; cut < zm.size(); ++cut) {
    Decode(std::string_view(zm).substr(0, cut), &ok);
    EXPECT_FALSE(ok) << cut;
  }
  std::string wrong_count = zm;
  wrong_count[0] = 3;
  Decode(wrong_count, &ok);
  EXPECT_FALSE(ok);
  std::string unknown_count = zm;
  unknown_count[0] = '\xfe';
  Decode(unknown_count, &ok);
  EXPECT_TRUE(ok);
  Decode(zm + "x", &ok);  // bytes after the end marker
  EXPECT_FALSE(ok);
  std::string count_255 = zm;  // only 254 means "count them"
  count_255[0] = '\xff';
  Decode(count_255, &ok);
  EXPECT_FALSE(ok);
  // A value length byte of 255 is read like 254, as Redis reads it.
  std::string ff_len("\x01" "\x01" "a" "\xff\x02\x00\x00\x00" "\x00" "bc" "\xff", 12);
  EXPECT_EQ(Decode(ff_len, &ok), (Pairs{{"a", "bc"}}));
  EXPECT_TRUE(ok);
}

}  // namespace
}  // namespace dashkv
