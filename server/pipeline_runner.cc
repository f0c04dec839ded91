#include "server/pipeline_runner.h"

#include <algorithm>
#include <climits>
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
    // it on every path (a stale hint would match a later view at the same address). A
    // client's command with one key holds no other entry, so its insert may evict in place;
    // a script's calls and EXEC's commands run as one, and Redis evicts only before them.
    const bool in_place =
        cmd.spec->one_key && !from_script && client != nullptr && !client->in_exec;
    DbSlice::KeyHashScope hint(
        ctx.db, cmd.key_hash != 0 ? cmd.args[cmd.spec->first_key] : std::string_view(),
        cmd.key_hash, in_place ? &shard.evictor() : nullptr);
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
  PrepareShardGroup(state, out);
  co_await RunPreparedGroup(state, out, now_ms, check_locks, release);
}

// Several shards: every other shard writes its commands' replies into its own builder, in
// parallel (one other: the connection's hop, which allocates nothing); then the replies go
// into `out` in request order, this shard's commands running as their turn comes.
asio::awaitable<void> PipelineRunner::RunPreparedGroup(ConnState& state, io::ReplyBuilder& out,
                                                       int64_t now_ms, bool check_locks,
                                                       KeyLocks* release) {
  DCHECK(release == nullptr || !check_locks);
  const std::vector<unsigned>& others = state.group.others;
  BumpCounter(stats_.engine(state.conn->engine().index()).shard_hops, others.size());
  auto run_part = [this, &state, now_ms, check_locks, release](Shard& shard) {
    RunGroupPart(shard, state, now_ms, check_locks);
    if (release != nullptr && !release->request(shard.index()).empty()) release->ReleaseOn(shard);
  };
  if (others.size() == 1) {
    co_await shard_set_.HopTo(state.hop, others[0], run_part);
    state.hop.RethrowIfFailed();
  } else if (others.size() > 1) {
    co_await shard_set_.AwaitMany(others, run_part);
  }
  if (!FinishShardGroup(state, out, now_ms, check_locks)) {
    co_await CompleteShardGroup(state, out, now_ms, check_locks);
  }
  if (release != nullptr && state.group.here_cmds > 0) {
    Shard& local = *Shard::Current();
    if (!release->request(local.index()).empty()) release->ReleaseOn(local);
  }
}

bool PipelineRunner::PrepareShardGroup(ConnState& state, const io::ReplyBuilder& out) {
  ShardGroupScratch& g = state.group;
  const std::span<const PendingCmd> cmds = state.pending;
  const uint32_t n = static_cast<uint32_t>(cmds.size());
  const unsigned here = state.conn->engine().index();
  if (g.shards.size() != shard_set_.size()) {
    g.shards.assign(shard_set_.size(), {});
    g.gen = 0;
  }
  state.shard_replies.resize(shard_set_.size());
  if (++g.gen == 0) {  // the stamps wrapped: none may look current
    for (ShardGroupScratch::PerShard& p : g.shards) p.seen = 0;
    g.gen = 1;
  }
  const uint32_t gen = g.gen;
  if (state.reply_ends.size() < n) state.reply_ends.resize(n);
  if (g.next_of.size() < n) g.next_of.resize(n);
  uint32_t* next_of = g.next_of.data();
  ShardGroupScratch::PerShard* shards = g.shards.data();  // in registers across push_back
  g.others.clear();
  uint32_t here_cmds = 0;
  for (uint32_t k = 0; k < n; ++k) {
    const unsigned sid = cmds[k].sid;
    ShardGroupScratch::PerShard& p = shards[sid];
    here_cmds += sid == here;
    if (p.seen != gen) {  // the shard's first command
      p.seen = gen;
      p.head = k;
      p.next = n;
      p.pos = 0;
      if (sid != here) {
        g.others.push_back(sid);
        io::ReplyBuilder& rb = state.shard_replies[sid];
        rb.Clear();
        rb.set_version(out.version());
        p.errors_before = rb.error_count();
      }
    } else {
      next_of[p.tail] = k;
    }
    p.tail = k;
  }
  for (unsigned t : g.others) next_of[g.shards[t].tail] = n;
  if (here_cmds > 0) next_of[g.shards[here].tail] = n;
  g.here_cmds = here_cmds;
  g.k = 0;
  g.merging = false;
  return g.others.size() == 1;
}

