// MIGRATE (Redis 7.0 semantics): moves (or with COPY copies) keys to another server over a new
// TCP connection: the keys' DUMP payloads with their remaining TTLs, sent as one pipeline of
// [AUTH|AUTH2] SELECT RESTORE... to the target, then every reply read; the keys the target
// accepted are deleted here unless COPY.
//
// Design
//   Three steps, so that no intent lock is held and no engine thread waits while the network
//   is slow:
//   1. one hop reads the payloads on the keys' shards. MIGRATE is a one-hop write
//      (CommandSpec::one_hop): the server takes its keys' intent locks before it runs, and the
//      hop releases each shard's locks as it reads there, so the read is one atomic step;
//   2. the I/O, on the connection's engine (io/resp_client.h), every socket wait bounded by the
//      timeout, every reply by a size limit;
//   3. a hop deletes the accepted keys, under fresh intent locks when the keys span shards.
//      A key whose value changed between steps 1 and 3 (a client wrote it while the target was
//      being fed) is kept: deleting it would lose that write. Redis cannot see the case (it
//      blocks the whole server during MIGRATE).
//   Inside EXEC the transaction holds every lock for the whole EXEC, so steps 1 to 3 see no
//   other client (with --threads 1 EXEC holds no lock, and other clients may run while
//   MIGRATE waits for the target).
//   Differences from Redis, all at the target end: no cache of target connections (Redis keeps
//   one per target for 10 s and retries once over a fresh one when the cached one fails), so
//   AUTH and SELECT are sent every time (SELECT is left out for destination-db -1, as Redis's
//   fresh connection does); a reply that is not RESP, or larger than 64 KiB, is a read error
//   (Redis reads one line of at most 1 KiB and takes anything not starting with '-' as a
//   success).
#include <algorithm>
#include <chrono>
#include <climits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/parse_int.h"
#include "core/str_util.h"
#include "io/connection.h"
#include "io/engine.h"
#include "io/resp_client.h"
#include "server/cmd_context.h"
#include "server/command_registry.h"
#include "server/conn_state.h"
#include "server/persistence/dump_payload.h"
#include "server/storage/shard_set.h"
#include "server/tx/multi_key.h"
#include "server/tx/transaction.h"

