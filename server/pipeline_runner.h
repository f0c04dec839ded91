// PipelineRunner: runs a sequence of commands in order on behalf of one connection — a
// pipelined batch (Server::Dispatch) or the queued commands of an EXEC (MultiExec::Exec).
// Consecutive single-shard commands are grouped per owning shard (one message per shard, the
// shards in parallel) and their replies put back in request order; every other command runs on
// the connection's thread (a connection handler) or as a coordinator (hops to its shards,
// under intent locks when it spans several). Each command is counted in ServerStats.
// Thread: the connection's thread; shard commands run on their shards' threads.
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
//   - a coordinator command around its whole coroutine (RunCoordCommand): an exception thrown in
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

#include <absl/container/inlined_vector.h>

#include <boost/asio/awaitable.hpp>
#include <cstdint>
#include <optional>
#include <span>

#include "io/reply_builder.h"
#include "server/cmd_context.h"
#include "server/command_registry.h"
#include "server/conn_state.h"
#include "server/services.h"

namespace dashkv {

class KeyLocks;

class PipelineRunner {
 public:
  explicit PipelineRunner(const ServerServices& services);

  // A sequence runs as a loop over its items (Dispatch and Exec each have one, with their own
  // rules for what joins a group and what else an item may be):
  //   for (size_t i = 0; i < n;) {
  //     if (size_t j = GatherShardCmds(state, i, n, as_shard_cmd); j > i) {
  //       if (!RunLocalGroup(state, out, now_ms)) co_await RunShardGroup(state, out, now_ms);
  //       i = j;   (Dispatch also hops a one-shard group without a frame, HopGroup, and
  //                 runs a group with one other shard in its own coroutine: PrepareShardGroup)
  //     } else {
  //       ... run item i on the connection's thread (RunConnCommand, RunCoordCommand) ...
  //     }
  //   }
  // The loop stays in the caller's coroutine: a coroutine level more per batch costs ~10% of
  // the instructions of a pipeline-1 GET. For the same reason a group that runs on the
  // connection's own shard runs in a plain call (RunLocalGroup): a nested coroutine's frame
  // would be allocated per batch, since asio keeps one freed frame per thread for reuse and the
  // caller's frame is still live. A group on one other shard hops in the caller's coroutine
  // too (HopGroup): a frame of its own would often miss that one-block cache (io_context::poll
  // has its own, per call; a hop resumes outside it, from the engine's inbox, where the engine
  // keeps another: io/engine.cc) and be allocated per hop.

  // Puts into state.pending the single-shard commands of the maximal run of items from `i`
  // on (below `n`) that `as_shard_cmd(j)` (returning std::optional<PendingCmd>) accepts;
  // returns the index after the run.
  template <typename AsShardCmd>
  static size_t GatherShardCmds(ConnState& state, size_t i, size_t n, AsShardCmd&& as_shard_cmd) {
    state.pending.clear();
    for (; i < n; ++i) {
      std::optional<PendingCmd> cmd = as_shard_cmd(i);
      if (!cmd) break;
      state.pending.push_back(*cmd);
    }
    return i;
  }

  // Runs state.pending at once, without suspending, when the connection's own shard owns every
  // command of it (a command whose key a transaction holds stops the run there, as in
  // RunShardGroup). Returns whether all ran; if not, the commands that ran (if any) have been
  // removed from state.pending, and RunShardGroup runs the rest.
  bool RunLocalGroup(ConnState& state, io::ReplyBuilder& out, int64_t now_ms);

  // Returns whether one shard, not this thread's, owns every command of state.pending (then
  // HopGroup runs them).
  bool OnOneRemoteShard(const ConnState& state) const;

  // Returns the awaitable that runs state.pending on the one shard that owns them all, in one
  // hop through state.hop (no allocation, no coroutine frame of its own): the caller does
  //   co_await runner.HopGroup(state, out, now_ms);
  //   state.hop.RethrowIfFailed();
  // The commands that ran are removed from state.pending; those left, if any, wait for a
  // transaction's lock (RunShardGroup runs them). Replies go straight into `out`.
  // REQUIRES: OnOneRemoteShard(state).
  io::Hop::Start HopGroup(ConnState& state, io::ReplyBuilder& out, int64_t now_ms);

  // Runs state.pending grouped per owning shard (one message per other shard, those shards in
  // parallel); replies in request order. The commands of this thread's shard run once the
  // others have answered, as their turn comes in the replies: their replies go straight into
  // `out`, where the others' are copied from their builders (a copy for half the commands of
  // a two-shard group rather than for all). With `check_locks`, a command whose key a
  // transaction holds waits for it (server/tx/transaction.h); without, the caller holds the
  // locks of every key of the commands (EXEC). With `release` (EXEC's last group), each shard
  // releases its locks of `release` right after running its commands, in the same message.
  boost::asio::awaitable<void> RunShardGroup(ConnState& state, io::ReplyBuilder& out,
                                             int64_t now_ms, bool check_locks = true,
                                             KeyLocks* release = nullptr);

