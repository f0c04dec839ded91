// The connection side of the blocking commands (blocking_commands.cc) used by other families.
// Thread: the blocked connection's engine.
#pragma once

#include <utility>  // before asio: awaitable.hpp uses std::exchange

#include <boost/asio/awaitable.hpp>
#include <cstdint>
#include <memory>

#include "server/tx/blocking.h"

namespace dashkv {

class ConnCmdContext;

// Runs XREAD BLOCK or XREADGROUP BLOCK: `request` (Kind::kStreamRead with the resolved ids in
// `after`, or Kind::kStreamReadGroup with group, consumer and NOACK; keys; count) is read at
// once; if no key has entries for it, the client parks until an XADD (or any write) gives one
// of them such entries, `timeout_ms` passes (0: never) or CLIENT UNBLOCK, then replies
// (entries, null array, or the unblock error). A blocked XREADGROUP also ends with an error
// when a key is deleted or retyped or the group destroyed (blocking.h). Inside EXEC or a script
// (ctx.locks / ctx.in_exec) it never parks: a null array when nothing is there.
// REQUIRES: the command runs without the runner's intent locks (flagged kCmdBlocking).
boost::asio::awaitable<void> RunBlockingStreamRead(ConnCmdContext& ctx,
                                                   std::shared_ptr<BlockRequest> request,
                                                   int64_t timeout_ms);

}  // namespace dashkv
