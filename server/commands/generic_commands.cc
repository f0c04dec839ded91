// Keyspace commands: DEL, UNLINK, EXISTS, TOUCH, TYPE, the EXPIRE family, TTL family, PERSIST,
// KEYS, SCAN, RANDOMKEY and OBJECT.
#include <absl/random/random.h>
#include <absl/strings/numbers.h>

#include "core/str_util.h"
#include "core/glob.h"
#include "server/cmd_context.h"
#include "server/command_registry.h"
#include "server/tx/multi_key.h"
#include "server/config.h"
#include "server/storage/shard_set.h"

namespace dashkv {

namespace {

using boost::asio::awaitable;

std::string_view TypeName(const CompactObj& value) {
  switch (value.type()) {
    case ObjType::kString: return "string";
    case ObjType::kList: return "list";
    case ObjType::kHash: return "hash";
    case ObjType::kSet: return "set";
    case ObjType::kZset: return "zset";
    case ObjType::kStream: return "stream";
  }
  return "none";
}

// Deletes `key` with its `del` event; returns 1 if it was there.
int64_t DelOne(DbSlice& db, std::string_view key, int64_t now) {
  if (!db.EraseKey(key, now, RemoveReason::kDeleted)) return 0;
  db.Notify(kNotifyGeneric, "del", key);
  return 1;
}
// A read of `key` (a keyspace hit or miss, `keymiss`) that leaves its access record, as Redis
// 7.0's EXISTS.
int64_t ExistsOne(DbSlice& db, std::string_view key, int64_t now) {
  return !db.FindReadOnly(key, now, Access::kNoTouch).is_done();
}
// As ExistsOne, updating the access record: TOUCH (a CLIENT NO-TOUCH client's too).
int64_t TouchOne(DbSlice& db, std::string_view key, int64_t now) {
  PrimeIterator it = db.FindReadOnly(key, now, Access::kNoTouch);
  if (it.is_done()) return 0;
  db.Touch(it, now);
  return 1;
}

// DEL/UNLINK/EXISTS/TOUCH on one shard (all keys local to it).
void CmdDelShard(CmdArgs args, ShardCmdContext& ctx) {
  int64_t n = 0;
  for (size_t i = 1; i < args.size(); ++i) n += DelOne(ctx.db, args[i], ctx.now_ms);
  ctx.rb.SendLong(n);
}
void CmdExistsShard(CmdArgs args, ShardCmdContext& ctx) {
  int64_t n = 0;
  for (size_t i = 1; i < args.size(); ++i) n += ExistsOne(ctx.db, args[i], ctx.now_ms);
  ctx.rb.SendLong(n);
}
void CmdTouchShard(CmdArgs args, ShardCmdContext& ctx) {
  int64_t n = 0;
  for (size_t i = 1; i < args.size(); ++i) n += TouchOne(ctx.db, args[i], ctx.now_ms);
  ctx.rb.SendLong(n);
}
awaitable<void> CmdDelMulti(CmdArgs args, ConnCmdContext& ctx) {
  ctx.rb.SendLong(co_await SumOverKeys(ctx, args, 1, args.size() - 1, DelOne));
}
awaitable<void> CmdExistsMulti(CmdArgs args, ConnCmdContext& ctx) {
  ctx.rb.SendLong(co_await SumOverKeys(ctx, args, 1, args.size() - 1, ExistsOne));
}
awaitable<void> CmdTouchMulti(CmdArgs args, ConnCmdContext& ctx) {
  ctx.rb.SendLong(co_await SumOverKeys(ctx, args, 1, args.size() - 1, TouchOne));
}

constexpr MultiShardOps kDelOps{nullptr, SumPart<DelOne>, SumCombine};
constexpr MultiShardOps kExistsOps{nullptr, SumPart<ExistsOne>, SumCombine};
constexpr MultiShardOps kTouchOps{nullptr, SumPart<TouchOne>, SumCombine};

// Returns `spec` whose calls over several shards may join a multi-shard group with `ops`.
CommandSpec WithParts(CommandSpec spec, const MultiShardOps* ops) {
  spec.multi_ops = ops;
  return spec;
}

// TYPE key
void CmdType(CmdArgs args, ShardCmdContext& ctx) {
  // Redis 7.0 counts it and raises keymiss, but leaves the access record.
  PrimeIterator it = ctx.db.FindReadOnly(args[1], ctx.now_ms, Access::kNoTouch);
  ctx.rb.SendSimpleString(it.is_done() ? "none" : TypeName(it->second));
}

// Conditions of EXPIRE and friends (Redis 7).
enum ExpireFlag : unsigned { kExpNx = 1, kExpXx = 2, kExpGt = 4, kExpLt = 8 };

// Parses [NX|XX|GT|LT] from args[3..]; returns the flags or sends the error and returns nullopt.
std::optional<unsigned> ParseExpireFlags(CmdArgs args, io::ReplyBuilder& rb) {
  unsigned flags = 0;
  for (size_t i = 3; i < args.size(); ++i) {
    std::string opt = AsciiStrToUpper(args[i]);
    if (opt == "NX") flags |= kExpNx;
    else if (opt == "XX") flags |= kExpXx;
    else if (opt == "GT") flags |= kExpGt;
    else if (opt == "LT") flags |= kExpLt;
    else {
      rb.SendError(StrCat("ERR Unsupported option ", args[i]));
      return std::nullopt;
    }
  }
  if ((flags & kExpNx) && (flags & (kExpXx | kExpGt | kExpLt))) {
    rb.SendError("ERR NX and XX, GT or LT options at the same time are not compatible");
    return std::nullopt;
  }
  if ((flags & kExpGt) && (flags & kExpLt)) {
    rb.SendError("ERR GT and LT options at the same time are not compatible");
    return std::nullopt;
  }
  return flags;
}

// EXPIRE/PEXPIRE/EXPIREAT/PEXPIREAT key time [NX|XX|GT|LT]
template <bool kMillis, bool kAbsolute>
void CmdExpireGeneric(CmdArgs args, ShardCmdContext& ctx) {
  std::optional<unsigned> flags = ParseExpireFlags(args, ctx.rb);
  if (!flags) return;
  std::optional<int64_t> when = ParseInt64(args[2]);
  if (!when) return ctx.SendStatus(OpStatus::kNotAnInteger);
  int64_t ms = *when;
  if (!kMillis) {
    if (ms > INT64_MAX / 1000 || ms < INT64_MIN / 1000) {
      return ctx.rb.SendError(InvalidExpireText(ctx.spec.name));
    }
    ms *= 1000;
  }
  int64_t base = kAbsolute ? 0 : ctx.now_ms;
  if (ms > INT64_MAX - base) return ctx.rb.SendError(InvalidExpireText(ctx.spec.name));
  ms += base;

  std::string_view key = args[1];
  PrimeIterator it = ctx.db.FindReadOnlyQuiet(key, ctx.now_ms);
  if (it.is_done()) {
    ctx.NoChange();
    return ctx.rb.SendLong(0);
  }
  int64_t current = it->first.HasExpire() ? it->first.ExpireTimeMs() : -1;
  if (((*flags & kExpNx) && current != -1) || ((*flags & kExpXx) && current == -1) ||
      ((*flags & kExpGt) && (current == -1 || ms <= current)) ||
      ((*flags & kExpLt) && current != -1 && ms >= current)) {
    ctx.NoChange();
    return ctx.rb.SendLong(0);
  }
  if (ms <= ctx.now_ms) {  // already past: Redis deletes the key at once (`del`)
    ctx.db.Erase(it, RemoveReason::kDeleted);
    ctx.db.Notify(kNotifyGeneric, "del", key);
  } else {
    ctx.db.SetExpire(ctx.db.FindMutable(key, ctx.now_ms), ms);
    ctx.db.Notify(kNotifyGeneric, "expire", key);
  }
  ctx.rb.SendLong(1);
}

// TTL/PTTL/EXPIRETIME/PEXPIRETIME key
template <bool kMillis, bool kAbsolute>
void CmdTtlGeneric(CmdArgs args, ShardCmdContext& ctx) {
  // Redis 7.0 counts it and raises keymiss, but leaves the access record.
  PrimeIterator it = ctx.db.FindReadOnly(args[1], ctx.now_ms, Access::kNoTouch);
  if (it.is_done()) return ctx.rb.SendLong(-2);
  if (!it->first.HasExpire()) return ctx.rb.SendLong(-1);
  int64_t deadline = it->first.ExpireTimeMs();
  if (kAbsolute) return ctx.rb.SendLong(kMillis ? deadline : (deadline + 500) / 1000);
  int64_t ttl = std::max<int64_t>(0, deadline - ctx.now_ms);
  ctx.rb.SendLong(kMillis ? ttl : (ttl + 500) / 1000);
}

// PERSIST key
void CmdPersist(CmdArgs args, ShardCmdContext& ctx) {
  PrimeIterator it = ctx.db.FindReadOnlyQuiet(args[1], ctx.now_ms);
  if (it.is_done() || !it->first.HasExpire()) {
    ctx.NoChange();
    return ctx.rb.SendLong(0);
  }
  ctx.db.SetExpire(ctx.db.FindMutable(args[1], ctx.now_ms), 0);
  ctx.db.Notify(kNotifyGeneric, "persist", args[1]);
  ctx.rb.SendLong(1);
}

// KEYS pattern
awaitable<void> CmdKeys(CmdArgs args, ConnCmdContext& ctx) {
  ShardSet& ss = ctx.shard_set();
  std::vector<std::vector<std::string>> found(ss.size());
  std::string_view pattern = args[1];
  bool all = pattern == "*";
  unsigned db = ctx.state.db;
  int64_t now = ctx.now_ms;
  co_await ss.AwaitAll([&](Shard& shard) {
    DbSlice* slice = shard.db_if_exists(db);
    if (slice == nullptr) return;
    std::string scratch;
    auto& out = found[shard.index()];
    uint64_t cursor = 0;
    do {
      cursor = slice->Scan(cursor, now, [&](PrimeIterator it) {
        std::string_view key = it->first.GetString(&scratch);
        if (all || GlobMatch(pattern, key)) out.emplace_back(key);
      });
    } while (cursor != 0);
  });
  size_t total = 0;
  for (const auto& v : found) total += v.size();
  ctx.rb.StartArray(total);
  for (const auto& v : found) {
    for (const auto& k : v) ctx.rb.SendBulk(k);
  }
}

// SCAN cursors: the table cursor (48 bits) and the shard in the bits above it.
constexpr unsigned kShardShift = 48;

// SCAN cursor [MATCH pattern] [COUNT count] [TYPE type]
awaitable<void> CmdScan(CmdArgs args, ConnCmdContext& ctx) {
  const std::optional<uint64_t> parsed_cursor = ParseUint64(args[1]);
  if (!parsed_cursor) co_return ctx.SendStatus(OpStatus::kInvalidCursor);
  const uint64_t cursor = *parsed_cursor;
  std::string_view pattern;
  std::string type;
  int64_t count = 10;
  ArgParser parser(args, 2);
  while (parser.HasNext()) {
    if (parser.Check("MATCH")) {
      pattern = parser.Next();
    } else if (parser.Check("COUNT")) {
      count = parser.NextInt();
      if (!parser.HasError() && count < 1) parser.SetError(OpStatus::kSyntaxError);
    } else if (parser.Check("TYPE")) {
      type = AsciiStrToLower(parser.Next());
    } else {
      parser.SetError(OpStatus::kSyntaxError);
    }
  }
  if (parser.HasError()) co_return ctx.SendStatus(parser.error());
  ShardSet& ss = ctx.shard_set();
  unsigned sid = static_cast<unsigned>(cursor >> kShardShift);
  uint64_t table_cursor = cursor & ((uint64_t(1) << kShardShift) - 1);
  std::vector<std::string> keys;
  unsigned db = ctx.state.db;
  int64_t now = ctx.now_ms;
  bool match_all = pattern.empty() || pattern == "*";
  while (sid < ss.size() && static_cast<int64_t>(keys.size()) < count) {
    table_cursor = co_await ss.Await(sid, [&](Shard& shard) -> uint64_t {
      DbSlice* slice = shard.db_if_exists(db);
      if (slice == nullptr) return 0;
      std::string scratch;
      uint64_t c = table_cursor;
      // Visits at most 10x COUNT buckets per call, like Redis's bound on empty buckets.
      for (int64_t visits = 0; visits < count * 10; ++visits) {
        c = slice->ScanWithExpired(c, [&](PrimeIterator it) {
          std::string_view key = it->first.GetString(&scratch);
          if (!match_all && !GlobMatch(pattern, key)) return;
          // Redis filters a key that matches in two steps: TYPE looks it up as a read (a hit
          // or a miss, `keymiss`; an expired key is deleted there), then an expired key is
          // deleted (`expired`) and left out.
          if (!type.empty()) {
            const std::string name(key);  // `key` may point into the entry the lookup deletes
            PrimeIterator found = slice->FindReadOnly(name, now);
            if (!found.is_done() && TypeName(found->second) == type) keys.push_back(name);
          } else if (DbSlice::IsExpired(it, now)) {
            if (!slice->KeysFrozen(now)) slice->Erase(it, RemoveReason::kExpired);
          } else {
            keys.emplace_back(key);
          }
        });
        if (c == 0 || static_cast<int64_t>(keys.size()) >= count) break;
      }
      return c;
    });
    if (table_cursor == 0) ++sid;
  }
  uint64_t next = sid >= ss.size() ? 0 : (uint64_t(sid) << kShardShift) | table_cursor;
  ctx.rb.StartArray(2);
  ctx.rb.SendBulk(StrCat(next));
  ctx.rb.SendBulkArray(keys);
}

// RANDOMKEY
// A key of the database, uniformly at random: a shard chosen with probability proportional to
// its key count, then a uniform entry of that shard (DbSlice::RandomEntry). When that shard has
// emptied meanwhile, the other shards are tried in turn.
awaitable<void> CmdRandomKey(CmdArgs, ConnCmdContext& ctx) {
  ShardSet& ss = ctx.shard_set();
  thread_local absl::BitGen gen;
  unsigned db = ctx.state.db;
  int64_t now = ctx.now_ms;
  std::vector<uint64_t> sizes(ss.size(), 0);
  co_await ss.AwaitAll([&](Shard& shard) {
    DbSlice* slice = shard.db_if_exists(db);
    sizes[shard.index()] = slice ? slice->size() : 0;
  });
  uint64_t total = 0;
  for (uint64_t n : sizes) total += n;
  if (total == 0) co_return ctx.rb.SendNull();
  uint64_t pick = absl::Uniform<uint64_t>(gen, 0, total);
  unsigned start = 0;
  while (pick >= sizes[start]) pick -= sizes[start++];
  for (unsigned k = 0; k < ss.size(); ++k) {
    unsigned sid = (start + k) % ss.size();
    std::optional<std::string> key = co_await ss.Await(sid, [&](Shard& shard) {
      std::optional<std::string> out;
      DbSlice* slice = shard.db_if_exists(db);
      if (slice == nullptr || slice->size() == 0) return out;
      PrimeIterator it = slice->RandomEntry(now);
      if (!it.is_done()) {
        out.emplace();
        it->first.AppendTo(&*out);
      }
      return out;
    });
    if (key) co_return ctx.rb.SendBulk(*key);
  }
  ctx.rb.SendNull();
}

// OBJECT ENCODING|REFCOUNT|IDLETIME|FREQ key | OBJECT HELP
awaitable<void> CmdObject(CmdArgs args, ConnCmdContext& ctx) {
  std::string sub = AsciiStrToUpper(args[1]);
  if (sub == "HELP" && args.size() == 2) {
    static constexpr std::string_view kHelp[] = {
        "OBJECT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "ENCODING <key>",
        "    Return the kind of internal representation used in order to store the value",
        "    associated with a <key>.",
        "FREQ <key>",
        "    Return the access frequency index of the <key>. The returned integer is",
        "    proportional to the logarithm of the recent access frequency of the key.",
        "IDLETIME <key>",
        "    Return the idle time of the <key>, that is the approximated number of",
        "    seconds elapsed since the last access to the key.",
        "REFCOUNT <key>",
        "    Return the number of references of the value associated with the specified",
        "    <key>.",
        "HELP",
        "    Print this help.",
    };
    SendHelp(ctx.rb, kHelp);
    co_return;
  }
  if (sub != "ENCODING" && sub != "REFCOUNT" && sub != "IDLETIME" && sub != "FREQ") {
    co_return ctx.rb.SendError(UnknownSubcommandText(args[0], args[1]));
  }
  if (args.size() != 3) {
    co_return ctx.rb.SendError(WrongArgsText(StrCat("object|", AsciiStrToLower(sub))));
  }
  unsigned db = ctx.state.db;
  int64_t now = ctx.now_ms;
  std::string_view key = args[2];
  struct ObjectInfo {
    std::string encoding;
    bool shared_int;     // Redis shares the objects of integers 0..9999
    uint64_t idle_ms;    // from the access record, under an LRU-mode policy
    uint8_t frequency;   // from the access record, under an LFU policy
  };
  std::optional<ObjectInfo> info = co_await ctx.shard_set().Await(
      ctx.shard_set().ShardOf(key), [&](Shard& shard) {
        std::optional<ObjectInfo> out;
        // Redis 7.0 counts OBJECT's lookup as a hit or a miss but raises no `keymiss`.
        PrimeIterator it = shard.db(db).FindReadOnlyQuiet(key, now);
        ++(it.is_done() ? shard.stats().keyspace_misses : shard.stats().keyspace_hits);
        if (it.is_done()) return out;
        int64_t v = -1;
        bool small_int = it->second.IsIntEncoded() && it->second.TryGetInt(&v) && v >= 0 &&
                         v < 10000;
        // OBJECT reads the record without updating it (as Redis's LOOKUP_NOTOUCH).
        DbSlice& slice = shard.db(db);
        const uint32_t record = slice.Record(it, now);
        const int64_t decay = slice.eviction().lfu_decay_time.load(std::memory_order_relaxed);
        out = ObjectInfo{std::string(it->second.EncodingName()), small_int,
                         LruIdleMs(record, now), LfuDecayed(record, now, decay)};
        return out;
      });
  if (!info) co_return ctx.rb.SendNull();
  if (sub == "ENCODING") co_return ctx.rb.SendBulk(info->encoding);
  const MaxmemoryPolicy policy = ctx.config().eviction_policy();
  const bool lfu = IsLfuPolicy(policy);
  const bool lru = IsLruPolicy(policy);
  if (sub == "REFCOUNT") {
    // As Redis: shared integer objects report INT_MAX unless an LRU/LFU policy disables sharing.
    co_return ctx.rb.SendLong(info->shared_int && !lfu && !lru ? 2147483647 : 1);
  }
  if (sub == "FREQ" && !lfu) {
    co_return ctx.rb.SendError(
        "ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please "
        "note that when switching between policies at runtime LRU and LFU data will take some "
        "time to adjust.");
  }
  if (sub == "IDLETIME" && lfu) {
    co_return ctx.rb.SendError(
        "ERR An LFU maxmemory policy is selected, idle time not tracked. Please note that when "
        "switching between policies at runtime LRU and LFU data will take some time to adjust.");
  }
  if (sub == "FREQ") co_return ctx.rb.SendLong(info->frequency);
  ctx.rb.SendLong(static_cast<int64_t>(info->idle_ms / 1000));
}

CommandSpec Spec(std::string name, int arity, uint32_t flags, int first, int last,
                 std::vector<std::string_view> cats, std::string_view summary) {
  return MakeSpec(std::move(name), arity, flags, first, last, std::move(cats), "generic", "",
                  summary);
}

}  // namespace

void RegisterGenericCommands(CommandRegistry* r) {
  r->RegisterShard(WithParts(OneHop(Spec("del", -2, kCmdWrite, 1, -1,
                   {"keyspace", "write", "slow"}, "Deletes one or more keys.")), &kDelOps),
                   CmdDelShard, CmdDelMulti);
  r->RegisterShard(WithParts(OneHop(Spec("unlink", -2, kCmdWrite | kCmdFast, 1, -1,
                   {"keyspace", "write", "fast"}, "Asynchronously deletes one or more keys.")),
                   &kDelOps), CmdDelShard, CmdDelMulti);
  r->RegisterShard(WithParts(OneHop(Spec("exists", -2, kCmdReadOnly | kCmdFast, 1, -1,
                   {"keyspace", "read", "fast"}, "Determines whether one or more keys exist.")),
                   &kExistsOps), CmdExistsShard, CmdExistsMulti);
  r->RegisterShard(WithParts(OneHop(Spec("touch", -2, kCmdReadOnly | kCmdFast, 1, -1,
                   {"keyspace", "read", "fast"},
                   "Returns the number of existing keys out of those specified after updating "
                   "the time they were last accessed.")), &kTouchOps),
                   CmdTouchShard, CmdTouchMulti);
  r->RegisterShard(Spec("type", 2, kCmdReadOnly | kCmdFast, 1, 1, {"keyspace", "read", "fast"},
                   "Determines the type of value stored at a key."), CmdType);
  r->RegisterShard(Spec("expire", -3, kCmdWrite | kCmdFast, 1, 1, {"keyspace", "write", "fast"},
                   "Sets the expiration time of a key in seconds."),
           CmdExpireGeneric<false, false>);
  r->RegisterShard(Spec("pexpire", -3, kCmdWrite | kCmdFast, 1, 1, {"keyspace", "write", "fast"},
                   "Sets the expiration time of a key in milliseconds."),
           CmdExpireGeneric<true, false>);
  r->RegisterShard(Spec("expireat", -3, kCmdWrite | kCmdFast, 1, 1, {"keyspace", "write", "fast"},
                   "Sets the expiration time of a key to a Unix timestamp."),
           CmdExpireGeneric<false, true>);
  r->RegisterShard(Spec("pexpireat", -3, kCmdWrite | kCmdFast, 1, 1,
                   {"keyspace", "write", "fast"},
                   "Sets the expiration time of a key to a Unix milliseconds timestamp."),
           CmdExpireGeneric<true, true>);
  r->RegisterShard(Spec("ttl", 2, kCmdReadOnly | kCmdFast, 1, 1, {"keyspace", "read", "fast"},
                   "Returns the expiration time in seconds of a key."),
           CmdTtlGeneric<false, false>);
  r->RegisterShard(Spec("pttl", 2, kCmdReadOnly | kCmdFast, 1, 1, {"keyspace", "read", "fast"},
                   "Returns the expiration time in milliseconds of a key."),
           CmdTtlGeneric<true, false>);
  r->RegisterShard(Spec("expiretime", 2, kCmdReadOnly | kCmdFast, 1, 1,
                   {"keyspace", "read", "fast"},
                   "Returns the expiration time of a key as a Unix timestamp."),
           CmdTtlGeneric<false, true>);
  r->RegisterShard(Spec("pexpiretime", 2, kCmdReadOnly | kCmdFast, 1, 1,
                   {"keyspace", "read", "fast"},
                   "Returns the expiration time of a key as a Unix milliseconds timestamp."),
           CmdTtlGeneric<true, true>);
  r->RegisterShard(Spec("persist", 2, kCmdWrite | kCmdFast, 1, 1, {"keyspace", "write", "fast"},
                   "Removes the expiration time of a key."), CmdPersist);
  CommandSpec keys = Spec("keys", 2, kCmdReadOnly, 0, 0, {"keyspace", "read", "slow", "dangerous"},
                          "Returns all key names that match a pattern.");
  keys.tx_scope = TxScope::kAllShared;  // a consistent view of every shard
  r->RegisterCoord(std::move(keys), CmdKeys);
  r->RegisterCoord(Spec("scan", -2, kCmdReadOnly, 0, 0, {"keyspace", "read", "slow"},
                   "Iterates over the key names in the database."), CmdScan);
  r->RegisterCoord(Spec("randomkey", 1, kCmdReadOnly, 0, 0, {"keyspace", "read", "slow"},
                   "Returns a random key name from the database."), CmdRandomKey);
  CommandSpec object = Spec("object", -2, 0, 0, 0, {"slow"},
                            "A container for object introspection commands.");
  object.since = "2.2.3";
  object.subcommands = ObjectSubcommands();
  r->RegisterCoord(std::move(object), CmdObject);
}

}  // namespace dashkv
