// AclRules' descriptions of users (ACL LIST, ACL GETUSER, ACL SAVE), in Redis 7.0's forms.
#include <absl/strings/str_join.h>

#include "core/str_util.h"
#include "server/acl/acl_user.h"
#include "server/command_registry.h"

namespace dashkv {

namespace {

void AppendKeyPattern(const AclKeyPattern& p, std::string* out) {
  if (p.perms == kAclKeyRead) {
    out->append("%R~");
  } else if (p.perms == kAclKeyWrite) {
    out->append("%W~");
  } else {
    out->push_back('~');
  }
  out->append(p.pattern);
}

}  // namespace

std::string AclRules::DescribeKeys(const AclSelector& sel) {
  if (sel.all_keys) return "~*";
  std::string out;
  for (const AclKeyPattern& p : sel.keys) {
    if (!out.empty()) out.push_back(' ');
    AppendKeyPattern(p, &out);
  }
  return out;
}

std::string AclRules::DescribeChannels(const AclSelector& sel) {
  if (sel.all_channels) return "&*";
  std::string out;
  for (const std::string& c : sel.channels) {
    if (!out.empty()) out.push_back(' ');
    StrAppend(&out, "&", c);
  }
  return out;
}

// As Redis 7.0: start from "+@all" (when commands added later are allowed) or "-@all", add the
// categories that are mostly allowed (or remove those mostly refused), then the single commands
// and subcommands whose bit still differs, then the first-arg rules. Rules are replayed on a
// scratch selector as they are emitted, so the result rebuilds exactly the same bits.
std::string AclRules::DescribeCommands(const AclSelector& sel) const {
  const bool additive = !sel.future;
  std::string out = additive ? "-@all" : "+@all";
  AclSelector fake = NewSelector();
  ResetCommands(&fake, !additive);
  for (std::string_view category : Categories()) {
    size_t on = 0, off = 0;
    for (const auto& spec : registry_.all()) {
      if (std::find(spec->categories.begin(), spec->categories.end(), category) ==
          spec->categories.end()) {
        continue;
      }
      (sel.Allowed(spec->id) ? on : off)++;
    }
    if ((additive && on > off) || (!additive && off > on)) {
      SetCategory(&fake, category, additive);
      StrAppend(&out, additive ? " +@" : " -@", category);
    }
  }
  auto single = [&](const CommandSpec& spec) {
    const bool user_bit = sel.Allowed(spec.id);
    if (user_bit != fake.Allowed(spec.id)) {
      StrAppend(&out, user_bit ? " +" : " -", spec.name);
      SetCommand(&fake, spec, user_bit);
    }
  };
  for (const auto& spec : registry_.all()) {
    single(*spec);
    for (const CommandSpec& sub : spec->subcommands) single(sub);
    if (!sel.Allowed(spec->id)) {
      if (const std::vector<std::string>* args = sel.FirstArgs(spec->id)) {
        for (const std::string& a : *args) StrAppend(&out, " +", spec->name, "|", a);
      }
    }
  }
  return out;
}

void AclRules::DescribeSelector(const AclSelector& sel, std::string* out) const {
  if (sel.all_keys) {
    out->append("~* ");
  } else {
    for (const AclKeyPattern& p : sel.keys) {
      AppendKeyPattern(p, out);
      out->push_back(' ');
    }
  }
  if (sel.all_channels) {
    out->append("&* ");
  } else {
    out->append("resetchannels ");
    for (const std::string& c : sel.channels) StrAppend(out, "&", c, " ");
  }
  out->append(DescribeCommands(sel));
}

std::string AclRules::Describe(const AclUser& user) const {
  std::string out = StrCat("user ", user.name, user.enabled ? " on" : " off");
  if (user.nopass) out.append(" nopass");
  if (user.sanitize == AclSanitize::kSkip) out.append(" skip-sanitize-payload");
  if (user.sanitize == AclSanitize::kSanitize) out.append(" sanitize-payload");
  for (const Sha256Digest& d : user.passwords) StrAppend(&out, " #", Sha256Hex(d));
  out.push_back(' ');
  DescribeSelector(user.root, &out);
  for (const AclSelector& sel : user.selectors) {
    out.append(" (");
    DescribeSelector(sel, &out);
    out.push_back(')');
  }
  return out;
}

}  // namespace dashkv
