// SORT and SORT_RO (Redis 7.0 semantics: server/commands/sort_ops.h).
// A call runs whole on its source key's shard, like a single-key read, when everything it
// touches lives there: its STORE destination, and the keys its BY/GET patterns name (a pattern
// whose hash tag is complete before its '*'; always at --threads 1). Otherwise it runs as a
// coordinator: the elements are read on the source's shard, weights and GET values on the
// shards of the keys the patterns name (grouped per shard, a bounded number of lookups per
// hop), the ordering happens on the connection's thread, and STORE writes on the
// destination's shard. Its locks: its keys (the source, the destination), or, when its
// patterns read keys, every shard whole — shared, exclusive with STORE — so that no writer
// runs between its reads (as atomic as Redis's single thread).
#include <algorithm>
#include <deque>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "server/cmd_context.h"
#include "server/command_registry.h"
#include "server/commands/list_ops.h"
#include "server/commands/sort_ops.h"
#include "server/conn_state.h"
#include "server/storage/shard_set.h"

namespace dashkv {

namespace {

using boost::asio::awaitable;

// Lookups (weights or GET values) a coordinator sends per round of hops: bounds both the
// memory of a round and how long one hop holds a shard's thread.
constexpr size_t kLookupsPerRound = 8192;

// Where the sorted output goes: the reply, or the list STORE writes.
class SortSink {
 public:
  SortSink(io::ReplyBuilder& rb, bool store) : rb_(rb), store_(store) {}

  // Adds an element of the sorted items (which outlive the sink).
  void AddElement(std::string_view v) {
    if (store_) {
      values_.push_back(v);
    } else {
      rb_.SendBulk(v);
    }
  }
  // Adds a GET value (valid during the call only), or a missing one (STORE keeps "").
  void AddValue(std::optional<std::string_view> v) {
    if (store_) {
      values_.push_back(v ? std::string_view(owned_.emplace_back(*v)) : std::string_view());
    } else if (v) {
      rb_.SendBulk(*v);
    } else {
      rb_.SendNull();
    }
  }
  std::span<const std::string_view> values() const { return values_; }

