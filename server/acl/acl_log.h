// AclLog: the ACL LOG — recent denials (commands, keys, channels) and failed AUTHs, newest
// first, bounded by acllog-max-len. A denial like one logged less than 60 s before (same reason,
// context, object and user) bumps that entry's count instead of adding one, as Redis 7.0 does.
// Thread-safe: an absl::Mutex guards the entries (written only on denials, never on the hot
// path).
#pragma once

#include <absl/base/thread_annotations.h>
#include <absl/synchronization/mutex.h>

#include <cstdint>
#include <deque>
#include <string>
#include <vector>

namespace dashkv {

// Why a command was refused; the order is Redis's (the greatest is reported when no selector
// allows a command).
enum class AclDenied : uint8_t { kOk = 0, kCommand = 1, kKey = 2, kAuth = 3, kChannel = 4 };
// Where the refused command was called.
enum class AclContext : uint8_t { kToplevel, kMulti, kLua };

struct AclLogEntry {
  uint64_t count = 1;
  AclDenied reason = AclDenied::kCommand;
  AclContext context = AclContext::kToplevel;
  std::string object;    // the command, key or channel; "auth" for a failed AUTH
  std::string username;
  int64_t updated_ms = 0;
  std::string client_info;  // the CLIENT LIST line of the client, at the last denial
};

// Returns Redis's names: "command", "key", "auth", "channel"; "toplevel", "multi", "lua".
std::string_view AclReasonName(AclDenied reason);
std::string_view AclContextName(AclContext context);

class AclLog {
 public:
  // Adds `entry` (or merges it into a like one), then drops the oldest entries past `max_len`.
  void Add(AclLogEntry entry, size_t max_len);
  // Returns the newest `count` entries, newest first.
  std::vector<AclLogEntry> Newest(size_t count) const;
  void Reset();
  size_t size() const;

  // Repeats within this many milliseconds are merged.
  static constexpr int64_t kMergeWindowMs = 60000;

 private:
  mutable absl::Mutex mu_;
  std::deque<AclLogEntry> entries_ ABSL_GUARDED_BY(mu_);  // newest first
};

}  // namespace dashkv
