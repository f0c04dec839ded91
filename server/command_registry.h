// CommandRegistry: the command table — name, arity, flags, key positions, ACL categories and
// handler of every command. COMMAND (INFO, DOCS, LIST, COUNT) is generated from it.
// Thread: filled before the engines start, then immutable (read by every engine).
#pragma once

#include <utility>  // before asio: awaitable.hpp uses std::exchange

#include <absl/container/flat_hash_map.h>
#include <absl/container/inlined_vector.h>

#include <boost/asio/awaitable.hpp>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "server/cmd_args.h"

namespace dashkv {

class ShardCmdContext;
class ConnCmdContext;

// Command flags, with Redis's names (COMMAND INFO lists them).
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

// What a command locks when it runs as a transaction (server/tx/transaction.h).
enum class TxScope : uint8_t {
  kKeys,          // its keys: exclusive if it writes, shared if it reads
  kAllShared,     // every shard whole, shared (DBSIZE, KEYS: a consistent view)
  kAllExclusive,  // every shard whole, exclusive (FLUSHALL, FLUSHDB)
  kNone,          // nothing, though it names keys (WATCH: it only registers interest)
};

// Argument indexes of a command's keys.
using KeyIndexes = absl::InlinedVector<uint32_t, 8>;
// A key a command writes in another database than the connection's (MOVE, COPY ... DB): its
// database and name, or nullopt when the call names none (or an invalid one).
using OtherDbKeyFn = std::optional<std::pair<unsigned, std::string_view>> (*)(CmdArgs args);

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
  TxScope tx_scope = TxScope::kKeys;
  OtherDbKeyFn other_db_key = nullptr;  // its intent lock is (that db, key) (transaction.h)
  std::vector<std::string_view> categories;  // ACL categories without '@': "string", "fast"...
  HandlerKind kind = HandlerKind::kConn;
  ShardHandler shard_handler = nullptr;
  ConnHandler conn_handler = nullptr;
  CoordHandler coord_handler = nullptr;
  BatchHandler batch_handler = nullptr;  // optional, kCoord commands without keys only
  std::string_view summary;  // for COMMAND DOCS
  std::string_view since;    // Redis version that introduced it
  std::string_view group;    // "string", "generic", "server", "connection", ...
  bool container = false;    // has subcommands (CLIENT, CONFIG ...): shown as "client|list"
  uint32_t id = 0;           // index in the registry (set by Register), for per-command stats
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
  bool HasKeys() const { return first_key > 0 || numkeys_index > 0; }
  // Returns the argument indexes of its keys in `args` (a well-formed call: arity checked),
  // in argument order. A malformed numkeys yields only the fixed keys (the handler rejects it).
  KeyIndexes KeysOf(CmdArgs args) const;
};

// Returns a spec with the fields every command sets: its fixed keys are args[first_key..last_key]
// with step 1 (none when first_key is 0; last_key -1 = the last argument), `group` is COMMAND
// DOCS's group. Each command family wraps this with its own defaults.
CommandSpec MakeSpec(std::string name, int arity, uint32_t flags, int first_key, int last_key,
                     std::vector<std::string_view> categories, std::string_view group,
                     std::string_view since, std::string_view summary);

// Returns `spec` marked one_hop (for registrations).
inline CommandSpec OneHop(CommandSpec spec) {
  spec.one_hop = true;
  return spec;
}

// Returns Redis's flag names for `flags` ("write", "readonly", "denyoom", ...).
std::vector<std::string_view> FlagNames(uint32_t flags);

class CommandRegistry {
 public:
  // Adds a command. REQUIRES: the name is new.
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
  // Returns the command named `name` (any case), or nullptr.
  const CommandSpec* Find(std::string_view name) const;
  size_t size() const { return by_name_.size(); }
  // Commands in registration order.
  const std::vector<std::unique_ptr<CommandSpec>>& all() const { return specs_; }

 private:
  std::vector<std::unique_ptr<CommandSpec>> specs_;
  absl::flat_hash_map<std::string_view, const CommandSpec*> by_name_;  // views of spec names
};

// Family registration functions, one per server/commands/*_commands.cc file.
void RegisterStringCommands(CommandRegistry* registry);
void RegisterGenericCommands(CommandRegistry* registry);
void RegisterKeyMoveCommands(CommandRegistry* registry);  // RENAME, RENAMENX, COPY, MOVE
void RegisterServerCommands(CommandRegistry* registry);
void RegisterConnectionCommands(CommandRegistry* registry);
void RegisterDebugCommands(CommandRegistry* registry);
void RegisterBitmapCommands(CommandRegistry* registry);
void RegisterInfoCommand(CommandRegistry* registry);
void RegisterLcsCommand(CommandRegistry* registry);
void RegisterSwapDbCommand(CommandRegistry* registry);
void RegisterListCommands(CommandRegistry* registry);
void RegisterHashCommands(CommandRegistry* registry);
void RegisterSetCommands(CommandRegistry* registry);
void RegisterZsetCommands(CommandRegistry* registry);
void RegisterTransactionCommands(CommandRegistry* registry);
void RegisterPubSubCommands(CommandRegistry* registry);
void RegisterBlockingCommands(CommandRegistry* registry);  // BLPOP, BLMOVE, BZPOPMIN ...

// Registers every family.
void RegisterAllCommands(CommandRegistry* registry);

}  // namespace dashkv
