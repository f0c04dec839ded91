#include "server/acl/acl_check.h"

#include <algorithm>

#include "core/base/parse_int.h"
#include "core/glob.h"
#include "core/str_util.h"
#include "server/command_registry.h"

namespace dashkv {

namespace {

// Calls fn(index, needed perms) for each key one key spec finds in `args` until fn returns
// false; returns -1 when the keys cannot be found (a bad key count), else 1, or 0 when fn
// stopped.
template <typename Fn>
int ForEachSpecKey(const AclKeyPlan::Step& ks, CmdArgs args, uint8_t perms, Fn&& fn) {
  const int argc = static_cast<int>(args.size());
  int first = ks.index;
  if (!ks.keyword.empty()) {
    first = -1;
    if (ks.startfrom >= 0) {
      for (int i = ks.startfrom; i < argc; ++i) {
        if (EqualsIgnoreCase(args[i], ks.keyword)) {
          first = i + 1;
          break;
        }
      }
    } else {
      for (int i = argc + ks.startfrom; i > 0; --i) {
        if (EqualsIgnoreCase(args[i], ks.keyword)) {
          first = i + 1;
          break;
        }
      }
    }
    if (first < 0) return 1;
  }
  if (first <= 0 || first >= argc) return 1;
  int last;
  const int step = ks.key_step > 1 ? ks.key_step : 1;
  if (ks.keynum) {
    std::optional<int64_t> n = ParseInt64(args[first]);
    if (!n || *n < 0 || *n > argc) return -1;
    ++first;
    last = first + static_cast<int>(*n) * step - 1;
    if (*n == 0) return 1;
  } else if (ks.last_key >= 0) {
    last = first + ks.last_key;
  } else if (ks.limit > 1) {
    last = first + (argc - first) / ks.limit - 1;  // XREAD's STREAMS: the first half
  } else {
    last = argc + ks.last_key;
  }
  if (last > argc - 1) last = argc - 1;
  for (int i = first; i <= last; i += step) {
    if (!fn(i, perms)) return 0;
  }
  return 1;
}

// Calls fn(index, needed perms) for each key of a call until fn returns false; returns whether
// it went through all of them.
template <typename Fn>
bool ForEachKey(const AclKeyPlan& plan, const CommandSpec& spec, CmdArgs args, Fn&& fn) {
  if (!plan.fallback) {
    bool complete = true;
    for (const AclKeyPlan::Step& step : plan.steps) {
      int r = ForEachSpecKey(step, args, AclStepPerms(step, args), fn);
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
  // As Redis: SET reads only with GET; BITFIELD writes unless every operation is GET.
  if (variable == AclVariablePerms::kSet) {
    for (size_t i = 3; i < args.size(); ++i) {
      if (EqualsIgnoreCase(args[i], "GET")) return kAclKeyAll;
    }
    return kAclKeyWrite;
  }
  for (size_t i = 2; i < args.size(); ++i) {
    if (EqualsIgnoreCase(args[i], "SET") || EqualsIgnoreCase(args[i], "INCRBY")) {
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
