// ConnState: the server's per-connection state (selected database, name, library info).
// Thread: engine-local (the connection's thread). Shard handlers never see it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "io/reply_builder.h"
#include "io/service.h"

namespace dashkv {

struct CommandSpec;
class BlockedCall;

// A command of a pipeline, resolved and routed to its shard.
struct PendingCmd {
  const CommandSpec* spec;
  io::CmdArgs args;
  unsigned sid;
};

class ConnState : public io::ConnectionState {
 public:
  explicit ConnState(io::Connection* conn) : conn(conn) {}

  io::Connection* conn;
  unsigned db = 0;
  std::string name;      // CLIENT SETNAME
  std::string lib_name;  // CLIENT SETINFO LIB-NAME
  std::string lib_ver;   // CLIENT SETINFO LIB-VER
  const CommandSpec* last_cmd = nullptr;  // for CLIENT LIST cmd=
  std::string last_subcommand;            // lower case, when last_cmd is a container
  bool authenticated = false;
  bool no_evict = false;
  bool no_touch = false;
  // Set while the connection is parked in a blocking command (server/blocking.h).
  std::shared_ptr<BlockedCall> blocked;

  // Scratch space of Server::Dispatch, kept to avoid allocations per batch.
  std::vector<PendingCmd> pending;
  std::vector<io::ReplyBuilder> shard_replies;  // one per shard (multi-shard groups)
  std::vector<uint32_t> reply_ends;             // end offset of each command's reply
};

}  // namespace dashkv
