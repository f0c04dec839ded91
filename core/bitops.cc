#include "core/bitops.h"

#include <algorithm>
#include <bit>
#include <cstring>

#include "core/base/logging.h"
#include "core/numbers.h"

namespace dashkv {

namespace {

inline uint64_t Load64(const unsigned char* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

inline void Store64(unsigned char* p, uint64_t v) { std::memcpy(p, &v, 8); }

inline const unsigned char* Bytes(std::string_view s) {
  return reinterpret_cast<const unsigned char*>(s.data());
}

// Counts the set bits of n bytes at p.
uint64_t PopCount(const unsigned char* p, size_t n) {
  uint64_t c0 = 0, c1 = 0, c2 = 0, c3 = 0;
  size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    c0 += std::popcount(Load64(p + i));
    c1 += std::popcount(Load64(p + i + 8));
    c2 += std::popcount(Load64(p + i + 16));
    c3 += std::popcount(Load64(p + i + 24));
  }
  for (; i + 8 <= n; i += 8) c0 += std::popcount(Load64(p + i));
  for (; i < n; ++i) c1 += std::popcount(static_cast<unsigned>(p[i]));
  return c0 + c1 + c2 + c3;
}

// Counts the set bits in the inclusive bit range [first, last] of p.
uint64_t PopCountBits(const unsigned char* p, uint64_t first, uint64_t last) {
  const uint64_t fb = first >> 3, lb = last >> 3;
  const unsigned head_mask = 0xFFu >> (first & 7);          // bits at or after `first`
  const unsigned tail_mask = (0xFF00u >> ((last & 7) + 1)) & 0xFF;  // at or before `last`
  if (fb == lb) return std::popcount(static_cast<unsigned>(p[fb] & head_mask & tail_mask));
  return std::popcount(static_cast<unsigned>(p[fb] & head_mask)) +
         PopCount(p + fb + 1, lb - fb - 1) +
         std::popcount(static_cast<unsigned>(p[lb] & tail_mask));
}

// Returns the first bit in [first, last] of p equal to `bit`, or -1.
int64_t FindBit(const unsigned char* p, uint64_t first, uint64_t last, int bit) {
  const unsigned flip = bit ? 0x00 : 0xFF;  // after the flip we look for a 1
  const uint64_t fb = first >> 3, lb = last >> 3;
  const unsigned head_mask = 0xFFu >> (first & 7);
  const unsigned tail_mask = (0xFF00u >> ((last & 7) + 1)) & 0xFF;
  auto hit = [](uint64_t byte, unsigned x) {
    return static_cast<int64_t>(byte * 8 + std::countl_zero(static_cast<uint8_t>(x)));
  };
  unsigned x = (p[fb] ^ flip) & head_mask;
  if (fb == lb) x &= tail_mask;
  if (x != 0) return hit(fb, x);
  if (fb == lb) return -1;
  uint64_t i = fb + 1;
  const uint64_t skip_word = bit ? 0 : ~uint64_t{0};
  while (i + 8 <= lb && Load64(p + i) == skip_word) i += 8;
  for (; i < lb; ++i) {
    x = p[i] ^ flip;
    if (x != 0) return hit(i, x);
  }
  x = (p[lb] ^ flip) & tail_mask;
  return x != 0 ? hit(lb, x) : -1;
}

// Inclusive range after Redis's index normalization; empty when first > last.
struct Range {
  int64_t first;
  int64_t last;
  bool empty() const { return first > last; }
};

// Normalizes [start, end] over `total` units: negatives count from the end, clamp at 0, end
// clamps at total - 1.
Range Normalize(int64_t start, int64_t end, int64_t total) {
  if (start < 0) start += total;
  if (end < 0) end += total;
  start = std::max<int64_t>(start, 0);
  end = std::max<int64_t>(end, 0);
  if (end >= total) end = total - 1;
  return {start, end};
}

// Reads `bits` bits at bit `offset` (zero past the end) as an unsigned number.
uint64_t ReadField(std::string_view s, uint64_t offset, unsigned bits) {
  const uint64_t byte = offset >> 3;
  const unsigned shift = offset & 7;
  const unsigned nbytes = (shift + bits + 7) / 8;  // at most 9
  unsigned __int128 acc = 0;
  for (unsigned i = 0; i < nbytes; ++i) {
    const uint64_t at = byte + i;
    acc = (acc << 8) | (at < s.size() ? static_cast<unsigned char>(s[at]) : 0u);
  }
  acc >>= nbytes * 8 - shift - bits;
  const uint64_t mask = bits == 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
  return static_cast<uint64_t>(acc) & mask;
}

// Writes the low `bits` bits of `value` at bit `offset`, growing `s` as needed.
void WriteField(std::string& s, uint64_t offset, unsigned bits, uint64_t value) {
  GrowForBit(s, offset + bits - 1);
  const uint64_t byte = offset >> 3;
  const unsigned shift = offset & 7;
  const unsigned nbytes = (shift + bits + 7) / 8;
  unsigned char* p = reinterpret_cast<unsigned char*>(s.data()) + byte;
  unsigned __int128 acc = 0;
  for (unsigned i = 0; i < nbytes; ++i) acc = (acc << 8) | p[i];
  const unsigned low = nbytes * 8 - shift - bits;
  const uint64_t mask = bits == 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
  const unsigned __int128 field_mask = static_cast<unsigned __int128>(mask) << low;
  acc = (acc & ~field_mask) | (static_cast<unsigned __int128>(value & mask) << low);
  for (unsigned i = nbytes; i-- > 0;) {
    p[i] = static_cast<unsigned char>(acc);
    acc >>= 8;
  }
}

inline int64_t SignExtend(uint64_t v, unsigned bits) {
  if (bits == 64) return static_cast<int64_t>(v);
  const uint64_t sign = uint64_t{1} << (bits - 1);
  const uint64_t mask = (uint64_t{1} << bits) - 1;
  v &= mask;
  return static_cast<int64_t>((v ^ sign) - sign);
}

// Returns the value an unsigned field of `bits` takes for cur + incr, or nullopt (kFail).
std::optional<uint64_t> UnsignedResult(uint64_t cur, int64_t incr, unsigned bits,
                                       BitfieldOverflow overflow) {
  const uint64_t max = (uint64_t{1} << bits) - 1;  // bits <= 63
  const uint64_t sum = cur + static_cast<uint64_t>(incr);  // mod 2^64
  const bool over = cur > max || (incr > 0 && static_cast<uint64_t>(incr) > max - cur);
  const bool under = !over && incr < 0 && (0 - static_cast<uint64_t>(incr)) > cur;
  if (!over && !under) return sum;
  switch (overflow) {
    case BitfieldOverflow::kWrap:
      return sum & max;
    case BitfieldOverflow::kSat:
      return over ? max : 0;
    case BitfieldOverflow::kFail:
      return std::nullopt;
  }
  return std::nullopt;
}

// Returns the value a signed field of `bits` takes for cur + incr, or nullopt (kFail).
std::optional<int64_t> SignedResult(int64_t cur, int64_t incr, unsigned bits,
                                    BitfieldOverflow overflow) {
  const int64_t max = bits == 64 ? INT64_MAX : (int64_t{1} << (bits - 1)) - 1;
  const int64_t min = -max - 1;
  const __int128 sum = static_cast<__int128>(cur) + incr;
  // Redis computes max - cur in 64 bits; when that wraps negative (only a SET of a value near
  // INT64_MIN into a narrow field), it reports an overflow upwards.
  const bool wrapped_check = bits < 64 && static_cast<__int128>(max) - cur >= (__int128{1} << 63);
  const bool over = sum > max || wrapped_check;
  const bool under = !over && sum < min;
  if (!over && !under) return static_cast<int64_t>(sum);
  switch (overflow) {
    case BitfieldOverflow::kWrap:
      return SignExtend(static_cast<uint64_t>(cur) + static_cast<uint64_t>(incr), bits);
    case BitfieldOverflow::kSat:
      return over ? max : min;
    case BitfieldOverflow::kFail:
      return std::nullopt;
  }
  return std::nullopt;
}

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    char x = a[i];
    if (x >= 'a' && x <= 'z') x = static_cast<char>(x - 'a' + 'A');
    if (x != b[i]) return false;
  }
  return true;
}

}  // namespace

