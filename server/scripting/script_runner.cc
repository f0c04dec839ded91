#include "server/scripting/script_runner.h"

#include <absl/container/flat_hash_set.h>
#include <absl/container/inlined_vector.h>

#include <atomic>
#include <exception>
#include <memory>
#include <optional>
#include <vector>

#include "core/base/clock.h"
#include "core/memory.h"
#include "core/numbers.h"
#include "core/sha1.h"
#include "server/acl/acl_conn.h"
#include "server/cmd_context.h"
#include "server/conn_state.h"
#include "server/cycle_clock.h"
#include "server/observability/monitor.h"
#include "server/persistence/snapshot_manager.h"
#include "server/pipeline_runner.h"
#include "server/scripting/function_store.h"
#include "server/scripting/lua_interp.h"
#include "server/scripting/script_store.h"
#include "server/server_stats.h"
#include "server/storage/evictor.h"
#include "server/storage/shard_set.h"
#include "server/tx/lock_plan.h"
#include "server/tracking/tracking_hub.h"
#include "server/tx/transaction.h"

namespace dashkv {

namespace asio = boost::asio;

const ScriptFlags& ScriptCallee::flags() const {
  return script ? script->flags : function->flags;
}

std::atomic<uint8_t>& ScriptCallee::key_mode() const {
  return script ? script->key_mode : function->key_mode;
}

namespace {

// Bytes of Lua states idle in the pools (updated as states are returned).
std::atomic<int64_t> g_lua_memory{0};

// Each thread's idle Lua states.
class InterpPool {
 public:
  ~InterpPool() {
    for (auto& in : free_) g_lua_memory.fetch_sub(in->memory(), std::memory_order_relaxed);
  }
  std::unique_ptr<LuaInterp> Acquire(uint64_t generation) {
    while (!free_.empty()) {
      std::unique_ptr<LuaInterp> in = std::move(free_.back());
      free_.pop_back();
      g_lua_memory.fetch_sub(in->memory(), std::memory_order_relaxed);
      if (in->generation() == generation) return in;
    }
    return std::make_unique<LuaInterp>(generation);
  }
  void Release(std::unique_ptr<LuaInterp> in, uint64_t generation) {
    if (in->generation() != generation || free_.size() >= kMaxIdle) return;
    g_lua_memory.fetch_add(in->memory(), std::memory_order_relaxed);
    free_.push_back(std::move(in));
  }

 private:
  static constexpr size_t kMaxIdle = 4;
  std::vector<std::unique_ptr<LuaInterp>> free_;
};

InterpPool& ThreadPool() {
  static thread_local InterpPool pool;
  return pool;
}

// Where a run stopped.
enum class RunOutcome {
  kReplied,           // the result (or error) is in the client's reply
  kRerunGlobal,       // aborted before writing: run again with every shard locked
};

constexpr std::string_view kUndeclaredAfterWrite =
    "ERR Script touched a key outside the shards of its declared keys after it had written; "
    "declare every key in KEYS (its later runs lock the whole keyspace)";

// What both ways of running a script share: the checks Redis makes on a command a script
// calls, and the script's own client state for connection commands.
class ScriptHostBase : public ScriptHost {
 public:
  // `conn`: the caller's connection (its script client's), or nullptr for a script run from a
  // pipeline's shard group (connection commands a script may call do not use it).
  // `caller`: the calling client, whose user the calls are checked against (nullptr: an
  // unrestricted caller, whose calls are not checked).
  ScriptHostBase(const ServerServices& services, PipelineRunner& runner, io::Connection* conn,
                 const ConnState* caller, unsigned db, int64_t now_ms, const ScriptFlags& flags,
                 bool read_only)
      : services_(services), runner_(runner), conn_(conn),
        caller_(caller != nullptr && caller->acl_restricted ? caller : nullptr),
        no_touch_(caller != nullptr && caller->no_touch), tracker_(caller), flags_(flags),
        read_only_(read_only), db_(db), now_ms_(now_ms) {}

  std::optional<bool> AclAllows(std::span<const std::string> args) const override {
    SetViews(args);
    CmdArgs cargs(views_.data(), views_.size());
    const CommandSpec* spec = services_.registry.Lookup(cargs);
    if (spec == nullptr) return std::nullopt;
    if (caller_ == nullptr) return true;
    return caller_->user != nullptr &&
           AclCheck(services_.acl.rules(), *caller_->user, *spec, cargs).reason == AclDenied::kOk;
  }

  bool wrote() const { return wrote_; }
  void set_slot(RunSlot* slot) { slot_ = slot; }

