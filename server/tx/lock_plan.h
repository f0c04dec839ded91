// The lock plan: which intent locks (server/tx/transaction.h) a command needs, read from its
// command-table entry — its keys (exclusive if it writes, shared if it reads), a key it writes
// in another database (MOVE, COPY ... DB), or whole shards for a global command (TxScope) and
// for a call that reads keys it does not name (SORT ... BY/GET pattern).
#pragma once

#include "core/intent_lock.h"
#include "server/cmd_args.h"
#include "server/command_registry.h"
#include "server/tx/transaction.h"

namespace dashkv {

// Returns the mode in which a call of `spec` locks its keys: exclusive if it may write.
LockMode KeyLockMode(const CommandSpec& spec);

// Adds the intent locks that `spec` called with `args` in database `db` needs. `services`
// lets a script command find whether its script keeps to its declared keys (else it locks
// every shard); without it a script locks its declared keys.
void AddCommandLocks(KeyLocks& locks, const CommandSpec& spec, CmdArgs args, unsigned db,
                     const ServerServices* services = nullptr);

// The locks a single-shard command needs on its shard (a pipelined command that waits behind a
// transaction): its keys, or the whole shard for a call that reads keys it does not name
// (CommandSpec::whole_keyspace). REQUIRES: spec.tx_scope == TxScope::kKeys.
LockRequest ShardLockRequest(const CommandSpec& spec, CmdArgs args, unsigned db);

// Returns whether a lock held or awaited in `table` blocks the single-shard command `spec`
// called with `args` in database `db` (any lock, for a call that reads keys it does not name).
// REQUIRES: `table` is not empty.
bool LocksBlock(const IntentLockTable& table, const CommandSpec& spec, CmdArgs args,
                unsigned db);

}  // namespace dashkv
