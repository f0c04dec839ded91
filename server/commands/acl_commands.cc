// ACL: SETUSER GETUSER DELUSER LIST USERS WHOAMI CAT LOG GENPASS DRYRUN LOAD SAVE HELP, on the
// server's AclRegistry (server/acl/acl_registry.h).
#include <random>

#include "core/base/parse_int.h"
#include "core/str_util.h"
#include "server/acl/acl_conn.h"
#include "server/cmd_context.h"
#include "server/command_registry.h"
#include "server/conn_state.h"

namespace dashkv {

namespace {

using boost::asio::awaitable;

std::vector<std::string_view> Rest(CmdArgs args, size_t from) {
  return std::vector<std::string_view>(args.begin() + from, args.end());
}

// ACL SETUSER username [rule [rule ...]]
awaitable<void> AclSetUser(CmdArgs args, ConnCmdContext& ctx) {
  std::vector<std::string_view> ops = Rest(args, 3);
  AclUserPtr before, after;
  std::string err = ctx.services().acl.SetUser(args[2], ops, &before, &after);
  if (!err.empty()) co_return ctx.rb.SendError(StrCat("ERR ", err));
  ctx.rb.SendOk();
  co_await KillRevokedSubscribers(ctx.services(), ctx.state, before, after);
}

// ACL DELUSER username [username ...]
awaitable<void> AclDelUser(CmdArgs args, ConnCmdContext& ctx) {
  std::vector<std::string_view> names = Rest(args, 2);
  for (std::string_view n : names) {
    if (n == "default") co_return ctx.rb.SendError("ERR The 'default' user cannot be removed");
  }
  std::vector<std::string> deleted = ctx.services().acl.DelUsers(names);
  ctx.rb.SendLong(static_cast<int64_t>(deleted.size()));
  co_await KillUserClients(ctx.services(), ctx.state, std::move(deleted));
}

void SendSelectorFields(const AclRules& rules, const AclSelector& sel, io::ReplyBuilder& rb) {
  rb.SendBulk("commands");
  rb.SendBulk(rules.DescribeCommands(sel));
  rb.SendBulk("keys");
  rb.SendBulk(AclRules::DescribeKeys(sel));
  rb.SendBulk("channels");
  rb.SendBulk(AclRules::DescribeChannels(sel));
}

// ACL GETUSER username
void AclGetUser(CmdArgs args, ConnCmdContext& ctx) {
  AclUserPtr user = ctx.services().acl.Find(args[2]);
  if (user == nullptr) return ctx.rb.SendNull();
  const AclRules& rules = ctx.services().acl.rules();
  io::ReplyBuilder& rb = ctx.rb;
  rb.StartMap(6);
  rb.SendBulk("flags");
  std::vector<std::string_view> flags = {user->enabled ? "on" : "off"};
  if (user->nopass) flags.push_back("nopass");
  if (user->sanitize == AclSanitize::kSkip) flags.push_back("skip-sanitize-payload");
  if (user->sanitize == AclSanitize::kSanitize) flags.push_back("sanitize-payload");
  rb.StartArray(flags.size());
  for (std::string_view f : flags) rb.SendBulk(f);
  rb.SendBulk("passwords");
  rb.StartArray(user->passwords.size());
  for (const Sha256Digest& d : user->passwords) rb.SendBulk(Sha256Hex(d));
  SendSelectorFields(rules, user->root, rb);
  rb.SendBulk("selectors");
  rb.StartArray(user->selectors.size());
  for (const AclSelector& sel : user->selectors) {
    rb.StartMap(3);
    SendSelectorFields(rules, sel, rb);
  }
}

// ACL LIST
void AclList(CmdArgs, ConnCmdContext& ctx) {
  std::vector<AclUserPtr> users = ctx.services().acl.Users();
  ctx.rb.StartArray(users.size());
  for (const AclUserPtr& u : users) ctx.rb.SendBulk(ctx.services().acl.rules().Describe(*u));
}

// ACL USERS
void AclUsers(CmdArgs, ConnCmdContext& ctx) {
  std::vector<AclUserPtr> users = ctx.services().acl.Users();
  ctx.rb.StartArray(users.size());
  for (const AclUserPtr& u : users) ctx.rb.SendBulk(u->name);
}

// ACL WHOAMI
void AclWhoAmI(CmdArgs, ConnCmdContext& ctx) { ctx.rb.SendBulk(ctx.state.user_name); }

// ACL CAT [category]
void AclCat(CmdArgs args, ConnCmdContext& ctx) {
  if (args.size() > 3) return ctx.rb.SendError(SubcommandSyntaxText(args[0], args[1]));
  if (args.size() == 2) {
    std::span<const std::string_view> cats = AclRules::Categories();
    ctx.rb.StartArray(cats.size());
    for (std::string_view c : cats) ctx.rb.SendBulk(c);
    return;
  }
  if (!AclRules::IsCategory(args[2])) {
    return ctx.rb.SendError(StrCat("ERR Unknown category '", args[2], "'"));
  }
  const std::string category = AsciiStrToLower(args[2]);
  std::vector<std::string_view> names;
  ctx.registry().ForEachSpec([&](const CommandSpec& spec) {
    if (std::find(spec.categories.begin(), spec.categories.end(), category) !=
        spec.categories.end()) {
      names.push_back(spec.name);
    }
  });
  ctx.rb.StartArray(names.size());
  for (std::string_view n : names) ctx.rb.SendBulk(n);
}

// ACL LOG [count | RESET]
void AclLogCmd(CmdArgs args, ConnCmdContext& ctx) {
  if (args.size() > 3) return ctx.rb.SendError(SubcommandSyntaxText(args[0], args[1]));
  AclLog& log = ctx.services().acl.log();
  size_t count = 10;
  if (args.size() == 3) {
    if (EqualsIgnoreCase(args[2], "RESET")) {
      log.Reset();
      return ctx.rb.SendOk();
    }
    std::optional<int64_t> n = ParseInt64(args[2]);
    if (!n) return ctx.SendStatus(OpStatus::kNotAnInteger);
    count = static_cast<size_t>(std::max<int64_t>(0, *n));
  }
  std::vector<AclLogEntry> entries = log.Newest(count);
  const int64_t now = NowMs();
  io::ReplyBuilder& rb = ctx.rb;
  rb.StartArray(entries.size());
  for (const AclLogEntry& e : entries) {
    rb.StartMap(7);
    rb.SendBulk("count");
    rb.SendLong(static_cast<int64_t>(e.count));
    rb.SendBulk("reason");
    rb.SendBulk(AclReasonName(e.reason));
    rb.SendBulk("context");
    rb.SendBulk(AclContextName(e.context));
    rb.SendBulk("object");
    rb.SendBulk(e.object);
    rb.SendBulk("username");
    rb.SendBulk(e.username);
    rb.SendBulk("age-seconds");
    rb.SendDouble(static_cast<double>(now - e.updated_ms) / 1000);
    rb.SendBulk("client-info");
    rb.SendBulk(e.client_info);
  }
}

// ACL GENPASS [bits]
void AclGenPass(CmdArgs args, ConnCmdContext& ctx) {
  if (args.size() > 3) return ctx.rb.SendError(SubcommandSyntaxText(args[0], args[1]));
  int64_t bits = 256;
  if (args.size() == 3) {
    std::optional<int64_t> n = ParseInt64(args[2]);
    if (!n) return ctx.SendStatus(OpStatus::kNotAnInteger);
    if (*n <= 0 || *n > 4096) {
      return ctx.rb.SendError(
          "ERR ACL GENPASS argument must be the number of bits for the output password, a "
          "positive number up to 4096");
    }
    bits = *n;
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::random_device random;  // the kernel's CSPRNG
  std::string out(static_cast<size_t>((bits + 3) / 4), '0');
  for (size_t i = 0; i < out.size(); i += 8) {
    uint32_t r = random();
    for (size_t j = i; j < std::min(out.size(), i + 8); ++j, r >>= 4) out[j] = kHex[r & 15];
  }
  ctx.rb.SendBulk(out);
}

// ACL DRYRUN username command [arg ...]
void AclDryRun(CmdArgs args, ConnCmdContext& ctx) {
  AclUserPtr user = ctx.services().acl.Find(args[2]);
  if (user == nullptr) return ctx.rb.SendError(StrCat("ERR User '", args[2], "' not found"));
  CmdArgs call = args.subspan(3);
  const CommandSpec* spec = ctx.registry().Lookup(call);
  if (spec == nullptr) return ctx.rb.SendError(StrCat("ERR Command '", args[3], "' not found"));
  if (!spec->ArityOk(call.size())) return ctx.rb.SendError(WrongArgsText(spec->name));
  AclVerdict v = AclCheck(ctx.services().acl.rules(), *user, *spec, call);
  switch (v.reason) {
    case AclDenied::kOk:
      return ctx.rb.SendOk();
    case AclDenied::kKey:
      return ctx.rb.SendBulk(StrCat("This user has no permissions to access the '",
                                    call[v.arg_index], "' key"));
    case AclDenied::kChannel:
      return ctx.rb.SendBulk(StrCat("This user has no permissions to access the '",
                                    call[v.arg_index], "' channel"));
    default:
      return ctx.rb.SendBulk(
          StrCat("This user has no permissions to run the '", spec->name, "' command"));
  }
}

constexpr std::string_view kNoAclFile =
    "ERR This Redis instance is not configured to use an ACL file. You may want to specify "
    "users via the ACL SETUSER command and then issue a CONFIG REWRITE (assuming you have a "
    "Redis configuration file set) in order to store users in the Redis configuration.";

// ACL LOAD
awaitable<void> AclLoad(CmdArgs, ConnCmdContext& ctx) {
  if (ctx.config().aclfile.empty()) co_return ctx.rb.SendError(kNoAclFile);
  std::vector<std::string> replaced;
  // Reads a small local file on the connection's thread, as Redis does on its main thread.
  absl::Status st = ctx.services().acl.LoadFile(ctx.config().aclfile, &replaced);
  if (!st.ok()) co_return ctx.rb.SendError(StrCat("ERR ", std::string_view(st.message().data(), st.message().size())));
  ctx.rb.SendOk();
  co_await KillUserClients(ctx.services(), ctx.state, std::move(replaced));
}

// ACL SAVE
void AclSave(CmdArgs, ConnCmdContext& ctx) {
  if (ctx.config().aclfile.empty()) return ctx.rb.SendError(kNoAclFile);
  // Writes a small file on the connection's thread, as Redis does on its main thread.
  if (!ctx.services().acl.SaveFile(ctx.config().aclfile).ok()) {
    return ctx.rb.SendError(
        "ERR There was an error trying to save the ACLs. Please check the server logs for more "
        "information");
  }
  ctx.rb.SendOk();
}

// ACL HELP
void AclHelp(CmdArgs, ConnCmdContext& ctx) {
  static constexpr std::string_view kHelp[] = {
      "ACL <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "CAT [<category>]",
      "    List all commands that belong to <category>, or all command categories",
      "    when no category is specified.",
      "DELUSER <username> [<username> ...]",
      "    Delete a list of users.",
      "DRYRUN <username> <command> [<arg> ...]",
      "    Returns whether the user can execute the given command without executing the "
      "command.",
      "GETUSER <username>",
      "    Get the user's details.",
      "GENPASS [<bits>]",
      "    Generate a secure 256-bit user password. The optional `bits` argument can",
      "    be used to specify a different size.",
      "LIST",
      "    Show users details in config file format.",
      "LOAD",
      "    Reload users from the ACL file.",
      "LOG [<count> | RESET]",
      "    Show the ACL log entries.",
      "SAVE",
      "    Save the current config to the ACL file.",
      "SETUSER <username> <attribute> [<attribute> ...]",
      "    Create or modify a user with the specified attributes.",
      "USERS",
      "    List all the registered usernames.",
      "WHOAMI",
      "    Return the current connection username.",
      "HELP",
      "    Prints this help.",
  };
  SendHelp(ctx.rb, kHelp);
}

std::vector<CommandSpec> AclSubcommands() {
  constexpr uint32_t kBase = kCmdNoScript | kCmdLoading | kCmdStale;
  constexpr uint32_t kAdmin = kCmdAdmin | kBase;
  const std::vector<std::string_view> kSlow = {"slow"};
  const std::vector<std::string_view> kAdminCats = {"admin", "slow", "dangerous"};
  std::vector<CommandSpec> subs;
  auto conn = [&](std::string name, int arity, bool admin, std::string_view since,
                  std::string_view summary, ConnHandler h) {
    subs.push_back(WithConnHandler(MakeSubcommand(std::move(name), arity, admin ? kAdmin : kBase,
                                                  admin ? kAdminCats : kSlow, since, summary),
                                   h));
  };
  auto coord = [&](std::string name, int arity, std::string_view since, std::string_view summary,
                   CoordHandler h) {
    subs.push_back(WithCoordHandler(
        MakeSubcommand(std::move(name), arity, kAdmin, kAdminCats, since, summary), h));
  };
  conn("cat", -2, false, "6.0.0",
       "List the ACL categories or the commands inside a category", AclCat);
  coord("deluser", -3, "6.0.0", "Remove the specified ACL users and the associated rules",
        AclDelUser);
  conn("dryrun", -4, true, "7.0.0",
       "Returns whether the user can execute the given command without executing the command.",
       AclDryRun);
  conn("genpass", -2, false, "6.0.0",
       "Generate a pseudorandom secure password to use for ACL users", AclGenPass);
  conn("getuser", 3, true, "6.0.0", "Get the rules for a specific ACL user", AclGetUser);
  conn("list", 2, true, "6.0.0", "List the current ACL rules in ACL config file format",
       AclList);
  coord("load", 2, "6.0.0", "Reload the ACLs from the configured ACL file", AclLoad);
  conn("log", -2, true, "6.0.0", "List latest events denied because of ACLs in place",
       AclLogCmd);
  conn("save", 2, true, "6.0.0", "Save the current ACL rules in the configured ACL file",
       AclSave);
  coord("setuser", -3, "6.0.0", "Modify or create the rules for a specific ACL user",
        AclSetUser);
  conn("users", 2, true, "6.0.0", "List the username of all the configured ACL rules",
       AclUsers);
  conn("whoami", 2, false, "6.0.0",
       "Return the name of the user associated to the current connection", AclWhoAmI);
  subs.push_back(WithConnHandler(
      MakeSubcommand("help", 2, kCmdLoading | kCmdStale, kSlow, "6.0.0",
                     "Show helpful text about the different subcommands"),
      AclHelp));
  return subs;
}

}  // namespace

void RegisterAclCommands(CommandRegistry* registry) {
  CommandSpec acl;
  acl.name = "acl";
  acl.arity = -2;
  acl.kind = HandlerKind::kConn;
  acl.categories = {"slow"};
  acl.summary = "A container for Access List Control commands";
  acl.since = "6.0.0";
  acl.group = "server";
  acl.subcommands = AclSubcommands();
  registry->Register(std::move(acl));
}

}  // namespace dashkv
