// Shard-side list operations shared by the list commands (list_commands.cc) and the blocking
// list commands (blocking_commands.cc, server/tx/blocking.cc): lookups, the empty-list rule, and
// the single-shard move of LMOVE/BLMOVE.
// Thread: the shard thread that owns the keys.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "server/config.h"
#include "server/storage/db_slice.h"
#include "server/values/list_value.h"
#include "server/op_status.h"

namespace dashkv {

// Returns the list settings (list-max-listpack-size, list-compress-depth) of `config`.
ListValue::Options ListOptions(const Config& config);

// Returns the list at key (kKeyNotFound / kWrongType otherwise).
OpResult<ListValue*> FindList(DbSlice& db, std::string_view key, int64_t now_ms);

// Returns the list at key, creating an empty one when missing (kWrongType for another type).
// Invalidates iterators.
OpResult<ListValue*> FindOrAddList(DbSlice& db, std::string_view key, int64_t now_ms);

// After a write: deletes the key when its list became empty, else records the encoding.
void FinishListWrite(DbSlice& db, std::string_view key, int64_t now_ms);

// Parses LEFT|RIGHT (any case).
std::optional<ListEnd> ParseListEnd(std::string_view s);

// Pops one element from src and pushes it to dst (both on this shard); nullopt when src is
// missing; kWrongType when src or dst holds another type (nothing moves then).
OpResult<std::optional<std::string>> OpListMove(DbSlice& db, const Config& config,
                                                std::string_view src, std::string_view dst,
                                                ListEnd from, ListEnd to, int64_t now_ms);

}  // namespace dashkv
