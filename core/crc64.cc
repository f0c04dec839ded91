#include "core/crc64.h"

#include <array>
#include <bit>
#include <cstring>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace dashkv {

static_assert(std::endian::native == std::endian::little, "Crc64 loads words little-endian");

namespace {

// Reflected representation: bit i of a 64-bit word is the coefficient of x^(63-i), so the
// first bit of the message (bit 0 of its first byte) is its highest power. The polynomial
// P(x) = x^64 + 0xad93d23594c935a9 has this reflected low part:
constexpr uint64_t kReflectedPoly = 0x95AC9329AC4BC9B5ULL;

// With init 0 and xorout 0, the CRC of a message M(x) of n bits is M(x) * x^64 mod P, and the
// CRC continuing from `crc` is (crc * x^n + M(x) * x^64) mod P, which is the CRC of M with
// `crc` XORed into its first 64 bits (n >= 64).

// Returns a * x mod P (reflected): every power moves up by one, x^63 becomes x^64 = P's low
// part.
constexpr uint64_t MulX(uint64_t a) { return (a & 1) ? (a >> 1) ^ kReflectedPoly : a >> 1; }

// Returns x^n mod P (reflected); x^0 is bit 63.
constexpr uint64_t XPowMod(unsigned n) {
  uint64_t r = uint64_t{1} << 63;
  for (unsigned i = 0; i < n; ++i) r = MulX(r);
  return r;
}

// Returns a * b mod P (reflected): the sum of b * x^k over the powers x^k present in a.
constexpr uint64_t MulMod(uint64_t a, uint64_t b) {
  uint64_t product = 0;
  for (uint64_t m = uint64_t{1} << 63; m != 0 && a != 0; m >>= 1) {  // m is x^k, k = 0, 1, ...
    product ^= b & (uint64_t{0} - ((a & m) != 0));
    a &= ~m;
    b = MulX(b);
  }
  return product;
}

using Tables = std::array<std::array<uint64_t, 256>, 8>;

// tables[0] is the classic byte-at-a-time table; tables[k][b] is the CRC of byte b followed by
// k zero bytes, so eight table lookups advance the CRC by eight input bytes at once.
constexpr Tables MakeTables() {
  Tables t{};
  for (uint64_t b = 0; b < 256; ++b) {
    uint64_t c = b;
    for (int i = 0; i < 8; ++i) c = MulX(c);
    t[0][b] = c;
  }
  for (int k = 1; k < 8; ++k) {
    for (int b = 0; b < 256; ++b) t[k][b] = (t[k - 1][b] >> 8) ^ t[0][t[k - 1][b] & 0xff];
  }
  return t;
}

constexpr Tables kTables = MakeTables();

// x^(8 * 2^k) mod P for k = 0..63: appending 2^k zero bytes multiplies a CRC by kZeroBytes[k].
constexpr std::array<uint64_t, 64> MakeZeroBytePowers() {
  std::array<uint64_t, 64> t{};
  t[0] = XPowMod(8);
  for (int k = 1; k < 64; ++k) t[k] = MulMod(t[k - 1], t[k - 1]);
  return t;
}

constexpr std::array<uint64_t, 64> kZeroBytes = MakeZeroBytePowers();

// Advances `crc` over the eight bytes of `word` (little-endian: its low byte comes first).
inline uint64_t SliceWord(uint64_t crc, uint64_t word) {
  crc ^= word;
  return kTables[7][crc & 0xff] ^ kTables[6][(crc >> 8) & 0xff] ^
         kTables[5][(crc >> 16) & 0xff] ^ kTables[4][(crc >> 24) & 0xff] ^
         kTables[3][(crc >> 32) & 0xff] ^ kTables[2][(crc >> 40) & 0xff] ^
         kTables[1][(crc >> 48) & 0xff] ^ kTables[0][crc >> 56];
}

uint64_t SliceBy8(uint64_t crc, const unsigned char* p, size_t n) {
  while (n >= 8) {
    uint64_t word;
    std::memcpy(&word, p, 8);
    crc = SliceWord(crc, word);
    p += 8;
    n -= 8;
  }
  while (n-- > 0) crc = kTables[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
  return crc;
}

#if defined(__x86_64__)

// Design of the carry-less folding (derived here from the definitions above; the constants are
// computed at compile time by XPowMod).
//   A 16-byte block loaded into an SSE register holds, in its low 64-bit lane, the block's first
//   8 bytes, i.e. (reflected) the coefficients of x^127..x^64 of the block's polynomial, and in
//   its high lane those of x^63..x^0: block = lo * x^64 + hi.
//   PCLMULQDQ of two reflected 64-bit words a, k gives bit s = XOR over i + j = s of a_i k_j,
//   whose power is (63 - i) + (63 - j) = 126 - s. Read as a reflected 128-bit value (bit s is
//   x^(127 - s)) that is A * K * x. So with K = x^(T - 1) mod P the product is congruent to
//   A * x^T: we name that constant FoldK(T).
//   Folding a block over the 128 bits that follow it: block * x^128 + next
//     = lo * x^192 + hi * x^128 + next
//     == clmul(lo, FoldK(192)) ^ clmul(hi, FoldK(128)) ^ next   (mod P),
//   a 128-bit value again. Eight independent lanes of 16 bytes fold over 1024 bits each
//   (FoldK(1088), FoldK(1024)) to keep the multiplier busy, then fold into one lane in order.
//   The final 128-bit value R is congruent to the message, so the message's CRC is
//   R * x^64 mod P, which is the CRC of R's 16 bytes: two slice-by-8 steps (no Barrett
//   reduction needed). The bytes after the last whole block continue with slice-by-8.
constexpr uint64_t FoldK(unsigned t) { return XPowMod(t - 1); }
constexpr uint64_t kFold128 = FoldK(128), kFold192 = FoldK(192);     // one block
constexpr uint64_t kFold1024 = FoldK(1024), kFold1088 = FoldK(1088);  // eight blocks

// Below this many bytes slice-by-8 is as fast (bench/core/crc64_bench.cc).
constexpr size_t kClmulMinBytes = 32;

__attribute__((target("pclmul,sse4.1"))) inline __m128i Fold(__m128i block, __m128i k,
                                                              __m128i next) {
  const __m128i lo = _mm_clmulepi64_si128(block, k, 0x00);  // block.lo * k.lo
  const __m128i hi = _mm_clmulepi64_si128(block, k, 0x11);  // block.hi * k.hi
  return _mm_xor_si128(_mm_xor_si128(lo, hi), next);
}

__attribute__((target("pclmul,sse4.1"))) inline __m128i Load(const unsigned char* p) {
  return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
}

__attribute__((target("pclmul,sse4.1"))) uint64_t FoldClmul(uint64_t crc, const unsigned char* p,
                                                             size_t n) {
  if (n < 16) return SliceBy8(crc, p, n);
  // _mm_set_epi64x takes the high lane first.
  const __m128i k16 = _mm_set_epi64x(int64_t(kFold128), int64_t(kFold192));
  const __m128i crc_lane = _mm_cvtsi64_si128(int64_t(crc));  // into the first 8 bytes
  __m128i x;
  if (n >= 128) {
    const __m128i k128 = _mm_set_epi64x(int64_t(kFold1024), int64_t(kFold1088));
    __m128i v[8];
#pragma GCC unroll 8
    for (int i = 0; i < 8; ++i) v[i] = Load(p + 16 * i);
    v[0] = _mm_xor_si128(v[0], crc_lane);
    p += 128;
    n -= 128;
    while (n >= 128) {
#pragma GCC unroll 8
      for (int i = 0; i < 8; ++i) v[i] = Fold(v[i], k128, Load(p + 16 * i));
      p += 128;
      n -= 128;
    }
    x = v[0];
#pragma GCC unroll 7
    for (int i = 1; i < 8; ++i) x = Fold(x, k16, v[i]);
  } else {
    x = _mm_xor_si128(Load(p), crc_lane);
    p += 16;
    n -= 16;
  }
  while (n >= 16) {
    x = Fold(x, k16, Load(p));
    p += 16;
    n -= 16;
  }
  crc = SliceWord(SliceWord(0, uint64_t(_mm_cvtsi128_si64(x))),
                  uint64_t(_mm_extract_epi64(x, 1)));
  return SliceBy8(crc, p, n);
}

bool CpuHasClmul() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1");
}

#endif  // __x86_64__

}  // namespace

