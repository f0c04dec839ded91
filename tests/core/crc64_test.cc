#include "core/crc64.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

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

}  // namespace
}  // namespace dashkv
