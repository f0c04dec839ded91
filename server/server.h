// Server: the datastore behind io::Service — resolves each command in the command table, checks
// arity, groups a pipeline's shard commands per shard (one hop per shard) and runs connection
// and coordinator commands on the connection's thread. Owns the ShardSet and the Config.
// Thread-safe: immutable after Start(); per-engine state (clients, counters) is touched only by
// its own engine, and read by others only through ShardSet/EnginePool hops.
//
// Design: a command that cannot get memory
//   Handlers do not throw, with one exception: std::bad_alloc (operator new found no memory,
//   core/memory.h) and std::length_error (a container asked for more than max_size()), which a
//   request sized by the client (a count, a length) can cause however carefully it is bounded.
//   That is not a bug but a failed command: it gets "-ERR out of memory" in place of whatever
//   part of its reply it had written, and the server goes on. Any other exception is a bug and
//   still aborts (io/engine.h). The catch sits around one command's execution:
//   - a shard command, on its shard (RunShardHandler: every path runs it, inline, in a hop, in
//     a pipeline group, in EXEC, after waiting for a lock), so its reply slot is filled there;
//   - a connection command and a batch run, on the connection's thread;
//   - a coordinator command around its whole coroutine (RunCoordinator): an exception thrown in
//     one of its hops is caught on the shard and rethrown in the coordinator (EnginePool::Await,
//     AwaitMany, which let every branch finish first), whose locks are then given back whether
//     held, partly granted or partly released (KeyLocks::Abandon).
//   State after a failure: standard containers and the DashTable (a directory or segment
//   allocated before anything is relinked) keep their invariants when an allocation throws, and
//   the raw blocks of listpacks, intsets and strings abort rather than throw (core/memory.h).
//   The client-sized reservations that do throw are made before a command modifies anything (a
//   reply or a temporary), so in practice the command changed nothing; a write that did fail
//   midway may have applied part of its effect (on some shards of a multi-shard write), and its
//   keys' watchers are told, but no structure is left broken. MULTI/EXEC goes on with the next
//   queued command, as with any other error reply.
#pragma once

#include <utility>  // before asio: awaitable.hpp uses std::exchange

#include <absl/container/flat_hash_map.h>
#include <absl/container/flat_hash_set.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "io/engine_pool.h"
#include "io/service.h"
#include "server/command_registry.h"
#include "server/config.h"
#include "server/conn_state.h"
#include "server/pubsub/pubsub.h"
#include "server/storage/shard_set.h"

