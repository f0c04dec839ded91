// Helpers shared by the string and bitmap command families: storing string values with Redis's
// encodings, error replies, and the expiry options of SET/GETEX/SETEX/PSETEX. The byte and bit
// algorithms themselves live in core/bitops.h and core/numbers.h.
// Thread: functions taking DbSlice/CompactObj run on the owning shard's thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/bitops.h"
#include "server/cmd_args.h"
#include "server/cmd_context.h"
#include "server/storage/db_slice.h"
#include "server/op_status.h"

namespace dashkv {

// Stores `s` in `value`: int-encoded when `s` is a canonical int64 (what Redis's
// tryObjectEncoding does for SET), else as a string.
void StoreString(CompactObj& value, std::string_view s);

// Returns a copy of the bytes of a string value (decimal text for int-encoded ones).
std::string CopyString(const CompactObj& value);

// Returns the string entry of `key` for changing (a mutable lookup), adding an empty string when
// missing (the `new` event). kWrongType (nothing queued) or kOutOfMemory otherwise. Invalidates
// iterators.
OpResult<DbSlice::AddResult> FindOrAddString(DbSlice& db, std::string_view key, int64_t now_ms);

// Sends the error text of `status`; kInvalidExpire names the running command.
void SendOpError(ShardCmdContext& ctx, OpStatus status);
// Sends the error text of a core/bitops.h argument check. REQUIRES: e != StringOpError::kOk.
void SendOpError(ShardCmdContext& ctx, StringOpError e);

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

// Returns whether `kind` names a deadline (EX, PX, EXAT, PXAT).
inline bool HasDeadline(ExpireKind kind) {
  return kind == ExpireKind::kEx || kind == ExpireKind::kPx || kind == ExpireKind::kExAt ||
         kind == ExpireKind::kPxAt;
}

// Applies the expiry of a write to `it`: KEEPTTL keeps it, a deadline sets it, anything else
// clears it. A deadline already past is stored as it is: the key then expires on its next
// access or in the active cycle (the `expired` event), as after Redis's SET ... PXAT.
// REQUIRES: `it` came from a mutable lookup.
void ApplyExpire(DbSlice& db, PrimeIterator it, ExpireKind kind, int64_t deadline_ms);

}  // namespace dashkv
