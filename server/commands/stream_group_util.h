// Helpers shared by the stream consumer-group command files (stream_group_commands.cc,
// stream_readgroup_command.cc, stream_pel_commands.cc) and their handlers, for registration.
// Thread: the handlers' (shard or connection) threads, as each says.
#pragma once

#include <utility>  // before asio: awaitable.hpp uses std::exchange

#include <boost/asio/awaitable.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "io/reply_builder.h"
#include "server/commands/stream_read.h"
#include "server/cmd_context.h"
#include "server/command_registry.h"
#include "server/values/stream_groups.h"
#include "server/values/stream_value.h"

namespace dashkv::group_cmd {

// "NOGROUP No such key '<key>' or consumer group '<group>'<suffix>".
std::string NoGroupText(std::string_view key, std::string_view group,
                        std::string_view suffix = "");
// "NOGROUP No such consumer group '<group>' for key name '<key>'".
std::string NoGroupForKeyText(std::string_view key, std::string_view group);

// Sends the entry `id`, or a null when it is not in the stream.
void SendEntryOrNull(io::ReplyBuilder& rb, const StreamValue& s, StreamID id);

// Finds the stream `key` and its group `group`: kWrongType, or a null group when the key or
// the group is missing (and a null stream when the key is). `for_write`: the group state will
// change (a mutable lookup, so that a snapshot in progress saves the value first; the caller
// marks the key unmodified for WATCH where Redis does not signal the change).
OpResult<std::pair<StreamValue*, StreamGroup*>> FindGroup(DbSlice& db, std::string_view key,
                                                          std::string_view group, int64_t now,
                                                          bool for_write = false);

// Returns consumer `name` of `g`, created (with its keyspace event) if new, seen now.
StreamConsumer* LookupOrCreateConsumer(DbSlice& db, std::string_view key, StreamGroup& g,
                                       std::string_view name, int64_t now);

// XREADGROUP GROUP g c [COUNT n] [BLOCK ms] [NOACK] STREAMS key ... id ...
// (stream_readgroup_command.cc).
KeyIndexes XReadGroupKeys(CmdArgs args);
std::optional<unsigned> RouteXReadGroup(CmdArgs args, const ServerServices& services);
void CmdXReadGroupShard(CmdArgs args, ShardCmdContext& ctx);
boost::asio::awaitable<void> CmdXReadGroup(CmdArgs args, ConnCmdContext& ctx);

// XACK, XPENDING, XCLAIM, XAUTOCLAIM (stream_pel_commands.cc).
void CmdXAck(CmdArgs args, ShardCmdContext& ctx);
void CmdXPending(CmdArgs args, ShardCmdContext& ctx);
void CmdXClaim(CmdArgs args, ShardCmdContext& ctx);
void CmdXAutoClaim(CmdArgs args, ShardCmdContext& ctx);

}  // namespace dashkv::group_cmd