namespace dashkv {

class KeyspaceNotifier;

// Adds n to a counter that only one thread writes (no atomic read-modify-write needed).
inline void BumpCounter(std::atomic<uint64_t>& counter, uint64_t n = 1) {
  counter.store(counter.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
}

// Per-command counters of one engine (INFO commandstats).
struct CommandStat {
  uint64_t calls = 0;
  uint64_t ticks = 0;  // CycleClock ticks spent in the handler
  uint64_t failed = 0;
  uint64_t rejected = 0;
};

// Per-engine connection registry and counters. The registry is touched only by its engine's
// thread; the counters are written only by it and may be read (relaxed) by any thread.
struct alignas(64) EngineState {
  absl::flat_hash_set<ConnState*> clients;
  std::atomic<uint64_t> commands_processed{0};
  std::atomic<uint64_t> connections_received{0};
  std::atomic<uint64_t> rejected_calls{0};
  // Messages sent to other shards by the pipeline dispatcher (one per remote shard per group).
  std::atomic<uint64_t> shard_hops{0};
  std::atomic<uint64_t> error_replies{0};
  // Engine-local (read by INFO through a hop to this engine).
  std::vector<CommandStat> command_stats;                // by CommandSpec::id
  absl::flat_hash_map<std::string, uint64_t> error_stats;  // by error code ("ERR", ...)
};

class ConnCmdContext;
class KeyLocks;
struct LockRequest;

class Server : public io::Service {
 public:
  // REQUIRES: config.Init() was called and `pool` is started. `extra_commands`, when set, adds
  // commands to the table after the built-in ones (embedding, in-process tests).
  Server(Config& config, io::EnginePool& pool,
         void (*extra_commands)(CommandRegistry*) = nullptr);
  ~Server() override;

  std::unique_ptr<io::ConnectionState> OnConnect(io::Connection& conn) override;
  boost::asio::awaitable<void> Dispatch(io::Connection& conn, io::ConnectionState& state,
                                        std::span<const io::CmdArgs> batch,
                                        io::ReplyBuilder& out) override;
  void OnDisconnect(io::Connection& conn, io::ConnectionState& state) override;

  // Adds the intent locks that `spec` called with `args` in database `db` needs.
  void AddCommandLocks(KeyLocks& locks, const CommandSpec& spec, io::CmdArgs args,
                       unsigned db) const;

  // EXEC: runs the queued commands of `ctx.state` as one transaction (server/multi_exec.cc).
  // REQUIRES: ctx.state.in_multi.
  boost::asio::awaitable<void> Exec(ConnCmdContext& ctx);
  // Forgets every key `state` WATCHes (one one-way message per shard involved).
  void Unwatch(ConnState& state);
  // Leaves MULTI (queued commands dropped) and unwatches: DISCARD, RESET, disconnect.
  void DiscardMulti(ConnState& state);

  // Starts the per-shard background tasks (active expiry).
  void StartBackgroundTasks();
  // Counts one run of `spec` on `engine` that took `ticks` and sent `errors` errors (the last
  // one with code rb.last_error_code()).
  void RecordCall(unsigned engine, const CommandSpec& spec, uint64_t ticks, uint64_t errors,
                  const io::ReplyBuilder& rb);
  // Counts a command refused before it ran (unknown, arity, NOAUTH, OOM).
  void RecordRejected(unsigned engine, const CommandSpec* spec, const io::ReplyBuilder& rb);
  // Resets the INFO counters of engine `i` (CONFIG RESETSTAT). REQUIRES: runs on engine i.
  void ResetStats(unsigned i);
  // Closes the clients of `engine` idle for longer than `timeout` (server/client_cron.cc).
  // REQUIRES: runs on engine `engine`, about once a second.
  void ClientCron(unsigned engine, int64_t now_ms);
  // Samples the command rate (instantaneous_ops_per_sec); runs on engine 0 every 100 ms.
  void SampleOps();
  // Stops them; REQUIRES: called before the pool stops.
  void StopBackgroundTasks();

  Config& config() { return config_; }
  ShardSet& shard_set() { return *shard_set_; }
  io::EnginePool& pool() { return pool_; }
  const CommandRegistry& registry() const { return registry_; }
  PubSub& pubsub() { return *pubsub_; }
  // Engine-local state of engine `i`. REQUIRES: called on engine i.
  EngineState& engine_state(unsigned i) { return engine_states_[i]; }

  int64_t start_time_ms() const { return start_time_ms_; }
  std::atomic<int64_t>& connected_clients() { return connected_clients_; }
  std::atomic<uint64_t>& total_connections() { return total_connections_; }
  // Clients parked in a blocking command (INFO blocked_clients).
  std::atomic<int64_t>& blocked_clients() { return blocked_clients_; }
  // Commands per second over the last sampling period (INFO instantaneous_ops_per_sec).
  int64_t instantaneous_ops() const { return instantaneous_ops_.load(std::memory_order_relaxed); }
  // Sets what AcceptPending runs on engine 0 (main: the Listener's AcceptPending). Call before
  // clients connect.
  void set_accept_pending(std::function<void()> fn) { accept_pending_ = std::move(fn); }
  // Takes in every connection waiting in the listen backlog, so that a following scan of the
  // client registries (CLIENT LIST/KILL) sees a client whose connect() has returned.
  // REQUIRES: called from a coroutine on an engine thread.
  boost::asio::awaitable<void> AcceptPending();
  // The port actually listened on (set by main once bound).
  std::atomic<int>& port() { return port_; }

 private:
  // Resolves a command: returns its spec, or nullptr after replying with the error.
  const CommandSpec* Resolve(io::CmdArgs args, io::ReplyBuilder& out);
  // Runs a run of shard commands, grouped per owning shard; replies in request order. With
  // `check_locks`, a command whose key a transaction holds waits for it (see transaction.h);
  // without, the caller holds the locks of every key of `cmds` (EXEC). With `release` (EXEC's
  // last group), each shard releases its locks of `release` right after running its commands,
  // in the same message.
  boost::asio::awaitable<void> RunShardGroup(ConnState& state, unsigned my_engine, unsigned db,
                                             std::span<const PendingCmd> cmds,
                                             io::ReplyBuilder& out, int64_t now_ms,
                                             bool check_locks = true,
                                             KeyLocks* release = nullptr);
  // Runs the commands of `cmds` that `shard` owns, from index `from` on, until one is blocked
  // by an intent lock; returns its index, or cmds.size() when all ran. cmds[from] runs without
  // a check when `from_granted` (its locks were just granted). Replies go to `rb`; when
  // `reply_ends` is set, reply_ends[i] gets rb's size after command i.
  size_t RunCmds(Shard& shard, unsigned db, std::span<const PendingCmd> cmds, size_t from,
                 bool from_granted, bool check_locks, io::ReplyBuilder& rb, uint32_t* reply_ends,
                 int64_t now_ms);
  // Waits on shard `sid` until cmds[blocked]'s keys are free, then resumes RunCmds there.
  boost::asio::awaitable<size_t> WaitAndRunCmds(unsigned sid, unsigned db,
                                                std::span<const PendingCmd> cmds, size_t blocked,
                                                io::ReplyBuilder& rb, uint32_t* reply_ends,
                                                int64_t now_ms);
  // Queues a command given inside MULTI (or refuses it, flagging the transaction).
  void QueueInMulti(ConnState& state, const CommandSpec& spec, io::CmdArgs args,
                    io::ReplyBuilder& out);
  // Returns the shard of an EXEC whose queued commands and watched keys all live on one shard
  // (then it runs in one hop, with no lock taken), or nullopt.
  std::optional<unsigned> OneShardExec(const ConnState& state, const KeyLocks& locks,
                                       const std::vector<QueuedCmd>& cmds,
                                       const std::vector<std::vector<std::string_view>>& views)
      const;
  // Runs such an EXEC on shard `sid`, after the transactions that hold or await its keys.
  boost::asio::awaitable<void> ExecOnOneShard(
      ConnState& state, const LockRequest& req, unsigned sid,
      const std::vector<std::vector<std::string_view>>& views,
      const std::vector<QueuedCmd>& cmds, io::ReplyBuilder& out);
  // Returns whether a key `state` WATCHes was modified, or expired since it was watched.
  boost::asio::awaitable<bool> WatchedKeysChanged(ConnState& state, int64_t now_ms);
  // Runs a coordinator command; with several shards, inside intent locks on its keys (or on
  // whole shards for global commands) unless ctx already holds locks (EXEC).
  boost::asio::awaitable<void> RunCoordinator(const CommandSpec& spec, io::CmdArgs args,
                                              ConnCmdContext& ctx);
  // Returns the shard owning all keys of a kShard command, or nullopt when they span shards
  // (then its coordinator handler runs it).
  std::optional<unsigned> SingleShardOf(const CommandSpec& spec, io::CmdArgs args) const;
  // Prefetches the home buckets of the keys `shard` owns among `cmds`, so that a pipelined
  // group pays its cache misses in parallel rather than one after another.
  void PrefetchKeys(Shard& shard, unsigned db, std::span<const PendingCmd> cmds);
  // Runs one shard command on `shard` (its thread), with its WATCH, blocking and stats duties.
  void RunShardCommand(const PendingCmd& cmd, Shard& shard, unsigned db, io::ReplyBuilder& rb,
                       int64_t now_ms);
  // Runs the shard handler of `cmd`; returns false when it failed for lack of memory (then its
  // reply, from `reply_start` on in ctx.rb, was replaced by the error; see Design above).
  bool RunShardHandler(const PendingCmd& cmd, ShardCmdContext& ctx, size_t reply_start);
  // Runs the connection handler of `spec`, failing it alone for lack of memory.
  void RunConnHandler(const CommandSpec& spec, io::CmdArgs args, ConnCmdContext& ctx);

  Config& config_;
  io::EnginePool& pool_;
  CommandRegistry registry_;
  // One per shard, registered with its change listeners; outlives the shards.
  std::vector<std::unique_ptr<KeyspaceNotifier>> notifiers_;
  std::unique_ptr<ShardSet> shard_set_;
  std::unique_ptr<PubSub> pubsub_;
  std::vector<EngineState> engine_states_;
  int64_t start_time_ms_;
  std::atomic<int64_t> connected_clients_{0};
  std::atomic<uint64_t> total_connections_{0};
  std::atomic<int64_t> blocked_clients_{0};
  std::atomic<int> port_{0};
  std::atomic<int64_t> instantaneous_ops_{0};
  uint64_t last_ops_total_ = 0;      // engine 0 only
  int64_t last_ops_sample_ms_ = 0;   // engine 0 only
  std::array<int64_t, 16> ops_samples_{};  // engine 0 only
  size_t ops_sample_index_ = 0;      // engine 0 only
  std::atomic<bool> stopping_{false};
  std::function<void()> accept_pending_;  // immutable once clients connect
};

}  // namespace dashkv
