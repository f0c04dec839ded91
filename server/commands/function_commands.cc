// FUNCTION (LOAD, LIST, DELETE, DUMP, RESTORE, FLUSH, STATS, KILL, HELP): the function
// libraries of server/scripting/function_store.h. FCALL and FCALL_RO are registered with EVAL
// (server/commands/script_commands.cc).
#include "core/glob.h"
#include "core/rdb_encoding.h"
#include "core/str_util.h"
#include "server/cmd_context.h"
#include "server/persistence/dump_payload.h"
#include "server/scripting/function_store.h"
#include "server/scripting/script_runner.h"

namespace dashkv {

namespace {

constexpr uint8_t kOpFunction2 = 0xF5;  // RDB_OPCODE_FUNCTION2

// FUNCTION LOAD [REPLACE] code
void FunctionLoad(CmdArgs args, ConnCmdContext& ctx) {
  bool replace = false;
  for (size_t i = 2; i + 1 < args.size(); ++i) {
    if (!EqualsIgnoreCase(args[i], "replace")) {
      return ctx.rb.SendError("ERR Unknown option given: " + std::string(args[i]));
    }
    replace = true;
  }
  auto lib = std::make_shared<FunctionLibrary>();
  lib->code = std::string(args.back());
  std::string err = ScriptRunner::LoadLibrary(lib.get());
  if (err.empty()) err = ctx.services().functions.Add(lib, replace);
  if (!err.empty()) return ctx.rb.SendError("ERR " + err);
  ctx.rb.SendBulk(lib->name);
}

// FUNCTION LIST [LIBRARYNAME pattern] [WITHCODE]
void FunctionList(CmdArgs args, ConnCmdContext& ctx) {
  bool with_code = false;
  std::optional<std::string_view> pattern;
  for (size_t i = 2; i < args.size(); ++i) {
    if (EqualsIgnoreCase(args[i], "withcode") && !with_code) {
      with_code = true;
    } else if (EqualsIgnoreCase(args[i], "libraryname") && !pattern) {
      if (i + 1 >= args.size()) {
        return ctx.rb.SendError("ERR library name argument was not given");
      }
      pattern = args[++i];
    } else {
      return ctx.rb.SendError("ERR Unknown argument " + std::string(args[i]));
    }
  }
  std::vector<std::shared_ptr<const FunctionLibrary>> libs;
  for (auto& lib : ctx.services().functions.Libraries()) {
    if (!pattern || GlobMatch(*pattern, lib->name, GlobCase::kNoCase)) libs.push_back(lib);
  }
  io::ReplyBuilder& rb = ctx.rb;
  rb.StartArray(libs.size());
  for (const auto& lib : libs) {
    rb.StartMap(with_code ? 4 : 3);
    rb.SendBulk("library_name");
    rb.SendBulk(lib->name);
    rb.SendBulk("engine");
    rb.SendBulk("LUA");
    rb.SendBulk("functions");
    rb.StartArray(lib->functions.size());
    for (const auto& fn : lib->functions) {
      rb.StartMap(3);
      rb.SendBulk("name");
      rb.SendBulk(fn->name);
      rb.SendBulk("description");
      if (fn->description) {
        rb.SendBulk(*fn->description);
      } else {
        rb.SendNull();
      }
      rb.SendBulk("flags");
      std::vector<std::string_view> flags;
      if (fn->flags.no_writes) flags.push_back("no-writes");
      if (fn->flags.allow_oom) flags.push_back("allow-oom");
      if (fn->flags.allow_stale) flags.push_back("allow-stale");
      if (fn->flags.no_cluster) flags.push_back("no-cluster");
      if (fn->flags.allow_cross_slot_keys) flags.push_back("allow-cross-slot-keys");
      rb.StartSet(flags.size());
      for (std::string_view f : flags) rb.SendSimpleString(f);
    }
    if (with_code) {
      rb.SendBulk("library_code");
      rb.SendBulk(lib->code);
    }
  }
}

void FunctionDelete(CmdArgs args, ConnCmdContext& ctx) {
  if (!ctx.services().functions.Delete(args[2])) {
    return ctx.rb.SendError("ERR Library not found");
  }
  ctx.rb.SendOk();
}

// FUNCTION DUMP: every library as a FUNCTION2 record, then the DUMP footer.
void FunctionDump(CmdArgs, ConnCmdContext& ctx) {
  std::string payload;
  for (const auto& lib : ctx.services().functions.Libraries()) {
    payload.push_back(static_cast<char>(kOpFunction2));
    AppendRdbString(&payload, lib->code, /*compress=*/true);
  }
  AppendDumpFooter(&payload);
  ctx.rb.SendBulk(payload);
}

// FUNCTION RESTORE payload [FLUSH|APPEND|REPLACE]
void FunctionRestore(CmdArgs args, ConnCmdContext& ctx) {
  FunctionStore::RestorePolicy policy = FunctionStore::RestorePolicy::kAppend;
  if (args.size() == 4) {
    if (EqualsIgnoreCase(args[3], "flush")) {
      policy = FunctionStore::RestorePolicy::kFlush;
    } else if (EqualsIgnoreCase(args[3], "replace")) {
      policy = FunctionStore::RestorePolicy::kReplace;
    } else if (!EqualsIgnoreCase(args[3], "append")) {
      return ctx.rb.SendError("ERR Wrong restore policy given, value should be either FLUSH, "
                              "APPEND or REPLACE.");
    }
  } else if (args.size() > 4) {
    return ctx.rb.SendError("ERR Wrong restore policy given, value should be either FLUSH, "
                            "APPEND or REPLACE.");
  }
  std::string_view payload = args[2];
  if (!VerifyDumpPayload(payload)) {
    return ctx.rb.SendError("ERR DUMP payload version or checksum are wrong");
  }
  RdbReader reader(payload.substr(0, payload.size() - kDumpFooterSize));
  std::vector<std::shared_ptr<FunctionLibrary>> libs;
  while (reader.remaining() > 0) {
    absl::StatusOr<uint8_t> op = reader.ReadByte();
    if (!op.ok() || *op != kOpFunction2) {
      return ctx.rb.SendError("ERR given type is not a function");
    }
    absl::StatusOr<std::string> code = reader.ReadString();
    if (!code.ok()) return ctx.rb.SendError("ERR Failed loading library");
    auto lib = std::make_shared<FunctionLibrary>();
    lib->code = std::move(*code);
    if (std::string err = ScriptRunner::LoadLibrary(lib.get()); !err.empty()) {
      return ctx.rb.SendError("ERR " + err);
    }
    libs.push_back(std::move(lib));
  }
  std::string err = ctx.services().functions.Restore(std::move(libs), policy);
  if (!err.empty()) return ctx.rb.SendError("ERR " + err);
  ctx.rb.SendOk();
}

// FUNCTION FLUSH [ASYNC|SYNC]
void FunctionFlush(CmdArgs args, ConnCmdContext& ctx) {
  if (args.size() > 3 || (args.size() == 3 && !EqualsIgnoreCase(args[2], "sync") &&
                          !EqualsIgnoreCase(args[2], "async"))) {
    return ctx.rb.SendError("ERR FUNCTION FLUSH only supports SYNC|ASYNC option");
  }
  ctx.services().functions.Flush();
  ctx.rb.SendOk();
}

// FUNCTION STATS: no script is ever seen running from outside (a run is one step).
void FunctionStats(CmdArgs, ConnCmdContext& ctx) {
  const FunctionStore& store = ctx.services().functions;
  io::ReplyBuilder& rb = ctx.rb;
  rb.StartMap(2);
  rb.SendBulk("running_script");
  rb.SendNull();
  rb.SendBulk("engines");
  rb.StartMap(1);
  rb.SendBulk("LUA");
  rb.StartMap(2);
  rb.SendBulk("libraries_count");
  rb.SendLong(static_cast<int64_t>(store.Libraries().size()));
  rb.SendBulk("functions_count");
  rb.SendLong(static_cast<int64_t>(store.num_functions()));
}

void FunctionKill(CmdArgs, ConnCmdContext& ctx) {
  ctx.services().scripting.Kill(/*function=*/true, ctx);
}

void FunctionHelp(CmdArgs, ConnCmdContext& ctx) {
  static constexpr std::string_view kHelp[] = {
      "FUNCTION <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "LOAD [REPLACE] <FUNCTION CODE>",
      "    Create a new library with the given library name and code.",
      "DELETE <LIBRARY NAME>",
      "    Delete the given library.",
      "LIST [LIBRARYNAME PATTERN] [WITHCODE]",
      "    Return general information on all the libraries:",
      "    * Library name",
      "    * The engine used to run the Library",
      "    * Library description",
      "    * Functions list",
      "    * Library code (if WITHCODE is given)",
      "    It also possible to get only function that matches a pattern using LIBRARYNAME",
      "    argument.",
      "STATS",
      "    Return information about the current function running:",
      "    * Function name",
      "    * Command used to run the function",
      "    * Duration in MS that the function is running",
      "    If no function is running, return nil",
      "    In addition, returns a list of available engines.",
      "KILL",
      "    Kill the current running function.",
      "FLUSH [ASYNC|SYNC]",
      "    Delete all the libraries.",
      "    When called without the optional mode argument, the behavior is determined by the",
      "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
      "    * ASYNC: Asynchronously flush the libraries.",
      "    * SYNC: Synchronously flush the libraries.",
      "DUMP",
      "    Return a serialized payload representing the current libraries, can be restored "
      "using FUNCTION RESTORE command",
      "RESTORE <PAYLOAD> [FLUSH|APPEND|REPLACE]",
      "    Restore the libraries represented by the given payload, it is possible to give a "
      "restore policy to",
      "    control how to handle existing libraries (default APPEND):",
      "    * FLUSH: delete all existing libraries.",
      "    * APPEND: appends the restored libraries to the existing libraries. On collision, "
      "abort.",
      "    * REPLACE: appends the restored libraries to the existing libraries, On collision, "
      "replace the old libraries with the new libraries (notice that even on this option "
      "there is a chance of failure in case of functions name collision with another "
      "library).",
      "HELP",
      "    Print this help.",
  };
  SendHelp(ctx.rb, kHelp);
}

std::vector<CommandSpec> FunctionSubcommands() {
  const std::vector<std::string_view> kWrite = {"write", "slow", "scripting"};
  const std::vector<std::string_view> kSlow = {"slow", "scripting"};
  std::vector<CommandSpec> subs;
  auto add = [&](std::string name, int arity, uint32_t flags, std::vector<std::string_view> cats,
                 std::string_view summary, ConnHandler handler) {
    subs.push_back(WithConnHandler(
        MakeSubcommand(std::move(name), arity, flags, std::move(cats), "7.0.0", summary),
        handler));
  };
  add("delete", 3, kCmdWrite | kCmdNoScript, kWrite, "Deletes a library and its functions.",
      FunctionDelete);
  add("dump", 2, kCmdNoScript, kSlow, "Dumps all libraries into a serialized binary payload.",
      FunctionDump);
  add("flush", -2, kCmdWrite | kCmdNoScript, kWrite, "Deletes all libraries and functions.",
      FunctionFlush);
  add("help", 2, kCmdLoading | kCmdStale, kSlow, "Returns helpful text about the different "
      "subcommands.", FunctionHelp);
  add("kill", 2, kCmdNoScript | kCmdAllowBusy, kSlow, "Terminates a function during execution.",
      FunctionKill);
  add("list", -2, kCmdNoScript, kSlow, "Returns information about all libraries.", FunctionList);
  add("load", -3, kCmdWrite | kCmdDenyOom | kCmdNoScript, kWrite,
      "Creates a library.", FunctionLoad);
  add("restore", -3, kCmdWrite | kCmdDenyOom | kCmdNoScript, kWrite,
      "Restores all libraries from a payload.", FunctionRestore);
  add("stats", 2, kCmdNoScript | kCmdAllowBusy, kSlow,
      "Returns information about a function during execution.", FunctionStats);
  return subs;
}

}  // namespace

void RegisterFunctionCommands(CommandRegistry* r) {
  CommandSpec s = MakeSpec("function", -2, 0, 0, 0, {"slow"}, "scripting", "7.0.0",
                           "A container for function commands.");
  s.kind = HandlerKind::kConn;
  s.subcommands = FunctionSubcommands();
  r->Register(std::move(s));
}

}  // namespace dashkv
