// Contexts handed to command handlers: ShardCmdContext on the owning shard's thread,
// ConnCmdContext on the connection's thread.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "io/reply_builder.h"
#include "server/command_registry.h"
#include "server/config.h"
#include "server/op_status.h"
#include "server/shard.h"

namespace dashkv {

class Server;
class ConnState;
class Config;
class KeyLocks;

// Returns the wall-clock time in milliseconds since the epoch.
int64_t NowMs();
// Returns the wall-clock time in microseconds since the epoch.
int64_t NowUs();

// Sends a HELP reply: one simple string per line.
void SendHelp(io::ReplyBuilder& rb, std::span<const std::string_view> lines);

// Sends the error text of `status` (REQUIRES: an error status).
void SendStatus(io::ReplyBuilder& rb, OpStatus status);

// Thread: the shard's thread, for the duration of one command.
class ShardCmdContext {
 public:
  ShardCmdContext(Shard& shard, unsigned db_index, io::ReplyBuilder& rb, int64_t now_ms,
                  const CommandSpec& spec, const Config& config)
      : shard(shard), db(shard.db(db_index)), rb(rb), now_ms(now_ms), db_index(db_index),
        spec(spec), config(config) {}

  void SendStatus(OpStatus status) { dashkv::SendStatus(rb, status); }

  Shard& shard;
  DbSlice& db;
  io::ReplyBuilder& rb;
  int64_t now_ms;  // the command's clock (one reading per batch, like Redis's cached time)
  unsigned db_index;
  const CommandSpec& spec;
  const Config& config;  // thread-safe: hot settings are atomics
};

// Thread: the connection's thread, for the duration of one command.
class ConnCmdContext {
 public:
  ConnCmdContext(Server& server, ConnState& state, io::ReplyBuilder& rb, int64_t now_ms,
                 const CommandSpec& spec)
      : server(server), state(state), rb(rb), now_ms(now_ms), spec(spec) {}

  void SendStatus(OpStatus status) { dashkv::SendStatus(rb, status); }

  Server& server;
  ConnState& state;
  io::ReplyBuilder& rb;
  int64_t now_ms;
  const CommandSpec& spec;
  // The intent locks held around this command (its keys, or a whole EXEC's), or nullptr when
  // it runs without (one shard, or a command with no keys).
  KeyLocks* locks = nullptr;
  // Set when the command runs inside EXEC: blocking commands must not block.
  bool in_exec = false;
};

}  // namespace dashkv
