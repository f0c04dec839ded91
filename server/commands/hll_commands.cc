// HyperLogLog commands (Redis 7.0 semantics): PFADD, PFCOUNT, PFMERGE, PFDEBUG and PFSELFTEST
// over string values in Redis's byte representation (core/hyperloglog.h).
// PFADD and PFDEBUG are single-key shard commands. PFCOUNT and PFMERGE run whole on one shard
// when their keys share it; otherwise PFCOUNT merges each shard's keys into that shard's
// registers in one parallel hop and counts their union on the connection's thread, and PFMERGE
// does the same and then stores the union at the destination in a second hop (the server's
// intent locks make both atomic). A single-key PFCOUNT writes the cardinality it computes into
// the value's header, as Redis does: a write through a mutable lookup (WATCH sees it), which is
// why PFCOUNT locks its keys exclusively.
#include <utility>  // before asio: awaitable.hpp uses std::exchange

#include <absl/random/random.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/hyperloglog.h"
#include "core/str_util.h"
#include "server/cmd_context.h"
#include "server/command_registry.h"
#include "server/commands/string_ops.h"
#include "server/config.h"
#include "server/storage/shard_set.h"
#include "server/tx/multi_key.h"
#include "server/tx/transaction.h"

namespace dashkv {

namespace {

size_t SparseMaxBytes(const Config& config) {
  return static_cast<size_t>(config.hll_sparse_max_bytes.load(std::memory_order_relaxed));
}

// Writes `hll` into `value` as a HyperLogLog value is kept: raw bytes (OBJECT ENCODING "raw").
void StoreHll(CompactObj& value, std::string_view hll) {
  value.SetString(hll);
  value.MarkRaw();
}

// The first failure among a command's keys: the argument index it happened at and why.
struct KeyError {
  uint32_t index = UINT32_MAX;  // UINT32_MAX: none
  OpStatus status = OpStatus::kOk;

  void Note(uint32_t i, OpStatus st) {
    if (i < index) *this = {i, st};
  }
  bool failed() const { return index != UINT32_MAX; }
};

// The union of some HyperLogLogs: their registers, whether one of them was dense (PFMERGE
// then stores a dense value), and the first key that was no valid HyperLogLog.
struct Union {
  HllRegisters registers{};
  bool any_dense = false;
  KeyError error;

