// XREADGROUP (Redis 7.0 semantics, without blocking: with BLOCK it answers as XREAD does when
// nothing can be served). Keys on one shard run there; keys on several shards are checked in
// one hop and served in a second one under the command's exclusive locks, so an error on any
// key changes nothing; the reply is in argument order.
#include <optional>
#include <string>
#include <vector>

#include "server/cmd_context.h"
#include "server/commands/stream_group_util.h"
#include "server/conn_state.h"
#include "server/storage/shard_set.h"
#include "server/tx/multi_key.h"
#include "server/values/stream_groups.h"
#include "server/values/stream_value.h"

namespace dashkv::group_cmd {

using boost::asio::awaitable;

// ---------------------------------------------------------------------------------------------
// XREADGROUP

namespace {

// The parsed arguments of XREADGROUP.
struct XReadGroupArgs {
  size_t count = 0;  // 0: no limit
  bool block = false;
  bool noack = false;
  std::string_view group, consumer;
  size_t first_key = 0;
  size_t num_keys = 0;
  // Per key: the id whose successors to read from the consumer's history, nullopt for ">";
  // or the error of that id (reported after the key's own checks).
  std::vector<std::optional<StreamID>> after;
  std::vector<std::string_view> id_error;
};

// Parses XREADGROUP GROUP g c [COUNT n] [BLOCK ms] [NOACK] STREAMS key ... id ...
OpResult<XReadGroupArgs> ParseXReadGroup(CmdArgs args, std::string* error) {
  XReadGroupArgs out;
  bool group_given = false;
  for (size_t i = 1; i < args.size(); ++i) {
    const size_t more = args.size() - 1 - i;
    if (EqualsIgnoreCase(args[i], "BLOCK") && more > 0) {
      std::optional<int64_t> ms = ParseInt64(args[++i]);
      if (!ms) return OpStatus::kTimeoutNotInteger;
      if (*ms < 0) return OpStatus::kTimeoutNegative;
      out.block = true;
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
  bool serve = history;
  if (!history && s.length() > 0) serve = *s.LastLiveId() > g.last_id;
  if (!serve) return false;  // Redis creates the consumer only when it serves the key
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
    StreamID start = g.last_id;
    start.Incr();
    n = s.Range(start, StreamID::Max(), false, x.count, [&](const StreamValue::Entry& e) {
      AdvanceGroup(s, g, e.id);
      if (!x.noack) g.Deliver(e.id, c, now);
      SendEntry(body, e);
    });
  }
  rb.StartArray(n);
  rb.SendRaw(body.buffer());
  return true;
}

// Sends the reply from the per-key results: errors in key order, then the served keys.
void SendXReadGroup(io::ReplyBuilder& rb, const XReadGroupArgs& x,
                    const std::vector<std::string>& key_errors,
                    const std::vector<std::string>& served) {
  for (size_t k = 0; k < x.num_keys; ++k) {
    if (!key_errors[k].empty()) return rb.SendError(key_errors[k]);
    if (!x.id_error[k].empty()) return rb.SendError(x.id_error[k]);
  }
  size_t n = 0;
  for (const std::string& r : served) n += !r.empty();
  if (n == 0) {
    return x.block ? SendStatus(rb, OpStatus::kStreamBlockUnsupported) : rb.SendNullArray();
  }
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

}  // namespace

// XREADGROUP with every key on this shard.
void CmdXReadGroupShard(CmdArgs args, ShardCmdContext& ctx) {
  std::string err;
  OpResult<XReadGroupArgs> x = ParseXReadGroup(args, &err);
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

// XREADGROUP with keys on several shards: one hop checks every key, a second one serves them.
awaitable<void> CmdXReadGroup(CmdArgs args, ConnCmdContext& ctx) {
  std::string err;
  OpResult<XReadGroupArgs> x = ParseXReadGroup(args, &err);
  if (!x) co_return err.empty() ? ctx.SendStatus(x.status()) : ctx.rb.SendError(err);
  ShardSet& ss = ctx.shard_set();
  KeysByShard by_shard(ss, args, x->first_key, x->first_key + x->num_keys - 1);
  std::vector<std::string> key_errors(x->num_keys), served(x->num_keys);
  unsigned db = ctx.state.db;
  int64_t now = ctx.now_ms;
  io::RespVersion version = ctx.rb.version();
  co_await ss.AwaitMany(by_shard.shards, [&](Shard& shard) {
    for (uint32_t i : by_shard.indexes[shard.index()]) {
      size_t k = i - x->first_key;
      key_errors[k] = CheckReadGroupKey(shard.db(db), args, *x, k, now);
    }
  });
  if (!AnyError(*x, key_errors)) {
    co_await ss.AwaitMany(by_shard.shards, [&](Shard& shard) {
      for (uint32_t i : by_shard.indexes[shard.index()]) {
        size_t k = i - x->first_key;
        io::ReplyBuilder part(version);
        if (ServeReadGroupKey(shard.db(db), args, *x, k, now, part)) served[k] = part.buffer();
      }
      shard.changes().MarkUnmodified();  // Redis signals no change of group state to WATCH
    });
  }
  SendXReadGroup(ctx.rb, *x, key_errors, served);
}

std::optional<unsigned> RouteXReadGroup(CmdArgs args, const ServerServices& services) {
  KeyIndexes keys = XReadGroupKeys(args);
  if (keys.empty()) return std::nullopt;
  const ShardSet& ss = services.shard_set;
  unsigned sid = ss.ShardOf(args[keys[0]]);
  for (uint32_t k : keys) {
    if (ss.ShardOf(args[k]) != sid) return std::nullopt;
  }
  return sid;
}


}  // namespace dashkv::group_cmd
