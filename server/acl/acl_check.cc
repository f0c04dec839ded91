#include "server/acl/acl_check.h"

#include <absl/container/inlined_vector.h>

#include <algorithm>
#include <cstring>

#include "core/base/parse_int.h"
#include "core/glob.h"
#include "core/str_util.h"
#include "server/command_registry.h"

namespace dashkv {

namespace {

struct KeyRef {
  uint32_t index;
  uint8_t perms;  // what the access needs: kAclKeyRead and/or kAclKeyWrite
};
using KeyRefs = absl::InlinedVector<KeyRef, 8>;

// The needs of a command whose key spec says "variable_flags": Redis asks the command (SET
// reads only with GET; BITFIELD writes unless every operation is GET).
uint8_t VariablePerms(const CommandSpec& spec, CmdArgs args) {
  if (spec.name == "set") {
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

// Appends the keys one key spec finds in `args`; returns false when they cannot be found
// (a bad key count).
bool AddSpecKeys(const AclKeyPlan::Step& ks, CmdArgs args, uint8_t perms, KeyRefs* out) {
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
    if (first < 0) return true;
  }
  if (first <= 0 || first >= argc) return true;
  int last;
  int step = std::max(1, ks.key_step);
  if (ks.keynum) {
    std::optional<int64_t> n = ParseInt64(args[first]);
    if (!n || *n < 0 || *n > argc) return false;
    ++first;
    last = first + static_cast<int>(*n) * step - 1;
    if (*n == 0) return true;
  } else if (ks.last_key >= 0) {
    last = first + ks.last_key;
  } else if (ks.limit > 1) {
    last = first + (argc - first) / ks.limit - 1;  // XREAD's STREAMS: the first half
  } else {
    last = argc + ks.last_key;
  }
  last = std::min(last, argc - 1);
  for (int i = first; i <= last; i += step) out->push_back({static_cast<uint32_t>(i), perms});
  return true;
}

// Returns the keys of a call with what each needs.
KeyRefs KeysWithPerms(const AclKeyPlan& plan, const CommandSpec& spec, CmdArgs args) {
  KeyRefs refs;
  bool fallback = plan.fallback;
  if (!fallback) {
    for (const AclKeyPlan::Step& step : plan.steps) {
      const uint8_t perms = step.variable ? VariablePerms(spec, args) : step.perms;
      if (!AddSpecKeys(step, args, perms, &refs)) {
        fallback = true;
        break;
      }
    }
  }
  if (fallback) {
    refs.clear();
    // KeysOf needs a well-formed call (redis.acl_check_cmd may ask about any).
    if (spec.ArityOk(args.size())) {
      for (uint32_t i : spec.KeysOf(args)) refs.push_back({i, plan.fallback_perms});
    }
  }
  return refs;
}

bool KeyAllowed(const AclSelector& sel, std::string_view key, uint8_t needed) {
  for (const AclKeyPattern& p : sel.keys) {
    if ((p.perms & needed) != needed) continue;
    if (p.prefix_only) {
      // "prefix*": most patterns that do not match differ at the first byte.
      const size_t n = p.pattern.size() - 1;
      if (key.size() >= n && key[0] == p.pattern[0] &&
          std::memcmp(key.data(), p.pattern.data(), n) == 0) {
        return true;
      }
    } else if (GlobMatch(p.pattern, key)) {
      return true;
    }
  }
  return false;
}

AclDenied CheckSelector(const AclRules& rules, const AclSelector& sel, const CommandSpec& spec,
                        CmdArgs args, std::optional<KeyRefs>& keys, int* index) {
  if (!sel.all_commands && !spec.HasFlag(kCmdNoAuth) && !sel.Allowed(spec.id)) {
    const std::vector<std::string>* first = sel.FirstArgs(spec.id);
    if (first == nullptr || args.size() < 2 ||
        std::none_of(first->begin(), first->end(),
                     [&](const std::string& a) { return EqualsIgnoreCase(a, args[1]); })) {
      return AclDenied::kCommand;
    }
  }
  if (!sel.all_keys && spec.HasKeys() && spec.acl_channels == AclChannelArgs::kNone) {
    if (!keys) keys = KeysWithPerms(rules.KeyPlanOf(spec), spec, args);
    for (const KeyRef& k : *keys) {
      if (!KeyAllowed(sel, args[k.index], k.perms)) {
        *index = static_cast<int>(k.index);
        return AclDenied::kKey;
      }
    }
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

AclVerdict AclCheck(const AclRules& rules, const AclUser& user, const CommandSpec& spec,
                    CmdArgs args) {
  std::optional<KeyRefs> keys;  // computed once, for the first selector that needs them
  AclVerdict verdict{AclDenied::kCommand, 0};
  auto consider = [&](const AclSelector& sel) {
    int index = 0;
    AclDenied r = CheckSelector(rules, sel, spec, args, keys, &index);
    if (r == AclDenied::kOk) return true;
    if (r > verdict.reason || (r == verdict.reason && index > verdict.arg_index)) {
      verdict = {r, index};
    }
    return false;
  };
  if (consider(user.root)) return {};
  for (const AclSelector& sel : user.selectors) {
    if (consider(sel)) return {};
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
