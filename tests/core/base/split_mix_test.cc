#include "core/base/split_mix.h"

#include <gtest/gtest.h>

#include <array>
#include <random>

namespace dashkv {
namespace {

static_assert(std::uniform_random_bit_generator<SplitMix64>);

// The reference sequence for seed 1234567 (the published SplitMix64 test vector).
TEST(SplitMix64Test, MatchesReferenceSequence) {
  SplitMix64 gen(1234567);
  EXPECT_EQ(gen(), 6457827717110365317ULL);
  EXPECT_EQ(gen(), 3203168211198807973ULL);
  EXPECT_EQ(gen(), 9817491932198370423ULL);
}

// Every byte value is about equally frequent in each of the eight byte lanes.
TEST(SplitMix64Test, BytesAreSpreadEvenly) {
  SplitMix64 gen(42);
  std::array<std::array<int, 256>, 8> counts{};
  constexpr int kDraws = 256 * 400;
  for (int i = 0; i < kDraws; ++i) {
    const uint64_t v = gen();
    for (int lane = 0; lane < 8; ++lane) ++counts[lane][(v >> (8 * lane)) & 0xff];
  }
  for (const auto& lane : counts) {
    for (int c : lane) {
      EXPECT_GT(c, 300);
      EXPECT_LT(c, 500);
    }
  }
}

}  // namespace
}  // namespace dashkv
