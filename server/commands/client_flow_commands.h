// CLIENT subcommands that control the flow of commands and replies: PAUSE, UNPAUSE, REPLY.
#pragma once

#include <vector>

#include "server/command_registry.h"

namespace dashkv {

// Returns CLIENT PAUSE, CLIENT UNPAUSE and CLIENT REPLY (Redis 7.0's metadata).
std::vector<CommandSpec> ClientFlowSubcommands();

}  // namespace dashkv
