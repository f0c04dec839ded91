// Server commands: DBSIZE, FLUSHDB, FLUSHALL, TIME, CONFIG, COMMAND, SHUTDOWN, LOLWUT.
// CONFIG and COMMAND dispatch through their subcommand tables (command_registry.h).
#include <signal.h>
#include <unistd.h>
#include <algorithm>
#include <optional>

#include "core/base/logging.h"
#include "core/str_util.h"
#include "core/glob.h"
#include "io/connection.h"
#include "io/listener.h"
#include "server/acl/acl_check.h"
#include "server/acl/acl_user.h"
#include "server/tracking/tracking_hub.h"
#include "server/cmd_context.h"
#include "server/scripting/script_runner.h"
#include "server/command_registry.h"
#include "server/tx/multi_key.h"
#include "server/config.h"
#include "server/persistence/snapshot_manager.h"
#include "server/storage/shard_set.h"
#include "server/server_stats.h"
#include "server/version.h"

namespace dashkv {

namespace {

using boost::asio::awaitable;

// DBSIZE
awaitable<void> CmdDbSize(CmdArgs, ConnCmdContext& ctx) {
  ShardSet& ss = ctx.shard_set();
  std::vector<int64_t> sizes(ss.size());
  unsigned db = ctx.state.db;
  co_await ss.AwaitAll([&](Shard& shard) {
    DbSlice* slice = shard.db_if_exists(db);
    sizes[shard.index()] = slice ? static_cast<int64_t>(slice->size()) : 0;
  });
  int64_t total = 0;
  for (int64_t s : sizes) total += s;
  ctx.rb.SendLong(total);
}

// Parses the optional ASYNC|SYNC of FLUSHDB/FLUSHALL; false after replying with an error.
bool ParseFlushMode(CmdArgs args, ConnCmdContext& ctx) {
  if (args.size() == 1) return true;
  if (args.size() == 2 && (EqualsIgnoreCase(args[1], "ASYNC") ||
                           EqualsIgnoreCase(args[1], "SYNC"))) {
    return true;
  }
  ctx.SendStatus(OpStatus::kSyntaxError);
  return false;
}

// FLUSHDB [ASYNC|SYNC]
awaitable<void> CmdFlushDb(CmdArgs args, ConnCmdContext& ctx) {
  if (!ParseFlushMode(args, ctx)) co_return;
  unsigned db = ctx.state.db;
  TrackingHub& tracking = ctx.tracking();
  co_await ctx.shard_set().AwaitAll([&](Shard& shard) {
    if (DbSlice* slice = shard.db_if_exists(db)) slice->Clear();
    shard.evictor().Publish();  // no shard admits a write on another's pre-flush keys
    tracking.table(shard.index()).ClearKeys();  // as Redis: every tracked key, any database
  });
  tracking.InvalidateAll();
  ctx.rb.SendOk();
}

// FLUSHALL [ASYNC|SYNC]
// As Redis 7.0: a running save is aborted, and with a `save` schedule the empty dataset is saved
// at once (still holding every shard, so nothing lands between the flush and that save).
awaitable<void> CmdFlushAll(CmdArgs args, ConnCmdContext& ctx) {
  if (!ParseFlushMode(args, ctx)) co_return;
  SnapshotManager& snapshots = ctx.snapshots();
  TrackingHub& tracking = ctx.tracking();
  co_await ctx.shard_set().AwaitAll([&](Shard& shard) {
    snapshots.AbortOnShard(shard);
    shard.ClearAllDbs();
    shard.evictor().Publish();
    tracking.table(shard.index()).ClearKeys();
  });
  tracking.InvalidateAll();
  if (ctx.config().has_save_points.load()) {
    if (absl::Status st = co_await snapshots.Start(SnapshotManager::SaveKind::kForeground);
        st.ok()) co_await snapshots.AwaitDone();
  }
  ctx.rb.SendOk();
}

// TIME
void CmdTime(CmdArgs, ConnCmdContext& ctx) {
  int64_t us = NowUs();
  ctx.rb.StartArray(2);
  ctx.rb.SendBulk(StrCat(us / 1000000));
  ctx.rb.SendBulk(StrCat(us % 1000000));
}

// CONFIG GET parameter [parameter ...]
void ConfigGet(CmdArgs args, ConnCmdContext& ctx) {
  std::vector<std::string_view> patterns(args.begin() + 2, args.end());
  auto pairs = ctx.config().Get(patterns);
  ctx.rb.StartMap(pairs.size());
  for (const auto& [name, value] : pairs) {
    ctx.rb.SendBulk(name);
    ctx.rb.SendBulk(value);
  }
}

// Whether a CONFIG SET changes what the shards' published eviction figures count.
bool ChangesEvictionFigures(
    const std::vector<std::pair<std::string_view, std::string_view>>& pairs) {
  for (const auto& [name, value] : pairs) {
    if (EqualsIgnoreCase(name, "maxmemory-policy") || EqualsIgnoreCase(name, "maxmemory")) {
      return true;
    }
  }
  return false;
}

// CONFIG SET parameter value [parameter value ...]
// A call that may move a listener (tls-port) runs on the listener's engine (a hop there and
// back), which serializes such calls; any other runs here.
awaitable<void> ConfigSet(CmdArgs args, ConnCmdContext& ctx) {
  // Like Redis 7: a name without a value is a syntax error, not an arity error.
  if (args.size() % 2 != 0) {
    ctx.SendStatus(OpStatus::kSyntaxError);
    co_return;
  }
  std::vector<std::pair<std::string_view, std::string_view>> pairs;
  for (size_t i = 2; i + 1 < args.size(); i += 2) pairs.emplace_back(args[i], args[i + 1]);
  Config& config = ctx.config();
  const bool local_client = ctx.state.local_client;
  std::string err;
  if (config.MovesListener(pairs)) {
    err = co_await ctx.pool().Await(io::Listener::kAcceptEngine,
                                    [&] { return config.Set(pairs, local_client); });
  } else {
    err = config.Set(pairs, local_client);
  }
  if (!err.empty()) {
    ctx.rb.SendError(err);
    co_return;
  }
  // A shard admits a write over maxmemory while another shard's published figures say it can
  // still evict; the policy decides which keys count (volatile or all) and a limit newly set
  // finds figures last published under the old one: every shard publishes afresh.
  if (ChangesEvictionFigures(pairs)) {
    co_await ctx.shard_set().AwaitAll([](Shard& shard) { shard.evictor().Publish(); });
  }
  ctx.rb.SendOk();
}

// CONFIG REWRITE
// Rewrites one small file on the connection's thread: an admin command, rare, bounded cost.
void ConfigRewrite(CmdArgs, ConnCmdContext& ctx) {
  std::string err = ctx.config().Rewrite();
  if (!err.empty()) return ctx.rb.SendError(err);
  ctx.rb.SendOk();
}

// CONFIG RESETSTAT: resets every engine's counters (a hop to each) and the time over
// maxmemory.
awaitable<void> ConfigResetStat(CmdArgs, ConnCmdContext& ctx) {
  ServerStats& stats = ctx.stats();
  if (Shard* shard = Shard::Current(); shard != nullptr && shard->evictor().budget() != nullptr) {
    shard->evictor().budget()->ResetExceededTime();
  }
  co_await ctx.shard_set().AwaitAll([&stats](Shard& shard) {
    stats.Reset(shard.index());
    shard.stats() = ShardStats{};
    io::Engine::Current()->net().Reset();
  });
  ctx.rb.SendOk();
}

// CONFIG HELP
void ConfigHelp(CmdArgs, ConnCmdContext& ctx) {
  static constexpr std::string_view kHelp[] = {
      "CONFIG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "GET <pattern>",
      "    Return parameters matching the glob-like <pattern> and their values.",
      "SET <directive> <value>",
      "    Set the configuration <directive> to <value>.",
      "RESETSTAT",
      "    Reset statistics reported by the INFO command.",
      "REWRITE",
      "    Rewrite the configuration file.",
      "HELP",
      "    Print this help.",
  };
  SendHelp(ctx.rb, kHelp);
}

// Sends one COMMAND INFO entry (Redis 7's 10-element layout); a container's subcommands are
// its 10th element.
void SendCommandInfo(const CommandSpec& spec, io::ReplyBuilder& rb) {
  rb.StartArray(10);
  rb.SendBulk(spec.name);
  rb.SendLong(spec.arity);
  std::vector<std::string_view> flags = FlagNames(spec.flags);
  if (spec.MovableKeys()) flags.push_back("movablekeys");  // Redis lists it last
  rb.StartSet(flags.size());
  for (auto f : flags) rb.SendSimpleString(f);
  rb.SendLong(spec.first_key);
  rb.SendLong(spec.last_key);
  rb.SendLong(spec.key_step);
  rb.StartSet(spec.categories.size());
  for (auto c : spec.categories) rb.SendSimpleString(StrCat("@", c));
  rb.StartSet(spec.tips.size());
  for (auto t : spec.tips) rb.SendBulk(t);
  rb.StartSet(spec.key_specs.size());
  for (const KeySpec& ks : spec.key_specs) {
    rb.StartMap(ks.notes.empty() ? 3 : 4);
    if (!ks.notes.empty()) {
      rb.SendBulk("notes");
      rb.SendBulk(ks.notes);
    }
    rb.SendBulk("flags");
    rb.StartSet(ks.flags.size());
    for (auto f : ks.flags) rb.SendSimpleString(f);
    rb.SendBulk("begin_search");
    rb.StartMap(2);
    rb.SendBulk("type");
    if (ks.unknown) {
      rb.SendBulk("unknown");
      rb.SendBulk("spec");
      rb.StartMap(0);
    } else if (ks.keyword.empty()) {
      rb.SendBulk("index");
      rb.SendBulk("spec");
      rb.StartMap(1);
      rb.SendBulk("index");
      rb.SendLong(ks.begin_index);
    } else {
      rb.SendBulk("keyword");
      rb.SendBulk("spec");
      rb.StartMap(2);
      rb.SendBulk("keyword");
      rb.SendBulk(ks.keyword);
      rb.SendBulk("startfrom");
      rb.SendLong(ks.startfrom);
    }
    rb.SendBulk("find_keys");
    rb.StartMap(2);
    rb.SendBulk("type");
    if (ks.keynum) {
      rb.SendBulk("keynum");
      rb.SendBulk("spec");
      rb.StartMap(3);
      rb.SendBulk("keynumidx");
      rb.SendLong(0);
      rb.SendBulk("firstkey");
      rb.SendLong(1);
      rb.SendBulk("keystep");
      rb.SendLong(ks.key_step);
      continue;
    }
    if (ks.unknown) {
      rb.SendBulk("unknown");
      rb.SendBulk("spec");
      rb.StartMap(0);
      continue;
    }
    rb.SendBulk("range");
    rb.SendBulk("spec");
    rb.StartMap(3);
    rb.SendBulk("lastkey");
    rb.SendLong(ks.last_key);
    rb.SendBulk("keystep");
    rb.SendLong(ks.key_step);
    rb.SendBulk("limit");
    rb.SendLong(ks.limit);
  }
  if (!spec.container()) return rb.StartSet(0);
  rb.StartArray(spec.subcommands.size());
  for (const CommandSpec& sub : spec.subcommands) SendCommandInfo(sub, rb);
}

// Sends one COMMAND DOCS entry: the name, then its map (a container's has "subcommands").
void SendCommandDocs(const CommandSpec& spec, io::ReplyBuilder& rb) {
  rb.SendBulk(spec.name);
  size_t n = 1 + !spec.since.empty() + !spec.group.empty() + spec.container();
  rb.StartMap(n);
  rb.SendBulk("summary");
  rb.SendBulk(spec.summary);
  if (!spec.since.empty()) {
    rb.SendBulk("since");
    rb.SendBulk(spec.since);
  }
  if (!spec.group.empty()) {
    rb.SendBulk("group");
    rb.SendBulk(spec.group);
  }
  if (spec.container()) {
    rb.SendBulk("subcommands");
    rb.StartMap(spec.subcommands.size());
    for (const CommandSpec& sub : spec.subcommands) SendCommandDocs(sub, rb);
  }
}

// COMMAND: every command's COMMAND INFO entry.
void CmdCommand(CmdArgs, ConnCmdContext& ctx) {
  const CommandRegistry& reg = ctx.registry();
  ctx.rb.StartArray(reg.size());
  for (const auto& spec : reg.all()) {
    if (reg.reachable(*spec)) SendCommandInfo(*spec, ctx.rb);
  }
}

// COMMAND COUNT: top-level commands only, as Redis counts them.
void CommandCount(CmdArgs, ConnCmdContext& ctx) {
  ctx.rb.SendLong(static_cast<int64_t>(ctx.registry().size()));
}

// COMMAND INFO [command-name ...]; a name may be a subcommand's ("client|list").
void CommandInfo(CmdArgs args, ConnCmdContext& ctx) {
  if (args.size() == 2) return CmdCommand(args, ctx);
  const CommandRegistry& reg = ctx.registry();
  ctx.rb.StartArray(args.size() - 2);
  for (size_t i = 2; i < args.size(); ++i) {
    if (const CommandSpec* spec = reg.FindFullName(args[i])) {
      SendCommandInfo(*spec, ctx.rb);
    } else {
      ctx.rb.SendNullArray();
    }
  }
}

// COMMAND DOCS [command-name ...]; unknown names are left out.
void CommandDocs(CmdArgs args, ConnCmdContext& ctx) {
  const CommandRegistry& reg = ctx.registry();
  std::vector<const CommandSpec*> specs;
  if (args.size() == 2) {
    for (const auto& spec : reg.all()) {
      if (reg.reachable(*spec)) specs.push_back(spec.get());
    }
  } else {
    for (size_t i = 2; i < args.size(); ++i) {
      if (const CommandSpec* spec = reg.FindFullName(args[i])) specs.push_back(spec);
    }
  }
  ctx.rb.StartMap(specs.size());
  for (const CommandSpec* spec : specs) SendCommandDocs(*spec, ctx.rb);
}

// COMMAND LIST [FILTERBY MODULE name | ACLCAT category | PATTERN pattern]: the names of every
// command and subcommand ("client|list").
void CommandList(CmdArgs args, ConnCmdContext& ctx) {
  std::string_view pattern, category;
  bool by_pattern = false, by_category = false;
  if (args.size() == 5 && EqualsIgnoreCase(args[2], "FILTERBY")) {
    std::string kind = AsciiStrToUpper(args[3]);
    if (kind == "PATTERN") {
      by_pattern = true;
      pattern = args[4];
    } else if (kind == "ACLCAT") {
      by_category = true;
      category = args[4];
    } else if (kind != "MODULE") {
      return ctx.SendStatus(OpStatus::kSyntaxError);
    } else {
      return ctx.rb.SendEmptyArray();  // no modules
    }
  } else if (args.size() != 2) {
    return ctx.SendStatus(OpStatus::kSyntaxError);
  }
  std::vector<std::string_view> names;
  ctx.registry().ForEachSpec([&](const CommandSpec& spec) {
    if (!ctx.registry().reachable(spec)) return;  // disabled by rename-command
    if (by_pattern && !GlobMatch(pattern, spec.name, GlobCase::kNoCase)) return;
    if (by_category && std::none_of(spec.categories.begin(), spec.categories.end(),
                                    [&](std::string_view c) {
                                      return EqualsIgnoreCase(c, category);
                                    })) {
      return;
    }
    names.push_back(spec.name);
  });
  ctx.rb.SendBulkArray(names);
}

// The keys the key specs find, in spec order; empty when one of them cannot tell (unknown,
// incomplete, a bad key count).
KeyIndexes KeysBySpecs(const std::vector<KeySpec>& specs, CmdArgs cmd) {
  KeyIndexes keys;
  for (const KeySpec& ks : specs) {
    const bool incomplete =
        std::find(ks.flags.begin(), ks.flags.end(), "incomplete") != ks.flags.end();
    if (ks.unknown || incomplete) return {};
    int r = ForEachSearchKey(ks.search(), cmd, [&](int i) {
      keys.push_back(static_cast<uint32_t>(i));
      return true;
    });
    if (r < 0) return {};
  }
  return keys;
}

// The key indexes of the command COMMAND GETKEYS / GETKEYSANDFLAGS is asked about, or nullopt
// after answering Redis 7.0's error. As Redis: a STORE form (ZUNIONSTORE ...) whose key count is
// not a number from 1 to the arguments left names no key; a call whose keys its own finder
// rejects (XREAD with an odd number of ids) gets those its key specs find; none at all is an
// empty array for a command whose keys are optional (EVAL, FCALL, MIGRATE), else an error.
std::optional<KeyIndexes> KeysOfAskedCommand(CmdArgs cmd, const CommandSpec* spec,
                                             const std::vector<KeySpec>& specs,
                                             io::ReplyBuilder& rb) {
  if (!spec) {
    rb.SendError("ERR Invalid command specified");
    return std::nullopt;
  }
  if (!spec->HasKeys()) {
    rb.SendError("ERR The command has no key arguments");
    return std::nullopt;
  }
  if (!spec->ArityOk(cmd.size())) {
    rb.SendError("ERR Invalid number of arguments specified for command");
    return std::nullopt;
  }
  KeyIndexes keys;
  if (spec->numkeys_index > 0 && spec->first_key > 0) {
    const std::optional<int64_t> n = ParseInt64(cmd[spec->numkeys_index]);
    if (n && *n >= 1 && static_cast<uint64_t>(*n) < cmd.size() - spec->numkeys_index) {
      keys = spec->KeysOf(cmd);
    }
  } else {
    keys = spec->KeysOf(cmd);
    if (keys.empty() && spec->keys_fn != nullptr) keys = KeysBySpecs(specs, cmd);
  }
  if (keys.empty()) {
    if (spec->HasFlag(kCmdNoMandatoryKeys)) {
      rb.SendEmptyArray();
    } else {
      rb.SendError("ERR Invalid arguments specified for command");
    }
    return std::nullopt;
  }
  return keys;
}

// COMMAND GETKEYS command [arg ...]
void CommandGetKeys(CmdArgs args, ConnCmdContext& ctx) {
  CmdArgs cmd = args.subspan(2);
  const CommandSpec* spec = ctx.registry().Lookup(cmd);
  const std::vector<KeySpec> specs = spec ? KeySpecsOf(*spec) : std::vector<KeySpec>{};
  std::optional<KeyIndexes> indexes = KeysOfAskedCommand(cmd, spec, specs, ctx.rb);
  if (!indexes) return;
  std::vector<std::string_view> keys;
  for (uint32_t k : *indexes) keys.push_back(cmd[k]);
  ctx.rb.SendBulkArray(keys);
}

// For each argument of `cmd`, the key spec whose flags Redis 7.0 reports for it as a key: the
// first spec that finds it, else the last spec whose keys no position tells (SORT's STORE).
// One pass over the specs, so a long call costs its length, not its length squared.
std::vector<const KeySpec*> SpecOfEachArg(const std::vector<KeySpec>& specs, CmdArgs cmd) {
  const KeySpec* fallback = nullptr;
  for (const KeySpec& ks : specs) {
    if (ks.unknown) fallback = &ks;
  }
  std::vector<const KeySpec*> of(cmd.size(), nullptr);
  for (const KeySpec& ks : specs) {
    if (ks.unknown) continue;
    ForEachSearchKey(ks.search(), cmd, [&](int i) {
      if (of[i] == nullptr) of[i] = &ks;
      return true;
    });
  }
  for (const KeySpec*& ks : of) {
    if (ks == nullptr) ks = fallback;
  }
  return of;
}

// The flags of a key found by `ks`: a "variable_flags" spec resolved for this call as Redis's
// SET and BITFIELD do, "incomplete" left out (Redis answers those from its own key finders).
std::vector<std::string_view> KeyFlags(const CommandSpec& spec, const KeySpec* ks, CmdArgs cmd) {
  if (ks == nullptr) return {};
  const auto& f = ks->flags;
  if (std::find(f.begin(), f.end(), "variable_flags") != f.end()) {
    const bool set = spec.name == "set";
    const uint8_t perms =
        AclVariableKeyPerms(set ? AclVariablePerms::kSet : AclVariablePerms::kBitfield, cmd);
    if (set) {
      if (perms & kAclKeyRead) return {"RW", "access", "update"};
      return {"OW", "update"};
    }
    if (perms == kAclKeyRead) return {"RO", "access"};
    return {"RW", "access", "update"};
  }
  std::vector<std::string_view> out;
  for (std::string_view flag : f) {
    if (flag != "incomplete") out.push_back(flag);
  }
  return out;
}

// COMMAND GETKEYSANDFLAGS command [arg ...]
void CommandGetKeysAndFlags(CmdArgs args, ConnCmdContext& ctx) {
  CmdArgs cmd = args.subspan(2);
  const CommandSpec* spec = ctx.registry().Lookup(cmd);
  const std::vector<KeySpec> specs = spec ? KeySpecsOf(*spec) : std::vector<KeySpec>{};
  std::optional<KeyIndexes> indexes = KeysOfAskedCommand(cmd, spec, specs, ctx.rb);
  if (!indexes) return;
  const std::vector<const KeySpec*> spec_of = SpecOfEachArg(specs, cmd);
  ctx.rb.StartArray(indexes->size());
  for (uint32_t k : *indexes) {
    std::vector<std::string_view> flags = KeyFlags(*spec, spec_of[k], cmd);
    ctx.rb.StartArray(2);
    ctx.rb.SendBulk(cmd[k]);
    ctx.rb.StartSet(flags.size());
    for (std::string_view flag : flags) ctx.rb.SendSimpleString(flag);
  }
}

// COMMAND HELP
void CommandHelp(CmdArgs, ConnCmdContext& ctx) {
  static constexpr std::string_view kHelp[] = {
      "COMMAND <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "(no subcommand)", "    Return details about all Redis commands.",
      "COUNT", "    Return the total number of commands in this Redis server.",
      "LIST", "    Return a list of all commands in this Redis server.",
      "INFO [<command-name> ...]",
      "    Return details about multiple Redis commands.",
      "    If no command names are given, documentation details for all",
      "    commands are returned.",
      "DOCS [<command-name> ...]",
      "    Return documentation details about multiple Redis commands.",
      "    If no command names are given, documentation details for all",
      "    commands are returned.",
      "GETKEYS <full-command>", "    Return the keys from a full Redis command.",
      "GETKEYSANDFLAGS <full-command>",
      "    Return the keys and the access flags from a full Redis command.",
      "HELP", "    Print this help.",
  };
  SendHelp(ctx.rb, kHelp);
}

// CONFIG's subcommands (Redis 7.0's metadata).
std::vector<CommandSpec> ConfigSubcommands() {
  constexpr uint32_t kAdmin = kCmdAdmin | kCmdNoScript | kCmdLoading | kCmdStale;
  const std::vector<std::string_view> kCats = {"admin", "slow", "dangerous"};
  std::vector<CommandSpec> subs;
  subs.push_back(WithConnHandler(
      MakeSubcommand("get", -3, kAdmin, kCats, "2.0.0",
                     "Returns the effective values of configuration parameters."),
      ConfigGet));
  CommandSpec set = WithCoordHandler(
      MakeSubcommand("set", -4, kAdmin, kCats, "2.0.0",
                     "Sets configuration parameters in-flight."),
      ConfigSet);
  set.tips = {"request_policy:all_nodes", "response_policy:all_succeeded"};
  subs.push_back(std::move(set));
  subs.push_back(WithCoordHandler(
      MakeSubcommand("resetstat", 2, kAdmin, kCats, "2.0.0", "Resets the server's statistics."),
      ConfigResetStat));
  subs.push_back(WithConnHandler(
      MakeSubcommand("rewrite", 2, kAdmin, kCats, "2.8.0",
                     "Persists the effective configuration to file."),
      ConfigRewrite));
  subs.push_back(WithConnHandler(
      MakeSubcommand("help", 2, kCmdLoading | kCmdStale, {"slow"}, "5.0.0",
                     "Returns helpful text about the different subcommands."),
      ConfigHelp));
  return subs;
}

// COMMAND's subcommands (Redis 7.0's metadata).
std::vector<CommandSpec> CommandSubcommands() {
  constexpr uint32_t kFlags = kCmdLoading | kCmdStale;
  const std::vector<std::string_view> kCats = {"slow", "connection"};
  auto sub = [&](std::string name, int arity, std::string_view since, std::string_view summary,
                 ConnHandler handler, bool any_order) {
    CommandSpec s =
        WithConnHandler(MakeSubcommand(std::move(name), arity, kFlags, kCats, since, summary),
                        handler);
    if (any_order) s.tips = {"nondeterministic_output_order"};
    return s;
  };
  std::vector<CommandSpec> subs;
  subs.push_back(sub("count", 2, "2.8.13", "Returns a count of commands.", CommandCount, false));
  subs.push_back(sub("info", -2, "2.8.13", "Returns information about one, multiple or all "
                     "commands.", CommandInfo, true));
  subs.push_back(sub("docs", -2, "7.0.0", "Returns documentary information about one, multiple "
                     "or all commands.", CommandDocs, true));
  subs.push_back(sub("list", -2, "7.0.0", "Returns a list of command names.", CommandList, true));
  subs.push_back(sub("getkeys", -4, "2.8.13", "Extracts the key names from an arbitrary command.",
                     CommandGetKeys, false));
  subs.push_back(sub("getkeysandflags", -4, "7.0.0",
                     "Extracts the key names and access flags for an arbitrary command.",
                     CommandGetKeysAndFlags, false));
  subs.push_back(sub("help", 2, "5.0.0", "Returns helpful text about the different "
                     "subcommands.", CommandHelp, false));
  return subs;
}

// SHUTDOWN [NOSAVE|SAVE] [NOW] [FORCE] [ABORT]
// Saves first when asked to, or when a `save` schedule is set and NOSAVE is absent; a failed
// save cancels the shutdown unless FORCE. There are no replicas to wait for, so NOW changes
// nothing and ABORT finds no shutdown in progress.
awaitable<void> CmdShutdown(CmdArgs args, ConnCmdContext& ctx) {
  bool nosave = false, save = false, force = false, abort = false;
  ArgParser parser(args);
  while (parser.HasNext()) {
    if (parser.Check("NOSAVE")) {
      nosave = true;
    } else if (parser.Check("SAVE")) {
      save = true;
    } else if (parser.Check("FORCE")) {
      force = true;
    } else if (parser.Check("ABORT")) {
      abort = true;
    } else if (!parser.Check("NOW")) {
      co_return ctx.SendStatus(OpStatus::kSyntaxError);
    }
  }
  if ((nosave && save) || (abort && args.size() > 2)) {
    co_return ctx.SendStatus(OpStatus::kSyntaxError);
  }
  if (abort) co_return ctx.SendStatus(OpStatus::kNoShutdownInProgress);
  // SHUTDOWN NOSAVE stops a script that runs on (Redis allows only it during a busy script).
  const RunningScripts& running = ctx.services().scripting.running();
  if (!nosave && running.any_busy()) {
    co_return ctx.rb.SendError(RunningScripts::BusyText(running.BusyIsFunction()));
  }
  if (nosave) ctx.services().scripting.KillAll();
  SnapshotManager& snapshots = ctx.snapshots();
  if (save || (!nosave && ctx.config().has_save_points.load())) {
    absl::Status st = co_await snapshots.SaveForShutdown();
    if (!st.ok() && !force) {
      LOG(WARNING) << "Error trying to save the DB, can't exit.";
      co_return ctx.SendStatus(OpStatus::kShutdownSaveFailed);
    }
  }
  // main() waits for SIGTERM and shuts down cleanly, without saving again; like Redis, no
  // reply on success.
  snapshots.MarkShutdownHandled();
  ctx.state.conn->RequestClose();
  kill(getpid(), SIGTERM);
}

// LOLWUT [VERSION version [arg ...]]: the version line Redis 7.0 answers for its own version.
// Redis draws art for versions 5 and 6; dashkv checks their numeric arguments as Redis does and
// answers the same line.
void CmdLolwut(CmdArgs args, ConnCmdContext& ctx) {
  if (args.size() >= 3 && EqualsIgnoreCase(args[1], "VERSION")) {
    std::optional<int64_t> version = ParseInt64(args[2]);
    if (!version) return ctx.SendStatus(OpStatus::kNotAnInteger);
    if (*version == 5 || *version == 6) {
      for (size_t i = 3; i < args.size(); ++i) {
        if (!ParseInt64(args[i])) return ctx.SendStatus(OpStatus::kNotAnInteger);
      }
    }
  }
  ctx.rb.SendVerbatim(StrCat("Redis ver. ", kRedisVersion, "\n"));
}

CommandSpec Spec(std::string name, int arity, uint32_t flags, HandlerKind kind,
                 std::vector<std::string_view> cats, std::string_view summary) {
  CommandSpec s = MakeSpec(std::move(name), arity, flags, 0, 0, std::move(cats), "server", "",
                           summary);
  s.kind = kind;
  return s;
}

}  // namespace

void RegisterServerCommands(CommandRegistry* r) {
  CommandSpec s = Spec("dbsize", 1, kCmdReadOnly | kCmdFast, HandlerKind::kCoord,
                       {"keyspace", "read", "fast"}, "Returns the number of keys in the database.");
  s.coord_handler = CmdDbSize;
  s.tx_scope = TxScope::kAllShared;
  r->Register(std::move(s));
  s = Spec("flushdb", -1, kCmdWrite, HandlerKind::kCoord, {"keyspace", "write", "slow", "dangerous"},
           "Remove all keys from the current database.");
  s.coord_handler = CmdFlushDb;
  s.tx_scope = TxScope::kAllExclusive;
  r->Register(std::move(s));
  s = Spec("flushall", -1, kCmdWrite, HandlerKind::kCoord,
           {"keyspace", "write", "slow", "dangerous"}, "Removes all keys from all databases.");
  s.coord_handler = CmdFlushAll;
  s.tx_scope = TxScope::kAllExclusive;
  r->Register(std::move(s));
  s = Spec("time", 1, kCmdLoading | kCmdStale | kCmdFast, HandlerKind::kConn, {"fast"},
           "Returns the server time.");
  s.conn_handler = CmdTime;
  r->Register(std::move(s));
  s = Spec("config", -2, 0, HandlerKind::kConn, {"slow"},
           "A container for server configuration commands.");
  s.since = "2.0.0";
  s.subcommands = ConfigSubcommands();
  r->Register(std::move(s));
  // COMMAND without a subcommand runs the container's own handler.
  s = Spec("command", -1, kCmdLoading | kCmdStale, HandlerKind::kConn, {"slow", "connection"},
           "Returns detailed information about all commands.");
  s.since = "2.8.13";
  s.tips = {"nondeterministic_output_order"};
  s.conn_handler = CmdCommand;
  s.subcommands = CommandSubcommands();
  r->Register(std::move(s));
  s = Spec("shutdown", -1,
           kCmdAdmin | kCmdNoScript | kCmdLoading | kCmdStale | kCmdNoMulti | kCmdAllowBusy,
           HandlerKind::kCoord, {"admin", "slow", "dangerous"},
           "Synchronously saves the database(s) to disk and shuts down the Redis server.");
  s.kind = HandlerKind::kCoord;
  s.coord_handler = CmdShutdown;
  r->Register(std::move(s));
  s = Spec("lolwut", -1, kCmdReadOnly | kCmdFast, HandlerKind::kConn, {"read", "fast"},
           "Display some computer art and the Redis version");
  s.since = "5.0.0";
  s.conn_handler = CmdLolwut;
  r->Register(std::move(s));
}

}  // namespace dashkv
