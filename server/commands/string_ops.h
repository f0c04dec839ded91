// Helpers shared by the string and bitmap command families: storing string values with Redis's
// encodings, the expiry options of SET/GETEX/SETEX/PSETEX, index-range normalisation, and bit
// primitives over byte strings (SETBIT, BITCOUNT, BITPOS, BITFIELD).
// Thread: functions taking DbSlice/CompactObj run on the owning shard's thread; the rest are pure.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "server/cmd_args.h"
#include "server/cmd_context.h"
#include "server/db_slice.h"
#include "server/op_status.h"

namespace dashkv {

// Largest string value (Redis's default proto-max-bulk-len); bit offsets are limited to it too.
// TODO(h8): follow CONFIG SET proto-max-bulk-len once shard handlers can read the config.
inline constexpr int64_t kMaxStringBytes = 512LL * 1024 * 1024;

// Stores `s` in `value`: int-encoded when `s` is a canonical int64 (what Redis's
// tryObjectEncoding does for SET), else as a string.
void StoreString(CompactObj& value, std::string_view s);

// Returns a copy of the bytes of a string value (decimal text for int-encoded ones).
std::string CopyString(const CompactObj& value);

// Returns the string entry of `key`, adding an empty string when missing. kWrongType or
// kOutOfMemory otherwise. Invalidates iterators.
OpResult<DbSlice::AddResult> FindOrAddString(DbSlice& db, std::string_view key, int64_t now_ms);

// Sends the error text of `status`; kInvalidExpire names the running command.
void SendOpError(ShardCmdContext& ctx, OpStatus status);

// ---- Expiry options (SET, GETEX, SETEX, PSETEX)

enum class ExpireKind : uint8_t { kNone, kEx, kPx, kExAt, kPxAt, kKeepTtl, kPersist };

// One parsed expiry option; the number is validated later (Redis checks syntax first, then the
// key, then the value of the time).
struct ExpireSpec {
  ExpireKind kind = ExpireKind::kNone;
  std::string_view arg;  // the time argument of EX/PX/EXAT/PXAT
};

// Which word besides EX/PX/EXAT/PXAT a command accepts.
enum class ExpireExtra : uint8_t { kKeepTtl, kPersist };

// Consumes one expiry option at the parser's position and returns true; returns false (consuming
// nothing) when the next word is none of them. A second, different option (EX then PX, KEEPTTL
// then EX, ...) or a missing time records kSyntaxError; repeating the same option is allowed and
// the last time wins (Redis 7.0).
bool ParseExpireOption(ArgParser& parser, ExpireExtra extra, ExpireSpec* spec);

// Returns the absolute deadline in ms of an EX/PX/EXAT/PXAT spec, or 0 for the other kinds.
// Errors: kNotAnInteger (not an int64), kInvalidExpire (<= 0, or the deadline overflows).
OpResult<int64_t> ExpireDeadline(const ExpireSpec& spec, int64_t now_ms);

// Applies the expiry of a write to `it`: KEEPTTL keeps it, a deadline sets it, anything else
// clears it. A deadline already past erases the entry; returns false in that case (and `it` is
// then invalid).
bool ApplyExpire(DbSlice& db, PrimeIterator it, ExpireKind kind, int64_t deadline_ms,
                 int64_t now_ms);

// ---- Ranges

// Normalises the inclusive range [start, end] over `total` items as GETRANGE/BITCOUNT/BITPOS do
// (negative indexes count from the end, then clamp). Returns nullopt for an empty range. With
// `reject_negative_inversion`, start < 0 && end < 0 && start > end is empty before clamping
// (GETRANGE and BITCOUNT do this, BITPOS does not).
struct IndexRange {
  int64_t start;
  int64_t end;  // inclusive
};
std::optional<IndexRange> NormalizeRange(int64_t start, int64_t end, int64_t total,
                                         bool reject_negative_inversion);

// ---- Bits (bit 0 is the most significant bit of byte 0, as in Redis)

// Returns the bit at `offset` (0 beyond the end).
bool GetBitAt(std::string_view s, uint64_t offset);
// Sets the bit at `offset` to `on`, growing `s` with zero bytes; returns the previous bit.
bool SetBitAt(std::string& s, uint64_t offset, bool on);
// Returns the number of set bits in the inclusive bit range [first, last].
// REQUIRES: first <= last < 8 * s.size().
int64_t CountBits(std::string_view s, uint64_t first, uint64_t last);
// Returns the position of the first bit equal to `bit` in the inclusive bit range [first, last],
// or -1. REQUIRES: first <= last < 8 * s.size().
int64_t FindBit(std::string_view s, bool bit, uint64_t first, uint64_t last);
// Returns `bits` (1..64) bits starting at bit `offset` as an unsigned number (0 beyond the end).
uint64_t GetBitsAt(std::string_view s, uint64_t offset, unsigned bits);
// Writes the low `bits` (1..64) bits of `v` at bit `offset`. REQUIRES: the string is long enough.
void SetBitsAt(std::string& s, uint64_t offset, unsigned bits, uint64_t v);

// BITFIELD overflow policies.
enum class BitOverflow : uint8_t { kWrap, kSat, kFail };

// Fits the exact value `v` into a field of `bits` bits (signed or not) under `policy`: returns
// the value to store (sign-extended for signed fields), or nullopt when FAIL refuses it.
// REQUIRES: bits in 1..64 (signed) or 1..63 (unsigned).
std::optional<int64_t> FitBitfield(__int128 v, unsigned bits, bool is_signed, BitOverflow policy);

// ---- Floats (INCRBYFLOAT)

// Parses a long double by Redis's string2ld rules (no spaces, no NaN, no overflow/underflow).
std::optional<long double> ParseLongDoubleStrict(std::string_view s);
// Formats like Redis's ld2string(LD_STR_HUMAN): "%.17Lf" without trailing zeros ("-0" -> "0").
std::string FormatLongDoubleHuman(long double v);

}  // namespace dashkv
