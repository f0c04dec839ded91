// AclUser: one ACL user as Redis 7.0 defines it — on/off, password digests, a root selector and
// further selectors, each allowing commands (a bit per CommandSpec::id), key patterns with
// read/write permissions and channel patterns — and the ACL SETUSER rules that change it.
// Thread: a user under construction is owned by one thread; published users are immutable
// (shared through std::shared_ptr<const AclUser>, server/acl/acl_registry.h).
//
// Design
//   Commands: a bitset indexed by CommandSpec::id, subcommands included. "+cmd" sets a command's
//   bit and its subcommands', "+cmd|sub" one subcommand's, "+@cat" every command and subcommand
//   listing the category; "+cmd|arg" on a command without subcommands allows that first
//   argument only (Redis's first-arg rule). `future` records "+@all" (commands added later
//   are allowed), `all_commands` that no command was removed since "+@all".
//   Keys: `all_keys` ("~*", "allkeys") or a list of glob patterns, each readable, writable or
//   both ("%R~", "%W~", "~"), compiled into an AclKeyMatcher for the check. Channels:
//   `all_channels` ("&*", "allchannels") or glob patterns.
#pragma once

#include <atomic>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "server/acl/acl_key_matcher.h"
#include "server/acl/sha256.h"
#include "server/command_registry.h"
#include "server/key_search.h"

namespace dashkv {

// "variable_flags" key specs: the call's arguments decide what the key needs (SET reads only
// with GET; BITFIELD writes unless every operation is GET).
enum class AclVariablePerms : uint8_t { kNo, kSet, kBitfield };

// Where a command's keys are and what each needs, taken once from its key specifications
// (server/acl/acl_check.cc reads it for every checked call).
struct AclKeyPlan {
  struct Step {
    KeySearch search;
    AclVariablePerms variable;
    uint8_t perms;  // kAclKeyRead and/or kAclKeyWrite, when not `variable`
  };
  std::vector<Step> steps;
  // What the check looks at: no key (the command names none, or its arguments are channels),
  // the first argument alone (GET, SET, INCR ...: steps[0], without the general search), or
  // the keys that `steps` (or the fallback) find.
  enum class Shape : uint8_t { kNoKeys, kFirstKey, kSearch };
  Shape shape = Shape::kNoKeys;
  // The specs cannot find the keys (none given, "unknown" or "incomplete"): the command's own
  // key positions are used, each needing `fallback_perms`.
  bool fallback = false;
  uint8_t fallback_perms = kAclKeyAll;
};

struct AclFirstArgs {
  uint32_t command_id;
  std::vector<std::string> args;  // as given; compared ignoring case
};

struct AclSelector {
  std::vector<uint64_t> commands;  // one bit per CommandSpec::id
  bool all_commands = false;
  bool future = false;
  std::vector<AclFirstArgs> first_args;
  bool all_keys = false;
  std::vector<AclKeyPattern> keys;
  AclKeyMatcher key_matcher;  // `keys` compiled; AclRules::Apply rebuilds it
  bool all_channels = false;
  std::vector<std::string> channels;

  bool Allowed(uint32_t id) const {
    return id / 64 < commands.size() && (commands[id / 64] >> (id % 64)) & 1;
  }
  // Returns the first arguments allowed for command `id` alone, or nullptr.
  const std::vector<std::string>* FirstArgs(uint32_t id) const;
};

enum class AclSanitize : uint8_t { kDefault, kSanitize, kSkip };

struct AclUser {
  std::string name;
  bool enabled = false;
  bool nopass = false;
  AclSanitize sanitize = AclSanitize::kDefault;
  std::vector<Sha256Digest> passwords;
  AclSelector root;
  std::vector<AclSelector> selectors;  // the "(...)" ones, in order

