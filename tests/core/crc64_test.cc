#include "core/crc64.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace dashkv {
namespace {

// A bitwise CRC-64/Jones (reflected, init 0), written independently of the table version.
uint64_t BitwiseCrc64(std::string_view data) {
  uint64_t crc = 0;
  for (unsigned char c : data) {
    crc ^= c;
    for (int i = 0; i < 8; ++i) crc = (crc & 1) ? (crc >> 1) ^ 0x95AC9329AC4BC9B5ULL : crc >> 1;
  }
  return crc;
}

TEST(Crc64Test, CheckValue) {
  EXPECT_EQ(Crc64(0, "123456789"), 0xe9c6d914c4b8d9caULL);
  EXPECT_EQ(Crc64(0, ""), 0u);
}

TEST(Crc64Test, MatchesARedisDumpTrailer) {
  // DUMP of SET s hello on Redis 7.0.15: 00 05 "hello" 0A 00, then the CRC (LE) 63 72 df 76 65
  // 34 20 0a.
  std::string body("\x00\x05hello\x0a\x00", 9);
  EXPECT_EQ(Crc64(0, body), 0x0a20346576df7263ULL);
}

TEST(Crc64Test, IncrementalEqualsWholeAndMatchesBitwise) {
  std::mt19937_64 gen(7);
  for (size_t len : {1, 7, 8, 9, 15, 16, 17, 100, 1000, 4097}) {
    std::string data(len, '\0');
    for (char& c : data) c = static_cast<char>(gen());
    uint64_t whole = Crc64(0, data);
    EXPECT_EQ(whole, BitwiseCrc64(data)) << len;
    for (size_t cut : {size_t{0}, len / 3, len - 1, len}) {
      EXPECT_EQ(Crc64(Crc64(0, data.substr(0, cut)), data.substr(cut)), whole) << len << " " << cut;
    }
  }
}

std::string RandomBytes(std::mt19937_64& gen, size_t len) {
  std::string data(len, '\0');
  for (char& c : data) c = static_cast<char>(gen());
  return data;
}

// Every implementation this CPU can run, with its name.
std::vector<std::pair<const char*, uint64_t (*)(uint64_t, std::string_view)>> Impls() {
  std::vector<std::pair<const char*, uint64_t (*)(uint64_t, std::string_view)>> v = {
      {"Crc64", &Crc64}, {"SliceBy8", &detail::Crc64SliceBy8}};
  if (detail::Crc64HasClmul()) v.emplace_back("Clmul", &detail::Crc64Clmul);
  return v;
}

TEST(Crc64Test, EveryLengthTo1024MatchesBitwise) {
  std::mt19937_64 gen(11);
  const std::string data = RandomBytes(gen, 1024);
  for (size_t len = 0; len <= data.size(); ++len) {
    std::string_view piece(data.data(), len);
    const uint64_t want = BitwiseCrc64(piece);
    // A non-zero starting CRC: the CRC of some prefix, checked against the bitwise CRC of
    // that prefix followed by the piece.
    const std::string prefix = RandomBytes(gen, 1 + gen() % 40);
    const uint64_t want_cont = BitwiseCrc64(prefix + std::string(piece));
    for (auto [name, fn] : Impls()) {
      ASSERT_EQ(fn(0, piece), want) << name << " len " << len;
      ASSERT_EQ(fn(BitwiseCrc64(prefix), piece), want_cont) << name << " len " << len;
    }
  }
}

TEST(Crc64Test, MisalignedStartsMatchSliceBy8) {
  std::mt19937_64 gen(12);
  const std::string data = RandomBytes(gen, 4096 + 64);
  for (size_t offset = 0; offset < 64; ++offset) {
    for (size_t len : {size_t{15}, size_t{16}, size_t{63}, size_t{64}, size_t{127}, size_t{128},
                       size_t{129}, size_t{1000}, size_t{4096}}) {
      std::string_view piece(data.data() + offset, len);
      const uint64_t want = detail::Crc64SliceBy8(0, piece);
      for (auto [name, fn] : Impls()) {
        ASSERT_EQ(fn(0, piece), want) << name << " offset " << offset << " len " << len;
      }
    }
  }
}

TEST(Crc64Test, RandomLargeBuffersMatchSliceBy8) {
  std::mt19937_64 gen(13);
  for (int round = 0; round < 20; ++round) {
    const size_t len = (size_t{1} << 16) + gen() % (size_t{3} << 20);
    const std::string data = RandomBytes(gen, len);
    const uint64_t start = round % 2 ? gen() : 0;
    const uint64_t want = detail::Crc64SliceBy8(start, data);
    for (auto [name, fn] : Impls()) ASSERT_EQ(fn(start, data), want) << name << " len " << len;
  }
}

TEST(Crc64Test, ClmulIsAvailableOnThisCpu) {
  // Not a requirement of the product (it falls back to slice-by-8), but a machine whose CPU
  // should have it and doesn't means the CPU check is broken.
  bool cpuinfo_has = false;
#if defined(__x86_64__)
  __builtin_cpu_init();
  cpuinfo_has = __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1");
#endif
  EXPECT_EQ(detail::Crc64HasClmul(), cpuinfo_has);
}

TEST(Crc64Test, CombineEqualsWhole) {
  std::mt19937_64 gen(14);
  for (int round = 0; round < 200; ++round) {
    const size_t len = round < 100 ? round : gen() % 300000;
    const std::string data = RandomBytes(gen, len);
    const uint64_t whole = Crc64(0, data);
    for (size_t cut : {size_t{0}, len / 2, size_t(gen() % (len + 1)), len}) {
      std::string_view a(data.data(), cut), b(data.data() + cut, len - cut);
      ASSERT_EQ(Crc64Combine(Crc64(0, a), Crc64(0, b), b.size()), whole)
          << len << " cut " << cut;
    }
  }
}

TEST(Crc64Test, CombineManyPiecesInOrder) {
  // The snapshot writer's use: pieces checksummed apart, combined in file order.
  std::mt19937_64 gen(15);
  const std::string data = RandomBytes(gen, 1 << 20);
  size_t pos = 0;
  uint64_t combined = 0;
  while (pos < data.size()) {
    const size_t n = std::min<size_t>(data.size() - pos, gen() % 70000);
    std::string_view piece(data.data() + pos, n);
    combined = Crc64Combine(combined, Crc64(0, piece), n);
    pos += n;
  }
  EXPECT_EQ(combined, detail::Crc64SliceBy8(0, data));
}

TEST(Crc64Test, CombineHugeLengthsIsAssociative) {
  // Lengths too large to checksum: (a + b) + c and a + (b + c) must agree, which fails if an
  // entry of the combine table is not the square of the one before it (the base power itself
  // is checked by the tests above).
  std::mt19937_64 gen(16);
  for (int round = 0; round < 100; ++round) {
    const uint64_t ca = gen(), cb = gen(), cc = gen();
    const uint64_t lb = gen() >> (gen() % 64), lc = gen() >> (gen() % 64 + 1);
    const uint64_t left = Crc64Combine(Crc64Combine(ca, cb, lb), cc, lc);
    const uint64_t right = Crc64Combine(ca, Crc64Combine(cb, cc, lc), lb + lc);
    ASSERT_EQ(left, right) << lb << " " << lc;
  }
}

TEST(Crc64Test, CombineOverZerosEqualsAppendingZeros) {
  // The CRC of zero bytes from a start of 0 is 0, so combining with it must equal continuing
  // the CRC over those zeros.
  for (size_t n : {size_t{1}, size_t{7}, size_t{8}, size_t{100}, size_t{4096}, size_t{123457}}) {
    const std::string zeros(n, '\0');
    const uint64_t a = 0x0123456789abcdefULL;
    EXPECT_EQ(Crc64Combine(a, 0, n), Crc64(a, zeros)) << n;
  }
}

}  // namespace
}  // namespace dashkv
