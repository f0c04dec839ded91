// StreamValue: the value of a Redis stream: entries (an id and field/value pairs) in listpack
// nodes under an ordered index keyed by each node's master id, in Redis's node format so that
// RDB type 19 carries the nodes unchanged in both directions.
// Thread: owned by the shard thread that owns the key.
#pragma once

#include <absl/container/btree_map.h>
#include <absl/functional/function_ref.h>
#include <absl/types/span.h>

#include <compare>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "core/compact_object.h"
#include "core/listpack.h"

namespace dashkv {

class Config;
class StreamGroups;

// A stream entry id: milliseconds and sequence number, ordered as a pair.
struct StreamID {
  uint64_t ms = 0;
  uint64_t seq = 0;

  friend auto operator<=>(const StreamID&, const StreamID&) = default;

  static constexpr StreamID Max() { return {UINT64_MAX, UINT64_MAX}; }
  // Returns "<ms>-<seq>".
  std::string ToString() const;
  // Moves to the next (Incr) or previous (Decr) id; returns false (unchanged) at the end.
  bool Incr();
  bool Decr();
  // The 16-byte big-endian form (ms then seq) Redis uses as the node key in RDB files.
  void EncodeBigEndian(char out[16]) const;
  static StreamID DecodeBigEndian(const char in[16]);
};

// Node size limits (stream-node-max-bytes, stream-node-max-entries).
struct StreamLimits {
  size_t node_max_bytes = 4096;
  int64_t node_max_entries = 100;

  static StreamLimits From(const Config& config);
};

// Design
//   nodes_: master id -> Listpack, in id order (absl::btree_map: ~60-byte B-tree nodes, O(log n)
//   seek; Redis uses a radix tree over the 16-byte big-endian ids, which orders the same way).
//   A node's listpack is Redis's stream node format:
//     master entry: count deleted num-fields field_1 .. field_N 0
//     each entry:   flags ms-diff seq-diff [num-fields] (field value)* | value* lp-count
//   flags: 1 deleted, 2 same fields as the master (then only the values are stored). ms-diff and
//   seq-diff are the entry's id minus the master id (two's complement, as int64). lp-count is
//   the number of the entry's elements before it (3 + N same-fields, 4 + 2N else), so an entry
//   can be walked backwards. count = live entries, deleted = tombstones; a node whose count
//   reaches 0 is removed. The first entry of a node has the master id and fields.
//   A new node starts when the last one holds node_max_entries entries (live + deleted) or the
//   new entry's bytes would take it to node_max_bytes.
//   Appends O(log n) + O(node bytes) (one realloc), seeks O(log n + node entries), deletes mark
//   a tombstone in place.
//   An empty stream stays a stream (XDEL/XTRIM never remove the key), as in Redis.
class StreamValue : public ObjectBase {
 public:
  // One entry as visited: its id and its field, value, field, value ... elements (views into
  // the node; valid during the visit only).
  struct Entry {
    StreamID id;
    absl::Span<const ListpackValue> fields;  // interleaved field, value
  };
  using EntryFn = absl::FunctionRef<void(const Entry&)>;

  StreamValue();
  ~StreamValue() override;
  std::unique_ptr<StreamValue> Clone() const;

  uint64_t length() const { return length_; }
  size_t node_count() const { return nodes_.size(); }
  StreamID last_id() const { return last_id_; }
  StreamID first_id() const { return first_id_; }
  StreamID max_deleted_id() const { return max_deleted_id_; }
  uint64_t entries_added() const { return entries_added_; }
  void set_last_id(StreamID id) { last_id_ = id; }
  void set_max_deleted_id(StreamID id) { max_deleted_id_ = id; }
  void set_entries_added(uint64_t n) { entries_added_ = n; }

  // Appends an entry. `fields` holds field, value, field, value ... REQUIRES: id > last_id(),
  // fields non-empty and of even size; no view in `fields` points into this stream.
  void Append(StreamID id, absl::Span<const std::string_view> fields, const StreamLimits& limits);

