// Zipmap: read-only decoding of Redis's pre-2.6 "zipmap" hash encoding (RDB type 9), which
// Redis 7.0 still loads. dashkv never stores zipmaps: the loader decodes them into hashes.
// Thread: pure functions.
#pragma once

#include <string_view>

#include "absl/functional/function_ref.h"

namespace dashkv {

// Design
//   <zmlen u8> { <len> <key> <len> <free u8> <value> <free bytes> }* <0xFF>
//   len: 1 byte (0..253), or 0xFE + u32 LE (a value's length byte 0xFF is read the same way,
//   as Redis reads it); 0xFF in a field's place is the end marker. zmlen counts the pairs unless
//   it is 254 ("count them").

// Checks untrusted zipmap bytes (every length, the free bytes, the pair count, the terminator
// as the last byte) and calls on_pair with every field and value in order; on_pair may reject
// a pair by returning false. Never reads outside `bytes`. Returns whether all held.
bool ValidateZipmap(std::string_view bytes,
                    absl::FunctionRef<bool(std::string_view field, std::string_view value)> on_pair);

}  // namespace dashkv
