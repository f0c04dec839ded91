#include "core/crc64.h"

#include <array>
#include <bit>
#include <cstring>

namespace dashkv {

static_assert(std::endian::native == std::endian::little, "Crc64 loads words little-endian");

namespace {

// The reflected form of the polynomial 0xad93d23594c935a9.
constexpr uint64_t kReflectedPoly = 0x95AC9329AC4BC9B5ULL;

using Tables = std::array<std::array<uint64_t, 256>, 8>;

// tables[0] is the classic byte-at-a-time table; tables[k][b] is the CRC of byte b followed by
// k zero bytes, so eight table lookups advance the CRC by eight input bytes at once.
constexpr Tables MakeTables() {
  Tables t{};
  for (uint64_t b = 0; b < 256; ++b) {
    uint64_t c = b;
    for (int i = 0; i < 8; ++i) c = (c & 1) ? (c >> 1) ^ kReflectedPoly : c >> 1;
    t[0][b] = c;
  }
  for (int k = 1; k < 8; ++k) {
    for (int b = 0; b < 256; ++b) t[k][b] = (t[k - 1][b] >> 8) ^ t[0][t[k - 1][b] & 0xff];
  }
  return t;
}

constexpr Tables kTables = MakeTables();

}  // namespace

uint64_t Crc64(uint64_t crc, std::string_view data) {
  const auto* p = reinterpret_cast<const unsigned char*>(data.data());
  size_t n = data.size();
  while (n >= 8) {
    uint64_t word;
    std::memcpy(&word, p, 8);
    crc ^= word;
    crc = kTables[7][crc & 0xff] ^ kTables[6][(crc >> 8) & 0xff] ^
          kTables[5][(crc >> 16) & 0xff] ^ kTables[4][(crc >> 24) & 0xff] ^
          kTables[3][(crc >> 32) & 0xff] ^ kTables[2][(crc >> 40) & 0xff] ^
          kTables[1][(crc >> 48) & 0xff] ^ kTables[0][crc >> 56];
    p += 8;
    n -= 8;
  }
  while (n-- > 0) crc = kTables[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
  return crc;
}

}  // namespace dashkv
