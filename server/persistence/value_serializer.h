// Writes a key's value in the RDB v10 object encoding Redis 7.0 writes (the part of an RDB
// entry after the key, and the body of a DUMP payload), for every value type dashkv has.
// Thread: runs on the thread that owns the value; the value must not change during the call.
#pragma once

#include <cstdint>

#include "core/compact_object.h"
#include "server/persistence/rdb_sink.h"

namespace dashkv {

// Design
//   string   type 0: an integer encoding when Redis would use one, else LZF or raw.
//   list     type 18 (quicklist 2): every node a packed listpack, as the value holds it (a
//            listpack-encoded list is one node).
//   hash     type 16 (its listpack, verbatim) or type 4 (field/value strings).
//   set      type 11 (its intset, verbatim) or type 2 (member strings): Redis 7.0 has no set
//            listpack (type 20 is 7.2's), so a listpack-encoded set goes out as type 2.
//   zset     type 17 (its listpack, verbatim) or type 5 (member, binary double; highest score
//            first, as Redis writes it so that loading appends).
//   stream   type 19: its listpack nodes verbatim (the value keeps Redis's node format).
//   Listpacks and intsets are byte-compatible with Redis's (core/listpack.h, core/int_set.h).
//   Strings and blobs longer than kRdbPieceSize are written raw in pieces of that size, with a
//   MaybeFlush() between pieces; collections call MaybeFlush() between elements.

// Strings up to this size are written whole (and may be LZF-compressed); longer ones raw, in
// pieces of this size.
inline constexpr size_t kRdbPieceSize = 64 * 1024;

struct RdbWriteOptions {
  bool compress = true;  // rdbcompression: LZF for strings longer than 20 bytes
};

// Returns the RDB type byte WriteRdbValue writes first for `value`.
uint8_t RdbTypeOf(const CompactObj& value);

// Appends the type byte and the value to `sink`.
void WriteRdbValue(const CompactObj& value, const RdbWriteOptions& opts, RdbSink& sink);
// Appends the value without its type byte (an RDB file entry has the key in between). Calls
// MaybeFlush() only inside the value (between elements and pieces), never after its end.
void WriteRdbValueBody(const CompactObj& value, const RdbWriteOptions& opts, RdbSink& sink);

}  // namespace dashkv
