// List commands (Redis 7.0 semantics): LPUSH, RPUSH, LPUSHX, RPUSHX, LPOP, RPOP, LLEN, LINDEX,
// LSET, LRANGE, LTRIM, LINSERT, LREM, LPOS, LMPOP, RPOPLPUSH and LMOVE.
//
// All are single-shard commands except:
//  - LMPOP (a coordinator): it visits its keys in argument order, one hop per run of consecutive
//    keys on the same shard, and pops from the first non-empty list, under intent locks on all
//    its keys (server/tx/transaction.h): atomic, as one command.
//  - RPOPLPUSH / LMOVE with the two keys on different shards: under intent locks on both keys,
//    read the element on the source's shard, push it on the destination's shard, then pop it
//    on the source's shard; no other command sees the element in both lists or in neither. A
//    destination that is not a list fails the push, and nothing has changed.
// Empty lists are deleted, as Redis never keeps them.
#include <vector>

#include "server/cmd_context.h"
#include "server/command_registry.h"
#include "server/commands/list_ops.h"
#include "server/commands/string_ops.h"
#include "server/values/list_value.h"
#include "server/tx/multi_key.h"
#include "server/config.h"
#include "server/storage/shard_set.h"

namespace dashkv {

namespace {

using boost::asio::awaitable;

void SendError(ShardCmdContext& ctx, OpStatus st) { SendOpError(ctx, st); }

// LPUSH/RPUSH/LPUSHX/RPUSHX key element [element ...]
template <ListEnd kEnd, bool kOnlyExisting>
void CmdPush(CmdArgs args, ShardCmdContext& ctx) {
  OpResult<PrimeIterator> res = kOnlyExisting ? FindMutableList(ctx.db, args[1], ctx.now_ms)
                                              : FindOrAddList(ctx.db, args[1], ctx.now_ms);
  if (!res) {
    if (res.status() == OpStatus::kKeyNotFound) return ctx.rb.SendLong(0);
    return SendError(ctx, res.status());
  }
  ListValue* list = GetList((*res)->second);
  ListValue::Options opts = ListOptions(ctx.config);
  for (size_t i = 2; i < args.size(); ++i) list->Push(args[i], kEnd, opts);
  int64_t len = static_cast<int64_t>(list->size());
  FinishListWrite(ctx.db, *res, args[1]);
  ctx.db.Notify(kNotifyList, PushEvent(kEnd), args[1]);
  ctx.rb.SendLong(len);
}

// LPOP/RPOP key [count]
template <ListEnd kEnd>
void CmdPop(CmdArgs args, ShardCmdContext& ctx) {
  if (args.size() > 3) {
    return ctx.rb.SendError(WrongArgsText(ctx.spec.name));
  }
  bool with_count = args.size() == 3;
  int64_t count = 1;
  if (with_count) {
    std::optional<int64_t> c = ParseInt64(args[2]);
    if (!c || *c < 0) return SendError(ctx, OpStatus::kNotPositive);
    count = *c;
  }
  OpResult<PrimeIterator> res = FindMutableList(ctx.db, args[1], ctx.now_ms);
  if (!res) {
    if (res.status() != OpStatus::kKeyNotFound) return SendError(ctx, res.status());
    return with_count ? ctx.rb.SendNullArray() : ctx.rb.SendNull();
  }
  if (count == 0) {  // COUNT 0: nothing popped, no event (Redis)
    ctx.NoChange();
    return ctx.rb.SendEmptyArray();
  }
  std::vector<std::string> popped = OpListPop(ctx.db, *res, args[1], kEnd,
                                              static_cast<size_t>(count), ListOptions(ctx.config));
  if (!with_count) return ctx.rb.SendBulk(popped[0]);
  ctx.rb.SendBulkArray(popped);
}

// LLEN key
void CmdLLen(CmdArgs args, ShardCmdContext& ctx) {
  OpResult<const ListValue*> res = FindList(ctx.db, args[1], ctx.now_ms);
  if (!res && res.status() != OpStatus::kKeyNotFound) return SendError(ctx, res.status());
  ctx.rb.SendLong(res ? static_cast<int64_t>((*res)->size()) : 0);
}

// LINDEX key index
void CmdLIndex(CmdArgs args, ShardCmdContext& ctx) {
  std::optional<int64_t> index = ParseInt64(args[2]);
  if (!index) return SendError(ctx, OpStatus::kNotAnInteger);
  OpResult<const ListValue*> res = FindList(ctx.db, args[1], ctx.now_ms);
  if (!res) {
    if (res.status() == OpStatus::kKeyNotFound) return ctx.rb.SendNull();
    return SendError(ctx, res.status());
  }
  std::optional<std::string> v = (*res)->Index(*index);
  v ? ctx.rb.SendBulk(*v) : ctx.rb.SendNull();
}

// LSET key index element
void CmdLSet(CmdArgs args, ShardCmdContext& ctx) {
  std::optional<int64_t> index = ParseInt64(args[2]);
  if (!index) return SendError(ctx, OpStatus::kNotAnInteger);
  OpResult<PrimeIterator> res = FindMutableList(ctx.db, args[1], ctx.now_ms);
  if (!res) {
    return SendError(ctx, res.status() == OpStatus::kKeyNotFound ? OpStatus::kNoSuchKey
                                                                 : res.status());
  }
  if (!GetList((*res)->second)->Set(*index, args[3], ListOptions(ctx.config))) {
    return SendError(ctx, OpStatus::kOutOfRange);
  }
  FinishListWrite(ctx.db, *res, args[1]);
  ctx.db.Notify(kNotifyList, "lset", args[1]);
  ctx.rb.SendOk();
}

// Normalizes a Redis [start, stop] range over a list of `len` elements; false when empty.
bool NormalizeRange(int64_t len, int64_t* start, int64_t* stop) {
  if (*start < 0) *start += len;
  if (*stop < 0) *stop += len;
  if (*start < 0) *start = 0;
  if (*start > *stop || *start >= len) return false;
  if (*stop >= len) *stop = len - 1;
  return true;
}

// LRANGE key start stop
void CmdLRange(CmdArgs args, ShardCmdContext& ctx) {
  std::optional<int64_t> start = ParseInt64(args[2]);
  std::optional<int64_t> stop = ParseInt64(args[3]);
  if (!start || !stop) return SendError(ctx, OpStatus::kNotAnInteger);
  OpResult<const ListValue*> res = FindList(ctx.db, args[1], ctx.now_ms);
  if (!res) {
    if (res.status() == OpStatus::kKeyNotFound) return ctx.rb.SendEmptyArray();
    return SendError(ctx, res.status());
  }
  const ListValue* list = *res;
  if (!NormalizeRange(static_cast<int64_t>(list->size()), &*start, &*stop)) {
    return ctx.rb.SendEmptyArray();
  }
  size_t n = static_cast<size_t>(*stop - *start + 1);
  ctx.rb.StartArray(n);
  char buf[ListpackValue::kIntBufSize];
  list->Walk(static_cast<long>(*start), ListEnd::kTail, [&](const ListpackValue& v) {
    ctx.rb.SendBulk(v.AsText(buf));
    return --n > 0;
  });
}

// LTRIM key start stop
void CmdLTrim(CmdArgs args, ShardCmdContext& ctx) {
  std::optional<int64_t> start = ParseInt64(args[2]);
  std::optional<int64_t> stop = ParseInt64(args[3]);
  if (!start || !stop) return SendError(ctx, OpStatus::kNotAnInteger);
  OpResult<PrimeIterator> res = FindMutableList(ctx.db, args[1], ctx.now_ms);
  if (!res) {
    if (res.status() == OpStatus::kKeyNotFound) return ctx.rb.SendOk();
    return SendError(ctx, res.status());
  }
  GetList((*res)->second)
      ->Trim(static_cast<long>(*start), static_cast<long>(*stop), ListOptions(ctx.config));
  // Redis raises `ltrim` (and touches WATCH) even when nothing was trimmed.
  ctx.db.Notify(kNotifyList, "ltrim", args[1]);
  FinishListWrite(ctx.db, *res, args[1]);
  ctx.rb.SendOk();
}

// LINSERT key BEFORE|AFTER pivot element
void CmdLInsert(CmdArgs args, ShardCmdContext& ctx) {
  Where where;
  if (EqualsIgnoreCase(args[2], "BEFORE")) {
    where = Where::kBefore;
  } else if (EqualsIgnoreCase(args[2], "AFTER")) {
    where = Where::kAfter;
  } else {
    return SendError(ctx, OpStatus::kSyntaxError);
  }
  OpResult<PrimeIterator> res = FindMutableList(ctx.db, args[1], ctx.now_ms);
  if (!res) {
    if (res.status() == OpStatus::kKeyNotFound) return ctx.rb.SendLong(0);
    return SendError(ctx, res.status());
  }
  ListValue* list = GetList((*res)->second);
  if (!list->Insert(args[3], args[4], where, ListOptions(ctx.config))) {
    ctx.NoChange();  // no pivot
    return ctx.rb.SendLong(-1);
  }
  int64_t len = static_cast<int64_t>(list->size());
  FinishListWrite(ctx.db, *res, args[1]);
  ctx.db.Notify(kNotifyList, "linsert", args[1]);
  ctx.rb.SendLong(len);
}

// LREM key count element
void CmdLRem(CmdArgs args, ShardCmdContext& ctx) {
  std::optional<int64_t> count = ParseInt64(args[2]);
  if (!count) return SendError(ctx, OpStatus::kNotAnInteger);
  OpResult<PrimeIterator> res = FindMutableList(ctx.db, args[1], ctx.now_ms);
  if (!res) {
    if (res.status() == OpStatus::kKeyNotFound) return ctx.rb.SendLong(0);
    return SendError(ctx, res.status());
  }
  size_t n = GetList((*res)->second)
                 ->Remove(args[3], static_cast<long>(*count), ListOptions(ctx.config));
  if (n == 0) {
    ctx.NoChange();
    return ctx.rb.SendLong(0);
  }
  ctx.db.Notify(kNotifyList, "lrem", args[1]);
  FinishListWrite(ctx.db, *res, args[1]);
  ctx.rb.SendLong(static_cast<int64_t>(n));
}

struct LPosParams {
  int64_t rank = 1;
  int64_t count = -1;  // -1: no COUNT given
  int64_t maxlen = 0;
};

// Parses LPOS's options; returns false after sending the error.
bool ParseLPos(CmdArgs args, ShardCmdContext& ctx, LPosParams* p) {
  ArgParser parser(args, 3);
  while (parser.HasNext()) {
    if (parser.Check("RANK")) {
      p->rank = parser.NextInt();
      if (!parser.HasError() && p->rank == 0) {
        ctx.rb.SendError(
            "ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... "
            "or use negative to start from the end of the list");
        return false;
      }
    } else if (parser.Check("COUNT")) {
      p->count = parser.NextInt();
      if (!parser.HasError() && p->count < 0) {
        ctx.rb.SendError("ERR COUNT can't be negative");
        return false;
      }
    } else if (parser.Check("MAXLEN")) {
      p->maxlen = parser.NextInt();
      if (!parser.HasError() && p->maxlen < 0) {
        ctx.rb.SendError("ERR MAXLEN can't be negative");
        return false;
      }
    } else {
      parser.SetError(OpStatus::kSyntaxError);
    }
  }
  if (parser.HasError()) {
    SendError(ctx, parser.error());
    return false;
  }
  return true;
}

// LPOS key element [RANK rank] [COUNT num-matches] [MAXLEN len]
void CmdLPos(CmdArgs args, ShardCmdContext& ctx) {
  LPosParams p;
  if (!ParseLPos(args, ctx, &p)) return;
  OpResult<const ListValue*> res = FindList(ctx.db, args[1], ctx.now_ms);
  if (!res && res.status() != OpStatus::kKeyNotFound) return SendError(ctx, res.status());
  std::vector<int64_t> found;
  if (res) {
    const ListValue* list = *res;
    int64_t len = static_cast<int64_t>(list->size());
    bool backward = p.rank < 0;
    // |rank| - 1 matches to skip. Redis 7.0 negates INT64_MIN into itself and then matches
    // the first candidate: RANK INT64_MIN acts as -1.
    uint64_t skip = p.rank == INT64_MIN ? 0
                    : backward          ? uint64_t(0) - uint64_t(p.rank) - 1
                                        : uint64_t(p.rank) - 1;
    uint64_t want = p.count < 0 ? 1 : (p.count == 0 ? UINT64_MAX : uint64_t(p.count));
    int64_t visited = 0, index = backward ? len - 1 : 0;
    list->Walk(backward ? -1 : 0, backward ? ListEnd::kHead : ListEnd::kTail,
               [&](const ListpackValue& v) {
                 if (p.maxlen > 0 && visited >= p.maxlen) return false;
                 ++visited;
                 if (v.Equals(args[2])) {
                   if (skip > 0) {
                     --skip;
                   } else {
                     found.push_back(index);
                     if (found.size() >= want) return false;
                   }
                 }
                 index += backward ? -1 : 1;
                 return true;
               });
  }
  if (p.count < 0) return found.empty() ? ctx.rb.SendNull() : ctx.rb.SendLong(found[0]);
  ctx.rb.StartArray(found.size());
  for (int64_t i : found) ctx.rb.SendLong(i);
}

void ReplyMove(ShardCmdContext& ctx, CmdArgs args, ListEnd from, ListEnd to) {
  OpResult<std::optional<std::string>> res =
      OpListMove(ctx.db, ctx.config, args[1], args[2], from, to, ctx.now_ms);
  if (!res) return SendError(ctx, res.status());
  *res ? ctx.rb.SendBulk(**res) : ctx.rb.SendNull();
}

// RPOPLPUSH source destination
void CmdRPopLPush(CmdArgs args, ShardCmdContext& ctx) {
  ReplyMove(ctx, args, ListEnd::kTail, ListEnd::kHead);
}

// LMOVE source destination LEFT|RIGHT LEFT|RIGHT
void CmdLMove(CmdArgs args, ShardCmdContext& ctx) {
  std::optional<ListEnd> from = ParseListEnd(args[3]), to = ParseListEnd(args[4]);
  if (!from || !to) return SendError(ctx, OpStatus::kSyntaxError);
  ReplyMove(ctx, args, *from, *to);
}

// The cross-shard form of LMOVE/RPOPLPUSH (see the file comment). Its keyspace events come in
// Redis's order: the destination's push, then the source's pop (and `del`).
awaitable<void> MoveAcrossShards(CmdArgs args, ConnCmdContext& ctx, ListEnd from, ListEnd to) {
  ShardSet& ss = ctx.shard_set();
  const Config& config = ctx.config();
  unsigned db = ctx.state.db;
  int64_t now = ctx.now_ms;
  std::string_view src = args[1], dst = args[2];
  // Hop 1: the element the pop will take (nullopt: no source). Redis looks the source up as a
  // write: no keyspace hit or miss.
  OpResult<std::optional<std::string>> peeked = co_await ss.Await(
      ss.ShardOf(src), [&](Shard& shard) -> OpResult<std::optional<std::string>> {
        PrimeIterator it = shard.db(db).FindReadOnlyQuiet(src, now);
        if (it.is_done()) return std::optional<std::string>();
        if (it->second.type() != ObjType::kList) return OpStatus::kWrongType;
        return GetList(it->second)->Index(from == ListEnd::kHead ? 0 : -1);
      });
  if (!peeked) co_return ctx.SendStatus(peeked.status());
  if (!*peeked) co_return ctx.rb.SendNull();
  const std::string& value = **peeked;
  // Hop 2: push to the destination (a wrong type or a full table fails here, before anything
  // changed).
  OpStatus pushed = co_await ss.Await(ss.ShardOf(dst), [&](Shard& shard) {
    DbSlice& slice = shard.db(db);
    OpResult<PrimeIterator> it = FindOrAddList(slice, dst, now);
    if (!it) return it.status();
    GetList((*it)->second)->Push(value, to, ListOptions(config));
    FinishListWrite(slice, *it, dst);
    slice.Notify(kNotifyList, PushEvent(to), dst);
    return OpStatus::kOk;
  });
  if (pushed != OpStatus::kOk) co_return ctx.SendStatus(pushed);
  // Hop 3: pop the element read in hop 1 (the locks kept the source as it was; only the active
  // expiry cycle may have deleted it since, and then there is nothing left to pop).
  co_await ss.Await(ss.ShardOf(src), [&](Shard& shard) {
    DbSlice& slice = shard.db(db);
    OpResult<PrimeIterator> it = FindMutableList(slice, src, now);
    if (it) OpListPop(slice, *it, src, from, 1, ListOptions(config));
  });
  ctx.rb.SendBulk(value);
}

awaitable<void> CmdRPopLPushMulti(CmdArgs args, ConnCmdContext& ctx) {
  co_await MoveAcrossShards(args, ctx, ListEnd::kTail, ListEnd::kHead);
}

awaitable<void> CmdLMoveMulti(CmdArgs args, ConnCmdContext& ctx) {
  std::optional<ListEnd> from = ParseListEnd(args[3]), to = ParseListEnd(args[4]);
  if (!from || !to) co_return ctx.SendStatus(OpStatus::kSyntaxError);
  co_await MoveAcrossShards(args, ctx, *from, *to);
}

struct LMPopArgs {
  size_t first_key = 2;
  size_t num_keys = 0;
  ListEnd end = ListEnd::kHead;
  int64_t count = 1;
};

// Parses LMPOP numkeys key [key ...] LEFT|RIGHT [COUNT count]; returns false after replying.
bool ParseLMPop(CmdArgs args, ConnCmdContext& ctx, LMPopArgs* out) {
  std::optional<int64_t> numkeys = ParseInt64(args[1]);
  if (!numkeys || *numkeys <= 0) {
    ctx.SendStatus(OpStatus::kNumkeysNotPositive);
    return false;
  }
  if (static_cast<uint64_t>(*numkeys) > args.size() - 3) {
    ctx.SendStatus(OpStatus::kSyntaxError);
    return false;
  }
  out->num_keys = static_cast<size_t>(*numkeys);
  ArgParser parser(args, 2 + out->num_keys);
  std::optional<ListEnd> end = ParseListEnd(parser.Next());
  if (!end) parser.SetError(OpStatus::kSyntaxError);
  out->end = end.value_or(ListEnd::kHead);
  if (parser.Check("COUNT")) {
    out->count = parser.NextInt(OpStatus::kCountNotPositive);
    if (!parser.HasError() && out->count <= 0) parser.SetError(OpStatus::kCountNotPositive);
  }
  if (parser.HasNext()) parser.SetError(OpStatus::kSyntaxError);
  if (parser.HasError()) {
    ctx.SendStatus(parser.error());
    return false;
  }
  return true;
}

// LMPOP numkeys key [key ...] LEFT|RIGHT [COUNT count]
awaitable<void> CmdLMPop(CmdArgs args, ConnCmdContext& ctx) {
  LMPopArgs a;
  if (!ParseLMPop(args, ctx, &a)) co_return;
  ShardSet& ss = ctx.shard_set();
  const Config& config = ctx.config();
  unsigned db = ctx.state.db;
  int64_t now = ctx.now_ms;
  size_t i = a.first_key, end = a.first_key + a.num_keys;
  while (i < end) {
    // The run of consecutive keys owned by one shard: one hop.
    unsigned sid = ss.ShardOf(args[i]);
    size_t run_end = i + 1;
    while (run_end < end && ss.ShardOf(args[run_end]) == sid) ++run_end;
    struct Found {
      OpStatus status = OpStatus::kOk;
      size_t key = 0;  // 0: none
      std::vector<std::string> items;
    };
    Found f = co_await ss.Await(sid, [&](Shard& shard) {
      Found out;
      for (size_t k = i; k < run_end; ++k) {
        OpResult<PrimeIterator> it = FindMutableList(shard.db(db), args[k], now);
        if (!it) {
          if (it.status() == OpStatus::kKeyNotFound) continue;
          out.status = it.status();
          return out;
        }
        out.items = OpListPop(shard.db(db), *it, args[k], a.end, static_cast<size_t>(a.count),
                              ListOptions(config));
        out.key = k;
        return out;
      }
      return out;
    });
    if (f.status != OpStatus::kOk) co_return ctx.SendStatus(f.status);
    if (f.key != 0) {
      ctx.rb.StartArray(2);
      ctx.rb.SendBulk(args[f.key]);
      ctx.rb.StartArray(f.items.size());
      for (const std::string& s : f.items) ctx.rb.SendBulk(s);
      co_return;
    }
    i = run_end;
  }
  ctx.rb.SendNullArray();
}

CommandSpec Spec(std::string name, int arity, uint32_t flags, int first_key, int last_key,
                 std::vector<std::string_view> cats, std::string_view since,
                 std::string_view summary) {
  return MakeSpec(std::move(name), arity, flags, first_key, last_key, std::move(cats), "list",
                  since, summary);
}

constexpr uint32_t kWriteOomFast = kCmdWrite | kCmdDenyOom | kCmdFast;
constexpr uint32_t kWriteFast = kCmdWrite | kCmdFast;
constexpr uint32_t kReadFast = kCmdReadOnly | kCmdFast;

}  // namespace

void RegisterListCommands(CommandRegistry* r) {
  using V = std::vector<std::string_view>;
  const V w_fast{"write", "list", "fast"}, w_slow{"write", "list", "slow"};
  const V r_fast{"read", "list", "fast"}, r_slow{"read", "list", "slow"};
  r->RegisterShard(Spec("lpush", -3, kWriteOomFast, 1, 1, w_fast, "1.0.0",
              "Prepends one or more elements to a list. Creates the key if it doesn't exist."),
      CmdPush<ListEnd::kHead, false>);
  r->RegisterShard(Spec("rpush", -3, kWriteOomFast, 1, 1, w_fast, "1.0.0",
              "Appends one or more elements to a list. Creates the key if it doesn't exist."),
      CmdPush<ListEnd::kTail, false>);
  r->RegisterShard(Spec("lpushx", -3, kWriteOomFast, 1, 1, w_fast, "2.2.0",
              "Prepends one or more elements to a list only when the list exists."),
      CmdPush<ListEnd::kHead, true>);
  r->RegisterShard(Spec("rpushx", -3, kWriteOomFast, 1, 1, w_fast, "2.2.0",
              "Appends an element to a list only when the list exists."),
      CmdPush<ListEnd::kTail, true>);
  r->RegisterShard(Spec("lpop", -2, kWriteFast, 1, 1, w_fast, "1.0.0",
              "Returns the first elements in a list after removing it. Deletes the list if the "
              "last element was popped."), CmdPop<ListEnd::kHead>);
  r->RegisterShard(Spec("rpop", -2, kWriteFast, 1, 1, w_fast, "1.0.0",
              "Returns and removes the last elements of a list. Deletes the list if the last "
              "element was popped."), CmdPop<ListEnd::kTail>);
  r->RegisterShard(Spec("llen", 2, kReadFast, 1, 1, r_fast, "1.0.0", "Returns the length of a list."),
      CmdLLen);
  r->RegisterShard(Spec("lindex", 3, kCmdReadOnly, 1, 1, r_slow, "1.0.0",
              "Returns an element from a list by its index."), CmdLIndex);
  r->RegisterShard(Spec("lset", 4, kCmdWrite | kCmdDenyOom, 1, 1, w_slow, "1.0.0",
              "Sets the value of an element in a list by its index."), CmdLSet);
  r->RegisterShard(Spec("lrange", 4, kCmdReadOnly, 1, 1, r_slow, "1.0.0",
              "Returns a range of elements from a list."), CmdLRange);
  r->RegisterShard(Spec("ltrim", 4, kCmdWrite, 1, 1, w_slow, "1.0.0",
              "Removes elements from both ends a list. Deletes the list if all elements were "
              "trimmed."), CmdLTrim);
  r->RegisterShard(Spec("linsert", 5, kCmdWrite | kCmdDenyOom, 1, 1, w_slow, "2.2.0",
              "Inserts an element before or after another element in a list."), CmdLInsert);
  r->RegisterShard(Spec("lrem", 4, kCmdWrite, 1, 1, w_slow, "1.0.0",
              "Removes elements from a list. Deletes the list if the last element was removed."),
      CmdLRem);
  r->RegisterShard(Spec("lpos", -3, kCmdReadOnly, 1, 1, r_slow, "6.0.6",
              "Returns the index of matching elements in a list."), CmdLPos);
  r->RegisterShard(Spec("rpoplpush", 3, kCmdWrite | kCmdDenyOom, 1, 2, w_slow, "1.2.0",
              "Returns the last element of a list after removing and pushing it to another "
              "list. Deletes the list if the last element was popped."),
      CmdRPopLPush, CmdRPopLPushMulti);
  r->RegisterShard(Spec("lmove", 5, kCmdWrite | kCmdDenyOom, 1, 2, w_slow, "6.2.0",
              "Returns an element after popping it from one list and pushing it to another. "
              "Deletes the list if the last element was moved."),
      CmdLMove, CmdLMoveMulti);
  CommandSpec lmpop = Spec("lmpop", -4, kCmdWrite, 0, 0, w_slow, "7.0.0",
                           "Returns multiple elements from a list after removing them. Deletes "
                           "the list if the last element was popped.");
  lmpop.kind = HandlerKind::kCoord;
  lmpop.numkeys_index = 1;
  lmpop.coord_handler = CmdLMPop;
  r->Register(std::move(lmpop));
}

}  // namespace dashkv
