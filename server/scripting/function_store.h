// FunctionStore: the server's function libraries (FUNCTION LOAD ... FCALL), shared by all
// threads. A library is its code and the functions its loading registered; each thread's Lua
// states load every library again when the store's generation changes
// (LuaInterp::SyncFunctions), so a function runs in the state of whichever thread runs it.
// Thread-safe: a mutex, taken by FUNCTION commands and a thread's first Find of a function
// (Find keeps a per-thread cache checked against the generation).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <absl/container/btree_map.h>
#include <absl/container/flat_hash_map.h>

#include "server/scripting/script_store.h"

namespace dashkv {

struct FunctionInfo {
  std::string name;
  std::optional<std::string> description;
  ScriptFlags flags;  // no-writes, allow-oom, ... (always in force, as a shebang's)
  std::string library;
  mutable std::atomic<uint8_t> key_mode{kKeysUnknown};  // ScriptKeyMode (script_store.h)
};

struct FunctionLibrary {
  std::string name;
  std::string code;
  std::vector<std::shared_ptr<const FunctionInfo>> functions;  // in registration order
};

// Parses a library's first line ("#!lua name=<name>"); returns "" or Redis's error text.
std::string ParseLibraryMetadata(std::string_view code, std::string* name);
// Returns whether `name` is a valid library or function name (letters, digits, '_').
bool ValidFunctionName(std::string_view name);

class FunctionStore {
 public:
  // Adds `lib` (its functions already registered by a Lua state), replacing a library of the
  // same name when `replace`; returns "" or Redis's error text.
  std::string Add(std::shared_ptr<FunctionLibrary> lib, bool replace);
  // Removes a library; false when there is none by that name.
  bool Delete(std::string_view name);
  void Flush();
  // Restores `libs` (FUNCTION RESTORE, loading): policy FLUSH / APPEND / REPLACE.
  enum class RestorePolicy { kFlush, kAppend, kReplace };
  std::string Restore(std::vector<std::shared_ptr<FunctionLibrary>> libs, RestorePolicy policy);

  std::shared_ptr<const FunctionInfo> Find(std::string_view function) const;
  // Every library, by name.
  std::vector<std::shared_ptr<const FunctionLibrary>> Libraries() const;
  size_t num_functions() const;

  uint64_t generation() const { return generation_.load(std::memory_order_acquire); }

 private:
  // REQUIRES: mu_ held. Returns "" or the error of adding `lib` to `libs`/`fns`.
  static std::string AddLocked(
      absl::btree_map<std::string, std::shared_ptr<const FunctionLibrary>>& libs,
      absl::flat_hash_map<std::string, std::shared_ptr<const FunctionInfo>>& fns,
      std::shared_ptr<FunctionLibrary> lib, bool replace);

  mutable std::mutex mu_;
  absl::btree_map<std::string, std::shared_ptr<const FunctionLibrary>> libs_;
  absl::flat_hash_map<std::string, std::shared_ptr<const FunctionInfo>> functions_;
  // Starts at a value no other store of this process used, so a per-thread cache left by a
  // destroyed store at the same address never matches this one.
  static uint64_t FirstGeneration();
  std::atomic<uint64_t> generation_{FirstGeneration()};
};

}  // namespace dashkv
