// Finding the keys one key specification names in a call, by Redis 7.0's rules: begin_search
// (an index, or a keyword searched forwards or backwards) then find_keys (a range with a step
// and a limit, or a key count). Used by the ACL's key checks and COMMAND GETKEYSANDFLAGS.
// Thread: pure.
#pragma once

#include <optional>
#include <string_view>

#include "core/base/parse_int.h"
#include "core/str_util.h"
#include "server/cmd_args.h"

namespace dashkv {

struct KeySearch {
  int index = 0;             // begin_search index, when `keyword` is empty
  std::string_view keyword;  // begin_search keyword: the keys start after it
  int startfrom = 0;         // where the keyword search starts (negative: from the end, backwards)
  int last_key = 0;          // find_keys range: relative to the first key; <0 from the end
  int key_step = 1;
  int limit = 0;       // >1: the range covers 1/limit of the arguments left (XREAD's STREAMS)
  bool keynum = false;  // find_keys keynum: the first argument counts the keys that follow
};

// Calls fn(index) for each key `ks` finds in `args` until fn returns false; returns -1 when the
// keys cannot be found (a bad key count), else 1, or 0 when fn stopped.
template <typename Fn>
int ForEachSearchKey(const KeySearch& ks, CmdArgs args, Fn&& fn) {
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
    if (!fn(i)) return 0;
  }
  return 1;
}

}  // namespace dashkv
