// Connection commands: PING, ECHO, QUIT, HELLO, AUTH, SELECT, RESET and CLIENT.
#include <absl/strings/str_join.h>

#include "core/str_util.h"
#include "io/connection.h"
#include "io/engine.h"
#include "server/tx/blocking.h"
#include "server/acl/acl_conn.h"
#include "server/acl/acl_registry.h"
#include "server/cmd_context.h"
#include "server/commands/client_flow_commands.h"
#include "server/commands/tracking_commands.h"
#include "server/observability/monitor.h"
#include "server/command_registry.h"
#include "server/conn_state.h"
#include "server/pubsub/pubsub.h"
#include "server/config.h"
#include "server/storage/shard_set.h"
#include "server/tracking/tracking_hub.h"
#include "server/client_registry.h"
#include "server/tx/multi_exec.h"
#include "server/tx/watch.h"
#include "server/version.h"

namespace dashkv {

namespace {

using boost::asio::awaitable;

// PING [message]
void CmdPing(CmdArgs args, ConnCmdContext& ctx) {
  if (args.size() > 2) {
    return ctx.rb.SendError(WrongArgsText(ctx.spec.name));
  }
  if (InSubscribedMode(ctx.state) && !ctx.rb.resp3()) {  // RESP2 subscribed mode: as Redis
    ctx.rb.StartArray(2);
    ctx.rb.SendBulk("pong");
    return ctx.rb.SendBulk(args.size() == 1 ? std::string_view() : args[1]);
  }
  if (args.size() == 1) return ctx.rb.SendSimpleString("PONG");
  ctx.rb.SendBulk(args[1]);
}

// ECHO message
void CmdEcho(CmdArgs args, ConnCmdContext& ctx) { ctx.rb.SendBulk(args[1]); }

// QUIT
void CmdQuit(CmdArgs, ConnCmdContext& ctx) {
  ctx.rb.SendOk();
  ctx.state.conn->RequestClose();
}

// Authenticates the connection as `user` with `password`; returns false (and logs the failure)
// when the user does not exist, is disabled or the password is wrong.
bool Authenticate(ConnCmdContext& ctx, CmdArgs args, std::string_view user,
                  std::string_view password) {
  AclRegistry& acl = ctx.services().acl;
  const uint64_t generation = acl.generation();
  AclUserPtr u = acl.Authenticate(user, password);
  if (u == nullptr) {
    LogAclAuthFailure(ctx.services(), ctx.state, args[0], user);
    return false;
  }
  SetConnUser(ctx.state, std::move(u), generation);
  return true;
}

// AUTH [username] password
void CmdAuth(CmdArgs args, ConnCmdContext& ctx) {
  if (args.size() > 3) return ctx.SendStatus(OpStatus::kSyntaxError);
  std::string_view user = args.size() == 3 ? args[1] : "default";
  std::string_view password = args.back();
  if (args.size() == 2) {
    AclUserPtr d = ctx.services().acl.default_user();
    if (d->nopass) {
      return ctx.rb.SendError(
          "ERR AUTH <password> called without any password configured for the default user. "
          "Are you sure your configuration is correct?");
    }
  }
  if (!Authenticate(ctx, args, user, password)) return ctx.SendStatus(OpStatus::kWrongPass);
  ctx.rb.SendOk();
}

bool ValidClientName(std::string_view name) {
  for (char c : name) {
    if (c < '!' || c > '~') return false;
  }
  return true;
}

// HELLO [protover [AUTH username password] [SETNAME clientname]]
void CmdHello(CmdArgs args, ConnCmdContext& ctx) {
  io::RespVersion version = ctx.rb.version();
  ArgParser parser(args);
  if (parser.HasNext()) {
    int64_t v = parser.NextInt();
    if (parser.HasError()) {
      return ctx.rb.SendError("ERR Protocol version is not an integer or out of range");
    }
    if (v != 2 && v != 3) return ctx.rb.SendError("NOPROTO unsupported protocol version");
    version = v == 3 ? io::RespVersion::kResp3 : io::RespVersion::kResp2;
  }
  std::string_view setname;
  bool has_setname = false;
  while (parser.HasNext()) {
    // An option without enough values is reported by its own name, so look before consuming.
    if (EqualsIgnoreCase(parser.Peek(), "AUTH") && parser.remaining() >= 3) {
      parser.Next();
      std::string_view user = parser.Next();
      std::string_view password = parser.Next();
      if (!Authenticate(ctx, args, user, password)) {
        return ctx.SendStatus(OpStatus::kWrongPass);
      }
    } else if (EqualsIgnoreCase(parser.Peek(), "SETNAME") && parser.remaining() >= 2) {
      parser.Next();
      setname = parser.Next();
      has_setname = true;
    } else {
      return ctx.rb.SendError(
          StrCat("ERR Syntax error in HELLO option '", parser.Peek(), "'"));
    }
  }
  if (has_setname && !ValidClientName(setname)) {
    return ctx.SendStatus(OpStatus::kBadClientName);
  }
  if (ctx.config().auth_required.load(std::memory_order_relaxed) &&
      !ctx.state.authenticated) {
    return ctx.rb.SendError(
        "NOAUTH HELLO must be called with the client already authenticated, otherwise the "
        "HELLO AUTH <user> <pass> option can be used to authenticate the client and select "
        "the RESP protocol version at the same time");
  }
  if (has_setname) ctx.state.name = std::string(setname);
  ctx.state.conn->set_resp_version(version);
  ctx.rb.set_version(version);
  io::ReplyBuilder& rb = ctx.rb;
  rb.StartMap(7);
  rb.SendBulk("server");
  rb.SendBulk("redis");
  rb.SendBulk("version");
  rb.SendBulk(kRedisVersion);
  rb.SendBulk("proto");
  rb.SendLong(static_cast<int>(version));
  rb.SendBulk("id");
  rb.SendLong(static_cast<int64_t>(ctx.state.conn->id()));
  rb.SendBulk("mode");
  rb.SendBulk("standalone");
  rb.SendBulk("role");
  rb.SendBulk("master");
  rb.SendBulk("modules");
  rb.SendEmptyArray();
}

// SELECT index
void CmdSelect(CmdArgs args, ConnCmdContext& ctx) {
  auto index = ParseInt64(args[1]);
  if (!index) return ctx.SendStatus(OpStatus::kNotAnInteger);
  if (*index < 0 || *index >= static_cast<int64_t>(ctx.shard_set().num_dbs())) {
    return ctx.SendStatus(OpStatus::kInvalidDbIndex);
  }
  ctx.state.db = static_cast<unsigned>(*index);
  ctx.rb.SendOk();
}

// RESET
void CmdReset(CmdArgs, ConnCmdContext& ctx) {
  ctx.pubsub().UnsubscribeAll(ctx.state);
  ctx.multi().Discard(ctx.state);
  ctx.tracking().Disable(ctx.state);
  ctx.state.db = 0;
  ctx.state.name.clear();
  ctx.state.no_evict = ctx.state.no_touch = false;
  ctx.state.reply_mode = ConnState::ReplyMode::kOn;
  ctx.services().monitor.Remove(ctx.state.conn->engine().index(), &ctx.state);
  // Back to the default user, authenticated only if it needs no password (as Redis).
  AclRegistry& acl = ctx.services().acl;
  const uint64_t generation = acl.generation();
  SetConnUser(ctx.state, acl.default_user(), generation);
  ctx.state.SetAuthenticated(!ctx.config().auth_required.load(std::memory_order_relaxed));
  ctx.state.conn->set_resp_version(io::RespVersion::kResp2);
  ctx.rb.set_version(io::RespVersion::kResp2);
  ctx.rb.SendSimpleString("RESET");
}

}  // namespace

namespace {

// Redis's CLIENT LIST flags, in its order (dashkv has no replicas, unix sockets or READONLY).
std::string ClientFlags(const ConnState& state) {
  std::string flags;
  if (state.monitor) flags += 'O';
  if (InSubscribedMode(state)) flags += 'P';
  if (state.in_multi) flags += 'x';
  if (state.blocked || state.held) flags += 'b';
  const ClientTracking* tracking = state.tracking.get();
  if (tracking != nullptr && tracking->on) {
    flags += 't';
    if (tracking->broken_redirect) flags += 'R';
    if (tracking->bcast) flags += 'B';
  }
  if (state.watch_state && state.watch_state->dirty.load(std::memory_order_relaxed)) flags += 'd';
  if (state.no_evict) flags += 'e';
  if (state.no_touch) flags += 'T';
  if (flags.empty()) flags = "N";
  return flags;
}

size_t ArgBytes(io::CmdArgs args) {
  size_t n = 0;
  for (std::string_view a : args) n += a.size();
  return n;
}

// Redis's multi-mem: the queued commands' argument bytes plus one object pointer per argument.
size_t MultiMem(const ConnState& state) {
  size_t n = 0;
  for (const QueuedCmd& q : state.queued) {
    for (const std::string& a : q.args) n += a.size() + sizeof(void*);
  }
  return n;
}

// The memory of the connection's server-side state beyond the io::Connection: the state
// itself, queued MULTI commands, WATCHed keys, subscriptions and BCAST prefixes.
size_t StateMemory(const ConnState& state) {
  size_t n = sizeof(ConnState) + state.name.capacity() + state.lib_name.capacity() +
             state.lib_ver.capacity() + state.queued.capacity() * sizeof(QueuedCmd) +
             state.watched.capacity() * sizeof(WatchedKey) +
             state.pending.capacity() * sizeof(PendingCmd);
  for (const QueuedCmd& q : state.queued) {
    n += q.args.capacity() * sizeof(std::string);
    for (const std::string& a : q.args) n += a.capacity() > 15 ? a.capacity() + 1 : 0;
  }
  for (const WatchedKey& w : state.watched) n += w.key.capacity() > 15 ? w.key.capacity() + 1 : 0;
  if (state.pubsub) {
    n += sizeof(ClientSubscriptions);
    for (const PubSubNameSet& set : state.pubsub->names) {
      n += set.capacity() * (sizeof(std::string) + 1);
      for (const std::string& name : set) n += name.capacity() > 15 ? name.capacity() + 1 : 0;
    }
  }
  if (state.tracking) {
    n += sizeof(ClientTracking) + state.tracking->deferred.capacity();
    for (const std::string& p : state.tracking->prefixes) n += sizeof(std::string) + p.size();
  }
  for (const io::ReplyBuilder& rb : state.shard_replies) n += sizeof(rb) + rb.capacity();
  return n;
}

}  // namespace

// Returns the CLIENT LIST line of `state` (without the trailing newline), Redis 7.0.15's fields
// in its order, then CLIENT SETINFO's (Redis 7.2). `self`: the line of the client that asks
// (its qbuf holds the running command, as Redis's). REQUIRES: called on the connection's engine.
std::string ClientInfoLine(const ConnState& state, int64_t now_ms, bool self) {
  const io::Connection& c = *state.conn;
  int64_t age = (now_ms - c.created_ms()) / 1000;
  int64_t idle = (now_ms - c.last_command_ms()) / 1000;
  std::string_view cmd = state.last_cmd ? std::string_view(state.last_cmd->name) : "NULL";
  size_t subs[kPubSubKinds] = {};
  if (state.pubsub) {
    for (size_t k = 0; k < kPubSubKinds; ++k) subs[k] = state.pubsub->names[k].size();
  }
  const ClientTracking* tracking = state.tracking.get();
  const bool tracking_on = tracking != nullptr && tracking->on;
  const int64_t multi = state.in_multi ? static_cast<int64_t>(state.queued.size()) : -1;
  const size_t qbuf = self ? c.unconsumed_input() : c.query_buffer_size();
  // The running (or parked) command's arguments, else those of a partly received one.
  const size_t argv_mem =
      !state.running_args.empty() ? ArgBytes(state.running_args) : c.partial_arg_bytes();
  const size_t multi_mem = MultiMem(state);
  const size_t rbs = c.reply_buffer_capacity();
  std::string_view events = c.reading() ? (c.writing() ? "rw" : "r") : (c.writing() ? "w" : "");
  return StrCat(
      "id=", c.id(), " addr=", c.remote_address(), " laddr=", c.local_address(), " fd=", c.fd(),
      " name=", state.name, " age=", age, " idle=", idle, " flags=", ClientFlags(state),
      " db=", state.db, " sub=", subs[0], " psub=", subs[1], " ssub=", subs[2], " multi=", multi,
      " qbuf=", qbuf, " qbuf-free=", c.query_buffer_free(), " argv-mem=", argv_mem,
      " multi-mem=", multi_mem, " rbs=", rbs, " rbp=", rbs, " obl=", c.reply_buffer_used(),
      " oll=", c.unsent_buffers(), " omem=", c.unsent_output(),
      " tot-mem=", c.memory_bytes() + StateMemory(state), " events=", events, " cmd=", cmd,
      " user=", state.user_name,
      " redir=", tracking_on ? static_cast<int64_t>(tracking->redirect) : int64_t{-1},
      " resp=", static_cast<int>(c.resp_version()), " lib-name=", state.lib_name,
      " lib-ver=", state.lib_ver);
}

namespace {

awaitable<void> ClientList(CmdArgs args, ConnCmdContext& ctx) {
  ArgParser parser(args, 2);
  std::vector<uint64_t> ids;
  bool filter_ids = false;
  std::optional<bool> want_pubsub;  // TYPE: clients in subscribed mode are of type pubsub
  if (parser.Check("TYPE")) {
    std::string type = AsciiStrToLower(parser.Next());
    if (type != "normal" && type != "master" && type != "replica" && type != "pubsub") {
      co_return ctx.rb.SendError(StrCat("ERR Unknown client type '", type, "'"));
    }
    if (type != "normal" && type != "pubsub") co_return ctx.rb.SendVerbatim("");
    want_pubsub = type == "pubsub";
  } else if (parser.Check("ID")) {
    filter_ids = true;
    while (parser.HasNext()) {
      auto id = ParseInt64(parser.Next());
      if (!id || *id <= 0) co_return ctx.rb.SendError("ERR Invalid client ID");
      ids.push_back(static_cast<uint64_t>(*id));
    }
  }
  if (parser.HasNext() || parser.HasError()) co_return ctx.SendStatus(OpStatus::kSyntaxError);
  co_await ctx.clients().AcceptPending();
  std::vector<std::string> per_engine(ctx.pool().size());
  int64_t now = ctx.now_ms;
  co_await ctx.pool().AwaitAll([&](unsigned i) {
    for (ConnState* st : ctx.clients().on(i)) {
      if (filter_ids &&
          std::find(ids.begin(), ids.end(), st->conn->id()) == ids.end()) {
        continue;
      }
      if (want_pubsub && *want_pubsub != InSubscribedMode(*st)) continue;
      StrAppend(&per_engine[i], ClientInfoLine(*st, now, st == &ctx.state), "\n");
    }
  });
  ctx.rb.SendVerbatim(absl::StrJoin(per_engine, ""));
}

// CLIENT KILL ip:port | CLIENT KILL <filter value> ... with the filters ID, ADDR, LADDR, TYPE
// (normal, pubsub; master and replica match nobody), USER, MAXAGE (seconds: clients connected
// longer than that) and SKIPME yes|no (default yes); a client is killed when it passes them all.
awaitable<void> ClientKill(CmdArgs args, ConnCmdContext& ctx) {
  std::optional<uint64_t> id;
  std::string addr, laddr, user;
  std::optional<bool> want_pubsub;  // TYPE normal / pubsub
  bool type_matches_nobody = false;  // TYPE master / replica / slave: there are none
  int64_t max_age_s = 0;             // 0: any age
  bool skipme = true;
  bool old_form = args.size() == 3;
  if (old_form) {
    addr = std::string(args[2]);
  } else {
    ArgParser parser(args, 2);
    while (parser.HasNext()) {
      if (parser.Check("ID")) {
        auto v = ParseInt64(parser.Next());
        if (!v || *v <= 0) co_return ctx.rb.SendError("ERR client-id should be greater than 0");
        id = static_cast<uint64_t>(*v);
      } else if (parser.Check("ADDR")) {
        addr = std::string(parser.Next());
      } else if (parser.Check("LADDR")) {
        laddr = std::string(parser.Next());
      } else if (parser.Check("SKIPME")) {
        std::string v = AsciiStrToLower(parser.Next());
        if (v != "yes" && v != "no") co_return ctx.SendStatus(OpStatus::kSyntaxError);
        skipme = v == "yes";
      } else if (parser.Check("TYPE")) {
        std::string type = AsciiStrToLower(parser.Next());
        if (parser.HasError()) break;
        if (type == "normal" || type == "pubsub") {
          want_pubsub = type == "pubsub";
        } else if (type == "master" || type == "replica" || type == "slave") {
          type_matches_nobody = true;
        } else {
          co_return ctx.rb.SendError(StrCat("ERR Unknown client type '", type, "'"));
        }
      } else if (parser.Check("USER")) {
        user = std::string(parser.Next());
        if (parser.HasError()) break;
        if (!ctx.services().acl.Find(user)) {
          co_return ctx.rb.SendError(StrCat("ERR No such user '", user, "'"));
        }
      } else if (parser.Check("MAXAGE")) {
        std::optional<int64_t> v = ParseInt64(parser.Next());
        if (parser.HasError()) break;
        if (!v || *v < 0) co_return ctx.rb.SendError("ERR maxage is not an integer or out of range");
        max_age_s = *v;
      } else {
        co_return ctx.SendStatus(OpStatus::kSyntaxError);
      }
    }
    if (parser.HasError()) co_return ctx.SendStatus(OpStatus::kSyntaxError);
  }
  co_await ctx.clients().AcceptPending();
  ConnState* me = &ctx.state;
  const int64_t now_ms = ctx.now_ms;
  std::atomic<int64_t> killed{0};
  co_await ctx.pool().AwaitAll([&](unsigned i) {
    if (type_matches_nobody) return;
    for (ConnState* st : ctx.clients().on(i)) {
      if (skipme && !old_form && st == me) continue;
      if (id && st->conn->id() != *id) continue;
      if (!addr.empty() && st->conn->remote_address() != addr) continue;
      if (!laddr.empty() && st->conn->local_address() != laddr) continue;
      if (want_pubsub && *want_pubsub != InSubscribedMode(*st)) continue;
      if (!user.empty() && st->user_name != user) continue;
      if (max_age_s > 0 && (now_ms - st->conn->created_ms()) / 1000 <= max_age_s) continue;
      if (st == me) {
        st->conn->RequestClose();
      } else {
        st->conn->Shutdown();
      }
      killed.fetch_add(1);
    }
  });
  if (old_form) {
    if (killed == 0) co_return ctx.rb.SendError("ERR No such client");
    co_return ctx.rb.SendOk();
  }
  ctx.rb.SendLong(killed);
}

// CLIENT UNBLOCK client-id [TIMEOUT|ERROR]
awaitable<void> ClientUnblock(CmdArgs args, ConnCmdContext& ctx) {
  if (args.size() > 4) co_return ctx.rb.SendError(SubcommandSyntaxText(args[0], args[1]));
  WakeReason reason = WakeReason::kTimeout;
  if (args.size() == 4) {
    if (EqualsIgnoreCase(args[3], "ERROR")) {
      reason = WakeReason::kUnblockError;
    } else if (!EqualsIgnoreCase(args[3], "TIMEOUT")) {
      co_return ctx.SendStatus(OpStatus::kUnblockReason);
    }
  }
  std::optional<int64_t> id = ParseInt64(args[2]);
  if (!id) co_return ctx.SendStatus(OpStatus::kNotAnInteger);
  std::atomic<int64_t> unblocked{0};
  // The blocked client lives on its own engine: look for it there, and interrupt it there.
  co_await ctx.pool().AwaitAll([&](unsigned i) {
    for (ConnState* st : ctx.clients().on(i)) {
      if (static_cast<int64_t>(st->conn->id()) != *id || !st->blocked) continue;
      if (st->blocked->Interrupt(reason)) unblocked.fetch_add(1, std::memory_order_relaxed);
    }
  });
  ctx.rb.SendLong(unblocked.load());
}

// CLIENT ID
void ClientId(CmdArgs, ConnCmdContext& ctx) {
  ctx.rb.SendLong(static_cast<int64_t>(ctx.state.conn->id()));
}

// CLIENT GETNAME
void ClientGetName(CmdArgs, ConnCmdContext& ctx) {
  if (ctx.state.name.empty()) return ctx.rb.SendNull();
  ctx.rb.SendBulk(ctx.state.name);
}

// CLIENT SETNAME connection-name
void ClientSetName(CmdArgs args, ConnCmdContext& ctx) {
  if (!ValidClientName(args[2])) {
    return ctx.SendStatus(OpStatus::kBadClientName);
  }
  ctx.state.name = std::string(args[2]);
  ctx.rb.SendOk();
}

// CLIENT SETINFO LIB-NAME libname | LIB-VER libver
void ClientSetInfo(CmdArgs args, ConnCmdContext& ctx) {
  std::string attr = AsciiStrToUpper(args[2]);
  if (attr != "LIB-NAME" && attr != "LIB-VER") {
    return ctx.rb.SendError(StrCat("ERR Unrecognized option '", args[2], "'"));
  }
  if (!ValidClientName(args[3]) && !args[3].empty()) {
    return ctx.rb.SendError(
        StrCat("ERR ", args[2], " cannot contain spaces, newlines or special characters."));
  }
  (attr == "LIB-NAME" ? ctx.state.lib_name : ctx.state.lib_ver) = std::string(args[3]);
  ctx.rb.SendOk();
}

// CLIENT INFO
void ClientInfo(CmdArgs args, ConnCmdContext& ctx) {
  const io::CmdArgs outer = ctx.state.running_args;  // EXEC's, when it runs this
  ctx.state.running_args = args;  // its own argv-mem, as Redis counts it
  ctx.rb.SendVerbatim(StrCat(ClientInfoLine(ctx.state, ctx.now_ms, true), "\n"));
  ctx.state.running_args = outer;
}

// CLIENT NO-EVICT ON|OFF and CLIENT NO-TOUCH ON|OFF
template <bool ConnState::*kMode>
void ClientSetMode(CmdArgs args, ConnCmdContext& ctx) {
  std::string v = AsciiStrToLower(args[2]);
  if (v != "on" && v != "off") return ctx.SendStatus(OpStatus::kSyntaxError);
  ctx.state.*kMode = v == "on";
  ctx.rb.SendOk();
}

// CLIENT HELP
void ClientHelp(CmdArgs, ConnCmdContext& ctx) {
  static constexpr std::string_view kHelp[] = {
      "CLIENT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "CACHING (YES|NO)",
      "    Enable/disable tracking of the keys for next command in OPTIN/OPTOUT modes.",
      "GETREDIR", "    Return the client ID we are redirecting to when tracking is enabled.",
      "GETNAME", "    Return the name of the current connection.",
      "ID", "    Return the ID of the current connection.",
      "INFO", "    Return information about the current client connection.",
      "KILL <ip:port>", "    Kill connection made from <ip:port>.",
      "KILL <option> <value> [<option> <value> [...]]",
      "    Kill connections. Options are: ID <client-id>, ADDR <ip:port>, LADDR <ip:port>,",
      "    SKIPME (YES|NO).",
      "LIST [options ...]", "    Return information about client connections. Options:",
      "    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)", "    * ID <client-id> [<client-id> ...]",
      "NO-EVICT (ON|OFF)", "    Protect current client connection from eviction.",
      "NO-TOUCH (ON|OFF)", "    Will not touch LRU/LFU stats when this mode is on.",
      "PAUSE <timeout> [WRITE|ALL]",
      "    Suspend all, or just write, clients for <timeout> milliseconds.",
      "REPLY (ON|OFF|SKIP)", "    Control the replies sent to the current connection.",
      "SETINFO <option> <value>", "    Set client meta attr. Options are: LIB-NAME, LIB-VER.",
      "SETNAME <name>", "    Assign the name <name> to the current connection.",
      "UNBLOCK <clientid> [TIMEOUT|ERROR]",
      "    Unblock the specified blocked client.",
      "TRACKING (ON|OFF) [REDIRECT <id>] [BCAST] [PREFIX <prefix> [...]]",
      "         [OPTIN] [OPTOUT] [NOLOOP]",
      "    Control server assisted client side caching.",
      "TRACKINGINFO", "    Report tracking status for the current connection.",
      "UNPAUSE", "    Stop the current client pause, resuming traffic.",
      "HELP", "    Print this help.",
  };
  SendHelp(ctx.rb, kHelp);
}

// Returns the database SELECT switches to, or nullopt for an invalid index.
std::optional<unsigned> SelectTarget(CmdArgs args, unsigned num_dbs) {
  std::optional<int64_t> index = ParseInt64(args[1]);
  if (!index || *index < 0 || *index >= static_cast<int64_t>(num_dbs)) return std::nullopt;
  return static_cast<unsigned>(*index);
}

// CLIENT's subcommands (Redis 7.0's metadata; SETINFO and NO-TOUCH as Redis 7.2 has them,
// since clients send SETINFO when they connect).
std::vector<CommandSpec> ClientSubcommands() {
  constexpr uint32_t kBase = kCmdNoScript | kCmdLoading | kCmdStale;
  constexpr uint32_t kAdmin = kCmdAdmin | kBase;
  const std::vector<std::string_view> kCats = {"slow", "connection"};
  const std::vector<std::string_view> kAdminCats = {"admin", "slow", "dangerous", "connection"};
  auto sub = [](std::string name, int arity, uint32_t flags, std::vector<std::string_view> cats,
                std::string_view since, std::string_view summary) {
    return MakeSubcommand(std::move(name), arity, flags, std::move(cats), since, summary);
  };
  std::vector<CommandSpec> subs;
  subs.push_back(WithConnHandler(
      sub("id", 2, kBase, kCats, "5.0.0", "Returns the unique client ID of the connection."),
      ClientId));
  subs.push_back(WithConnHandler(
      sub("getname", 2, kBase, kCats, "2.6.9", "Returns the name of the connection."),
      ClientGetName));
  subs.push_back(WithConnHandler(
      sub("setname", 3, kBase, kCats, "2.6.9", "Sets the connection name."), ClientSetName));
  subs.push_back(WithConnHandler(
      sub("setinfo", 4, kBase, kCats, "7.2.0",
          "Sets information specific to the client or connection."),
      ClientSetInfo));
  CommandSpec info = WithConnHandler(
      sub("info", 2, kBase, kCats, "6.2.0", "Returns information about the connection."),
      ClientInfo);
  info.tips = {"nondeterministic_output"};
  subs.push_back(std::move(info));
  CommandSpec list = WithCoordHandler(
      sub("list", -2, kAdmin, kAdminCats, "2.4.0", "Lists open connections."), ClientList);
  list.tips = {"nondeterministic_output"};
  subs.push_back(std::move(list));
  subs.push_back(WithCoordHandler(
      sub("kill", -3, kAdmin, kAdminCats, "2.4.0", "Terminates open connections."),
      ClientKill));
  subs.push_back(WithCoordHandler(
      sub("unblock", -3, kAdmin, kAdminCats, "5.0.0",
          "Unblocks a client blocked by a blocking command from a different connection."),
      ClientUnblock));
  subs.push_back(WithConnHandler(
      sub("no-evict", 3, kAdmin, kAdminCats, "7.0.0",
          "Sets the client eviction mode of the connection."),
      ClientSetMode<&ConnState::no_evict>));
  subs.push_back(WithConnHandler(
      sub("no-touch", 3, kBase, kCats, "7.2.0",
          "Controls whether commands sent by the client affect the LRU/LFU of accessed keys."),
      ClientSetMode<&ConnState::no_touch>));
  subs.push_back(WithConnHandler(
      sub("help", 2, kCmdLoading | kCmdStale, kCats, "5.0.0",
          "Returns helpful text about the different subcommands."),
      ClientHelp));
  return subs;
}

}  // namespace

void RegisterConnectionCommands(CommandRegistry* registry) {
  auto conn = [&](std::string name, int arity, uint32_t flags, ConnHandler h,
                  std::vector<std::string_view> cats, std::string_view summary) {
    CommandSpec spec;
    spec.name = std::move(name);
    spec.arity = arity;
    spec.flags = flags;
    spec.kind = HandlerKind::kConn;
    spec.conn_handler = h;
    spec.categories = std::move(cats);
    spec.summary = summary;
    spec.group = "connection";
    return spec;
  };
  // PING, QUIT and RESET also run in RESP2 subscribed mode; QUIT and RESET at once in MULTI.
  constexpr uint32_t kSubscribedOk = kCmdSubscribedOk;
  constexpr uint32_t kControl = kCmdSubscribedOk | kCmdMultiControl;
  registry->Register(conn("ping", -1, kCmdFast | kSubscribedOk, CmdPing, {"fast", "connection"},
                          "Returns the server's liveliness response."));
  registry->Register(conn("echo", 2, kCmdFast, CmdEcho, {"fast", "connection"},
                          "Returns the given string."));
  registry->Register(conn("quit", -1,
                          kCmdAllowBusy | kCmdNoScript | kCmdNoAuth | kCmdFast | kCmdLoading | kCmdStale |
                              kControl,
                          CmdQuit, {"fast", "connection"}, "Closes the connection."));
  registry->Register(conn("auth", -2, kCmdNoScript | kCmdLoading | kCmdStale | kCmdFast |
                                          kCmdNoAuth,
                          CmdAuth, {"fast", "connection"}, "Authenticates the connection."));
  registry->Register(conn("hello", -1, kCmdNoScript | kCmdLoading | kCmdStale | kCmdFast |
                                           kCmdNoAuth,
                          CmdHello, {"fast", "connection"}, "Handshakes with the Redis server."));
  CommandSpec select = conn("select", 2, kCmdLoading | kCmdStale | kCmdFast, CmdSelect,
                            {"fast", "connection"}, "Changes the selected database.");
  select.switch_db = SelectTarget;
  registry->Register(std::move(select));
  registry->Register(conn("reset", 1,
                          kCmdNoScript | kCmdLoading | kCmdStale | kCmdFast | kCmdNoAuth |
                              kControl,
                          CmdReset, {"fast", "connection"}, "Resets the connection."));

  CommandSpec client;
  client.name = "client";
  client.arity = -2;
  client.kind = HandlerKind::kConn;
  client.categories = {"slow"};
  client.summary = "A container for client connection commands.";
  client.since = "2.4.0";
  client.group = "connection";
  client.subcommands = ClientSubcommands();
  for (CommandSpec& sub : ClientFlowSubcommands()) client.subcommands.push_back(std::move(sub));
  for (CommandSpec& sub : ClientTrackingSubcommands()) {
    client.subcommands.push_back(std::move(sub));
  }
  registry->Register(std::move(client));
}

}  // namespace dashkv
