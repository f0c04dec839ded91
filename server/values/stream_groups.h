// StreamGroups: the consumer groups of one stream (Redis 7.0 semantics): per group its last
// delivered id, its entries-read counter, its pending entries list (PEL) and its consumers.
// Thread: owned by the StreamValue that holds it (the shard thread that owns the key).
#pragma once

#include <absl/container/btree_map.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "server/values/stream_value.h"

namespace dashkv {

struct StreamConsumer;

// One delivered, not yet acknowledged entry of a group.
struct StreamPending {
  int64_t delivery_time_ms = 0;
  uint64_t delivery_count = 1;
  StreamConsumer* consumer = nullptr;  // never null once in a group's PEL
};

// A consumer of a group: its name, when it was last seen, and its own PEL (views of the group's
// entries).
struct StreamConsumer {
  std::string name;
  int64_t seen_time_ms = 0;
  absl::btree_map<StreamID, StreamPending*> pel;
};

// Design
//   pel: id -> StreamPending (owned), ordered by id. consumers: name -> consumer (owned),
//   ordered by name as Redis's radix tree orders them (bytewise). A pending entry points at its
//   consumer and the consumer's pel points back at the entry: both change together, through the
//   methods below only. entries_read is kInvalidEntriesRead when unknown (Redis's -1).
struct StreamGroup {
  static constexpr int64_t kInvalidEntriesRead = -1;

  StreamID last_id;
  int64_t entries_read = kInvalidEntriesRead;
  absl::btree_map<StreamID, std::unique_ptr<StreamPending>> pel;
  absl::btree_map<std::string, std::unique_ptr<StreamConsumer>, std::less<>> consumers;

  StreamConsumer* FindConsumer(std::string_view name) const;
  // Adds a consumer; returns nullptr if `name` exists.
  StreamConsumer* AddConsumer(std::string_view name, int64_t now_ms);
  // Removes a consumer and its pending entries; returns how many it had pending.
  size_t DeleteConsumer(std::string_view name);
  // Acknowledges `id`: removes it from the PEL; returns whether it was pending.
  bool Ack(StreamID id);
  // Delivers `id` to `c` now (XREADGROUP ">"): a new pending entry, or an existing one moved
  // to `c` with its delivery count reset to 1.
  void Deliver(StreamID id, StreamConsumer* c, int64_t now_ms);
  // Moves the pending entry `p` (of `id`) to consumer `c`.
  void MoveTo(StreamID id, StreamPending* p, StreamConsumer* c);
  // Creates a pending entry for `id` without a consumer (XCLAIM FORCE); the caller gives it one
  // with MoveTo. REQUIRES: `id` not pending.
  StreamPending* AddUnowned(StreamID id, int64_t now_ms);

  size_t MallocUsed() const;
};

class StreamGroups {
 public:
  using Map = absl::btree_map<std::string, std::unique_ptr<StreamGroup>, std::less<>>;

  StreamGroup* Find(std::string_view name) const;
  // Creates a group; returns nullptr if `name` exists.
  StreamGroup* Create(std::string_view name, StreamID last_id, int64_t entries_read);
  bool Destroy(std::string_view name);
  const Map& groups() const { return groups_; }
  size_t size() const { return groups_.size(); }

  std::unique_ptr<StreamGroups> Clone() const;
  size_t MallocUsed() const;

 private:
  Map groups_;
};

// Redis 7.0's estimate of the entries-read counter of an id (streamEstimateDistanceFrom-
// FirstEverEntry): exact when the stream says it, else kInvalidEntriesRead.
int64_t EstimateEntriesRead(const StreamValue& s, StreamID id);
// Whether a deleted entry may lie at or after `start` (Redis's streamRangeHasTombstones with
// an open end).
bool HasTombstonesFrom(const StreamValue& s, StreamID start);
// The lag of group `g` (XINFO): nullopt when it cannot be known.
std::optional<int64_t> GroupLag(const StreamValue& s, const StreamGroup& g);
// Updates g's last id and entries-read for the delivery of `id` (XREADGROUP ">").
void AdvanceGroup(const StreamValue& s, StreamGroup& g, StreamID id);

}  // namespace dashkv