 protected:
  // Resolves and checks a call; returns its spec, or nullptr after replying with the error.
  const CommandSpec* Check(std::span<const std::string> args, io::ReplyBuilder& reply) {
    SetViews(args);
    CmdArgs cargs(views_.data(), views_.size());
    const CommandSpec* spec = services_.registry.Lookup(cargs);
    if (spec == nullptr) {
      reply.SendError("ERR Unknown Redis command called from script");
      return nullptr;
    }
    if (!spec->ArityOk(args.size())) {
      reply.SendError("ERR Wrong number of args calling Redis command from script");
      return nullptr;
    }
    if (spec->HasFlag(kCmdNoScript)) {
      reply.SendError("ERR This Redis command is not allowed from script");
      return nullptr;
    }
    if (caller_ != nullptr && AclRefuses(*spec, cargs, reply)) return nullptr;
    if (spec->HasFlag(kCmdWrite)) {
      if (read_only_) {
        reply.SendError("ERR Write commands are not allowed from read-only scripts.");
        return nullptr;
      }
      if ((services_.snapshots.gate() & SnapshotManager::kGateSaveFailed) &&
          services_.snapshots.WritesRefused()) {
        SendStatus(reply, OpStatus::kMisconf);
        return nullptr;
      }
    }
    if (spec->HasFlag(kCmdDenyOom) && !flags_.allow_oom &&
        WriteRefusedForMemory(services_.config.maxmemory, 0, /*evict=*/false)) {
      SendStatus(reply, OpStatus::kOutOfMemory);
      return nullptr;
    }
    if (services_.monitor.active() && MonitorFeed::Feeds(*spec)) [[unlikely]] {
      std::string line;
      MonitorFeed::AppendLine(&line, NowUs(), db_, "lua", cargs);
      services_.monitor.Send(std::move(line));
    }
    return spec;
  }

  CmdArgs args() const { return CmdArgs(views_.data(), views_.size()); }

  // Replies Redis's error for a call the caller's user may not make (and logs it, context
  // "lua"); returns whether it refused.
  bool AclRefuses(const CommandSpec& spec, CmdArgs cargs, io::ReplyBuilder& reply) {
    AclVerdict v = caller_->user != nullptr ? AclCheck(services_.acl.rules(), *caller_->user, spec, cargs)
                                            : AclVerdict{AclDenied::kCommand, 0};
    if (v.reason == AclDenied::kOk) return false;
    LogAclDenial(services_, *caller_, v, spec, cargs, AclContext::kLua);
    switch (v.reason) {
      case AclDenied::kKey:
        reply.SendError(
            "ERR The user executing the script can't access at least one of the keys "
            "mentioned in the command arguments");
        break;
      case AclDenied::kChannel:
        reply.SendError(
            "ERR The user executing the script can't publish to the channel mentioned in the "
            "command");
        break;
      default:
        reply.SendError("ERR The user executing the script can't run this command or subcommand");
    }
    return true;
  }

  // Returns the one shard the call runs on whole as a shard command: a kShard command's keys'
  // shard, or a kCoord command's shard route (SORT without patterns); nullopt otherwise.
  std::optional<unsigned> ShardOfCall(const CommandSpec& spec) const {
    if (spec.kind == HandlerKind::kShard) return runner_.SingleShardOf(spec, args());
    if (spec.kind == HandlerKind::kCoord && spec.shard_route != nullptr &&
        spec.shard_handler != nullptr) {
      return spec.shard_route(args(), services_);
    }
    return std::nullopt;
  }

  // The script's own client (SELECT, and connection commands), made at its first use.
  ConnState& ScriptClient() {
    if (!client_) {
      client_ = std::make_unique<ConnState>(conn_);
      client_->db = db_;
      client_->authenticated = true;
      client_->no_touch = no_touch_;  // its multi-shard calls' hops (ConnCmdContext::shard_set)
      // Its changes are the caller's, made by a script (client-side caching's NOLOOP).
      if (tracker_ != nullptr && tracker_->change_origin != 0) [[unlikely]] {
        client_->change_origin = ChangeOriginOf(tracker_->conn->id(), /*by_script=*/true);
      }
    }
    return *client_;
  }
  unsigned db() const { return client_ ? client_->db : db_; }

  // Runs a connection command for the script on this thread, counted on `engine`.
  void RunConnCommand(const CommandSpec& spec, io::ReplyBuilder& reply, unsigned engine) {
    ConnCmdContext sub(services_, ScriptClient(), reply, now_ms_, spec);
    sub.in_exec = true;
    const uint64_t errors = reply.error_count();
    const uint64_t start = CycleClock::Now();
    const size_t reply_start = reply.size();
    try {
      spec.conn_handler(args(), sub);
    } catch (const std::exception& e) {
      if (!IsAllocationFailure(e)) throw;
      SendAllocationFailure(reply, reply_start, spec, e);
    }
    services_.stats.RecordCall(engine, spec, CycleClock::Now() - start,
                               reply.error_count() - errors, reply, args(), nullptr);
  }

  void SetViews(std::span<const std::string> args) const {
    views_.assign(args.begin(), args.end());
  }

