// The parts of SORT / SORT_RO (server/commands/sort_command.cc) that do not depend on where they
// run: option parsing, BY/GET pattern substitution, loading the elements of a list, set or
// sorted set, weights, ordering, and storing the result list. Both the single-shard handler and
// the coordinator (patterns reading keys on other shards) are built from them.
// Thread: functions taking a DbSlice run on its shard's thread; the others anywhere.
//
// Design: Redis 7.0's semantics, kept exactly
//   - Options are parsed before the key is looked up (a syntax error wins over WRONGTYPE).
//     Repeated options: the last BY, LIMIT and STORE win; a BY without '*' ("nosort") stops
//     sorting for good, even when another BY follows.
//   - A BY without '*' keeps the source's order: a list's (DESC reverses it), a sorted set's
//     (DESC: by descending score), a set's iteration order (DESC ignored) — except that a set
//     is then sorted ALPHA when the call STOREs or comes from a script, for determinism.
//   - LIMIT: offset below 0 is 0, a negative count means "to the end"; both are clamped to the
//     length first, so no huge value overflows or reserves anything.
//   - Patterns: only the first '*' is replaced by the element; "->field" after that '*' reads a
//     hash field; "#" is the element itself (GET only); a pattern with no '*' reads nothing (GET
//     gives nil). As Redis's C-string handling, only the bytes before a NUL count when looking
//     for '*', "->" and "#". A key of the wrong type reads as missing.
//   - Numeric order: strtod over the bytes before the first NUL, with leading blanks, hex and
//     "inf" accepted and trailing bytes, NaN and out-of-range (ERANGE) rejected: then the whole
//     call fails with "One or more scores can't be converted into double". Missing weights are
//     0. Equal scores order by the elements' bytes.
//   - ALPHA order: bytes up to the first NUL (strcoll in the C locale, as Redis's default), or
//     all bytes (memcmp, then length) when the call STOREs; a missing BY value sorts first.
//   - STORE writes a list (replacing any value and its TTL; keyspace event "sortstore"), or
//     deletes the destination when the result is empty; a missing GET value is stored as "".
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "server/cmd_args.h"
#include "server/op_status.h"
#include "server/storage/db_slice.h"
#include "server/values/list_value.h"

namespace dashkv {

class ShardSet;

// SORT's options, as parsed (views into the call's arguments).
struct SortOptions {
  bool desc = false;
  bool alpha = false;
  bool dontsort = false;  // a BY pattern without '*'
  std::optional<std::string_view> by;
  int64_t limit_start = 0;
  int64_t limit_count = -1;
  std::vector<std::string_view> gets;
  std::optional<std::string_view> store;

  // Returns whether the BY pattern is used to look up weights (it has a '*' and sorting is on).
  bool by_reads_keys() const;
  // Returns whether any BY or GET pattern reads keys the call does not name.
  bool reads_keys() const;
};

// Parses SORT key [BY p] [LIMIT o c] [GET p ...] [ASC|DESC] [ALPHA] [STORE dst] (`read_only`:
// SORT_RO, which knows no STORE). Errors: kSyntaxError, kNotAnInteger.
OpResult<SortOptions> ParseSortOptions(CmdArgs args, bool read_only);

// The argument indexes of SORT's keys as Redis's COMMAND GETKEYS finds them: the source, and
// the key after the last STORE (LIMIT's two and BY's and GET's one argument skipped).
std::vector<uint32_t> SortKeyIndexes(CmdArgs args);

// Returns whether `pattern` is "#" (the element itself).
bool IsSelfPattern(std::string_view pattern);
// Returns whether `pattern` names a key: it has a '*' before any NUL.
bool PatternReadsKeys(std::string_view pattern);

// The key (and hash field) a pattern names for one element.
struct PatternRef {
  std::string key;
  std::string_view field;  // a view into the pattern; used when `hash`
  bool hash = false;
};

// Returns what `pattern` names for `elem`. REQUIRES: PatternReadsKeys(pattern).
PatternRef ResolvePattern(std::string_view pattern, std::string_view elem);

// Returns the shard every key `pattern` names lives on, whatever the element (a complete hash
// tag before its '*'), or nullopt. REQUIRES: PatternReadsKeys(pattern).
std::optional<unsigned> PatternShard(std::string_view pattern, const ShardSet& shard_set);

// Reads what `ref` names in `db`: a string's bytes or a hash field's value; nullopt when the key
// is missing or of another type, or the field is missing. `quiet`: no keyspace hit/miss
// counting (a STORE call, as Redis's write lookups). The view is valid until `db` changes;
// `scratch` may hold its bytes.
std::optional<std::string_view> ReadPatternValue(DbSlice& db, const PatternRef& ref,
                                                 int64_t now_ms, bool quiet,
                                                 std::string* scratch);

// One element to sort and its numeric weight.
struct SortItem {
  std::string elem;
  double score = 0;
};

// What to do with the loaded elements: the options as they apply to this source.
struct SortPlan {
  bool sort = true;           // false: keep the loaded order
  bool alpha = false;
  bool desc = false;
  bool by_weights = false;    // weights come from the BY pattern
  bool binary = false;        // ALPHA compares all bytes (STORE) rather than up to a NUL
  size_t start = 0;           // the output window of the loaded items: [start, stop)
  size_t stop = 0;
};

// Loaded elements and their plan.
struct SortInput {
  std::vector<SortItem> items;
  // ALPHA BY values by item (nullopt: missing); sized only for an ALPHA sort by BY.
  std::vector<std::optional<std::string>> cmps;
  SortPlan plan;
  bool bad_score = false;  // a numeric weight did not parse
  // Set by SortItems: the item indexes of the window's positions, in order (empty: the loaded
  // order is the output order).
  std::vector<uint32_t> order;

  // Returns the item at output position `k`. REQUIRES: plan.start <= k < plan.stop.
  const SortItem& at(size_t k) const {
    return items[order.empty() ? k : order[k - plan.start]];
  }
};

// Loads the elements of the list, set or sorted set `value` (nullptr: a missing key, which
// sorts as an empty list) as `opts` asks (only the LIMIT window when the order is the source's
// own); `from_script`: the call comes from a script. Numeric sorts without BY get their scores.
// REQUIRES: value is null or of type list, set or zset.
SortInput LoadSortInput(const CompactObj* value, const SortOptions& opts, bool from_script);

// Sets the weight of item `i` from its BY value (nullopt: missing, weight 0 / sorts first);
// returns false (and sets bad_score) when numeric order was asked and the value is not a
// number.
bool ApplyWeight(SortInput& in, size_t i, std::optional<std::string_view> value);

// Orders the window (a partial sort when it is smaller than the items) into `order`. Sorts
// 16-byte keys (a score and an index), so that moves stay cheap and numeric comparisons read
// no element.
void SortItems(SortInput& in);

// Stores `values` as the list at `key` (any previous value and TTL replaced; event
// "sortstore"), or deletes `key` when `values` is empty (event "del"). Returns whether the key
// changed. Invalidates iterators.
OpResult<bool> StoreSortResult(DbSlice& db, std::string_view key,
                               std::span<const std::string_view> values,
                               const ListValue::Options& opts, int64_t now_ms);

}  // namespace dashkv
