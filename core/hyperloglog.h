// HyperLogLog over Redis 7.0's byte representation: pure functions over the string value that
// holds one, so that GET/SET, DUMP/RESTORE and RDB move a HyperLogLog between Redis and dashkv
// unchanged and both count the same bytes to the same number.
// Thread: pure functions (no shared state).
//
// Design
//   A HyperLogLog is a string: a 16-byte header, then the registers.
//     bytes 0..3   "HYLL"
//     byte 4       encoding: 0 dense, 1 sparse (anything else is not a HyperLogLog)
//     bytes 5..7   unused; kept as found
//     bytes 8..15  cached cardinality, little endian; the top bit of byte 15 set means "stale"
//   Dense: 16384 registers of 6 bits, 12288 bytes; register i occupies bits 6i..6i+5 of the
//   register bytes, counting from the least significant bit of the first one (so a register
//   may straddle two bytes). A dense value is exactly kHllDenseSize bytes long.
//   Sparse: opcodes that run-length encode the 16384 registers in order:
//     00xxxxxx           ZERO   x+1 (1..64) registers at 0
//     01xxxxxx yyyyyyyy  XZERO  (x<<8 | y)+1 (1..16384) registers at 0
//     1vvvvvxx           VAL    x+1 (1..4) registers at v+1 (1..32)
//   An element hashes (MurmurHash64A, seed 0xadc83b19) to a register (the low 14 bits) and a
//   count: 1 + the number of trailing zero bits of the other 50 (1..51). A register keeps the
//   largest count it saw. A sparse value turns dense when a register needs more than 32 or a
//   write would make it longer than the sparse limit (hll-sparse-max-bytes). Writes lay out
//   opcodes exactly as Redis does (split the covering opcode, then merge equal neighbouring
//   VALs), so the same elements give the same bytes.
//   The estimate is Otmar Ertl's improved estimator over the register histogram ("New
//   cardinality estimation algorithms for HyperLogLog sketches", 2017), as Redis 7.0 computes
//   it, operation for operation, so the numbers agree to the last digit.
//
//   Hostile values: the header is checked by HllIsValid; the sparse opcodes are checked where
//   they are read, and a sum of runs other than 16384 is corruption. Every read is bounded by
//   the string. Redis reads one byte past a sparse value whose last opcode is a cut XZERO (the
//   terminating NUL of its strings); the readers here read that byte as 0 too, so corrupt
//   values give Redis's answers rather than merely safe ones.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/types/span.h"

namespace dashkv {

inline constexpr size_t kHllHeaderSize = 16;
inline constexpr uint32_t kHllRegisters = 16384;  // 2^14
inline constexpr size_t kHllDenseSize = kHllHeaderSize + kHllRegisters * 6 / 8;  // 12304
inline constexpr uint8_t kHllSparseMaxValue = 32;  // the largest register a VAL opcode holds
inline constexpr uint64_t kHllHashSeed = 0xadc83b19ULL;

enum class HllEncoding : uint8_t { kDense = 0, kSparse = 1 };

// Registers one byte each, the form multi-key counts and merges work in.
using HllRegisters = std::array<uint8_t, kHllRegisters>;

// Returns MurmurHash64A (Austin Appleby's 64-bit hash for 64-bit platforms) of `data`, reading
// 8-byte blocks little endian on every platform, as Redis does.
uint64_t MurmurHash64A(std::string_view data, uint64_t seed);

// Where an element lands: its register and the count it offers that register (1..51).
struct HllPoint {
  uint32_t index;
  uint8_t count;
};
HllPoint HllHashElement(std::string_view element);

// Returns whether `s` passes Redis's HyperLogLog checks: at least a header, the magic, a known
// encoding, and exactly kHllDenseSize bytes when dense. Sparse opcodes are checked when read.
bool HllIsValid(std::string_view s);
// Returns the encoding. REQUIRES: HllIsValid(s).
inline HllEncoding HllEncodingOf(std::string_view s) {
  return static_cast<HllEncoding>(static_cast<uint8_t>(s[4]));
}

// Returns an empty HyperLogLog as Redis creates one: sparse, one XZERO over every register,
// cached cardinality 0 (18 bytes).
std::string HllNewSparse();

// Returns the cached cardinality, or nullopt when it is stale. REQUIRES: HllIsValid(s).
std::optional<uint64_t> HllCachedCardinality(std::string_view s);
// Stores `card` as the cached cardinality (bytes 8..15; a value with the top bit set reads as
// stale, as in Redis). REQUIRES: hll.size() >= kHllHeaderSize.
void HllStoreCardinality(absl::Span<char> hll, uint64_t card);
// Marks the cached cardinality stale. REQUIRES: hll.size() >= kHllHeaderSize.
void HllInvalidateCache(absl::Span<char> hll);

// Returns register `index` of a dense HyperLogLog. REQUIRES: a valid dense value, index <
// kHllRegisters.
uint8_t HllDenseGet(std::string_view hll, uint32_t index);
// Raises register `index` of a dense HyperLogLog to `count` when that is larger; returns
// whether it changed. Leaves the cache alone. REQUIRES: hll.size() == kHllDenseSize, index <
// kHllRegisters, count <= 63.
bool HllDenseSet(absl::Span<char> hll, uint32_t index, uint8_t count);

// The outcome of a write to a HyperLogLog.
enum class HllUpdate : uint8_t {
  kUnchanged,  // the register already held at least that count
  kChanged,    // the register grew (and the cache was marked stale)
  kCorrupt,    // the sparse opcodes do not cover the registers: nothing was written
};

// Raises register `index` to `count` when that is larger, in either encoding; a sparse value
// may turn dense (see Design; `sparse_max_bytes`: hll-sparse-max-bytes). Marks the cache stale
// when it changes something. REQUIRES: HllIsValid(*hll), index < kHllRegisters, count <= 63.
HllUpdate HllSet(std::string* hll, uint32_t index, uint8_t count, size_t sparse_max_bytes);
// Adds `element` (HllHashElement, then HllSet).
HllUpdate HllAdd(std::string* hll, std::string_view element, size_t sparse_max_bytes);

// Returns the dense form of a sparse HyperLogLog (the header copied, encoding set to dense),
// or nullopt when its opcodes are corrupt. REQUIRES: HllIsValid(sparse), sparse encoding.
std::optional<std::string> HllSparseToDense(std::string_view sparse);

// Raises each of `max`'s registers to the HyperLogLog's when that is larger; returns false when
// a sparse value is corrupt (`max` may then hold part of it). REQUIRES: HllIsValid(hll).
bool HllMergeInto(std::string_view hll, HllRegisters* max);

// Returns the estimated cardinality (ignoring the cache), or nullopt when a sparse value is
// corrupt. REQUIRES: HllIsValid(hll).
std::optional<uint64_t> HllCount(std::string_view hll);
// Returns the estimated cardinality of registers held one byte each.
uint64_t HllCountRegisters(const HllRegisters& registers);

// Returns the opcodes of a sparse value as PFDEBUG DECODE prints them ("Z:8436 v:1,1 z:3").
// REQUIRES: HllIsValid(sparse), sparse encoding.
std::string HllDecodeSparse(std::string_view sparse);

// Runs Redis's PFSELFTEST checks: dense registers keep the values written to them and leave
// their neighbours alone; dense and sparse agree and stay within a few standard errors of the
// true count at 1, 10, ... 10^7 elements (derived from `seed`). Returns "" on success, else
// the failure's error text ("TESTFAILED ..."). Takes seconds (10^7 additions).
std::string HllSelfTest(uint64_t seed, size_t sparse_max_bytes);

}  // namespace dashkv
