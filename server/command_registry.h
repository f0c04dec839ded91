// CommandRegistry: the command table — name, arity, flags, key positions, ACL categories and
// handler of every command, and the subcommand tables of the container commands (CLIENT,
// CONFIG ...). COMMAND (INFO, DOCS, LIST, COUNT) is generated from it, and dispatch decides by
// its flags and fields, never by a command's name.
// Thread: filled before the engines start, then immutable (read by every engine).
#pragma once

#include <utility>  // before asio: awaitable.hpp uses std::exchange

#include <absl/container/flat_hash_map.h>
#include <absl/container/flat_hash_set.h>
#include <absl/container/inlined_vector.h>

#include <boost/asio/awaitable.hpp>
#include <cstdint>
#include <cstring>
#include <deque>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/intent_lock.h"
#include "server/cmd_args.h"
#include "server/command_name_memo.h"
#include "server/key_search.h"

namespace dashkv {

class ShardCmdContext;
class ConnCmdContext;
struct ServerServices;

// Command flags. The low 16 carry Redis's names (COMMAND INFO lists them); the ones from bit 24
// on are dashkv's dispatch rules and have no name.
enum CommandFlag : uint32_t {
  kCmdWrite = 1 << 0,
  kCmdReadOnly = 1 << 1,
  kCmdDenyOom = 1 << 2,
  kCmdAdmin = 1 << 3,
  kCmdPubSub = 1 << 4,
  kCmdNoScript = 1 << 5,
  kCmdLoading = 1 << 6,
  kCmdStale = 1 << 7,
  kCmdFast = 1 << 8,
  kCmdNoAuth = 1 << 9,
  kCmdBlocking = 1 << 10,
  kCmdNoMulti = 1 << 11,
  kCmdAllowBusy = 1 << 12,
  kCmdMayReplicate = 1 << 13,
  kCmdSkipSlowlog = 1 << 14,
  kCmdNoMandatoryKeys = 1 << 15,
  kCmdSkipMonitor = 1 << 16,
  // Runs at once inside MULTI instead of being queued (EXEC, DISCARD, MULTI, WATCH, QUIT, RESET).
  kCmdMultiControl = 1 << 24,
  // Allowed while a RESP2 connection is in subscribed mode ((P|S)(UN)SUBSCRIBE, PING, QUIT,
  // RESET).
  kCmdSubscribedOk = 1 << 25,
  // Locks its keys exclusively though Redis flags it read-only: it may still rewrite a key's
  // bytes (PFCOUNT stores the cardinality it computed in the HyperLogLog's header).
  kCmdLocksExclusive = 1 << 26,
  // Refused unless enable-debug-command allows the client (DEBUG), before authentication.
  kCmdDebugGated = 1 << 27,
};

// How a command runs.
enum class HandlerKind : uint8_t {
  // Runs whole on the shard that owns its keys, synchronously; writes its reply there.
  // Consecutive shard commands of a pipeline are grouped per shard (one hop per shard). A
  // command with several keys that land on different shards runs its coord_handler instead
  // (which then must be set).
  kShard,
  // Runs synchronously on the connection's thread (connection state, server-wide reads).
  kConn,
  // A coroutine on the connection's thread that may hop to shards (multi-key and global).
  kCoord,
};

using ShardHandler = void (*)(CmdArgs args, ShardCmdContext& ctx);
using ConnHandler = void (*)(CmdArgs args, ConnCmdContext& ctx);
using CoordHandler = boost::asio::awaitable<void> (*)(CmdArgs args, ConnCmdContext& ctx);
// Runs a pipelined run of consecutive calls of one kCoord command at once (one reply each, in
// order), e.g. PUBLISH: one message per target engine for the whole run instead of per call.
using BatchHandler = boost::asio::awaitable<void> (*)(std::span<const CmdArgs> calls,
                                                      ConnCmdContext& ctx);

// How a multi-key kShard command runs its keys of one shard as a part of a pipelined
// multi-shard group (server/tx/multi_part.h); set for MGET, MSET, DEL, UNLINK, EXISTS, TOUCH.
struct MultiShardOps;

// What a command locks when it runs as a transaction (server/tx/transaction.h).
enum class TxScope : uint8_t {
  kKeys,          // its keys: exclusive if it writes, shared if it reads
  kAllShared,     // every shard whole, shared (DBSIZE, KEYS: a consistent view)
  kAllExclusive,  // every shard whole, exclusive (FLUSHALL, FLUSHDB)
  kNone,          // nothing, though it names keys (WATCH: it only registers interest)
  // A script (EVAL, FCALL): its handler takes its own locks (server/scripting/script_runner.h);
  // inside EXEC, its declared keys — exclusive unless the command is read-only — or every
  // shard, exclusive, when it declares none.
  kScript,
};

// Which arguments of a pub/sub command name channels the ACL checks (server/acl/acl_check.h):
// the first (PUBLISH, SPUBLISH), all (SUBSCRIBE, SSUBSCRIBE), all as patterns (PSUBSCRIBE).
enum class AclChannelArgs : uint8_t { kNone, kPublish, kSubscribe, kPatterns };

// Argument indexes of a command's keys.
using KeyIndexes = absl::InlinedVector<uint32_t, 8>;
// A key a command writes in another database than the connection's (MOVE, COPY ... DB): its
// database and name, or nullopt when the call names none (or an invalid one).
using OtherDbKeyFn = std::optional<std::pair<unsigned, std::string_view>> (*)(CmdArgs args);
// The shard a call of a kCoord command can run on whole, as a shard command in its pipeline's
// per-shard groups (its shard_handler then runs it), or nullopt (its coordinator handler runs
// it). Checked by Dispatch before grouping (EVALSHA of a script known to stay on its keys).
using ShardRouteFn = std::optional<unsigned> (*)(CmdArgs args, const ServerServices& services);
// Whether a call of a script command (TxScope::kScript) queued in MULTI must lock every shard:
// its script is not known to keep to its declared keys.
using LocksAllShardsFn = bool (*)(CmdArgs args, const ServerServices& services);
// The argument indexes of the keys of a call whose keys only a parser can find (MIGRATE's KEYS
// option), in argument order; none when the call is malformed.
using KeysFn = KeyIndexes (*)(CmdArgs args);
// The database a call of a command that changes the connection's database (SELECT) switches
// to, or nullopt when the call fails (its handler then replies with the error). `num_dbs` is the
// number of databases.
using SwitchDbFn = std::optional<unsigned> (*)(CmdArgs args, unsigned num_dbs);
// For a command that may read keys it does not name (SORT's BY and GET patterns): the mode in
// which a call must lock every shard (on one shard: its whole shard), or nullopt when the keys
// it names suffice.
using WholeKeyspaceFn = std::optional<LockMode> (*)(CmdArgs args);

// One key specification as COMMAND INFO shows it (Redis 7): where the search for the keys
// begins (begin_search), then which arguments from there are keys (find_keys, a range).
struct KeySpec {
  std::string_view notes;               // COMMAND INFO's "notes", when Redis has some
  std::vector<std::string_view> flags;  // "RO", "RW", "access", "incomplete" ...
  // begin_search "index" when `keyword` is empty: the keys start at args[begin_index].
  int begin_index = 0;
  // begin_search "keyword": the keys start after the first argument equal to `keyword` (any
  // case) searching from args[startfrom] (a negative startfrom counts from the end, and the
  // search then runs backwards).
  std::string_view keyword;
  int startfrom = 0;
  // find_keys "range": from the first key to `last_key` (relative to the first key; 0: only
  // that one; -1: the last argument) in steps of `key_step`; `limit` as Redis's (0 here).
  int last_key = 0;
  int key_step = 1;
  int limit = 0;
  // find_keys "keynum" instead of "range": the argument at the search's start counts the keys,
  // which follow it (keynumidx 0, firstkey 1, keystep `key_step`, as every Redis command has).
  bool keynum = false;
  // begin_search and find_keys "unknown": the keys cannot be found from the arguments alone
  // (SORT's BY/GET patterns and its STORE keyword).
  bool unknown = false;

