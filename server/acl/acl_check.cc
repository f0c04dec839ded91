#include "server/acl/acl_check.h"

#include <algorithm>

#include "core/base/parse_int.h"
#include "core/glob.h"
#include "core/str_util.h"
#include "server/command_registry.h"
#include "server/key_search.h"

namespace dashkv {

namespace {

// Calls fn(index, needed perms) for each key of a call until fn returns false; returns whether
// it went through all of them.
template <typename Fn>
bool ForEachKey(const AclKeyPlan& plan, const CommandSpec& spec, CmdArgs args, Fn&& fn) {
  if (!plan.fallback) {
    bool complete = true;
    for (const AclKeyPlan::Step& step : plan.steps) {
      const uint8_t perms = AclStepPerms(step, args);
      int r = ForEachSearchKey(step.search, args, [&](int i) { return fn(i, perms); });
      if (r == 0) return false;
      if (r < 0) {
        complete = false;
        break;
      }
    }
    if (complete) return true;
  }
  // KeysOf needs a well-formed call (redis.acl_check_cmd may ask about any).
  if (!spec.ArityOk(args.size())) return true;
  for (uint32_t i : spec.KeysOf(args)) {
    if (!fn(static_cast<int>(i), plan.fallback_perms)) return false;
  }
  return true;
}

AclDenied CheckSelector(const AclRules& rules, const AclSelector& sel, const CommandSpec& spec,
                        CmdArgs args, int* index) {
  if (!sel.all_commands && !spec.HasFlag(kCmdNoAuth) && !sel.Allowed(spec.id)) {
    const std::vector<std::string>* first = sel.FirstArgs(spec.id);
    if (first == nullptr || args.size() < 2 ||
        std::none_of(first->begin(), first->end(),
                     [&](const std::string& a) { return EqualsIgnoreCase(a, args[1]); })) {
      return AclDenied::kCommand;
    }
  }
  const AclKeyPlan& plan = rules.KeyPlanOf(spec);
  if (plan.shape == AclKeyPlan::Shape::kFirstKey) [[likely]] {
    // Its arguments name no channel (Shape::kNoKeys otherwise): nothing else to check.
    if (sel.all_keys || args.size() < 2 ||
        sel.key_matcher.Allows(args[1], AclStepPerms(plan.steps[0], args))) {
      return AclDenied::kOk;
    }
    *index = 1;
    return AclDenied::kKey;
  }
  if (!sel.all_keys && plan.shape == AclKeyPlan::Shape::kSearch) {
    bool all_allowed = ForEachKey(plan, spec, args, [&](int i, uint8_t perms) {
      if (sel.key_matcher.Allows(args[i], perms)) return true;
      *index = i;
      return false;
    });
    if (!all_allowed) return AclDenied::kKey;
  }
  if (!sel.all_channels && spec.acl_channels != AclChannelArgs::kNone) {
    const size_t end = spec.acl_channels == AclChannelArgs::kPublish ? 2 : args.size();
    const bool patterns = spec.acl_channels == AclChannelArgs::kPatterns;
    for (size_t i = 1; i < end; ++i) {
      if (!AclChannelAllowed(sel, args[i], patterns)) {
        *index = static_cast<int>(i);
        return AclDenied::kChannel;
      }
    }
  }
  return AclDenied::kOk;
}

}  // namespace

bool AclChannelAllowed(const AclSelector& sel, std::string_view channel, bool is_pattern) {
  if (sel.all_channels) return true;
  for (const std::string& p : sel.channels) {
    if (is_pattern ? p == channel : GlobMatch(p, channel)) return true;
  }
  return false;
}

uint8_t AclVariableKeyPerms(AclVariablePerms variable, CmdArgs args) {
  // As Redis: SET reads only with GET; BITFIELD only reads when every operation is a complete
  // GET or OVERFLOW (SET, INCRBY and anything malformed count as writes).
  if (variable == AclVariablePerms::kSet) {
    for (size_t i = 3; i < args.size(); ++i) {
      if (EqualsIgnoreCase(args[i], "GET")) return kAclKeyAll;
    }
    return kAclKeyWrite;
  }
  for (size_t i = 2; i < args.size(); ++i) {
    const size_t rest = args.size() - i - 1;
    if (EqualsIgnoreCase(args[i], "GET") && rest >= 2) {
      i += 2;
    } else if (EqualsIgnoreCase(args[i], "OVERFLOW") && rest >= 1) {
      i += 1;
    } else {
      return kAclKeyAll;
    }
  }
  return kAclKeyRead;
}

bool AclAllowsSlow(const AclRules& rules, const AclUser& user, const CommandSpec& spec,
                   CmdArgs args) {
  int index = 0;
  if (CheckSelector(rules, user.root, spec, args, &index) == AclDenied::kOk) return true;
  for (const AclSelector& sel : user.selectors) {
    if (CheckSelector(rules, sel, spec, args, &index) == AclDenied::kOk) return true;
  }
  return false;
}

AclVerdict AclCheck(const AclRules& rules, const AclUser& user, const CommandSpec& spec,
                    CmdArgs args) {
  int index = 0;
  AclDenied r = CheckSelector(rules, user.root, spec, args, &index);
  if (r == AclDenied::kOk) return {};
  AclVerdict verdict{r, index};
  for (const AclSelector& sel : user.selectors) {
    index = 0;
    r = CheckSelector(rules, sel, spec, args, &index);
    if (r == AclDenied::kOk) return {};
    if (r > verdict.reason || (r == verdict.reason && index > verdict.arg_index)) {
      verdict = {r, index};
    }
  }
  return verdict;
}

std::string AclDeniedObject(const AclVerdict& verdict, const CommandSpec& spec, CmdArgs args) {
  if (verdict.reason == AclDenied::kCommand) return spec.name;
  return std::string(args[verdict.arg_index]);
}

std::string AclNoPermText(const AclVerdict& verdict, const CommandSpec& spec) {
  switch (verdict.reason) {
    case AclDenied::kKey:
      return "NOPERM this user has no permissions to access one of the keys used as arguments";
    case AclDenied::kChannel:
      return "NOPERM this user has no permissions to access one of the channels used as "
             "arguments";
    default:
      return StrCat("NOPERM this user has no permissions to run the '", spec.name,
                    "' command");
  }
}

}  // namespace dashkv
