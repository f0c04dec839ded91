// MULTI/EXEC/WATCH inside the Server: queueing, EXEC as one transaction, unwatching.
//
// EXEC with several shards: the keys of every queued command (in the database each one will
// run in, following SELECTs in the queue) and every watched key are locked as one KeyLocks
// request (server/tx/transaction.h); whole shards for a queued global command. Under the locks the
// watch flag and the watched keys' expiry are checked, then the commands run in order exactly
// as a pipeline does — consecutive single-shard commands grouped per shard, one parallel hop
// per group — but without lock checks (the transaction holds every lock they need), and
// coordinator commands run inside the same locks. Then the locks are released. With one shard,
// nothing suspends between the commands, so no locks are needed at all.
#include <absl/container/inlined_vector.h>

#include "core/numbers.h"
#include "core/str_util.h"
#include "io/connection.h"
#include "server/cmd_context.h"
#include "server/cycle_clock.h"
#include "server/server.h"
#include "server/tx/transaction.h"
#include "server/tx/watch.h"

namespace dashkv {

namespace asio = boost::asio;

void Server::QueueInMulti(ConnState& state, const CommandSpec& spec, io::CmdArgs args,
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

void Server::Unwatch(ConnState& state) {
  if (state.watched.empty()) {
    state.watch_state.reset();
    return;
  }
  std::vector<std::vector<std::string>> by_shard(shard_set_->size());
  for (const WatchedKey& w : state.watched) {
    by_shard[shard_set_->ShardOf(w.key)].push_back(LockKeyOf(w.db, w.key));
  }
  for (unsigned sid = 0; sid < by_shard.size(); ++sid) {
    if (by_shard[sid].empty()) continue;
    shard_set_->Post(sid, [keys = std::move(by_shard[sid]),
                           ws = state.watch_state](Shard& shard) {
      for (const std::string& lk : keys) shard.watches().Unwatch(lk, ws.get());
    });
  }
  state.watched.clear();
  state.watch_state.reset();
}

void Server::DiscardMulti(ConnState& state) {
  state.in_multi = false;
  state.multi_error = false;
  state.queued.clear();
  Unwatch(state);
}

asio::awaitable<bool> Server::WatchedKeysChanged(ConnState& state, int64_t now_ms) {
  if (state.watched.empty()) co_return false;
  if (state.watch_state->dirty.load(std::memory_order_acquire)) co_return true;
  // A key that was live at WATCH and is not now expired (or was deleted by the expiry cycle).
  absl::InlinedVector<unsigned, 8> shards;
  for (const WatchedKey& w : state.watched) {
    unsigned sid = shard_set_->ShardOf(w.key);
    if (w.existed && std::find(shards.begin(), shards.end(), sid) == shards.end()) {
      shards.push_back(sid);
    }
  }
  std::atomic<bool> gone{false};
  co_await shard_set_->AwaitMany(shards, [&](Shard& shard) {
    for (const WatchedKey& w : state.watched) {
      if (w.existed && shard_set_->ShardOf(w.key) == shard.index() &&
          !shard.KeyLive(w.db, w.key, now_ms)) {
        gone.store(true, std::memory_order_relaxed);
      }
    }
  });
  co_return gone.load(std::memory_order_relaxed) ||
      state.watch_state->dirty.load(std::memory_order_acquire);
}

std::optional<unsigned> Server::OneShardExec(
    const ConnState& state, const KeyLocks& locks, const std::vector<QueuedCmd>& cmds,
    const std::vector<std::vector<std::string_view>>& views) const {
  if (locks.shards().size() != 1) return std::nullopt;
  unsigned sid = locks.shards()[0];
  if (locks.request(sid).whole_shard) return std::nullopt;
  for (size_t i = 0; i < cmds.size(); ++i) {
    const CommandSpec& spec = *cmds[i].spec;
    if (spec.kind != HandlerKind::kShard) return std::nullopt;
    std::optional<unsigned> s = SingleShardOf(spec, io::CmdArgs(views[i].data(), views[i].size()));
    if (!s || *s != sid) return std::nullopt;
  }
  (void)state;
  return sid;
}

asio::awaitable<void> Server::ExecOnOneShard(ConnState& state, const LockRequest& req,
                                             unsigned sid,
                                             const std::vector<std::vector<std::string_view>>& views,
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
      PendingCmd c{cmds[i].spec, io::CmdArgs(views[i].data(), views[i].size()), sid};
      RunShardCommand(c, shard, db, out, now_ms);
    }
    shard.blocking().set_deferred(false);
    shard.blocking().ServeReady();
  };
  Shard* local = Shard::Current();
  if (local != nullptr && local->index() == sid && local->locks().empty()) {
    run(*local);
  } else {
    co_await shard_set_->AwaitAsync<void>(sid, [&](Shard& shard, io::Completion<void> done) {
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

asio::awaitable<void> Server::Exec(ConnCmdContext& ctx) {
  ConnState& state = ctx.state;
  io::ReplyBuilder& out = ctx.rb;
  std::vector<QueuedCmd> cmds = std::move(state.queued);
  bool aborted = state.multi_error;
  state.in_multi = false;
  state.multi_error = false;
  state.queued.clear();
  if (aborted) {
    Unwatch(state);
    co_return SendStatus(out, OpStatus::kExecAbort);
  }
  // Argument views of the queued copies.
  std::vector<std::vector<std::string_view>> views(cmds.size());
  for (size_t i = 0; i < cmds.size(); ++i) {
    views[i].assign(cmds[i].args.begin(), cmds[i].args.end());
  }
  auto args_of = [&](size_t i) { return io::CmdArgs(views[i].data(), views[i].size()); };

  const bool use_locks = shard_set_->size() > 1;
  KeyLocks locks(*shard_set_);
  if (use_locks) {
    unsigned db = state.db;
    for (size_t i = 0; i < cmds.size(); ++i) {
      const CommandSpec& spec = *cmds[i].spec;
      if (spec.switch_db != nullptr) {
        if (std::optional<unsigned> to = spec.switch_db(args_of(i), shard_set_->num_dbs())) {
          db = *to;
        }
        continue;
      }
      AddCommandLocks(locks, spec, args_of(i), db);
    }
    for (const WatchedKey& w : state.watched) locks.Add(w.db, w.key, LockMode::kShared);
  }
  int64_t now_ms = NowMs();
  if (use_locks) {
    std::optional<unsigned> one = OneShardExec(state, locks, cmds, views);
    if (one) {
      co_await ExecOnOneShard(state, locks.request(*one), *one, views, cmds, out);
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

  const unsigned my_engine = ctx.state.conn->engine().index();
  // One shard, no locks: nothing else runs until the last command, and clients the EXEC
  // unblocks are served after it (with locks, a held key defers them until the release).
  Shard* only = use_locks ? nullptr : Shard::Current();
  if (only != nullptr) only->blocking().set_deferred(true);
  out.StartArray(cmds.size());
  size_t i = 0;
  while (i < cmds.size()) {
    // A run of consecutive single-shard commands: grouped per shard, as in a pipeline.
    state.pending.clear();
    size_t j = i;
    for (; j < cmds.size(); ++j) {
      const CommandSpec* spec = cmds[j].spec;
      if (spec->kind != HandlerKind::kShard) break;
      std::optional<unsigned> sid = SingleShardOf(*spec, args_of(j));
      if (!sid) break;
      state.pending.push_back({spec, args_of(j), *sid});
    }
    if (j > i) {
      // The last group releases the locks on its shards in its own messages (transaction.h).
      KeyLocks* release = use_locks && j == cmds.size() ? &locks : nullptr;
      co_await RunShardGroup(state, my_engine, state.db, state.pending, out, now_ms,
                             /*check_locks=*/!use_locks, release);
      i = j;
      continue;
    }
    const CommandSpec& spec = *cmds[i].spec;
    io::CmdArgs args = args_of(i++);
    ConnCmdContext sub(*this, state, out, now_ms, spec);
    sub.locks = use_locks ? &locks : nullptr;
    sub.in_exec = true;
    const uint64_t errors = out.error_count();
    const uint64_t start = CycleClock::Now();
    if (spec.kind == HandlerKind::kConn) {
      RunConnHandler(spec, args, sub);
    } else {
      co_await RunCoordinator(spec, args, sub);
    }
    RecordCall(my_engine, spec, CycleClock::Now() - start, out.error_count() - errors, out);
  }
  if (only != nullptr) {
    only->blocking().set_deferred(false);
    only->blocking().ServeReady();
  }
  if (use_locks) locks.Release();
}

}  // namespace dashkv
