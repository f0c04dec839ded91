// DUMP and RESTORE (Redis 7.0 semantics): a key's value as a DUMP payload (its RDB object
// encoding, RDB version 10 and a CRC64; server/persistence/dump_payload.h) and back. RESTORE
// validates every payload deeply before it changes anything (Redis's sanitize-dump-payload
// yes), and checks its arguments in Redis's order: options, BUSYKEY, TTL, payload footer,
// payload body. IDLETIME (under an LRU-mode policy) or FREQ (under an LFU policy) sets the
// restored key's access record (core/access_record.h), as Redis.
// Both commands name one key and run whole on its shard.
#include <cstdint>
#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "core/base/parse_int.h"
#include "server/cmd_context.h"
#include "server/command_registry.h"
#include "server/persistence/dump_payload.h"

namespace dashkv {

namespace {

// DUMP key
void CmdDump(CmdArgs args, ShardCmdContext& ctx) {
  PrimeIterator it = ctx.db.FindReadOnly(args[1], ctx.now_ms);
  if (it.is_done()) return ctx.rb.SendNull();
  ctx.rb.SendBulk(MakeDumpPayload(it->second, RdbWriteOptions{}));
}

struct RestoreOptions {
  bool replace = false;
  bool absttl = false;
  int64_t idletime = -1;  // -1: not given
  int64_t freq = -1;      // -1: not given
};

// Parses [REPLACE] [ABSTTL] [IDLETIME seconds] [FREQ frequency] as Redis does: any order, the
// first error wins, and IDLETIME with FREQ is a syntax error.
OpResult<RestoreOptions> ParseRestoreOptions(CmdArgs args) {
  RestoreOptions opts;
  ArgParser parser(args, 4);
  while (parser.HasNext()) {
    if (parser.Check("REPLACE")) {
      opts.replace = true;
    } else if (parser.Check("ABSTTL")) {
      opts.absttl = true;
    } else if (parser.remaining() >= 2 && opts.freq < 0 && parser.Check("IDLETIME")) {
      opts.idletime = parser.NextInt();
      if (parser.HasError()) return parser.error();
      if (opts.idletime < 0) return OpStatus::kInvalidIdletime;
    } else if (parser.remaining() >= 2 && opts.idletime < 0 && parser.Check("FREQ")) {
      opts.freq = parser.NextInt();
      if (parser.HasError()) return parser.error();
      if (opts.freq < 0 || opts.freq > 255) return OpStatus::kInvalidFreq;
    } else {
      return OpStatus::kSyntaxError;
    }
  }
  if (parser.HasError()) return parser.error();
  return opts;
}

// Sends RESTORE's reply for a payload the loader refused: Redis's "Bad data format", with the
// type named when it is one dashkv does not have yet (Redis would have accepted it).
void SendBadPayload(ShardCmdContext& ctx, const absl::Status& status) {
  if (absl::IsUnimplemented(status)) {
    return ctx.rb.SendError(std::string(StatusText(OpStatus::kBadDataFormat)) + ": " +
                            std::string(status.message()));
  }
  ctx.SendStatus(OpStatus::kBadDataFormat);
}

// RESTORE key ttl serialized-value [REPLACE] [ABSTTL] [IDLETIME seconds] [FREQ frequency]
void CmdRestore(CmdArgs args, ShardCmdContext& ctx) {
  std::string_view key = args[1];
  OpResult<RestoreOptions> opts = ParseRestoreOptions(args);
  if (!opts) return ctx.SendStatus(opts.status());
  if (!opts->replace && !ctx.db.FindReadOnlyQuiet(key, ctx.now_ms).is_done()) {
    return ctx.SendStatus(OpStatus::kBusyKey);
  }
  std::optional<int64_t> ttl = ParseInt64(args[2]);
  if (!ttl) return ctx.SendStatus(OpStatus::kNotAnInteger);
  if (*ttl < 0) return ctx.SendStatus(OpStatus::kInvalidTtl);
  std::string_view payload = args[3];
  if (!VerifyDumpPayload(payload)) return ctx.SendStatus(OpStatus::kDumpPayloadInvalid);
  absl::StatusOr<CompactObj> value = DecodeDumpPayload(payload, ValueLimits::From(ctx.config));
  if (!value.ok()) return SendBadPayload(ctx, value.status());

  bool deleted = opts->replace && ctx.db.EraseKey(key, ctx.now_ms, RemoveReason::kOverwritten);
  int64_t deadline = *ttl;
  if (deadline != 0 && !opts->absttl) {
    // Wraps like Redis's signed addition: an absurd TTL lands in the past.
    deadline = static_cast<int64_t>(static_cast<uint64_t>(deadline) +
                                    static_cast<uint64_t>(ctx.now_ms));
  }
  if (deadline != 0 && deadline <= ctx.now_ms) {  // already expired: nothing is created
    if (deleted) {
      ctx.db.Notify(kNotifyGeneric, "del", key);
    } else {
      ctx.NoChange();
    }
    return ctx.rb.SendOk();
  }
  OpResult<DbSlice::AddResult> added = ctx.db.FindOrAdd(key, ctx.now_ms);
  if (!added) return ctx.SendStatus(added.status());
  added->it->second = std::move(*value);
  ctx.db.SetExpire(added->it, deadline);
  ctx.db.SetRecord(added->it, RestoredRecord(ctx.db.eviction().access_mode(), ctx.now_ms,
                                             opts->idletime, static_cast<int>(opts->freq)));
  ctx.db.Notify(kNotifyGeneric, "restore", key);
  ctx.rb.SendOk();
}

}  // namespace

void RegisterDumpRestoreCommands(CommandRegistry* r) {
  CommandSpec dump = MakeSpec("dump", 2, kCmdReadOnly, 0, 0, {"keyspace", "read", "slow"},
                              "generic", "2.6.0",
                              "Return a serialized version of the value stored at the specified key.");
  dump.tips = {"nondeterministic_output"};
  r->RegisterShard(WithSingleKey(std::move(dump), 1, {"RO", "access"}), CmdDump);
  CommandSpec restore = MakeSpec(
      "restore", -4, kCmdWrite | kCmdDenyOom, 0, 0, {"keyspace", "write", "slow", "dangerous"},
      "generic", "2.6.0",
      "Creates a key using the provided serialized value, previously obtained using DUMP.");
  r->RegisterShard(WithSingleKey(std::move(restore), 1, {"OW", "update"}), CmdRestore);
}

}  // namespace dashkv
