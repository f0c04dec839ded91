#include "server/server.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <chrono>
#include <exception>

#include "core/base/clock.h"
#include "core/chunk_reserve.h"
#include "core/memory.h"
#include "core/str_util.h"
#include "io/connection.h"
#include "server/acl/acl_conn.h"
#include "server/cmd_context.h"
#include "server/cycle_clock.h"
#include "server/persistence/snapshot_manager.h"
#include "server/scripting/function_store.h"
#include "server/scripting/script_store.h"
#include "server/pubsub/keyspace_notifier.h"
#include "server/tracking/tracking_hub.h"

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

CommandRegistry BuildRegistry(void (*extra_commands)(CommandRegistry*)) {
  CommandRegistry registry;
  RegisterAllCommands(&registry);
  if (extra_commands != nullptr) extra_commands(&registry);
  return registry;
}

}  // namespace

Server::Server(Config& config, io::EnginePool& pool,
               void (*extra_commands)(CommandRegistry*))
    : config_(config),
      pool_(pool),
      registry_(BuildRegistry(extra_commands)),
      stats_(pool.size(), registry_.num_ids(), config),
      clients_(pool, config),
      tracking_(std::make_unique<TrackingHub>(pool, &config.tracking_table_max_keys)),
      shard_set_(std::make_unique<ShardSet>(pool, config.databases)),
      pubsub_(std::make_unique<PubSub>(pool.size(), config.output_limit(ClientClass::kNormal),
                                       config.output_limit(ClientClass::kPubSub))),
      snapshots_(std::make_unique<SnapshotManager>(config, *shard_set_, pool)),
      scripts_(std::make_unique<ScriptStore>()),
      functions_(std::make_unique<FunctionStore>()),
      acl_(std::make_unique<AclRegistry>(registry_, &config.auth_required,
                                         &config.acl_pubsub_allchannels)),
      pause_(pool),
      monitor_(pool),
      services_{config_,  pool_,       *shard_set_, *pubsub_,   registry_,  stats_,
                clients_, multi_,      *snapshots_, *scripts_,  *functions_, scripting_,
                *acl_,    pause_,      monitor_,    *tracking_},
      runner_(services_),
      multi_(services_, runner_),
      scripting_(services_, runner_),
      metrics_(services_, *this) {
  CycleClock::TicksPerUsec();  // calibrate now, not during the first INFO
  // requirepass is the default user's password, now and after CONFIG SET (as Redis).
  if (std::string pass = config_.requirepass(); !pass.empty()) acl_->SetDefaultPassword(pass);
  config_.on_requirepass = [acl = acl_.get()](std::string_view pass) {
    acl->SetDefaultPassword(pass);
  };
  // The server's change listeners on every shard, after the shard's own (stats, WATCH,
  // blocking): keyspace notifications.
  notifiers_.resize(shard_set_->size());
  memory_ = std::make_unique<MemoryBudget>(shard_set_->size(), &config_.maxmemory,
                                           &config_.eviction);
  shard_set_->RunOnAllBlocking([this](Shard& shard) {
    shard.set_memory_budget(memory_.get());
    shard.changes().set_notify_classes(&config_.notify_classes);
    shard.changes().set_pause_end(pause_.end_ms());
    auto notifier = std::make_unique<KeyspaceNotifier>(pubsub_.get(), &pool_, shard.index(),
                                                       &config_.notify_classes);
    notifier->Attach(&shard.changes());
    notifiers_[shard.index()] = std::move(notifier);
  });
  tracking_->AttachShards(*shard_set_);
  snapshots_->Attach();
  // Function libraries travel in snapshots (FUNCTION2 records).
  snapshots_->SetFunctionHooks(
      [fs = functions_.get()] {
        std::vector<std::string> codes;
        for (const auto& lib : fs->Libraries()) codes.push_back(lib->code);
        return codes;
      },
      [fs = functions_.get()](std::vector<std::string> codes, bool merge) -> absl::Status {
        std::vector<std::shared_ptr<FunctionLibrary>> libs;
        for (std::string& code : codes) {
          auto lib = std::make_shared<FunctionLibrary>();
          lib->code = std::move(code);
          if (std::string err = ScriptRunner::LoadLibrary(lib.get()); !err.empty()) {
            return absl::DataLossError("Failed loading library: " + err);
          }
          libs.push_back(std::move(lib));
        }
        std::string err = fs->Restore(std::move(libs), merge
                                                           ? FunctionStore::RestorePolicy::kReplace
                                                           : FunctionStore::RestorePolicy::kFlush);
        if (!err.empty()) return absl::DataLossError("Failed loading library: " + err);
        return absl::OkStatus();
      });
}