  // Returns a spec whose keys start at args[index].
  static KeySpec AtIndex(std::vector<std::string_view> flags, int index, int last_key = 0,
                         int key_step = 1) {
    KeySpec ks;
    ks.flags = std::move(flags);
    ks.begin_index = index;
    ks.last_key = last_key;
    ks.key_step = key_step;
    return ks;
  }
  // Returns a spec whose keys follow a count of them at args[index].
  static KeySpec KeyNum(std::vector<std::string_view> flags, int index,
                        std::string_view notes = {}) {
    KeySpec ks;
    ks.flags = std::move(flags);
    ks.begin_index = index;
    ks.keynum = true;
    ks.notes = notes;
    return ks;
  }
  // Returns a spec whose keys start after `keyword`, searched from args[startfrom].
  static KeySpec AfterKeyword(std::vector<std::string_view> flags, std::string_view keyword,
                              int startfrom, int last_key, int key_step = 1) {
    KeySpec ks;
    ks.flags = std::move(flags);
    ks.keyword = keyword;
    ks.startfrom = startfrom;
    ks.last_key = last_key;
    ks.key_step = key_step;
    return ks;
  }
  // Returns a spec whose keys no argument position tells (`notes` says why).
  static KeySpec Unknown(std::vector<std::string_view> flags, std::string_view notes) {
    KeySpec ks;
    ks.flags = std::move(flags);
    ks.unknown = true;
    ks.notes = notes;
    return ks;
  }
  // Returns whether the keys' positions depend on the other arguments (not an index and a
  // range): Redis then flags the command "movablekeys".
  bool movable() const { return unknown || keynum || !keyword.empty(); }
  // The search that finds its keys in a call (meaningless when `unknown`).
  KeySearch search() const {
    return {begin_index, keyword, startfrom, last_key, key_step, limit, keynum};
  }
};

struct CommandSpec {
  std::string name;  // lower case
  int arity = 0;     // Redis's convention: >0 exact, <0 at least -arity (name included)
  uint32_t flags = 0;
  int first_key = 0;  // 0: no keys
  int last_key = 0;   // -1: last argument
  int key_step = 0;
  // >0: args[numkeys_index] counts the keys that follow it (ZUNION, LMPOP, SINTERCARD ...),
  // in addition to the fixed first_key..last_key ones (a STORE form's destination).
  int numkeys_index = 0;
  // Set for commands whose keys move (MIGRATE): KeysOf returns its result, and first_key,
  // last_key and key_step only describe the usual form for COMMAND INFO.
  KeysFn keys_fn = nullptr;
  TxScope tx_scope = TxScope::kKeys;
  OtherDbKeyFn other_db_key = nullptr;  // its intent lock is (that db, key) (transaction.h)
  // Set by Register: the command names exactly one key, at a fixed position, in its own
  // database (a shard may then evict in place while it runs: DbSlice::in_place_evictor).
  bool one_key = false;
  std::vector<std::string_view> categories;  // ACL categories without '@': "string", "fast"...
  AclChannelArgs acl_channels = AclChannelArgs::kNone;
  HandlerKind kind = HandlerKind::kConn;
  ShardHandler shard_handler = nullptr;
  ConnHandler conn_handler = nullptr;
  CoordHandler coord_handler = nullptr;
  BatchHandler batch_handler = nullptr;  // optional, kCoord commands without keys only
  // Optional, kShard commands with fixed key positions: a call whose keys span shards may
  // join its neighbours in a pipelined multi-shard group (PipelineRunner::RunMultiGroup).
  const MultiShardOps* multi_ops = nullptr;
  ShardRouteFn shard_route = nullptr;    // optional, kCoord commands with a shard_handler
  LocksAllShardsFn locks_all_shards = nullptr;  // optional, TxScope::kScript commands
  WholeKeyspaceFn whole_keyspace = nullptr;  // optional (server/tx/lock_plan.h)
  std::string_view summary;  // for COMMAND DOCS
  std::string_view since;    // Redis version that introduced it
  std::string_view group;    // "string", "generic", "server", "connection", ...
  std::vector<std::string_view> tips;  // COMMAND INFO's tips ("nondeterministic_output" ...)
  std::vector<KeySpec> key_specs;      // COMMAND INFO's key specifications, where Redis has them
  SwitchDbFn switch_db = nullptr;      // set when the command changes the connection's database
  // A container command's subcommands (CLIENT, CONFIG ...), in registration order. Register
  // names each "<container>|<sub>" and gives one without a handler the container's handler
  // (which then dispatches on args[1] itself). Dispatch runs the subcommand's spec: its arity,
  // flags, keys and statistics are its own. Immutable once registered.
  std::vector<CommandSpec> subcommands;
  const CommandSpec* parent = nullptr;  // the container of a subcommand (set by Register)
  uint32_t id = 0;  // index over every spec, subcommands included (set by Register), for stats
  // The coordinator handler does all its work in one hop, through OnlyHop (server/tx/transaction.h)
  // over exactly the shards of its keys, and that hop's function may run twice (a read) or
  // writes every key it will mark written (a write): its locks are taken (reads) or released
  // (writes) in that same hop.
  bool one_hop = false;

