// The shard side of a blocked XREADGROUP with ">" (server/tx/blocking.h, Kind::kStreamReadGroup):
// whether its key can serve it and the delivery, with the same rules as XREADGROUP itself
// (stream_readgroup_command.cc, which implements both).
// Thread: the shard thread owning the stream; the copies returned may cross to any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "server/commands/stream_read.h"
#include "server/op_status.h"

namespace dashkv {

class DbSlice;

// Returns what group `group` of stream `key` holds for a consumer blocked on it: kOk (entries
// the group was not delivered yet), kKeyNotFound (none), kStreamBlockedKeyGone (the key is
// missing or holds another type) or kStreamBlockedGroupGone (the group was destroyed).
// Changes nothing and counts no keyspace hit.
OpStatus BlockedGroupState(DbSlice& db, std::string_view key, std::string_view group,
                           int64_t now_ms);

// Delivers to consumer `consumer` of group `group` of stream `key` (the consumer is created if
// new, as XREADGROUP does) the entries new to the group, at most `count` (0: all): the group's
// last-delivered id advances past them and, unless `noack`, they enter the group's and the
// consumer's pending lists. Returns copies of them, or BlockedGroupState's status when it is not
// kOk (nothing changes then). The lookup is a mutable one: the caller marks the write unmodified
// (Redis signals no change of group state to WATCH).
OpResult<std::vector<CopiedEntry>> DeliverToBlockedConsumer(
    DbSlice& db, std::string_view key, std::string_view group, std::string_view consumer,
    bool noack, size_t count, int64_t now_ms);

}  // namespace dashkv