Server::~Server() = default;

absl::Status Server::RenameCommands(const std::vector<RenamedCommand>& renames) {
  for (const RenamedCommand& r : renames) {
    if (std::string err = registry_.Rename(r.from, r.to); !err.empty()) {
      return absl::InvalidArgumentError(ConfigErrorText(r.line, err));
    }
  }
  return absl::OkStatus();
}

absl::Status Server::LoadAclAtStart() {
  if (!config_.aclfile.empty() && !config_.acl_user_lines.empty()) {
    return absl::InvalidArgumentError(
        "Configuring Redis with users defined in redis.conf and at the same setting an ACL file "
        "path is invalid. This setup is very likely to lead to configuration errors and security "
        "holes, please define either an ACL file or declare users directly in your redis.conf, "
        "but not both.");
  }
  for (const std::vector<std::string>& line : config_.acl_user_lines) {
    std::vector<std::string_view> words = {"user"};
    words.insert(words.end(), line.begin(), line.end());
    if (absl::Status st = acl_->LoadUserLine(words); !st.ok()) {
      return absl::InvalidArgumentError(
          StrCat("Error in user declaration '", line.empty() ? "" : line[0], "': ",
                 std::string(st.message())));
    }
  }
  if (config_.aclfile.empty()) return absl::OkStatus();
  return acl_->LoadFile(config_.aclfile);
}

void Server::RefreshUser(ConnState& state) {
  state.acl_generation = acl_->generation();
  state.user = acl_->Find(state.user_name);
  state.acl_restricted = state.user == nullptr || !state.user->Unrestricted();
}

bool Server::AclRefuses(ConnState& state, const CommandSpec& spec, CmdArgs args,
                        io::ReplyBuilder& out) {
  AclVerdict verdict = state.user != nullptr
                           ? AclCheck(acl_->rules(), *state.user, spec, args)
                           : AclVerdict{AclDenied::kCommand, 0};
  if (verdict.reason == AclDenied::kOk) return false;
  state.last_cmd = &spec;  // the log's client info names the refused command, as Redis
  LogAclDenial(services_, state, verdict, spec, args, AclContext::kToplevel);
  out.SendError(AclNoPermText(verdict, spec));
  return true;
}

std::unique_ptr<io::ConnectionState> Server::OnConnect(io::Connection& conn) {
  auto state = std::make_unique<ConnState>(&conn);
  conn.set_output_limit(config_.output_limit(ClientClass::kNormal));
  RefreshUser(*state);
  // As Redis: a connection opened while no password is set stays authenticated afterwards.
  state->SetAuthenticated(!config_.auth_required.load(std::memory_order_relaxed));
  state->local_client = IsLocalPeer(conn.remote_address());
  const unsigned engine = conn.engine().index();
  clients_.Add(engine, state.get());
  tracking_->AddClient(engine, state.get());
  BumpCounter(stats_.engine(engine).connections_received);
  return state;
}

void Server::OnDisconnect(io::Connection& conn, io::ConnectionState& state) {
  monitor_.Remove(conn.engine().index(), static_cast<ConnState*>(&state));
  pubsub_->UnsubscribeAll(static_cast<ConnState&>(state));
  multi_.Discard(static_cast<ConnState&>(state));
  tracking_->RemoveClient(conn.engine().index(), static_cast<ConnState*>(&state));
  clients_.Remove(conn.engine().index(), static_cast<ConnState*>(&state));
}