  // RunShardGroup in steps, for a group over several shards (or one waiting for a lock) that
  // Dispatch runs in its own coroutine when one other shard has commands (the usual case at
  // two threads: no coroutine frame):
  //   if (runner.PrepareShardGroup(state, out)) {
  //     co_await runner.HopGroupPart(state, now_ms);
  //     state.hop.RethrowIfFailed();
  //     if (!runner.FinishShardGroup(state, out, now_ms)) {
  //       co_await runner.CompleteShardGroup(state, out, now_ms);  (a lock wait: rare)
  //     }
  //   } else {
  //     co_await runner.RunPreparedGroup(state, out, now_ms);
  //   }
  // Prepares state.group for state.pending: links each shard's commands, clears the other
  // shards' builders. Returns whether exactly one other shard has commands.
  bool PrepareShardGroup(ConnState& state, const io::ReplyBuilder& out);
  // Returns the awaitable that runs the commands of the one other shard of the prepared group
  // there, through state.hop, their replies into its builder.
  io::Hop::Start HopGroupPart(ConnState& state, int64_t now_ms);
  // Once the other shards have run their commands: puts the replies in request order into
  // `out`, running this shard's commands as their turn comes. Returns false, having done part
  // of it, when a command waits for a transaction's lock: CompleteShardGroup does the rest.
  bool FinishShardGroup(ConnState& state, io::ReplyBuilder& out, int64_t now_ms,
                        bool check_locks = true);
  boost::asio::awaitable<void> CompleteShardGroup(ConnState& state, io::ReplyBuilder& out,
                                                  int64_t now_ms, bool check_locks = true);
  // Runs the prepared group, its other shards in parallel. `check_locks`, `release`: as in
  // RunShardGroup.
  boost::asio::awaitable<void> RunPreparedGroup(ConnState& state, io::ReplyBuilder& out,
                                                int64_t now_ms, bool check_locks = true,
                                                KeyLocks* release = nullptr);

  // Runs state.pending — single-shard commands on exactly two shards, one of them this
  // thread's — as EXEC's only group under `locks` (not held; they cover every key of the
  // commands on those two shards) in one round trip: takes the local shard's locks at once,
  // then in one message the other shard's, where its commands run and its locks are released;
  // then the local commands run and the local locks are released (multi_group.cc explains why
  // that is safe). On success sends EXEC's reply (the array of the commands' replies) and
  // returns true; returns false, having run and sent nothing and holding nothing, if a shard
  // refused.
  boost::asio::awaitable<bool> RunShardGroupLocalFirst(ConnState& state, io::ReplyBuilder& out,
                                                       int64_t now_ms, KeyLocks& locks);

  // Multi-shard groups (server/tx/multi_part.h): a pipelined run of calls whose keys span
  // shards (CommandSpec::multi_ops) runs as one transaction with one message per shard per
  // step. Dispatch gathers a run (BeginMultiGroup, then AddMultiCmd per call, PendingCmd::sid
  // unused) and runs it (RunMultiGroup); replies in request order.
  static void BeginMultiGroup(ConnState& state);
  // Adds the call `spec` `args` to the group being gathered if its keys span shards; returns
  // whether it did. REQUIRES: spec.multi_ops set; the call's arity is checked.
  bool AddMultiCmd(ConnState& state, const CommandSpec& spec, CmdArgs args) const;
  // Runs the gathered group: locks every key of every call (local shard first; see
  // multi_group.cc), runs each shard's parts in one message, replies in request order.
  boost::asio::awaitable<void> RunMultiGroup(ConnState& state, io::ReplyBuilder& out,
                                             int64_t now_ms);

  // Returns the shard owning all keys of a kShard command, or nullopt when they span shards
  // (then its coordinator handler runs it).
  std::optional<unsigned> SingleShardOf(const CommandSpec& spec, CmdArgs args) const;
  // As SingleShardOf, with the hash of the first key in its shard's table (PendingCmd::key_hash)
  // computed once for both.
  struct ShardRoute {
    unsigned sid;
    uint64_t key_hash;
  };
  std::optional<ShardRoute> RouteOf(const CommandSpec& spec, CmdArgs args) const;

  // Runs a connection command (kConn) or a coordinator (kCoord) on the connection's thread and
  // counts it. A coordinator with several shards runs inside intent locks on its keys (or whole
  // shards for a global command) unless ctx already holds locks (EXEC).
  void RunConnCommand(const CommandSpec& spec, CmdArgs args, ConnCmdContext& ctx);
  boost::asio::awaitable<void> RunCoordCommand(const CommandSpec& spec, CmdArgs args,
                                               ConnCmdContext& ctx);

