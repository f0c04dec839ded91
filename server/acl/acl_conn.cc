#include "server/acl/acl_conn.h"

#include <atomic>

#include "core/base/clock.h"
#include "core/str_util.h"
#include "io/connection.h"
#include "io/engine_pool.h"
#include "server/client_registry.h"
#include "server/command_registry.h"
#include "server/config.h"
#include "server/conn_state.h"
#include "server/pubsub/pubsub.h"
#include "server/services.h"

namespace dashkv {

namespace {

AclContext ContextOf(const ConnState& state, AclContext context) {
  return context == AclContext::kToplevel && state.in_multi ? AclContext::kMulti : context;
}

void AddEntry(const ServerServices& services, const ConnState& state, AclLogEntry entry) {
  entry.updated_ms = NowMs();
  entry.client_info = ClientInfoLine(state, entry.updated_ms, /*self=*/true);
  const int64_t max_len = services.config.acllog_max_len.load(std::memory_order_relaxed);
  services.acl.log().Add(std::move(entry), static_cast<size_t>(std::max<int64_t>(0, max_len)));
}

// Returns whether `sel` keeps allowing everything `state` is subscribed to.
bool KeepsSubscriptions(const AclUser& user, const ClientSubscriptions& subs) {
  auto allowed = [&](std::string_view name, bool pattern) {
    if (AclChannelAllowed(user.root, name, pattern)) return true;
    for (const AclSelector& s : user.selectors) {
      if (AclChannelAllowed(s, name, pattern)) return true;
    }
    return false;
  };
  for (const auto& p : subs.of(PubSubKind::kPattern)) {
    if (!allowed(p, true)) return false;
  }
  for (PubSubKind kind : {PubSubKind::kChannel, PubSubKind::kShardChannel}) {
    for (const auto& c : subs.of(kind)) {
      if (!allowed(c, false)) return false;
    }
  }
  return true;
}

// Returns whether every channel pattern of `before` is still one of `after` (then no
// subscriber can have lost a channel).
bool ChannelsKept(const AclUser& before, const AclUser& after) {
  std::vector<const std::string*> upcoming;
  auto all = [](const AclUser& u, auto fn) {
    if (fn(u.root)) return true;
    for (const AclSelector& s : u.selectors) {
      if (fn(s)) return true;
    }
    return false;
  };
  if (all(after, [](const AclSelector& s) { return s.all_channels; })) return true;
  if (all(before, [](const AclSelector& s) { return s.all_channels; })) return false;
  auto in_after = [&](const std::string& c) {
    return all(after, [&](const AclSelector& s) {
      return std::find(s.channels.begin(), s.channels.end(), c) != s.channels.end();
    });
  };
  return !all(before, [&](const AclSelector& s) {
    return std::any_of(s.channels.begin(), s.channels.end(),
                       [&](const std::string& c) { return !in_after(c); });
  });
}

}  // namespace

void SetConnUser(ConnState& state, AclUserPtr user, uint64_t generation) {
  state.user_name = user->name;
  state.acl_restricted = !user->Unrestricted();
  state.user = std::move(user);
  state.acl_generation = generation;
  state.SetAuthenticated(true);
}

void LogAclDenial(const ServerServices& services, const ConnState& state,
                  const AclVerdict& verdict, const CommandSpec& spec, CmdArgs args,
                  AclContext context) {
  AclLogEntry entry;
  entry.reason = verdict.reason;
  entry.context = ContextOf(state, context);
  entry.object = AclDeniedObject(verdict, spec, args);
  entry.username = state.user_name;
  AddEntry(services, state, std::move(entry));
}

void LogAclAuthFailure(const ServerServices& services, const ConnState& state,
                       std::string_view command, std::string_view username) {
  AclLogEntry entry;
  entry.reason = AclDenied::kAuth;
  entry.context = ContextOf(state, AclContext::kToplevel);
  entry.object = std::string(command);
  entry.username = std::string(username);
  AddEntry(services, state, std::move(entry));
}

std::string AclExecDenial(const ServerServices& services, const ConnState& state,
                          const CommandSpec& spec, CmdArgs args) {
  AclVerdict verdict = state.user != nullptr ? AclCheck(services.acl.rules(), *state.user, spec, args)
                                             : AclVerdict{AclDenied::kCommand, 0};
  if (verdict.reason == AclDenied::kOk) return "";
  LogAclDenial(services, state, verdict, spec, args, AclContext::kMulti);
  std::string_view why = "no permission to execute the command or subcommand";
  if (verdict.reason == AclDenied::kKey) why = "no permission to touch the specified keys";
  if (verdict.reason == AclDenied::kChannel) {
    why = "no permission to access one of the channels used as arguments";
  }
  return StrCat(
      "NOPERM ACLs rules changed between the moment the transaction was accumulated and the "
      "EXEC call. This command is no longer allowed for the following reason: ",
      why);
}

boost::asio::awaitable<void> KillUserClients(const ServerServices& services, ConnState& me,
                                             std::vector<std::string> names) {
  if (names.empty()) co_return;
  co_await services.clients.AcceptPending();
  co_await services.pool.AwaitAll([&](unsigned i) {
    for (ConnState* st : services.clients.on(i)) {
      if (std::find(names.begin(), names.end(), st->user_name) == names.end()) continue;
      if (st == &me) {
        st->conn->RequestClose();
      } else {
        st->conn->Shutdown();
      }
    }
  });
}

boost::asio::awaitable<void> KillRevokedSubscribers(const ServerServices& services,
                                                    ConnState& me, AclUserPtr before,
                                                    AclUserPtr after) {
  if (before == nullptr || ChannelsKept(*before, *after)) co_return;
  co_await services.clients.AcceptPending();
  co_await services.pool.AwaitAll([&](unsigned i) {
    for (ConnState* st : services.clients.on(i)) {
      if (st->user_name != after->name || !st->pubsub || st->pubsub->total() == 0) continue;
      if (KeepsSubscriptions(*after, *st->pubsub)) continue;
      if (st == &me) {
        st->conn->RequestClose();
      } else {
        st->conn->Shutdown();
      }
    }
  });
}

}  // namespace dashkv