// ----- GETBIT / SETBIT -----

std::optional<uint64_t> ParseBitOffset(std::string_view arg, uint64_t max_bytes) {
  std::optional<int64_t> v = ParseInt64(arg);
  if (!v || *v < 0 || (static_cast<uint64_t>(*v) >> 3) >= max_bytes) return std::nullopt;
  return static_cast<uint64_t>(*v);
}

int GetBit(std::string_view s, uint64_t offset) {
  const uint64_t byte = offset >> 3;
  if (byte >= s.size()) return 0;
  return (static_cast<unsigned char>(s[byte]) >> (7 - (offset & 7))) & 1;
}

int SetBit(std::string& s, uint64_t offset, int bit) {
  DCHECK(bit == 0 || bit == 1);
  GrowForBit(s, offset);
  unsigned char& b = reinterpret_cast<unsigned char&>(s[offset >> 3]);
  const unsigned mask = 0x80u >> (offset & 7);
  const int old = (b & mask) ? 1 : 0;
  b = static_cast<unsigned char>(bit ? (b | mask) : (b & ~mask));
  return old;
}

void GrowForBit(std::string& s, uint64_t offset) {
  const uint64_t need = (offset >> 3) + 1;
  if (s.size() < need) s.resize(need, '\0');
}

// ----- BITCOUNT / BITPOS -----