  // Runs one shard command on `shard` (its thread) and counts it, with its duties after: the
  // change listeners' pending work, then the clients it unblocked. `from_script`: a script's
  // call (ShardCmdContext::from_script). `client`: the connection it runs for, read only if the
  // command is slow (the slow log's client fields) and for client-side caching; nullptr for a
  // script's calls, whose caching client is `script_caller` (the connection running the
  // script, or nullptr). A command with one key, of a client not running EXEC, may evict in
  // place (DbSlice::in_place_evictor): scripts and EXEC run several commands as one, and
  // Redis evicts only before them.
  void RunShardCommand(const PendingCmd& cmd, Shard& shard, unsigned db, io::ReplyBuilder& rb,
                       int64_t now_ms, bool from_script = false,
                       const ConnState* client = nullptr,
                       const ConnState* script_caller = nullptr);

 private:
  // RunShardCommand's body, inlined into the pipeline's loop (the per-command hot path).
  [[gnu::always_inline]] inline void RunShardCommandInline(
      const PendingCmd& cmd, Shard& shard, unsigned db, io::ReplyBuilder& rb, int64_t now_ms,
      bool from_script, const ConnState* client, const ConnState* script_caller);
  // Runs the commands of `cmds` that `shard` owns, from index `from` up to `to`, until one is
  // blocked by an intent lock; returns its index, or `to` when all ran. cmds[from] runs
  // without a check when `from_granted` (its locks were just granted). Replies go to `rb`; when
  // `reply_ends` is set, reply_ends[i] gets rb's size after command i.
  size_t RunCmds(Shard& shard, unsigned db, std::span<const PendingCmd> cmds, size_t from,
                 size_t to, bool from_granted, bool check_locks, io::ReplyBuilder& rb,
                 uint32_t* reply_ends, int64_t now_ms, const ConnState* client);
  // Waits on shard `sid` until cmds[blocked]'s keys are free, then resumes RunCmds there, up
  // to `to`.
  boost::asio::awaitable<size_t> WaitAndRunCmds(unsigned sid, unsigned db,
                                                std::span<const PendingCmd> cmds, size_t blocked,
                                                size_t to, io::ReplyBuilder& rb,
                                                uint32_t* reply_ends, int64_t now_ms,
                                                const ConnState* client);
  // Prefetches the home buckets of the keys `shard` owns among `cmds`, so that a pipelined
  // group pays its cache misses in parallel rather than one after another. Sets the key_hash
  // of those not routed with one (the command then does not hash its key again).
  void PrefetchKeys(Shard& shard, unsigned db, std::span<PendingCmd> cmds);
  // Walks `shard`'s commands of the prepared group (state.group) from cmds[from] on: as
  // PrefetchKeys and RunCmds (with reply_ends), without passing the other shards' commands.
  void PrefetchList(Shard& shard, unsigned db, std::span<PendingCmd> cmds, size_t from,
                    const uint32_t* next_of);
  size_t RunList(Shard& shard, unsigned db, std::span<const PendingCmd> cmds, size_t from,
                 bool check_locks, io::ReplyBuilder& rb, uint32_t* reply_ends,
                 const uint32_t* next_of, int64_t now_ms, const ConnState* client);
  // Runs, on another shard of the prepared group, its commands into its builder.
  void RunGroupPart(Shard& shard, ConnState& state, int64_t now_ms, bool check_locks);
  // Starts putting the replies out: prefetches this shard's keys, grows `out` once for the
  // replies in the other shards' builders and as much again per command of this shard.
  void BeginMerge(ConnState& state, io::ReplyBuilder& out);
  // Puts the replies of state.pending into `out` in request order, from command
  // state.group.k on: a run of consecutive commands of another shard is one copy from its
  // builder; a command of this shard runs now, its reply written straight into `out`.
  // Returns true when all are in; false, state.group.k at it, when a command of this shard is
  // blocked by a transaction's lock (`check_locks`).
  bool MergeReplies(ConnState& state, io::ReplyBuilder& out, bool check_locks, int64_t now_ms);
  // Adds the errors of the other shards' replies to `out`'s count.
  void EndMerge(ConnState& state, io::ReplyBuilder& out);
  // Runs on `shard` the parts of the gathered group's calls that have keys there, in order.
  void RunParts(Shard& shard, ConnState& state, int64_t now_ms);
  // Sends the replies of the group's calls from their parts, in order, and counts the calls.
  void CombineParts(ConnState& state, std::span<const unsigned> sids, io::ReplyBuilder& out);
  // Runs the shard handler of `cmd`; returns false when it failed for lack of memory (then its
  // reply, from `reply_start` on in ctx.rb, was replaced by the error; see Design above).
  bool RunShardHandler(const PendingCmd& cmd, ShardCmdContext& ctx, size_t reply_start);

  const ServerServices& services_;
  ShardSet& shard_set_;
  ServerStats& stats_;
};

}  // namespace dashkv
