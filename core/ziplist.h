// Ziplist: read-only decoding of Redis's pre-7.0 "ziplist" encoding, which old RDB files and
// DUMP payloads still carry (list, hash and zset ziplists, quicklist v1 nodes). dashkv never
// stores ziplists: the loader decodes them into its own values.
// Thread: pure functions.
#pragma once

#include <string_view>

#include "absl/functional/function_ref.h"
#include "core/listpack.h"

namespace dashkv {

// Design
//   <zlbytes u32 LE> <zltail u32 LE> <zllen u16 LE> <entry>* <0xFF>
//   entry = <prevlen> <encoding> <data>
//     prevlen: 1 byte (< 254), or 0xFE + u32 LE: the byte size of the previous entry.
//     encoding: 00LLLLLL string (6-bit len), 01LLLLLL LLLLLLLL string (14-bit len, big-endian),
//     10xxxxxx + u32 BE string, 0xC0 int16, 0xD0 int32, 0xE0 int64, 0xF0 int24, 0xFE int8
//     (all little-endian), 0xF1..0xFD immediate 0..12.
//   zltail is the offset of the last entry (Redis writes the header size, 10, when empty, and
//   accepts any offset inside the ziplist then); zllen is the entry count unless saturated at
//   65535.

// Checks untrusted ziplist bytes deeply (header, every entry's bounds, prevlen and encoding,
// zltail, count, terminator) and calls on_entry with every element in order; on_entry may
// reject an element by returning false. Never reads outside `bytes`. Returns whether all held.
bool ValidateZiplist(std::string_view bytes, absl::FunctionRef<bool(ListpackValue)> on_entry);

}  // namespace dashkv
