// Bit and byte-range operations on string values with Redis 7.0 semantics: GETBIT/SETBIT,
// BITCOUNT, BITPOS, BITFIELD, BITOP, GETRANGE, SETRANGE, and the argument parsers and limits that
// go with them. Bits are numbered big-endian: bit 0 is the most significant bit of byte 0.
// Thread: pure functions over the caller's buffers, safe from any thread.
//
// Design
//   Reads past the end of a string see zero bits (Redis treats strings as zero-padded); writes
//   grow the string with zero bytes as needed. Range commands normalize their indexes exactly as
//   Redis 7.0 does (negative indexes count from the end, clamping, empty ranges); each command
//   has its own small differences, documented per function. Counting and searching work a
//   64-bit word at a time (POPCNT is available with -march=x86-64-v2); BitOp combines 8 bytes at
//   a time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace dashkv {

// Redis's proto-max-bulk-len default (512 MB): the largest string a command may create, and
// (times 8) the bit offset limit of SETBIT/GETBIT/BITFIELD.
inline constexpr uint64_t kProtoMaxBulkLen = 512ULL * 1024 * 1024;

// Outcomes of the argument checks below; the server maps them to Redis's reply texts
// (server/op_status.h).
enum class StringOpError : uint8_t {
  kOk,
  kBitOffset,         // SETBIT/GETBIT/BITFIELD offset not an integer, negative or too large
  kBitValue,          // SETBIT value other than 0 or 1
  kBitposBit,         // BITPOS bit argument other than 0 or 1 (but an integer)
  kBitfieldType,      // BITFIELD type other than i1..i64 / u1..u63
  kBitfieldOverflow,  // BITFIELD OVERFLOW argument other than WRAP/SAT/FAIL
  kOffsetOutOfRange,  // SETRANGE negative offset
  kTooLong,           // result would exceed proto-max-bulk-len
};

// Whether a range argument counts bytes (the default) or bits (Redis 7 BIT option).
enum class BitUnit { kByte, kBit };

// ----- GETBIT / SETBIT -----

// Parses a SETBIT/GETBIT offset: a strict int64 (see ParseInt64) in [0, max_bytes * 8).
// Returns nullopt on error (StringOpError::kBitOffset).
std::optional<uint64_t> ParseBitOffset(std::string_view arg, uint64_t max_bytes = kProtoMaxBulkLen);

// Returns the bit (0 or 1) at `offset`; 0 past the end of `s`.
int GetBit(std::string_view s, uint64_t offset);

// Sets the bit at `offset` to `bit`, growing `s` with zero bytes to cover it; returns the old bit.
// REQUIRES: bit is 0 or 1; offset within the caller's limit (ParseBitOffset).
int SetBit(std::string& s, uint64_t offset, int bit);

// Grows `s` with zero bytes so that it covers bit `offset` (no-op if it already does).
void GrowForBit(std::string& s, uint64_t offset);

// ----- BITCOUNT / BITPOS -----

// Returns the number of set bits in `s`.
uint64_t BitCount(std::string_view s);

// Returns the number of set bits in the inclusive range [start, end] of `s` (BITCOUNT key start
// end [BYTE|BIT]): if both are negative and start > end the answer is 0; negative indexes count
// from the end and are then clamped at 0; end is clamped to the last unit; start > end gives 0.
uint64_t BitCount(std::string_view s, int64_t start, int64_t end, BitUnit unit = BitUnit::kByte);

// Returns the position (in bits, from the start of `s`) of the first bit equal to `bit` within
// the range (BITPOS key bit [start [end [BYTE|BIT]]]), or -1. Indexes normalize like BitCount,
// but without its "both negative and start > end" shortcut. An empty range gives -1. When no
// bit 0 is found and no `end` was given, the answer is the first bit past the range (Redis
// treats the string as zero-padded); with an explicit end it is -1. For a missing key Redis
// answers 0 for bit 0 and -1 for bit 1 without calling this.
// REQUIRES: bit is 0 or 1.
int64_t BitPos(std::string_view s, int bit, int64_t start = 0,
               std::optional<int64_t> end = std::nullopt, BitUnit unit = BitUnit::kByte);

// ----- BITFIELD -----

