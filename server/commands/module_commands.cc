// MODULE LIST | LOAD path [arg ...] | LOADEX path [CONFIG name value ...] [ARGS arg ...] |
// UNLOAD name | HELP. dashkv loads no modules: LIST is empty, and LOAD, LOADEX and UNLOAD are
// refused as Redis 7.0 refuses them under its default `enable-module-command no`, with the
// reason in place of the hint about that option (which dashkv does not have).
#include <string_view>

#include "server/cmd_args.h"
#include "server/cmd_context.h"
#include "server/command_registry.h"

namespace dashkv {
namespace {

void ModuleList(CmdArgs, ConnCmdContext& ctx) { ctx.rb.SendEmptyArray(); }

void ModuleRefused(CmdArgs, ConnCmdContext& ctx) {
  ctx.rb.SendError("ERR MODULE command not allowed: dashkv does not load modules");
}

void ModuleHelp(CmdArgs, ConnCmdContext& ctx) {
  static constexpr std::string_view kHelp[] = {
      "MODULE <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "LIST",
      "    Return a list of loaded modules.",
      "LOAD <path> [<arg> ...]",
      "    Load a module library from <path>, passing to it any optional arguments.",
      "LOADEX <path> [[CONFIG NAME VALUE] [CONFIG NAME VALUE]] [ARGS ...]",
      "    Load a module library from <path>, while passing it module configurations and "
      "optional arguments.",
      "UNLOAD <name>",
      "    Unload a module.",
      "HELP",
      "    Prints this help.",
  };
  SendHelp(ctx.rb, kHelp);
}

CommandSpec Sub(std::string name, int arity, std::string_view summary,
                std::string_view since) {
  return MakeSubcommand(std::move(name), arity, kCmdAdmin | kCmdNoScript,
                        {"admin", "slow", "dangerous"}, since, summary);
}

}  // namespace

void RegisterModuleCommands(CommandRegistry* r) {
  CommandSpec s = MakeSpec("module", -2, 0, 0, 0, {"slow"}, "server", "4.0.0",
                           "A container for module commands");
  s.kind = HandlerKind::kConn;
  s.subcommands.push_back(WithConnHandler(
      MakeSubcommand("help", 2, kCmdLoading | kCmdStale, {"slow"}, "5.0.0",
                     "Show helpful text about the different subcommands"),
      ModuleHelp));
  CommandSpec list = WithConnHandler(Sub("list", 2, "List all modules loaded by the server",
                                         "4.0.0"), ModuleList);
  list.tips = {"nondeterministic_output_order"};
  s.subcommands.push_back(std::move(list));
  s.subcommands.push_back(WithConnHandler(Sub("load", -3, "Load a module", "4.0.0"),
                                          ModuleRefused));
  s.subcommands.push_back(WithConnHandler(
      Sub("loadex", -3, "Load a module with extended parameters", "7.0.0"), ModuleRefused));
  s.subcommands.push_back(WithConnHandler(Sub("unload", 3, "Unload a module", "4.0.0"),
                                          ModuleRefused));
  r->Register(std::move(s));
}

}  // namespace dashkv
