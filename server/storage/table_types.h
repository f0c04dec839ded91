// The shard's keyspace index: a Dashtable of compact key objects to compact value objects.
// Thread: owned by the shard thread.
#pragma once

#include <string_view>

#include "core/compact_object.h"
#include "core/dash_table.h"
#include "core/hash.h"

namespace dashkv {

// Policy of the server's Dashtable: 56 regular + 4 stash buckets of 14 slots per segment, keys
// looked up as string views without building a key object.
struct PrimeTablePolicy : public DashPolicyBase {
  static constexpr bool kRelocateByMemcpy = true;  // CompactObj is trivially relocatable
  static uint64_t HashFn(const CompactObj& key) { return key.Hash(); }
  static uint64_t HashFn(std::string_view key) { return HashBytes(key); }
  static bool Equal(const CompactObj& a, const CompactObj& b) { return a == b; }
  static bool Equal(const CompactObj& key, std::string_view s) { return key.EqualsString(s); }
};

using PrimeTable = DashTable<CompactObj, CompactObj, PrimeTablePolicy>;
using PrimeIterator = PrimeTable::iterator;

}  // namespace dashkv
