// CloneValue: deep copy of a value of any type (string, list, hash, set, sorted set) in the same
// encoding, for COPY and for values that move between shards (RENAME across shards).
// Thread: runs on the thread that owns `value`; the copy owns all its memory and may be moved to
// (and destroyed on) another shard's thread.
#pragma once

#include "core/compact_object.h"

namespace dashkv {

// Returns a deep copy of `value`: same type, same encoding (OBJECT ENCODING answers the same),
// no memory shared with `value`. O(size of the value).
CompactObj CloneValue(const CompactObj& value);

}  // namespace dashkv
