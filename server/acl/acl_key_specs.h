// The key specifications of Redis 7.0's commands (generated, server/acl/acl_key_specs.cc), for
// the ACL's read/write checks of commands whose CommandSpec lists none.
// Thread: immutable.
#pragma once

#include <cstddef>
#include <string_view>

namespace dashkv {

// One key specification of one command (a subcommand as "container|sub"), as COMMAND INFO
// gives it: its flags ("RW access update" ...), its begin_search (an index, or a keyword
// searched from `startfrom` when `keyword` is set) and its find_keys (a range to `last_key` in
// steps of `key_step`, `limit` as Redis's, or a key count when `keynum`); `unknown`: the keys
// cannot be found from the arguments alone.
struct AclKeySpecRow {
  std::string_view command;
  std::string_view flags;
  int index;
  std::string_view keyword;
  int startfrom;
  int last_key;
  int key_step;
  int limit;
  bool keynum;
  bool unknown;
};

extern const AclKeySpecRow kAclKeySpecRows[];
extern const size_t kAclKeySpecRowCount;

}  // namespace dashkv
