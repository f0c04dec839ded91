// AclRegistry: the server's ACL users by name, the ACL LOG, and the ACL file. Connections hold
// the user they authenticated as (an immutable snapshot) and take a fresh one when the
// registry's generation changes, so checking a command never takes a lock.
// Thread-safe: an absl::Mutex guards the users; generation() is an atomic read.
//
// Design
//   A change (ACL SETUSER, DELUSER, LOAD, requirepass) builds new AclUser values, swaps them
//   into the map under the mutex and bumps the generation. A connection compares its remembered
//   generation once per batch (and after each command that ran on its thread) and, when it
//   differs, looks its user up again by name.
#pragma once

#include <absl/base/thread_annotations.h>
#include <absl/container/btree_map.h>
#include <absl/status/status.h>
#include <absl/synchronization/mutex.h>

#include <atomic>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "server/acl/acl_log.h"
#include "server/acl/acl_user.h"

namespace dashkv {

class CommandRegistry;

using AclUserPtr = std::shared_ptr<const AclUser>;

class AclRegistry {
 public:
  // `auth_required` is kept equal to "the default user needs a password" (io/client_limits.h);
  // `all_channels_default` is acl-pubsub-default (AclRules).
  AclRegistry(const CommandRegistry& registry, std::atomic<bool>* auth_required,
              const std::atomic<bool>* all_channels_default = nullptr);

  const AclRules& rules() const { return rules_; }
  uint64_t generation() const { return generation_.load(std::memory_order_acquire); }

  // Returns the user named `name`, or nullptr.
  AclUserPtr Find(std::string_view name) const;
  AclUserPtr default_user() const { return Find("default"); }
  // Returns the user that `name` and `password` open, or nullptr (no such user, disabled,
  // wrong password).
  AclUserPtr Authenticate(std::string_view name, std::string_view password) const;

  // ACL SETUSER: creates or changes `name` by `ops`, atomically; returns "" or Redis's error
  // text (without "ERR "). `before`/`after` get the old (nullptr if new) and new user.
  std::string SetUser(std::string_view name, std::span<const std::string_view> ops,
                      AclUserPtr* before = nullptr, AclUserPtr* after = nullptr);
  // ACL DELUSER: removes the users among `names`; returns their names.
  std::vector<std::string> DelUsers(std::span<const std::string_view> names);
  // Returns every user, ordered by name.
  std::vector<AclUserPtr> Users() const;

  // requirepass: the default user gets exactly that password (or nopass when empty).
  void SetDefaultPassword(std::string_view password);

  // Applies one config-file line "user <name> <rules...>" (the words already split); users
  // given this way are defined once ("default" is reset first). Returns an error naming the
  // problem, as Redis refuses to start.
  absl::Status LoadUserLine(std::span<const std::string_view> words);

  // ACL LOAD / start-up: replaces every user by those of the ACL file `path` (the default user
  // keeps existing: "user default" lines change it, else it is reset to its defaults). Nothing
  // changes on error; the error text is Redis's. Returns the names of the users replaced or
  // removed (their connections are to be closed, as Redis 7.0 does).
  absl::Status LoadFile(const std::string& path, std::vector<std::string>* replaced = nullptr);
  // ACL SAVE: writes every user to `path` (a temporary file renamed over it).
  absl::Status SaveFile(const std::string& path) const;

  AclLog& log() { return log_; }

 private:
  void Publish(AclUserPtr user) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void UpdateAuthRequired() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  AclRules rules_;
  std::atomic<bool>* auth_required_;
  mutable absl::Mutex mu_;
  absl::btree_map<std::string, AclUserPtr, std::less<>> users_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> config_users_ ABSL_GUARDED_BY(mu_);  // defined by LoadUserLine
  std::atomic<uint64_t> generation_{1};
  AclLog log_;
};

}  // namespace dashkv