  const ServerServices& services_;
  PipelineRunner& runner_;
  io::Connection* const conn_;
  const ConnState* const caller_;
  const bool no_touch_;  // the caller is a CLIENT NO-TOUCH client (PendingCmd::no_touch)
  // The calling client, for client-side caching: the keys its calls read are tracked for it.
  const ConnState* const tracker_;
  const ScriptFlags& flags_;
  const bool read_only_;
  const unsigned db_;
  const int64_t now_ms_;
  // Records that the script ran a write command (SCRIPT KILL then refuses to stop it).
  void MarkWrite(const CommandSpec& spec) {
    if (!spec.HasFlag(kCmdWrite) || wrote_) return;
    wrote_ = true;
    if (slot_ != nullptr) slot_->wrote.store(true, std::memory_order_relaxed);
  }

  bool wrote_ = false;
  RunSlot* slot_ = nullptr;
  mutable std::vector<std::string_view> views_;
  std::unique_ptr<ConnState> client_;
};

// Runs a script's calls on the one shard whose thread runs the script.
class ShardHost : public ScriptHostBase {
 public:
  ShardHost(const ServerServices& services, PipelineRunner& runner, io::Connection* conn,
            const ConnState* caller, unsigned db, int64_t now_ms, const ScriptFlags& flags,
            bool read_only, Shard& shard)
      : ScriptHostBase(services, runner, conn, caller, db, now_ms, flags, read_only),
        shard_(shard) {}

  CallStatus Call(std::span<const std::string> args, io::ReplyBuilder& reply) override {
    const CommandSpec* spec = Check(args, reply);
    if (spec == nullptr) return CallStatus::kReady;
    if (spec->kind == HandlerKind::kConn) {
      RunConnCommand(*spec, reply, shard_.index());
      return CallStatus::kReady;
    }
    std::optional<unsigned> sid = ShardOfCall(*spec);
    if (!sid || *sid != shard_.index()) return CallStatus::kAbort;
    // A key of this shard the script did not declare, held by a transaction now.
    if (!shard_.locks().empty() && LocksBlock(shard_.locks(), *spec, this->args(), db())) {
      return CallStatus::kAbort;
    }
    MarkWrite(*spec);
    runner_.RunShardCommand(PendingCmd{spec, this->args(), shard_.index(), no_touch_}, shard_,
                            db(), reply, now_ms_, /*from_script=*/true, /*client=*/nullptr,
                            tracker_);
    return CallStatus::kReady;
  }

 private:
  Shard& shard_;
};

// Runs a script's calls from the connection's thread under `locks`; calls to other shards
// suspend the script for one hop (PendingHop then runs it).
class CoordHost : public ScriptHostBase {
 public:
  CoordHost(const ServerServices& services, PipelineRunner& runner, ConnCmdContext& ctx,
            const ScriptFlags& flags, bool read_only, KeyLocks* locks)
      : ScriptHostBase(services, runner, ctx.state.conn, &ctx.state, ctx.state.db, ctx.now_ms,
                       flags, read_only),
        locks_(locks) {}

  // Learning run: records calls that go outside the declared `keys` of database `db` (their
  // one shard when they share one, else the keys themselves).
  void Learn(CmdArgs keys, unsigned db) {
    learning_ = true;
    ShardSet& ss = services_.shard_set;
    declared_shard_ = ss.ShardOf(keys[0]);
    for (std::string_view k : keys) {
      if (ss.ShardOf(k) != *declared_shard_) declared_shard_.reset();
      declared_.insert(LockKeyOf(db, k));
    }
  }
  bool went_outside() const { return outside_; }

  CallStatus Call(std::span<const std::string> args, io::ReplyBuilder& reply) override {
    const CommandSpec* spec = Check(args, reply);
    if (spec == nullptr) return CallStatus::kReady;
    if (learning_ && !outside_) NoteOutside(*spec);
    if (!Covered(*spec)) return CallStatus::kAbort;
    MarkWrite(*spec);
    pending_spec_ = spec;
    pending_sid_.reset();
    if (spec->kind == HandlerKind::kConn) {
      RunConnCommand(*spec, reply, conn_->engine().index());
      return CallStatus::kReady;
    }
    pending_sid_ = ShardOfCall(*spec);
    if (pending_sid_) {
      Shard* local = Shard::Current();
      if (local != nullptr && local->index() == *pending_sid_) {
        runner_.RunShardCommand(PendingCmd{spec, this->args(), *pending_sid_, no_touch_},
                                *local, db(), reply, now_ms_, /*from_script=*/true,
                                /*client=*/nullptr, tracker_);
        return CallStatus::kReady;
      }
    }
    return CallStatus::kYield;  // a remote shard, a multi-shard form, or a coordinator
  }

