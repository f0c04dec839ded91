// MultiExec: MULTI/EXEC/WATCH for the connections — queueing inside MULTI, EXEC as one
// transaction, and forgetting watched keys. The commands' handlers are in
// server/commands/transaction_commands.cc; WATCH's table on each shard in server/tx/watch.h.
// Thread: the connection's thread; it reaches shards through ShardSet hops.
//
// Design
//   EXEC with several shards: the keys of every queued command (in the database each one will run
//   in, following SELECTs in the queue) and every watched key are locked as one KeyLocks request
//   (server/tx/transaction.h); whole shards for a queued global command. Under the locks the watch
//   flag and the watched keys' expiry are checked, then the commands run in order exactly as a
//   pipeline does — consecutive single-shard commands grouped per shard, one parallel hop per group
//   — but without lock checks (the transaction holds every lock they need), and coordinator
//   commands run inside the same locks. Then the locks are released. With one shard, nothing
//   suspends between the commands, so no locks are needed at all. With two shards, one of them
//   the connection's own, every command single-shard and no key watched, the local locks are
//   taken at once and one message to the other shard takes its locks, runs its commands and
//   releases them (PipelineRunner::RunShardGroupLocalFirst): one round trip, not two.
#pragma once

#include <utility>  // before asio: awaitable.hpp uses std::exchange

#include <boost/asio/awaitable.hpp>
#include <optional>
#include <string_view>
#include <vector>

#include "io/reply_builder.h"
#include "server/cmd_args.h"
#include "server/conn_state.h"
#include "server/services.h"

namespace dashkv {

class ConnCmdContext;
class KeyLocks;
class PipelineRunner;
struct CommandSpec;
struct LockRequest;

class MultiExec {
 public:
  MultiExec(const ServerServices& services, PipelineRunner& runner);

  // Queues a command given inside MULTI (or refuses it, flagging the transaction).
  void Queue(ConnState& state, const CommandSpec& spec, CmdArgs args, io::ReplyBuilder& out);
  // EXEC: runs the queued commands of `ctx.state` as one transaction.
  // REQUIRES: ctx.state.in_multi.
  boost::asio::awaitable<void> Exec(ConnCmdContext& ctx);
  // Forgets every key `state` WATCHes (one one-way message per shard involved).
  void Unwatch(ConnState& state);
  // Leaves MULTI (queued commands dropped) and unwatches: DISCARD, RESET, disconnect.
  void Discard(ConnState& state);

 private:
  using ArgViews = std::vector<std::vector<std::string_view>>;

  // Returns whether a key `state` WATCHes was modified, or expired since it was watched.
  boost::asio::awaitable<bool> WatchedKeysChanged(ConnState& state, int64_t now_ms);
  // Returns the shard of an EXEC whose queued commands and watched keys all live on one shard
  // (then it runs in one hop, with no lock taken), or nullopt.
  std::optional<unsigned> OneShardExec(const KeyLocks& locks, const std::vector<QueuedCmd>& cmds,
                                       const ArgViews& views) const;
  // Returns whether an EXEC may take the local-first path (its locks on two shards, one of
  // them this thread's, no whole shard; every command single-shard); if so, its commands are
  // in state.pending.
  bool LocalFirstExec(const KeyLocks& locks, const std::vector<QueuedCmd>& cmds,
                      const ArgViews& views, ConnState& state) const;
  // Runs such an EXEC on shard `sid`, after the transactions that hold or await its keys.
  boost::asio::awaitable<void> ExecOnOneShard(ConnState& state, const LockRequest& req,
                                              unsigned sid, const ArgViews& views,
                                              const std::vector<QueuedCmd>& cmds,
                                              io::ReplyBuilder& out);

  const ServerServices& services_;
  PipelineRunner& runner_;
};

}  // namespace dashkv