  // Returns whether `argc` (name included) satisfies the arity.
  bool ArityOk(size_t argc) const {
    return arity >= 0 ? argc == static_cast<size_t>(arity) : argc >= static_cast<size_t>(-arity);
  }
  bool HasFlag(CommandFlag f) const { return (flags & f) != 0; }
  // Returns whether the command names keys (fixed or after a numkeys argument).
  bool HasKeys() const { return first_key > 0 || numkeys_index > 0 || keys_fn != nullptr; }
  // Returns whether its keys' positions depend on the arguments, as Redis decides its
  // "movablekeys" flag: a keys function (Redis: a getkeys proc), a numkeys argument, or a key
  // spec that is not an index and a range.
  bool MovableKeys() const;
  // Returns the argument indexes of its keys in `args` (a well-formed call: arity checked),
  // in argument order. A malformed numkeys yields only the fixed keys (the handler rejects it).
  KeyIndexes KeysOf(CmdArgs args) const;
  // Returns whether it has subcommands.
  bool container() const { return !subcommands.empty(); }
  // Returns the subcommand named `sub` (any case, without the container's name), or nullptr.
  const CommandSpec* FindSubcommand(std::string_view sub) const;
};

// Returns a spec with the fields every command sets: its fixed keys are args[first_key..last_key]
// with step 1 (none when first_key is 0; last_key -1 = the last argument), `group` is COMMAND
// DOCS's group. Each command family wraps this with its own defaults.
CommandSpec MakeSpec(std::string name, int arity, uint32_t flags, int first_key, int last_key,
                     std::vector<std::string_view> categories, std::string_view group,
                     std::string_view since, std::string_view summary);

// Returns a subcommand spec for a container's table: `sub` is the subcommand's own name ("list");
// Register prefixes the container's name. Keys, tips and the handler are set on the result.
CommandSpec MakeSubcommand(std::string sub, int arity, uint32_t flags,
                           std::vector<std::string_view> categories, std::string_view since,
                           std::string_view summary);

// Returns `spec` run by `handler` on the connection's thread (kConn).
inline CommandSpec WithConnHandler(CommandSpec spec, ConnHandler handler) {
  spec.kind = HandlerKind::kConn;
  spec.conn_handler = handler;
  return spec;
}

// Returns `spec` run by the coroutine `handler` (kCoord).
inline CommandSpec WithCoordHandler(CommandSpec spec, CoordHandler handler) {
  spec.kind = HandlerKind::kCoord;
  spec.coord_handler = handler;
  return spec;
}

// Returns `spec` with one key, args[index], described by a key spec with `flags` ("RO" ...).
CommandSpec WithSingleKey(CommandSpec spec, int index, std::vector<std::string_view> flags);

// Returns `spec` marked one_hop (for registrations).
inline CommandSpec OneHop(CommandSpec spec) {
  spec.one_hop = true;
  return spec;
}

// Returns Redis's flag names for `flags` ("write", "readonly", "denyoom", ...).
std::vector<std::string_view> FlagNames(uint32_t flags);

class CommandRegistry {
 public:
  // Adds a command and its subcommands. REQUIRES: the name is new; every spec has a handler
  // (a subcommand may inherit its container's); a container is not kShard.
  void Register(CommandSpec spec);
  // Adds a kShard command; `multi`, when set, runs it when its keys span several shards.
  void RegisterShard(CommandSpec spec, ShardHandler handler, CoordHandler multi = nullptr) {
    spec.kind = HandlerKind::kShard;
    spec.shard_handler = handler;
    spec.coord_handler = multi;
    Register(std::move(spec));
  }
  // Adds a kCoord command.
  void RegisterCoord(CommandSpec spec, CoordHandler handler) {
    spec.kind = HandlerKind::kCoord;
    spec.coord_handler = handler;
    Register(std::move(spec));
  }
  // Returns the top-level command named `name` (any case), or nullptr.
  const CommandSpec* Find(std::string_view name) const;
  // As Find(name), through a caller's memo of its last lookup (CommandNameMemo).
  const CommandSpec* Find(std::string_view name, CommandNameMemo& memo) const {
    if (name.size() == memo.len && std::memcmp(name.data(), memo.name, name.size()) == 0) {
      [[likely]] return memo.spec;
    }
    return FindAndMemo(name, memo);
  }
  // Returns the spec a call runs: its command's, or for a container called with a subcommand
  // that subcommand's (nullptr when the container has no such subcommand, or no such command).
  // REQUIRES: args is not empty.
  const CommandSpec* Lookup(CmdArgs args) const;
  // As Lookup(args), through `memo` for the command's name.
  const CommandSpec* Lookup(CmdArgs args, CommandNameMemo& memo) const;
  // Returns the command or subcommand named `full_name` ("get", "client|list"; any case), or
  // nullptr.
  const CommandSpec* FindFullName(std::string_view full_name) const;
  // Renames the command `from` (any case) to `to`, or takes its name away when `to` is empty,
  // as the config file's rename-command: the command keeps its own name in COMMAND INFO, DOCS,
  // LIST and statistics, but clients reach it only by `to`. Returns Redis's error reason ("No
  // such command in rename-command", "Target command name already exists") or "".
  // REQUIRES: before any engine reads the registry (the server answers no client yet).
  std::string Rename(std::string_view from, std::string_view to);
  // Returns whether clients can reach the command `spec` (a top-level one, or a subcommand's
  // container) by some name: false once rename-command disabled it.
  bool reachable(const CommandSpec& spec) const {
    return !unreachable_.contains(spec.parent != nullptr ? spec.parent : &spec);
  }
  // Number of top-level commands clients can reach (COMMAND COUNT).
  size_t size() const { return by_name_.size(); }
  // Number of specs, subcommands included: CommandSpec::id is below it.
  size_t num_ids() const { return num_ids_; }
  // Top-level commands in registration order (their subcommands hang off each spec).
  const std::vector<std::unique_ptr<CommandSpec>>& all() const { return specs_; }
  // Calls `fn(const CommandSpec&)` for every command and, after each container, its
  // subcommands.
  template <typename Fn>
  void ForEachSpec(Fn fn) const {
    for (const auto& spec : specs_) {
      fn(*spec);
      for (const CommandSpec& sub : spec->subcommands) fn(sub);
    }
  }

