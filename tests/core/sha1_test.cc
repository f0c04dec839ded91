#include "core/sha1.h"

#include <gtest/gtest.h>

#include <string>

namespace dashkv {
namespace {

TEST(Sha1Test, FipsTestVectors) {
  EXPECT_EQ(Sha1Hex(""), "da39a3ee5e6b4b0d3255bfef95601890afd80709");
  EXPECT_EQ(Sha1Hex("abc"), "a9993e364706816aba3e25717850c26c9cd0d89d");
  EXPECT_EQ(Sha1Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "84983e441c3bd26ebaae4aa1f95129e5e54670f1");
  EXPECT_EQ(Sha1Hex("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnop"
                    "jklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu"),
            "a49b2446a02c645bf419f995b67091253a04a259");
  EXPECT_EQ(Sha1Hex(std::string(1000000, 'a')), "34aa973cd4c4daa4f61eeb2bdbad27316534016f");
}

TEST(Sha1Test, MatchesRedisScriptLoad) {
  // SHA printed by `redis-cli script load <body>` on Redis 7.0.15.
  EXPECT_EQ(Sha1Hex("return 1"), "e0e1f9fabfc9d4800c877a703b823ac0578ff8db");
  EXPECT_EQ(Sha1Hex("return redis.call('get', KEYS[1])"),
            "4e6d8fc8bb01276962cce5371fa795a7763657ae");
  EXPECT_EQ(Sha1Hex(std::string(1000, 'a')), "291e9a6c66994949b57ba5e650361e98fc36b1ba");
}

TEST(Sha1Test, IncrementalEqualsOneShotAtEveryBlockBoundary) {
  std::string data;
  for (int i = 0; i < 300; ++i) data.push_back(static_cast<char>(i * 7 + 3));
  for (size_t len : {0, 1, 55, 56, 63, 64, 65, 119, 120, 128, 300}) {
    std::string_view msg(data.data(), len);
    Sha1::Digest whole = Sha1Digest(msg);
    for (size_t cut = 0; cut <= len; cut += 13) {
      Sha1 sha;
      sha.Update(msg.substr(0, cut));
      sha.Update(msg.substr(cut));
      EXPECT_EQ(sha.Finish(), whole) << len << " " << cut;
    }
  }
}

TEST(Sha1Test, FinishLeavesObjectReset) {
  Sha1 sha;
  sha.Update("junk");
  sha.Finish();
  sha.Update("abc");
  EXPECT_EQ(sha.Finish(), Sha1Digest("abc"));
}

}  // namespace
}  // namespace dashkv
