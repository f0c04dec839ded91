#include "core/lzf.h"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>

namespace dashkv {

namespace {

constexpr size_t kMaxLiteral = 32;
constexpr size_t kMaxOffset = 8192;  // distance 1..8192, stored as distance - 1
constexpr size_t kMaxRef = 264;      // len + 2 with len up to 7 + 255
// The match table has 2^bits entries: enough for the input (a short string does not pay for
// clearing a big table), at most 2^14.
constexpr int kMinHashBits = 6;
constexpr int kMaxHashBits = 14;

uint32_t HashOf(const unsigned char* p, int bits) {
  uint32_t v = (uint32_t{p[0]} << 16) | (uint32_t{p[1]} << 8) | p[2];
  return (v * 2654435761u) >> (32 - bits);
}

// Walks an LZF stream, checking every literal and back reference against the input and the
// output so far; with kWrite, writes the output into `out` (at most `out_len` bytes). Returns
// the decompressed size, or 0 when the stream is malformed or does not fit.
template <bool kWrite>
size_t LzfWalk(std::string_view in, char* out, size_t out_len) {
  const auto* ip = reinterpret_cast<const unsigned char*>(in.data());
  const unsigned char* const in_end = ip + in.size();
  size_t op = 0;
  while (ip < in_end) {
    unsigned ctrl = *ip++;
    if (ctrl < 32) {  // literal run
      size_t len = ctrl + 1;
      if (static_cast<size_t>(in_end - ip) < len || out_len - op < len) return 0;
      if constexpr (kWrite) std::memcpy(out + op, ip, len);
      ip += len;
      op += len;
      continue;
    }
    size_t len = ctrl >> 5;
    if (len == 7) {
      if (ip == in_end) return 0;
      len += *ip++;
    }
    if (ip == in_end) return 0;
    size_t distance = (((ctrl & 0x1f) << 8) | *ip++) + 1;
    len += 2;
    if (distance > op || out_len - op < len) return 0;
    if constexpr (kWrite) {
      // Byte by byte: the source may overlap the destination.
      for (size_t i = 0; i < len; ++i) out[op + i] = out[op + i - distance];
    }
    op += len;
  }
  return op;
}

}  // namespace

size_t LzfDecompress(std::string_view in, char* out, size_t out_len) {
  return LzfWalk<true>(in, out, out_len);
}

size_t LzfDecompressedSize(std::string_view in) {
  return LzfWalk<false>(in, nullptr, std::numeric_limits<size_t>::max());
}

size_t LzfCompress(std::string_view in, char* out, size_t out_len) {
  const auto* src = reinterpret_cast<const unsigned char*>(in.data());
  const size_t n = in.size();
  if (n == 0) return 0;
  const int bits = std::clamp(static_cast<int>(std::bit_width(n)), kMinHashBits, kMaxHashBits);
  auto table = std::make_unique<uint32_t[]>(size_t{1} << bits);  // positions + 1, 0 = none
  size_t op = 0;
  size_t lit_start = 0;  // first byte of the pending literal run
  // Flushes the pending literals [lit_start, end) in runs of at most 32; false if out is full.
  auto flush_literals = [&](size_t end) {
    while (lit_start < end) {
      size_t run = end - lit_start < kMaxLiteral ? end - lit_start : kMaxLiteral;
      if (out_len - op < run + 1) return false;
      out[op++] = static_cast<char>(run - 1);
      std::memcpy(out + op, src + lit_start, run);
      op += run;
      lit_start += run;
    }
    return true;
  };
  size_t ip = 0;
  while (ip + 2 < n) {
    uint32_t h = HashOf(src + ip, bits);
    size_t candidate = table[h];
    table[h] = static_cast<uint32_t>(ip + 1);
    if (candidate != 0 && ip - (candidate - 1) <= kMaxOffset && candidate - 1 < ip &&
        std::memcmp(src + candidate - 1, src + ip, 3) == 0) {
      size_t ref = candidate - 1;
      size_t max_len = n - ip < kMaxRef ? n - ip : kMaxRef;
      size_t len = 3;
      while (len < max_len && src[ref + len] == src[ip + len]) ++len;
      if (!flush_literals(ip)) return 0;
      size_t off = ip - ref - 1;
      size_t code = len - 2;
      if (code < 7) {
        if (out_len - op < 2) return 0;
        out[op++] = static_cast<char>((code << 5) | (off >> 8));
      } else {
        if (out_len - op < 3) return 0;
        out[op++] = static_cast<char>((7 << 5) | (off >> 8));
        out[op++] = static_cast<char>(code - 7);
      }
      out[op++] = static_cast<char>(off & 0xff);
      ip += len;
      lit_start = ip;
      continue;
    }
    ++ip;
  }
  if (!flush_literals(n)) return 0;
  return op;
}

}  // namespace dashkv