  // Runs the call the script yielded for, replying into `reply`.
  asio::awaitable<void> PendingHop(io::ReplyBuilder& reply) {
    const CommandSpec& spec = *pending_spec_;
    if (pending_sid_) {
      const unsigned db = this->db();
      PendingCmd cmd{&spec, args(), *pending_sid_, no_touch_};
      co_await services_.shard_set.Await(*pending_sid_, [&](Shard& shard) {
        runner_.RunShardCommand(cmd, shard, db, reply, now_ms_, /*from_script=*/true,
                                /*client=*/nullptr, tracker_);
      });
      co_return;
    }
    ConnCmdContext sub(services_, ScriptClient(), reply, now_ms_, spec);
    sub.locks = locks_;
    sub.in_exec = true;  // blocking commands do not block
    sub.from_script = true;
    // The sub-context's client is the script's own, which tracks nothing: the call's keys are
    // remembered for the caller, before the call's hops read them (as RunCoordCommand does).
    if (tracker_ != nullptr && (tracker_->tracking_now & kTrackingReads)) [[unlikely]] {
      services_.tracking.RememberCoordKeys(*tracker_, spec, args());
    }
    co_await runner_.RunCoordCommand(spec, args(), sub);
  }

 private:
  void NoteOutside(const CommandSpec& spec) {
    if (spec.kind == HandlerKind::kConn) return;
    CmdArgs a = args();
    // A call that reads keys it does not name stays inside only on the declared keys' shard.
    const bool reads_unnamed = spec.whole_keyspace != nullptr && spec.whole_keyspace(a);
    if ((spec.kind == HandlerKind::kCoord && !ShardOfCall(spec)) ||
        spec.other_db_key != nullptr || (reads_unnamed && !declared_shard_)) {
      outside_ = true;
      return;
    }
    for (uint32_t k : spec.KeysOf(a)) {
      bool inside = declared_shard_ ? services_.shard_set.ShardOf(a[k]) == *declared_shard_
                                    : declared_.contains(LockKeyOf(db(), a[k]));
      if (!inside) {
        outside_ = true;
        return;
      }
    }
  }

  // Returns whether the locks cover every key (or shard) the call touches (no locks: one
  // shard, where nothing else runs until the script ends).
  bool Covered(const CommandSpec& spec) const {
    if (locks_ == nullptr) return true;
    const LockMode mode = spec.HasFlag(kCmdWrite) ? LockMode::kExclusive : LockMode::kShared;
    // Returns whether every shard is locked whole in a mode at least `need`.
    auto all_shards = [&](LockMode need) {
      for (unsigned sid = 0; sid < services_.shard_set.size(); ++sid) {
        const LockRequest& req = locks_->request(sid);
        if (!req.whole_shard ||
            (need == LockMode::kExclusive && req.whole_mode != LockMode::kExclusive)) {
          return false;
        }
      }
      return true;
    };
    switch (spec.tx_scope) {
      case TxScope::kAllShared:
        return all_shards(LockMode::kShared);
      case TxScope::kAllExclusive:
        return all_shards(LockMode::kExclusive);
      case TxScope::kNone:
      case TxScope::kScript:
        return true;
      case TxScope::kKeys:
        break;
    }
    CmdArgs a = args();
    if (spec.whole_keyspace != nullptr) {
      if (std::optional<LockMode> whole = spec.whole_keyspace(a)) return all_shards(*whole);
    }
    for (uint32_t k : spec.KeysOf(a)) {
      if (!locks_->Covers(db(), a[k], mode)) return false;
    }
    if (spec.other_db_key != nullptr) {
      if (auto other = spec.other_db_key(a);
          other && !locks_->Covers(other->first, other->second, LockMode::kExclusive)) {
        return false;
      }
    }
    return true;
  }

