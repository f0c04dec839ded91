// The ACL's connection side: who a connection runs as, logging its denials and failed AUTHs,
// and closing the connections of users that are deleted or lose channels they listen to.
// Thread: the connection's thread (KillClients hops to every engine).
#pragma once

#include <utility>  // before asio: awaitable.hpp uses std::exchange

#include <boost/asio/awaitable.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "server/acl/acl_check.h"
#include "server/acl/acl_registry.h"

namespace dashkv {

class ConnState;
struct CommandSpec;
struct ServerServices;

// Returns the CLIENT LIST line of `state` (server/commands/connection_commands.cc); `self`:
// the line of the client whose command runs (CLIENT INFO, the ACL log).
std::string ClientInfoLine(const ConnState& state, int64_t now_ms, bool self);

// Makes `state` run as `user` (authenticated).
void SetConnUser(ConnState& state, AclUserPtr user, uint64_t generation);

// Adds an ACL LOG entry for a refused call.
void LogAclDenial(const ServerServices& services, const ConnState& state,
                  const AclVerdict& verdict, const CommandSpec& spec, CmdArgs args,
                  AclContext context);
// Adds an ACL LOG entry for a failed AUTH or HELLO AUTH as `username`; `command`: the name
// as the client sent it (the entry's object).
void LogAclAuthFailure(const ServerServices& services, const ConnState& state,
                       std::string_view command, std::string_view username);

// Checks a command queued in MULTI again at EXEC (its user's rules may have changed since);
// returns "" or the -NOPERM text it answers instead of running, after logging it (context
// "multi").
std::string AclExecDenial(const ServerServices& services, const ConnState& state,
                          const CommandSpec& spec, CmdArgs args);

// Closes the connections authenticated as one of `names` (`me`, if among them, after its
// reply).
boost::asio::awaitable<void> KillUserClients(const ServerServices& services, ConnState& me,
                                             std::vector<std::string> names);
// After ACL SETUSER changed `before` into `after`: closes the connections of that user
// subscribed to a channel or pattern `after` no longer allows, as Redis 7.0 does.
boost::asio::awaitable<void> KillRevokedSubscribers(const ServerServices& services,
                                                    ConnState& me, AclUserPtr before,
                                                    AclUserPtr after);

}  // namespace dashkv
