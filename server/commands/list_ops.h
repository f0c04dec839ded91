// Shard-side list operations shared by the list commands (list_commands.cc) and the blocking
// list commands (blocking_commands.cc, blocking_ops.cc): read-only and mutable lookups, the
// empty-list rule, pops with their keyspace events, and the single-shard move of LMOVE/BLMOVE.
// Thread: the shard thread that owns the keys.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "server/config.h"
#include "server/storage/db_slice.h"
#include "server/values/list_value.h"
#include "server/op_status.h"

namespace dashkv {

// Returns the list settings (list-max-listpack-size, list-compress-depth) of `config`.
ListValue::Options ListOptions(const Config& config);

// Returns the list at key for reading (kKeyNotFound / kWrongType otherwise).
OpResult<const ListValue*> FindList(DbSlice& db, std::string_view key, int64_t now_ms);

// Returns the entry of the list at key for changing (kKeyNotFound / kWrongType otherwise).
OpResult<PrimeIterator> FindMutableList(DbSlice& db, std::string_view key, int64_t now_ms);

// Returns the entry of the list at key for changing, creating an empty list when missing
// (kWrongType for another type). Invalidates iterators.
OpResult<PrimeIterator> FindOrAddList(DbSlice& db, std::string_view key, int64_t now_ms);

// After a write to the list at `it` (a mutable lookup of `key`): deletes the key when its list
// became empty (raising `del`), else records the encoding. Returns whether it deleted the key.
// Invalidates iterators when it deletes.
bool FinishListWrite(DbSlice& db, PrimeIterator it, std::string_view key);

// The keyspace events of a push to / a pop from end `end`: "lpush" / "rpush", "lpop" / "rpop".
std::string_view PushEvent(ListEnd end);
std::string_view PopEvent(ListEnd end);

// Pops up to `count` elements from end `end` of the list at `it` (a mutable lookup of `key`),
// raises the pop event (and `del` when the list empties, deleting it), as Redis's LPOP/RPOP.
// REQUIRES: count > 0.
std::vector<std::string> OpListPop(DbSlice& db, PrimeIterator it, std::string_view key,
                                   ListEnd end, size_t count, const ListValue::Options& opts);

// Parses LEFT|RIGHT (any case).
std::optional<ListEnd> ParseListEnd(std::string_view s);

// Pops one element from src and pushes it to dst (both on this shard), raising Redis's events
// in its order: the destination's push (after `new` when created), the source's pop, `del` when
// the source empties. nullopt when src is missing; kWrongType when src or dst holds another type
// (nothing moves then).
OpResult<std::optional<std::string>> OpListMove(DbSlice& db, const Config& config,
                                                std::string_view src, std::string_view dst,
                                                ListEnd from, ListEnd to, int64_t now_ms);

}  // namespace dashkv
