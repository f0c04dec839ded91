// Contexts handed to command handlers: ShardCmdContext on the owning shard's thread,
// ConnCmdContext on the connection's thread.
#pragma once

#include <cstdint>
#include <exception>
#include <span>
#include <string>

#include "core/base/clock.h"
#include "io/reply_builder.h"
#include "server/command_registry.h"
#include "server/config.h"
#include "server/op_status.h"
#include "server/services.h"
#include "server/storage/shard.h"

namespace dashkv {

class ConnState;
class KeyLocks;

// Sends a HELP reply: one simple string per line.
void SendHelp(io::ReplyBuilder& rb, std::span<const std::string_view> lines);

// Sends the error text of `status` (REQUIRES: an error status).
void SendStatus(io::ReplyBuilder& rb, OpStatus status);

// Returns whether `e` says an allocation failed (std::bad_alloc, or std::length_error for a
// size past a container's limit): a command's failure, not a bug (server/server.h).
bool IsAllocationFailure(const std::exception& e);

// Fails a command that could not get memory (`e`: the std::bad_alloc or std::length_error it
// threw, see server/server.h): drops what it wrote to `rb` from `reply_start` on, sends
// "-ERR out of memory" in its place and logs a warning (at most one a second per thread).
void SendAllocationFailure(io::ReplyBuilder& rb, size_t reply_start, const CommandSpec& spec,
                           const std::exception& e);

// Thread: the shard's thread, for the duration of one command.
class ShardCmdContext {
 public:
  ShardCmdContext(Shard& shard, unsigned db_index, io::ReplyBuilder& rb, int64_t now_ms,
                  const CommandSpec& spec, const Config& config)
      : shard(shard), db(shard.db(db_index)), rb(rb), now_ms(now_ms), db_index(db_index),
        spec(spec), config(config) {}

  void SendStatus(OpStatus status) { dashkv::SendStatus(rb, status); }

  // WATCH (server/tx/watch.h): a write handler that left every key exactly as it was (SADD of
  // present members, SET NX on an existing key, PERSIST of a key without TTL, ...) calls this
  // so that the watchers of its keys are not touched; Redis signals only real modifications.
  // A write handler that does not call it (and replied no error: a failed command changed
  // nothing) is taken to have modified each of its keys that was live before it or is live
  // after it (server/pipeline_runner.cc RunShardCommand).
  void NoChange() { changed = false; }

  Shard& shard;
  DbSlice& db;
  io::ReplyBuilder& rb;
  int64_t now_ms;  // the command's clock (one reading per batch, like Redis's cached time)
  unsigned db_index;
  const CommandSpec& spec;
  const Config& config;  // thread-safe: hot settings are atomics
  // The server's parts (set by PipelineRunner::RunShardCommand): for the few shard handlers
  // that need more than the shard (a script run from a pipeline's shard group).
  const ServerServices* services = nullptr;
  bool changed = true;   // cleared by NoChange()
  bool from_script = false;  // called by a script (redis.call)
  // The client the command runs for when it tracks keys (client-side caching), else nullptr:
  // a script it runs tracks the keys its calls read for that client.
  const ConnState* tracking_client = nullptr;
};

// Thread: the connection's thread, for the duration of one command.
class ConnCmdContext {
 public:
  ConnCmdContext(const ServerServices& services, ConnState& state, io::ReplyBuilder& rb,
                 int64_t now_ms, const CommandSpec& spec)
      : state(state), rb(rb), now_ms(now_ms), spec(spec), services_(services) {}

  void SendStatus(OpStatus status) { dashkv::SendStatus(rb, status); }

  // The server's parts a handler may use (server/services.h).
  Config& config() const { return services_.config; }
  io::EnginePool& pool() const { return services_.pool; }
  // The shards, through the set whose tasks leave the access records as they are when the
  // client is in CLIENT NO-TOUCH mode (ShardSet::no_touch), and carry the client's change
  // origin when it has one (ConnState::change_origin: client-side caching's NOLOOP).
  ShardSet& shard_set() const;
  PubSub& pubsub() const { return services_.pubsub; }
  const CommandRegistry& registry() const { return services_.registry; }
  ServerStats& stats() const { return services_.stats; }
  ClientRegistry& clients() const { return services_.clients; }
  MultiExec& multi() const { return services_.multi; }
  SnapshotManager& snapshots() const { return services_.snapshots; }
  TrackingHub& tracking() const { return services_.tracking; }
  const ServerServices& services() const { return services_; }

  ConnState& state;
  io::ReplyBuilder& rb;
  int64_t now_ms;
  const CommandSpec& spec;
  // The intent locks held around this command (its keys, or a whole EXEC's), or nullptr when
  // it runs without (one shard, or a command with no keys).
  KeyLocks* locks = nullptr;
  // Set while EXEC runs the queued commands (blocking commands do not block there).
  bool in_exec = false;
  bool from_script = false;  // called by a script (redis.call)
  // CycleClock ticks the command spent waiting (for intent locks, parked in a blocking
  // command): not part of its run time in INFO commandstats, the slow log and latency figures.
  uint64_t wait_ticks = 0;

 private:
  const ServerServices& services_;
};

}  // namespace dashkv
