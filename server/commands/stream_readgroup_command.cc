// XREADGROUP (Redis 7.0 semantics). Keys on one shard are checked and served in one hop; keys on
// several shards are checked in one hop and served in a second one, under exclusive locks on
// every key, so an error on any key changes nothing; the reply is in argument order. With BLOCK,
// every id ">" and nothing to serve, the call parks on the blocking machinery
// (server/tx/blocking.h), which serves it with the shard ops at the end of this file
// (stream_readgroup.h).
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "server/cmd_context.h"
#include "server/commands/blocking_commands.h"
#include "server/commands/stream_group_util.h"
#include "server/commands/stream_readgroup.h"
#include "server/conn_state.h"
#include "server/storage/shard_set.h"
#include "server/tx/multi_key.h"
#include "server/tx/transaction.h"
#include "server/values/stream_groups.h"
#include "server/values/stream_value.h"

namespace dashkv::group_cmd {

using boost::asio::awaitable;

// ---------------------------------------------------------------------------------------------
// XREADGROUP

namespace {

// The parsed arguments of XREADGROUP.
struct XReadGroupArgs {
  size_t count = 0;       // 0: no limit
  int64_t block_ms = -1;  // BLOCK's milliseconds (0: forever); -1 without BLOCK
  bool noack = false;
  std::string_view group, consumer;
  size_t first_key = 0;
  size_t num_keys = 0;
  // Per key: the id whose successors to read from the consumer's history, nullopt for ">";
  // or the error of that id (reported after the key's own checks).
  std::vector<std::optional<StreamID>> after;
  std::vector<std::string_view> id_error;
};

// Parses XREADGROUP GROUP g c [COUNT n] [BLOCK ms] [NOACK] STREAMS key ... id ...; BLOCK is
// refused from scripts (named as the script wrote the command, as Redis).
OpResult<XReadGroupArgs> ParseXReadGroup(CmdArgs args, bool from_script, std::string* error) {
  XReadGroupArgs out;
  bool group_given = false;
  for (size_t i = 1; i < args.size(); ++i) {
    const size_t more = args.size() - 1 - i;
    if (EqualsIgnoreCase(args[i], "BLOCK") && more > 0) {
      if (from_script) {
        *error = "ERR " + std::string(args[0]) +
                 " command is not allowed with BLOCK option from scripts";
        return OpStatus::kSyntaxError;
      }
      std::optional<int64_t> ms = ParseInt64(args[++i]);
      if (!ms) return OpStatus::kTimeoutNotInteger;
      if (*ms < 0) return OpStatus::kTimeoutNegative;
      out.block_ms = *ms;
    } else if (EqualsIgnoreCase(args[i], "COUNT") && more > 0) {
      std::optional<int64_t> n = ParseInt64(args[++i]);
      if (!n) return OpStatus::kNotAnInteger;
      out.count = *n < 0 ? 0 : static_cast<size_t>(*n);
    } else if (EqualsIgnoreCase(args[i], "STREAMS") && more > 0) {
      if (more % 2 != 0) return OpStatus::kStreamUnbalancedXread;
      out.first_key = i + 1;
      out.num_keys = more / 2;
      break;
    } else if (EqualsIgnoreCase(args[i], "GROUP") && more >= 2) {
      out.group = args[i + 1];
      out.consumer = args[i + 2];
      group_given = true;
      i += 2;
    } else if (EqualsIgnoreCase(args[i], "NOACK")) {
      out.noack = true;
    } else {
      return OpStatus::kSyntaxError;
    }
  }
  if (out.first_key == 0) return OpStatus::kSyntaxError;
  if (!group_given) {
    *error = "ERR Missing GROUP option for XREADGROUP";
    return OpStatus::kSyntaxError;
  }
  for (size_t k = 0; k < out.num_keys; ++k) {
    std::string_view arg = args[out.first_key + out.num_keys + k];
    std::string_view err;
    std::optional<StreamID> id;
    if (arg == "$") {
      err = "ERR The $ ID is meaningless in the context of XREADGROUP: you want to read the "
            "history of this consumer by specifying a proper ID, or use the > ID to get new "
            "messages. The $ ID would just return an empty result set.";
    } else if (arg != ">") {
      id = ParseStreamID(arg, 0, /*strict=*/true);
      if (!id) {
        err = StatusText(OpStatus::kStreamInvalidId);
      } else if (*id == StreamID::Max()) {
        id.reset();  // Redis reads the maximum id as ">"
      }
    }
    out.after.push_back(id);
    out.id_error.push_back(err);
  }
  return out;
}

// Whether the call may wait: BLOCK given and every id ">" (a history read answers at once).
bool MayBlock(const XReadGroupArgs& x) {
  if (x.block_ms < 0) return false;
  for (const std::optional<StreamID>& id : x.after) {
    if (id) return false;
  }
  return true;
}

// Returns whether group `g` of `s` has a live entry after its last-delivered id.
bool HasNewForGroup(const StreamValue& s, const StreamGroup& g) {
  return s.length() > 0 && *s.LastLiveId() > g.last_id;
}

// Delivers the entries new to `g` to consumer `c`, at most `count` (0: all), calling emit(e)
// for each; returns how many.
template <typename Emit>
size_t DeliverNew(StreamValue& s, StreamGroup& g, StreamConsumer* c, bool noack, size_t count,
                  int64_t now, Emit emit) {
  StreamID start = g.last_id;
  start.Incr();  // never the maximum: HasNewForGroup held
  return s.Range(start, StreamID::Max(), false, count, [&](const StreamValue::Entry& e) {
    AdvanceGroup(s, g, e.id);
    if (!noack) g.Deliver(e.id, c, now);
    emit(e);
  });
}

}  // namespace

// The keys of an XREADGROUP call: the first half of the arguments after STREAMS.
KeyIndexes XReadGroupKeys(CmdArgs args) {
  KeyIndexes out;
  for (size_t i = 1; i + 1 < args.size(); ++i) {
    if (EqualsIgnoreCase(args[i], "STREAMS")) {
      size_t n = args.size() - (i + 1);
      if (n % 2 != 0) return out;
      for (size_t k = 0; k < n / 2; ++k) out.push_back(static_cast<uint32_t>(i + 1 + k));
      return out;
    }
    if (EqualsIgnoreCase(args[i], "COUNT") || EqualsIgnoreCase(args[i], "BLOCK")) {
      ++i;
    } else if (EqualsIgnoreCase(args[i], "GROUP")) {
      i += 2;
    }
  }
  return out;
}

namespace {

// Whether an XREADGROUP call has a BLOCK option (before STREAMS).
bool XReadGroupBlocks(CmdArgs args) {
  for (size_t i = 1; i + 1 < args.size(); ++i) {
    if (EqualsIgnoreCase(args[i], "STREAMS")) return false;
    if (EqualsIgnoreCase(args[i], "BLOCK")) return true;
    if (EqualsIgnoreCase(args[i], "COUNT")) {
      ++i;
    } else if (EqualsIgnoreCase(args[i], "GROUP")) {
      i += 2;
    }
  }
  return false;
}

// Checks key k of `x`: its type and its group. Returns the error text or empty.
std::string CheckReadGroupKey(DbSlice& db, CmdArgs args, const XReadGroupArgs& x, size_t k,
                              int64_t now) {
  std::string_view key = args[x.first_key + k];
  OpResult<std::pair<StreamValue*, StreamGroup*>> found = FindGroup(db, key, x.group, now);
  if (!found) return std::string(StatusText(found.status()));
  if (found->second == nullptr) {
    return NoGroupText(key, x.group, " in XREADGROUP with GROUP option");
  }
  return {};
}

// Serves key k of `x` (checked) into `rb`: the key and its entries. Returns whether it was
// served (">" with nothing new is not).
bool ServeReadGroupKey(DbSlice& db, CmdArgs args, const XReadGroupArgs& x, size_t k, int64_t now,
                       io::ReplyBuilder& rb) {
  std::string_view key = args[x.first_key + k];
  OpResult<std::pair<StreamValue*, StreamGroup*>> found =
      FindGroup(db, key, x.group, now, /*for_write=*/true);
  StreamValue& s = *found->first;
  StreamGroup& g = *found->second;
  const bool history = x.after[k].has_value();
  if (!history && !HasNewForGroup(s, g)) {
    return false;  // Redis creates the consumer only when it serves the key
  }
  StreamConsumer* c = LookupOrCreateConsumer(db, key, g, x.consumer, now);
  rb.SendBulk(key);
  io::ReplyBuilder body(rb.version());
  size_t n = 0;
  if (history) {
    StreamID start = *x.after[k];
    start.Incr();  // never the maximum: that one reads as ">"
    for (auto it = c->pel.lower_bound(start); it != c->pel.end(); ++it) {
      if (x.count != 0 && n == x.count) break;
      if (s.Range(it->first, it->first, false, 1,
                  [&](const StreamValue::Entry& e) { SendEntry(body, e); }) == 0) {
        // A deleted entry: its id and a null; its delivery is not counted.
        body.StartArray(2);
        SendId(body, it->first);
        body.SendNullArray();
      } else {
        it->second->delivery_time_ms = now;
        ++it->second->delivery_count;
      }
      ++n;
    }
  } else {
    n = DeliverNew(s, g, c, x.noack, x.count, now,
                   [&](const StreamValue::Entry& e) { SendEntry(body, e); });
  }
  rb.StartArray(n);
  rb.SendRaw(body.buffer());
  return true;
}

// Sends the reply from the per-key results: errors in key order, then the served keys (a null
// array when none was served, BLOCK given or not).
void SendXReadGroup(io::ReplyBuilder& rb, const XReadGroupArgs& x,
                    const std::vector<std::string>& key_errors,
                    const std::vector<std::string>& served) {
  for (size_t k = 0; k < x.num_keys; ++k) {
    if (!key_errors[k].empty()) return rb.SendError(key_errors[k]);
    if (!x.id_error[k].empty()) return rb.SendError(x.id_error[k]);
  }
  size_t n = 0;
  for (const std::string& r : served) n += !r.empty();
  if (n == 0) return rb.SendNullArray();
  rb.resp3() ? rb.StartMap(n) : rb.StartArray(n);
  for (const std::string& r : served) {
    if (r.empty()) continue;
    if (!rb.resp3()) rb.StartArray(2);
    rb.SendRaw(r);
  }
}

bool AnyError(const XReadGroupArgs& x, const std::vector<std::string>& key_errors) {
  for (size_t k = 0; k < x.num_keys; ++k) {
    if (!key_errors[k].empty() || !x.id_error[k].empty()) return true;
  }
  return false;
}

// Checks the keys of `x` on this shard's database `db` (their argument indexes), stopping at
// the first error.
void CheckKeys(DbSlice& db, CmdArgs args, const XReadGroupArgs& x,
               const std::vector<uint32_t>& indexes, int64_t now,
               std::vector<std::string>& key_errors) {
  for (uint32_t i : indexes) {
    size_t k = i - x.first_key;
    key_errors[k] = CheckReadGroupKey(db, args, x, k, now);
    if (!key_errors[k].empty() || !x.id_error[k].empty()) return;
  }
}

// Serves the (checked) keys of `x` on this shard; Redis signals no change of group state to
// WATCH, so the shard's writes are marked unmodified.
void ServeKeys(Shard& shard, unsigned db, CmdArgs args, const XReadGroupArgs& x,
               const std::vector<uint32_t>& indexes, int64_t now, io::RespVersion version,
               std::vector<std::string>& served) {
  for (uint32_t i : indexes) {
    size_t k = i - x.first_key;
    io::ReplyBuilder part(version);
    if (ServeReadGroupKey(shard.db(db), args, x, k, now, part)) served[k] = part.buffer();
  }
  shard.changes().MarkUnmodified();
}

// The blocked form of the call: keys, group, consumer, NOACK and COUNT.
std::shared_ptr<BlockRequest> BlockRequestOf(CmdArgs args, const XReadGroupArgs& x) {
  auto req = std::make_shared<BlockRequest>();
  req->kind = BlockRequest::Kind::kStreamReadGroup;
  req->count = static_cast<int64_t>(std::min<size_t>(x.count, INT64_MAX));
  req->keys.assign(args.begin() + x.first_key, args.begin() + x.first_key + x.num_keys);
  req->group = std::string(x.group);
  req->consumer = std::string(x.consumer);
  req->noack = x.noack;
  return req;
}

}  // namespace

// XREADGROUP with every key on this shard (never parks: calls with BLOCK are routed to
// CmdXReadGroup).
void CmdXReadGroupShard(CmdArgs args, ShardCmdContext& ctx) {
  std::string err;
  OpResult<XReadGroupArgs> x = ParseXReadGroup(args, ctx.from_script, &err);
  if (!x) return err.empty() ? ctx.SendStatus(x.status()) : ctx.rb.SendError(err);
  std::vector<std::string> key_errors(x->num_keys), served(x->num_keys);
  for (size_t k = 0; k < x->num_keys; ++k) {
    key_errors[k] = CheckReadGroupKey(ctx.db, args, *x, k, ctx.now_ms);
    if (!key_errors[k].empty() || !x->id_error[k].empty()) break;
  }
  if (!AnyError(*x, key_errors)) {
    for (size_t k = 0; k < x->num_keys; ++k) {
      io::ReplyBuilder part(ctx.rb.version());
      if (ServeReadGroupKey(ctx.db, args, *x, k, ctx.now_ms, part)) served[k] = part.buffer();
    }
  }
  ctx.NoChange();  // Redis signals no change of group state to WATCH
  SendXReadGroup(ctx.rb, *x, key_errors, served);
}

// XREADGROUP with keys on several shards, with BLOCK, inside EXEC or from a script. Flagged
// blocking, so the runner takes no intent locks: outside EXEC it takes exclusive locks on its
// keys itself. With BLOCK (outside EXEC), every id ">" and nothing served, it parks; inside
// EXEC it answers a null array at once.
awaitable<void> CmdXReadGroup(CmdArgs args, ConnCmdContext& ctx) {
  std::string err;
  OpResult<XReadGroupArgs> x = ParseXReadGroup(args, ctx.from_script, &err);
  if (!x) co_return err.empty() ? ctx.SendStatus(x.status()) : ctx.rb.SendError(err);
  ShardSet& ss = ctx.shard_set();
  KeysByShard by_shard(ss, args, x->first_key, x->first_key + x->num_keys - 1);
  std::vector<std::string> key_errors(x->num_keys), served(x->num_keys);
  const unsigned db = ctx.state.db;
  const int64_t now = ctx.now_ms;
  const io::RespVersion version = ctx.rb.version();
  const bool in_tx = ctx.locks != nullptr || ctx.in_exec;
  std::optional<KeyLocks> locks;
  if (!in_tx && ss.size() > 1) {
    locks.emplace(ss);
    for (size_t k = 0; k < x->num_keys; ++k) {
      locks->Add(db, args[x->first_key + k], LockMode::kExclusive);
    }
    co_await locks->Acquire();
  }
  if (by_shard.shards.size() == 1) {  // check and serve in one hop
    co_await ss.Await(by_shard.shards[0], [&](Shard& shard) {
      const std::vector<uint32_t>& mine = by_shard.indexes[shard.index()];
      CheckKeys(shard.db(db), args, *x, mine, now, key_errors);
      if (!AnyError(*x, key_errors)) ServeKeys(shard, db, args, *x, mine, now, version, served);
    });
  } else {
    co_await ss.AwaitMany(by_shard.shards, [&](Shard& shard) {
      CheckKeys(shard.db(db), args, *x, by_shard.indexes[shard.index()], now, key_errors);
    });
    if (!AnyError(*x, key_errors)) {
      co_await ss.AwaitMany(by_shard.shards, [&](Shard& shard) {
        ServeKeys(shard, db, args, *x, by_shard.indexes[shard.index()], now, version, served);
      });
    }
  }
  if (locks) locks->Release();
  bool any = false;
  for (const std::string& r : served) any |= !r.empty();
  if (any || in_tx || !MayBlock(*x) || AnyError(*x, key_errors)) {
    co_return SendXReadGroup(ctx.rb, *x, key_errors, served);
  }
  // Nothing new for the group: park. The blocking path checks the keys again before it
  // registers (an entry added since is served at once).
  // A deadline past the clock's range never comes: it waits forever (as Redis 7.0 does).
  int64_t timeout = x->block_ms > INT64_MAX - now ? 0 : x->block_ms;
  co_await RunBlockingStreamRead(ctx, BlockRequestOf(args, *x), timeout);
}

std::optional<unsigned> RouteXReadGroup(CmdArgs args, const ServerServices& services) {
  KeyIndexes keys = XReadGroupKeys(args);
  if (keys.empty() || XReadGroupBlocks(args)) return std::nullopt;
  const ShardSet& ss = services.shard_set;
  unsigned sid = ss.ShardOf(args[keys[0]]);
  for (uint32_t k : keys) {
    if (ss.ShardOf(args[k]) != sid) return std::nullopt;
  }
  return sid;
}

}  // namespace dashkv::group_cmd