io::Hop::Start PipelineRunner::HopGroupPart(ConnState& state, int64_t now_ms) {
  BumpCounter(stats_.engine(state.conn->engine().index()).shard_hops);
  // The connection is suspended until the hop returns: the shard may use state.group and
  // write into its builder.
  return shard_set_.HopTo(state.hop, state.group.others[0], [this, &state, now_ms](Shard& shard) {
    RunGroupPart(shard, state, now_ms, /*check_locks=*/true);
  });
}

void PipelineRunner::RunGroupPart(Shard& shard, ConnState& state, int64_t now_ms,
                                  bool check_locks) {
  ShardGroupScratch& g = state.group;
  ShardGroupScratch::PerShard& p = g.shards[shard.index()];
  PrefetchList(shard, state.db, state.pending, p.head, g.next_of.data());
  p.next = static_cast<uint32_t>(RunList(shard, state.db, state.pending, p.head, check_locks,
                                         state.shard_replies[shard.index()],
                                         state.reply_ends.data(), g.next_of.data(), now_ms,
                                         &state));
}

void PipelineRunner::PrefetchList(Shard& shard, unsigned db, std::span<PendingCmd> cmds,
                                  size_t from, const uint32_t* next_of) {
  PrimeTable& table = shard.db(db).table();
  constexpr size_t kMax = 64;
  uint64_t hashes[kMax];
  std::string_view keys[kMax];
  size_t n = 0;
  for (size_t i = from; i < cmds.size() && n < kMax; i = next_of[i]) {
    PendingCmd& c = cmds[i];
    keys[n] = c.args[c.spec->first_key];
    if (c.key_hash == 0) c.key_hash = HashBytes(keys[n]);
    hashes[n] = c.key_hash;
    table.Prefetch(hashes[n]);
    ++n;
  }
  if (n < 2) return;  // nothing to overlap
  for (size_t i = 0; i < n; ++i) {
    PrimeIterator it = table.Find(keys[i], hashes[i]);
    if (!it.is_done()) it->second.PrefetchData();
  }
}

size_t PipelineRunner::RunList(Shard& shard, unsigned db, std::span<const PendingCmd> cmds,
                               size_t from, bool check_locks, io::ReplyBuilder& rb,
                               uint32_t* reply_ends, const uint32_t* next_of, int64_t now_ms,
                               const ConnState* client) {
  for (size_t i = from; i < cmds.size(); i = next_of[i]) {
    const PendingCmd& c = cmds[i];
    if (check_locks && !shard.locks().empty() && LocksBlock(shard.locks(), *c.spec, c.args, db)) {
      return i;
    }
    RunShardCommandInline(c, shard, db, rb, now_ms, /*from_script=*/false, client, nullptr);
    reply_ends[i] = static_cast<uint32_t>(rb.size());
  }
  return cmds.size();
}

bool PipelineRunner::FinishShardGroup(ConnState& state, io::ReplyBuilder& out, int64_t now_ms,
                                      bool check_locks) {
  const ShardGroupScratch& g = state.group;
  for (unsigned t : g.others) {
    if (g.shards[t].next < state.pending.size()) return false;  // waits for a lock (rare)
  }
  BeginMerge(state, out);
  if (!MergeReplies(state, out, check_locks, now_ms)) return false;
  EndMerge(state, out);
  return true;
}

asio::awaitable<void> PipelineRunner::CompleteShardGroup(ConnState& state, io::ReplyBuilder& out,
                                                         int64_t now_ms, bool check_locks) {
  ShardGroupScratch& g = state.group;
  const std::span<const PendingCmd> cmds = state.pending;
  const unsigned db = state.db;
  for (unsigned t : g.others) {  // shards blocked by a transaction's locks
    while (g.shards[t].next < cmds.size()) {
      g.shards[t].next = static_cast<uint32_t>(
          co_await WaitAndRunCmds(t, db, cmds, g.shards[t].next, cmds.size(),
                                  state.shard_replies[t], state.reply_ends.data(), now_ms,
                                  &state));
    }
  }
  if (!g.merging) BeginMerge(state, out);
  while (!MergeReplies(state, out, check_locks, now_ms)) {
    // Command g.k, of this shard, waits for a transaction's lock.
    g.k = static_cast<uint32_t>(co_await WaitAndRunCmds(state.conn->engine().index(), db, cmds,
                                                        g.k, g.k + 1, out, nullptr, now_ms,
                                                        &state));
  }
  EndMerge(state, out);
}

