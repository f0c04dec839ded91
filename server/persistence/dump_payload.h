// The DUMP payload: a value in its RDB object encoding, then the RDB version (u16 LE) and a
// CRC64 (u64 LE) of everything before the CRC, as Redis 7.0's DUMP and RESTORE use it.
// Thread: runs on the thread that owns the value (dump) or will own it (decode).
#pragma once

#include <absl/status/statusor.h>

#include <string>
#include <string_view>

#include "core/compact_object.h"
#include "server/persistence/value_loader.h"
#include "server/persistence/value_serializer.h"

namespace dashkv {

// Size of the version and CRC footer.
inline constexpr size_t kDumpFooterSize = 10;

// Appends the footer (RDB version, then the CRC64 of everything in `out` before it).
void AppendDumpFooter(std::string* out);

// Returns the DUMP payload of `value`.
std::string MakeDumpPayload(const CompactObj& value, const RdbWriteOptions& opts);

// Returns whether the payload's footer is acceptable, as Redis's verifyDumpPayload: at least
// 10 bytes, an RDB version of at most kRdbVersion, and a matching CRC.
bool VerifyDumpPayload(std::string_view payload);

// Decodes the value of a verified payload. Like Redis, it reads from the whole payload, footer
// included, and ignores the bytes after the value. Errors as ReadRdbObject.
absl::StatusOr<CompactObj> DecodeDumpPayload(std::string_view payload, const ValueLimits& limits);

}  // namespace dashkv