// A BITFIELD integer type: i1..i64 or u1..u63.
struct BitfieldType {
  bool is_signed;
  uint8_t bits;
};

// What BITFIELD SET/INCRBY do when the result does not fit the type.
enum class BitfieldOverflow { kWrap, kSat, kFail };

// Parses a BITFIELD type ("i8", "u63"; lowercase only, as Redis). Returns nullopt on error
// (StringOpError::kBitfieldType).
std::optional<BitfieldType> ParseBitfieldType(std::string_view arg);

// Parses a BITFIELD offset: a plain bit offset, or "#N" meaning N * type.bits. Same limits as
// ParseBitOffset; like Redis, the "#N" product wraps around 64 bits before the range check.
// Returns nullopt on error (StringOpError::kBitOffset).
std::optional<uint64_t> ParseBitfieldOffset(std::string_view arg, BitfieldType type,
                                            uint64_t max_bytes = kProtoMaxBulkLen);

// Parses a BITFIELD OVERFLOW argument (WRAP, SAT, FAIL; any case). Returns nullopt on error
// (StringOpError::kBitfieldOverflow).
std::optional<BitfieldOverflow> ParseBitfieldOverflow(std::string_view arg);

// Returns the field of `type` at bit `offset` (zero bits past the end of `s`), sign-extended
// for signed types.
int64_t BitfieldGet(std::string_view s, uint64_t offset, BitfieldType type);

// Writes `value` into the field of `type` at bit `offset` and returns the field's old value.
// A value that does not fit is wrapped (kWrap), clamped (kSat) or refused (kFail: returns
// nullopt, `s` unchanged). Like Redis, an unsigned field takes `value` as uint64_t (so -1 is
// 2^64-1: wraps to all ones, saturates to the maximum), and a signed field saturates to its
// *maximum* for values within 2^63 - max of INT64_MIN (Redis's check wraps there).
// Grows `s` as needed. Note: Redis grows the string to the highest offset any write operation
// of a BITFIELD command names, even one that fails; the caller does that with GrowForBit.
std::optional<int64_t> BitfieldSet(std::string& s, uint64_t offset, BitfieldType type,
                                   int64_t value, BitfieldOverflow overflow);

// Adds `incr` to the field of `type` at bit `offset` and returns the new value; overflow is
// handled as in BitfieldSet (kFail: nullopt, `s` unchanged). Grows `s` as needed.
std::optional<int64_t> BitfieldIncrBy(std::string& s, uint64_t offset, BitfieldType type,
                                      int64_t incr, BitfieldOverflow overflow);

// ----- BITOP -----

enum class BitOpKind { kAnd, kOr, kXor, kNot };

// Returns the BITOP result over `srcs`: as long as the longest source, shorter sources
// zero-padded (a missing key is an empty source). kNot complements its single source.
// REQUIRES: kind != kNot || srcs.size() == 1.
std::string BitOp(BitOpKind kind, std::span<const std::string_view> srcs);

// ----- GETRANGE / SETRANGE / size limit -----

// Returns the GETRANGE key start end slice of `s` (Redis 7.0: if both are negative and
// start > end the slice is empty; negative indexes count from the end and clamp at 0, so
// GETRANGE "Hello" 0 -100 is "H"; end clamps to the last byte; start > end gives "").
std::string_view GetRange(std::string_view s, int64_t start, int64_t end);

// Checks the arguments of SETRANGE key offset value for a string: kOffsetOutOfRange for a
// negative offset, kOk for an empty value (Redis then only replies the current length), and
// kTooLong if offset + value_len exceeds max_len.
StringOpError CheckSetRange(int64_t offset, size_t value_len, uint64_t max_len = kProtoMaxBulkLen);

// Returns kTooLong if a string of `size` bytes grown by `append` bytes would exceed max_len
// (APPEND, SETRANGE), else kOk.
StringOpError CheckStringLength(uint64_t size, uint64_t append,
                                uint64_t max_len = kProtoMaxBulkLen);

// Overwrites `s` from byte `offset` with `value`, zero-padding any gap; an empty value changes
// nothing. Returns the new length of `s`.
// REQUIRES: CheckSetRange(offset, value.size()) == StringOpError::kOk.
size_t SetRange(std::string& s, uint64_t offset, std::string_view value);

}  // namespace dashkv
