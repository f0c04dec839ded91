#include "server/pipeline_runner.h"

#include <absl/container/inlined_vector.h>

#include <algorithm>
#include <exception>

#include "core/base/logging.h"
#include "io/connection.h"
#include "server/config.h"
#include "server/cycle_clock.h"
#include "server/server_stats.h"
#include "server/storage/shard_set.h"
#include "server/tracking/tracking_hub.h"
#include "server/tx/lock_plan.h"
#include "server/tx/transaction.h"

namespace dashkv {

namespace asio = boost::asio;

namespace {

// The client a command runs for, as the slow log names it: nullptr ("?:0") for a script's call.
const ConnState* CallerOf(const ConnCmdContext& ctx) {
  return ctx.from_script ? nullptr : &ctx.state;
}

}  // namespace

PipelineRunner::PipelineRunner(const ServerServices& services)
    : services_(services), shard_set_(services.shard_set), stats_(services.stats) {}

std::optional<unsigned> PipelineRunner::SingleShardOf(const CommandSpec& spec,
                                                      CmdArgs args) const {
  unsigned sid = shard_set_.ShardOf(args[spec.first_key]);
  if (spec.last_key == spec.first_key || shard_set_.size() == 1) return sid;
  size_t last = spec.last_key < 0 ? args.size() + spec.last_key : size_t(spec.last_key);
  for (size_t k = spec.first_key + spec.key_step; k <= last; k += spec.key_step) {
    if (shard_set_.ShardOf(args[k]) != sid) return std::nullopt;
  }
  return sid;
}

std::optional<PipelineRunner::ShardRoute> PipelineRunner::RouteOf(const CommandSpec& spec,
                                                                  CmdArgs args) const {
  // One shard: no hash needed here (PrefetchKeys computes it for a group).
  if (shard_set_.size() == 1) return ShardRoute{0, 0};
  const std::string_view first = args[spec.first_key];
  const uint64_t key_hash = HashBytes(first);
  const unsigned sid = shard_set_.ShardOf(first, key_hash);
  if (spec.last_key == spec.first_key) return ShardRoute{sid, key_hash};
  size_t last = spec.last_key < 0 ? args.size() + spec.last_key : size_t(spec.last_key);
  for (size_t k = spec.first_key + spec.key_step; k <= last; k += spec.key_step) {
    if (shard_set_.ShardOf(args[k]) != sid) return std::nullopt;
  }
  return ShardRoute{sid, key_hash};
}

void PipelineRunner::PrefetchKeys(Shard& shard, unsigned db, std::span<PendingCmd> cmds) {
  if (cmds.size() < 2) return;  // nothing to overlap
  PrimeTable& table = shard.db(db).table();
  // Two stages: the buckets of every key, then (buckets now cached) the values they hold.
  constexpr size_t kMax = 64;
  uint64_t hashes[kMax];
  std::string_view keys[kMax];
  size_t n = 0;
  for (PendingCmd& c : cmds) {
    if (c.sid != shard.index()) continue;
    keys[n] = c.args[c.spec->first_key];
    if (c.key_hash == 0) c.key_hash = HashBytes(keys[n]);
    hashes[n] = c.key_hash;
    table.Prefetch(hashes[n]);
    if (++n == kMax) break;
  }
  for (size_t i = 0; i < n; ++i) {
    PrimeIterator it = table.Find(keys[i], hashes[i]);
    if (!it.is_done()) it->second.PrefetchData();
  }
}

void PipelineRunner::RunShardCommand(const PendingCmd& cmd, Shard& shard, unsigned db,
                                     io::ReplyBuilder& rb, int64_t now_ms, bool from_script,
                                     const ConnState* client, const ConnState* script_caller) {
  RunShardCommandInline(cmd, shard, db, rb, now_ms, from_script, client, script_caller);
}

inline void PipelineRunner::RunShardCommandInline(const PendingCmd& cmd, Shard& shard,
                                                  unsigned db, io::ReplyBuilder& rb,
                                                  int64_t now_ms, bool from_script,
                                                  const ConnState* client,
                                                  const ConnState* script_caller) {
  if (shard.evictor().pressure() && cmd.spec->HasFlag(kCmdDenyOom) &&
      !shard.evictor().MakeRoom(now_ms)) [[unlikely]] {
    // Over maxmemory with nothing left to evict (server/storage/evictor.h).
    SendStatus(rb, OpStatus::kOutOfMemory);
    stats_.RecordRejected(shard.index(), cmd.spec, rb);
    return;
  }
  ShardCmdContext ctx(shard, db, rb, now_ms, *cmd.spec, services_.config);
  ctx.services = &services_;
  ctx.from_script = from_script;
  const uint64_t errors = rb.error_count();
  const size_t reply_start = rb.size();
  const uint64_t start = CycleClock::Now();
  if (cmd.no_touch) [[unlikely]] ctx.db.set_no_touch(true);
  // Client-side caching (server/tracking/tracking_hub.h): one branch when the client does not
  // track.
  const ConnState* tracker = client != nullptr ? client : script_caller;
  const bool tracked = tracker != nullptr && tracker->tracking_now != 0;
  uint64_t outer_origin = 0;  // a script's call runs inside the script's command
  if (tracked) [[unlikely]] {
    ctx.tracking_client = tracker;
    outer_origin = TrackingHub::BeginCommand(shard, *tracker, /*by_script=*/from_script);
  }
  bool ran;
  {
    // The routed hash of the first key serves the handler's lookups only, and is gone after
    // it on every path (a stale hint would match a later view at the same address).
    DbSlice::KeyHashScope hint(
        ctx.db, cmd.key_hash != 0 ? cmd.args[cmd.spec->first_key] : std::string_view(),
        cmd.key_hash);
    ran = RunShardHandler(cmd, ctx, reply_start);
  }
  if (cmd.no_touch) [[unlikely]] ctx.db.set_no_touch(false);
  if (ran && (!ctx.changed || rb.error_count() != errors)) [[unlikely]] {
    // It left its keys as they were (a failed command changed nothing; a failed allocation
    // may have left a write half done, so its writes stay modified).
    shard.changes().MarkUnmodified();
  }
  shard.FinishChanges();
  if (tracked) [[unlikely]] {
    services_.tracking.EndCommand(shard, *tracker, *cmd.spec, cmd.args, outer_origin);
  }
  // Serve the clients this command unblocked before anything else runs (server/tx/blocking.h).
  if (shard.blocking().has_ready()) shard.blocking().ServeReady();
  stats_.RecordCall(shard.index(), *cmd.spec, CycleClock::Now() - start,
                    rb.error_count() - errors, rb, cmd.args, client);
  ++shard.stats().commands;
}

bool PipelineRunner::RunShardHandler(const PendingCmd& cmd, ShardCmdContext& ctx,
                                     size_t reply_start) {
  try {
    cmd.spec->shard_handler(cmd.args, ctx);
    return true;
  } catch (const std::exception& e) {
    if (!IsAllocationFailure(e)) throw;
    SendAllocationFailure(ctx.rb, reply_start, *cmd.spec, e);
  }
  return false;
}

void PipelineRunner::RunConnCommand(const CommandSpec& spec, CmdArgs args, ConnCmdContext& ctx) {
  const uint64_t errors = ctx.rb.error_count();
  const uint64_t start = CycleClock::Now();
  const size_t reply_start = ctx.rb.size();
  try {
    spec.conn_handler(args, ctx);
  } catch (const std::exception& e) {
    if (!IsAllocationFailure(e)) throw;
    SendAllocationFailure(ctx.rb, reply_start, spec, e);
  }
  stats_.RecordCall(ctx.state.conn->engine().index(), spec, CycleClock::Now() - start,
                    ctx.rb.error_count() - errors, ctx.rb, args, CallerOf(ctx));
}

asio::awaitable<void> PipelineRunner::RunCoordCommand(const CommandSpec& spec, CmdArgs args,
                                                      ConnCmdContext& ctx) {
  const uint64_t errors = ctx.rb.error_count();
  const uint64_t start = CycleClock::Now();
  const size_t reply_start = ctx.rb.size();
  if (ctx.state.tracking_now & kTrackingReads) [[unlikely]] {
    services_.tracking.RememberCoordKeys(ctx.state, spec, args);
  }
  const bool needs_locks = shard_set_.size() > 1 && ctx.locks == nullptr &&
                           !spec.HasFlag(kCmdBlocking) && spec.tx_scope != TxScope::kNone &&
                           spec.tx_scope != TxScope::kScript &&
                           (spec.HasKeys() || spec.tx_scope != TxScope::kKeys);
  if (!needs_locks) {
    try {
      co_await spec.coord_handler(args, ctx);
    } catch (const std::exception& e) {
      if (!IsAllocationFailure(e)) throw;
      SendAllocationFailure(ctx.rb, reply_start, spec, e);
    }
  } else {
    KeyLocks locks(shard_set_);
    AddCommandLocks(locks, spec, args, ctx.state.db);
    // A one-hop read takes its locks in its hop; a one-hop write releases them in its hop
    // (transaction.h).
    locks.set_one_hop(spec.one_hop);
    bool ok = true;
    try {
      if (!spec.one_hop || spec.HasFlag(kCmdWrite)) {
        const uint64_t wait_start = CycleClock::Now();
        co_await locks.Acquire();
        ctx.wait_ticks += CycleClock::Now() - wait_start;
      }
      ctx.locks = &locks;
      co_await spec.coord_handler(args, ctx);
    } catch (const std::exception& e) {
      if (!IsAllocationFailure(e)) throw;
      ok = false;
      SendAllocationFailure(ctx.rb, reply_start, spec, e);
    }
    ctx.locks = nullptr;
    if (!ok) {
      // Failed midway: its locks may be held, partly granted, or partly released by its hop:
      // all are given back. (Whatever it changed was told to the change listeners on its
      // shards.)
      locks.Abandon();
    } else if (locks.held()) {
      locks.Release();
    }
  }
  // Its own run time: the waits for its locks and for a blocking command's wake-up are not.
  const uint64_t ticks = CycleClock::Now() - start;
  stats_.RecordCall(ctx.state.conn->engine().index(), spec,
                    ticks > ctx.wait_ticks ? ticks - ctx.wait_ticks : 0,
                    ctx.rb.error_count() - errors, ctx.rb, args, CallerOf(ctx));
}

size_t PipelineRunner::RunCmds(Shard& shard, unsigned db, std::span<const PendingCmd> cmds,
                               size_t from, size_t to, bool from_granted, bool check_locks,
                               io::ReplyBuilder& rb, uint32_t* reply_ends, int64_t now_ms,
                               const ConnState* client) {
  for (size_t i = from; i < to; ++i) {
    const PendingCmd& c = cmds[i];
    if (c.sid != shard.index()) continue;
    if (check_locks && !shard.locks().empty() && !(from_granted && i == from) &&
        LocksBlock(shard.locks(), *c.spec, c.args, db)) {
      return i;
    }
    RunShardCommandInline(c, shard, db, rb, now_ms, /*from_script=*/false, client, nullptr);
    if (reply_ends != nullptr) reply_ends[i] = static_cast<uint32_t>(rb.size());
  }
  return to;
}

asio::awaitable<size_t> PipelineRunner::WaitAndRunCmds(unsigned sid, unsigned db,
                                                       std::span<const PendingCmd> cmds,
                                                       size_t blocked, size_t to,
                                                       io::ReplyBuilder& rb, uint32_t* reply_ends,
                                                       int64_t now_ms, const ConnState* client) {
  co_return co_await shard_set_.AwaitAsync<size_t>(
      sid, [&, blocked, to](Shard& shard, io::Completion<size_t> done) {
        const PendingCmd& c = cmds[blocked];
        Shard* sp = &shard;
        // Transient: granted in FIFO order behind the transactions holding or awaiting the keys.
        shard.locks().Enqueue(
            ShardLockRequest(*c.spec, c.args, db),
            [&, sp, blocked, to, done = std::move(done)]() mutable {
              done(RunCmds(*sp, db, cmds, blocked, to, /*from_granted=*/true,
                           /*check_locks=*/true, rb, reply_ends, now_ms, client));
            },
            /*transient=*/true);
      });
}

bool PipelineRunner::RunLocalGroup(ConnState& state, io::ReplyBuilder& out, int64_t now_ms) {
  std::vector<PendingCmd>& cmds = state.pending;
  const unsigned here = state.conn->engine().index();
  for (const PendingCmd& c : cmds) {
    if (c.sid != here) return false;
  }
  Shard& shard = *Shard::Current();
  PrefetchKeys(shard, state.db, cmds);
  const size_t next = RunCmds(shard, state.db, cmds, 0, cmds.size(), /*from_granted=*/false,
                              /*check_locks=*/true, out, nullptr, now_ms, &state);
  if (next == cmds.size()) return true;
  // cmds[next] waits for a transaction's lock: RunShardGroup waits and runs it and the rest.
  cmds.erase(cmds.begin(), cmds.begin() + static_cast<ptrdiff_t>(next));
  return false;
}

bool PipelineRunner::OnOneRemoteShard(const ConnState& state) const {
  const unsigned sid = state.pending[0].sid;
  if (sid == state.conn->engine().index()) return false;
  for (const PendingCmd& c : state.pending) {
    if (c.sid != sid) return false;
  }
  return true;
}

io::Hop::Start PipelineRunner::HopGroup(ConnState& state, io::ReplyBuilder& out,
                                        int64_t now_ms) {
  BumpCounter(stats_.engine(state.conn->engine().index()).shard_hops);
  // The connection is suspended until the hop returns, so the shard may write into `out` and
  // state.pending (an erase: no allocation, no free).
  return shard_set_.HopTo(state.hop, state.pending[0].sid,
                          [this, &state, &out, now_ms](Shard& shard) {
                            std::vector<PendingCmd>& cmds = state.pending;
                            PrefetchKeys(shard, state.db, cmds);
                            const size_t ran =
                                RunCmds(shard, state.db, cmds, 0, cmds.size(),
                                        /*from_granted=*/false, /*check_locks=*/true, out,
                                        nullptr, now_ms, &state);
                            cmds.erase(cmds.begin(), cmds.begin() + static_cast<ptrdiff_t>(ran));
                          });
}

asio::awaitable<void> PipelineRunner::RunShardGroup(ConnState& state, io::ReplyBuilder& out,
                                                    int64_t now_ms, bool check_locks,
                                                    KeyLocks* release) {
  const std::span<const PendingCmd> cmds = state.pending;
  DCHECK(release == nullptr || !check_locks);
  const unsigned db = state.db;
  const unsigned my_engine = state.conn->engine().index();
  auto release_on = [release](Shard& shard) {
    if (release != nullptr && !release->request(shard.index()).empty()) release->ReleaseOn(shard);
  };
  unsigned first = cmds[0].sid;
  bool single = true;
  for (const PendingCmd& c : cmds) single &= c.sid == first;
  if (single) {
    size_t next;
    if (first == my_engine) {
      Shard& shard = *Shard::Current();
      PrefetchKeys(shard, db, state.pending);
      next = RunCmds(shard, db, cmds, 0, cmds.size(), false, check_locks, out, nullptr, now_ms,
                     &state);
      release_on(shard);
    } else {
      // The connection is suspended until the hop returns, so the shard may write into `out`.
      BumpCounter(stats_.engine(my_engine).shard_hops);
      size_t* ran = &next;
      co_await shard_set_.HopTo(
          state.hop, first,
          [this, ran, cmds, db, check_locks, &out, now_ms, &state, release_on](Shard& shard) {
            PrefetchKeys(shard, db, state.pending);
            *ran = RunCmds(shard, db, cmds, 0, cmds.size(), false, check_locks, out, nullptr,
                           now_ms, &state);
            release_on(shard);
          });
      state.hop.RethrowIfFailed();
    }
    while (next < cmds.size()) {
      next = co_await WaitAndRunCmds(first, db, cmds, next, cmds.size(), out, nullptr, now_ms,
                                     &state);
    }
    co_return;
  }
  // Several shards: every other shard writes its commands' replies into its own builder, in
  // parallel (one other: the connection's hop, which allocates nothing); then the replies go
  // into `out` in request order, this shard's commands running as their turn comes.
  absl::InlinedVector<unsigned, 8> others;
  absl::InlinedVector<uint64_t, 8> errors_before;
  absl::InlinedVector<size_t, 8> next(shard_set_.size(), cmds.size());
  const size_t here_cmds = PrepareShardReplies(state, out, my_engine, others, errors_before);
  BumpCounter(stats_.engine(my_engine).shard_hops, others.size());
  auto run_part = [&](Shard& shard) {
    io::ReplyBuilder& rb = state.shard_replies[shard.index()];
    PrefetchKeys(shard, db, state.pending);
    next[shard.index()] = RunCmds(shard, db, cmds, 0, cmds.size(), false, check_locks, rb,
                                  state.reply_ends.data(), now_ms, &state);
    release_on(shard);
  };
  if (others.size() == 1) {
    co_await shard_set_.HopTo(state.hop, others[0], [&run_part](Shard& shard) { run_part(shard); });
    state.hop.RethrowIfFailed();
  } else {
    co_await shard_set_.AwaitMany(others, run_part);
  }
  for (unsigned t : others) {  // shards blocked by a transaction's locks (rare)
    while (next[t] < cmds.size()) {
      next[t] = co_await WaitAndRunCmds(t, db, cmds, next[t], cmds.size(), state.shard_replies[t],
                                        state.reply_ends.data(), now_ms, &state);
    }
  }
  Shard* local = here_cmds > 0 ? Shard::Current() : nullptr;
  if (local != nullptr) PrefetchKeys(*local, db, state.pending);
  ReserveForMerge(state, out, others, here_cmds);
  MergeCursor cur(shard_set_.size());
  while (!MergeReplies(state, out, local, cur, check_locks, now_ms)) {
    // Command cur.k, of this shard, waits for a transaction's lock (rare).
    cur.k = co_await WaitAndRunCmds(my_engine, db, cmds, cur.k, cur.k + 1, out, nullptr, now_ms,
                                    &state);
  }
  if (local != nullptr) release_on(*local);
  for (unsigned t : others) {
    out.AddErrorCount(state.shard_replies[t].error_count() - errors_before[t]);
  }
}

size_t PipelineRunner::PrepareShardReplies(ConnState& state, const io::ReplyBuilder& out,
                                         unsigned here, absl::InlinedVector<unsigned, 8>& others,
                                         absl::InlinedVector<uint64_t, 8>& errors_before) {
  state.shard_replies.resize(shard_set_.size());
  state.reply_ends.resize(state.pending.size());
  errors_before.assign(shard_set_.size(), 0);
  absl::InlinedVector<bool, 8> seen(shard_set_.size(), false);
  size_t here_cmds = 0;
  for (const PendingCmd& c : state.pending) {
    if (c.sid == here) {
      ++here_cmds;
      continue;
    }
    if (seen[c.sid]) continue;
    seen[c.sid] = true;  // the first command of shard c.sid
    others.push_back(c.sid);
    state.shard_replies[c.sid].Clear();
    state.shard_replies[c.sid].set_version(out.version());
    errors_before[c.sid] = state.shard_replies[c.sid].error_count();
  }
  return here_cmds;
}

void PipelineRunner::ReserveForMerge(const ConnState& state, io::ReplyBuilder& out,
                                     std::span<const unsigned> others, size_t here_cmds) const {
  size_t copied = 0;
  for (unsigned t : others) copied += state.shard_replies[t].size();
  const size_t other_cmds = state.pending.size() - here_cmds;
  std::string& dst = out.buffer();
  dst.reserve(dst.size() + copied + (other_cmds > 0 ? copied * here_cmds / other_cmds : 0));
}

bool PipelineRunner::MergeReplies(ConnState& state, io::ReplyBuilder& out, Shard* here,
                                  MergeCursor& cur, bool check_locks, int64_t now_ms) {
  const std::span<const PendingCmd> cmds = state.pending;
  const unsigned here_sid = here != nullptr ? here->index() : shard_set_.size();
  std::string& dst = out.buffer();
  for (size_t k = cur.k; k < cmds.size();) {
    // The replies of consecutive commands of one other shard are contiguous in its builder.
    const unsigned sid = cmds[k].sid;
    size_t end = k + 1;
    while (end < cmds.size() && cmds[end].sid == sid) ++end;
    if (sid == here_sid) {
      const size_t ran = RunCmds(*here, state.db, cmds, k, end, /*from_granted=*/false,
                                 check_locks, out, nullptr, now_ms, &state);
      if (ran < end) {
        cur.k = ran;
        return false;
      }
    } else {
      const uint32_t to = state.reply_ends[end - 1];
      dst.append(state.shard_replies[sid].buffer(), cur.pos[sid], to - cur.pos[sid]);
      cur.pos[sid] = to;
    }
    k = end;
  }
  cur.k = cmds.size();
  return true;
}

asio::awaitable<bool> PipelineRunner::RunShardGroupLocalFirst(ConnState& state,
                                                              io::ReplyBuilder& out,
                                                              int64_t now_ms, KeyLocks& locks) {
  const std::span<const PendingCmd> cmds = state.pending;
  const unsigned db = state.db;
  Shard& local = *Shard::Current();
  const std::span<const unsigned> sids = locks.shards();
  DCHECK(sids.size() == 2 && (sids[0] == local.index() || sids[1] == local.index()));
  const unsigned remote = sids[0] == local.index() ? sids[1] : sids[0];
  if (!locks.TryAcquireOn(local)) co_return false;
  absl::InlinedVector<unsigned, 8> others;
  absl::InlinedVector<uint64_t, 8> errors_before;
  const size_t here_cmds = PrepareShardReplies(state, out, local.index(), others, errors_before);
  BumpCounter(stats_.engine(local.index()).shard_hops);
  co_await shard_set_.HopTo(state.hop, remote,
                            [this, &locks, &state, cmds, db, now_ms, remote](Shard& shard) {
                              if (!locks.TryAcquireOn(shard)) return;
                              RunCmds(shard, db, cmds, 0, cmds.size(), false,
                                      /*check_locks=*/false, state.shard_replies[remote],
                                      state.reply_ends.data(), now_ms, &state);
                              locks.ReleaseOn(shard);
                            });
  state.hop.RethrowIfFailed();
  // Held if the remote shard granted (its commands ran); else the local grant is given back.
  if (!locks.SettleTryAcquire()) co_return false;
  out.StartArray(cmds.size());
  ReserveForMerge(state, out, others, here_cmds);
  MergeCursor cur(shard_set_.size());
  const bool all_in = MergeReplies(state, out, &local, cur, /*check_locks=*/false, now_ms);
  DCHECK(all_in);
  locks.ReleaseOn(local);
  locks.Release();
  for (unsigned t : others) {
    out.AddErrorCount(state.shard_replies[t].error_count() - errors_before[t]);
  }
  co_return true;
}

}  // namespace dashkv
