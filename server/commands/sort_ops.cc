#include "server/commands/sort_ops.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "core/base/parse_int.h"
#include "core/str_util.h"
#include "server/storage/shard_set.h"
#include "server/values/hash_value.h"
#include "server/values/set_value.h"
#include "server/values/zset_value.h"

namespace dashkv {

namespace {

// The bytes Redis's C-string functions see: up to the first NUL.
std::string_view CString(std::string_view s) { return s.substr(0, s.find('\0')); }

// memcmp order, then the shorter first.
int CompareBytes(std::string_view a, std::string_view b) {
  const int c = a.compare(b);
  return c < 0 ? -1 : (c > 0 ? 1 : 0);
}

// Parses a weight as strtod does on the bytes before the first NUL (see sort_ops.h Design).
bool ParseSortScore(std::string_view s, double* out) {
  s = CString(s);
  // A plain decimal integer (the common case) is exactly its value: the same double as strtod
  // rounds it to, without strtod's cost.
  if (std::optional<int64_t> v = ParseInt64(s)) {
    *out = static_cast<double>(*v);
    return true;
  }
  char small[64];
  std::string big;
  const char* text = small;
  if (s.size() < sizeof(small)) {
    std::memcpy(small, s.data(), s.size());
    small[s.size()] = '\0';
  } else {
    big.assign(s);
    text = big.c_str();
  }
  char* end = nullptr;
  errno = 0;
  const double d = std::strtod(text, &end);
  if (*end != '\0' || errno == ERANGE || std::isnan(d)) return false;
  *out = d;
  return true;
}

// What SortItems orders: an item's numeric weight and its index.
struct SortKey {
  double score;
  uint32_t index;
};

// Orders `keys` so that [start, stop) holds the window in order, by `cmp(a, b)` (<0, 0, >0 as
// key a sorts before, with, after key b in ascending order; DESC reverses it).
template <typename Cmp>
void OrderKeys(std::vector<SortKey>& keys, size_t start, size_t stop, bool desc, Cmp cmp) {
  auto run = [&](auto less) {
    auto begin = keys.begin();
    if (start == 0 && stop == keys.size()) return std::sort(begin, keys.end(), less);
    // Only the window's items need their places: select its first, then sort up to its end.
    if (start > 0) std::nth_element(begin, begin + start, keys.end(), less);
    std::partial_sort(begin + start, begin + stop, keys.end(), less);
  };
  if (desc) {
    run([&cmp](const SortKey& a, const SortKey& b) { return cmp(b, a) < 0; });
  } else {
    run([&cmp](const SortKey& a, const SortKey& b) { return cmp(a, b) < 0; });
  }
}

// Returns LIMIT's window over `n` elements: its first position and its length. Both values are
// clamped to the length first (no overflow, nothing sized by the client).
std::pair<int64_t, size_t> LimitWindow(const SortOptions& opts, int64_t n) {
  int64_t start = std::min(std::max(opts.limit_start, int64_t{0}), n);
  const int64_t count = std::min(std::max(opts.limit_count, int64_t{-1}), n);
  int64_t end = count < 0 ? n - 1 : start + count - 1;
  if (start >= n) {
    start = n - 1;
    end = n - 2;
  }
  if (end >= n) end = n - 1;
  return {start, end >= start ? static_cast<size_t>(end - start + 1) : 0};
}

}  // namespace

bool SortOptions::by_reads_keys() const { return by.has_value() && !dontsort; }

bool SortOptions::reads_keys() const {
  if (by_reads_keys()) return true;
  for (std::string_view g : gets) {
    if (PatternReadsKeys(g)) return true;
  }
  return false;
}

OpResult<SortOptions> ParseSortOptions(CmdArgs args, bool read_only) {
  SortOptions o;
  ArgParser p(args, 2);
  while (p.HasNext()) {
    if (p.Check("ASC")) {
      o.desc = false;
    } else if (p.Check("DESC")) {
      o.desc = true;
    } else if (p.Check("ALPHA")) {
      o.alpha = true;
    } else if (p.remaining() >= 3 && p.Check("LIMIT")) {
      o.limit_start = p.NextInt();
      o.limit_count = p.NextInt();
    } else if (!read_only && p.remaining() >= 2 && p.Check("STORE")) {
      o.store = p.Next();
    } else if (p.remaining() >= 2 && p.Check("BY")) {
      o.by = p.Next();
      if (!PatternReadsKeys(*o.by)) o.dontsort = true;
    } else if (p.remaining() >= 2 && p.Check("GET")) {
      o.gets.push_back(p.Next());
    } else {
      p.SetError(OpStatus::kSyntaxError);
    }
  }
  if (p.HasError()) return p.error();
  return o;
}

std::vector<uint32_t> SortKeyIndexes(CmdArgs args) {
  std::vector<uint32_t> out{1};
  std::optional<uint32_t> store;
  for (size_t i = 2; i < args.size(); ++i) {
    if (EqualsIgnoreCase(args[i], "LIMIT")) {
      i += 2;
    } else if (EqualsIgnoreCase(args[i], "GET") || EqualsIgnoreCase(args[i], "BY")) {
      i += 1;
    } else if (EqualsIgnoreCase(args[i], "STORE") && i + 1 < args.size()) {
      store = static_cast<uint32_t>(i + 1);  // the last STORE wins, as in SORT
    }
  }
  if (store) out.push_back(*store);
  return out;
}

bool IsSelfPattern(std::string_view pattern) { return CString(pattern) == "#"; }

bool PatternReadsKeys(std::string_view pattern) {
  return CString(pattern).find('*') != std::string_view::npos;
}

PatternRef ResolvePattern(std::string_view pattern, std::string_view elem) {
  const std::string_view visible = CString(pattern);
  const size_t star = visible.find('*');
  const size_t arrow = visible.find("->", star + 1);
  PatternRef ref;
  size_t suffix_end = pattern.size();
  if (arrow != std::string_view::npos && arrow + 2 < visible.size()) {
    ref.hash = true;
    ref.field = pattern.substr(arrow + 2);
    suffix_end = arrow;
  }
  ref.key.reserve(star + elem.size() + (suffix_end - star - 1));
  ref.key.append(pattern.substr(0, star));
  ref.key.append(elem);
  ref.key.append(pattern.substr(star + 1, suffix_end - star - 1));
  return ref;
}

std::optional<unsigned> PatternShard(std::string_view pattern, const ShardSet& shard_set) {
  if (shard_set.size() == 1) return 0;
  const std::string_view prefix = pattern.substr(0, CString(pattern).find('*'));
  const size_t open = prefix.find('{');
  if (open == std::string_view::npos) return std::nullopt;
  const size_t close = prefix.find('}', open + 1);
  if (close == std::string_view::npos || close == open + 1) return std::nullopt;
  return shard_set.ShardOf(prefix);  // every key starts with this complete tag
}

std::optional<std::string_view> ReadPatternValue(DbSlice& db, const PatternRef& ref,
                                                 int64_t now_ms, bool quiet,
                                                 std::string* scratch) {
  PrimeIterator it = quiet ? db.FindReadOnlyQuiet(ref.key, now_ms)
                           : db.FindReadOnly(ref.key, now_ms);
  if (it.is_done()) return std::nullopt;
  const CompactObj& v = it->second;
  if (ref.hash) {
    if (v.type() != ObjType::kHash) return std::nullopt;
    return static_cast<const HashValue*>(v.GetObject())->Get(ref.field, scratch);
  }
  if (v.type() != ObjType::kString) return std::nullopt;
  return v.GetString(scratch);
}

SortInput LoadSortInput(const CompactObj* value, const SortOptions& opts, bool from_script) {
  SortInput in;
  SortPlan& plan = in.plan;
  const ObjType type = value != nullptr ? value->type() : ObjType::kList;
  bool dontsort = opts.dontsort;
  plan.alpha = opts.alpha;
  plan.desc = opts.desc;
  plan.by_weights = opts.by_reads_keys();
  plan.binary = opts.store.has_value();
  if (dontsort && type == ObjType::kSet && (opts.store || from_script)) {
    // A set has no order of its own: sorted for a deterministic STORE or script result.
    dontsort = false;
    plan.alpha = true;
    plan.by_weights = false;
  }
  plan.sort = !dontsort;

  int64_t n = 0;
  if (value != nullptr) {
    switch (type) {
      case ObjType::kList: n = static_cast<int64_t>(GetList(*value)->size()); break;
      case ObjType::kSet: n = static_cast<int64_t>(AsSet(*value).size()); break;
      case ObjType::kZset: n = static_cast<int64_t>(AsZset(*value).size()); break;
      default: break;
    }
  }
  auto [start, window] = LimitWindow(opts, n);

  std::vector<SortItem>& items = in.items;
  auto add = [&items](std::string_view e) { items.emplace_back().elem.assign(e); };
  if (value == nullptr) {
    // A missing key sorts as an empty list.
  } else if (type == ObjType::kList) {
    const ListValue* list = GetList(*value);
    // Without sorting only the window is loaded, walked from its first element in order.
    const bool ranged = dontsort;
    const size_t want = ranged ? window : static_cast<size_t>(n);
    if (want > 0) {
      items.reserve(want);
      const long from = !ranged ? 0 : (opts.desc ? static_cast<long>(n - start - 1) : start);
      const ListEnd toward = ranged && opts.desc ? ListEnd::kHead : ListEnd::kTail;
      list->Walk(from, toward, [&](const ListpackValue& v) {
        char buf[ListpackValue::kIntBufSize];
        add(v.AsText(buf));
        return items.size() < want;
      });
    }
    if (ranged) start = 0;
  } else if (type == ObjType::kZset) {
    const ZsetValue& z = AsZset(*value);
    if (dontsort) {
      // The sorted set's own order (DESC: descending), only the window.
      items.reserve(window);
      const uint64_t first = opts.desc ? static_cast<uint64_t>(n - start) - window
                                       : static_cast<uint64_t>(start);
      z.Range(first, first + window, opts.desc, [&](std::string_view m, double) { add(m); });
      start = 0;
    } else {
      items.reserve(static_cast<size_t>(n));
      z.Range(0, static_cast<uint64_t>(n), false, [&](std::string_view m, double) { add(m); });
    }
  } else {
    items.reserve(static_cast<size_t>(n));
    AsSet(*value).ForEach(add);
  }
  plan.start = static_cast<size_t>(std::max<int64_t>(start, 0));
  plan.stop = std::min(plan.start + window, items.size());

  if (plan.sort && !plan.alpha && !plan.by_weights) {
    for (SortItem& item : items) {
      if (!ParseSortScore(item.elem, &item.score)) in.bad_score = true;
    }
  }
  if (plan.sort && plan.alpha && plan.by_weights) in.cmps.resize(items.size());
  return in;
}

bool ApplyWeight(SortInput& in, size_t i, std::optional<std::string_view> value) {
  if (!value) return true;
  if (in.plan.alpha) {
    in.cmps[i].emplace(*value);
    return true;
  }
  if (ParseSortScore(*value, &in.items[i].score)) return true;
  in.bad_score = true;
  return false;
}

void SortItems(SortInput& in) {
  const SortPlan& plan = in.plan;
  if (!plan.sort || plan.start >= plan.stop) return;
  std::vector<SortKey> keys(in.items.size());
  for (size_t i = 0; i < keys.size(); ++i) {
    keys[i] = SortKey{in.items[i].score, static_cast<uint32_t>(i)};
  }
  const std::vector<SortItem>& items = in.items;
  const size_t start = plan.start;
  const size_t stop = plan.stop;
  // One comparator per kind of order, so that each inlines into the sort.
  if (!plan.alpha) {
    OrderKeys(keys, start, stop, plan.desc, [&items](const SortKey& a, const SortKey& b) {
      if (a.score != b.score) return a.score < b.score ? -1 : 1;
      return CompareBytes(items[a.index].elem, items[b.index].elem);  // equal scores
    });
  } else if (plan.by_weights) {
    const bool binary = plan.binary;
    const std::vector<std::optional<std::string>>& cmps = in.cmps;
    OrderKeys(keys, start, stop, plan.desc, [&cmps, binary](const SortKey& a, const SortKey& b) {
      const std::optional<std::string>& ca = cmps[a.index];
      const std::optional<std::string>& cb = cmps[b.index];
      if (!ca || !cb) return ca.has_value() == cb.has_value() ? 0 : (ca ? 1 : -1);
      return binary ? CompareBytes(*ca, *cb) : CompareBytes(CString(*ca), CString(*cb));
    });
  } else if (plan.binary) {
    OrderKeys(keys, start, stop, plan.desc, [&items](const SortKey& a, const SortKey& b) {
      return CompareBytes(items[a.index].elem, items[b.index].elem);
    });
  } else {
    OrderKeys(keys, start, stop, plan.desc, [&items](const SortKey& a, const SortKey& b) {
      return CompareBytes(CString(items[a.index].elem), CString(items[b.index].elem));
    });
  }
  in.order.resize(plan.stop - plan.start);
  for (size_t k = plan.start; k < plan.stop; ++k) in.order[k - plan.start] = keys[k].index;
}

OpResult<bool> StoreSortResult(DbSlice& db, std::string_view key,
                               std::span<const std::string_view> values,
                               const ListValue::Options& opts, int64_t now_ms) {
  if (values.empty()) {
    if (!db.EraseKey(key, now_ms, RemoveReason::kDeleted)) return false;
    db.Notify(kNotifyGeneric, "del", key);
    return true;
  }
  auto list = std::make_unique<ListValue>();
  for (std::string_view v : values) list->Push(v, ListEnd::kTail, opts);
  // An existing key of any type is replaced in place (Redis's setKey: no `new` event).
  OpResult<DbSlice::AddResult> added = db.FindOrAdd(key, now_ms);
  if (!added) return added.status();
  const uint8_t encoding = list->encoding();
  added->it->second.SetObject(ObjType::kList, encoding, list.release());
  db.SetExpire(added->it, 0);
  db.Notify(kNotifyList, "sortstore", key);
  return true;
}

}  // namespace dashkv
