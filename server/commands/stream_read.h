// Reading stream entries out of a shard for XREAD (stream_commands.cc) and for the blocked
// XREAD readers the blocking machinery serves (blocking_ops.cc): copies of the entries after an
// id, and XREAD's reply shape.
// Thread: the Read* functions run on the shard thread owning the stream; the copies they return
// may cross to any thread; Send* run on the connection's thread.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "io/reply_builder.h"
#include "server/op_status.h"
#include "server/values/stream_value.h"

namespace dashkv {

// An entry copied out of a shard: its id and its field, value ... texts.
struct CopiedEntry {
  StreamID id;
  std::vector<std::string> fields;
};

// The entries read from one key of an XREAD call.
struct StreamRead {
  size_t key = 0;  // index among the call's keys
  std::vector<CopiedEntry> entries;
};

// Sends an id as a bulk string ("<ms>-<seq>").
void SendId(io::ReplyBuilder& rb, StreamID id);
// Sends one entry read in place: [id, [field, value, ...]].
void SendEntry(io::ReplyBuilder& rb, const StreamValue::Entry& e);
// Parses a range bound of XRANGE, XREVRANGE, XPENDING and XAUTOCLAIM: "-", "+", an id (an
// incomplete one takes the lowest sequence for a start, the highest for an end) or an
// exclusive "(id".
OpResult<StreamID> ParseRangeBound(std::string_view arg, bool is_start);

CopiedEntry CopyEntry(const StreamValue::Entry& e);
// Sends one entry: [id, [field, value, ...]].
void SendCopiedEntry(io::ReplyBuilder& rb, const CopiedEntry& e);

// Returns copies of the live entries of `s` with ids > `after`, at most `count` (0: no limit).
std::vector<CopiedEntry> ReadAfter(const StreamValue& s, StreamID after, size_t count);
// Returns whether `s` holds a live entry with an id > `after`.
bool HasEntryAfter(const StreamValue& s, StreamID after);

// Sends XREAD's reply for `reads` (only keys with entries, in the order given): RESP2 an array
// of [key, entries] pairs, RESP3 a map key -> entries; a null array when there is none.
// `keys[r.key]` names each.
void SendStreamReads(io::ReplyBuilder& rb, std::span<const std::string> keys,
                     std::span<const StreamRead> reads);

}  // namespace dashkv
