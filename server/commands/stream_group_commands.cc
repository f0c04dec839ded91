// Stream consumer groups (Redis 7.0 semantics): XGROUP, the group replies of XINFO, the
// helpers the group command files share, and the registration of every group command
// (XREADGROUP: stream_readgroup_command.cc; XACK, XPENDING, XCLAIM, XAUTOCLAIM:
// stream_pel_commands.cc). XGROUP and XINFO run in one hop on the key's shard.
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "server/cmd_context.h"
#include "server/command_registry.h"
#include "server/commands/stream_group_ops.h"
#include "server/commands/stream_group_util.h"
#include "server/conn_state.h"
#include "server/storage/shard_set.h"
#include "server/values/stream_groups.h"
#include "server/values/stream_value.h"

namespace dashkv {

namespace group_cmd {

std::string NoGroupText(std::string_view key, std::string_view group,
                        std::string_view suffix) {
  std::string out = "NOGROUP No such key '";
  out.append(key).append("' or consumer group '").append(group).append("'").append(suffix);
  return out;
}

std::string NoGroupForKeyText(std::string_view key, std::string_view group) {
  std::string out = "NOGROUP No such consumer group '";
  out.append(group).append("' for key name '").append(key).append("'");
  return out;
}

// Sends the entry `id` ([id, [field, value ...]]), or a null when it is not in the stream.
void SendEntryOrNull(io::ReplyBuilder& rb, const StreamValue& s, StreamID id) {
  if (s.Range(id, id, false, 1, [&](const StreamValue::Entry& e) { SendEntry(rb, e); }) == 0) {
    rb.SendNull();
  }
}

// Finds the stream `key` and its group `group`: kWrongType, or a null group when the key or
// the group is missing. `for_write`: the group state will change (a mutable lookup, so that a
// snapshot in progress saves the value first; the caller marks the key unmodified for WATCH
// where Redis does not signal the change).
OpResult<std::pair<StreamValue*, StreamGroup*>> FindGroup(DbSlice& db, std::string_view key,
                                                          std::string_view group, int64_t now,
                                                          bool for_write) {
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

}  // namespace group_cmd

namespace {

using boost::asio::awaitable;
using namespace group_cmd;  // NOLINT: this family's helpers

constexpr std::string_view kKeyMustExist =
    "ERR The XGROUP subcommand requires the key to exist. Note that for CREATE you may want to "
    "use the MKSTREAM option to create an empty stream automatically.";
constexpr std::string_view kEntriesReadRange = "ERR value for ENTRIESREAD must be positive or -1";

// ---------------------------------------------------------------------------------------------
// XGROUP

// Runs f(db, body, now) -> error text (empty: success, the reply is in body) on the shard of
// `key`, then sends the reply. The key's watchers are not touched (Redis signals no change of
// group state) unless `*key_created` is set by f; the clients blocked on the key are served
// (woken) when f sets `*wake_blocked`.
template <typename F>
awaitable<void> OnKeyShard(ConnCmdContext& ctx, std::string_view key, F f,
                           const bool* key_created = nullptr,
                           const bool* wake_blocked = nullptr) {
  ShardSet& ss = ctx.shard_set();
  unsigned db = ctx.state.db;
  int64_t now = ctx.now_ms;
  io::ReplyBuilder body(ctx.rb.version());
  std::string err = co_await ss.Await(ss.ShardOf(key), [&](Shard& shard) {
    std::string out = f(shard.db(db), body, now);
    if (key_created == nullptr || !*key_created) shard.changes().MarkUnmodified();
    if (wake_blocked != nullptr && *wake_blocked) shard.blocking().Wake(db, key);
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
  bool destroyed = false;  // its blocked consumers answer an error, as Redis
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
    destroyed = true;
    rb.SendLong(1);
    db.Notify(kNotifyStream, "xgroup-destroy", args[2]);
    return std::string();
  }, nullptr, &destroyed);
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

CommandSpec Spec(std::string name, int arity, uint32_t flags, int first_key, int last_key,
                 std::string_view since, std::string_view summary) {
  const bool write = (flags & kCmdWrite) != 0;
  return MakeSpec(std::move(name), arity, flags, first_key, last_key,
                  {write ? "write" : "read", "stream", (flags & kCmdFast) != 0 ? "fast" : "slow"},
                  "stream", since, summary);
}

// An XGROUP subcommand; `key_flags`: its key spec's flags ("RW" and what it does to the stream).
CommandSpec XGroupSub(std::string name, int arity, uint32_t flags, std::string_view key_flags,
                      std::string_view since, std::string_view summary, CoordHandler handler) {
  const bool fast = (flags & kCmdFast) != 0;
  return WithCoordHandler(
      WithSingleKey(MakeSubcommand(std::move(name), arity, flags,
                                   {"write", "stream", fast ? "fast" : "slow"}, since, summary),
                    2, {"RW", key_flags}),
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
  // Flagged "blocking" (as Redis): the runner takes no intent locks for it; CmdXReadGroup takes
  // its own.
  CommandSpec xreadgroup = Spec("xreadgroup", -7, kW | kCmdBlocking, 0, 0, "5.0.0",
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
  constexpr uint32_t kWO = kCmdWrite | kCmdDenyOom;
  xgroup.subcommands.push_back(XGroupSub("create", -5, kWO, "insert", "5.0.0",
                                         "Creates a consumer group.", CmdXGroupCreate));
  xgroup.subcommands.push_back(XGroupSub("createconsumer", 5, kWO, "insert", "6.2.0",
                                         "Creates a consumer in a consumer group.",
                                         CmdXGroupCreateConsumer));
  xgroup.subcommands.push_back(XGroupSub("delconsumer", 5, kW, "delete", "5.0.0",
                                         "Deletes a consumer from a consumer group.",
                                         CmdXGroupDelConsumer));
  xgroup.subcommands.push_back(XGroupSub("destroy", 4, kW, "delete", "5.0.0",
                                         "Destroys a consumer group.", CmdXGroupDestroy));
  xgroup.subcommands.push_back(XGroupSub("setid", -5, kW, "update", "5.0.0",
                                         "Sets the last-delivered ID of a consumer group.",
                                         CmdXGroupSetId));
  xgroup.subcommands.push_back(WithConnHandler(
      MakeSubcommand("help", 2, kCmdLoading | kCmdStale, {"stream", "slow"}, "5.0.0",
                     "Returns helpful text about the different subcommands."),
      CmdXGroupHelp));
  r->Register(std::move(xgroup));
}
}  // namespace dashkv