  // Visits the live entries with start <= id <= end, ascending (descending with `reverse`),
  // at most `count` of them (0: no limit). Returns how many were visited. f must not change the
  // stream.
  size_t Range(StreamID start, StreamID end, bool reverse, size_t count, EntryFn f) const;

  // Deletes the live entry `id`; returns whether it was there. Updates max-deleted id, first id.
  bool Delete(StreamID id);

  // XTRIM/XADD trimming, as Redis: removes whole nodes while the stream stays at least `maxlen`
  // long (or while the node's last id < minid); then, unless `approx`, marks entries of the
  // next node. `limit` > 0 stops before a node that would take the removed count past it.
  // Returns the number of entries removed.
  uint64_t TrimMaxLen(uint64_t maxlen, bool approx, int64_t limit);
  uint64_t TrimMinId(StreamID minid, bool approx, int64_t limit);

  // Returns the id of the last live entry, if any.
  std::optional<StreamID> LastLiveId() const;

  // Calls f(master id, listpack bytes) for every node in order (RDB save).
  void ForEachNode(absl::FunctionRef<void(StreamID, std::string_view)> f) const;

  // Loading (RDB): checks a node listpack from untrusted bytes in Redis's node format: its
  // master entry, every entry's shape and lp-count, the counters, ids strictly ascending from
  // master (> `after`, the previous node's last id). Returns the node's last id and live count,
  // or nullopt if it is malformed.
  struct NodeCheck {
    StreamID last_id;
    uint64_t live = 0;
  };
  static std::optional<NodeCheck> CheckNode(StreamID master, std::string_view bytes,
                                            std::optional<StreamID> after);
  // Adds a node checked by CheckNode (ids above every node's), with `live` live entries. A node
  // without live entries is dropped. Does not touch the stream's counters and ids.
  void AddCheckedNode(StreamID master, std::string_view bytes, uint64_t live);
  // Sets the counters and ids of a loaded stream.
  void SetLoadedMeta(uint64_t length, StreamID last, StreamID first, StreamID max_deleted,
                     uint64_t entries_added) {
    length_ = length;
    last_id_ = last;
    first_id_ = first;
    max_deleted_id_ = max_deleted;
    entries_added_ = entries_added;
  }

  // The consumer groups (server/values/stream_groups.h); null while there are none.
  StreamGroups* groups() const { return groups_.get(); }
  // Returns the groups, creating an empty set.
  StreamGroups& MutableGroups();
  // Sets the groups (RDB load).
  void SetGroups(std::unique_ptr<StreamGroups> groups);
  // Whether `id` is a live entry.
  bool Contains(StreamID id) const;

  size_t MallocUsed() const override;
  std::string_view EncodingName() const override { return "stream"; }

 private:
  using NodeMap = absl::btree_map<StreamID, Listpack>;
  // Recomputes first_id_ from the first live entry (0-0 when empty).
  void RefreshFirstId();
  // Marks the live entries whose flags are at `flags_pos` in `it`'s node deleted and updates the
  // node's counters; erases the node when its last live entry goes. Returns whether it did.
  bool MarkDeleted(NodeMap::iterator it, absl::Span<const Listpack::Pos> flags_pos);

  NodeMap nodes_;
  uint64_t length_ = 0;
  StreamID last_id_;
  StreamID first_id_;
  StreamID max_deleted_id_;
  uint64_t entries_added_ = 0;
  std::unique_ptr<StreamGroups> groups_;
};

// Parses a stream id argument as Redis does. `missing_seq` is the sequence of an id given as
// "<ms>" alone. `strict`: "-" and "+" are refused (else they mean 0-0 and the maximum id).
// `seq_auto`, when given, accepts "<ms>-*" and is set to whether the sequence was '*'.
std::optional<StreamID> ParseStreamID(std::string_view s, uint64_t missing_seq, bool strict,
                                      bool* seq_auto = nullptr);

// Returns the StreamValue held by a stream object. REQUIRES: obj.type() == ObjType::kStream.
inline StreamValue& AsStream(const CompactObj& obj) {
  return *static_cast<StreamValue*>(obj.GetObject());
}

}  // namespace dashkv
