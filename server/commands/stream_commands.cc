// Stream commands (Redis 7.0 semantics): XADD, XRANGE, XREVRANGE, XLEN, XDEL, XTRIM, XSETID,
// XINFO STREAM and XREAD. Single-key commands run on the owning shard; XREAD of streams on
// several shards reads them in one hop per shard (copies of the entries) under shared intent
// locks and replies in argument order. XREAD BLOCK that finds nothing parks on the blocking
// machinery (server/tx/blocking.h, server/commands/blocking_commands.h).
#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "server/cmd_context.h"
#include "server/command_registry.h"
#include "server/commands/blocking_commands.h"
#include "server/commands/stream_read.h"
#include "server/commands/set_ops.h"
#include "server/commands/stream_group_ops.h"
#include "server/conn_state.h"
#include "server/storage/shard_set.h"
#include "server/tx/multi_key.h"
#include "server/values/stream_groups.h"
#include "server/values/stream_value.h"

namespace dashkv {

namespace {

using boost::asio::awaitable;

// Redis's LISTPACK_MAX_SAFETY_SIZE: XADD refuses entries whose fields and values add up to more.
constexpr size_t kMaxEntryBytes = size_t{1} << 30;

OpResult<PrimeIterator> FindStream(ShardCmdContext& ctx, std::string_view key) {
  return ctx.db.FindReadOnlyOfType(key, ObjType::kStream, ctx.now_ms);
}

OpResult<PrimeIterator> FindMutableStream(ShardCmdContext& ctx, std::string_view key) {
  return ctx.db.FindMutableOfType(key, ObjType::kStream, ctx.now_ms);
}

// The trimming options of XADD and XTRIM.
struct TrimArgs {
  enum class Strategy : uint8_t { kNone, kMaxLen, kMinId } strategy = Strategy::kNone;
  bool approx = false;
  uint64_t maxlen = 0;
  StreamID minid;
  int64_t limit = 0;
};

// The arguments of XADD.
struct AddArgs {
  TrimArgs trim;
  bool nomkstream = false;
  bool id_given = false;
  bool seq_auto = false;  // "<ms>-*"
  StreamID id;
  size_t field_pos = 0;
};

// Parses the options of XADD (from args[2], stopping at the id) or XTRIM (from args[2], all the
// rest) as Redis does, in its error order. Returns the index of the id (XADD) or args.size().
OpResult<size_t> ParseTrimOptions(CmdArgs args, bool xadd, const Config& config, AddArgs* out) {
  TrimArgs& t = out->trim;
  bool limit_given = false;
  size_t i = 2;
  using S = TrimArgs::Strategy;
  for (; i < args.size(); ++i) {
    const size_t more = args.size() - 1 - i;
    std::string_view opt = args[i];
    if (xadd && opt == "*") break;
    if ((EqualsIgnoreCase(opt, "MAXLEN") || EqualsIgnoreCase(opt, "MINID")) && more > 0) {
      const bool by_len = EqualsIgnoreCase(opt, "MAXLEN");
      if (t.strategy != S::kNone) return OpStatus::kStreamMaxlenMinid;
      t.approx = false;
      if (more >= 2 && (args[i + 1] == "~" || args[i + 1] == "=")) {
        t.approx = args[i + 1] == "~";
        ++i;
      }
      if (by_len) {
        std::optional<int64_t> n = ParseInt64(args[i + 1]);
        if (!n) return OpStatus::kNotAnInteger;
        if (*n < 0) return OpStatus::kStreamMaxlenNegative;
        t.maxlen = static_cast<uint64_t>(*n);
        t.strategy = S::kMaxLen;
      } else {
        std::optional<StreamID> id = ParseStreamID(args[i + 1], 0, /*strict=*/true);
        if (!id) return OpStatus::kStreamInvalidId;
        t.minid = *id;
        t.strategy = S::kMinId;
      }
      ++i;
    } else if (EqualsIgnoreCase(opt, "LIMIT") && more > 0) {
      std::optional<int64_t> n = ParseInt64(args[i + 1]);
      if (!n) return OpStatus::kNotAnInteger;
      if (*n < 0) return OpStatus::kStreamLimitNegative;
      t.limit = *n;
      limit_given = true;
      ++i;
    } else if (xadd && EqualsIgnoreCase(opt, "NOMKSTREAM")) {
      out->nomkstream = true;
    } else if (xadd) {
      std::optional<StreamID> id = ParseStreamID(opt, 0, /*strict=*/true, &out->seq_auto);
      if (!id) return OpStatus::kStreamInvalidId;
      out->id = *id;
      out->id_given = true;
      break;
    } else {
      return OpStatus::kSyntaxError;
    }
  }
  if (t.limit != 0 && t.strategy == S::kNone) return OpStatus::kStreamLimitNoStrategy;
  if (!xadd && t.strategy == S::kNone) return OpStatus::kStreamXtrimNoStrategy;
  if (limit_given) {
    if (!t.approx) return OpStatus::kStreamLimitNoApprox;
  } else if (t.approx) {
    int64_t per_node = config.stream_node_max_entries.load(std::memory_order_relaxed);
    t.limit = per_node > 0 && per_node <= INT64_MAX / 100 ? 100 * per_node : 10000;
  } else {
    t.limit = 0;
  }
  return i;
}

// Trims `s` as `t` says; returns the number of entries removed.
uint64_t Trim(StreamValue& s, const TrimArgs& t) {
  switch (t.strategy) {
    case TrimArgs::Strategy::kMaxLen:
      return s.TrimMaxLen(t.maxlen, t.approx, t.limit);
    case TrimArgs::Strategy::kMinId:
      return s.TrimMinId(t.minid, t.approx, t.limit);
    case TrimArgs::Strategy::kNone:
      break;
  }
  return 0;
}

// Returns the id XADD gives the new entry, or the error.
OpResult<StreamID> NewEntryId(const StreamValue& s, const AddArgs& a, int64_t now_ms) {
  StreamID last = s.last_id();
  if (last == StreamID::Max()) return OpStatus::kStreamExhausted;
  if (!a.id_given) {
    uint64_t ms = static_cast<uint64_t>(now_ms);
    if (ms > last.ms) return StreamID{ms, 0};
    last.Incr();
    return last;
  }
  if (a.seq_auto) {
    if (a.id.ms == last.ms) {
      // Redis 7.0 answers the sequence overflow with its "too large" error.
      if (last.seq == UINT64_MAX) return OpStatus::kStreamTooLarge;
      return StreamID{last.ms, last.seq + 1};
    }
    if (a.id.ms > last.ms) return StreamID{a.id.ms, 0};
    return OpStatus::kStreamIdTooSmall;
  }
  if (a.id <= last) return OpStatus::kStreamIdTooSmall;
  return a.id;
}

// XADD key [NOMKSTREAM] [MAXLEN|MINID [=|~] threshold [LIMIT count]] *|id field value
// [field value ...]
void CmdXAdd(CmdArgs args, ShardCmdContext& ctx) {
  AddArgs a;
  OpResult<size_t> id_pos = ParseTrimOptions(args, /*xadd=*/true, ctx.config, &a);
  if (!id_pos) return ctx.SendStatus(id_pos.status());
  const size_t first_field = *id_pos + 1;
  if (first_field > args.size() || args.size() - first_field < 2 ||
      (args.size() - first_field) % 2 != 0) {
    return ctx.rb.SendError(WrongArgsText("xadd"));
  }
  if (a.id_given && !a.seq_auto && a.id == StreamID{}) {
    return ctx.SendStatus(OpStatus::kStreamIdZero);
  }
  size_t bytes = 0;
  for (size_t i = first_field; i < args.size(); ++i) bytes += args[i].size();
  OpResult<PrimeIterator> found = FindMutableStream(ctx, args[1]);
  if (!found && found.status() != OpStatus::kKeyNotFound) return ctx.SendStatus(found.status());
  if (!found && a.nomkstream) {
    ctx.NoChange();
    return ctx.rb.SendNull();
  }
  PrimeIterator it;
  if (found) {
    it = *found;
    OpResult<StreamID> id = NewEntryId(AsStream(it->second), a, ctx.now_ms);
    if (!id) return ctx.SendStatus(id.status());
    a.id = *id;
  } else {
    a.id = *NewEntryId(StreamValue(), a, ctx.now_ms);  // any id above 0-0 starts a stream
  }
  if (bytes > kMaxEntryBytes) return ctx.SendStatus(OpStatus::kStreamTooLarge);
  if (!found) {
    OpResult<DbSlice::AddResult> added = ctx.db.FindOrAdd(args[1], ctx.now_ms);
    if (!added) return ctx.SendStatus(added.status());
    it = added->it;
    it->second.SetObject(ObjType::kStream, 0, new StreamValue());
  }
  StreamValue& s = AsStream(it->second);
  s.Append(a.id, args.subspan(first_field), StreamLimits::From(ctx.config));
  SendId(ctx.rb, a.id);
  ctx.db.Notify(kNotifyStream, "xadd", args[1]);
  if (Trim(s, a.trim) > 0) ctx.db.Notify(kNotifyStream, "xtrim", args[1]);
}

// XRANGE key start end [COUNT count] / XREVRANGE key end start [COUNT count]
template <bool kRev>
void CmdXRange(CmdArgs args, ShardCmdContext& ctx) {
  OpResult<StreamID> start = ParseRangeBound(args[kRev ? 3 : 2], true);
  if (!start) return ctx.SendStatus(start.status());
  OpResult<StreamID> end = ParseRangeBound(args[kRev ? 2 : 3], false);
  if (!end) return ctx.SendStatus(end.status());
  int64_t count = -1;
  for (size_t i = 4; i < args.size(); ++i) {
    if (EqualsIgnoreCase(args[i], "COUNT") && i + 1 < args.size()) {
      std::optional<int64_t> n = ParseInt64(args[++i]);
      if (!n) return ctx.SendStatus(OpStatus::kNotAnInteger);
      count = *n < 0 ? 0 : *n;
    } else {
      return ctx.SendStatus(OpStatus::kSyntaxError);
    }
  }
  OpResult<PrimeIterator> found = FindStream(ctx, args[1]);
  if (!found) {
    if (found.status() != OpStatus::kKeyNotFound) return ctx.SendStatus(found.status());
    return ctx.rb.SendEmptyArray();
  }
  if (count == 0) return ctx.rb.SendNullArray();
  const StreamValue& s = AsStream((*found)->second);
  io::ReplyBuilder body(ctx.rb.version());
  size_t n = s.Range(*start, *end, kRev, count < 0 ? 0 : static_cast<size_t>(count),
                     [&](const StreamValue::Entry& e) { SendEntry(body, e); });
  ctx.rb.StartArray(n);
  ctx.rb.SendRaw(body.buffer());
}

// XLEN key
void CmdXLen(CmdArgs args, ShardCmdContext& ctx) {
  OpResult<PrimeIterator> found = FindStream(ctx, args[1]);
  if (!found) return SendLongOrError(ctx, found.status(), 0);
  ctx.rb.SendLong(static_cast<int64_t>(AsStream((*found)->second).length()));
}

// XDEL key id [id ...]
void CmdXDel(CmdArgs args, ShardCmdContext& ctx) {
  OpResult<PrimeIterator> found = FindMutableStream(ctx, args[1]);
  if (!found) {
    ctx.NoChange();
    return SendLongOrError(ctx, found.status(), 0);
  }
  std::vector<StreamID> ids;
  for (size_t i = 2; i < args.size(); ++i) {
    std::optional<StreamID> id = ParseStreamID(args[i], 0, /*strict=*/true);
    if (!id) return ctx.SendStatus(OpStatus::kStreamInvalidId);
    ids.push_back(*id);
  }
  StreamValue& s = AsStream((*found)->second);
  int64_t deleted = 0;
  for (StreamID id : ids) deleted += s.Delete(id);
  if (deleted > 0) {
    ctx.db.Notify(kNotifyStream, "xdel", args[1]);
  } else {
    ctx.NoChange();
  }
  ctx.rb.SendLong(deleted);
}

// XTRIM key MAXLEN|MINID [=|~] threshold [LIMIT count]
void CmdXTrim(CmdArgs args, ShardCmdContext& ctx) {
  AddArgs a;
  OpResult<size_t> parsed = ParseTrimOptions(args, /*xadd=*/false, ctx.config, &a);
  if (!parsed) return ctx.SendStatus(parsed.status());
  OpResult<PrimeIterator> found = FindMutableStream(ctx, args[1]);
  if (!found) {
    ctx.NoChange();
    return SendLongOrError(ctx, found.status(), 0);
  }
  uint64_t deleted = Trim(AsStream((*found)->second), a.trim);
  if (deleted > 0) {
    ctx.db.Notify(kNotifyStream, "xtrim", args[1]);
  } else {
    ctx.NoChange();
  }
  ctx.rb.SendLong(static_cast<int64_t>(deleted));
}

// XSETID key last-id [ENTRIESADDED entries-added] [MAXDELETEDID max-deleted-id]
void CmdXSetId(CmdArgs args, ShardCmdContext& ctx) {
  std::optional<StreamID> id = ParseStreamID(args[2], 0, /*strict=*/true);
  if (!id) return ctx.SendStatus(OpStatus::kStreamInvalidId);
  int64_t entries_added = -1;
  StreamID max_deleted;
  for (size_t i = 3; i < args.size(); i += 2) {
    const bool more = i + 1 < args.size();
    if (EqualsIgnoreCase(args[i], "ENTRIESADDED") && more) {
      std::optional<int64_t> n = ParseInt64(args[i + 1]);
      if (!n) return ctx.SendStatus(OpStatus::kNotAnInteger);
      if (*n < 0) return ctx.SendStatus(OpStatus::kStreamEntriesAddedNegative);
      entries_added = *n;
    } else if (EqualsIgnoreCase(args[i], "MAXDELETEDID") && more) {
      std::optional<StreamID> m = ParseStreamID(args[i + 1], 0, /*strict=*/true);
      if (!m) return ctx.SendStatus(OpStatus::kStreamInvalidId);
      if (*id < *m) return ctx.SendStatus(OpStatus::kXsetidBelowGivenMaxDeleted);
      max_deleted = *m;
    } else {
      return ctx.SendStatus(OpStatus::kSyntaxError);
    }
  }
  OpResult<PrimeIterator> found = FindMutableStream(ctx, args[1]);
  if (!found) {
    ctx.NoChange();
    return ctx.SendStatus(found.status() == OpStatus::kKeyNotFound ? OpStatus::kNoSuchKey
                                                                   : found.status());
  }
  StreamValue& s = AsStream((*found)->second);
  // Redis 7.0 checks a new last id only against the live entries (not the max deleted id).
  if (s.length() > 0) {
    if (*id < *s.LastLiveId()) {
      ctx.NoChange();
      return ctx.SendStatus(OpStatus::kXsetidBelowTop);
    }
    if (entries_added != -1 && s.length() > static_cast<uint64_t>(entries_added)) {
      ctx.NoChange();
      return ctx.SendStatus(OpStatus::kXsetidEntriesAddedBelowLength);
    }
  }
  s.set_last_id(*id);
  if (entries_added != -1) s.set_entries_added(static_cast<uint64_t>(entries_added));
  if (max_deleted != StreamID{}) s.set_max_deleted_id(max_deleted);
  ctx.rb.SendOk();
  ctx.db.Notify(kNotifyStream, "xsetid", args[1]);
}

// What XINFO STREAM reports.
struct StreamInfo {
  uint64_t length = 0;
  uint64_t nodes = 0;
  StreamID last_id, max_deleted, first_id;
  uint64_t entries_added = 0;
  std::optional<CopiedEntry> first, last;
  std::vector<CopiedEntry> entries;  // FULL
  size_t groups = 0;
  std::string groups_full;  // FULL: the encoded "groups" value
};

// XINFO STREAM key [FULL [COUNT count]]
awaitable<void> CmdXInfoStream(CmdArgs args, ConnCmdContext& ctx) {
  bool full = false;
  size_t full_count = 10;  // FULL's default; 0: every entry
  if (args.size() > 3) {
    if (!EqualsIgnoreCase(args[3], "FULL") ||
        (args.size() > 4 && (args.size() != 6 || !EqualsIgnoreCase(args[4], "COUNT")))) {
      co_return ctx.rb.SendError(SubcommandSyntaxText(args[0], args[1]));
    }
    full = true;
    if (args.size() == 6) {
      std::optional<int64_t> n = ParseInt64(args[5]);
      if (!n) co_return ctx.SendStatus(OpStatus::kNotAnInteger);
      full_count = *n < 0 ? 10 : static_cast<size_t>(*n);
    }
  }
  ShardSet& ss = ctx.shard_set();
  unsigned db = ctx.state.db;
  int64_t now = ctx.now_ms;
  std::string_view key = args[2];
  const io::RespVersion version = ctx.rb.version();
  OpResult<StreamInfo> info = co_await ss.Await(ss.ShardOf(key), [&](Shard& shard) {
    OpResult<PrimeIterator> found = shard.db(db).FindReadOnlyOfType(key, ObjType::kStream, now);
    if (!found) return OpResult<StreamInfo>(found.status());
    const StreamValue& s = AsStream((*found)->second);
    StreamInfo out;
    out.groups = s.groups() != nullptr ? s.groups()->size() : 0;
    out.length = s.length();
    out.nodes = s.node_count();
    out.last_id = s.last_id();
    out.max_deleted = s.max_deleted_id();
    out.first_id = s.first_id();
    out.entries_added = s.entries_added();
    if (full) {
      s.Range(StreamID{}, StreamID::Max(), false, full_count,
              [&](const StreamValue::Entry& e) { out.entries.push_back(CopyEntry(e)); });
      io::ReplyBuilder groups(version);
      SendGroupsFull(groups, s, full_count);
      out.groups_full = std::move(groups.buffer());
      return OpResult<StreamInfo>(std::move(out));
    }
    s.Range(StreamID{}, StreamID::Max(), false, 1,
            [&](const StreamValue::Entry& e) { out.first = CopyEntry(e); });
    s.Range(StreamID{}, StreamID::Max(), true, 1,
            [&](const StreamValue::Entry& e) { out.last = CopyEntry(e); });
    return OpResult<StreamInfo>(std::move(out));
  });
  if (!info) {
    co_return ctx.SendStatus(info.status() == OpStatus::kKeyNotFound ? OpStatus::kNoSuchKey
                                                                     : info.status());
  }
  io::ReplyBuilder& rb = ctx.rb;
  rb.StartMap(full ? 9 : 10);
  rb.SendBulk("length");
  rb.SendLong(static_cast<int64_t>(info->length));
  rb.SendBulk("radix-tree-keys");
  rb.SendLong(static_cast<int64_t>(info->nodes));
  // Redis counts the nodes of its radix tree; the B-tree has no such count: keys + 1 is what a
  // radix tree of few keys reports.
  rb.SendBulk("radix-tree-nodes");
  rb.SendLong(static_cast<int64_t>(info->nodes + 1));
  rb.SendBulk("last-generated-id");
  SendId(rb, info->last_id);
  rb.SendBulk("max-deleted-entry-id");
  SendId(rb, info->max_deleted);
  rb.SendBulk("entries-added");
  rb.SendLong(static_cast<int64_t>(info->entries_added));
  rb.SendBulk("recorded-first-entry-id");
  SendId(rb, info->first_id);
  if (full) {
    rb.SendBulk("entries");
    rb.StartArray(info->entries.size());
    for (const CopiedEntry& e : info->entries) SendCopiedEntry(rb, e);
    rb.SendBulk("groups");
    co_return rb.SendRaw(info->groups_full);
  }
  rb.SendBulk("groups");
  rb.SendLong(static_cast<int64_t>(info->groups));
  rb.SendBulk("first-entry");
  info->first ? SendCopiedEntry(rb, *info->first) : rb.SendNull();
  rb.SendBulk("last-entry");
  info->last ? SendCopiedEntry(rb, *info->last) : rb.SendNull();
}

// XINFO HELP
void CmdXInfoHelp(CmdArgs, ConnCmdContext& ctx) {
  static constexpr std::string_view kHelp[] = {
      "XINFO <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "CONSUMERS <key> <groupname>",
      "    Show consumers of <groupname>.",
      "GROUPS <key>",
      "    Show the stream consumer groups.",
      "STREAM <key> [FULL [COUNT <count>]",
      "    Show information about the stream.",
      "HELP",
      "    Prints this help.",
  };
  SendHelp(ctx.rb, kHelp);
}

// The parsed arguments of XREAD.
struct XReadArgs {
  size_t count = 0;        // 0: no limit
  int64_t block_ms = -1;   // BLOCK's milliseconds (0: forever); -1 without BLOCK
  size_t first_key = 0;
  size_t num_keys = 0;
  // Per key: the id to read after, or nullopt for "$"; or the parse error of that id.
  std::vector<std::optional<StreamID>> after;
  std::vector<OpStatus> id_error;
};

// Parses XREAD [COUNT count] [BLOCK ms] STREAMS key [key ...] id [id ...].
OpResult<XReadArgs> ParseXRead(CmdArgs args) {
  XReadArgs out;
  size_t i = 1;
  for (; i < args.size(); ++i) {
    const bool more = i + 1 < args.size();
    if (EqualsIgnoreCase(args[i], "COUNT") && more) {
      std::optional<int64_t> n = ParseInt64(args[++i]);
      if (!n) return OpStatus::kNotAnInteger;
      out.count = *n < 0 ? 0 : static_cast<size_t>(*n);
    } else if (EqualsIgnoreCase(args[i], "BLOCK") && more) {
      std::optional<int64_t> ms = ParseInt64(args[++i]);
      if (!ms) return OpStatus::kTimeoutNotInteger;
      if (*ms < 0) return OpStatus::kTimeoutNegative;
      out.block_ms = *ms;
    } else if (EqualsIgnoreCase(args[i], "STREAMS") && more) {
      size_t n = args.size() - (i + 1);
      if (n % 2 != 0) return OpStatus::kStreamUnbalancedXread;
      out.first_key = i + 1;
      out.num_keys = n / 2;
      break;
    } else {
      return OpStatus::kSyntaxError;
    }
  }
  if (out.first_key == 0) return OpStatus::kSyntaxError;
  for (size_t k = 0; k < out.num_keys; ++k) {
    std::string_view arg = args[out.first_key + out.num_keys + k];
    OpStatus err = OpStatus::kOk;
    std::optional<StreamID> id;
    if (arg != "$") {
      id = ParseStreamID(arg, 0, /*strict=*/true);
      if (!id) err = arg == ">" ? OpStatus::kStreamXreadGt : OpStatus::kStreamInvalidId;
    }
    out.after.push_back(id);
    out.id_error.push_back(err);
  }
  return out;
}

// The keys of an XREAD call: the first half of the arguments after STREAMS.
KeyIndexes XReadKeys(CmdArgs args) {
  KeyIndexes out;
  for (size_t i = 1; i + 1 < args.size(); ++i) {
    if (EqualsIgnoreCase(args[i], "STREAMS")) {
      size_t n = args.size() - (i + 1);
      if (n % 2 != 0) return out;
      for (size_t k = 0; k < n / 2; ++k) out.push_back(static_cast<uint32_t>(i + 1 + k));
      return out;
    }
    if (EqualsIgnoreCase(args[i], "COUNT") || EqualsIgnoreCase(args[i], "BLOCK")) ++i;
  }
  return out;
}

// Whether an XREAD call has a BLOCK option (before STREAMS).
bool XReadBlocks(CmdArgs args) {
  for (size_t i = 1; i + 1 < args.size(); ++i) {
    if (EqualsIgnoreCase(args[i], "STREAMS")) return false;
    if (EqualsIgnoreCase(args[i], "BLOCK")) return true;
    if (EqualsIgnoreCase(args[i], "COUNT")) ++i;
  }
  return false;
}

// What one key of XREAD holds: its type check and, for a stream, its last id.
struct XReadKeyState {
  OpStatus status = OpStatus::kOk;  // kWrongType
  StreamID last_id;                 // 0-0 when missing
};

// Reads the key with index k (argument args[first_key + k]) of `x` on its shard.
StreamRead ReadOneStream(DbSlice& db, CmdArgs args, const XReadArgs& x, size_t k, int64_t now,
                         XReadKeyState* state) {
  StreamRead r;
  r.key = k;
  *state = XReadKeyState{};
  OpResult<PrimeIterator> found =
      db.FindReadOnlyOfType(args[x.first_key + k], ObjType::kStream, now);
  if (!found) {
    if (found.status() != OpStatus::kKeyNotFound) state->status = found.status();
    return r;
  }
  const StreamValue& s = AsStream((*found)->second);
  state->last_id = s.last_id();
  if (!x.after[k] || x.id_error[k] != OpStatus::kOk) return r;  // "$": nothing is newer yet
  r.entries = ReadAfter(s, *x.after[k], x.count);
  return r;
}

// Returns XREAD's first error in key order (per key: its type, then its id, as Redis checks
// them), or kOk.
OpStatus XReadError(const XReadArgs& x, const std::vector<XReadKeyState>& states) {
  for (size_t k = 0; k < x.num_keys; ++k) {
    if (states[k].status != OpStatus::kOk) return states[k].status;
    if (x.id_error[k] != OpStatus::kOk) return x.id_error[k];
  }
  return OpStatus::kOk;
}

// Sends the reply of an XREAD that does not park (null array when nothing is there, BLOCK
// given or not), or its first error.
void SendXRead(io::ReplyBuilder& rb, CmdArgs args, const XReadArgs& x,
               const std::vector<StreamRead>& results,
               const std::vector<XReadKeyState>& states) {
  if (OpStatus err = XReadError(x, states); err != OpStatus::kOk) return SendStatus(rb, err);
  std::vector<std::string> keys(args.begin() + x.first_key,
                                args.begin() + x.first_key + x.num_keys);
  SendStreamReads(rb, keys, results);
}

// XREAD with every key on this shard (never parks: BLOCK calls are routed to CmdXRead, except
// inside EXEC, where they do not block).
void CmdXReadShard(CmdArgs args, ShardCmdContext& ctx) {
  OpResult<XReadArgs> x = ParseXRead(args);
  if (!x) return ctx.SendStatus(x.status());
  std::vector<StreamRead> results(x->num_keys);
  std::vector<XReadKeyState> states(x->num_keys);
  for (size_t k = 0; k < x->num_keys; ++k) {
    results[k] = ReadOneStream(ctx.db, args, *x, k, ctx.now_ms, &states[k]);
  }
  SendXRead(ctx.rb, args, *x, results, states);
}

// XREAD [COUNT count] [BLOCK ms] STREAMS key [key ...] id [id ...]. Flagged blocking, so the
// runner takes no intent locks: it takes shared locks on its keys itself, in its hop (atomic
// with respect to MULTI/EXEC and multi-key writes). With BLOCK (outside EXEC and scripts) and
// nothing to read, "$" becomes the last id that hop saw and the call parks on the blocking
// machinery.
awaitable<void> CmdXRead(CmdArgs args, ConnCmdContext& ctx) {
  OpResult<XReadArgs> x = ParseXRead(args);
  if (!x) co_return ctx.SendStatus(x.status());
  if (x->block_ms >= 0 && ctx.from_script) {
    // Named as the script wrote it, as Redis.
    co_return ctx.rb.SendError("ERR " + std::string(args[0]) +
                               " command is not allowed with BLOCK option from scripts");
  }
  const bool parks = x->block_ms >= 0 && ctx.locks == nullptr && !ctx.in_exec;
  ShardSet& ss = ctx.shard_set();
  KeysByShard groups(ss, args, x->first_key, x->first_key + x->num_keys - 1);
  std::vector<StreamRead> results(x->num_keys);
  std::vector<XReadKeyState> states(x->num_keys);
  unsigned db = ctx.state.db;
  int64_t now = ctx.now_ms;
  auto read = [&](Shard& shard) {
    for (uint32_t i : groups.indexes[shard.index()]) {
      size_t k = i - x->first_key;
      results[k] = ReadOneStream(shard.db(db), args, *x, k, now, &states[k]);
    }
  };
  if (ctx.locks != nullptr || ctx.in_exec || ss.size() == 1) {
    co_await OnlyHop(ss, ctx.locks, groups.shards, read);
  } else {
    KeyLocks locks(ss);
    for (size_t k = 0; k < x->num_keys; ++k) {
      locks.Add(db, args[x->first_key + k], LockMode::kShared);
    }
    locks.set_one_hop(true);
    co_await OnlyHop(ss, &locks, groups.shards, read);
    if (locks.held()) locks.Release();
  }
  bool found = false;
  for (const StreamRead& r : results) found |= !r.entries.empty();
  if (!parks || found || XReadError(*x, states) != OpStatus::kOk) {
    co_return SendXRead(ctx.rb, args, *x, results, states);
  }
  // Nothing yet: park. "$" is the last id read above; the blocking path reads again (an entry
  // added since is served at once), so nothing added after this read is missed.
  auto req = std::make_shared<BlockRequest>();
  req->kind = BlockRequest::Kind::kStreamRead;
  req->count = static_cast<int64_t>(std::min<size_t>(x->count, INT64_MAX));
  for (size_t k = 0; k < x->num_keys; ++k) {
    req->keys.emplace_back(args[x->first_key + k]);
    req->after.push_back(x->after[k].value_or(states[k].last_id));
  }
  // A deadline past the clock's range never comes: it waits forever (as Redis 7.0 does).
  int64_t timeout = x->block_ms > INT64_MAX - ctx.now_ms ? 0 : x->block_ms;
  co_await RunBlockingStreamRead(ctx, std::move(req), timeout);
}

// Routes an XREAD whose keys all live on one shard to that shard.
std::optional<unsigned> RouteXRead(CmdArgs args, const ServerServices& services) {
  KeyIndexes keys = XReadKeys(args);
  if (keys.empty() || XReadBlocks(args)) return std::nullopt;
  const ShardSet& ss = services.shard_set;
  unsigned sid = ss.ShardOf(args[keys[0]]);
  for (uint32_t k : keys) {
    if (ss.ShardOf(args[k]) != sid) return std::nullopt;
  }
  return sid;
}

CommandSpec Spec(std::string name, int arity, uint32_t flags, int first_key, int last_key,
                 std::string_view since, std::string_view summary) {
  const bool write = (flags & kCmdWrite) != 0;
  return MakeSpec(std::move(name), arity, flags, first_key, last_key,
                  {write ? "write" : "read", "stream", (flags & kCmdFast) != 0 ? "fast" : "slow"},
                  "stream", since, summary);
}

constexpr uint32_t kWOF = kCmdWrite | kCmdDenyOom | kCmdFast;
constexpr uint32_t kWF = kCmdWrite | kCmdFast;
constexpr uint32_t kW = kCmdWrite;
constexpr uint32_t kRF = kCmdReadOnly | kCmdFast;
constexpr uint32_t kR = kCmdReadOnly;

}  // namespace

void RegisterStreamCommands(CommandRegistry* r) {
  CommandSpec xadd = Spec("xadd", -5, kWOF, 1, 1, "5.0.0", "Appends a new message to a stream. "
                          "Creates the key if it doesn't exist.");
  xadd.tips = {"nondeterministic_output"};
  r->RegisterShard(std::move(xadd), CmdXAdd);
  r->RegisterShard(Spec("xrange", -4, kR, 1, 1, "5.0.0",
                        "Returns the messages from a stream within a range of IDs."),
                   CmdXRange<false>);
  r->RegisterShard(Spec("xrevrange", -4, kR, 1, 1, "5.0.0", "Returns the messages from a stream "
                        "within a range of IDs in reverse order."), CmdXRange<true>);
  r->RegisterShard(Spec("xlen", 2, kRF, 1, 1, "5.0.0",
                        "Return the number of messages in a stream."), CmdXLen);
  r->RegisterShard(Spec("xdel", -3, kWF, 1, 1, "5.0.0",
                        "Returns the number of messages after removing them from a stream."),
                   CmdXDel);
  r->RegisterShard(Spec("xtrim", -4, kW, 1, 1, "5.0.0",
                        "Deletes messages from the beginning of a stream."), CmdXTrim);
  r->RegisterShard(Spec("xsetid", -3, kWOF, 1, 1, "5.0.0",
                        "An internal command for replicating stream values."), CmdXSetId);

  // Flagged "blocking" (as Redis): the runner takes no intent locks for it; CmdXRead takes its
  // own when it reads several shards.
  CommandSpec xread = Spec("xread", -4, kR | kCmdBlocking, 0, 0, "5.0.0",
                           "Returns messages from multiple streams with IDs greater than the ones "
                           "requested. Blocks until a message is available otherwise.");
  xread.keys_fn = XReadKeys;
  xread.categories.push_back("blocking");
  xread.key_specs.push_back(KeySpec::AfterKeyword({"RO", "access"}, "STREAMS", 1, -1));
  xread.key_specs.back().limit = 2;
  xread.shard_route = RouteXRead;
  xread.shard_handler = CmdXReadShard;
  r->RegisterCoord(OneHop(std::move(xread)), CmdXRead);

  CommandSpec xinfo;
  xinfo.name = "xinfo";
  xinfo.arity = -2;
  xinfo.kind = HandlerKind::kCoord;
  xinfo.categories = {"slow"};
  xinfo.summary = "A container for stream introspection commands.";
  xinfo.since = "5.0.0";
  xinfo.group = "stream";
  xinfo.subcommands.push_back(WithCoordHandler(
      WithSingleKey(MakeSubcommand("stream", -3, kCmdReadOnly, {"read", "stream", "slow"},
                                   "5.0.0", "Returns information about a stream."),
                    2, {"RO"}),
      CmdXInfoStream));
  xinfo.subcommands.push_back(WithCoordHandler(
      WithSingleKey(MakeSubcommand("groups", 3, kCmdReadOnly, {"read", "stream", "slow"},
                                   "5.0.0", "Returns a list of the consumer groups of a stream."),
                    2, {"RO"}),
      CmdXInfoGroups));
  xinfo.subcommands.push_back(WithCoordHandler(
      WithSingleKey(MakeSubcommand("consumers", 4, kCmdReadOnly, {"read", "stream", "slow"},
                                   "5.0.0", "Returns a list of the consumers in a consumer group."),
                    2, {"RO"}),
      CmdXInfoConsumers));
  xinfo.subcommands.push_back(WithConnHandler(
      MakeSubcommand("help", 2, kCmdLoading | kCmdStale, {"stream", "slow"}, "5.0.0",
                     "Returns helpful text about the different subcommands."),
      CmdXInfoHelp));
  r->Register(std::move(xinfo));
}

}  // namespace dashkv