 private:
  io::ReplyBuilder& rb_;
  const bool store_;
  std::vector<std::string_view> values_;
  std::deque<std::string> owned_;  // the GET values STORE keeps (stable addresses)
};

// Returns the number of output entries per element (the GETs, or the element itself).
size_t PerRow(const SortOptions& opts) { return opts.gets.empty() ? 1 : opts.gets.size(); }

// Returns the source entry of a SORT on its shard (nullptr when missing), or kWrongType.
OpResult<const CompactObj*> FindSource(DbSlice& db, std::string_view key, bool quiet,
                                       int64_t now_ms) {
  PrimeIterator it = quiet ? db.FindReadOnlyQuiet(key, now_ms) : db.FindReadOnly(key, now_ms);
  if (it.is_done()) return static_cast<const CompactObj*>(nullptr);
  const ObjType type = it->second.type();
  if (type != ObjType::kList && type != ObjType::kSet && type != ObjType::kZset) {
    return OpStatus::kWrongType;
  }
  return &it->second;
}

// SORT key [BY pattern] [LIMIT offset count] [GET pattern ...] [ASC|DESC] [ALPHA]
//   [STORE destination], with everything it touches on this shard (RouteSort).
template <bool kReadOnly>
void CmdSort(CmdArgs args, ShardCmdContext& ctx) {
  OpResult<SortOptions> opts = ParseSortOptions(args, kReadOnly);
  if (!opts) return ctx.SendStatus(opts.status());
  const bool quiet = opts->store.has_value();
  const int64_t now = ctx.now_ms;
  OpResult<const CompactObj*> source = FindSource(ctx.db, args[1], quiet, now);
  if (!source) return ctx.SendStatus(source.status());
  SortInput in = LoadSortInput(*source, *opts, ctx.from_script);
  std::string scratch;
  if (in.plan.sort && in.plan.by_weights) {
    for (size_t i = 0; i < in.items.size(); ++i) {
      const PatternRef ref = ResolvePattern(*opts->by, in.items[i].elem);
      ApplyWeight(in, i, ReadPatternValue(ctx.db, ref, now, quiet, &scratch));
    }
  }
  ctx.NoChange();  // until STORE changes its destination
  if (in.bad_score) return ctx.SendStatus(OpStatus::kSortNotDouble);
  SortItems(in);
  const size_t rows = in.plan.stop - in.plan.start;
  if (!opts->store) ctx.rb.StartArray(rows * PerRow(*opts));
  SortSink sink(ctx.rb, opts->store.has_value());
  for (size_t i = in.plan.start; i < in.plan.stop; ++i) {
    const std::string& elem = in.at(i).elem;
    if (opts->gets.empty()) sink.AddElement(elem);
    for (std::string_view g : opts->gets) {
      if (IsSelfPattern(g)) {
        sink.AddElement(elem);
      } else if (!PatternReadsKeys(g)) {
        sink.AddValue(std::nullopt);
      } else {
        sink.AddValue(ReadPatternValue(ctx.db, ResolvePattern(g, elem), now, quiet, &scratch));
      }
    }
  }
  if (!opts->store) return;
  OpResult<bool> changed =
      StoreSortResult(ctx.db, *opts->store, sink.values(), ListOptions(ctx.config), now);
  if (!changed) return ctx.SendStatus(changed.status());
  ctx.changed = *changed;
  ctx.rb.SendLong(static_cast<int64_t>(sink.values().size()));
}

// Reads the values `refs` name on their shards (one hop per shard, in parallel); out[i] gets
// refs[i]'s value, or stays nullopt.
awaitable<void> ReadOnShards(ShardSet& ss, unsigned db, int64_t now, bool quiet,
                             std::span<const PatternRef> refs,
                             std::vector<std::optional<std::string>>& out) {
  out.assign(refs.size(), std::nullopt);
  std::vector<std::vector<uint32_t>> by_shard(ss.size());
  std::vector<unsigned> shards;
  for (size_t i = 0; i < refs.size(); ++i) {
    const unsigned sid = ss.ShardOf(refs[i].key);
    if (by_shard[sid].empty()) shards.push_back(sid);
    by_shard[sid].push_back(static_cast<uint32_t>(i));
  }
  co_await ss.AwaitMany(shards, [&](Shard& shard) {
    DbSlice& slice = shard.db(db);
    std::string scratch;
    for (uint32_t i : by_shard[shard.index()]) {
      if (auto v = ReadPatternValue(slice, refs[i], now, quiet, &scratch)) out[i].emplace(*v);
    }
  });
}

// Fills the BY weights of every item, a bounded round of lookups at a time (a numeric weight
// that does not parse sets in.bad_score).
awaitable<void> FillWeights(ShardSet& ss, unsigned db, int64_t now, bool quiet,
                            std::string_view by, SortInput& in) {
  std::vector<PatternRef> refs;
  std::vector<std::optional<std::string>> values;
  for (size_t base = 0; base < in.items.size(); base += kLookupsPerRound) {
    const size_t end = std::min(in.items.size(), base + kLookupsPerRound);
    refs.clear();
    for (size_t i = base; i < end; ++i) refs.push_back(ResolvePattern(by, in.items[i].elem));
    co_await ReadOnShards(ss, db, now, quiet, refs, values);
    for (size_t i = base; i < end; ++i) {
      const std::optional<std::string>& v = values[i - base];
      ApplyWeight(in, i, v ? std::optional<std::string_view>(*v) : std::nullopt);
    }
  }
}

// Sends (or collects for STORE) the output of the sorted window: the elements, or their GET
// values read on their shards, a bounded round of lookups at a time.
awaitable<void> EmitOutput(ShardSet& ss, unsigned db, int64_t now, bool quiet,
                           const SortOptions& opts, const SortInput& in, SortSink& sink) {
  size_t reading = 0;  // GET patterns that read keys
  for (std::string_view g : opts.gets) reading += PatternReadsKeys(g) && !IsSelfPattern(g);
  const size_t rows_per_round = reading == 0 ? in.items.size() + 1
                                             : std::max<size_t>(1, kLookupsPerRound / reading);
  std::vector<PatternRef> refs;
  std::vector<std::optional<std::string>> values;
  for (size_t base = in.plan.start; base < in.plan.stop; base += rows_per_round) {
    const size_t end = std::min(in.plan.stop, base + rows_per_round);
    refs.clear();
    for (size_t i = base; reading > 0 && i < end; ++i) {
      for (std::string_view g : opts.gets) {
        if (PatternReadsKeys(g) && !IsSelfPattern(g)) {
          refs.push_back(ResolvePattern(g, in.at(i).elem));
        }
      }
    }
    if (!refs.empty()) co_await ReadOnShards(ss, db, now, quiet, refs, values);
    size_t next = 0;
    for (size_t i = base; i < end; ++i) {
      const std::string& elem = in.at(i).elem;
      if (opts.gets.empty()) sink.AddElement(elem);
      for (std::string_view g : opts.gets) {
        if (IsSelfPattern(g)) {
          sink.AddElement(elem);
        } else if (!PatternReadsKeys(g)) {
          sink.AddValue(std::nullopt);
        } else {
          const std::optional<std::string>& v = values[next++];
          sink.AddValue(v ? std::optional<std::string_view>(*v) : std::nullopt);
        }
      }
    }
  }
}

// SORT / SORT_RO when the call touches keys on several shards (see the file comment); runs
// under the locks RunCoordCommand took (or the EXEC's, or the script's).
template <bool kReadOnly>
awaitable<void> CmdSortMulti(CmdArgs args, ConnCmdContext& ctx) {
  OpResult<SortOptions> opts = ParseSortOptions(args, kReadOnly);
  if (!opts) co_return ctx.SendStatus(opts.status());
  ShardSet& ss = ctx.shard_set();
  const unsigned db = ctx.state.db;
  const int64_t now = ctx.now_ms;
  const bool quiet = opts->store.has_value();
  const bool from_script = ctx.from_script;
  OpResult<SortInput> loaded =
      co_await ss.Await(ss.ShardOf(args[1]), [&](Shard& shard) -> OpResult<SortInput> {
        OpResult<const CompactObj*> source = FindSource(shard.db(db), args[1], quiet, now);
        if (!source) return source.status();
        return LoadSortInput(*source, *opts, from_script);
      });
  if (!loaded) co_return ctx.SendStatus(loaded.status());
  SortInput& in = *loaded;
  if (in.plan.sort && in.plan.by_weights) {
    co_await FillWeights(ss, db, now, quiet, *opts->by, in);
  }
  if (in.bad_score) co_return ctx.SendStatus(OpStatus::kSortNotDouble);
  SortItems(in);
  const size_t rows = in.plan.stop - in.plan.start;
  if (!opts->store) ctx.rb.StartArray(rows * PerRow(*opts));
  SortSink sink(ctx.rb, opts->store.has_value());
  co_await EmitOutput(ss, db, now, quiet, *opts, in, sink);
  if (!opts->store) co_return;
  const ListValue::Options list_opts = ListOptions(ctx.config());
  OpResult<bool> stored = co_await ss.Await(ss.ShardOf(*opts->store), [&](Shard& shard) {
    return StoreSortResult(shard.db(db), *opts->store, sink.values(), list_opts, now);
  });
  if (!stored) co_return ctx.SendStatus(stored.status());
  ctx.rb.SendLong(static_cast<int64_t>(sink.values().size()));
}

// The shard a call runs on whole (CommandSpec::shard_route): its source's, when its STORE
// destination and every key its patterns can name live there too.
template <bool kReadOnly>
std::optional<unsigned> RouteSort(CmdArgs args, const ServerServices& services) {
  const ShardSet& ss = services.shard_set;
  const unsigned sid = ss.ShardOf(args[1]);
  if (ss.size() == 1) return sid;
  OpResult<SortOptions> opts = ParseSortOptions(args, kReadOnly);
  if (!opts) return sid;  // the shard handler replies with the error
  if (opts->store && ss.ShardOf(*opts->store) != sid) return std::nullopt;
  auto here = [&](std::string_view pattern) {
    std::optional<unsigned> s = PatternShard(pattern, ss);
    return s && *s == sid;
  };
  if (opts->by_reads_keys() && !here(*opts->by)) return std::nullopt;
  for (std::string_view g : opts->gets) {
    if (PatternReadsKeys(g) && !here(g)) return std::nullopt;
  }
  return sid;
}

// CommandSpec::whole_keyspace: a call whose patterns read keys locks every shard.
template <bool kReadOnly>
std::optional<LockMode> SortWholeKeyspace(CmdArgs args) {
  OpResult<SortOptions> opts = ParseSortOptions(args, kReadOnly);
  if (!opts || !opts->reads_keys()) return std::nullopt;
  return opts->store ? LockMode::kExclusive : LockMode::kShared;
}

KeyIndexes SortKeys(CmdArgs args) {
  KeyIndexes out;
  for (uint32_t k : SortKeyIndexes(args)) out.push_back(k);
  return out;
}

constexpr std::string_view kPatternNotes =
    "For the optional BY/GET keyword. It is marked 'unknown' because the key names derive from "
    "the content of the key we sort";
constexpr std::string_view kStoreNotes =
    "For the optional STORE keyword. It is marked 'unknown' because the keyword can appear "
    "anywhere in the argument array";

template <bool kReadOnly>
CommandSpec SortSpec(CommandSpec s) {
  s.key_specs.push_back(KeySpec::AtIndex({"RO", "access"}, 1));
  s.key_specs.push_back(KeySpec::Unknown({"RO", "access"}, kPatternNotes));
  if (!kReadOnly) {
    s.key_specs.push_back(KeySpec::Unknown({"OW", "update"}, kStoreNotes));
    s.keys_fn = SortKeys;
  }
  s.shard_handler = CmdSort<kReadOnly>;
  s.shard_route = RouteSort<kReadOnly>;
  s.whole_keyspace = SortWholeKeyspace<kReadOnly>;
  return s;
}

}  // namespace

void RegisterSortCommands(CommandRegistry* r) {
  r->RegisterCoord(
      SortSpec<false>(MakeSpec("sort", -2, kCmdWrite | kCmdDenyOom, 1, 1,
                               {"write", "set", "sortedset", "list", "slow", "dangerous"},
                               "generic", "1.0.0",
                               "Sort the elements in a list, set or sorted set")),
      CmdSortMulti<false>);
  r->RegisterCoord(
      SortSpec<true>(MakeSpec("sort_ro", -2, kCmdReadOnly, 1, 1,
                              {"read", "set", "sortedset", "list", "slow", "dangerous"},
                              "generic", "7.0.0",
                              "Sort the elements in a list, set or sorted set. Read-only "
                              "variant of SORT.")),
      CmdSortMulti<true>);
}

}  // namespace dashkv