asio::awaitable<void> Server::ServeHttp(io::Connection& conn, io::ConnectionState& state,
                                        const io::HttpRequest& request,
                                        io::HttpResponse& response) {
  co_await metrics_.Serve(conn, static_cast<ConnState&>(state), request, response);
}

const CommandSpec* Server::Resolve(io::CmdArgs args, CommandNameMemo& memo,
                                   io::ReplyBuilder& out) {
  const CommandSpec* spec = registry_.Lookup(args, memo);
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

asio::awaitable<void> Server::Dispatch(io::Connection& conn, io::ConnectionState& state_base,
                                       std::span<const io::CmdArgs> batch,
                                       io::ReplyBuilder& out) {
  auto& state = static_cast<ConnState&>(state_base);
  const unsigned my_engine = conn.engine().index();
  int64_t now_ms = NowMs();
  const uint64_t errors_before = out.error_count();
  // Admission gates, evaluated once per batch: authentication and maxmemory. Over maxmemory,
  // noeviction refuses the batch's kCmdDenyOom commands here; an evicting policy admits them
  // and evicts first on the shard that runs each (PipelineRunner::RunShardCommand), or on this
  // thread's shard for a command that runs here (below).
  bool need_auth = config_.auth_required.load(std::memory_order_relaxed) && !state.authenticated;
  bool over_memory = false;
  bool evict_first = false;
  if (config_.maxmemory.load(std::memory_order_relaxed) > 0) [[unlikely]] {
    const Shard* here = Shard::Current();  // its own changes count at once (memory_budget.h)
    const bool over =
        memory_->Refresh(here != nullptr ? here->index() : MemoryBudget::kNoShard).total() > 0;
    const bool evicting = memory_->policy() != MaxmemoryPolicy::kNoEviction;
    over_memory = over && !evicting;
    evict_first = over && evicting;
  }
  // Loading, or a failed save with stop-writes-on-bgsave-error: one load per batch.
  const uint32_t gate = snapshots_->gate();
  auto gate_refuses = [&](const CommandSpec& spec) -> OpStatus {
    if ((gate & SnapshotManager::kGateLoading) && !spec.HasFlag(kCmdLoading)) {
      return OpStatus::kLoading;
    }
    if ((gate & SnapshotManager::kGateSaveFailed) &&
        (spec.HasFlag(kCmdWrite) || spec.name == "ping") && snapshots_->WritesRefused()) {
      return OpStatus::kMisconf;
    }
    return OpStatus::kOk;
  };
  // The ACL: one generation compare per batch, one branch per command for an unrestricted
  // user (server/acl/acl_registry.h).
  if (state.acl_generation != acl_->generation()) [[unlikely]] RefreshUser(state);
  auto acl_denies = [&](const CommandSpec& spec, CmdArgs args) {
    return state.user == nullptr || !AclAllows(acl_->rules(), *state.user, spec, args);
  };
  auto rejected = [&](const CommandSpec& spec, CmdArgs args) {
    return (need_auth && !spec.HasFlag(kCmdNoAuth)) ||
           (state.acl_restricted && acl_denies(spec, args)) ||
           (over_memory && spec.HasFlag(kCmdDenyOom)) || SubscribedModeForbids(state, spec) ||
           (gate != 0 && gate_refuses(spec) != OpStatus::kOk);
  };
  const RunningScripts& running = services_.scripting.running();
  size_t busy_refused = SIZE_MAX;  // the command of the batch last refused by a busy script
  bool busy_function = false;      // and whether that script is a function
  // Under CLIENT REPLY OFF/SKIP or a CLIENT PAUSE commands run one by one: the one at this
  // index may still form a shard group of its own (SIZE_MAX: no such limit).
  size_t one_at = SIZE_MAX;
  // A single-shard command that passes the gates outside MULTI joins a shard group.
  auto as_shard_cmd = [&](size_t j) -> std::optional<PendingCmd> {
    if (state.in_multi || (one_at != SIZE_MAX && j != one_at)) return std::nullopt;
    const CommandSpec* spec = registry_.Find(batch[j][0], state.cmd_memo);
    if (spec == nullptr || !spec->ArityOk(batch[j].size()) || rejected(*spec, batch[j])) {
      return std::nullopt;
    }
    // A restricted user's scripts run where the caller's user is known (their coordinator).
    if (state.acl_restricted && spec->kind != HandlerKind::kShard) [[unlikely]] {
      return std::nullopt;
    }
    std::optional<unsigned> sid;
    uint64_t key_hash = 0;  // a shard command's first key, hashed once (PendingCmd::key_hash)
    if (spec->kind == HandlerKind::kShard) [[likely]] {
      if (std::optional<PipelineRunner::ShardRoute> route = runner_.RouteOf(*spec, batch[j])) {
        sid = route->sid;
        key_hash = route->key_hash;
      }
    } else if (spec->shard_route != nullptr) {
      sid = spec->shard_route(batch[j], services_);
    }
    if (!sid) return std::nullopt;  // keys on several shards: its coordinator handler runs it
    // A script past busy-reply-threshold: a command it refuses takes the path below (-BUSY).
    if (running.any_busy() &&
        running.Refuses(*spec, batch[j], my_engine, *shard_set_, &busy_function)) [[unlikely]] {
      busy_refused = j;  // refused below even if the script ends meanwhile
      return std::nullopt;
    }
    state.last_cmd = spec;
    return PendingCmd{spec, batch[j], *sid, state.no_touch, key_hash};
  };
  // A call whose keys span shards joins a multi-shard group (PipelineRunner::RunMultiGroup)
  // when its command has parts (CommandSpec::multi_ops) and it passes the gates; not for a
  // client that tracks keys (its reads are remembered by the coordinator path), nor while
  // over maxmemory with eviction (the coordinator path evicts first) or a script is busy.
  auto add_multi_cmd = [&](size_t j) {
    const CommandSpec* spec = registry_.Find(batch[j][0], state.cmd_memo);
    if (spec == nullptr || spec->multi_ops == nullptr || !spec->ArityOk(batch[j].size()) ||
        (spec->multi_ops->accepts != nullptr && !spec->multi_ops->accepts(batch[j])) ||
        rejected(*spec, batch[j]) || !runner_.AddMultiCmd(state, *spec, batch[j])) {
      return false;
    }
    state.last_cmd = spec;
    return true;
  };
  // CLIENT REPLY OFF/SKIP: where the reply of the command being run starts (SIZE_MAX: kept).
  size_t dropped_from = SIZE_MAX;
  // The command's reply is a push that CLIENT REPLY OFF|SKIP lets through: the confirmations
  // of (P|S)SUBSCRIBE and (P|S)UNSUBSCRIBE, as Redis 7.0.15 sends them.
  bool reply_is_push = false;
  auto drop_reply = [&] {
    if (dropped_from == SIZE_MAX) return;
    if (state.reply_mode != ConnState::ReplyMode::kOn && !reply_is_push) {
      out.buffer().resize(dropped_from);
    }
    reply_is_push = false;
    if (state.reply_mode == ConnState::ReplyMode::kSkipping) {
      state.reply_mode = ConnState::ReplyMode::kOn;
    }
    dropped_from = SIZE_MAX;
  };
  // MONITOR: the feed lines of the queued commands an EXEC runs, sent after it if it ran them
  // (its reply, from `exec_reply_at`, is an array).
  std::string exec_feed;
  size_t exec_reply_at = SIZE_MAX;
  size_t exec_index = 0;
  auto feed_exec = [&] {
    if (exec_reply_at == SIZE_MAX) return;
    const std::string& buf = out.buffer();
    const bool ran = exec_reply_at < buf.size() && buf[exec_reply_at] == '*' &&
                     buf.compare(exec_reply_at, 3, "*-1") != 0;
    if (!ran) exec_feed.clear();
    MonitorFeed::AppendLine(&exec_feed, NowUs(), state.db, conn.remote_address(),
                            batch[exec_index]);
    monitor_.Send(std::move(exec_feed));
    exec_feed.clear();
    exec_reply_at = SIZE_MAX;
  };
  TrackingHub::BeginBatch(state);
  size_t i = 0;
  while (i < batch.size()) {
    feed_exec();
    drop_reply();
    one_at = SIZE_MAX;
    if (state.reply_mode != ConnState::ReplyMode::kOn || pause_.maybe_active() ||
        monitor_.active() || state.tracking_opt) [[unlikely]] {
      // CLIENT CACHING's flag covers one command: the one before this may have used it up.
      if (state.tracking_opt && i > 0) TrackingHub::AfterCommand(state, batch[i - 1]);
      // A paused command waits here; one that is refused replies at once, as in Redis.
      const CommandSpec* spec = registry_.Lookup(batch[i], state.cmd_memo);
      const bool runs =
          spec != nullptr && spec->ArityOk(batch[i].size()) && !rejected(*spec, batch[i]);
      // A monitor may not touch the keyspace (Redis treats it as a replica).
      const bool monitor_refused =
          runs && state.monitor && (spec->flags & (kCmdReadOnly | kCmdWrite | kCmdMayReplicate));
      if (runs && !monitor_refused && pause_.maybe_active()) {
        co_await WaitWhilePaused(state, *spec, batch[i], out);
        if (conn.fd() < 0) break;  // killed while held
        now_ms = NowMs();
      }
      if (state.reply_mode != ConnState::ReplyMode::kOn) {
        dropped_from = out.size();
        reply_is_push = runs && !state.in_multi && spec->HasFlag(kCmdPubSub) &&
                        spec->HasFlag(kCmdSubscribedOk);
        if (state.reply_mode == ConnState::ReplyMode::kSkipNext) {
          state.reply_mode = ConnState::ReplyMode::kSkipping;
        }
      }
      if (monitor_refused) {
        out.SendError("ERR Replica can't interact with the keyspace");
        stats_.RecordRejected(my_engine, spec, out);
        state.multi_error |= state.in_multi;
        ++i;
        continue;
      }
      if (runs && monitor_.active() && MonitorFeed::Feeds(*spec) &&
          (!state.in_multi || spec->HasFlag(kCmdMultiControl))) {
        FeedMonitors(state, *spec, batch[i], &exec_feed, &exec_reply_at, out.size());
        exec_index = i;
      }
      one_at = i;
    }
    if (size_t j = PipelineRunner::GatherShardCmds(state, i, batch.size(), as_shard_cmd); j > i) {
      if (!runner_.RunLocalGroup(state, out, now_ms)) {
        if (runner_.OnOneRemoteShard(state)) {  // the usual hop: no frame, no allocation
          co_await runner_.HopGroup(state, out, now_ms);
          state.hop.RethrowIfFailed();
        }
        if (state.pending.empty()) {
          // All ran.
        } else if (runner_.PrepareShardGroup(state, out)) {
          // One other shard, the usual group over several shards at two threads: it runs in
          // this coroutine, with no frame of its own (PipelineRunner::RunShardGroup's steps).
          co_await runner_.HopGroupPart(state, now_ms);
          state.hop.RethrowIfFailed();
          if (!runner_.FinishShardGroup(state, out, now_ms)) {
            co_await runner_.CompleteShardGroup(state, out, now_ms);  // a lock wait (rare)
          }
        } else {
          co_await runner_.RunPreparedGroup(state, out, now_ms);
        }
      }
      i = j;
      continue;
    }
    if (one_at == SIZE_MAX && !state.in_multi && shard_set_->size() > 1 && !evict_first &&
        state.tracking_now == 0 && !running.any_busy()) {
      PipelineRunner::BeginMultiGroup(state);
      size_t j = i;
      while (j < batch.size() && add_multi_cmd(j)) ++j;
      if (j > i) {
        co_await runner_.RunMultiGroup(state, out, now_ms);
        now_ms = NowMs();  // it may have waited for its locks
        i = j;
        continue;
      }
    }
    io::CmdArgs args = batch[i++];
    const CommandSpec* spec = Resolve(args, state.cmd_memo, out);
    // As Redis: DEBUG is refused before authentication and the other gates.
    if (spec != nullptr && spec->HasFlag(kCmdDebugGated) &&
        !AllowsProtectedAction(config_.enable_debug_command, state.local_client)) [[unlikely]] {
      SendStatus(out, OpStatus::kDebugNotAllowed);
      stats_.RecordRejected(my_engine, spec, out);
      state.multi_error |= state.in_multi;
      continue;
    }
    if (spec == nullptr || rejected(*spec, args)) {
      if (spec == nullptr) {
        spec = registry_.Lookup(args);  // a known container's command, for its counters
      } else if (need_auth && !spec->HasFlag(kCmdNoAuth)) {
        SendStatus(out, OpStatus::kNoAuth);
      } else if (state.acl_restricted && AclRefuses(state, *spec, args, out)) {
        // replied -NOPERM and logged
      } else if (over_memory && spec->HasFlag(kCmdDenyOom)) {
        SendStatus(out, OpStatus::kOutOfMemory);
      } else if (OpStatus why = gate != 0 ? gate_refuses(*spec) : OpStatus::kOk;
                 why != OpStatus::kOk) {
        SendStatus(out, why);
      } else {
        SendSubscribedModeError(out, *spec);
      }
      stats_.RecordRejected(my_engine, spec, out);
      state.multi_error |= state.in_multi;  // a refused command inside MULTI aborts the EXEC
      continue;
    }
    if (evict_first && spec->HasFlag(kCmdDenyOom) && Shard::Current() != nullptr &&
        !Shard::Current()->evictor().MakeRoom(now_ms)) [[unlikely]] {
      SendStatus(out, OpStatus::kOutOfMemory);
      stats_.RecordRejected(my_engine, spec, out);
      state.multi_error |= state.in_multi;
      continue;
    }
    if (busy_refused == i - 1 ||
        (running.any_busy() &&
         running.Refuses(*spec, args, my_engine, *shard_set_, &busy_function))) [[unlikely]] {
      out.SendError(RunningScripts::BusyText(busy_function));
      stats_.RecordRejected(my_engine, spec, out);
      state.multi_error |= state.in_multi;
      continue;
    }
    if (state.in_multi && !spec->HasFlag(kCmdMultiControl)) {
      multi_.Queue(state, *spec, args, out);
      continue;
    }
    state.last_cmd = spec;
    if (spec->batch_handler != nullptr && one_at == SIZE_MAX) {
      // A pipelined run of the same batchable command: one call of its batch handler.
      size_t end = i;
      while (end < batch.size() && registry_.Find(batch[end][0], state.cmd_memo) == spec &&
             spec->ArityOk(batch[end].size()) && !rejected(*spec, batch[end])) {
        ++end;
      }
      co_await RunBatch(*spec, batch.subspan(i - 1, end - i + 1), state, out, now_ms);
      now_ms = NowMs();
      i = end;
      continue;
    }
    ConnCmdContext ctx(services_, state, out, now_ms, *spec);
    if (spec->kind == HandlerKind::kConn) {
      runner_.RunConnCommand(*spec, args, ctx);
    } else {
      state.running_args = args;  // CLIENT LIST's argv-mem while it is suspended
      co_await runner_.RunCoordCommand(*spec, args, ctx);
      state.running_args = {};
      now_ms = NowMs();  // the command may have suspended for a while
    }
    if (conn.close_requested()) break;  // the rest is not run
    need_auth = need_auth && !state.authenticated;
    // It may have changed users (ACL SETUSER, AUTH ...): the next commands see the change.
    if (state.acl_generation != acl_->generation()) [[unlikely]] RefreshUser(state);
  }
  feed_exec();
  drop_reply();
  if (state.tracking_opt && i > 0) TrackingHub::AfterCommand(state, batch[i - 1]);
  TrackingHub::EndBatch(state, out);
  EngineStats& es = stats_.engine(my_engine);
  BumpCounter(es.commands_processed, batch.size());
  BumpCounter(es.error_replies, out.error_count() - errors_before);
}

void Server::FeedMonitors(const ConnState& state, const CommandSpec& spec, CmdArgs args,
                          std::string* exec_feed, size_t* exec_reply_at, size_t reply_at) {
  const int64_t now_us = NowUs();
  const std::string& client = state.conn->remote_address();
  if (spec.name == "exec" && state.in_multi) {
    // Its queued commands are fed once it has run them, then EXEC itself.
    std::vector<std::string_view> views;
    for (const QueuedCmd& q : state.queued) {
      if (!MonitorFeed::Feeds(*q.spec)) continue;
      views.assign(q.args.begin(), q.args.end());
      MonitorFeed::AppendLine(exec_feed, now_us, state.db, client, views);
    }
    *exec_reply_at = reply_at;
    return;
  }
  std::string line;
  MonitorFeed::AppendLine(&line, now_us, state.db, client, args);
  monitor_.Send(std::move(line));
}

asio::awaitable<void> Server::WaitWhilePaused(ConnState& state, const CommandSpec& spec,
                                              CmdArgs args, io::ReplyBuilder& out) {
  // As Redis 7.0: a pause of kind ALL holds every command; WRITE holds the commands that may
  // write or replicate (also when MULTI would queue them), and an EXEC whose queue holds one.
  constexpr uint32_t kMayWrite = kCmdWrite | kCmdMayReplicate;
  bool may_write = (spec.flags & kMayWrite) != 0;
  if (may_write && spec.tx_scope == TxScope::kScript && args.size() > 1) {
    // A script or function declared `no-writes` is not held (EVAL, EVALSHA, FCALL).
    ScriptFlags flags;
    if (spec.name == "eval") {
      ParseShebang(args[1], &flags);
    } else if (spec.name == "evalsha") {
      if (auto script = scripts_->Find(args[1])) flags = script->flags;
    } else if (auto fn = functions_->Find(args[1])) {
      flags = fn->flags;
    }
    may_write = !flags.no_writes;
  }
  if (spec.name == "exec") {
    for (const QueuedCmd& q : state.queued) may_write |= (q.spec->flags & kMayWrite) != 0;
  }
  const ClientPause::Kind holds = may_write ? ClientPause::Kind::kWrite : ClientPause::Kind::kAll;
  if (pause_.InForce(NowMs()) < holds) co_return;
  // The replies of the batch's earlier commands go out now, as Redis sends them before it
  // holds the client.
  if (!out.empty()) {
    state.conn->SendAsync(out.buffer());
    out.Clear();
  }
  stats_.blocked_clients().fetch_add(1, std::memory_order_relaxed);
  // Held like a blocked client (CLIENT LIST: flag b, the command and its arguments).
  state.held = true;
  state.last_cmd = &spec;
  state.running_args = args;
  co_await pause_.WaitWhile(state.conn->engine().index(), holds);
  state.running_args = {};
  state.held = false;
  stats_.blocked_clients().fetch_sub(1, std::memory_order_relaxed);
}

asio::awaitable<void> Server::RunBatch(const CommandSpec& spec, std::span<const io::CmdArgs> run,
                                       ConnState& state, io::ReplyBuilder& out, int64_t now_ms) {
  const unsigned my_engine = state.conn->engine().index();
  ConnCmdContext ctx(services_, state, out, now_ms, spec);
  const uint64_t errors = out.error_count();
  const uint64_t start = CycleClock::Now();
  const size_t reply_start = out.size();
  bool ok = true;
  try {
    co_await spec.batch_handler(run, ctx);
  } catch (const std::exception& e) {
    if (!IsAllocationFailure(e)) throw;
    ok = false;
    SendAllocationFailure(out, reply_start, spec, e);
  }
  // One reply per call: the first error replaced whatever the run had written.
  for (size_t k = 1; !ok && k < run.size(); ++k) SendStatus(out, OpStatus::kAllocationFailed);
  const uint64_t ticks = (CycleClock::Now() - start) / run.size();
  for (size_t k = 0; k < run.size(); ++k) {
    stats_.RecordCall(my_engine, spec, ticks, k == 0 ? out.error_count() - errors : 0, out, run[k],
                      &state);
  }
}

void Server::StartBackgroundTasks() {
  stats_.set_startup_memory(UsedMemory());
  shard_set_->RunOnAllBlocking([this](Shard& shard) {
    io::Engine& engine = pool_[shard.index()];
    asio::co_spawn(
        engine.context(),
        [this, &shard, &engine]() -> asio::awaitable<void> {
          asio::steady_timer timer(engine.context());
          int64_t last_expire_ms = 0;
          int64_t last_decay_ms = NowMs();
          int64_t last_client_cron_ms = 0;
          // Before the first tick: a flood right after start must not fill the reserve past
          // what maxmemory allows it.
          shard.CapChunkReserve(memory_->ReserveChunkCap());
          while (!stopping_.load(std::memory_order_relaxed)) {
            timer.expires_after(std::chrono::milliseconds(100));
            boost::system::error_code ec;
            co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
            if (ec || stopping_.load(std::memory_order_relaxed)) break;
            int64_t now = NowMs();
            // Skipped while a busy script's nested polls run this loop: keys do not expire
            // under a running script.
            // Nor while a CLIENT PAUSE keeps the data set static.
            if (now - last_expire_ms >= 1000 / config_.hz.load(std::memory_order_relaxed) &&
                !scripting_.running().IsShardBusy(shard.index()) &&
                pause_.InForce(now) == ClientPause::Kind::kNone) {
              const uint64_t cycle_start = CycleClock::Now();
              shard.ActiveExpireCycle(now);
              const auto cycle_us = static_cast<int64_t>(
                  static_cast<double>(CycleClock::Now() - cycle_start) /
                  CycleClock::TicksPerUsec());
              shard.stats().expire_cycle_us += static_cast<uint64_t>(cycle_us);
              stats_.RecordLatencyEvent("expire-cycle", cycle_us / 1000);
              last_expire_ms = now;
            }
            // No eviction either while a CLIENT PAUSE keeps the data set static.
            if (config_.maxmemory.load(std::memory_order_relaxed) > 0) {
              if (shard.index() == 0) memory_->SampleRss();
              if (pause_.InForce(now) == ClientPause::Kind::kNone) shard.evictor().Cron(now);
            }
            if (uint64_t& us = shard.stats().slowest_snapshot_slice_us; us != 0) {
              stats_.RecordLatencyEvent("snapshot-slice", static_cast<int64_t>(us / 1000));
              us = 0;
            }
            // Every tick: CONFIG SET maxmemory takes effect on the reserves within one.
            shard.CapChunkReserve(memory_->ReserveChunkCap());
            if (now - last_decay_ms >= ChunkReserve::kDecayPeriodMs) {
              shard.DecayChunkReserve();
              last_decay_ms = now;
            }
            if (now - last_client_cron_ms >= 1000) {
              clients_.Cron(shard.index(), now);
              last_client_cron_ms = now;
            }
            if (shard.index() == 0) {
              uint64_t net_in = 0, net_out = 0;
              for (unsigned i = 0; i < pool_.size(); ++i) {
                net_in += pool_[i].net().input_bytes.load(std::memory_order_relaxed);
                net_out += pool_[i].net().output_bytes.load(std::memory_order_relaxed);
              }
              stats_.SampleRates(now, net_in, net_out);
              snapshots_->Cron(now);
            }
          }
        },
        asio::detached);
  });
}

void Server::StopBackgroundTasks() {
  stopping_ = true;
  // Blocked clients get their timeout reply now, while the engines still run.
  shard_set_->RunOnAllBlocking([](Shard& shard) { shard.blocking().Shutdown(); });
}

}  // namespace dashkv
