// ConnState: the server's per-connection state (selected database, name, library info).
// Thread: engine-local (the connection's thread). Shard handlers never see it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "io/connection.h"
#include "io/hop.h"
#include "io/reply_builder.h"
#include "io/service.h"
#include "server/acl/acl_user.h"
#include "server/command_name_memo.h"
#include "server/pubsub/client_subscriptions.h"
#include "server/tracking/client_tracking.h"
#include "server/tx/multi_part.h"

namespace dashkv {

struct CommandSpec;
struct WatchState;
class BlockedCall;
class ShardSet;

// A command of a pipeline, resolved and routed to its shard.
struct PendingCmd {
  const CommandSpec* spec;
  io::CmdArgs args;
  unsigned sid;
  // Sent by a CLIENT NO-TOUCH client: its lookups leave the access record as it is (fits in
  // the struct's padding; read once per command by PipelineRunner::RunShardCommand).
  bool no_touch = false;
  // HashBytes of the first key, computed when the command was routed (PipelineRunner::RouteOf)
  // so that its shard does not hash the key again (DbSlice::SetKeyHash); 0: not computed
  // (then the shard hashes it, which gives the right hash even if it is 0).
  uint64_t key_hash = 0;
};

// Scratch space of a pipelined group whose commands span several shards
// (PipelineRunner::PrepareShardGroup), kept per connection so that a group allocates nothing and
// touches only the entries of its own shards. Each shard's commands are linked in request order,
// so that a shard walks its own commands, not the whole group.
struct ShardGroupScratch {
  struct PerShard {
    uint32_t seen = 0;  // == gen: the shard has commands in the group being run
    uint32_t head;      // its first command
    uint32_t tail;      // its last command
    uint32_t next;      // another shard's: its first command left to run (a lock wait), or n
    uint32_t pos;       // another shard's: the offset of its next reply to copy in its builder
    uint64_t errors_before;  // another shard's: its builder's error count before the group
  };
  std::vector<PerShard> shards;    // by shard id
  std::vector<uint32_t> next_of;   // by command: the next command of its shard, or n
  std::vector<unsigned> others;    // the group's shards but the connection's own
  uint32_t gen = 0;                // the group's stamp in PerShard::seen
  uint32_t here_cmds = 0;          // commands of the connection's own shard
  uint32_t k = 0;                  // merging: the next command whose reply goes out
  bool merging = false;            // the replies are being put out (PipelineRunner::BeginMerge)
};

// A command queued by MULTI, with its own copy of the arguments (batch buffers are reused).
struct QueuedCmd {
  const CommandSpec* spec;
  std::vector<std::string> args;
};

// A key this client WATCHes; `existed`: it was live when watched (so its expiry, or its
// deletion by the expiry cycle, fails the EXEC, as Redis's isWatchedKeyExpired).
struct WatchedKey {
  unsigned db;
  std::string key;
  bool existed;
};

class ConnState : public io::ConnectionState {
 public:
  explicit ConnState(io::Connection* conn) : conn(conn) {}

  io::Connection* conn;
  // Sets `authenticated` and tells the connection, whose input limits depend on it.
  void SetAuthenticated(bool yes) {
    authenticated = yes;
    conn->set_authenticated(yes);
  }
  unsigned db = 0;
  std::string name;      // CLIENT SETNAME
  std::string lib_name;  // CLIENT SETINFO LIB-NAME
  std::string lib_ver;   // CLIENT SETINFO LIB-VER
  const CommandSpec* last_cmd = nullptr;  // for CLIENT LIST cmd=
  CommandNameMemo cmd_memo;               // Dispatch's lookups of command names
  // The arguments of the command the connection is suspended in (a coordinator command: a
  // blocking one, a hop to other shards, CLIENT LIST itself; or a command held by CLIENT
  // PAUSE), set around that wait only: CLIENT LIST's argv-mem. Views into the input buffer.
  io::CmdArgs running_args;
  bool authenticated = false;  // change it through SetAuthenticated
  // Connected from a loopback address (IsLocalPeer): enable-debug-command and
  // enable-protected-configs "local" allow it.
  bool local_client = false;
  // ACL (server/acl/acl_registry.h): the user this connection runs as (nullptr once deleted),
  // by name, and the registry generation it was read at. `acl_restricted`: its commands are
  // checked (any user but an unrestricted one); the only ACL cost on the hot path.
  std::shared_ptr<const AclUser> user;
  std::string user_name = "default";
  uint64_t acl_generation = 0;
  bool acl_restricted = false;
  bool no_evict = false;  // CLIENT NO-EVICT
  bool no_touch = false;  // CLIENT NO-TOUCH: carried to the shards in PendingCmd::no_touch
  // CLIENT REPLY. kSkipNext: the next command's reply is dropped; kSkipping: while that command
  // runs (it may itself turn replies on). The dispatch drops the reply of a command after
  // which the mode is not kOn (server/server.cc).
  enum class ReplyMode : uint8_t { kOn, kOff, kSkipNext, kSkipping };
  ReplyMode reply_mode = ReplyMode::kOn;
  bool monitor = false;  // in MONITOR mode (server/observability/monitor.h)
  uint64_t monitor_since = 0;
  // MULTI / EXEC / WATCH (server/commands/transaction_commands.cc).
  bool in_multi = false;
  bool in_exec = false;  // EXEC is running the queued commands (MultiExec::Exec)
  bool multi_error = false;  // a command was refused while queueing: EXEC aborts
  std::vector<QueuedCmd> queued;
  std::vector<WatchedKey> watched;
  std::shared_ptr<WatchState> watch_state;  // shared with the shards of the watched keys
  // Set at the first SUBSCRIBE (server/pubsub/pubsub.h).
  std::unique_ptr<ClientSubscriptions> pubsub;
  // CLIENT TRACKING (server/tracking/tracking_hub.h): allocated when first turned on.
  std::unique_ptr<ClientTracking> tracking;
  // TrackingNow bits for the command being run: the shards read them while the connection
  // waits for them (0 unless tracking is on: one branch per shard command).
  uint8_t tracking_now = 0;
  // Tracking is on in OPTIN or OPTOUT mode: commands run one at a time (CLIENT CACHING's flag
  // applies to the next command only).
  bool tracking_opt = false;
  // The change origin of this client's commands (ChangeListeners::origin, ChangeOriginOf):
  // while its tracking is on, itself; for a script's client, the calling client's, as a
  // script's; 0 otherwise. When set, the hops of its commands whose keys span shards carry it
  // (ConnCmdContext::shard_set runs them through `origin_shards`, a ShardSet::View made at
  // its first use); a shard command of a tracking client sets it itself (TrackingHub).
  uint64_t change_origin = 0;
  std::shared_ptr<ShardSet> origin_shards;
  // Set while the connection is parked in a blocking command (server/tx/blocking.h).
  std::shared_ptr<BlockedCall> blocked;
  bool held = false;  // a command of this connection is held by CLIENT PAUSE

  // Scratch space of the pipeline runner (server/pipeline_runner.h), kept to avoid allocations
  // per batch.
  std::vector<PendingCmd> pending;
  std::vector<io::ReplyBuilder> shard_replies;  // one per shard (multi-shard groups)
  std::vector<uint32_t> reply_ends;             // end offset of each command's reply
  ShardGroupScratch group;                      // a group over several shards
  MultiGroupScratch multi;                      // multi-shard groups (RunMultiGroup)
  // The connection's message to one other shard and back (io/hop.h): its hops allocate
  // nothing. One hop at a time, as the connection runs one command sequence at a time.
  io::Hop hop;
};

}  // namespace dashkv