namespace dashkv {

OpStatus BlockedGroupState(DbSlice& db, std::string_view key, std::string_view group,
                           int64_t now_ms) {
  PrimeIterator it = db.FindReadOnlyQuiet(key, now_ms);
  if (it.is_done() || it->second.type() != ObjType::kStream) {
    return OpStatus::kStreamBlockedKeyGone;
  }
  const StreamValue& s = AsStream(it->second);
  const StreamGroup* g = s.groups() != nullptr ? s.groups()->Find(group) : nullptr;
  if (g == nullptr) return OpStatus::kStreamBlockedGroupGone;
  return group_cmd::HasNewForGroup(s, *g) ? OpStatus::kOk : OpStatus::kKeyNotFound;
}

OpResult<std::vector<CopiedEntry>> DeliverToBlockedConsumer(
    DbSlice& db, std::string_view key, std::string_view group, std::string_view consumer,
    bool noack, size_t count, int64_t now_ms) {
  OpStatus state = BlockedGroupState(db, key, group, now_ms);
  if (state != OpStatus::kOk) return state;
  OpResult<std::pair<StreamValue*, StreamGroup*>> found =
      group_cmd::FindGroup(db, key, group, now_ms, /*for_write=*/true);
  StreamValue& s = *found->first;
  StreamGroup& g = *found->second;
  StreamConsumer* c = group_cmd::LookupOrCreateConsumer(db, key, g, consumer, now_ms);
  std::vector<CopiedEntry> out;
  group_cmd::DeliverNew(s, g, c, noack, count, now_ms,
                        [&](const StreamValue::Entry& e) { out.push_back(CopyEntry(e)); });
  return out;
}

}  // namespace dashkv
