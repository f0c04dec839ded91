// Consumer-group parts of XINFO (its STREAM, GROUPS and CONSUMERS subcommands live with the
// other stream commands; the group replies are built here).
#pragma once

#include <utility>  // before asio: awaitable.hpp uses std::exchange

#include <boost/asio/awaitable.hpp>
#include <cstddef>
#include <cstdint>

#include "io/reply_builder.h"
#include "server/cmd_context.h"
#include "server/values/stream_value.h"

namespace dashkv {

// XINFO GROUPS key
boost::asio::awaitable<void> CmdXInfoGroups(CmdArgs args, ConnCmdContext& ctx);
// XINFO CONSUMERS key group
boost::asio::awaitable<void> CmdXInfoConsumers(CmdArgs args, ConnCmdContext& ctx);

// Sends XINFO STREAM FULL's "groups" value for `s` (PELs cut at `count` entries, 0: all) on
// the shard thread.
void SendGroupsFull(io::ReplyBuilder& rb, const StreamValue& s, size_t count);

}  // namespace dashkv
