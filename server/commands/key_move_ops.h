// Shard-side operations that move or copy whole keys (value and deadline) between keys and
// databases: the building blocks of RENAME, RENAMENX, COPY and MOVE, for both their one-shard
// form and the hops of their cross-shard form.
// Thread: every function runs on the thread of the shard that owns the DbSlices it is given.
#pragma once

#include <cstdint>
#include <string_view>

#include "core/compact_object.h"
#include "server/storage/db_slice.h"
#include "server/op_status.h"

namespace dashkv {

// A key's value and deadline detached from any table: what travels between shards. The value
// owns all its memory (a deep copy), so it may be moved to another shard's thread.
struct DetachedEntry {
  CompactObj value;
  int64_t deadline_ms = 0;  // absolute, 0 for none
};

// What a store does when the destination key exists.
enum class IfExists : uint8_t { kReplace, kSkip };

// How the source of a copy is looked up, as the Redis command looks it up.
enum class SourceLookup : uint8_t {
  kRead,   // a read: a keyspace hit or miss, `keymiss` on a miss (COPY)
  kWrite,  // a write command's lookup: no statistics, no event (RENAME)
};

// Returns a deep copy of the live entry of `key` (CloneValue + deadline); kKeyNotFound when it
// is missing. Changes nothing (a read-only lookup).
OpResult<DetachedEntry> OpCopyOut(DbSlice& db, std::string_view key, SourceLookup lookup,
                                  int64_t now_ms);

// Stores `entry` at `key` (the `new` event), or returns kSkipped when `key` exists (kSkip). With
// kReplace an existing destination of any type is erased first (reason kOverwritten) and the key
// added anew, as Redis's delete-then-add. kOutOfMemory if the table may not grow. Invalidates
// iterators.
OpStatus OpStoreEntry(DbSlice& db, std::string_view key, DetachedEntry entry, IfExists mode,
                      int64_t now_ms);

// Moves the entry of `src_key` in `src` to `dst_key` in `dst` without copying the value; `src`
// and `dst` are databases of the same shard (possibly the same one). The destination is added
// anew as by OpStoreEntry (`new`); the source is erased (reason kDeleted). Raises no command
// event: the caller raises rename_from/rename_to or move_from/move_to. Returns kKeyNotFound (no
// source), kSkipped (destination exists and mode is kSkip) or kOutOfMemory; nothing changes
// then. REQUIRES: not the same key in the same database. Invalidates iterators.
OpStatus OpMoveEntry(DbSlice& src, std::string_view src_key, DbSlice& dst,
                     std::string_view dst_key, IfExists mode, int64_t now_ms);

}  // namespace dashkv