uint64_t BitCount(std::string_view s) { return PopCount(Bytes(s), s.size()); }

uint64_t BitCount(std::string_view s, int64_t start, int64_t end, BitUnit unit) {
  if (start < 0 && end < 0 && start > end) return 0;
  const int64_t unit_bits = unit == BitUnit::kBit ? 1 : 8;
  const Range r = Normalize(start, end, static_cast<int64_t>(s.size()) * (8 / unit_bits));
  if (r.empty()) return 0;
  if (unit == BitUnit::kByte) {
    return PopCount(Bytes(s) + r.first, static_cast<size_t>(r.last - r.first + 1));
  }
  return PopCountBits(Bytes(s), static_cast<uint64_t>(r.first), static_cast<uint64_t>(r.last));
}

int64_t BitPos(std::string_view s, int bit, int64_t start, std::optional<int64_t> end,
               BitUnit unit) {
  DCHECK(bit == 0 || bit == 1);
  const int64_t len = static_cast<int64_t>(s.size());
  const int64_t total = unit == BitUnit::kBit ? len * 8 : len;
  const Range r = Normalize(start, end.value_or(total - 1), total);
  if (r.empty()) return -1;
  const uint64_t first = unit == BitUnit::kBit ? r.first : r.first * 8;
  const uint64_t last = unit == BitUnit::kBit ? r.last : r.last * 8 + 7;
  const int64_t pos = FindBit(Bytes(s), first, last, bit);
  if (pos >= 0 || bit == 1 || end.has_value()) return pos;
  return static_cast<int64_t>(last) + 1;  // zero padding right after the string
}

// ----- BITFIELD -----

std::optional<BitfieldType> ParseBitfieldType(std::string_view arg) {
  if (arg.empty()) return std::nullopt;
  bool is_signed;
  if (arg[0] == 'i') {
    is_signed = true;
  } else if (arg[0] == 'u') {
    is_signed = false;
  } else {
    return std::nullopt;
  }
  // Redis reads the width as a C string: it stops at an embedded NUL.
  std::string_view width = arg.substr(1);
  width = width.substr(0, width.find('\0'));
  std::optional<int64_t> bits = ParseInt64(width);
  if (!bits || *bits < 1 || *bits > (is_signed ? 64 : 63)) return std::nullopt;
  return BitfieldType{is_signed, static_cast<uint8_t>(*bits)};
}

std::optional<uint64_t> ParseBitfieldOffset(std::string_view arg, BitfieldType type,
                                            uint64_t max_bytes) {
  const bool scaled = !arg.empty() && arg[0] == '#';
  std::optional<int64_t> v = ParseInt64(scaled ? arg.substr(1) : arg);
  if (!v) return std::nullopt;
  int64_t off = *v;
  if (scaled) off = static_cast<int64_t>(static_cast<uint64_t>(off) * type.bits);
  if (off < 0 || (static_cast<uint64_t>(off) >> 3) >= max_bytes) return std::nullopt;
  return static_cast<uint64_t>(off);
}

std::optional<BitfieldOverflow> ParseBitfieldOverflow(std::string_view arg) {
  if (EqualsIgnoreCase(arg, "WRAP")) return BitfieldOverflow::kWrap;
  if (EqualsIgnoreCase(arg, "SAT")) return BitfieldOverflow::kSat;
  if (EqualsIgnoreCase(arg, "FAIL")) return BitfieldOverflow::kFail;
  return std::nullopt;
}

int64_t BitfieldGet(std::string_view s, uint64_t offset, BitfieldType type) {
  const uint64_t raw = ReadField(s, offset, type.bits);
  return type.is_signed ? SignExtend(raw, type.bits) : static_cast<int64_t>(raw);
}

std::optional<int64_t> BitfieldSet(std::string& s, uint64_t offset, BitfieldType type,
                                   int64_t value, BitfieldOverflow overflow) {
  const int64_t old = BitfieldGet(s, offset, type);
  uint64_t raw;
  if (type.is_signed) {
    std::optional<int64_t> v = SignedResult(value, 0, type.bits, overflow);
    if (!v) return std::nullopt;
    raw = static_cast<uint64_t>(*v);
  } else {
    std::optional<uint64_t> v =
        UnsignedResult(static_cast<uint64_t>(value), 0, type.bits, overflow);
    if (!v) return std::nullopt;
    raw = *v;
  }
  WriteField(s, offset, type.bits, raw);
  return old;
}