 private:
  const CommandSpec* FindAndMemo(std::string_view name, CommandNameMemo& memo) const;
  // Find() of a name longer than the inline buffer (only a rename-command name can be).
  const CommandSpec* FindLong(std::string_view name) const;

  std::vector<std::unique_ptr<CommandSpec>> specs_;
  size_t num_ids_ = 0;
  absl::flat_hash_map<std::string_view, const CommandSpec*> by_name_;  // views of spec names
  // Names given by Rename (by_name_ holds views of them), and the longest name of by_name_.
  std::deque<std::string> renamed_names_;
  size_t max_name_len_ = 0;
  absl::flat_hash_set<const CommandSpec*> unreachable_;  // disabled by Rename
};

// Family registration functions, one per server/commands/*_commands.cc file.
void RegisterStringCommands(CommandRegistry* registry);
void RegisterGenericCommands(CommandRegistry* registry);
void RegisterKeyMoveCommands(CommandRegistry* registry);  // RENAME, RENAMENX, COPY, MOVE
void RegisterServerCommands(CommandRegistry* registry);
void RegisterConnectionCommands(CommandRegistry* registry);
void RegisterDebugCommands(CommandRegistry* registry);
void RegisterMemoryCommands(CommandRegistry* registry);  // MEMORY
void RegisterBitmapCommands(CommandRegistry* registry);
void RegisterInfoCommand(CommandRegistry* registry);
void RegisterSlowlogCommands(CommandRegistry* registry);  // SLOWLOG
void RegisterLatencyCommands(CommandRegistry* registry);  // LATENCY
void RegisterReplicationCommands(CommandRegistry* registry);  // ROLE, REPLICAOF, SLAVEOF
void RegisterModuleCommands(CommandRegistry* registry);  // MODULE
void RegisterMonitorCommand(CommandRegistry* registry);  // MONITOR
void RegisterLcsCommand(CommandRegistry* registry);
void RegisterSwapDbCommand(CommandRegistry* registry);
void RegisterListCommands(CommandRegistry* registry);
void RegisterHashCommands(CommandRegistry* registry);
void RegisterSetCommands(CommandRegistry* registry);
void RegisterZsetCommands(CommandRegistry* registry);
void RegisterGeoCommands(CommandRegistry* registry);  // GEOADD, GEOSEARCH, GEORADIUS ...
void RegisterStreamCommands(CommandRegistry* registry);  // XADD, XRANGE, XREAD, XINFO ...
void RegisterStreamGroupCommands(CommandRegistry* registry);  // XGROUP, XREADGROUP, XACK ...
void RegisterTransactionCommands(CommandRegistry* registry);
void RegisterPubSubCommands(CommandRegistry* registry);
void RegisterBlockingCommands(CommandRegistry* registry);  // BLPOP, BLMOVE, BZPOPMIN ...
void RegisterDumpRestoreCommands(CommandRegistry* registry);  // DUMP, RESTORE
void RegisterPersistenceCommands(CommandRegistry* registry);  // SAVE, BGSAVE, LASTSAVE
void RegisterMigrateCommand(CommandRegistry* registry);
void RegisterScriptCommands(CommandRegistry* registry);  // EVAL and FCALL families, SCRIPT
void RegisterFunctionCommands(CommandRegistry* registry);  // FUNCTION
void RegisterHllCommands(CommandRegistry* registry);  // PFADD, PFCOUNT, PFMERGE ...
void RegisterSortCommands(CommandRegistry* registry);  // SORT, SORT_RO
void RegisterAclCommands(CommandRegistry* registry);  // ACL SETUSER, GETUSER, LOG ...

// Returns OBJECT's subcommand table (ENCODING, REFCOUNT, IDLETIME, FREQ, HELP); its entries have
// no handler of their own, OBJECT's handler dispatches them (server/commands/debug_commands.cc).
std::vector<CommandSpec> ObjectSubcommands();

// Registers every family.
void RegisterAllCommands(CommandRegistry* registry);

}  // namespace dashkv