  KeyLocks* locks_;
  const CommandSpec* pending_spec_ = nullptr;
  std::optional<unsigned> pending_sid_;
  bool learning_ = false;
  bool outside_ = false;
  std::optional<unsigned> declared_shard_;
  absl::flat_hash_set<std::string> declared_;
};

// Starts `callee` in `in` (compiling the script, or loading the function libraries, first);
// sets `err` instead when the script does not compile.
LuaInterp::RunStatus StartCallee(const ServerServices& services, LuaInterp& in,
                                 const ScriptCallee& callee, CmdArgs keys, CmdArgs argv,
                                 ScriptHost* host, std::string* err) {
  if (callee.script) {
    *err = in.Load(*callee.script);
    if (!err->empty()) return LuaInterp::RunStatus::kDone;
    return in.Start(callee.script->sha, keys, argv, host);
  }
  in.SyncFunctions(services.functions);
  return in.StartFunction(*callee.function, keys, argv, host);
}

// Runs the script to its end on this thread (never yields: calls needing a hop abort it).
// `conn`, `db`, `now_ms`: the caller's (conn nullptr from a pipeline's shard group).
RunOutcome RunOnShard(const ServerServices& services, PipelineRunner& runner,
                      RunningScripts& running, io::ReplyBuilder& out, io::Connection* conn,
                      const ConnState* caller, unsigned db, int64_t now_ms, const ScriptCallee& callee, bool read_only,
                      CmdArgs keys, CmdArgs argv, Shard& shard, uint64_t generation) {
  InterpPool& pool = ThreadPool();
  std::unique_ptr<LuaInterp> in = pool.Acquire(generation);
  ShardHost host(services, runner, conn, caller, db, now_ms, callee.flags(), read_only, shard);
  RunSlot* slot = running.Acquire(shard.index(), NowMs(), callee.function != nullptr);
  host.set_slot(slot);
  in->set_run_slot(slot);
  // Clients unblocked by the script's writes are served after it.
  shard.blocking().set_deferred(true);
  std::string err;
  LuaInterp::RunStatus status = StartCallee(services, *in, callee, keys, argv, &host, &err);
  DCHECK(status == LuaInterp::RunStatus::kDone);  // ShardHost never yields
  if (status != LuaInterp::RunStatus::kDone) in->Reset();
  shard.blocking().set_deferred(false);
  shard.blocking().ServeReady();
  in->set_run_slot(nullptr);
  running.Release(slot);
  RunOutcome outcome = RunOutcome::kReplied;
  if (!err.empty()) {
    out.SendError("ERR " + err);
  } else if (in->aborted()) {
    callee.key_mode().store(kKeysGlobal, std::memory_order_relaxed);
    if (host.wrote()) {
      out.SendError(kUndeclaredAfterWrite);
    } else {
      outcome = RunOutcome::kRerunGlobal;
    }
  } else {
    in->SendResult(out);
  }
  pool.Release(std::move(in), generation);
  return outcome;
}

// Reads `numkeys` (args[2]) and splits the keys and arguments after it; false after replying
// with Redis's error.
bool SplitKeysAndArgs(CmdArgs args, io::ReplyBuilder& rb, CmdArgs* keys, CmdArgs* argv) {
  std::optional<int64_t> numkeys = ParseInt64(args[2]);
  if (!numkeys) {
    SendStatus(rb, OpStatus::kNotAnInteger);
    return false;
  }
  if (*numkeys < 0) {
    rb.SendError("ERR Number of keys can't be negative");
    return false;
  }
  if (static_cast<uint64_t>(*numkeys) > args.size() - 3) {
    SendStatus(rb, OpStatus::kNumkeysTooMany);
    return false;
  }
  *keys = args.subspan(3, static_cast<size_t>(*numkeys));
  *argv = args.subspan(3 + keys->size());
  return true;
}

}  // namespace

ScriptRunner::ScriptRunner(const ServerServices& services, PipelineRunner& runner)
    : services_(services),
      runner_(runner),
      running_(services.pool, services.config.busy_reply_threshold) {}

void ScriptRunner::Kill(bool function, ConnCmdContext& ctx) {
  const int64_t threshold = services_.config.busy_reply_threshold.load(std::memory_order_relaxed);
  switch (running_.Kill(function, NowMs(), threshold)) {
    case RunningScripts::KillResult::kNotBusy:
      return ctx.rb.SendError("NOTBUSY No scripts in execution right now.");
    case RunningScripts::KillResult::kUnkillable:
      return ctx.rb.SendError(
          "UNKILLABLE Sorry the script already executed write commands against the dataset. You "
          "can either wait the script termination or kill the server in a hard way using the "
          "SHUTDOWN NOSAVE command.");
    case RunningScripts::KillResult::kOtherKind:
      return ctx.rb.SendError(function ? "BUSY Redis is busy running a script. You can only call "
                                         "SCRIPT KILL or SHUTDOWN NOSAVE."
                                       : "BUSY Redis is busy running a script. You can only call "
                                         "FUNCTION KILL or SHUTDOWN NOSAVE.");
    case RunningScripts::KillResult::kKilled:
      return ctx.rb.SendOk();
  }
}

namespace {

// The shard of a script call's declared keys when there are some and they share one.
std::optional<unsigned> DeclaredKeysShard(CmdArgs args, const ShardSet& ss) {
  std::optional<int64_t> numkeys = ParseInt64(args[2]);
  if (!numkeys || *numkeys < 1 || static_cast<uint64_t>(*numkeys) > args.size() - 3) {
    return std::nullopt;
  }
  const CmdArgs keys = args.subspan(3, static_cast<size_t>(*numkeys));
  const unsigned sid = ss.ShardOf(keys[0]);
  for (std::string_view k : keys) {
    if (ss.ShardOf(k) != sid) return std::nullopt;
  }
  return sid;
}

}  // namespace

std::optional<unsigned> ScriptRunner::RouteEvalSha(CmdArgs args,
                                                  const ServerServices& services) {
  std::optional<unsigned> sid = DeclaredKeysShard(args, services.shard_set);
  if (!sid) return std::nullopt;
  std::shared_ptr<const StoredScript> script = services.scripts.Find(args[1]);
  if (script == nullptr || script->key_mode.load(std::memory_order_relaxed) != kKeysDeclared) {
    return std::nullopt;
  }
  return sid;
}

std::optional<unsigned> ScriptRunner::RouteEval(CmdArgs args, const ServerServices& services) {
  std::optional<unsigned> sid = DeclaredKeysShard(args, services.shard_set);
  if (!sid) return std::nullopt;
  std::shared_ptr<const StoredScript> script = services.scripts.FindByBody(args[1]);
  if (script == nullptr || script->key_mode.load(std::memory_order_relaxed) != kKeysDeclared) {
    return std::nullopt;
  }
  return sid;
}

namespace {

bool LocksAllShardsFor(const std::atomic<uint8_t>& key_mode) {
  return key_mode.load(std::memory_order_relaxed) != kKeysDeclared;
}

}  // namespace

bool ScriptRunner::EvalLocksAllShards(CmdArgs args, const ServerServices& services) {
  std::shared_ptr<const StoredScript> script = services.scripts.FindByBody(args[1]);
  return script == nullptr || LocksAllShardsFor(script->key_mode);  // new: learns in the EXEC
}

bool ScriptRunner::EvalShaLocksAllShards(CmdArgs args, const ServerServices& services) {
  std::shared_ptr<const StoredScript> script = services.scripts.Find(args[1]);
  return script != nullptr && LocksAllShardsFor(script->key_mode);  // missing: NOSCRIPT
}

bool ScriptRunner::FCallLocksAllShards(CmdArgs args, const ServerServices& services) {
  std::shared_ptr<const FunctionInfo> fn = services.functions.Find(args[1]);
  return fn != nullptr && LocksAllShardsFor(fn->key_mode);
}

std::optional<unsigned> ScriptRunner::RouteFCall(CmdArgs args, const ServerServices& services) {
  std::optional<unsigned> sid = DeclaredKeysShard(args, services.shard_set);
  if (!sid) return std::nullopt;
  std::shared_ptr<const FunctionInfo> fn = services.functions.Find(args[1]);
  if (fn == nullptr || fn->key_mode.load(std::memory_order_relaxed) != kKeysDeclared) {
    return std::nullopt;
  }
  return sid;
}

void ScriptRunner::EvalShaOnShard(CmdArgs args, ShardCmdContext& ctx) {
  CmdArgs keys, argv;
  if (!SplitKeysAndArgs(args, ctx.rb, &keys, &argv)) return;
  ScriptCallee callee;
  callee.script = ctx.services->scripts.Find(args[1]);
  if (callee.script == nullptr) {
    return ctx.rb.SendError("NOSCRIPT No matching script. Please use EVAL.");
  }
  RunCalleeOnShard(ctx, callee, keys, argv);
}

void ScriptRunner::EvalOnShard(CmdArgs args, ShardCmdContext& ctx) {
  CmdArgs keys, argv;
  if (!SplitKeysAndArgs(args, ctx.rb, &keys, &argv)) return;
  ScriptCallee callee;
  ScriptStore& store = ctx.services->scripts;
  callee.script = store.FindByBody(args[1]);
  if (callee.script == nullptr) {
    // SCRIPT FLUSH ran since the call was routed: the script is added again.
    std::string err;
    callee.script = store.Add(Sha1Hex(args[1]), args[1], &err);
    if (callee.script == nullptr) return ctx.rb.SendError("ERR " + err);
  }
  RunCalleeOnShard(ctx, callee, keys, argv);
}

void ScriptRunner::FCallOnShard(CmdArgs args, ShardCmdContext& ctx) {
  CmdArgs keys, argv;
  if (!SplitKeysAndArgs(args, ctx.rb, &keys, &argv)) return;
  ScriptCallee callee;
  callee.function = ctx.services->functions.Find(args[1]);
  if (callee.function == nullptr) return ctx.rb.SendError("ERR Function not found");
  if (ctx.spec.HasFlag(kCmdReadOnly) && !callee.function->flags.no_writes) {
    return ctx.rb.SendError("ERR Can not execute a script with write flag using *_ro command.");
  }
  RunCalleeOnShard(ctx, callee, keys, argv);
}

void ScriptRunner::RunCalleeOnShard(ShardCmdContext& ctx, const ScriptCallee& callee,
                                    CmdArgs keys, CmdArgs argv) {
  const ServerServices& services = *ctx.services;
  const ScriptFlags& flags = callee.flags();
  const bool read_only = ctx.spec.HasFlag(kCmdReadOnly) || flags.no_writes;
  if (flags.shebang && !flags.no_writes && !flags.allow_oom &&
      WriteRefusedForMemory(services.config.maxmemory, ctx.now_ms)) {
    return ctx.SendStatus(OpStatus::kOutOfMemory);
  }
  ScriptRunner& self = services.scripting;
  RunOutcome outcome =
      RunOnShard(services, self.runner_, self.running_, ctx.rb, nullptr, ctx.tracking_client,
                 ctx.db_index,
                 ctx.now_ms, callee, read_only, keys, argv, ctx.shard,
                 services.scripts.generation());
  if (outcome == RunOutcome::kRerunGlobal) {
    // Inside a pipeline's shard group there is no going back to lock every shard: the script
    // (now marked) runs that way from its next call on.
    ctx.rb.SendError("ERR Script touched a key outside the shards of its declared keys; it "
                     "locks the whole keyspace from its next run: run it again");
  }
}

size_t ScriptRunner::LuaMemory() {
  int64_t v = g_lua_memory.load(std::memory_order_relaxed);
  return v > 0 ? static_cast<size_t>(v) : 0;
}

asio::awaitable<void> ScriptRunner::Eval(CmdArgs args, ConnCmdContext& ctx, bool by_sha,
                                         bool read_only) {
  io::ReplyBuilder& out = ctx.rb;
  CmdArgs keys, argv;
  if (!SplitKeysAndArgs(args, ctx.rb, &keys, &argv)) co_return;

  ScriptStore& store = services_.scripts;
  std::shared_ptr<const StoredScript> script;
  if (by_sha) {
    script = store.Find(args[1]);
    if (script == nullptr) co_return out.SendError("NOSCRIPT No matching script. Please use EVAL.");
  } else {
    script = store.FindByBody(args[1]);
    if (script == nullptr) {
      std::string err;
      script = store.Add(Sha1Hex(args[1]), args[1], &err);
      if (script == nullptr) co_return out.SendError("ERR " + err);
    }
  }
  ScriptCallee callee;
  callee.script = std::move(script);
  co_await Run(ctx, callee, read_only, keys, argv);
}

asio::awaitable<void> ScriptRunner::FCall(CmdArgs args, ConnCmdContext& ctx, bool read_only) {
  io::ReplyBuilder& out = ctx.rb;
  CmdArgs keys, argv;
  if (!SplitKeysAndArgs(args, ctx.rb, &keys, &argv)) co_return;
  ScriptCallee callee;
  callee.function = services_.functions.Find(args[1]);
  if (callee.function == nullptr) co_return out.SendError("ERR Function not found");
  if (read_only && !callee.function->flags.no_writes) {
    co_return out.SendError("ERR Can not execute a script with write flag using *_ro command.");
  }
  co_await Run(ctx, callee, read_only, keys, argv);
}

asio::awaitable<void> ScriptRunner::Run(ConnCmdContext& ctx, const ScriptCallee& callee,
                                        bool read_only, CmdArgs keys, CmdArgs argv) {
  const ScriptFlags& flags = callee.flags();
  const uint64_t generation = services_.scripts.generation();
  read_only = read_only || flags.no_writes;
  if (flags.shebang && !flags.no_writes && !flags.allow_oom &&
      WriteRefusedForMemory(services_.config.maxmemory, ctx.now_ms)) {
    co_return ctx.SendStatus(OpStatus::kOutOfMemory);
  }

  ShardSet& ss = services_.shard_set;
  const LockMode mode = read_only ? LockMode::kShared : LockMode::kExclusive;
  const uint8_t key_mode = callee.key_mode().load(std::memory_order_relaxed);
  // A script's first run with declared keys locks every shard and learns (key_mode).
  bool learn = ctx.locks == nullptr && !keys.empty() && key_mode == kKeysUnknown;
  bool global = ctx.locks == nullptr && ss.size() > 1 &&
                (keys.empty() || key_mode != kKeysDeclared);
  // One shard: the shard of every declared key.
  std::optional<unsigned> one_shard;
  if (ss.size() > 1 && ctx.locks == nullptr && !global) {
    one_shard = ss.ShardOf(keys[0]);
    for (std::string_view k : keys) {
      if (ss.ShardOf(k) != *one_shard) {
        one_shard.reset();
        break;
      }
    }
  }

  if (one_shard) {
    const unsigned sid = *one_shard;
    Shard* local = Shard::Current();
    LockRequest req;
    for (std::string_view k : keys) req.Add(LockHashOf(ctx.state.db, k), mode);
    RunOutcome outcome;
    auto run = [&](Shard& shard) {
      return RunOnShard(services_, runner_, running_, ctx.rb, ctx.state.conn, &ctx.state,
                        ctx.state.db,
                        ctx.now_ms, callee, read_only, keys, argv, shard, generation);
    };
    if (local != nullptr && local->index() == sid && local->locks().empty()) {
      outcome = run(*local);
    } else {
      outcome = co_await ss.AwaitAsync<RunOutcome>(
          sid, [&](Shard& shard, io::Completion<RunOutcome> done) {
            Shard* sp = &shard;
            // Transient: runs at once if nothing holds or awaits the keys, else after them.
            shard.locks().Enqueue(
                req, [&, sp, done = std::move(done)]() mutable { done(run(*sp)); },
                /*transient=*/true);
          });
    }
    if (outcome == RunOutcome::kReplied) co_return;
    global = true;
  }

  // As a coordinator: under the EXEC's locks, or its own (the declared keys, or every shard).
  if (ss.size() == 1) {
    // Nothing else runs on the one shard until the script ends (no call suspends: every hop
    // is local); clients its writes unblock are served after it, as after an EXEC.
    Shard* only = Shard::Current();
    const bool deferred = only->blocking().deferred();
    only->blocking().set_deferred(true);
    co_await RunAsCoordinator(ctx, callee, read_only, keys, argv, nullptr,
                              /*may_rerun=*/false, generation, learn);
    only->blocking().set_deferred(deferred);
    if (!deferred) only->blocking().ServeReady();
    co_return;
  }
  if (ctx.locks != nullptr) {
    // An EXEC locks every shard for a script not known to keep to its declared keys
    // (AddCommandLocks): a first run there learns as it would alone.
    bool all_shards = true;
    for (unsigned sid = 0; sid < ss.size() && all_shards; ++sid) {
      all_shards = ctx.locks->request(sid).whole_shard;
    }
    learn = !keys.empty() && key_mode == kKeysUnknown && all_shards;
    co_await RunAsCoordinator(ctx, callee, read_only, keys, argv, ctx.locks,
                              /*may_rerun=*/false, generation, learn);
    co_return;
  }
  while (true) {
    KeyLocks own(ss);
    if (global) {
      if (!keys.empty() && !learn) {
        services_.scripts.undeclared_runs.fetch_add(1, std::memory_order_relaxed);
      }
      own.AddAllShards(mode);
    } else {
      for (std::string_view k : keys) own.Add(ctx.state.db, k, mode);
    }
    co_await own.Acquire();
    bool rerun = false;
    try {
      rerun = co_await RunAsCoordinator(ctx, callee, read_only, keys, argv, &own,
                                        /*may_rerun=*/!global, generation, learn);
    } catch (...) {
      own.Abandon();
      throw;
    }
    own.Release();
    if (!rerun) co_return;
    global = true;
    learn = false;
  }
}

asio::awaitable<bool> ScriptRunner::RunAsCoordinator(
    ConnCmdContext& ctx, const ScriptCallee& callee, bool read_only,
    CmdArgs keys, CmdArgs argv, KeyLocks* locks, bool may_rerun, uint64_t generation,
    bool learn) {
  io::ReplyBuilder& out = ctx.rb;
  InterpPool& pool = ThreadPool();
  std::unique_ptr<LuaInterp> in = pool.Acquire(generation);
  bool rerun = false;
  const size_t reply_start = out.size();
  RunSlot* slot = nullptr;
  try {
    CoordHost host(services_, runner_, ctx, callee.flags(), read_only, locks);
    if (learn) host.Learn(keys, ctx.state.db);
    slot = running_.Acquire(ctx.state.conn->engine().index(), NowMs(),
                            callee.function != nullptr);
    if (slot != nullptr && locks != nullptr) {
      for (unsigned sid = 0; sid < services_.shard_set.size(); ++sid) {
        if (!locks->request(sid).empty()) slot->held_shards.push_back(sid);
      }
    }
    host.set_slot(slot);
    in->set_run_slot(slot);
    std::string err;
    LuaInterp::RunStatus status = StartCallee(services_, *in, callee, keys, argv, &host, &err);
    if (!err.empty()) {
      out.SendError("ERR " + err);
    } else {
      while (status == LuaInterp::RunStatus::kYield) {
        co_await host.PendingHop(in->call_reply());
        status = in->Resume();
      }
      if (learn) {
        callee.key_mode().store(host.went_outside() ? kKeysGlobal : kKeysDeclared,
                                std::memory_order_relaxed);
      }
      if (!in->aborted()) {
        in->SendResult(out);
      } else {
        callee.key_mode().store(kKeysGlobal, std::memory_order_relaxed);
        if (host.wrote() || !may_rerun) {
          out.SendError(kUndeclaredAfterWrite);
        } else {
          rerun = true;
        }
      }
    }
  } catch (const std::exception& e) {
    if (!IsAllocationFailure(e)) throw;
    in->Reset();
    SendAllocationFailure(out, reply_start, ctx.spec, e);
  }
  in->set_run_slot(nullptr);
  running_.Release(slot);
  pool.Release(std::move(in), generation);
  co_return rerun;
}

std::string ScriptRunner::LoadLibrary(FunctionLibrary* lib) {
  if (std::string err = ParseLibraryMetadata(lib->code, &lib->name); !err.empty()) return err;
  // A state of its own: a failing library's half-run code stays out of the pool's states.
  LuaInterp in(0);
  return in.LoadLibrary(lib, /*keep=*/false);
}

std::string ScriptRunner::Compile(const StoredScript& script, uint64_t generation) {
  InterpPool& pool = ThreadPool();
  std::unique_ptr<LuaInterp> in = pool.Acquire(generation);
  std::string err = in->Load(script);
  pool.Release(std::move(in), generation);
  return err;
}

}  // namespace dashkv
