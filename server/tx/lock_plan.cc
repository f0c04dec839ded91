#include "server/tx/lock_plan.h"

#include <optional>
#include <string_view>
#include <utility>

namespace dashkv {
namespace {

LockMode ModeOf(const CommandSpec& spec) {
  // A script may write whatever Redis flags it (EVALSHA has no write flag): exclusive unless
  // it is a read-only form.
  const bool writes = spec.HasFlag(kCmdWrite) || spec.HasFlag(kCmdLocksExclusive) ||
                      (spec.tx_scope == TxScope::kScript && !spec.HasFlag(kCmdReadOnly));
  return writes ? LockMode::kExclusive : LockMode::kShared;
}

// Returns the mode in which a call that reads keys it does not name must lock every shard.
std::optional<LockMode> WholeKeyspace(const CommandSpec& spec, CmdArgs args) {
  if (spec.whole_keyspace == nullptr) return std::nullopt;
  return spec.whole_keyspace(args);
}

// Returns the key a command writes in another database than the connection's, if any.
std::optional<std::pair<unsigned, std::string_view>> OtherDbKey(const CommandSpec& spec,
                                                               CmdArgs args) {
  if (spec.other_db_key == nullptr) return std::nullopt;
  return spec.other_db_key(args);
}

}  // namespace

LockMode KeyLockMode(const CommandSpec& spec) { return ModeOf(spec); }

void AddCommandLocks(KeyLocks& locks, const CommandSpec& spec, CmdArgs args, unsigned db,
                     const ServerServices* services) {
  switch (spec.tx_scope) {
    case TxScope::kAllShared:
      return locks.AddAllShards(LockMode::kShared);
    case TxScope::kAllExclusive:
      return locks.AddAllShards(LockMode::kExclusive);
    case TxScope::kNone:
      return;
    case TxScope::kScript: {
      KeyIndexes keys = spec.KeysOf(args);
      LockMode mode = spec.HasFlag(kCmdReadOnly) ? LockMode::kShared : LockMode::kExclusive;
      if (keys.empty()) return locks.AddAllShards(LockMode::kExclusive);
      if (services != nullptr && spec.locks_all_shards != nullptr &&
          spec.locks_all_shards(args, *services)) {
        return locks.AddAllShards(mode);
      }
      for (uint32_t k : keys) locks.Add(db, args[k], mode);
      return;
    }
    case TxScope::kKeys:
      break;
  }
  if (auto whole = WholeKeyspace(spec, args)) [[unlikely]] return locks.AddAllShards(*whole);
  LockMode mode = ModeOf(spec);
  for (uint32_t k : spec.KeysOf(args)) locks.Add(db, args[k], mode);
  if (auto other = OtherDbKey(spec, args)) {
    locks.Add(other->first, other->second, LockMode::kExclusive);
  }
}

LockRequest ShardLockRequest(const CommandSpec& spec, CmdArgs args, unsigned db) {
  LockRequest req;
  if (auto whole = WholeKeyspace(spec, args)) [[unlikely]] {
    req.whole_shard = true;
    req.whole_mode = *whole;
    return req;
  }
  LockMode mode = ModeOf(spec);
  for (uint32_t k : spec.KeysOf(args)) req.Add(LockHashOf(db, args[k]), mode);
  if (auto other = OtherDbKey(spec, args)) {
    req.Add(LockHashOf(other->first, other->second), LockMode::kExclusive);
  }
  return req;
}

bool LocksBlock(const IntentLockTable& table, const CommandSpec& spec, CmdArgs args,
                unsigned db) {
  // A call reading keys it does not name waits for every lock of the shard (its keys there are
  // unknown until it runs).
  if (spec.whole_keyspace != nullptr && WholeKeyspace(spec, args)) [[unlikely]] return true;
  LockMode mode = ModeOf(spec);
  for (uint32_t k : spec.KeysOf(args)) {
    if (table.Conflicts(LockHashOf(db, args[k]), mode)) return true;
  }
  if (auto other = OtherDbKey(spec, args)) [[unlikely]] {
    return table.Conflicts(LockHashOf(other->first, other->second), LockMode::kExclusive);
  }
  return false;
}

}  // namespace dashkv