namespace detail {

uint64_t Crc64SliceBy8(uint64_t crc, std::string_view data) {
  return SliceBy8(crc, reinterpret_cast<const unsigned char*>(data.data()), data.size());
}

bool Crc64HasClmul() {
#if defined(__x86_64__)
  static const bool has = CpuHasClmul();
  return has;
#else
  return false;
#endif
}

uint64_t Crc64Clmul(uint64_t crc, std::string_view data) {
#if defined(__x86_64__)
  return FoldClmul(crc, reinterpret_cast<const unsigned char*>(data.data()), data.size());
#else
  return Crc64SliceBy8(crc, data);
#endif
}

}  // namespace detail

uint64_t Crc64(uint64_t crc, std::string_view data) {
#if defined(__x86_64__)
  if (data.size() >= kClmulMinBytes && detail::Crc64HasClmul()) {
    return FoldClmul(crc, reinterpret_cast<const unsigned char*>(data.data()), data.size());
  }
#endif
  return detail::Crc64SliceBy8(crc, data);
}

uint64_t Crc64Combine(uint64_t crc_a, uint64_t crc_b, uint64_t len_b) {
  // CRC(a + b) = CRC(a) * x^(8 len_b) + CRC(b) (mod P): a's CRC moved past b's bytes, which is
  // a product by x^(8 * 2^k) for each set bit k of len_b.
  for (int k = 0; len_b != 0; ++k, len_b >>= 1) {
    if (len_b & 1) crc_a = MulMod(crc_a, kZeroBytes[k]);
  }
  return crc_a ^ crc_b;
}

}  // namespace dashkv
