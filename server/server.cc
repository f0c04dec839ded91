#include "core/str_util.h"
#include "server/server.h"

#include <absl/container/inlined_vector.h>
#include "core/base/logging.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <algorithm>
#include <boost/asio/redirect_error.hpp>
#include <chrono>
#include <new>
#include <stdexcept>

#include "core/chunk_reserve.h"
#include "core/memory.h"
#include "io/connection.h"
#include "server/cmd_context.h"
#include "server/cycle_clock.h"
#include "server/pubsub/keyspace_notifier.h"
#include "server/tx/transaction.h"

namespace dashkv {

namespace asio = boost::asio;

namespace {

// Redis's "unknown command" text: the name and the first arguments, 128 bytes at most each.
std::string UnknownCommandText(io::CmdArgs args) {
  std::string list;
  for (size_t i = 1; i < args.size() && list.size() < 128; ++i) {
    StrAppend(&list, "'", args[i].substr(0, 128 - list.size()), "' ");
  }
  return StrCat("ERR unknown command '", args[0].substr(0, 128),
                      "', with args beginning with: ", list);
}

}  // namespace

Server::Server(Config& config, io::EnginePool& pool,
               void (*extra_commands)(CommandRegistry*))
    : config_(config), pool_(pool), engine_states_(pool.size()), start_time_ms_(NowMs()) {
  RegisterAllCommands(&registry_);
  if (extra_commands != nullptr) extra_commands(&registry_);
  for (EngineState& es : engine_states_) es.command_stats.resize(registry_.num_ids());
  CycleClock::TicksPerUsec();  // calibrate now, not during the first INFO
  shard_set_ = std::make_unique<ShardSet>(pool, config.databases);
  pubsub_ = std::make_unique<PubSub>(pool.size(), config.output_limit(ClientClass::kNormal),
                                     config.output_limit(ClientClass::kPubSub));
  // The server's change listeners on every shard, after the shard's own (stats, WATCH,
  // blocking): keyspace notifications.
  notifiers_.resize(shard_set_->size());
  shard_set_->RunOnAllBlocking([this](Shard& shard) {
    shard.changes().set_notify_classes(&config_.notify_classes);
    auto notifier = std::make_unique<KeyspaceNotifier>(pubsub_.get(), &pool_, shard.index(),
                                                       &config_.notify_classes);
    notifier->Attach(&shard.changes());
    notifiers_[shard.index()] = std::move(notifier);
  });
}

Server::~Server() = default;

std::unique_ptr<io::ConnectionState> Server::OnConnect(io::Connection& conn) {
  auto state = std::make_unique<ConnState>(&conn);
  conn.set_output_limit(config_.output_limit(ClientClass::kNormal));
  // As Redis: a connection opened while no password is set stays authenticated afterwards.
  state->SetAuthenticated(!config_.auth_required.load(std::memory_order_relaxed));
  EngineState& es = engine_states_[conn.engine().index()];
  es.clients.insert(state.get());
  BumpCounter(es.connections_received);
  connected_clients_.fetch_add(1, std::memory_order_relaxed);
  total_connections_.fetch_add(1, std::memory_order_relaxed);
  return state;
}

void Server::OnDisconnect(io::Connection& conn, io::ConnectionState& state) {
  pubsub_->UnsubscribeAll(static_cast<ConnState&>(state));
  DiscardMulti(static_cast<ConnState&>(state));
  engine_states_[conn.engine().index()].clients.erase(static_cast<ConnState*>(&state));
  connected_clients_.fetch_sub(1, std::memory_order_relaxed);
}

asio::awaitable<void> Server::AcceptPending() {
  if (!accept_pending_) co_return;
  co_await pool_.Await(0, [this] {
    accept_pending_();
    return true;
  });
}

const CommandSpec* Server::Resolve(io::CmdArgs args, io::ReplyBuilder& out) {
  const CommandSpec* spec = registry_.Lookup(args);
  if (spec == nullptr) {
    // A known container with an unknown subcommand, or no such command.
    out.SendError(registry_.Find(args[0]) != nullptr ? UnknownSubcommandText(args[0], args[1])
                                                      : UnknownCommandText(args));
    return nullptr;
  }
  if (!spec->ArityOk(args.size())) {
    out.SendError(WrongArgsText(spec->name));
    return nullptr;
  }
  return spec;
}

std::optional<unsigned> Server::SingleShardOf(const CommandSpec& spec, io::CmdArgs args) const {
  unsigned sid = shard_set_->ShardOf(args[spec.first_key]);
  if (spec.last_key == spec.first_key || shard_set_->size() == 1) return sid;
  size_t last = spec.last_key < 0 ? args.size() + spec.last_key : size_t(spec.last_key);
  for (size_t k = spec.first_key + spec.key_step; k <= last; k += spec.key_step) {
    if (shard_set_->ShardOf(args[k]) != sid) return std::nullopt;
  }
  return sid;
}

void Server::PrefetchKeys(Shard& shard, unsigned db, std::span<const PendingCmd> cmds) {
  if (cmds.size() < 2) return;  // nothing to overlap
  PrimeTable& table = shard.db(db).table();
  // Two stages: the buckets of every key, then (buckets now cached) the values they hold.
  constexpr size_t kMax = 64;
  uint64_t hashes[kMax];
  std::string_view keys[kMax];
  size_t n = 0;
  for (const PendingCmd& c : cmds) {
    if (c.sid != shard.index()) continue;
    keys[n] = c.args[c.spec->first_key];
    hashes[n] = HashBytes(keys[n]);
    table.Prefetch(hashes[n]);
    if (++n == kMax) break;
  }
  for (size_t i = 0; i < n; ++i) {
    PrimeIterator it = table.Find(keys[i], hashes[i]);
    if (!it.is_done()) it->second.PrefetchData();
  }
}

void Server::RunShardCommand(const PendingCmd& cmd, Shard& shard, unsigned db,
                             io::ReplyBuilder& rb, int64_t now_ms) {
  ShardCmdContext ctx(shard, db, rb, now_ms, *cmd.spec, config_);
  const uint64_t errors = rb.error_count();
  const size_t reply_start = rb.size();
  const uint64_t start = CycleClock::Now();
  const bool ran = RunShardHandler(cmd, ctx, reply_start);
  if (ran && (!ctx.changed || rb.error_count() != errors)) [[unlikely]] {
    // It left its keys as they were (a failed command changed nothing; a failed allocation
    // may have left a write half done, so its writes stay modified).
    shard.changes().MarkUnmodified();
  }
  shard.FinishChanges();
  // Serve the clients this command unblocked before anything else runs (server/tx/blocking.h).
  if (shard.blocking().has_ready()) shard.blocking().ServeReady();
  RecordCall(shard.index(), *cmd.spec, CycleClock::Now() - start, rb.error_count() - errors, rb);
  ++shard.stats().commands;
}

void Server::RunConnHandler(const CommandSpec& spec, io::CmdArgs args, ConnCmdContext& ctx) {
  const size_t reply_start = ctx.rb.size();
  try {
    spec.conn_handler(args, ctx);
  } catch (const std::exception& e) {
    if (!IsAllocationFailure(e)) throw;
    SendAllocationFailure(ctx.rb, reply_start, spec, e);
  }
}

bool Server::RunShardHandler(const PendingCmd& cmd, ShardCmdContext& ctx, size_t reply_start) {
  try {
    cmd.spec->shard_handler(cmd.args, ctx);
    return true;
  } catch (const std::exception& e) {
    if (!IsAllocationFailure(e)) throw;
    SendAllocationFailure(ctx.rb, reply_start, *cmd.spec, e);
  }
  return false;
}

void Server::RecordCall(unsigned engine, const CommandSpec& spec, uint64_t ticks,
                        uint64_t errors, const io::ReplyBuilder& rb) {
  EngineState& es = engine_states_[engine];
  CommandStat& st = es.command_stats[spec.id];
  ++st.calls;
  st.ticks += ticks;
  if (errors > 0) {
    ++st.failed;
    ++es.error_stats[std::string(rb.last_error_code())];
  }
}

void Server::ResetStats(unsigned i) {
  EngineState& es = engine_states_[i];
  std::fill(es.command_stats.begin(), es.command_stats.end(), CommandStat{});
  es.error_stats.clear();
  es.commands_processed.store(0, std::memory_order_relaxed);
  es.connections_received.store(0, std::memory_order_relaxed);
  es.rejected_calls.store(0, std::memory_order_relaxed);
  es.error_replies.store(0, std::memory_order_relaxed);
  es.shard_hops.store(0, std::memory_order_relaxed);
  Shard::Current()->stats() = ShardStats{};
}

void Server::RecordRejected(unsigned engine, const CommandSpec* spec, const io::ReplyBuilder& rb) {
  EngineState& es = engine_states_[engine];
  if (spec != nullptr) ++es.command_stats[spec->id].rejected;
  ++es.error_stats[std::string(rb.last_error_code())];
}

asio::awaitable<void> Server::Dispatch(io::Connection& conn, io::ConnectionState& state_base,
                                       std::span<const io::CmdArgs> batch,
                                       io::ReplyBuilder& out) {
  auto& state = static_cast<ConnState&>(state_base);
  const unsigned my_engine = conn.engine().index();
  int64_t now_ms = NowMs();
  const uint64_t errors_before = out.error_count();
  // Admission gates, evaluated once per batch: authentication and maxmemory.
  bool need_auth = config_.auth_required.load(std::memory_order_relaxed) && !state.authenticated;
  int64_t maxmemory = config_.maxmemory.load(std::memory_order_relaxed);
  bool over_memory = maxmemory > 0 && UsedMemory() > maxmemory;
  auto rejected = [&](const CommandSpec& spec) {
    return (need_auth && !spec.HasFlag(kCmdNoAuth)) ||
           (over_memory && spec.HasFlag(kCmdDenyOom)) || SubscribedModeForbids(state, spec);
  };
  size_t i = 0;
  while (i < batch.size()) {
    // Gather the run of consecutive shard commands starting at i.
    state.pending.clear();
    size_t j = i;
    for (; j < batch.size() && !state.in_multi; ++j) {
      const CommandSpec* spec = registry_.Find(batch[j][0]);
      if (spec == nullptr || spec->kind != HandlerKind::kShard ||
          !spec->ArityOk(batch[j].size()) || rejected(*spec)) {
        break;
      }
      std::optional<unsigned> sid = SingleShardOf(*spec, batch[j]);
      if (!sid) break;  // keys on several shards: the coordinator handler runs it below
      state.pending.push_back({spec, batch[j], *sid});
      state.last_cmd = spec;
    }
    if (j > i) {
      co_await RunShardGroup(state, my_engine, state.db, state.pending, out, now_ms);
      i = j;
      continue;
    }
    io::CmdArgs args = batch[i++];
    const CommandSpec* spec = Resolve(args, out);
    if (spec != nullptr && rejected(*spec)) {
      if (need_auth && !spec->HasFlag(kCmdNoAuth)) {
        out.SendError("NOAUTH Authentication required.");
      } else if (over_memory && spec->HasFlag(kCmdDenyOom)) {
        SendStatus(out, OpStatus::kOutOfMemory);
      } else {
        SendSubscribedModeError(out, *spec);
      }
      RecordRejected(my_engine, spec, out);
      BumpCounter(engine_states_[my_engine].rejected_calls);
      state.multi_error |= state.in_multi;  // a refused command inside MULTI aborts the EXEC
      continue;
    }
    if (spec == nullptr) {
      RecordRejected(my_engine, registry_.Lookup(args), out);
      BumpCounter(engine_states_[my_engine].rejected_calls);
      state.multi_error |= state.in_multi;
      continue;
    }
    if (state.in_multi && !spec->HasFlag(kCmdMultiControl)) {
      QueueInMulti(state, *spec, args, out);
      continue;
    }
    state.last_cmd = spec;
    if (spec->batch_handler != nullptr) {
      // A pipelined run of the same batchable command: one call of its batch handler.
      size_t end = i;
      while (end < batch.size() && registry_.Find(batch[end][0]) == spec &&
             spec->ArityOk(batch[end].size()) && !rejected(*spec)) {
        ++end;
      }
      std::span<const io::CmdArgs> run = batch.subspan(i - 1, end - i + 1);
      ConnCmdContext ctx(*this, state, out, now_ms, *spec);
      const uint64_t errors = out.error_count();
      const uint64_t start = CycleClock::Now();
      const size_t reply_start = out.size();
      bool ok = true;
      try {
        co_await spec->batch_handler(run, ctx);
      } catch (const std::exception& e) {
        if (!IsAllocationFailure(e)) throw;
        ok = false;
        SendAllocationFailure(out, reply_start, *spec, e);
      }
      // One reply per call: the first error replaced whatever the run had written.
      for (size_t k = 1; !ok && k < run.size(); ++k) SendStatus(out, OpStatus::kAllocationFailed);
      const uint64_t ticks = (CycleClock::Now() - start) / run.size();
      for (size_t k = 0; k < run.size(); ++k) {
        RecordCall(my_engine, *spec, ticks, k == 0 ? out.error_count() - errors : 0, out);
      }
      now_ms = NowMs();
      i = end;
      continue;
    }
    ConnCmdContext ctx(*this, state, out, now_ms, *spec);
    const uint64_t errors = out.error_count();
    const uint64_t start = CycleClock::Now();
    if (spec->kind == HandlerKind::kConn) {
      RunConnHandler(*spec, args, ctx);
    } else {
      co_await RunCoordinator(*spec, args, ctx);
      now_ms = NowMs();  // the command may have suspended for a while
    }
    RecordCall(my_engine, *spec, CycleClock::Now() - start, out.error_count() - errors, out);
    if (conn.close_requested()) break;
    need_auth = need_auth && !state.authenticated;
  }
  BumpCounter(engine_states_[my_engine].commands_processed, batch.size());
  BumpCounter(engine_states_[my_engine].error_replies, out.error_count() - errors_before);
}

namespace {

LockMode ModeOf(const CommandSpec& spec) {
  return spec.HasFlag(kCmdWrite) ? LockMode::kExclusive : LockMode::kShared;
}

// Returns whether a transaction's intent lock blocks `cmd` on `shard`.
// Returns the key a command writes in another database than the connection's, if any.
std::optional<std::pair<unsigned, std::string_view>> OtherDbKey(const CommandSpec& spec,
                                                               io::CmdArgs args) {
  if (spec.other_db_key == nullptr) return std::nullopt;
  return spec.other_db_key(args);
}

// Returns the intent locks a single-shard command needs on its shard.
LockRequest RequestOf(unsigned db, const PendingCmd& cmd) {
  LockRequest req;
  LockMode mode = ModeOf(*cmd.spec);
  for (uint32_t k : cmd.spec->KeysOf(cmd.args)) req.Add(LockHashOf(db, cmd.args[k]), mode);
  if (auto other = OtherDbKey(*cmd.spec, cmd.args)) {
    req.Add(LockHashOf(other->first, other->second), LockMode::kExclusive);
  }
  return req;
}

bool Blocked(Shard& shard, unsigned db, const PendingCmd& cmd) {
  LockMode mode = ModeOf(*cmd.spec);
  for (uint32_t k : cmd.spec->KeysOf(cmd.args)) {
    if (shard.locks().Conflicts(LockHashOf(db, cmd.args[k]), mode)) return true;
  }
  if (auto other = OtherDbKey(*cmd.spec, cmd.args)) [[unlikely]] {
    return shard.locks().Conflicts(LockHashOf(other->first, other->second),
                                   LockMode::kExclusive);
  }
  return false;
}

}  // namespace

void Server::AddCommandLocks(KeyLocks& locks, const CommandSpec& spec, io::CmdArgs args,
                             unsigned db) const {
  switch (spec.tx_scope) {
    case TxScope::kAllShared:
      return locks.AddAllShards(LockMode::kShared);
    case TxScope::kAllExclusive:
      return locks.AddAllShards(LockMode::kExclusive);
    case TxScope::kNone:
      return;
    case TxScope::kKeys:
      break;
  }
  LockMode mode = ModeOf(spec);
  for (uint32_t k : spec.KeysOf(args)) locks.Add(db, args[k], mode);
  if (auto other = OtherDbKey(spec, args)) {
    locks.Add(other->first, other->second, LockMode::kExclusive);
  }
}

asio::awaitable<void> Server::RunCoordinator(const CommandSpec& spec, io::CmdArgs args,
                                             ConnCmdContext& ctx) {
  const size_t reply_start = ctx.rb.size();
  const bool write = spec.HasFlag(kCmdWrite);
  bool needs_locks = shard_set_->size() > 1 && ctx.locks == nullptr &&
                     !spec.HasFlag(kCmdBlocking) && spec.tx_scope != TxScope::kNone &&
                     (spec.HasKeys() || spec.tx_scope != TxScope::kKeys);
  if (!needs_locks) {
    try {
      co_await spec.coord_handler(args, ctx);
    } catch (const std::exception& e) {
      if (!IsAllocationFailure(e)) throw;
      SendAllocationFailure(ctx.rb, reply_start, spec, e);
    }
    co_return;
  }
  KeyLocks locks(*shard_set_);
  AddCommandLocks(locks, spec, args, ctx.state.db);
  // A one-hop read takes its locks in its hop; a one-hop write releases them in its hop
  // (transaction.h).
  locks.set_one_hop(spec.one_hop);
  bool ok = true;
  try {
    if (!spec.one_hop || write) co_await locks.Acquire();
    ctx.locks = &locks;
    co_await spec.coord_handler(args, ctx);
  } catch (const std::exception& e) {
    if (!IsAllocationFailure(e)) throw;
    ok = false;
    SendAllocationFailure(ctx.rb, reply_start, spec, e);
  }
  ctx.locks = nullptr;
  if (!ok) {
    // Failed midway: its locks may be held, partly granted, or partly released by its hop: all
    // are given back. (Whatever it changed was told to the change listeners on its shards.)
    locks.Abandon();
    co_return;
  }
  if (locks.held()) locks.Release();
}

size_t Server::RunCmds(Shard& shard, unsigned db, std::span<const PendingCmd> cmds, size_t from,
                       bool from_granted, bool check_locks, io::ReplyBuilder& rb,
                       uint32_t* reply_ends, int64_t now_ms) {
  for (size_t i = from; i < cmds.size(); ++i) {
    const PendingCmd& c = cmds[i];
    if (c.sid != shard.index()) continue;
    if (check_locks && !shard.locks().empty() && !(from_granted && i == from) &&
        Blocked(shard, db, c)) {
      return i;
    }
    RunShardCommand(c, shard, db, rb, now_ms);
    if (reply_ends != nullptr) reply_ends[i] = static_cast<uint32_t>(rb.size());
  }
  return cmds.size();
}

asio::awaitable<size_t> Server::WaitAndRunCmds(unsigned sid, unsigned db,
                                               std::span<const PendingCmd> cmds, size_t blocked,
                                               io::ReplyBuilder& rb, uint32_t* reply_ends,
                                               int64_t now_ms) {
  co_return co_await shard_set_->AwaitAsync<size_t>(
      sid, [&, blocked](Shard& shard, io::Completion<size_t> done) {
        LockRequest req = RequestOf(db, cmds[blocked]);
        Shard* sp = &shard;
        // Transient: granted in FIFO order behind the transactions holding or awaiting the keys.
        shard.locks().Enqueue(
            std::move(req),
            [&, sp, blocked, done = std::move(done)]() mutable {
              done(RunCmds(*sp, db, cmds, blocked, /*from_granted=*/true, /*check_locks=*/true,
                           rb, reply_ends, now_ms));
            },
            /*transient=*/true);
      });
}

asio::awaitable<void> Server::RunShardGroup(ConnState& state, unsigned my_engine, unsigned db,
                                            std::span<const PendingCmd> cmds,
                                            io::ReplyBuilder& out, int64_t now_ms,
                                            bool check_locks, KeyLocks* release) {
  DCHECK(release == nullptr || !check_locks);
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
      PrefetchKeys(shard, db, cmds);
      next = RunCmds(shard, db, cmds, 0, false, check_locks, out, nullptr, now_ms);
      release_on(shard);
    } else {
      // The connection is suspended until the hop returns, so the shard may write into `out`.
      BumpCounter(engine_states_[my_engine].shard_hops);
      next = co_await shard_set_->Await(first, [&](Shard& shard) {
        PrefetchKeys(shard, db, cmds);
        size_t n = RunCmds(shard, db, cmds, 0, false, check_locks, out, nullptr, now_ms);
        release_on(shard);
        return n;
      });
    }
    while (next < cmds.size()) {
      next = co_await WaitAndRunCmds(first, db, cmds, next, out, nullptr, now_ms);
    }
    co_return;
  }
  // Several shards: each writes its commands' replies into its own builder, in parallel; the
  // replies are then put back in request order.
  state.shard_replies.resize(shard_set_->size());
  state.reply_ends.resize(cmds.size());
  absl::InlinedVector<unsigned, 8> targets;
  absl::InlinedVector<uint64_t, 8> errors_before(shard_set_->size(), 0);
  absl::InlinedVector<size_t, 8> next(shard_set_->size(), cmds.size());
  for (const PendingCmd& c : cmds) {
    if (std::find(targets.begin(), targets.end(), c.sid) == targets.end()) {
      targets.push_back(c.sid);
      state.shard_replies[c.sid].Clear();
      state.shard_replies[c.sid].set_version(out.version());
      errors_before[c.sid] = state.shard_replies[c.sid].error_count();
    }
  }
  BumpCounter(engine_states_[my_engine].shard_hops,
              targets.size() - (std::find(targets.begin(), targets.end(), my_engine) !=
                                targets.end()));
  co_await shard_set_->AwaitMany(targets, [&](Shard& shard) {
    io::ReplyBuilder& rb = state.shard_replies[shard.index()];
    PrefetchKeys(shard, db, cmds);
    next[shard.index()] = RunCmds(shard, db, cmds, 0, false, check_locks, rb,
                                  state.reply_ends.data(), now_ms);
    release_on(shard);
  });
  for (unsigned t : targets) {  // shards blocked by a transaction's locks (rare)
    while (next[t] < cmds.size()) {
      next[t] = co_await WaitAndRunCmds(t, db, cmds, next[t], state.shard_replies[t],
                                        state.reply_ends.data(), now_ms);
    }
  }
  absl::InlinedVector<uint32_t, 8> pos(shard_set_->size(), 0);
  for (size_t k = 0; k < cmds.size(); ++k) {
    unsigned sid = cmds[k].sid;
    const std::string& buf = state.shard_replies[sid].buffer();
    out.SendRaw(std::string_view(buf).substr(pos[sid], state.reply_ends[k] - pos[sid]));
    pos[sid] = state.reply_ends[k];
  }
  for (unsigned t : targets) {
    out.AddErrorCount(state.shard_replies[t].error_count() - errors_before[t]);
  }
}