  void Absorb(const Union& other) {
    for (uint32_t i = 0; i < kHllRegisters; ++i) {
      registers[i] = std::max(registers[i], other.registers[i]);
    }
    any_dense |= other.any_dense;
    if (other.error.failed()) error.Note(other.error.index, other.error.status);
  }
};

// Merges the HyperLogLogs at args[i] for i in `indexes` (ascending) into `u`, as Redis reads
// each key (a read lookup; a missing key is an empty HyperLogLog); stops at the first key that
// is not a valid HyperLogLog and records it.
template <typename Indexes>
void MergeKeys(DbSlice& db, CmdArgs args, const Indexes& indexes, int64_t now_ms, Union* u) {
  std::string scratch;
  for (uint32_t i : indexes) {
    OpResult<PrimeIterator> found = db.FindReadOnlyOfType(args[i], ObjType::kString, now_ms);
    if (!found) {
      if (found.status() == OpStatus::kKeyNotFound) continue;
      return u->error.Note(i, found.status());
    }
    std::string_view hll = (*found)->second.GetString(&scratch);
    if (!HllIsValid(hll)) return u->error.Note(i, OpStatus::kHllInvalid);
    if (HllEncodingOf(hll) == HllEncoding::kDense) u->any_dense = true;
    if (!HllMergeInto(hll, &u->registers)) return u->error.Note(i, OpStatus::kHllCorrupt);
  }
}

// Returns the argument indexes first..args.size()-1.
std::vector<uint32_t> IndexRange(CmdArgs args, uint32_t first) {
  std::vector<uint32_t> out;
  for (uint32_t i = first; i < args.size(); ++i) out.push_back(i);
  return out;
}

// PFADD key [element ...]
// Creates the key as an empty sparse HyperLogLog when missing (which counts as a change, as in
// Redis, even without elements). Raises `pfadd` when something changed.
void CmdPfAdd(CmdArgs args, ShardCmdContext& ctx) {
  OpResult<DbSlice::AddResult> res = FindOrAddString(ctx.db, args[1], ctx.now_ms);
  if (!res) return SendOpError(ctx, res.status());
  CompactObj& value = res->it->second;
  bool updated = res->inserted;
  if (updated) StoreHll(value, HllNewSparse());
  std::string scratch;
  std::string_view cur = value.GetString(&scratch);
  if (!HllIsValid(cur)) return ctx.SendStatus(OpStatus::kHllInvalid);
  OpStatus failure = OpStatus::kOk;
  if (HllEncodingOf(cur) == HllEncoding::kDense) {
    // In place: 12 KiB of registers are never copied.
    absl::Span<char> hll = value.ResizeString(cur.size());
    for (size_t i = 2; i < args.size(); ++i) {
      HllPoint pt = HllHashElement(args[i]);
      updated |= HllDenseSet(hll, pt.index, pt.count);
    }
    if (updated) HllInvalidateCache(hll);
  } else {
    // Sparse values are short (hll-sparse-max-bytes); a write may move their tail or turn
    // them dense, so they are edited as a copy.
    std::string hll(cur);
    const size_t max_bytes = SparseMaxBytes(ctx.config);
    bool changed = false;
    for (size_t i = 2; i < args.size(); ++i) {
      HllUpdate u = HllAdd(&hll, args[i], max_bytes);
      if (u == HllUpdate::kCorrupt) {
        failure = OpStatus::kHllCorrupt;  // the elements before it stay added, as in Redis
        break;
      }
      changed |= u == HllUpdate::kChanged;
    }
    if (updated && failure == OpStatus::kOk) HllInvalidateCache(absl::MakeSpan(hll));
    if (changed || updated) StoreHll(value, hll);
    updated |= changed;
  }
  if (failure != OpStatus::kOk) return ctx.SendStatus(failure);
  if (!updated) {
    ctx.NoChange();
    return ctx.rb.SendLong(0);
  }
  ctx.db.Notify(kNotifyString, "pfadd", args[1]);
  ctx.rb.SendLong(1);
}

// PFCOUNT of one key: the cached cardinality, or a new count that is then cached (a change of
// the value, through a mutable lookup).
void PfCountOne(std::string_view key, ShardCmdContext& ctx) {
  OpResult<PrimeIterator> found = ctx.db.FindReadOnlyOfType(key, ObjType::kString, ctx.now_ms);
  if (!found) {
    if (found.status() == OpStatus::kKeyNotFound) return ctx.rb.SendLong(0);
    return ctx.SendStatus(found.status());
  }
  std::string scratch;
  std::string_view hll = (*found)->second.GetString(&scratch);
  if (!HllIsValid(hll)) return ctx.SendStatus(OpStatus::kHllInvalid);
  if (std::optional<uint64_t> cached = HllCachedCardinality(hll)) {
    return ctx.rb.SendLong(static_cast<int64_t>(*cached));
  }
  std::optional<uint64_t> card = HllCount(hll);
  if (!card) return ctx.SendStatus(OpStatus::kHllCorrupt);
  PrimeIterator it = ctx.db.FindMutable(key, ctx.now_ms);
  HllStoreCardinality(it->second.ResizeString(hll.size()), *card);
  ctx.rb.SendLong(static_cast<int64_t>(*card));  // a count past 2^63 reads negative, as in Redis
}

// PFCOUNT key [key ...] with all keys on this shard. Several keys: the count of their union,
// computed on the side (no key changes).
void CmdPfCount(CmdArgs args, ShardCmdContext& ctx) {
  if (args.size() == 2) return PfCountOne(args[1], ctx);
  auto u = std::make_unique<Union>();
  MergeKeys(ctx.db, args, IndexRange(args, 1), ctx.now_ms, u.get());
  if (u->error.failed()) return ctx.SendStatus(u->error.status);
  ctx.rb.SendLong(static_cast<int64_t>(HllCountRegisters(u->registers)));
}

// PFCOUNT with keys on several shards: one parallel hop merges each shard's keys.
boost::asio::awaitable<void> CmdPfCountMulti(CmdArgs args, ConnCmdContext& ctx) {
  ShardSet& ss = ctx.shard_set();
  KeysByShard groups(ss, args, 1, args.size() - 1);
  std::vector<Union> parts(ss.size());
  const unsigned db = ctx.state.db;
  const int64_t now = ctx.now_ms;
  co_await OnlyHop(ss, ctx.locks, groups.shards, [&](Shard& shard) {
    Union& part = parts[shard.index()];
    part = Union{};  // a read may run twice
    MergeKeys(shard.db(db), args, groups.indexes[shard.index()], now, &part);
  });
  Union& total = parts[groups.shards[0]];
  for (unsigned sid : groups.shards) {
    if (sid != groups.shards[0]) total.Absorb(parts[sid]);
  }
  if (total.error.failed()) co_return ctx.SendStatus(total.error.status);
  ctx.rb.SendLong(static_cast<int64_t>(HllCountRegisters(total.registers)));
}

// Stores the union `u` at `dest` as PFMERGE does: into the existing HyperLogLog (made dense
// first when a source was dense) or a new sparse one, register by register in index order
// (so a sparse result has Redis's exact bytes), then marks its cache stale and raises `pfadd`.
// REQUIRES: `dest`, when present, was read as a valid HyperLogLog under the command's locks.
OpStatus StoreUnion(DbSlice& db, std::string_view dest, const Union& u, size_t max_bytes,
                    int64_t now_ms) {
  OpResult<DbSlice::AddResult> res = db.FindOrAddOfType(dest, ObjType::kString, now_ms);
  if (!res) return res.status();
  CompactObj& value = res->it->second;
  std::string hll = res->inserted ? HllNewSparse() : CopyString(value);
  if (!HllIsValid(hll)) return OpStatus::kHllInvalid;
  if (u.any_dense && HllEncodingOf(hll) == HllEncoding::kSparse) {
    std::optional<std::string> dense = HllSparseToDense(hll);
    if (!dense) return OpStatus::kHllCorrupt;
    hll = std::move(*dense);
  }
  for (uint32_t i = 0; i < kHllRegisters; ++i) {
    if (u.registers[i] != 0) (void)HllSet(&hll, i, u.registers[i], max_bytes);
  }
  HllInvalidateCache(absl::MakeSpan(hll));
  StoreHll(value, hll);
  db.Notify(kNotifyString, "pfadd", dest);  // Redis's event for PFMERGE too
  return OpStatus::kOk;
}

// PFMERGE destkey [sourcekey ...] with all keys on this shard. The destination is a source
// too.
void CmdPfMerge(CmdArgs args, ShardCmdContext& ctx) {
  auto u = std::make_unique<Union>();
  MergeKeys(ctx.db, args, IndexRange(args, 1), ctx.now_ms, u.get());
  if (u->error.failed()) return ctx.SendStatus(u->error.status);
  OpStatus st = StoreUnion(ctx.db, args[1], *u, SparseMaxBytes(ctx.config), ctx.now_ms);
  if (st != OpStatus::kOk) return ctx.SendStatus(st);
  ctx.rb.SendOk();
}

// PFMERGE with keys on several shards: a parallel hop merges each shard's keys, a second one
// stores the union.
boost::asio::awaitable<void> CmdPfMergeMulti(CmdArgs args, ConnCmdContext& ctx) {
  ShardSet& ss = ctx.shard_set();
  KeysByShard groups(ss, args, 1, args.size() - 1);
  std::vector<Union> parts(ss.size());
  const unsigned db = ctx.state.db;
  const int64_t now = ctx.now_ms;
  co_await ss.AwaitMany(groups.shards, [&](Shard& shard) {
    MergeKeys(shard.db(db), args, groups.indexes[shard.index()], now, &parts[shard.index()]);
  });
  Union& total = parts[groups.shards[0]];
  for (unsigned sid : groups.shards) {
    if (sid != groups.shards[0]) total.Absorb(parts[sid]);
  }
  if (total.error.failed()) co_return ctx.SendStatus(total.error.status);
  const size_t max_bytes = SparseMaxBytes(ctx.config());
  std::string_view dest = args[1];
  OpStatus st = co_await ss.Await(ss.ShardOf(dest), [&](Shard& shard) {
    return StoreUnion(shard.db(db), dest, total, max_bytes, now);
  });
  if (st != OpStatus::kOk) co_return ctx.SendStatus(st);
  ctx.rb.SendOk();
}

// Returns the dense bytes of the HyperLogLog `hll` at `key`, storing them there first when it
// is sparse (`converted`); kHllCorrupt when its opcodes are. PFDEBUG's conversions touch no
// watcher, as in Redis.
OpResult<std::string> MakeDense(ShardCmdContext& ctx, std::string_view key, std::string_view hll,
                                bool* converted) {
  if (HllEncodingOf(hll) == HllEncoding::kDense) return std::string(hll);
  std::optional<std::string> dense = HllSparseToDense(hll);
  if (!dense) return OpStatus::kHllCorrupt;
  StoreHll(ctx.db.FindMutable(key, ctx.now_ms)->second, *dense);
  ctx.NoChange();
  *converted = true;
  return std::move(*dense);
}

// PFDEBUG GETREG|DECODE|ENCODING|TODENSE key
void CmdPfDebug(CmdArgs args, ShardCmdContext& ctx) {
  std::string_view key = args[2];
  PrimeIterator it = ctx.db.FindReadOnlyQuiet(key, ctx.now_ms);
  if (it.is_done()) return ctx.SendStatus(OpStatus::kHllNoKey);
  if (it->second.type() != ObjType::kString) return ctx.SendStatus(OpStatus::kWrongType);
  std::string scratch;
  std::string_view hll = it->second.GetString(&scratch);
  if (!HllIsValid(hll)) return ctx.SendStatus(OpStatus::kHllInvalid);
  std::string_view sub = args[1];
  bool converted = false;
  if (EqualsIgnoreCase(sub, "GETREG")) {
    OpResult<std::string> dense = MakeDense(ctx, key, hll, &converted);
    if (!dense) return ctx.SendStatus(dense.status());
    ctx.rb.StartArray(kHllRegisters);
    for (uint32_t i = 0; i < kHllRegisters; ++i) ctx.rb.SendLong(HllDenseGet(*dense, i));
  } else if (EqualsIgnoreCase(sub, "DECODE")) {
    if (HllEncodingOf(hll) != HllEncoding::kSparse) {
      return ctx.SendStatus(OpStatus::kHllNotSparse);
    }
    ctx.rb.SendBulk(HllDecodeSparse(hll));
  } else if (EqualsIgnoreCase(sub, "ENCODING")) {
    ctx.rb.SendSimpleString(HllEncodingOf(hll) == HllEncoding::kDense ? "dense" : "sparse");
  } else if (EqualsIgnoreCase(sub, "TODENSE")) {
    OpResult<std::string> dense = MakeDense(ctx, key, hll, &converted);
    if (!dense) return ctx.SendStatus(dense.status());
    ctx.rb.SendLong(converted ? 1 : 0);
  } else {
    ctx.rb.SendError(StrCat("ERR Unknown PFDEBUG subcommand '", sub, "'"));
  }
}

// PFSELFTEST
// Runs on the connection's thread and keeps it busy for a fraction of a second (10^7
// additions), as Redis's keeps its one thread; it touches no data.
void CmdPfSelfTest(CmdArgs, ConnCmdContext& ctx) {
  thread_local absl::BitGen gen;
  std::string failure = HllSelfTest(absl::Uniform<uint64_t>(gen), SparseMaxBytes(ctx.config()));
  if (!failure.empty()) return ctx.rb.SendError(StrCat("ERR ", failure));
  ctx.rb.SendOk();
}

CommandSpec Spec(std::string name, int arity, uint32_t flags, int first_key, int last_key,
                 std::vector<std::string_view> categories, std::string_view summary) {
  return MakeSpec(std::move(name), arity, flags, first_key, last_key, std::move(categories),
                  "hyperloglog", "2.8.9", summary);
}

}  // namespace

void RegisterHllCommands(CommandRegistry* r) {
  CommandSpec pfadd = Spec("pfadd", -2, kCmdWrite | kCmdDenyOom | kCmdFast, 1, 1,
                           {"write", "hyperloglog", "fast"},
                           "Adds the specified elements to the specified HyperLogLog.");
  pfadd.key_specs = {KeySpec::AtIndex({"RW", "insert"}, 1)};
  r->RegisterShard(std::move(pfadd), CmdPfAdd);

  CommandSpec pfcount = Spec("pfcount", -2, kCmdReadOnly | kCmdLocksExclusive | kCmdMayReplicate, 1, -1,
                             {"read", "hyperloglog", "slow"},
                             "Return the approximated cardinality of the set(s) observed by the "
                             "HyperLogLog at key(s).");
  pfcount.key_specs = {KeySpec::AtIndex({"RW", "access"}, 1, -1)};
  pfcount.key_specs[0].notes =
      "RW because it may change the internal representation of the key, and propagate to "
      "replicas";
  r->RegisterShard(OneHop(std::move(pfcount)), CmdPfCount, CmdPfCountMulti);

  CommandSpec pfmerge = Spec("pfmerge", -2, kCmdWrite | kCmdDenyOom, 1, -1,
                             {"write", "hyperloglog", "slow"},
                             "Merge N different HyperLogLogs into a single one.");
  pfmerge.key_specs = {KeySpec::AtIndex({"RW", "access", "insert"}, 1),
                       KeySpec::AtIndex({"RO", "access"}, 2, -1)};
  r->RegisterShard(std::move(pfmerge), CmdPfMerge, CmdPfMergeMulti);

  CommandSpec pfdebug = Spec("pfdebug", 3, kCmdWrite | kCmdDenyOom | kCmdAdmin, 2, 2,
                             {"write", "hyperloglog", "admin", "slow", "dangerous"},
                             "Internal commands for debugging HyperLogLog values");
  pfdebug.key_specs = {KeySpec::AtIndex({"RW", "access"}, 2)};
  r->RegisterShard(std::move(pfdebug), CmdPfDebug);

  r->Register(WithConnHandler(Spec("pfselftest", 1, kCmdAdmin, 0, 0,
                                   {"hyperloglog", "admin", "slow", "dangerous"},
                                   "An internal command for testing HyperLogLog values"),
                              CmdPfSelfTest));
}

}  // namespace dashkv
