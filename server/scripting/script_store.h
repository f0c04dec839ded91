// ScriptStore: the server's script cache — every script body EVAL ran or SCRIPT LOAD loaded,
// by its SHA1 — shared by all threads. Each thread compiles a script once into its own Lua
// states (server/scripting/lua_interp.h) and asks the store only for a SHA it has not seen.
// SCRIPT FLUSH empties it and bumps the generation, which makes every thread drop its Lua
// states at its next script.
// Thread-safe: a mutex, taken by SCRIPT commands, INFO and a thread's first Find of a script
// (Find and FindByBody keep a per-thread cache checked against the generation).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include <absl/container/flat_hash_map.h>

namespace dashkv {

// The flags of a script's `#!lua flags=...` shebang line (Redis 7.0).
struct ScriptFlags {
  bool shebang = false;  // the script has a shebang line (then the flags below apply)
  bool no_writes = false;
  bool allow_oom = false;
  bool allow_stale = false;
  bool no_cluster = false;
  bool allow_cross_slot_keys = false;
};

// Sets the flag named `name` ("no-writes", "allow-oom", ...) in `flags`; false for a name that
// is not a script flag.
bool SetScriptFlag(std::string_view name, ScriptFlags* flags);

// Parses the shebang of `body`, if any, into `flags`; returns "" or Redis's error text
// ("Unexpected engine in script shebang: ...", "Unexpected flag in script shebang: ...").
std::string ParseShebang(std::string_view body, ScriptFlags* flags);

// How a script's runs lock (server/scripting/script_runner.h): its first run with declared
// keys locks every shard and learns whether it stays within them.
enum ScriptKeyMode : uint8_t {
  kKeysUnknown = 0,   // not run yet with declared keys
  kKeysDeclared = 1,  // its runs stayed within its declared keys' shards (or keys)
  kKeysGlobal = 2,    // a run went outside: its runs lock every shard
};

struct StoredScript {
  std::string sha;  // 40 lower-case hex digits
  std::string body;
  ScriptFlags flags;
  mutable std::atomic<uint8_t> key_mode{kKeysUnknown};  // ScriptKeyMode
};

class ScriptStore {
 public:
  // Returns the stored script with `sha` and `body` (adding it), or the error text of its
  // shebang. `sha` must be the SHA1 of `body`.
  std::shared_ptr<const StoredScript> Add(std::string_view sha, std::string_view body,
                                          std::string* error);
  // Returns the script with `sha` (any case), or nullptr.
  std::shared_ptr<const StoredScript> Find(std::string_view sha) const;
  // Returns the script whose body is `body`, or nullptr (EVAL: a thread that met the body
  // before finds it without computing its SHA1).
  std::shared_ptr<const StoredScript> FindByBody(std::string_view body) const;
  // Forgets every script; Lua states compiled before are dropped at their next use.
  void Flush();

  uint64_t generation() const { return generation_.load(std::memory_order_acquire); }
  size_t size() const;
  // Bytes held by the bodies (INFO used_memory_scripts_eval).
  size_t body_bytes() const;

  // Runs that had to take the whole keyspace because of undeclared keys (INFO).
  std::atomic<uint64_t> undeclared_runs{0};

 private:
  mutable std::mutex mu_;
  absl::flat_hash_map<std::string, std::shared_ptr<const StoredScript>> by_sha_;
  size_t body_bytes_ = 0;
  // Starts at a value no other store of this process used, so a per-thread cache left by a
  // destroyed store at the same address never matches this one.
  static uint64_t FirstGeneration();
  std::shared_ptr<const StoredScript> FindLocked(const std::string& lower_sha) const;
  std::atomic<uint64_t> generation_{FirstGeneration()};
};

}  // namespace dashkv
