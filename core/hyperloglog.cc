#include "core/hyperloglog.h"

#include <bit>
#include <cmath>
#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace dashkv {
namespace {

constexpr int kP = 14;   // register index bits
constexpr int kQ = 50;   // 64 - kP: the bits whose trailing zeros make the count
constexpr uint8_t kRegisterMax = 63;
constexpr size_t kZeroMaxLen = 64;
constexpr size_t kValMaxLen = 4;
constexpr uint8_t kXZeroBit = 0x40;
constexpr uint8_t kValBit = 0x80;
constexpr double kAlphaInf = 0.721347520444481703680;  // 1 / (2 ln 2)

// Returns s[i], or 0 past the end (see Design: the byte Redis reads after a cut XZERO).
inline uint8_t ByteAt(std::string_view s, size_t i) {
  return i < s.size() ? static_cast<uint8_t>(s[i]) : 0;
}

inline bool IsZero(uint8_t op) { return (op & 0xc0) == 0; }
inline bool IsXZero(uint8_t op) { return (op & 0xc0) == kXZeroBit; }
inline bool IsVal(uint8_t op) { return (op & kValBit) != 0; }
inline uint32_t ZeroLen(uint8_t op) { return (op & 0x3fu) + 1; }
inline uint32_t XZeroLen(uint8_t op, uint8_t low) { return (((op & 0x3fu) << 8) | low) + 1; }
inline uint8_t ValValue(uint8_t op) { return static_cast<uint8_t>(((op >> 2) & 0x1f) + 1); }
inline uint32_t ValLen(uint8_t op) { return (op & 0x3u) + 1; }
inline char ValOp(uint8_t value, size_t len) {
  return static_cast<char>(kValBit | ((value - 1) << 2) | (len - 1));
}

// One decoded opcode: `run` registers at `value` (0 for ZERO and XZERO), `size` bytes long
// (an XZERO cut at the end still counts 2, as Redis steps over it).
struct SparseOp {
  uint32_t run;
  uint8_t value;
  uint8_t size;
};

// REQUIRES: pos < s.size().
inline SparseOp DecodeOp(std::string_view s, size_t pos) {
  const uint8_t op = static_cast<uint8_t>(s[pos]);
  if (IsZero(op)) return {ZeroLen(op), 0, 1};
  if (IsXZero(op)) return {XZeroLen(op, ByteAt(s, pos + 1)), 0, 2};
  return {ValLen(op), ValValue(op), 1};
}

// Appends a ZERO (up to 64 registers) or XZERO run of `len` registers to seq[*n].
void PutZeroRun(uint8_t* seq, size_t* n, size_t len) {
  if (len > kZeroMaxLen) {
    seq[(*n)++] = static_cast<uint8_t>(kXZeroBit | ((len - 1) >> 8));
    seq[(*n)++] = static_cast<uint8_t>((len - 1) & 0xff);
  } else {
    seq[(*n)++] = static_cast<uint8_t>(len - 1);
  }
}

// Dense registers, `regs` pointing after the header. Register i is bits 6i..6i+5; it spans a
// second byte only when it starts past bit 2 of its first (never for the last register).
inline uint8_t GetRegister(const uint8_t* regs, uint32_t i) {
  const size_t bit = size_t{i} * 6;
  const size_t byte = bit >> 3;
  const unsigned shift = bit & 7;
  unsigned v = regs[byte] >> shift;
  if (shift > 2) v |= static_cast<unsigned>(regs[byte + 1]) << (8 - shift);
  return static_cast<uint8_t>(v & kRegisterMax);
}

inline void SetRegister(uint8_t* regs, uint32_t i, uint8_t v) {
  const size_t bit = size_t{i} * 6;
  const size_t byte = bit >> 3;
  const unsigned shift = bit & 7;
  regs[byte] = static_cast<uint8_t>((regs[byte] & ~(kRegisterMax << shift)) | (v << shift));
  if (shift > 2) {
    const unsigned rest = 8 - shift;
    regs[byte + 1] =
        static_cast<uint8_t>((regs[byte + 1] & ~(kRegisterMax >> rest)) | (v >> rest));
  }
}

inline uint8_t* DenseRegisters(absl::Span<char> hll) {
  return reinterpret_cast<uint8_t*>(hll.data()) + kHllHeaderSize;
}
inline const uint8_t* DenseRegisters(std::string_view hll) {
  return reinterpret_cast<const uint8_t*>(hll.data()) + kHllHeaderSize;
}

// Histogram of register values: Redis's 64 slots (a dense register holds up to 63; the
// estimator reads slots 0..51 only).
using Histogram = std::array<int, 64>;

Histogram DenseHistogram(const uint8_t* regs) {
  Histogram h{};
  // Four registers per three bytes.
  for (size_t g = 0; g < kHllRegisters / 4; ++g) {
    const uint8_t* p = regs + g * 3;
    const uint32_t w = p[0] | (uint32_t{p[1]} << 8) | (uint32_t{p[2]} << 16);
    ++h[w & 63];
    ++h[(w >> 6) & 63];
    ++h[(w >> 12) & 63];
    ++h[(w >> 18) & 63];
  }
  return h;
}

// Ertl's sigma(x) = x + sum_{k>=1} x^(2^k) 2^(k-1), summed until it stops changing.
double Sigma(double x) {
  if (x == 1.) return INFINITY;
  double y = 1;
  double z = x;
  double z_prev;
  do {
    x *= x;
    z_prev = z;
    z += x * y;
    y += y;
  } while (z_prev != z);
  return z;
}

// Ertl's tau(x) = (1 - x - sum_{k>=1} (1 - x^(2^-k))^2 2^-k) / 3, summed until it stops
// changing.
double Tau(double x) {
  if (x == 0. || x == 1.) return 0.;
  double y = 1.0;
  double z = 1 - x;
  double z_prev;
  do {
    x = std::sqrt(x);
    z_prev = z;
    y *= 0.5;
    z -= std::pow(1 - x, 2) * y;
  } while (z_prev != z);
  return z / 3;
}

// The estimate from a histogram. The operations and their order are Redis 7.0's, so that the
// rounding, and thus the result, is the same (the build keeps ISO floating point: no
// contraction into FMA, no fast-math).
uint64_t Estimate(const Histogram& h) {
  const double m = kHllRegisters;
  double z = m * Tau((m - h[kQ + 1]) / m);
  for (int j = kQ; j >= 1; --j) {
    z += h[j];
    z *= 0.5;
  }
  z += m * Sigma(h[0] / m);
  // As llroundl: an infinite estimate (every register past 51 in a hostile dense value) gives
  // the same out-of-range value as on Redis.
  return static_cast<uint64_t>(std::llround(kAlphaInf * m * m / z));
}

// Raises register `index` of the sparse value *s (see Design). Returns kCorrupt when no opcode
// covers `index`; `promote` is set instead of writing when the value must turn dense.
HllUpdate SparseSet(std::string& s, uint32_t index, uint8_t count, size_t sparse_max_bytes,
                    bool* promote) {
  // Step 1: the opcode covering `index`, and the one before it.
  const size_t end = s.size();
  size_t pos = kHllHeaderSize;
  size_t prev = 0;  // 0: none (no opcode starts inside the header)
  uint64_t first = 0;
  SparseOp op{};
  while (pos < end) {
    op = DecodeOp(s, pos);
    if (index <= first + op.run - 1) break;
    prev = pos;
    pos += op.size;
    first += op.run;
  }
  if (pos >= end) return HllUpdate::kCorrupt;

  const uint8_t code = static_cast<uint8_t>(s[pos]);
  const bool is_val = IsVal(code);
  // Step 2: the trivial cases, in place.
  bool in_place = false;
  if (is_val) {
    if (op.value >= count) return HllUpdate::kUnchanged;
    in_place = op.run == 1;
  } else {
    in_place = IsZero(code) && op.run == 1;
  }
  if (in_place) {
    s[pos] = ValOp(count, 1);
  } else {
    // Step 3: split the covering opcode into up to three (5 bytes at most: XZERO VAL XZERO).
    uint8_t seq[5];
    size_t n = 0;
    const uint64_t last = first + op.run - 1;
    if (!is_val) {
      if (index != first) PutZeroRun(seq, &n, index - first);
      seq[n++] = static_cast<uint8_t>(ValOp(count, 1));
      if (index != last) PutZeroRun(seq, &n, last - index);
    } else {
      if (index != first) seq[n++] = static_cast<uint8_t>(ValOp(op.value, index - first));
      seq[n++] = static_cast<uint8_t>(ValOp(count, 1));
      if (index != last) seq[n++] = static_cast<uint8_t>(ValOp(op.value, last - index));
    }
    const size_t old_len = op.size;
    const size_t new_size = end + n - old_len;
    if (n > old_len && new_size > sparse_max_bytes) {
      *promote = true;
      return HllUpdate::kChanged;
    }
    // An XZERO cut at the end has one byte here; Redis's length arithmetic still counts two,
    // dropping the sequence's last byte, and so does the resize below.
    s.replace(pos, std::min(old_len, end - pos), reinterpret_cast<const char*>(seq), n);
    s.resize(new_size);
  }

  // Step 4: merge neighbouring VALs of equal value, scanning up to 5 opcodes from the one
  // before the change.
  size_t p = prev != 0 ? prev : kHllHeaderSize;
  size_t stop = s.size();
  for (int scan = 5; p < stop && scan > 0; --scan) {
    const uint8_t c = static_cast<uint8_t>(s[p]);
    if (IsXZero(c)) {
      p += 2;
      continue;
    }
    if (IsZero(c)) {
      ++p;
      continue;
    }
    if (p + 1 < stop && IsVal(static_cast<uint8_t>(s[p + 1]))) {
      const uint8_t next = static_cast<uint8_t>(s[p + 1]);
      const size_t len = ValLen(c) + ValLen(next);
      if (ValValue(c) == ValValue(next) && len <= kValMaxLen) {
        s[p + 1] = ValOp(ValValue(c), len);
        s.erase(p, 1);
        --stop;
        continue;  // the merged opcode may merge with the next one
      }
    }
    ++p;
  }
  return HllUpdate::kChanged;
}

// Turns the sparse *s dense and sets the register there. kCorrupt if the opcodes are.
HllUpdate PromoteAndSet(std::string& s, uint32_t index, uint8_t count) {
  std::optional<std::string> dense = HllSparseToDense(s);
  if (!dense) return HllUpdate::kCorrupt;
  s = std::move(*dense);
  HllDenseSet(absl::MakeSpan(s), index, count);
  return HllUpdate::kChanged;
}

// Returns the next value of a splitmix64 generator.
uint64_t NextRandom(uint64_t* state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

}  // namespace

uint64_t MurmurHash64A(std::string_view data, uint64_t seed) {
  constexpr uint64_t m = 0xc6a4a7935bd1e995ULL;
  constexpr int r = 47;
  const auto* p = reinterpret_cast<const uint8_t*>(data.data());
  const size_t len = data.size();
  uint64_t h = seed ^ (len * m);
  const size_t blocks = len / 8;
  for (size_t i = 0; i < blocks; ++i) {
    uint64_t k;
    std::memcpy(&k, p + i * 8, 8);
    if constexpr (std::endian::native == std::endian::big) k = __builtin_bswap64(k);
    k *= m;
    k ^= k >> r;
    k *= m;
    h ^= k;
    h *= m;
  }
  const uint8_t* tail = p + blocks * 8;
  const size_t rest = len & 7;
  if (rest > 0) {
    for (size_t i = rest; i-- > 0;) h ^= uint64_t{tail[i]} << (8 * i);
    h *= m;
  }
  h ^= h >> r;
  h *= m;
  h ^= h >> r;
  return h;
}

HllPoint HllHashElement(std::string_view element) {
  uint64_t hash = MurmurHash64A(element, kHllHashSeed);
  const auto index = static_cast<uint32_t>(hash & (kHllRegisters - 1));
  hash >>= kP;
  hash |= uint64_t{1} << kQ;  // at most kQ trailing zeros: count <= kQ + 1
  return {index, static_cast<uint8_t>(std::countr_zero(hash) + 1)};
}

bool HllIsValid(std::string_view s) {
  if (s.size() < kHllHeaderSize || s.substr(0, 4) != "HYLL") return false;
  const auto enc = static_cast<uint8_t>(s[4]);
  if (enc > static_cast<uint8_t>(HllEncoding::kSparse)) return false;
  return enc != static_cast<uint8_t>(HllEncoding::kDense) || s.size() == kHllDenseSize;
}

std::string HllNewSparse() {
  std::string s(kHllHeaderSize + 2, '\0');
  std::memcpy(s.data(), "HYLL", 4);
  s[4] = static_cast<char>(HllEncoding::kSparse);
  // One XZERO of 16384 registers.
  s[kHllHeaderSize] = static_cast<char>(kXZeroBit | ((kHllRegisters - 1) >> 8));
  s[kHllHeaderSize + 1] = static_cast<char>((kHllRegisters - 1) & 0xff);
  return s;
}

std::optional<uint64_t> HllCachedCardinality(std::string_view s) {
  if (static_cast<uint8_t>(s[15]) & 0x80) return std::nullopt;
  uint64_t card = 0;
  for (int i = 7; i >= 0; --i) card = (card << 8) | static_cast<uint8_t>(s[8 + i]);
  return card;
}

void HllStoreCardinality(absl::Span<char> hll, uint64_t card) {
  for (int i = 0; i < 8; ++i) hll[8 + i] = static_cast<char>((card >> (8 * i)) & 0xff);
}

void HllInvalidateCache(absl::Span<char> hll) {
  hll[15] = static_cast<char>(static_cast<uint8_t>(hll[15]) | 0x80);
}

uint8_t HllDenseGet(std::string_view hll, uint32_t index) {
  return GetRegister(DenseRegisters(hll), index);
}

bool HllDenseSet(absl::Span<char> hll, uint32_t index, uint8_t count) {
  uint8_t* regs = DenseRegisters(hll);
  if (GetRegister(regs, index) >= count) return false;
  SetRegister(regs, index, count);
  return true;
}

HllUpdate HllSet(std::string* hll, uint32_t index, uint8_t count, size_t sparse_max_bytes) {
  std::string& s = *hll;
  HllUpdate result;
  if (HllEncodingOf(s) == HllEncoding::kDense) {
    result = HllDenseSet(absl::MakeSpan(s), index, count) ? HllUpdate::kChanged
                                                          : HllUpdate::kUnchanged;
  } else {
    bool promote = count > kHllSparseMaxValue;
    result = promote ? HllUpdate::kChanged
                     : SparseSet(s, index, count, sparse_max_bytes, &promote);
    if (promote) result = PromoteAndSet(s, index, count);
  }
  if (result == HllUpdate::kChanged) HllInvalidateCache(absl::MakeSpan(s));
  return result;
}

HllUpdate HllAdd(std::string* hll, std::string_view element, size_t sparse_max_bytes) {
  HllPoint pt = HllHashElement(element);
  return HllSet(hll, pt.index, pt.count, sparse_max_bytes);
}

std::optional<std::string> HllSparseToDense(std::string_view sparse) {
  std::string dense(kHllDenseSize, '\0');
  std::memcpy(dense.data(), sparse.data(), kHllHeaderSize);  // magic, unused bytes, cache
  dense[4] = static_cast<char>(HllEncoding::kDense);
  uint8_t* regs = DenseRegisters(absl::MakeSpan(dense));
  uint64_t idx = 0;
  for (size_t pos = kHllHeaderSize; pos < sparse.size();) {
    SparseOp op = DecodeOp(sparse, pos);
    pos += op.size;
    if (op.value == 0) {
      idx += op.run;
      continue;
    }
    if (idx + op.run > kHllRegisters) return std::nullopt;
    for (uint32_t k = 0; k < op.run; ++k) SetRegister(regs, static_cast<uint32_t>(idx++), op.value);
  }
  if (idx != kHllRegisters) return std::nullopt;
  return dense;
}

bool HllMergeInto(std::string_view hll, HllRegisters* max) {
  HllRegisters& out = *max;
  if (HllEncodingOf(hll) == HllEncoding::kDense) {
    const uint8_t* regs = DenseRegisters(hll);
    // Four registers per three bytes.
    for (size_t g = 0; g < kHllRegisters / 4; ++g) {
      const uint8_t* p = regs + g * 3;
      const uint32_t w = p[0] | (uint32_t{p[1]} << 8) | (uint32_t{p[2]} << 16);
      uint8_t* o = out.data() + g * 4;
      for (int k = 0; k < 4; ++k) {
        o[k] = std::max(o[k], static_cast<uint8_t>((w >> (6 * k)) & kRegisterMax));
      }
    }
    return true;
  }
  uint64_t idx = 0;
  for (size_t pos = kHllHeaderSize; pos < hll.size();) {
    SparseOp op = DecodeOp(hll, pos);
    pos += op.size;
    if (op.value == 0) {
      idx += op.run;
      continue;
    }
    if (idx + op.run > kHllRegisters) return false;
    for (uint32_t k = 0; k < op.run; ++k, ++idx) out[idx] = std::max(out[idx], op.value);
  }
  return idx == kHllRegisters;
}

std::optional<uint64_t> HllCount(std::string_view hll) {
  if (HllEncodingOf(hll) == HllEncoding::kDense) {
    return Estimate(DenseHistogram(DenseRegisters(hll)));
  }
  Histogram h{};
  uint64_t idx = 0;
  for (size_t pos = kHllHeaderSize; pos < hll.size();) {
    SparseOp op = DecodeOp(hll, pos);
    pos += op.size;
    idx += op.run;
    if (idx > kHllRegisters) return std::nullopt;
    h[op.value] += static_cast<int>(op.run);
  }
  if (idx != kHllRegisters) return std::nullopt;
  return Estimate(h);
}

uint64_t HllCountRegisters(const HllRegisters& registers) {
  Histogram h{};
  for (uint8_t r : registers) ++h[r & 63];
  return Estimate(h);
}

std::string HllDecodeSparse(std::string_view sparse) {
  std::string out;
  for (size_t pos = kHllHeaderSize; pos < sparse.size();) {
    const uint8_t code = static_cast<uint8_t>(sparse[pos]);
    SparseOp op = DecodeOp(sparse, pos);
    pos += op.size;
    if (!out.empty()) out.push_back(' ');
    if (op.value != 0) {
      absl::StrAppend(&out, "v:", op.value, ",", op.run);
    } else {
      absl::StrAppend(&out, IsXZero(code) ? "Z:" : "z:", op.run);
    }
  }
  return out;
}

std::string HllSelfTest(uint64_t seed, size_t sparse_max_bytes) {
  uint64_t rng = seed;
  // Test 1: registers keep their values and leave their neighbours alone.
  std::string dense(kHllDenseSize, '\0');
  uint8_t* regs = DenseRegisters(absl::MakeSpan(dense));
  HllRegisters expected;
  for (int cycle = 0; cycle < 1000; ++cycle) {
    for (uint32_t i = 0; i < kHllRegisters; ++i) {
      expected[i] = static_cast<uint8_t>(NextRandom(&rng) & kRegisterMax);
      SetRegister(regs, i, expected[i]);
    }
    for (uint32_t i = 0; i < kHllRegisters; ++i) {
      const uint8_t got = GetRegister(regs, i);
      if (got != expected[i]) {
        return absl::StrCat("TESTFAILED Register ", i, " should be ", expected[i], " but is ",
                            got);
      }
    }
  }
  // Test 2: dense and sparse agree, and the error stays within 6 standard errors (1 at 10).
  std::memset(regs, 0, kHllDenseSize - kHllHeaderSize);
  std::string sparse = HllNewSparse();
  const double relerr = 1.04 / std::sqrt(double{kHllRegisters});
  const uint64_t base = NextRandom(&rng);
  uint64_t checkpoint = 1;
  for (uint64_t j = 1; j <= 10000000; ++j) {
    char ele[8];
    const uint64_t v = j ^ base;
    for (int b = 0; b < 8; ++b) ele[b] = static_cast<char>((v >> (8 * b)) & 0xff);
    HllPoint pt = HllHashElement({ele, 8});
    HllDenseSet(absl::MakeSpan(dense), pt.index, pt.count);
    if (HllSet(&sparse, pt.index, pt.count, sparse_max_bytes) == HllUpdate::kCorrupt) {
      return "TESTFAILED sparse encoding corrupted";
    }
    if (j != checkpoint) continue;
    if (j < sparse_max_bytes / 2 && HllEncodingOf(sparse) != HllEncoding::kSparse) {
      return "TESTFAILED sparse encoding not used";
    }
    const uint64_t card = *HllCount(dense);
    if (HllCount(sparse) != card) return "TESTFAILED dense/sparse disagree";
    const uint64_t abserr = card > checkpoint ? card - checkpoint : checkpoint - card;
    uint64_t maxerr = static_cast<uint64_t>(std::ceil(relerr * 6 * double(checkpoint)));
    if (j == 10) maxerr = 1;
    if (abserr > maxerr) {
      return absl::StrCat("TESTFAILED Too big error. card:", checkpoint, " abserr:", abserr);
    }
    checkpoint *= 10;
  }
  return "";
}

}  // namespace dashkv
