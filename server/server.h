// Server: the datastore behind io::Service. It owns the server's parts — the shard set, pub/sub,
// the command table, stats, the client registry, the pipeline runner and MULTI/EXEC — and
// hands command handlers the narrow services they use (server/services.h). Dispatch resolves
// each command of a batch, applies the admission gates (authentication, maxmemory, subscribed
// mode), queues inside MULTI, and has the pipeline runner run the rest in order
// (server/pipeline_runner.h, which also says what happens when a command cannot get memory).
// Thread-safe: immutable after construction; per-engine state is touched only by its engine.
#pragma once

#include <utility>  // before asio: awaitable.hpp uses std::exchange

#include <atomic>
#include <memory>
#include <span>
#include <vector>

#include "io/engine_pool.h"
#include "io/service.h"
#include "server/acl/acl_registry.h"
#include "server/client_pause.h"
#include "server/observability/monitor.h"
#include "server/client_registry.h"
#include "server/command_registry.h"
#include "server/config.h"
#include "server/metrics/metrics_endpoint.h"
#include "server/pipeline_runner.h"
#include "server/pubsub/pubsub.h"
#include "server/scripting/script_runner.h"
#include "server/server_stats.h"
#include "server/services.h"
#include "server/storage/memory_budget.h"
#include "server/storage/shard_set.h"
#include "server/tx/multi_exec.h"

namespace dashkv {

class KeyspaceNotifier;
class FunctionStore;
class ScriptStore;
class TrackingHub;

class Server : public io::Service {
 public:
  // REQUIRES: config.Init() was called and `pool` is started. `extra_commands`, when set, adds
  // commands to the table after the built-in ones (embedding, in-process tests).
  Server(Config& config, io::EnginePool& pool,
         void (*extra_commands)(CommandRegistry*) = nullptr);
  ~Server() override;

  // Applies the config file's rename-command directives to the command table, in order;
  // returns the start-up error text (with file and line) of the first bad one.
  // REQUIRES: no client connected yet (before the listener starts).
  absl::Status RenameCommands(const std::vector<RenamedCommand>& renames);

  std::unique_ptr<io::ConnectionState> OnConnect(io::Connection& conn) override;
  boost::asio::awaitable<void> Dispatch(io::Connection& conn, io::ConnectionState& state,
                                        std::span<const io::CmdArgs> batch,
                                        io::ReplyBuilder& out) override;
  void OnDisconnect(io::Connection& conn, io::ConnectionState& state) override;
  // HTTP on the RESP port: GET /metrics (server/metrics/metrics_endpoint.h).
  boost::asio::awaitable<void> ServeHttp(io::Connection& conn, io::ConnectionState& state,
                                         const io::HttpRequest& request,
                                         io::HttpResponse& response) override;

  // Starts the per-shard background tasks (active expiry, client upkeep, ops sampling).
  void StartBackgroundTasks();
  // Stops them; REQUIRES: called before the pool stops.
  void StopBackgroundTasks();

  // Loads the aclfile setting's users, if set (Redis refuses to start when that fails).
  absl::Status LoadAclAtStart();

  const ServerServices& services() const { return services_; }
  AclRegistry& acl() { return *acl_; }
  ShardSet& shard_set() { return *shard_set_; }
  ClientRegistry& clients() { return clients_; }
  SnapshotManager& snapshots() { return *snapshots_; }

 private:
  // Takes the connection's user afresh from the ACL registry (its generation changed).
  void RefreshUser(ConnState& state);
  // Replies -NOPERM to a call the ACL refuses (and logs it); returns whether it refused.
  bool AclRefuses(ConnState& state, const CommandSpec& spec, CmdArgs args,
                  io::ReplyBuilder& out);
  // Resolves a command (its name through `memo`): returns its spec, or nullptr after replying
  // with the error.
  const CommandSpec* Resolve(CmdArgs args, CommandNameMemo& memo, io::ReplyBuilder& out);
  // Feeds a command about to run to the monitors; an EXEC's queued commands go to `exec_feed`
  // (and its reply's offset `reply_at` to `exec_reply_at`), sent once it has run.
  void FeedMonitors(const ConnState& state, const CommandSpec& spec, CmdArgs args,
                    std::string* exec_feed, size_t* exec_reply_at, size_t reply_at);
  // Holds the command while a CLIENT PAUSE that stops it is in force (server/client_pause.h).
  // Sends the replies written so far in `out` first.
  boost::asio::awaitable<void> WaitWhilePaused(ConnState& state, const CommandSpec& spec,
                                               CmdArgs args, io::ReplyBuilder& out);
  // Runs a pipelined run of calls of one command with a batch handler (one reply each).
  boost::asio::awaitable<void> RunBatch(const CommandSpec& spec, std::span<const io::CmdArgs> run,
                                        ConnState& state, io::ReplyBuilder& out, int64_t now_ms);

  Config& config_;
  io::EnginePool& pool_;
  CommandRegistry registry_;
  ServerStats stats_;
  ClientRegistry clients_;
  // One per shard, registered with its change listeners; outlives the shards.
  std::vector<std::unique_ptr<KeyspaceNotifier>> notifiers_;
  // maxmemory as the shards share it (eviction, server/storage/memory_budget.h).
  std::unique_ptr<MemoryBudget> memory_;
  // Client-side caching; its per-shard tables are change listeners: outlives the shards.
  std::unique_ptr<TrackingHub> tracking_;
  std::unique_ptr<ShardSet> shard_set_;
  std::unique_ptr<PubSub> pubsub_;
  std::unique_ptr<SnapshotManager> snapshots_;
  std::unique_ptr<ScriptStore> scripts_;
  std::unique_ptr<FunctionStore> functions_;
  std::unique_ptr<AclRegistry> acl_;
  ClientPause pause_;
  MonitorFeed monitor_;
  ServerServices services_;
  PipelineRunner runner_;
  MultiExec multi_;
  ScriptRunner scripting_;
  MetricsEndpoint metrics_;
  std::atomic<bool> stopping_{false};
};

}  // namespace dashkv
