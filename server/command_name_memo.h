// CommandNameMemo: a caller's memo of its last command name lookup
// (CommandRegistry::Find(name, memo)), kept per connection.
// Thread: owned by its connection's thread.
#pragma once

#include <cstddef>
#include <cstdint>

namespace dashkv {

struct CommandSpec;

// A caller's memo of its last command name lookup (CommandRegistry::Find(name, memo)). A
// pipeline repeats one name in the same spelling, so the next lookup is a compare of the bytes
// as sent instead of lowering and hashing them (measured: the hash lookup was ~7% of the
// instructions of a GET at pipeline 30). The registry does not change once clients are served,
// so a memo never goes stale; unknown names are memoized too.
struct CommandNameMemo {
  static constexpr size_t kMaxName = 16;  // longer names are looked up every time
  uint8_t len = 0;                        // bytes of `name`
  char name[kMaxName] = {};
  const CommandSpec* spec = nullptr;  // Find(name): nullptr for an unknown name
};

}  // namespace dashkv