void PipelineRunner::BeginMerge(ConnState& state, io::ReplyBuilder& out) {
  ShardGroupScratch& g = state.group;
  g.merging = true;
  if (g.here_cmds > 0) {
    PrefetchList(*Shard::Current(), state.db, state.pending,
                 g.shards[state.conn->engine().index()].head, g.next_of.data());
  }
  size_t copied = 0;
  for (unsigned t : g.others) copied += state.shard_replies[t].size();
  const size_t other_cmds = state.pending.size() - g.here_cmds;
  std::string& dst = out.buffer();
  dst.reserve(dst.size() + copied + (other_cmds > 0 ? copied * g.here_cmds / other_cmds : 0));
}

bool PipelineRunner::MergeReplies(ConnState& state, io::ReplyBuilder& out, bool check_locks,
                                  int64_t now_ms) {
  ShardGroupScratch& g = state.group;
  const std::span<const PendingCmd> cmds = state.pending;
  const unsigned here_sid = g.here_cmds > 0 ? state.conn->engine().index() : shard_set_.size();
  Shard* here = g.here_cmds > 0 ? Shard::Current() : nullptr;
  const uint32_t* reply_ends = state.reply_ends.data();
  std::string& dst = out.buffer();
  // The pending run of consecutive commands of one other shard: their replies are contiguous
  // in its builder, copied in one piece up to `run_end`.
  unsigned run_sid = UINT_MAX;
  uint32_t run_end = 0;
  auto flush_run = [&] {
    ShardGroupScratch::PerShard& p = g.shards[run_sid];
    dst.append(state.shard_replies[run_sid].buffer(), p.pos, run_end - p.pos);
    p.pos = run_end;
  };
  for (size_t k = g.k; k < cmds.size(); ++k) {
    const PendingCmd& c = cmds[k];
    if (c.sid != here_sid) {
      if (c.sid != run_sid) {
        if (run_sid != UINT_MAX) flush_run();
        run_sid = c.sid;
      }
      run_end = reply_ends[k];
      continue;
    }
    if (run_sid != UINT_MAX) {
      flush_run();
      run_sid = UINT_MAX;
    }
    if (check_locks && !here->locks().empty() &&
        LocksBlock(here->locks(), *c.spec, c.args, state.db)) {
      g.k = static_cast<uint32_t>(k);
      return false;
    }
    RunShardCommandInline(c, *here, state.db, out, now_ms, /*from_script=*/false, &state,
                          nullptr);
  }
  if (run_sid != UINT_MAX) flush_run();
  g.k = static_cast<uint32_t>(cmds.size());
  return true;
}

void PipelineRunner::EndMerge(ConnState& state, io::ReplyBuilder& out) {
  const ShardGroupScratch& g = state.group;
  for (unsigned t : g.others) {
    out.AddErrorCount(state.shard_replies[t].error_count() - g.shards[t].errors_before);
  }
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
  PrepareShardGroup(state, out);
  BumpCounter(stats_.engine(local.index()).shard_hops);
  co_await shard_set_.HopTo(state.hop, remote,
                            [this, &locks, &state, db, now_ms](Shard& shard) {
                              if (!locks.TryAcquireOn(shard)) return;
                              const ShardGroupScratch& g = state.group;
                              RunList(shard, db, state.pending, g.shards[shard.index()].head,
                                      /*check_locks=*/false, state.shard_replies[shard.index()],
                                      state.reply_ends.data(), g.next_of.data(), now_ms,
                                      &state);
                              locks.ReleaseOn(shard);
                            });
  state.hop.RethrowIfFailed();
  // Held if the remote shard granted (its commands ran); else the local grant is given back.
  if (!locks.SettleTryAcquire()) co_return false;
  out.StartArray(cmds.size());
  const bool all_in = FinishShardGroup(state, out, now_ms, /*check_locks=*/false);
  DCHECK(all_in);
  locks.ReleaseOn(local);
  locks.Release();
  co_return true;
}

}  // namespace dashkv
