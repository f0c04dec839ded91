// ROLE, REPLICAOF, SLAVEOF: the replication commands a server without replicas answers. dashkv
// is always a master and serves no replicas (it has no replication stream yet): ROLE says so
// as Redis 7.0 does for a master without replicas, REPLICAOF NO ONE (already a master) is OK,
// and REPLICAOF host port is refused after Redis's own argument checks, with an error that
// says why, instead of being accepted and never replicating.
#include <cstdint>
#include <optional>

#include "core/numbers.h"
#include "core/str_util.h"
#include "server/cmd_args.h"
#include "server/cmd_context.h"
#include "server/command_registry.h"

namespace dashkv {
namespace {

void CmdRole(CmdArgs, ConnCmdContext& ctx) {
  ctx.rb.StartArray(3);
  ctx.rb.SendBulk("master");
  ctx.rb.SendLong(0);  // master_repl_offset: no replication stream
  ctx.rb.SendEmptyArray();  // connected replicas
}

void CmdReplicaOf(CmdArgs args, ConnCmdContext& ctx) {
  if (EqualsIgnoreCase(args[1], "no") && EqualsIgnoreCase(args[2], "one")) {
    return ctx.rb.SendOk();  // already a master
  }
  const std::optional<int64_t> port = ParseInt64(args[2]);
  if (!port || *port < 0 || *port > 65535) return ctx.rb.SendError("ERR Invalid master port");
  ctx.rb.SendError("ERR REPLICAOF is not supported: dashkv does not replicate");
}

CommandSpec ReplicaOfSpec(std::string name, std::string_view since) {
  CommandSpec s = MakeSpec(std::move(name), 3, kCmdAdmin | kCmdNoScript | kCmdStale, 0, 0,
                           {"admin", "slow", "dangerous"}, "server", since,
                           "Make the server a replica of another instance, or promote it as "
                           "master.");
  return WithConnHandler(std::move(s), CmdReplicaOf);
}

}  // namespace

void RegisterReplicationCommands(CommandRegistry* r) {
  r->Register(WithConnHandler(
      MakeSpec("role", 1, kCmdNoScript | kCmdLoading | kCmdStale | kCmdFast, 0, 0,
               {"admin", "fast", "dangerous"}, "server", "2.8.12",
               "Return the role of the instance in the context of replication"),
      CmdRole));
  r->Register(ReplicaOfSpec("replicaof", "5.0.0"));
  r->Register(ReplicaOfSpec("slaveof", "1.0.0"));
}

}  // namespace dashkv
