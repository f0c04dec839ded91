// CLIENT subcommands of server-assisted client-side caching: TRACKING, CACHING, GETREDIR,
// TRACKINGINFO.
#pragma once

#include <vector>

#include "server/command_registry.h"

namespace dashkv {

// Returns CLIENT TRACKING, CACHING, GETREDIR and TRACKINGINFO (Redis 7.0's metadata).
std::vector<CommandSpec> ClientTrackingSubcommands();

}  // namespace dashkv