  // Returns whether the user may run anything on any key and channel: the connection's check
  // is then skipped.
  bool Unrestricted() const {
    return root.all_commands && root.all_keys && root.all_channels;
  }
  // Returns whether `password` opens this user (enabled, and nopass or a digest matches; each
  // digest is compared in constant time).
  bool CheckPassword(std::string_view password) const;
};

// Applies ACL rules to users; knows the command table (names, subcommands, categories).
// Thread-safe: immutable after construction (`all_channels_default` is read atomically).
class AclRules {
 public:
  // `all_channels_default` (acl-pubsub-default; null: resetchannels): whether selectors created
  // from now on, and "reset", allow every channel.
  explicit AclRules(const CommandRegistry& registry,
                    const std::atomic<bool>* all_channels_default = nullptr);

  // Returns a user named `name` as ACL SETUSER creates it: off, no password, no command or
  // key, every channel or none (acl-pubsub-default).
  AclUser NewUser(std::string_view name) const;
  // Returns the "default" user: on, nopass, every command, key and channel.
  AclUser DefaultUser() const;

  // Applies the ACL SETUSER arguments `ops` to `user` in order (a selector may span several
  // arguments, "(" ... ")") and compiles its selectors' key patterns; returns "" or Redis's
  // error text (without "ERR "). On error `user` may be partly changed: apply to a copy.
  std::string Apply(AclUser* user, std::span<const std::string_view> ops) const;

  // Returns the user as ACL LIST prints it ("user <name> on #... ~* &* +@all").
  std::string Describe(const AclUser& user) const;
  // Returns a selector's command rules as ACL GETUSER shows them ("-@all +get").
  std::string DescribeCommands(const AclSelector& selector) const;
  // Returns a selector's key patterns and channel patterns as ACL GETUSER shows them.
  static std::string DescribeKeys(const AclSelector& selector);
  static std::string DescribeChannels(const AclSelector& selector);

  // The categories in Redis's order (ACL CAT).
  static std::span<const std::string_view> Categories();
  // Returns whether `name` (any case) is a category.
  static bool IsCategory(std::string_view name);

  const CommandRegistry& registry() const { return registry_; }
  // Returns where the keys of `spec` are and what each needs, from its key specifications: its
  // own, or Redis 7.0's (server/acl/acl_key_specs.h) when the command table lists none.
  const AclKeyPlan& KeyPlanOf(const CommandSpec& spec) const { return key_plans_[spec.id]; }

 private:
  // Applies one rule to the user (user-level rules) or its root selector; returns "" or the
  // reason (Redis's text for the rule).
  std::string ApplyOne(AclUser* user, std::string_view op) const;
  std::string ApplySelectorRule(AclSelector* sel, std::string_view op) const;
  std::string ApplyCommandRule(AclSelector* sel, std::string_view op) const;
  // Sets or clears the bit of `spec` and its subcommands (and drops its first-arg rules).
  void SetCommand(AclSelector* sel, const CommandSpec& spec, bool allow) const;
  void SetCategory(AclSelector* sel, std::string_view category, bool allow) const;
  void ResetCommands(AclSelector* sel, bool allow) const;
  AclSelector NewSelector() const;
  bool AllChannelsDefault() const;
  void DescribeSelector(const AclSelector& sel, std::string* out) const;

  const CommandRegistry& registry_;
  const std::atomic<bool>* all_channels_default_;
  size_t words_;  // size of a selector's command bitset
  std::vector<AclKeyPlan> key_plans_;  // by CommandSpec::id
};

// Returns the words of `text` split at spaces, tabs and line ends (empty words dropped).
std::vector<std::string_view> SplitAclWords(std::string_view text);

// Returns the key specifications of a command: its own, or Redis 7.0's from the generated table
// (server/acl/acl_key_specs.cc) when its CommandSpec lists none.
std::vector<KeySpec> KeySpecsOf(const CommandSpec& spec);

// Returns whether `name` is a valid user name (no space or NUL byte).
bool ValidAclUserName(std::string_view name);

}  // namespace dashkv