std::optional<int64_t> BitfieldIncrBy(std::string& s, uint64_t offset, BitfieldType type,
                                      int64_t incr, BitfieldOverflow overflow) {
  const int64_t cur = BitfieldGet(s, offset, type);
  int64_t result;
  if (type.is_signed) {
    std::optional<int64_t> v = SignedResult(cur, incr, type.bits, overflow);
    if (!v) return std::nullopt;
    result = *v;
  } else {
    std::optional<uint64_t> v =
        UnsignedResult(static_cast<uint64_t>(cur), incr, type.bits, overflow);
    if (!v) return std::nullopt;
    result = static_cast<int64_t>(*v);
  }
  WriteField(s, offset, type.bits, static_cast<uint64_t>(result));
  return result;
}

// ----- BITOP -----

std::string BitOp(BitOpKind kind, std::span<const std::string_view> srcs) {
  DCHECK(kind != BitOpKind::kNot || srcs.size() == 1);
  if (srcs.empty()) return std::string();
  size_t max_len = 0;
  for (std::string_view s : srcs) max_len = std::max(max_len, s.size());
  std::string out(max_len, '\0');
  unsigned char* dst = reinterpret_cast<unsigned char*>(out.data());
  // A missing key is an empty view whose data() may be null: memcpy must not see it.
  if (!srcs[0].empty()) std::memcpy(dst, srcs[0].data(), srcs[0].size());
  if (kind == BitOpKind::kNot) {
    size_t i = 0;
    for (; i + 8 <= max_len; i += 8) Store64(dst + i, ~Load64(dst + i));
    for (; i < max_len; ++i) dst[i] = static_cast<unsigned char>(~dst[i]);
    return out;
  }
  if (kind == BitOpKind::kAnd) {
    // Bytes past a source's end are 0 for AND: only the shortest prefix survives.
    size_t min_len = max_len;
    for (std::string_view s : srcs) min_len = std::min(min_len, s.size());
    std::memset(dst + min_len, 0, max_len - min_len);
    max_len = min_len;
  }
  for (size_t k = 1; k < srcs.size(); ++k) {
    const unsigned char* src = Bytes(srcs[k]);
    const size_t n = std::min(srcs[k].size(), max_len);
    size_t i = 0;
    switch (kind) {
      case BitOpKind::kAnd:
        for (; i + 8 <= n; i += 8) Store64(dst + i, Load64(dst + i) & Load64(src + i));
        for (; i < n; ++i) dst[i] &= src[i];
        break;
      case BitOpKind::kOr:
        for (; i + 8 <= n; i += 8) Store64(dst + i, Load64(dst + i) | Load64(src + i));
        for (; i < n; ++i) dst[i] |= src[i];
        break;
      case BitOpKind::kXor:
        for (; i + 8 <= n; i += 8) Store64(dst + i, Load64(dst + i) ^ Load64(src + i));
        for (; i < n; ++i) dst[i] ^= src[i];
        break;
      case BitOpKind::kNot:
        break;
    }
  }
  return out;
}

// ----- GETRANGE / SETRANGE -----

std::string_view GetRange(std::string_view s, int64_t start, int64_t end) {
  if (start < 0 && end < 0 && start > end) return {};
  const Range r = Normalize(start, end, static_cast<int64_t>(s.size()));
  if (r.empty() || s.empty()) return {};
  return s.substr(static_cast<size_t>(r.first), static_cast<size_t>(r.last - r.first + 1));
}

StringOpError CheckSetRange(int64_t offset, size_t value_len, uint64_t max_len) {
  if (offset < 0) return StringOpError::kOffsetOutOfRange;
  if (value_len == 0) return StringOpError::kOk;
  return CheckStringLength(static_cast<uint64_t>(offset), value_len, max_len);
}

StringOpError CheckStringLength(uint64_t size, uint64_t append, uint64_t max_len) {
  if (append > max_len || size > max_len - append) return StringOpError::kTooLong;
  return StringOpError::kOk;
}

size_t SetRange(std::string& s, uint64_t offset, std::string_view value) {
  if (value.empty()) return s.size();
  const uint64_t need = offset + value.size();
  if (s.size() < need) s.resize(need, '\0');
  std::memcpy(s.data() + offset, value.data(), value.size());
  return s.size();
}

}  // namespace dashkv
