// CLIENT PAUSE, CLIENT UNPAUSE and CLIENT REPLY.
#include "server/commands/client_flow_commands.h"

#include <limits>

#include "core/base/clock.h"
#include "core/base/parse_int.h"
#include "core/str_util.h"
#include "server/client_pause.h"
#include "server/cmd_context.h"
#include "server/conn_state.h"
#include "server/services.h"

namespace dashkv {

namespace {

// CLIENT PAUSE timeout [WRITE|ALL]
void ClientPauseCmd(CmdArgs args, ConnCmdContext& ctx) {
  if (args.size() > 4) {
    return ctx.rb.SendError(StrCat("ERR unknown subcommand or wrong number of arguments for '",
                                   args[1], "'. Try CLIENT HELP."));
  }
  ClientPause::Kind kind = ClientPause::Kind::kAll;
  if (args.size() == 4) {
    if (EqualsIgnoreCase(args[3], "write")) {
      kind = ClientPause::Kind::kWrite;
    } else if (!EqualsIgnoreCase(args[3], "all")) {
      return ctx.rb.SendError("ERR CLIENT PAUSE mode must be WRITE or ALL");
    }
  }
  std::optional<int64_t> timeout = ParseInt64(args[2]);
  if (!timeout) return ctx.SendStatus(OpStatus::kTimeoutNotInteger);
  if (*timeout < 0) return ctx.SendStatus(OpStatus::kTimeoutNegative);
  const int64_t now = NowMs();
  if (*timeout > std::numeric_limits<int64_t>::max() - now) {
    return ctx.SendStatus(OpStatus::kTimeoutOutOfRange);
  }
  // As Redis, a timeout of 0 pauses nothing (its end is already past).
  ctx.services().pause.Pause(*timeout > 0 ? now + *timeout : 0, kind);
  ctx.rb.SendOk();
}

// CLIENT UNPAUSE
void ClientUnpauseCmd(CmdArgs, ConnCmdContext& ctx) {
  ctx.services().pause.Unpause();
  ctx.rb.SendOk();
}

// CLIENT REPLY ON|OFF|SKIP: OFF and SKIP send no reply themselves; the dispatch drops the
// replies (server/server.cc).
void ClientReplyCmd(CmdArgs args, ConnCmdContext& ctx) {
  if (EqualsIgnoreCase(args[2], "on")) {
    ctx.state.reply_mode = ConnState::ReplyMode::kOn;
    ctx.rb.SendOk();
  } else if (EqualsIgnoreCase(args[2], "off")) {
    ctx.state.reply_mode = ConnState::ReplyMode::kOff;
  } else if (EqualsIgnoreCase(args[2], "skip")) {
    if (ctx.state.reply_mode != ConnState::ReplyMode::kOff) {
      ctx.state.reply_mode = ConnState::ReplyMode::kSkipNext;
    }
  } else {
    ctx.SendStatus(OpStatus::kSyntaxError);
  }
}

}  // namespace

std::vector<CommandSpec> ClientFlowSubcommands() {
  constexpr uint32_t kBase = kCmdNoScript | kCmdLoading | kCmdStale;
  const std::vector<std::string_view> kAdminCats = {"admin", "slow", "dangerous", "connection"};
  std::vector<CommandSpec> subs;
  subs.push_back(WithConnHandler(
      MakeSubcommand("pause", -3, kCmdAdmin | kBase, kAdminCats, "2.9.50",
                     "Suspends commands processing."),
      ClientPauseCmd));
  subs.push_back(WithConnHandler(
      MakeSubcommand("unpause", 2, kCmdAdmin | kBase, kAdminCats, "6.2.0",
                     "Resumes processing commands from paused clients."),
      ClientUnpauseCmd));
  subs.push_back(WithConnHandler(
      MakeSubcommand("reply", 3, kBase, {"slow", "connection"}, "3.2.0",
                     "Instructs the server whether to reply to commands."),
      ClientReplyCmd));
  return subs;
}

}  // namespace dashkv
