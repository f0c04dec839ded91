// MONITOR: the connection receives every command the server runs (server/observability/
// monitor.h).
#include "io/connection.h"
#include "io/engine.h"
#include "server/cmd_context.h"
#include "server/command_registry.h"
#include "server/conn_state.h"
#include "server/observability/monitor.h"
#include "server/services.h"

namespace dashkv {

namespace {

// MONITOR
void CmdMonitor(CmdArgs, ConnCmdContext& ctx) {
  ConnState& state = ctx.state;
  // As Redis 7.0.15: MONITOR is queued by MULTI and refused when EXEC runs it (a transaction
  // expects one reply per command), before the check for a monitor already.
  if (ctx.in_exec) return ctx.rb.SendError("ERR MONITOR isn't allowed for DENY BLOCKING client");
  if (state.monitor) return;  // as Redis: a second MONITOR is ignored, without a reply
  // +OK goes out before the first fed line (feed lines are queued on the connection as they
  // arrive, and this batch's replies would follow them).
  ctx.rb.SendOk();
  state.conn->SendAsync(ctx.rb.buffer());
  ctx.rb.Clear();
  ctx.services().monitor.Add(state.conn->engine().index(), &state);
}

}  // namespace

void RegisterMonitorCommand(CommandRegistry* registry) {
  CommandSpec spec = MakeSpec("monitor", 1, kCmdAdmin | kCmdNoScript | kCmdLoading | kCmdStale,
                              0, 0, {"admin", "slow", "dangerous"}, "server", "1.0.0",
                              "Listens for all requests received by the server in real-time.");
  spec.kind = HandlerKind::kConn;
  spec.conn_handler = CmdMonitor;
  registry->Register(std::move(spec));
}

}  // namespace dashkv
