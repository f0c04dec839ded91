#include "server/tx/multi_exec.h"

#include <absl/container/inlined_vector.h>

#include "core/base/clock.h"
#include "io/connection.h"
#include "server/acl/acl_conn.h"
#include "server/cmd_context.h"
#include "server/pipeline_runner.h"
#include "server/storage/shard_set.h"
#include "server/tx/lock_plan.h"
#include "server/tx/transaction.h"
#include "server/tx/watch.h"

namespace dashkv {

namespace asio = boost::asio;

MultiExec::MultiExec(const ServerServices& services, PipelineRunner& runner)
    : services_(services), runner_(runner) {}

void MultiExec::Queue(ConnState& state, const CommandSpec& spec, CmdArgs args,
                      io::ReplyBuilder& out) {
  if (spec.HasFlag(kCmdNoMulti)) {
    state.multi_error = true;
    return SendStatus(out, OpStatus::kNotAllowedInMulti);
  }
  QueuedCmd q{&spec, {}};
  q.args.reserve(args.size());
  for (std::string_view a : args) q.args.emplace_back(a);
  state.queued.push_back(std::move(q));
  out.SendSimpleString("QUEUED");
}

void MultiExec::Unwatch(ConnState& state) {
  ShardSet& ss = services_.shard_set;
  if (state.watched.empty()) {
    state.watch_state.reset();
    return;
  }
  std::vector<std::vector<std::string>> by_shard(ss.size());
  for (const WatchedKey& w : state.watched) {
    by_shard[ss.ShardOf(w.key)].push_back(LockKeyOf(w.db, w.key));
  }
  for (unsigned sid = 0; sid < by_shard.size(); ++sid) {
    if (by_shard[sid].empty()) continue;
    ss.Post(sid, [keys = std::move(by_shard[sid]),
                           ws = state.watch_state](Shard& shard) {
      for (const std::string& lk : keys) shard.watches().Unwatch(lk, ws.get());
    });
  }
  state.watched.clear();
  state.watch_state.reset();
}

void MultiExec::Discard(ConnState& state) {
  state.in_multi = false;
  state.multi_error = false;
  state.queued.clear();
  Unwatch(state);
}

asio::awaitable<bool> MultiExec::WatchedKeysChanged(ConnState& state, int64_t now_ms) {
  ShardSet& ss = services_.shard_set;
  if (state.watched.empty()) co_return false;
  if (state.watch_state->dirty.load(std::memory_order_acquire)) co_return true;
  // A key that was live at WATCH and is not now expired (or was deleted by the expiry cycle).
  absl::InlinedVector<unsigned, 8> shards;
  for (const WatchedKey& w : state.watched) {
    unsigned sid = ss.ShardOf(w.key);
    if (w.existed && std::find(shards.begin(), shards.end(), sid) == shards.end()) {
      shards.push_back(sid);
    }
  }
  std::atomic<bool> gone{false};
  co_await ss.AwaitMany(shards, [&](Shard& shard) {
    for (const WatchedKey& w : state.watched) {
      if (w.existed && ss.ShardOf(w.key) == shard.index() &&
          !shard.KeyLive(w.db, w.key, now_ms)) {
        gone.store(true, std::memory_order_relaxed);
      }
    }
  });
  co_return gone.load(std::memory_order_relaxed) ||
      state.watch_state->dirty.load(std::memory_order_acquire);
}

std::optional<unsigned> MultiExec::OneShardExec(const KeyLocks& locks,
                                                const std::vector<QueuedCmd>& cmds,
                                                const ArgViews& views) const {
  if (locks.shards().size() != 1) return std::nullopt;
  unsigned sid = locks.shards()[0];
  if (locks.request(sid).whole_shard) return std::nullopt;
  for (size_t i = 0; i < cmds.size(); ++i) {
    const CommandSpec& spec = *cmds[i].spec;
    if (spec.kind != HandlerKind::kShard) return std::nullopt;
    std::optional<unsigned> s =
        runner_.SingleShardOf(spec, CmdArgs(views[i].data(), views[i].size()));
    if (!s || *s != sid) return std::nullopt;
  }
  return sid;
}

bool MultiExec::LocalFirstExec(const KeyLocks& locks, const std::vector<QueuedCmd>& cmds,
                               const ArgViews& views, ConnState& state) const {
  const std::span<const unsigned> sids = locks.shards();
  const Shard* local = Shard::Current();
  if (sids.size() != 2 || local == nullptr ||
      (sids[0] != local->index() && sids[1] != local->index())) {
    return false;
  }
  for (unsigned sid : sids) {
    if (locks.request(sid).whole_shard) return false;
  }
  state.pending.clear();
  for (size_t i = 0; i < cmds.size(); ++i) {
    const CommandSpec& spec = *cmds[i].spec;
    if (spec.kind != HandlerKind::kShard) return false;
    CmdArgs args(views[i].data(), views[i].size());
    std::optional<unsigned> sid = runner_.SingleShardOf(spec, args);
    if (!sid) return false;
    state.pending.push_back(PendingCmd{&spec, args, *sid, state.no_touch});
  }
  return true;
}

asio::awaitable<void> MultiExec::ExecOnOneShard(ConnState& state, const LockRequest& req,
                                                unsigned sid, const ArgViews& views,
                                                const std::vector<QueuedCmd>& cmds,
                                                io::ReplyBuilder& out) {
  const unsigned db = state.db;
  // Runs on the shard once no transaction holds or awaits the keys: the watch check and every
  // command, with nothing else in between.
  auto run = [&](Shard& shard) {
    int64_t now_ms = NowMs();
    bool changed = !state.watched.empty() &&
                   state.watch_state->dirty.load(std::memory_order_acquire);
    for (const WatchedKey& w : state.watched) {
      changed = changed || (w.existed && !shard.KeyLive(w.db, w.key, now_ms));
    }
    if (changed) return out.SendNullArray();
    out.StartArray(cmds.size());
    shard.blocking().set_deferred(true);
    for (size_t i = 0; i < cmds.size(); ++i) {
      PendingCmd c{cmds[i].spec, CmdArgs(views[i].data(), views[i].size()), sid,
                   state.no_touch};
      runner_.RunShardCommand(c, shard, db, out, now_ms, /*from_script=*/false, &state);
    }
    shard.blocking().set_deferred(false);
    shard.blocking().ServeReady();
  };
  Shard* local = Shard::Current();
  if (local != nullptr && local->index() == sid && local->locks().empty()) {
    run(*local);
  } else {
    ShardSet& ss = services_.shard_set;
    co_await ss.AwaitAsync<void>(sid, [&](Shard& shard, io::Completion<void> done) {
      Shard* sp = &shard;
      // Transient: runs at once if nothing is in the way, else in FIFO order after it.
      shard.locks().Enqueue(req, [&, sp, done = std::move(done)]() mutable {
        run(*sp);
        done();
      }, /*transient=*/true);
    });
  }
  Unwatch(state);
}

asio::awaitable<void> MultiExec::Exec(ConnCmdContext& ctx) {
  ConnState& state = ctx.state;
  io::ReplyBuilder& out = ctx.rb;
  ShardSet& ss = services_.shard_set;
  std::vector<QueuedCmd> cmds = std::move(state.queued);
  bool aborted = state.multi_error;
  state.in_multi = false;
  state.multi_error = false;
  state.queued.clear();
  if (aborted) {
    Unwatch(state);
    co_return SendStatus(out, OpStatus::kExecAbort);
  }
  // The shards read it while they run the commands (no eviction in place: DbSlice).
  struct InExec {
    ConnState& state;
    explicit InExec(ConnState& s) : state(s) { state.in_exec = true; }
    ~InExec() { state.in_exec = false; }
    InExec(const InExec&) = delete;
    InExec& operator=(const InExec&) = delete;
  } in_exec(state);
  // Argument views of the queued copies.
  ArgViews views(cmds.size());
  for (size_t i = 0; i < cmds.size(); ++i) {
    views[i].assign(cmds[i].args.begin(), cmds[i].args.end());
  }
  auto args_of = [&](size_t i) { return CmdArgs(views[i].data(), views[i].size()); };
  // The user's rules may have changed since the commands were queued: each is checked again,
  // and a refused one answers -NOPERM in its place while the others run (as Redis 7.0).
  std::vector<std::string> denied;  // per command: "" or its error
  bool any_denied = false;
  if (state.acl_restricted) [[unlikely]] {
    denied.resize(cmds.size());
    for (size_t i = 0; i < cmds.size(); ++i) {
      denied[i] = AclExecDenial(services_, state, *cmds[i].spec, args_of(i));
      any_denied |= !denied[i].empty();
    }
  }
  auto refused = [&](size_t i) { return any_denied && !denied[i].empty(); };

  const bool use_locks = ss.size() > 1;
  KeyLocks locks(ss);
  if (use_locks) {
    unsigned db = state.db;
    for (size_t i = 0; i < cmds.size(); ++i) {
      const CommandSpec& spec = *cmds[i].spec;
      if (refused(i)) continue;
      if (spec.switch_db != nullptr) {
        if (std::optional<unsigned> to = spec.switch_db(args_of(i), ss.num_dbs())) db = *to;
        continue;
      }
      AddCommandLocks(locks, spec, args_of(i), db, &services_);
    }
    for (const WatchedKey& w : state.watched) locks.Add(w.db, w.key, LockMode::kShared);
  }
  int64_t now_ms = NowMs();
  if (use_locks) {
    std::optional<unsigned> one = OneShardExec(locks, cmds, views);
    if (one && !any_denied) {
      co_await ExecOnOneShard(state, locks.request(*one), *one, views, cmds, out);
      co_return;
    }
    // Two shards, one of them this thread's, every command single-shard, no WATCH: one round
    // trip (PipelineRunner::RunShardGroupLocalFirst) unless a shard refuses at once.
    if (!any_denied && state.watched.empty() && LocalFirstExec(locks, cmds, views, state) &&
        co_await runner_.RunShardGroupLocalFirst(state, out, now_ms, locks)) {
      Unwatch(state);
      co_return;
    }
    co_await locks.Acquire();
    now_ms = NowMs();
  }
  if (co_await WatchedKeysChanged(state, now_ms)) {
    if (use_locks) locks.Release();
    Unwatch(state);
    co_return out.SendNullArray();
  }
  Unwatch(state);  // as Redis: the keys are unwatched before the commands run

  // One shard, no locks: nothing else runs until the last command, and clients the EXEC
  // unblocks are served after it (with locks, a held key defers them until the release).
  Shard* only = use_locks ? nullptr : Shard::Current();
  if (only != nullptr) only->blocking().set_deferred(true);
  out.StartArray(cmds.size());
  // Consecutive single-shard commands are grouped per shard, as in a pipeline, but without
  // lock checks: the transaction holds every lock they need. The last group releases the
  // locks on its shards in its own messages (transaction.h).
  auto as_shard_cmd = [&](size_t j) -> std::optional<PendingCmd> {
    const CommandSpec* spec = cmds[j].spec;
    if (spec->kind != HandlerKind::kShard || refused(j)) return std::nullopt;
    std::optional<PipelineRunner::ShardRoute> route = runner_.RouteOf(*spec, args_of(j));
    if (!route) return std::nullopt;
    return PendingCmd{spec, args_of(j), route->sid, state.no_touch, route->key_hash};
  };
  for (size_t i = 0; i < cmds.size();) {
    if (size_t j = PipelineRunner::GatherShardCmds(state, i, cmds.size(), as_shard_cmd); j > i) {
      KeyLocks* release = use_locks && j == cmds.size() ? &locks : nullptr;
      co_await runner_.RunShardGroup(state, out, now_ms, /*check_locks=*/!use_locks, release);
      i = j;
      continue;
    }
    const CommandSpec& spec = *cmds[i].spec;
    if (refused(i)) {
      out.SendError(denied[i]);
      ++i;
      continue;
    }
    ConnCmdContext sub(services_, state, out, now_ms, spec);
    sub.locks = use_locks ? &locks : nullptr;
    sub.in_exec = true;
    if (spec.kind == HandlerKind::kConn) {
      runner_.RunConnCommand(spec, args_of(i), sub);
    } else {
      co_await runner_.RunCoordCommand(spec, args_of(i), sub);
    }
    ++i;
  }
  if (only != nullptr) {
    only->blocking().set_deferred(false);
    only->blocking().ServeReady();
  }
  if (use_locks) locks.Release();
}

}  // namespace dashkv