namespace dashkv {

namespace {

using boost::asio::awaitable;
using std::chrono::milliseconds;

constexpr int64_t kDefaultTimeoutMs = 1000;  // Redis's, for a timeout <= 0
constexpr int64_t kMaxTimeoutMs = int64_t{1} << 40;  // keeps deadlines representable
constexpr size_t kMaxTargetReply = 64 << 10;  // a target's reply is a status line

struct MigrateOptions {
  bool copy = false;
  bool replace = false;
  std::optional<std::string_view> username;  // AUTH2
  std::optional<std::string_view> password;  // AUTH or AUTH2
  size_t first_key = 3;  // argument index
  size_t num_keys = 1;
  int64_t db = 0;
  int64_t timeout_ms = kDefaultTimeoutMs;
};

// Parses the options from args[6] on, then the timeout and the database, as Redis's
// migrateCommand does (its first error wins).
OpResult<MigrateOptions> ParseMigrate(CmdArgs args) {
  MigrateOptions opts;
  ArgParser parser(args, 6);
  while (parser.HasNext()) {
    if (parser.Check("COPY")) {
      opts.copy = true;
    } else if (parser.Check("REPLACE")) {
      opts.replace = true;
    } else if (parser.Check("AUTH")) {
      if (parser.remaining() < 1) return OpStatus::kSyntaxError;
      opts.password = parser.Next();
    } else if (parser.Check("AUTH2")) {
      if (parser.remaining() < 2) return OpStatus::kSyntaxError;
      opts.username = parser.Next();
      opts.password = parser.Next();
    } else if (parser.Check("KEYS")) {
      if (!args[3].empty()) return OpStatus::kMigrateKeysNeedEmptyKey;
      opts.first_key = parser.position();
      opts.num_keys = args.size() - opts.first_key;
      break;  // all the remaining arguments are keys
    } else {
      return OpStatus::kSyntaxError;
    }
  }
  std::optional<int64_t> timeout = ParseInt64(args[5]);
  if (!timeout) return OpStatus::kNotAnInteger;
  std::optional<int64_t> db = ParseInt64(args[4]);
  if (!db) return OpStatus::kNotAnInteger;
  opts.db = *db;
  opts.timeout_ms = *timeout <= 0 ? kDefaultTimeoutMs : std::min(*timeout, kMaxTimeoutMs);
  return opts;
}

// The keys COMMAND GETKEYS reports and the intent locks cover, as Redis 7.0 finds them: its
// first key spec (args[3]) unless a "KEYS" argument stands in args[1..argc-2] (its second,
// incomplete key spec), in which case migrateGetKeys decides: the arguments after the first
// "KEYS" found from args[6] on, skipping the operands of AUTH and AUTH2; none when args[3] is
// not empty then; args[3] when there is no such "KEYS".
KeyIndexes MigrateKeys(CmdArgs args) {
  KeyIndexes out;
  bool keyword = false;
  for (size_t i = 1; i + 1 < args.size(); ++i) keyword |= EqualsIgnoreCase(args[i], "KEYS");
  if (keyword) {
    for (size_t i = 6; i < args.size(); ++i) {
      if (EqualsIgnoreCase(args[i], "KEYS")) {
        if (!args[3].empty()) return out;
        for (size_t k = i + 1; k < args.size(); ++k) out.push_back(k);
        return out;
      }
      if (EqualsIgnoreCase(args[i], "AUTH")) {
        i += 1;
      } else if (EqualsIgnoreCase(args[i], "AUTH2")) {
        i += 2;
      }
    }
  }
  out.push_back(3);
  return out;
}

// Returns the port as Redis reads it (atoi: leading blanks, a sign, the digits up to the first
// non-digit), or 0 when that is not a TCP port (the connection then fails like a refused one).
uint16_t ParsePort(std::string_view arg) {
  size_t i = 0;
  while (i < arg.size() && (arg[i] == ' ' || (arg[i] >= '\t' && arg[i] <= '\r'))) ++i;
  bool negative = false;
  if (i < arg.size() && (arg[i] == '+' || arg[i] == '-')) negative = arg[i++] == '-';
  int64_t port = 0;
  for (; i < arg.size() && arg[i] >= '0' && arg[i] <= '9' && port <= 65535; ++i) {
    port = port * 10 + (arg[i] - '0');
  }
  return negative || port > 65535 ? 0 : static_cast<uint16_t>(port);
}

// One key read in step 1.
struct MigrateEntry {
  std::string_view key;
  std::string payload;  // its DUMP payload
  int64_t ttl_ms = 0;   // remaining TTL (>= 1), 0 for none
  bool accepted = false;  // the target replied without an error to its RESTORE
};

// Step 1: reads the keys args[first..first+count) on their shards (lookups as reads: hits,
// misses); returns the live ones in argument order.
awaitable<std::vector<MigrateEntry>> ReadEntries(ConnCmdContext& ctx, CmdArgs args,
                                                 size_t first, size_t count) {
  ShardSet& ss = ctx.shard_set();
  KeysByShard groups(ss, args, first, first + count - 1);
  std::vector<std::optional<MigrateEntry>> found(count);
  const unsigned db = ctx.state.db;
  const int64_t now = ctx.now_ms;
  co_await OnlyHop(ss, ctx.locks, groups.shards, [&](Shard& shard) {
    DbSlice& slice = shard.db(db);
    for (uint32_t i : groups.indexes[shard.index()]) {
      std::optional<MigrateEntry>& slot = found[i - first];
      slot.reset();
      PrimeIterator it = slice.FindReadOnly(args[i], now);
      if (it.is_done()) continue;
      slot.emplace();
      slot->key = args[i];
      slot->payload = MakeDumpPayload(it->second, RdbWriteOptions{});
      if (it->first.HasExpire()) {
        slot->ttl_ms = std::max<int64_t>(1, it->first.ExpireTimeMs() - now);
      }
    }
  });
  std::vector<MigrateEntry> entries;
  for (std::optional<MigrateEntry>& e : found) {
    if (e) entries.push_back(std::move(*e));
  }
  co_return entries;
}

// Returns the RESP text of RESTORE key ttl <payload> [REPLACE] around the payload: what comes
// before it and what after.
std::pair<std::string, std::string> RestoreFrame(const MigrateEntry& e, bool replace) {
  std::string head = replace ? "*5\r\n" : "*4\r\n";
  head += "$7\r\nRESTORE\r\n$" + std::to_string(e.key.size()) + "\r\n";
  head.append(e.key);
  const std::string ttl = std::to_string(e.ttl_ms);
  head += "\r\n$" + std::to_string(ttl.size()) + "\r\n" + ttl + "\r\n$" +
          std::to_string(e.payload.size()) + "\r\n";
  std::string tail = replace ? "\r\n$7\r\nREPLACE\r\n" : "\r\n";
  return {std::move(head), std::move(tail)};
}

// What the exchange with the target came to.
struct TargetOutcome {
  OpStatus io_error = OpStatus::kOk;  // kMigrateConnect/Write/Read
  std::string target_error;           // the first error the target replied (without '-')
};

// Step 2: sends [AUTH] [SELECT] RESTORE... to the target in one pipeline and reads every reply;
// marks the entries whose RESTORE the target accepted.
awaitable<TargetOutcome> Transfer(ConnCmdContext& ctx, CmdArgs args, const MigrateOptions& opts,
                                  std::vector<MigrateEntry>& entries) {
  TargetOutcome out;
  const milliseconds timeout(opts.timeout_ms);
  io::RespClient client(ctx.state.conn->engine().context());
  const uint16_t port = ParsePort(args[2]);
  absl::Status st = absl::UnavailableError("invalid port");
  if (port != 0) st = co_await client.Connect(std::string(args[1]), port, timeout);
  if (!st.ok()) {
    // Redis reports a failed name lookup at once; a refused or slow connection shows only at
    // its first write.
    out.io_error = absl::IsNotFound(st) ? OpStatus::kMigrateConnect : OpStatus::kMigrateWrite;
    co_return out;
  }
  std::string head;
  if (opts.password) {
    std::vector<std::string_view> auth = {"AUTH"};
    if (opts.username) auth.push_back(*opts.username);
    auth.push_back(*opts.password);
    io::AppendRespCommand(head, auth);
  }
  // A new connection has no database selected yet: Redis (last_dbid -1) leaves SELECT out
  // when asked for database -1.
  const bool select = opts.db != -1;
  if (select) {
    const std::string db = std::to_string(opts.db);
    io::AppendRespCommand(head, std::vector<std::string_view>{"SELECT", db});
  }
  std::vector<std::pair<std::string, std::string>> frames;
  frames.reserve(entries.size());
  std::vector<std::string_view> pieces = {head};
  for (const MigrateEntry& e : entries) {
    frames.push_back(RestoreFrame(e, opts.replace));
    pieces.insert(pieces.end(), {frames.back().first, e.payload, frames.back().second});
  }
  if (!(co_await client.Write(pieces, timeout)).ok()) {
    out.io_error = OpStatus::kMigrateWrite;
    co_return out;
  }
  // An AUTH or SELECT error fails every key; the first error of all is the one reported.
  std::string setup_error;
  for (int i = (opts.password ? 1 : 0) + (select ? 1 : 0); i > 0; --i) {
    absl::StatusOr<io::RespReply> reply = co_await client.ReadReply(timeout, kMaxTargetReply);
    if (!reply.ok()) {
      out.io_error = OpStatus::kMigrateRead;
      co_return out;
    }
    if (reply->is_error() && setup_error.empty()) setup_error = std::move(reply->str);
  }
  for (MigrateEntry& e : entries) {
    absl::StatusOr<io::RespReply> reply = co_await client.ReadReply(timeout, kMaxTargetReply);
    if (!reply.ok()) {
      out.io_error = OpStatus::kMigrateRead;
      break;
    }
    if (!setup_error.empty() || reply->is_error()) {
      if (out.target_error.empty()) {
        out.target_error = !setup_error.empty() ? setup_error : std::move(reply->str);
      }
    } else {
      e.accepted = true;
    }
  }
  co_return out;
}

// Step 3: deletes the accepted keys whose value is still the one sent (see Design).
awaitable<void> DeleteAccepted(ConnCmdContext& ctx, const std::vector<MigrateEntry>& entries) {
  ShardSet& ss = ctx.shard_set();
  const unsigned db = ctx.state.db;
  std::vector<std::vector<const MigrateEntry*>> by_shard(ss.size());
  std::vector<unsigned> shards;
  for (const MigrateEntry& e : entries) {
    if (!e.accepted) continue;
    unsigned sid = ss.ShardOf(e.key);
    if (by_shard[sid].empty()) shards.push_back(sid);
    by_shard[sid].push_back(&e);
  }
  if (shards.empty()) co_return;
  std::sort(shards.begin(), shards.end());
  auto erase = [&](Shard& shard) {
    DbSlice& slice = shard.db(db);
    const int64_t now = NowMs();
    for (const MigrateEntry* e : by_shard[shard.index()]) {
      PrimeIterator it = slice.FindReadOnlyQuiet(e->key, now);
      if (it.is_done() || MakeDumpPayload(it->second, RdbWriteOptions{}) != e->payload) continue;
      slice.EraseKey(e->key, now, RemoveReason::kDeleted);
      slice.Notify(kNotifyGeneric, "del", e->key);
    }
  };
  // Inside EXEC the transaction's locks cover the keys; with one shard a hop is atomic.
  if (ctx.in_exec || ss.size() == 1) {
    co_await ss.AwaitMany(shards, erase);
    co_return;
  }
  KeyLocks locks(ss);
  for (unsigned sid : shards) {
    for (const MigrateEntry* e : by_shard[sid]) locks.Add(db, e->key, LockMode::kExclusive);
  }
  try {
    co_await locks.Acquire();
    co_await ss.AwaitMany(shards, erase);
  } catch (...) {
    locks.Abandon();  // gives back what it holds, then lets the failure go on
    throw;
  }
  locks.Release();
}

// MIGRATE host port key|"" destination-db timeout [COPY] [REPLACE] [AUTH password]
//   [AUTH2 username password] [KEYS key [key ...]]
awaitable<void> CmdMigrate(CmdArgs args, ConnCmdContext& ctx) {
  OpResult<MigrateOptions> opts = ParseMigrate(args);
  if (!opts) co_return ctx.SendStatus(opts.status());
  std::vector<MigrateEntry> entries;
  if (opts->num_keys > 0) {
    entries = co_await ReadEntries(ctx, args, opts->first_key, opts->num_keys);
  }
  if (entries.empty()) co_return ctx.rb.SendSimpleString("NOKEY");

  TargetOutcome outcome = co_await Transfer(ctx, args, *opts, entries);
  if (!opts->copy) co_await DeleteAccepted(ctx, entries);
  if (!outcome.target_error.empty()) {
    co_return ctx.rb.SendError(std::string(StatusText(OpStatus::kMigrateTargetError)) + " " +
                               outcome.target_error);
  }
  if (outcome.io_error != OpStatus::kOk) co_return ctx.SendStatus(outcome.io_error);
  ctx.rb.SendOk();
}

}  // namespace

void RegisterMigrateCommand(CommandRegistry* r) {
  CommandSpec spec = MakeSpec("migrate", -6, kCmdWrite, 3, 3,
                              {"keyspace", "write", "slow", "dangerous"}, "generic", "2.6.0",
                              "Atomically transfer a key from a Redis instance to another one.");
  spec.keys_fn = MigrateKeys;
  spec.tips = {"nondeterministic_output"};
  // Redis's two key specs: the key argument, and the keys after KEYS, searched backwards from
  // the last argument but one; "incomplete": an argument (a password) may spell KEYS, so the
  // keys are found by MigrateKeys.
  spec.key_specs.push_back(KeySpec::AtIndex({"RW", "access", "delete"}, 3));
  spec.key_specs.push_back(
      KeySpec::AfterKeyword({"RW", "access", "delete", "incomplete"}, "KEYS", -2, -1));
  r->RegisterCoord(OneHop(std::move(spec)), CmdMigrate);
}

}  // namespace dashkv
