#include "core/str_util.h"
#include "server/command_registry.h"

#include <algorithm>

#include "core/base/logging.h"

namespace dashkv {

// kCmdMayReplicate is left out: Redis 7.0's COMMAND INFO does not list it.
std::vector<std::string_view> FlagNames(uint32_t flags) {
  static constexpr std::pair<CommandFlag, std::string_view> kNames[] = {
      {kCmdWrite, "write"},         {kCmdReadOnly, "readonly"},
      {kCmdDenyOom, "denyoom"},     {kCmdAdmin, "admin"},
      {kCmdPubSub, "pubsub"},       {kCmdNoScript, "noscript"},
      {kCmdLoading, "loading"},     {kCmdStale, "stale"},
      {kCmdSkipMonitor, "skip_monitor"},
      {kCmdFast, "fast"},           {kCmdNoAuth, "no_auth"},
      {kCmdBlocking, "blocking"},   {kCmdNoMulti, "no_multi"},
      {kCmdAllowBusy, "allow_busy"},
      {kCmdSkipSlowlog, "skip_slowlog"}, {kCmdNoMandatoryKeys, "no_mandatory_keys"},
  };
  std::vector<std::string_view> out;
  for (const auto& [flag, name] : kNames) {
    if (flags & flag) out.push_back(name);
  }
  return out;
}

KeyIndexes CommandSpec::KeysOf(CmdArgs args) const {
  if (keys_fn != nullptr) return keys_fn(args);
  KeyIndexes out;
  if (first_key > 0) {
    size_t last = last_key < 0 ? args.size() + last_key : size_t(last_key);
    for (size_t k = first_key; k <= last && k < args.size(); k += key_step) out.push_back(k);
  }
  if (numkeys_index > 0 && size_t(numkeys_index) < args.size()) {
    const std::optional<int64_t> n = ParseInt64(args[numkeys_index]);
    const size_t count = n && *n >= 0 ? static_cast<size_t>(*n) : SIZE_MAX;
    if (count <= args.size() - numkeys_index - 1) {
      for (size_t k = numkeys_index + 1; k <= numkeys_index + count; ++k) out.push_back(k);
    }
  }
  return out;
}

bool CommandSpec::MovableKeys() const {
  if (keys_fn != nullptr || numkeys_index > 0) return true;
  for (const KeySpec& ks : key_specs) {
    if (ks.movable()) return true;
  }
  return false;
}

const CommandSpec* CommandSpec::FindSubcommand(std::string_view sub) const {
  for (const CommandSpec& s : subcommands) {
    if (EqualsIgnoreCase(std::string_view(s.name).substr(name.size() + 1), sub)) return &s;
  }
  return nullptr;
}

CommandSpec MakeSubcommand(std::string sub, int arity, uint32_t flags,
                           std::vector<std::string_view> categories, std::string_view since,
                           std::string_view summary) {
  return MakeSpec(std::move(sub), arity, flags, 0, 0, std::move(categories), "", since,
                  summary);
}

CommandSpec WithSingleKey(CommandSpec spec, int index, std::vector<std::string_view> flags) {
  spec.first_key = spec.last_key = index;
  spec.key_step = 1;
  spec.key_specs.push_back(KeySpec::AtIndex(std::move(flags), index));
  return spec;
}

CommandSpec MakeSpec(std::string name, int arity, uint32_t flags, int first_key, int last_key,
                     std::vector<std::string_view> categories, std::string_view group,
                     std::string_view since, std::string_view summary) {
  CommandSpec s;
  s.name = std::move(name);
  s.arity = arity;
  s.flags = flags;
  s.first_key = first_key;
  s.last_key = last_key;
  s.key_step = first_key > 0 ? 1 : 0;
  s.categories = std::move(categories);
  s.group = group;
  s.since = since;
  s.summary = summary;
  return s;
}

namespace {

// Gives a command whose keys follow a numkeys argument the key specs Redis 7.0 reports for
// every such command, unless it has its own: a STORE form's destination (overwritten), then
// the counted keys, read by a read command and read and deleted from by a write (the *MPOP
// family).
void AddNumKeysSpecs(CommandSpec& spec) {
  if (spec.numkeys_index <= 0 || !spec.key_specs.empty()) return;
  if (spec.first_key > 0) {
    spec.key_specs.push_back(KeySpec::AtIndex({"OW", "update"}, spec.first_key));
    spec.key_specs.push_back(KeySpec::KeyNum({"RO", "access"}, spec.numkeys_index));
  } else if (spec.HasFlag(kCmdWrite)) {
    spec.key_specs.push_back(KeySpec::KeyNum({"RW", "access", "delete"}, spec.numkeys_index));
  } else {
    spec.key_specs.push_back(KeySpec::KeyNum({"RO", "access"}, spec.numkeys_index));
  }
}

}  // namespace

void CommandRegistry::Register(CommandSpec spec) {
  spec.name = AsciiStrToLower(spec.name);
  AddNumKeysSpecs(spec);
  spec.id = static_cast<uint32_t>(num_ids_++);
  spec.one_key = spec.first_key > 0 && spec.last_key == spec.first_key &&
                 spec.numkeys_index == 0 && spec.keys_fn == nullptr &&
                 spec.other_db_key == nullptr;
  CHECK(spec.container() || spec.shard_handler || spec.conn_handler || spec.coord_handler);
  CHECK(!spec.container() || spec.kind != HandlerKind::kShard);
  auto owned = std::make_unique<CommandSpec>(std::move(spec));
  for (CommandSpec& sub : owned->subcommands) {
    CHECK(sub.name.find('|') == std::string::npos && !sub.container());
    sub.name = StrCat(owned->name, "|", AsciiStrToLower(sub.name));
  }
  for (CommandSpec& sub : owned->subcommands) {
    // A duplicate subcommand name would be found at its first entry.
    CHECK(owned->FindSubcommand(std::string_view(sub.name).substr(owned->name.size() + 1)) ==
          &sub);
    sub.parent = owned.get();
    sub.id = static_cast<uint32_t>(num_ids_++);
    if (sub.group.empty()) sub.group = owned->group;
    if (!sub.shard_handler && !sub.conn_handler && !sub.coord_handler) {
      sub.kind = owned->kind;
      sub.conn_handler = owned->conn_handler;
      sub.coord_handler = owned->coord_handler;
    }
    CHECK(sub.kind != HandlerKind::kShard && (sub.conn_handler || sub.coord_handler));
  }
  bool inserted = by_name_.emplace(std::string_view(owned->name), owned.get()).second;
  CHECK(inserted);  // a duplicate command name
  max_name_len_ = std::max(max_name_len_, owned->name.size());
  specs_.push_back(std::move(owned));
}

const CommandSpec* CommandRegistry::Lookup(CmdArgs args) const {
  const CommandSpec* spec = Find(args[0]);
  if (spec == nullptr || !spec->container() || args.size() < 2) return spec;
  return spec->FindSubcommand(args[1]);
}

const CommandSpec* CommandRegistry::Lookup(CmdArgs args, CommandNameMemo& memo) const {
  const CommandSpec* spec = Find(args[0], memo);
  if (spec == nullptr || !spec->container() || args.size() < 2) return spec;
  return spec->FindSubcommand(args[1]);
}

const CommandSpec* CommandRegistry::FindFullName(std::string_view full_name) const {
  size_t bar = full_name.find('|');
  if (bar == std::string_view::npos) return Find(full_name);
  const CommandSpec* parent = Find(full_name.substr(0, bar));
  std::string_view sub = full_name.substr(bar + 1);
  if (parent == nullptr || sub.find('|') != std::string_view::npos) return nullptr;
  return parent->FindSubcommand(sub);
}

const CommandSpec* CommandRegistry::Find(std::string_view name) const {
  char buf[32];
  if (name.size() > sizeof(buf)) [[unlikely]] return FindLong(name);
  for (size_t i = 0; i < name.size(); ++i) buf[i] = AsciiToLower(name[i]);
  auto it = by_name_.find(std::string_view(buf, name.size()));
  return it == by_name_.end() ? nullptr : it->second;
}

const CommandSpec* CommandRegistry::FindLong(std::string_view name) const {
  if (name.size() > max_name_len_) return nullptr;
  auto it = by_name_.find(AsciiStrToLower(name));
  return it == by_name_.end() ? nullptr : it->second;
}

const CommandSpec* CommandRegistry::FindAndMemo(std::string_view name,
                                                CommandNameMemo& memo) const {
  const CommandSpec* spec = Find(name);
  if (name.size() <= CommandNameMemo::kMaxName) {
    memo.len = static_cast<uint8_t>(name.size());
    std::memcpy(memo.name, name.data(), name.size());
    memo.spec = spec;
  }
  return spec;
}

std::string CommandRegistry::Rename(std::string_view from, std::string_view to) {
  const CommandSpec* spec = Find(from);
  if (spec == nullptr) return "No such command in rename-command";
  if (!to.empty() && Find(to) != nullptr && Find(to) != spec) {
    return "Target command name already exists";
  }
  by_name_.erase(AsciiStrToLower(from));
  if (to.empty()) {
    unreachable_.insert(spec);
    return "";
  }
  const std::string& name = renamed_names_.emplace_back(AsciiStrToLower(to));
  by_name_.emplace(std::string_view(name), spec);
  max_name_len_ = std::max(max_name_len_, name.size());
  return "";
}

void RegisterAllCommands(CommandRegistry* registry) {
  RegisterConnectionCommands(registry);
  RegisterAclCommands(registry);
  RegisterServerCommands(registry);
  RegisterInfoCommand(registry);
  RegisterSlowlogCommands(registry);
  RegisterLatencyCommands(registry);
  RegisterReplicationCommands(registry);
  RegisterModuleCommands(registry);
  RegisterMonitorCommand(registry);
  RegisterStringCommands(registry);
  RegisterLcsCommand(registry);
  RegisterSwapDbCommand(registry);
  RegisterBitmapCommands(registry);
  RegisterGenericCommands(registry);
  RegisterKeyMoveCommands(registry);
  RegisterDumpRestoreCommands(registry);
  RegisterPersistenceCommands(registry);
  RegisterMigrateCommand(registry);
  RegisterScriptCommands(registry);
  RegisterFunctionCommands(registry);
  RegisterDebugCommands(registry);
  RegisterMemoryCommands(registry);
  RegisterListCommands(registry);
  RegisterHashCommands(registry);
  RegisterSetCommands(registry);
  RegisterZsetCommands(registry);
  RegisterGeoCommands(registry);
  RegisterStreamCommands(registry);
  RegisterStreamGroupCommands(registry);
  RegisterTransactionCommands(registry);
  RegisterPubSubCommands(registry);
  RegisterBlockingCommands(registry);
  RegisterHllCommands(registry);
  RegisterSortCommands(registry);
}

}  // namespace dashkv