void Server::StartBackgroundTasks() {
  shard_set_->RunOnAllBlocking([this](Shard& shard) {
    io::Engine& engine = pool_[shard.index()];
    asio::co_spawn(
        engine.context(),
        [this, &shard, &engine]() -> asio::awaitable<void> {
          asio::steady_timer timer(engine.context());
          int64_t last_expire_ms = 0;
          int64_t last_decay_ms = NowMs();
          int64_t last_client_cron_ms = 0;
          while (!stopping_.load(std::memory_order_relaxed)) {
            timer.expires_after(std::chrono::milliseconds(100));
            boost::system::error_code ec;
            co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
            if (ec || stopping_.load(std::memory_order_relaxed)) break;
            int64_t now = NowMs();
            if (now - last_expire_ms >= 1000 / config_.hz.load(std::memory_order_relaxed)) {
              shard.ActiveExpireCycle(now);
              last_expire_ms = now;
            }
            if (now - last_decay_ms >= ChunkReserve::kDecayPeriodMs) {
              shard.DecayChunkReserve();
              last_decay_ms = now;
            }
            if (now - last_client_cron_ms >= 1000) {
              ClientCron(shard.index(), now);
              last_client_cron_ms = now;
            }
            if (shard.index() == 0) SampleOps();
          }
        },
        asio::detached);
  });
}

void Server::SampleOps() {
  uint64_t total = 0;
  for (const EngineState& es : engine_states_) {
    total += es.commands_processed.load(std::memory_order_relaxed);
  }
  int64_t now = NowMs();
  if (last_ops_sample_ms_ != 0 && now > last_ops_sample_ms_) {
    ops_samples_[ops_sample_index_++ % ops_samples_.size()] =
        static_cast<int64_t>(total - last_ops_total_) * 1000 / (now - last_ops_sample_ms_);
    int64_t sum = 0;
    for (int64_t v : ops_samples_) sum += v;
    instantaneous_ops_.store(sum / static_cast<int64_t>(ops_samples_.size()),
                             std::memory_order_relaxed);
  }
  last_ops_total_ = total;
  last_ops_sample_ms_ = now;
}

void Server::StopBackgroundTasks() {
  stopping_ = true;
  // Blocked clients get their timeout reply now, while the engines still run.
  shard_set_->RunOnAllBlocking([](Shard& shard) { shard.blocking().Shutdown(); });
}

}  // namespace dashkv
