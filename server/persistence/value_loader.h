// Reads a value in any RDB object encoding Redis 7.0 can load for the types dashkv has
// (strings, lists, hashes, sets, sorted sets, including the older ziplist, zipmap, quicklist v1
// and linked-list forms) from untrusted bytes, validating it deeply, and builds dashkv's value.
// Thread: runs on the thread that will own the value (it is built with that thread's heap).
#pragma once

#include <absl/status/status.h>
#include <absl/status/statusor.h>

#include <cstdint>

#include "core/compact_object.h"
#include "core/rdb_encoding.h"
#include "server/values/hash_value.h"
#include "server/values/list_value.h"
#include "server/values/set_value.h"
#include "server/values/zset_value.h"

namespace dashkv {

class Config;

// Design
//   Validation is always deep (what Redis does with sanitize-dump-payload yes): every listpack,
//   ziplist, zipmap and intset entry is checked, duplicate set members, hash fields and zset
//   members are refused, NaN scores are refused (a listpack's text score is read as Redis
//   reads it: strtod of its leading number), and every length is checked
//   against the bytes left before anything is reserved (RdbReader). A value is rebuilt through
//   the value types' own inserts, so it takes the encoding dashkv's thresholds pick for it (as
//   Redis converts a loaded listpack that is over its limits).
//   An empty collection is refused with kEmptyValue (Redis: RESTORE fails, a file load skips
//   the key). Module values are refused with Unimplemented; types
//   Redis 7.0 does not know (8, 20, 21, ...) are corrupt data.

// The encoding thresholds a loaded value is built with.
struct ValueLimits {
  ListValue::Options list;
  HashValue::Limits hash;
  SetLimits set;
  ZsetLimits zset;

  // Reads the current thresholds from the config (relaxed atomics).
  static ValueLimits From(const Config& config);
};

// Returns whether `status` is the loader's "the value is an empty collection".
bool IsEmptyValue(const absl::Status& status);

// Reads a type byte and the value that follows it. Errors: DataLoss (corrupt input),
// FailedPrecondition (empty collection, see IsEmptyValue), Unimplemented (a stream or module).
absl::StatusOr<CompactObj> ReadRdbObject(RdbReader& reader, const ValueLimits& limits);

// Reads a value of RDB type `type` (the type byte already read). Errors as ReadRdbObject.
absl::StatusOr<CompactObj> ReadRdbValue(uint8_t type, RdbReader& reader, const ValueLimits& limits);

}  // namespace dashkv
