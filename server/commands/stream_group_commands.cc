// Stream consumer-group commands (Redis 7.0 semantics): XGROUP, XREADGROUP (without blocking),
// XACK, XPENDING, XCLAIM, XAUTOCLAIM, and the group replies of XINFO. Single-key commands run
// on the owning shard. XREADGROUP over keys on several shards checks every key in one hop and
// serves them in a second one, under its exclusive locks, and replies in argument order.
#include <algorithm>
#include <climits>
#include <optional>
#include <string>
#include <vector>

#include "server/cmd_context.h"
#include "server/command_registry.h"
#include "server/commands/stream_group_ops.h"
#include "server/conn_state.h"
#include "server/storage/shard_set.h"
#include "server/tx/multi_key.h"
#include "server/values/stream_groups.h"
#include "server/values/stream_value.h"

namespace dashkv {

namespace {

using boost::asio::awaitable;

constexpr std::string_view kKeyMustExist =
    "ERR The XGROUP subcommand requires the key to exist. Note that for CREATE you may want to "
    "use the MKSTREAM option to create an empty stream automatically.";
constexpr std::string_view kEntriesReadRange = "ERR value for ENTRIESREAD must be positive or -1";

std::string NoGroupText(std::string_view key, std::string_view group,
                        std::string_view suffix = "") {
  std::string out = "NOGROUP No such key '";
  out.append(key).append("' or consumer group '").append(group).append("'").append(suffix);
  return out;
}

std::string NoGroupForKeyText(std::string_view key, std::string_view group) {
  std::string out = "NOGROUP No such consumer group '";
  out.append(group).append("' for key name '").append(key).append("'");
  return out;
}

void SendId(io::ReplyBuilder& rb, StreamID id) { rb.SendBulk(id.ToString()); }

void SendEntry(io::ReplyBuilder& rb, const StreamValue::Entry& e) {
  rb.StartArray(2);
  SendId(rb, e.id);
  rb.StartArray(e.fields.size());
  std::string text;
  for (const ListpackValue& v : e.fields) {
    text.clear();
    v.AppendTo(&text);
    rb.SendBulk(text);
  }
}

// Sends the entry `id` ([id, [field, value ...]]), or a null when it is not in the stream.
void SendEntryOrNull(io::ReplyBuilder& rb, const StreamValue& s, StreamID id) {
  if (s.Range(id, id, false, 1, [&](const StreamValue::Entry& e) { SendEntry(rb, e); }) == 0) {
    rb.SendNull();
  }
}

// Parses an interval bound of XPENDING / XAUTOCLAIM: "-", "+", an id (an incomplete one takes
// `missing_seq`) or an exclusive "(id".
OpResult<StreamID> ParseIntervalId(std::string_view arg, bool is_start) {
  const uint64_t missing_seq = is_start ? 0 : UINT64_MAX;
  if (arg.size() > 1 && arg[0] == '(') {
    std::optional<StreamID> id = ParseStreamID(arg.substr(1), missing_seq, /*strict=*/true);
    if (!id) return OpStatus::kStreamInvalidId;
    if (is_start ? !id->Incr() : !id->Decr()) {
      return is_start ? OpStatus::kStreamInvalidStart : OpStatus::kStreamInvalidEnd;
    }
    return *id;
  }
  std::optional<StreamID> id = ParseStreamID(arg, missing_seq, /*strict=*/false);
  if (!id) return OpStatus::kStreamInvalidId;
  return *id;
}

// Finds the stream `key` and its group `group`: kWrongType, or a null group when the key or
// the group is missing. `for_write`: the group state will change (a mutable lookup, so that a
// snapshot in progress saves the value first; the caller marks the key unmodified for WATCH
// where Redis does not signal the change).
OpResult<std::pair<StreamValue*, StreamGroup*>> FindGroup(DbSlice& db, std::string_view key,
                                                          std::string_view group, int64_t now,
                                                          bool for_write = false) {
  OpResult<PrimeIterator> found = for_write ? db.FindMutableOfType(key, ObjType::kStream, now)
                                            : db.FindReadOnlyOfType(key, ObjType::kStream, now);
  if (!found) {
    if (found.status() != OpStatus::kKeyNotFound) return found.status();
    return std::pair<StreamValue*, StreamGroup*>{nullptr, nullptr};
  }
  StreamValue& s = AsStream((*found)->second);
  StreamGroup* g = s.groups() != nullptr ? s.groups()->Find(group) : nullptr;
  return std::pair<StreamValue*, StreamGroup*>{&s, g};
}

// Returns consumer `name` of `g`, created (with its keyspace event) if new, seen now.
StreamConsumer* LookupOrCreateConsumer(DbSlice& db, std::string_view key, StreamGroup& g,
                                       std::string_view name, int64_t now) {
  StreamConsumer* c = g.FindConsumer(name);
  if (c == nullptr) {
    c = g.AddConsumer(name, now);
    db.Notify(kNotifyStream, "xgroup-createconsumer", key);
  }
  c->seen_time_ms = now;
  return c;
}

// ---------------------------------------------------------------------------------------------
// XGROUP

// Runs f(db, body, now) -> error text (empty: success, the reply is in body) on the shard of
// `key`, then sends the reply. The key's watchers are not touched (Redis signals no change of
// group state) unless `*key_created` is set by f.
template <typename F>
awaitable<void> OnKeyShard(ConnCmdContext& ctx, std::string_view key, F f,
                           const bool* key_created = nullptr) {
  ShardSet& ss = ctx.shard_set();
  unsigned db = ctx.state.db;
  int64_t now = ctx.now_ms;
  io::ReplyBuilder body(ctx.rb.version());
  std::string err = co_await ss.Await(ss.ShardOf(key), [&](Shard& shard) {
    std::string out = f(shard.db(db), body, now);
    if (key_created == nullptr || !*key_created) shard.changes().MarkUnmodified();
    return out;
  });
  if (!err.empty()) co_return ctx.rb.SendError(err);
  ctx.rb.SendRaw(body.buffer());
}

// The checks every XGROUP subcommand but HELP makes: the key (created by CREATE MKSTREAM) and,
// when `need_group`, the group. Returns the error text, or empty with *s and *g set.
std::string XGroupLookup(DbSlice& db, CmdArgs args, int64_t now, bool mkstream, bool need_group,
                         StreamValue** s, StreamGroup** g) {
  OpResult<PrimeIterator> found = db.FindMutableOfType(args[2], ObjType::kStream, now);
  if (!found && found.status() != OpStatus::kKeyNotFound) {
    return std::string(StatusText(found.status()));
  }
  if (!found && !mkstream) return std::string(kKeyMustExist);
  *s = found ? &AsStream((*found)->second) : nullptr;
  *g = *s != nullptr && (*s)->groups() != nullptr ? (*s)->groups()->Find(args[3]) : nullptr;
  if (need_group && *g == nullptr) return NoGroupForKeyText(args[2], args[3]);
  return {};
}

// Parses an ENTRIESREAD value; returns the error text or empty.
std::string ParseEntriesRead(std::string_view arg, int64_t* out) {
  std::optional<int64_t> n = ParseInt64(arg);
  if (!n) return std::string(StatusText(OpStatus::kNotAnInteger));
  if (*n < 0 && *n != StreamGroup::kInvalidEntriesRead) return std::string(kEntriesReadRange);
  *out = *n;
  return {};
}

// XGROUP CREATE key group id|$ [MKSTREAM] [ENTRIESREAD entries-read]
awaitable<void> CmdXGroupCreate(CmdArgs args, ConnCmdContext& ctx) {
  bool mkstream = false;
  int64_t entries_read = StreamGroup::kInvalidEntriesRead;
  for (size_t i = 5; i < args.size(); ++i) {
    if (EqualsIgnoreCase(args[i], "MKSTREAM")) {
      mkstream = true;
    } else if (EqualsIgnoreCase(args[i], "ENTRIESREAD") && i + 1 < args.size()) {
      std::string err = ParseEntriesRead(args[++i], &entries_read);
      if (!err.empty()) co_return ctx.rb.SendError(err);
    } else {
      co_return ctx.rb.SendError(SubcommandSyntaxText(args[0], args[1]));
    }
  }
  bool created = false;
  co_await OnKeyShard(ctx, args[2], [&](DbSlice& db, io::ReplyBuilder& rb, int64_t now) {
    StreamValue* s = nullptr;
    StreamGroup* g = nullptr;
    std::string err = XGroupLookup(db, args, now, mkstream, false, &s, &g);
    if (!err.empty()) return err;
    if (args.size() > 8) return SubcommandSyntaxText(args[0], args[1]);
    StreamID id;
    if (args[4] == "$") {
      if (s != nullptr) id = s->last_id();
    } else {
      std::optional<StreamID> parsed = ParseStreamID(args[4], 0, /*strict=*/true);
      if (!parsed) return std::string(StatusText(OpStatus::kStreamInvalidId));
      id = *parsed;
    }
    if (s == nullptr) {
      OpResult<DbSlice::AddResult> added = db.FindOrAdd(args[2], now);
      if (!added) return std::string(StatusText(added.status()));
      added->it->second.SetObject(ObjType::kStream, 0, new StreamValue());
      s = &AsStream(added->it->second);
      created = true;
    }
    if (s->MutableGroups().Create(args[3], id, entries_read) == nullptr) {
      return std::string("BUSYGROUP Consumer Group name already exists");
    }
    rb.SendOk();
    db.Notify(kNotifyStream, "xgroup-create", args[2]);
    return std::string();
  }, &created);
}

// XGROUP SETID key group id|$ [ENTRIESREAD entries-read]
awaitable<void> CmdXGroupSetId(CmdArgs args, ConnCmdContext& ctx) {
  co_await OnKeyShard(ctx, args[2], [&](DbSlice& db, io::ReplyBuilder& rb, int64_t now) {
    StreamValue* s = nullptr;
    StreamGroup* g = nullptr;
    std::string err = XGroupLookup(db, args, now, false, true, &s, &g);
    if (!err.empty()) return err;
    if (args.size() != 5 && args.size() != 7) return SubcommandSyntaxText(args[0], args[1]);
    StreamID id = s->last_id();
    if (args[4] != "$") {
      std::optional<StreamID> parsed = ParseStreamID(args[4], 0, /*strict=*/false);
      if (!parsed) return std::string(StatusText(OpStatus::kStreamInvalidId));
      id = *parsed;
    }
    int64_t entries_read = StreamGroup::kInvalidEntriesRead;
    if (args.size() == 7) {
      if (!EqualsIgnoreCase(args[5], "ENTRIESREAD")) {
        return SubcommandSyntaxText(args[0], args[1]);
      }
      std::string bad = ParseEntriesRead(args[6], &entries_read);
      if (!bad.empty()) return bad;
    }
    g->last_id = id;
    g->entries_read = entries_read;
    rb.SendOk();
    db.Notify(kNotifyStream, "xgroup-setid", args[2]);
    return std::string();
  });
}

// XGROUP DESTROY key group
awaitable<void> CmdXGroupDestroy(CmdArgs args, ConnCmdContext& ctx) {
  co_await OnKeyShard(ctx, args[2], [&](DbSlice& db, io::ReplyBuilder& rb, int64_t now) {
    StreamValue* s = nullptr;
    StreamGroup* g = nullptr;
    std::string err = XGroupLookup(db, args, now, false, false, &s, &g);
    if (!err.empty()) return err;
    if (g == nullptr) {
      rb.SendLong(0);
      return std::string();
    }
    s->groups()->Destroy(args[3]);
    rb.SendLong(1);
    db.Notify(kNotifyStream, "xgroup-destroy", args[2]);
    return std::string();
  });
}

// XGROUP CREATECONSUMER key group consumer
awaitable<void> CmdXGroupCreateConsumer(CmdArgs args, ConnCmdContext& ctx) {
  co_await OnKeyShard(ctx, args[2], [&](DbSlice& db, io::ReplyBuilder& rb, int64_t now) {
    StreamValue* s = nullptr;
    StreamGroup* g = nullptr;
    std::string err = XGroupLookup(db, args, now, false, true, &s, &g);
    if (!err.empty()) return err;
    const bool created = g->AddConsumer(args[4], now) != nullptr;
    rb.SendLong(created ? 1 : 0);
    if (created) db.Notify(kNotifyStream, "xgroup-createconsumer", args[2]);
    return std::string();
  });
}

// XGROUP DELCONSUMER key group consumer
awaitable<void> CmdXGroupDelConsumer(CmdArgs args, ConnCmdContext& ctx) {
  co_await OnKeyShard(ctx, args[2], [&](DbSlice& db, io::ReplyBuilder& rb, int64_t now) {
    StreamValue* s = nullptr;
    StreamGroup* g = nullptr;
    std::string err = XGroupLookup(db, args, now, false, true, &s, &g);
    if (!err.empty()) return err;
    const bool present = g->FindConsumer(args[4]) != nullptr;
    rb.SendLong(static_cast<int64_t>(g->DeleteConsumer(args[4])));
    if (present) db.Notify(kNotifyStream, "xgroup-delconsumer", args[2]);
    return std::string();
  });
}

// XGROUP HELP
void CmdXGroupHelp(CmdArgs, ConnCmdContext& ctx) {
  static constexpr std::string_view kHelp[] = {
      "XGROUP <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "CREATE <key> <groupname> <id|$> [option]",
      "    Create a new consumer group. Options are:",
      "    * MKSTREAM",
      "      Create the empty stream if it does not exist.",
      "    * ENTRIESREAD entries_read",
      "      Set the group's entries_read counter (internal use).",
      "CREATECONSUMER <key> <groupname> <consumer>",
      "    Create a new consumer in the specified group.",
      "DELCONSUMER <key> <groupname> <consumer>",
      "    Remove the specified consumer.",
      "DESTROY <key> <groupname>",
      "    Remove the specified group.",
      "SETID <key> <groupname> <id|$> [ENTRIESREAD entries_read]",
      "    Set the current group ID and entries_read counter.",
      "HELP",
      "    Prints this help.",
  };
  SendHelp(ctx.rb, kHelp);
}

// ---------------------------------------------------------------------------------------------
// XREADGROUP

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

// Checks key k of `x`: its type and its group. Returns the error text or empty.
std::string CheckReadGroupKey(DbSlice& db, CmdArgs args, const XReadGroupArgs& x, size_t k,
                              int64_t now) {
  std::string_view key = args[x.first_key + k];
  OpResult<std::pair<StreamValue*, StreamGroup*>> found = FindGroup(db, key, x.group, now);
  if (!found) return std::string(StatusText(found.status()));
  if (found->second == nullptr) return NoGroupText(key, x.group, " in XREADGROUP with GROUP option");
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

// ---------------------------------------------------------------------------------------------
// XACK, XPENDING, XCLAIM, XAUTOCLAIM

// XACK key group id [id ...]
void CmdXAck(CmdArgs args, ShardCmdContext& ctx) {
  OpResult<std::pair<StreamValue*, StreamGroup*>> found =
      FindGroup(ctx.db, args[1], args[2], ctx.now_ms, /*for_write=*/true);
  ctx.NoChange();  // Redis signals no change of group state to WATCH
  if (!found) return ctx.SendStatus(found.status());
  if (found->second == nullptr) return ctx.rb.SendLong(0);
  std::vector<StreamID> ids;
  for (size_t i = 3; i < args.size(); ++i) {
    std::optional<StreamID> id = ParseStreamID(args[i], 0, /*strict=*/true);
    if (!id) return ctx.SendStatus(OpStatus::kStreamInvalidId);
    ids.push_back(*id);
  }
  int64_t acked = 0;
  for (StreamID id : ids) acked += found->second->Ack(id);
  ctx.rb.SendLong(acked);
}

// XPENDING key group [[IDLE min-idle-time] start end count [consumer]]
void CmdXPending(CmdArgs args, ShardCmdContext& ctx) {
  const bool summary = args.size() == 3;
  if (!summary && (args.size() < 6 || args.size() > 9)) {
    return ctx.SendStatus(OpStatus::kSyntaxError);
  }
  int64_t min_idle = 0;
  StreamID start, end;
  int64_t count = 0;
  std::optional<std::string_view> consumer_name;
  if (!summary) {
    size_t at = 3;
    if (EqualsIgnoreCase(args[3], "IDLE")) {
      std::optional<int64_t> idle = ParseInt64(args[4]);
      if (!idle) return ctx.SendStatus(OpStatus::kNotAnInteger);
      if (args.size() < 8) return ctx.SendStatus(OpStatus::kSyntaxError);
      min_idle = *idle;
      at += 2;
    }
    std::optional<int64_t> n = ParseInt64(args[at + 2]);
    if (!n) return ctx.SendStatus(OpStatus::kNotAnInteger);
    count = std::max<int64_t>(*n, 0);
    OpResult<StreamID> s = ParseIntervalId(args[at], true);
    if (!s) return ctx.SendStatus(s.status());
    OpResult<StreamID> e = ParseIntervalId(args[at + 1], false);
    if (!e) return ctx.SendStatus(e.status());
    start = *s;
    end = *e;
    if (at + 3 < args.size()) consumer_name = args[at + 3];
  }
  OpResult<std::pair<StreamValue*, StreamGroup*>> found =
      FindGroup(ctx.db, args[1], args[2], ctx.now_ms);
  if (!found) return ctx.SendStatus(found.status());
  if (found->second == nullptr) return ctx.rb.SendError(NoGroupText(args[1], args[2]));
  const StreamGroup& g = *found->second;
  io::ReplyBuilder& rb = ctx.rb;
  if (summary) {
    rb.StartArray(4);
    rb.SendLong(static_cast<int64_t>(g.pel.size()));
    if (g.pel.empty()) {
      rb.SendNull();
      rb.SendNull();
      return rb.SendNullArray();
    }
    SendId(rb, g.pel.begin()->first);
    SendId(rb, g.pel.rbegin()->first);
    size_t with_pending = 0;
    for (const auto& [name, c] : g.consumers) with_pending += !c->pel.empty();
    rb.StartArray(with_pending);
    for (const auto& [name, c] : g.consumers) {
      if (c->pel.empty()) continue;
      rb.StartArray(2);
      rb.SendBulk(name);
      rb.SendBulk(std::to_string(c->pel.size()));
    }
    return;
  }
  io::ReplyBuilder body(rb.version());
  size_t n = 0;
  auto emit = [&](StreamID id, const StreamPending& p) {
    const int64_t idle = std::max<int64_t>(ctx.now_ms - p.delivery_time_ms, 0);
    if (min_idle != 0 && idle < min_idle) return;
    body.StartArray(4);
    SendId(body, id);
    body.SendBulk(p.consumer->name);
    body.SendLong(idle);
    body.SendLong(static_cast<int64_t>(p.delivery_count));
    ++n;
  };
  if (consumer_name) {
    StreamConsumer* c = g.FindConsumer(*consumer_name);
    if (c == nullptr) return rb.SendEmptyArray();
    for (auto it = c->pel.lower_bound(start);
         it != c->pel.end() && it->first <= end && static_cast<int64_t>(n) < count; ++it) {
      emit(it->first, *it->second);
    }
  } else {
    for (auto it = g.pel.lower_bound(start);
         it != g.pel.end() && it->first <= end && static_cast<int64_t>(n) < count; ++it) {
      emit(it->first, *it->second);
    }
  }
  rb.StartArray(n);
  rb.SendRaw(body.buffer());
}

// Parses an integer argument of XCLAIM / XAUTOCLAIM, with its own error text.
std::optional<int64_t> ParseClaimInt(std::string_view arg, std::string_view what,
                                     std::string_view cmd, std::string* err) {
  std::optional<int64_t> n = ParseInt64(arg);
  if (!n) {
    *err = "ERR Invalid ";
    err->append(what).append(" argument for ").append(cmd);
  }
  return n;
}

// XCLAIM key group consumer min-idle-time id [id ...] [IDLE ms] [TIME ms-unix-time]
// [RETRYCOUNT count] [FORCE] [JUSTID] [LASTID id]
void CmdXClaim(CmdArgs args, ShardCmdContext& ctx) {
  OpResult<std::pair<StreamValue*, StreamGroup*>> found =
      FindGroup(ctx.db, args[1], args[2], ctx.now_ms, /*for_write=*/true);
  ctx.NoChange();  // Redis signals no change of group state to WATCH
  if (!found) return ctx.SendStatus(found.status());
  if (found->second == nullptr) return ctx.rb.SendError(NoGroupText(args[1], args[2]));
  StreamValue& s = *found->first;
  StreamGroup& g = *found->second;
  std::string err;
  std::optional<int64_t> min_idle = ParseClaimInt(args[4], "min-idle-time", "XCLAIM", &err);
  if (!min_idle) return ctx.rb.SendError(err);
  std::vector<StreamID> ids;
  size_t i = 5;
  for (; i < args.size(); ++i) {
    std::optional<StreamID> id = ParseStreamID(args[i], 0, /*strict=*/true);
    if (!id) break;
    ids.push_back(*id);
  }
  const int64_t now = ctx.now_ms;
  int64_t retry = -1;
  int64_t delivery = -1;
  bool force = false, justid = false;
  StreamID last_id;
  for (; i < args.size(); ++i) {
    const bool more = i + 1 < args.size();
    std::string_view opt = args[i];
    if (EqualsIgnoreCase(opt, "FORCE")) {
      force = true;
    } else if (EqualsIgnoreCase(opt, "JUSTID")) {
      justid = true;
    } else if (EqualsIgnoreCase(opt, "IDLE") && more) {
      std::optional<int64_t> v = ParseClaimInt(args[++i], "IDLE option", "XCLAIM", &err);
      if (!v) return ctx.rb.SendError(err);
      delivery = now - *v;
    } else if (EqualsIgnoreCase(opt, "TIME") && more) {
      std::optional<int64_t> v = ParseClaimInt(args[++i], "TIME option", "XCLAIM", &err);
      if (!v) return ctx.rb.SendError(err);
      delivery = *v;
    } else if (EqualsIgnoreCase(opt, "RETRYCOUNT") && more) {
      std::optional<int64_t> v = ParseClaimInt(args[++i], "RETRYCOUNT option", "XCLAIM", &err);
      if (!v) return ctx.rb.SendError(err);
      retry = *v;
    } else if (EqualsIgnoreCase(opt, "LASTID") && more) {
      std::optional<StreamID> id = ParseStreamID(args[++i], 0, /*strict=*/true);
      if (!id) return ctx.SendStatus(OpStatus::kStreamInvalidId);
      last_id = *id;
    } else {
      std::string text = "ERR Unrecognized XCLAIM option '";
      return ctx.rb.SendError(text.append(opt).append("'"));
    }
  }
  if (last_id > g.last_id) g.last_id = last_id;
  if (delivery < 0 || delivery > now) delivery = now;
  StreamConsumer* c = nullptr;
  io::ReplyBuilder body(ctx.rb.version());
  size_t n = 0;
  for (StreamID id : ids) {
    auto it = g.pel.find(id);
    StreamPending* p = it == g.pel.end() ? nullptr : it->second.get();
    if (!s.Contains(id)) {
      if (p != nullptr) g.Ack(id);  // the entry is gone: drop it from the PEL
      continue;
    }
    if (p == nullptr) {
      if (!force) continue;
      p = g.AddUnowned(id, now);
    }
    if (p->consumer != nullptr && *min_idle > 0 && now - p->delivery_time_ms < *min_idle) {
      continue;
    }
    if (c == nullptr) c = LookupOrCreateConsumer(ctx.db, args[1], g, args[3], now);
    p->delivery_time_ms = delivery;
    if (retry >= 0) {
      p->delivery_count = static_cast<uint64_t>(retry);
    } else if (!justid) {
      ++p->delivery_count;
    }
    g.MoveTo(id, p, c);
    justid ? SendId(body, id) : SendEntryOrNull(body, s, id);
    ++n;
  }
  ctx.rb.StartArray(n);
  ctx.rb.SendRaw(body.buffer());
}

// XAUTOCLAIM key group consumer min-idle-time start [COUNT count] [JUSTID]
void CmdXAutoClaim(CmdArgs args, ShardCmdContext& ctx) {
  OpResult<std::pair<StreamValue*, StreamGroup*>> found =
      FindGroup(ctx.db, args[1], args[2], ctx.now_ms, /*for_write=*/true);
  ctx.NoChange();  // Redis signals no change of group state to WATCH
  if (!found) return ctx.SendStatus(found.status());
  if (found->second == nullptr) return ctx.rb.SendError(NoGroupText(args[1], args[2]));
  StreamValue& s = *found->first;
  StreamGroup& g = *found->second;
  std::string err;
  std::optional<int64_t> min_idle = ParseClaimInt(args[4], "min-idle-time", "XAUTOCLAIM", &err);
  if (!min_idle) return ctx.rb.SendError(err);
  OpResult<StreamID> start = ParseIntervalId(args[5], true);
  if (!start) return ctx.SendStatus(start.status());
  int64_t count = 100;
  bool justid = false;
  for (size_t i = 6; i < args.size(); ++i) {
    if (EqualsIgnoreCase(args[i], "COUNT") && i + 1 < args.size()) {
      std::optional<int64_t> n = ParseInt64(args[++i]);
      if (!n || *n < 1 || *n > LONG_MAX / 16) return ctx.rb.SendError("ERR COUNT must be > 0");
      // Redis allocates 16 bytes per COUNT up front and refuses a COUNT whose allocation fails;
      // past 2^47 bytes (the x86-64 user address space) it always does.
      if (*n > (int64_t{1} << 43)) {
        return ctx.rb.SendError(
            "ERR Insufficient memory, failed allocating transient memory, COUNT too high.");
      }
      count = *n;
    } else if (EqualsIgnoreCase(args[i], "JUSTID")) {
      justid = true;
    } else {
      return ctx.SendStatus(OpStatus::kSyntaxError);
    }
  }
  const int64_t now = ctx.now_ms;
  // Redis examines at most 10 entries per entry it may return.
  int64_t attempts = count > INT64_MAX / 10 ? INT64_MAX : count * 10;
  StreamConsumer* c = nullptr;
  std::vector<StreamID> deleted;
  io::ReplyBuilder body(ctx.rb.version());
  size_t n = 0;
  auto it = g.pel.lower_bound(*start);
  StreamID cursor;
  while (attempts > 0 && count > 0 && it != g.pel.end()) {
    --attempts;
    const StreamID id = it->first;
    StreamPending* p = it->second.get();
    ++it;
    if (!s.Contains(id)) {
      g.Ack(id);  // erasing invalidates `it`: find the next one again
      it = g.pel.upper_bound(id);
      deleted.push_back(id);
      --count;
      continue;
    }
    if (*min_idle > 0 && now - p->delivery_time_ms < *min_idle) continue;
    if (c == nullptr) c = LookupOrCreateConsumer(ctx.db, args[1], g, args[3], now);
    p->delivery_time_ms = now;
    if (!justid) ++p->delivery_count;
    g.MoveTo(id, p, c);
    justid ? SendId(body, id) : SendEntryOrNull(body, s, id);
    ++n;
    --count;
  }
  if (it != g.pel.end()) cursor = it->first;
  ctx.rb.StartArray(3);
  SendId(ctx.rb, cursor);
  ctx.rb.StartArray(n);
  ctx.rb.SendRaw(body.buffer());
  ctx.rb.StartArray(deleted.size());
  for (StreamID id : deleted) SendId(ctx.rb, id);
}

CommandSpec Spec(std::string name, int arity, uint32_t flags, int first_key, int last_key,
                 std::string_view since, std::string_view summary) {
  const bool write = (flags & kCmdWrite) != 0;
  return MakeSpec(std::move(name), arity, flags, first_key, last_key,
                  {write ? "write" : "read", "stream", (flags & kCmdFast) != 0 ? "fast" : "slow"},
                  "stream", since, summary);
}

CommandSpec XGroupSub(std::string name, int arity, uint32_t flags, std::string_view since,
                      std::string_view summary, CoordHandler handler) {
  const bool fast = (flags & kCmdFast) != 0;
  return WithCoordHandler(
      WithSingleKey(MakeSubcommand(std::move(name), arity, flags,
                                   {"write", "stream", fast ? "fast" : "slow"}, since, summary),
                    2, {"RW"}),
      handler);
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// XINFO GROUPS / CONSUMERS / STREAM FULL's groups

void SendGroupsFull(io::ReplyBuilder& rb, const StreamValue& s, size_t count) {
  if (s.groups() == nullptr) return rb.SendEmptyArray();
  rb.StartArray(s.groups()->size());
  for (const auto& [name, g] : s.groups()->groups()) {
    rb.StartMap(7);
    rb.SendBulk("name");
    rb.SendBulk(name);
    rb.SendBulk("last-delivered-id");
    SendId(rb, g->last_id);
    rb.SendBulk("entries-read");
    std::optional<int64_t> lag = GroupLag(s, *g);
    g->entries_read == StreamGroup::kInvalidEntriesRead ? rb.SendNull()
                                                        : rb.SendLong(g->entries_read);
    rb.SendBulk("lag");
    lag ? rb.SendLong(*lag) : rb.SendNull();
    rb.SendBulk("pel-count");
    rb.SendLong(static_cast<int64_t>(g->pel.size()));
    rb.SendBulk("pending");
    const size_t pel_n = count == 0 ? g->pel.size() : std::min(count, g->pel.size());
    rb.StartArray(pel_n);
    size_t i = 0;
    for (auto it = g->pel.begin(); i < pel_n; ++it, ++i) {
      rb.StartArray(4);
      SendId(rb, it->first);
      rb.SendBulk(it->second->consumer->name);
      rb.SendLong(it->second->delivery_time_ms);
      rb.SendLong(static_cast<int64_t>(it->second->delivery_count));
    }
    rb.SendBulk("consumers");
    rb.StartArray(g->consumers.size());
    for (const auto& [cname, c] : g->consumers) {
      rb.StartMap(4);
      rb.SendBulk("name");
      rb.SendBulk(cname);
      rb.SendBulk("seen-time");
      rb.SendLong(c->seen_time_ms);
      rb.SendBulk("pel-count");
      rb.SendLong(static_cast<int64_t>(c->pel.size()));
      rb.SendBulk("pending");
      const size_t cn = count == 0 ? c->pel.size() : std::min(count, c->pel.size());
      rb.StartArray(cn);
      size_t j = 0;
      for (auto it = c->pel.begin(); j < cn; ++it, ++j) {
        rb.StartArray(3);
        SendId(rb, it->first);
        rb.SendLong(it->second->delivery_time_ms);
        rb.SendLong(static_cast<int64_t>(it->second->delivery_count));
      }
    }
  }
}

awaitable<void> CmdXInfoGroups(CmdArgs args, ConnCmdContext& ctx) {
  co_await OnKeyShard(ctx, args[2], [&](DbSlice& db, io::ReplyBuilder& rb, int64_t now) {
    OpResult<PrimeIterator> found = db.FindReadOnlyOfType(args[2], ObjType::kStream, now);
    if (!found) {
      return std::string(StatusText(found.status() == OpStatus::kKeyNotFound
                                        ? OpStatus::kNoSuchKey : found.status()));
    }
    StreamValue& s = AsStream((*found)->second);
    if (s.groups() == nullptr) {
      rb.SendEmptyArray();
      return std::string();
    }
    rb.StartArray(s.groups()->size());
    for (const auto& [name, g] : s.groups()->groups()) {
      rb.StartMap(6);
      rb.SendBulk("name");
      rb.SendBulk(name);
      rb.SendBulk("consumers");
      rb.SendLong(static_cast<int64_t>(g->consumers.size()));
      rb.SendBulk("pending");
      rb.SendLong(static_cast<int64_t>(g->pel.size()));
      rb.SendBulk("last-delivered-id");
      SendId(rb, g->last_id);
      rb.SendBulk("entries-read");
      g->entries_read == StreamGroup::kInvalidEntriesRead ? rb.SendNull()
                                                          : rb.SendLong(g->entries_read);
      rb.SendBulk("lag");
      std::optional<int64_t> lag = GroupLag(s, *g);
      lag ? rb.SendLong(*lag) : rb.SendNull();
    }
    return std::string();
  });
}

awaitable<void> CmdXInfoConsumers(CmdArgs args, ConnCmdContext& ctx) {
  co_await OnKeyShard(ctx, args[2], [&](DbSlice& db, io::ReplyBuilder& rb, int64_t now) {
    OpResult<std::pair<StreamValue*, StreamGroup*>> found = FindGroup(db, args[2], args[3], now);
    if (!found) return std::string(StatusText(found.status()));
    if (found->first == nullptr) return std::string(StatusText(OpStatus::kNoSuchKey));
    if (found->second == nullptr) return NoGroupForKeyText(args[2], args[3]);
    const StreamGroup& g = *found->second;
    rb.StartArray(g.consumers.size());
    for (const auto& [name, c] : g.consumers) {
      rb.StartMap(3);
      rb.SendBulk("name");
      rb.SendBulk(name);
      rb.SendBulk("pending");
      rb.SendLong(static_cast<int64_t>(c->pel.size()));
      rb.SendBulk("idle");
      rb.SendLong(std::max<int64_t>(now - c->seen_time_ms, 0));
    }
    return std::string();
  });
}

void RegisterStreamGroupCommands(CommandRegistry* r) {
  constexpr uint32_t kW = kCmdWrite;
  constexpr uint32_t kWF = kCmdWrite | kCmdFast;
  r->RegisterShard(Spec("xack", -4, kWF, 1, 1, "5.0.0",
                        "Returns the number of messages that were successfully acknowledged by "
                        "the consumer group member of a stream."), CmdXAck);
  CommandSpec xpending = Spec("xpending", -3, kCmdReadOnly, 1, 1, "5.0.0",
                              "Returns the information and entries from a stream consumer "
                              "group's pending entries list.");
  xpending.tips = {"nondeterministic_output"};
  r->RegisterShard(std::move(xpending), CmdXPending);
  CommandSpec xclaim = Spec("xclaim", -6, kWF, 1, 1, "5.0.0",
                            "Changes, or acquires, ownership of a message in a consumer group, as "
                            "if the message was delivered a consumer group member.");
  xclaim.tips = {"nondeterministic_output"};
  r->RegisterShard(std::move(xclaim), CmdXClaim);
  CommandSpec xautoclaim = Spec("xautoclaim", -6, kWF, 1, 1, "6.2.0",
                                "Changes, or acquires, ownership of messages in a consumer group, "
                                "as if the messages were delivered to as consumer group member.");
  xautoclaim.tips = {"nondeterministic_output"};
  r->RegisterShard(std::move(xautoclaim), CmdXAutoClaim);

  // Not flagged "blocking" while it never blocks (see XREAD's registration).
  CommandSpec xreadgroup = Spec("xreadgroup", -7, kW, 0, 0, "5.0.0",
                                "Returns new or historical messages from a stream for a consumer "
                                "in a group. Blocks until a message is available otherwise.");
  xreadgroup.keys_fn = XReadGroupKeys;
  xreadgroup.categories.push_back("blocking");
  // Redis 7.0 flags its keys RO/access (the write is to the group state) and looks for STREAMS
  // from the fourth argument.
  xreadgroup.key_specs.push_back(KeySpec::AfterKeyword({"RO", "access"}, "STREAMS", 4, -1));
  xreadgroup.key_specs.back().limit = 2;
  xreadgroup.shard_route = RouteXReadGroup;
  xreadgroup.shard_handler = CmdXReadGroupShard;
  r->RegisterCoord(std::move(xreadgroup), CmdXReadGroup);

  CommandSpec xgroup;
  xgroup.name = "xgroup";
  xgroup.arity = -2;
  xgroup.kind = HandlerKind::kCoord;
  xgroup.categories = {"slow"};
  xgroup.summary = "A container for consumer groups commands.";
  xgroup.since = "5.0.0";
  xgroup.group = "stream";
  xgroup.subcommands.push_back(XGroupSub("create", -5, kCmdWrite | kCmdDenyOom, "5.0.0",
                                         "Creates a consumer group.", CmdXGroupCreate));
  xgroup.subcommands.push_back(XGroupSub("createconsumer", 5, kCmdWrite | kCmdDenyOom, "6.2.0",
                                         "Creates a consumer in a consumer group.",
                                         CmdXGroupCreateConsumer));
  xgroup.subcommands.push_back(XGroupSub("delconsumer", 5, kW, "5.0.0",
                                         "Deletes a consumer from a consumer group.",
                                         CmdXGroupDelConsumer));
  xgroup.subcommands.push_back(XGroupSub("destroy", 4, kW, "5.0.0",
                                         "Destroys a consumer group.", CmdXGroupDestroy));
  xgroup.subcommands.push_back(XGroupSub("setid", -5, kW, "5.0.0",
                                         "Sets the last-delivered ID of a consumer group.",
                                         CmdXGroupSetId));
  xgroup.subcommands.push_back(WithConnHandler(
      MakeSubcommand("help", 2, kCmdLoading | kCmdStale, {"stream", "slow"}, "5.0.0",
                     "Returns helpful text about the different subcommands."),
      CmdXGroupHelp));
  r->Register(std::move(xgroup));
}

}  // namespace dashkv
