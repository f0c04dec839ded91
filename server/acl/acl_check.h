// The ACL check of one call: may `user` run `spec` with `args` — its command, the keys it
// reads or writes (by its key specs' flags, as Redis 7.0 derives %R / %W needs) and the
// channels it publishes or subscribes to. Pure; called on the connection's thread before a
// command is dispatched or queued, and for every call a script makes.
#pragma once

#include <string>

#include "server/acl/acl_log.h"
#include "server/acl/acl_user.h"
#include "server/cmd_args.h"

namespace dashkv {

struct CommandSpec;

struct AclVerdict {
  AclDenied reason = AclDenied::kOk;
  int arg_index = 0;  // the refused key or channel (0 for a command)
};

// Checks `args` (arity already checked) against every selector of `user`: allowed when one
// selector allows it whole; otherwise the verdict Redis reports (the greatest reason, the last
// argument among equals).
// `rules` gives the command's key specifications.
AclVerdict AclCheck(const AclRules& rules, const AclUser& user, const CommandSpec& spec,
                    CmdArgs args);

// Returns what the key of a "variable_flags" key spec needs in this call.
uint8_t AclVariableKeyPerms(AclVariablePerms variable, CmdArgs args);

// Returns what the keys a key-plan step finds need in this call.
inline uint8_t AclStepPerms(const AclKeyPlan::Step& step, CmdArgs args) {
  return step.variable == AclVariablePerms::kNo ? step.perms
                                                : AclVariableKeyPerms(step.variable, args);
}

// Returns whether AclCheck allows the call, without working out the verdict of a refusal.
bool AclAllowsSlow(const AclRules& rules, const AclUser& user, const CommandSpec& spec,
                   CmdArgs args);

// The check of every command a restricted user sends: AclAllowsSlow, inline for the common
// case of a command the root selector allows whose one key is its first argument.
inline bool AclAllows(const AclRules& rules, const AclUser& user, const CommandSpec& spec,
                      CmdArgs args) {
  const AclKeyPlan& plan = rules.KeyPlanOf(spec);
  const AclSelector& root = user.root;
  if (plan.shape == AclKeyPlan::Shape::kFirstKey && root.Allowed(spec.id) && args.size() >= 2 &&
      (root.all_keys || root.key_matcher.Allows(args[1], AclStepPerms(plan.steps[0], args)))) {
    return true;
  }
  return AclAllowsSlow(rules, user, spec, args);
}

// Returns the object an ACL LOG entry names for a verdict: the command's full name, or the
// refused key or channel.
std::string AclDeniedObject(const AclVerdict& verdict, const CommandSpec& spec, CmdArgs args);

// Returns Redis's -NOPERM text for a refused call at top level.
std::string AclNoPermText(const AclVerdict& verdict, const CommandSpec& spec);

// Returns whether the channel (or, `is_pattern`, the pattern taken literally) is allowed by a
// selector's channel patterns.
bool AclChannelAllowed(const AclSelector& sel, std::string_view channel, bool is_pattern);

}  // namespace dashkv
