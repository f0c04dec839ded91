// Checks a listpack read from an RDB payload the way Redis 7.0 does (lpValidateIntegrity with
// deep validation), so that RESTORE accepts exactly the listpacks Redis accepts.
// Thread: pure function.
#pragma once

#include <string_view>

#include "absl/functional/function_ref.h"
#include "core/listpack.h"

namespace dashkv {

// Design
//   Redis decodes an entry's backlen backwards from its last byte and compares the value with
//   the entry's size; it does not require the canonical encoding (a one-byte backlen 0x81 after
//   a 0x00 byte decodes to 1 as well). core/listpack's own Validate requires canonical
//   backlens, because a dashkv listpack must walk backwards by them. Bytes accepted here may
//   therefore not be adopted as a dashkv listpack: the loader re-encodes their elements.

// Returns whether `bytes` is a listpack Redis 7.0 accepts with deep validation (header size,
// terminator, every entry's encoding, bounds and backlen value, the element count), calling
// on_entry with every element in order; on_entry may reject one by returning false. Never
// reads outside `bytes`.
bool CheckRdbListpack(std::string_view bytes, absl::FunctionRef<bool(ListpackValue)> on_entry);

}  // namespace dashkv
