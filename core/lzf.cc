#include "core/lzf.h"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>

namespace dashkv {

static_assert(std::endian::native == std::endian::little, "MatchLength compares words");

namespace {

constexpr size_t kMaxLiteral = 32;
constexpr size_t kMaxOffset = 8192;  // distance 1..8192, stored as distance - 1
constexpr size_t kMaxRef = 264;      // len + 2 with len up to 7 + 255
// The match table has 2^bits entries: enough for the input (a short string does not pay for
// clearing a big table), at most 2^14.
constexpr int kMinHashBits = 6;
constexpr int kMaxHashBits = 14;

// After 2^kSkipShift positions without a match the compressor steps 2 bytes, after twice as
// many 3 bytes, and so on (the acceleration LZ4 uses): incompressible input, which ends up
// stored raw anyway, is scanned about 3x faster, while input with matches keeps stepping 1 byte
// (the count restarts at every match). The output stays a valid LZF stream; only which matches
// are found changes.
constexpr size_t kSkipShift = 5;

// The compressor's hash table of 3-byte prefixes, one per thread, reused across calls without
// clearing: a slot holds base + position + 1 for the call whose base it was, so every slot at
// or below the current call's base is stale. The table is cleared only when base would wrap.
struct MatchTable {
  std::unique_ptr<uint32_t[]> slots{new uint32_t[size_t{1} << kMaxHashBits]()};
  uint64_t next_base = 0;

  // Returns the base of a call over `n` bytes.
  uint32_t Begin(size_t n) {
    if (next_base + n + 1 > std::numeric_limits<uint32_t>::max()) {
      std::fill_n(slots.get(), size_t{1} << kMaxHashBits, 0);
      next_base = 0;
    }
    const uint64_t base = next_base;
    next_base += n + 1;
    return static_cast<uint32_t>(base);
  }
};

MatchTable& ThreadMatchTable() {
  thread_local MatchTable table;
  return table;
}

// Returns how many bytes at `ip` equal those at `ref` (ref < ip), at least 3 (the caller
// checked them) and at most `max_len`. Byte by byte up to kShortMatch (most matches of text
// end there, and a byte loop predicts their end better), then 8 bytes at a time (long runs).
size_t MatchLength(const unsigned char* src, size_t ref, size_t ip, size_t max_len) {
  constexpr size_t kShortMatch = 16;
  size_t len = 3;
  const size_t short_end = max_len < kShortMatch ? max_len : kShortMatch;
  while (len < short_end && src[ref + len] == src[ip + len]) ++len;
  if (len < kShortMatch) return len;
  while (len + 8 <= max_len) {
    uint64_t a, b;
    std::memcpy(&a, src + ref + len, 8);
    std::memcpy(&b, src + ip + len, 8);
    if (a != b) return len + std::countr_zero(a ^ b) / 8;  // little-endian: first byte lowest
    len += 8;
  }
  while (len < max_len && src[ref + len] == src[ip + len]) ++len;
  return len;
}

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

size_t LzfCompress(std::string_view in, char* out, size_t out_len, size_t probe) {
  const auto* src = reinterpret_cast<const unsigned char*>(in.data());
  const size_t n = in.size();
  if (n == 0) return 0;
  const int bits = std::clamp(static_cast<int>(std::bit_width(n)), kMinHashBits, kMaxHashBits);
  MatchTable& table = ThreadMatchTable();
  const uint32_t base = table.Begin(n);
  uint32_t* const slots = table.slots.get();
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
  size_t misses = 0;  // positions tried since the last match
  // Where the probe's verdict falls due (never without a probe, or when the whole input is
  // shorter than it: the end's out_len check decides then).
  size_t probe_end = probe > 0 && probe < n ? probe : std::numeric_limits<size_t>::max();
  while (ip + 2 < n) {
    if (ip >= probe_end) {
      // What the first ip bytes cost so far: the output, plus the pending literals with
      // their control bytes. No shorter than the input: give up, the rest is likely alike.
      const size_t pending = ip - lit_start;
      if (op + pending + (pending + kMaxLiteral - 1) / kMaxLiteral >= ip) return 0;
      probe_end = std::numeric_limits<size_t>::max();
    }
    uint32_t h = HashOf(src + ip, bits);
    uint32_t entry = slots[h];
    slots[h] = base + static_cast<uint32_t>(ip) + 1;
    // An entry above `base` is a position of this input, always before ip.
    const size_t ref = entry > base ? entry - base - 1 : ip;
    if (ref < ip && ip - ref <= kMaxOffset && std::memcmp(src + ref, src + ip, 3) == 0) {
      const size_t len = MatchLength(src, ref, ip, n - ip < kMaxRef ? n - ip : kMaxRef);
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
      misses = 0;
      continue;
    }
    // The step grows with the misses since the last match (see kSkipShift).
    ip += 1 + (misses++ >> kSkipShift);
  }
  if (!flush_literals(n)) return 0;
  return op;
}

}  // namespace dashkv
