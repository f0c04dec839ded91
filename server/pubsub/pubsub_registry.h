// PubSubRegistry: the server-wide map of which engines have subscribers for each channel,
// pattern and shard channel, so that PUBLISH hops only to engines with receivers, and PUBSUB
// and INFO answer without any hop.
// Thread-safe: one ReadMostlyLock (core/base/read_mostly_lock.h) with a reader slot per
// engine and one for other threads; PUBLISH locks its engine's slot for one lookup plus a scan
// of the patterns, so publishers on different engines share no written cache line;
// (un)subscribing locks every slot. Its mutexes are std::mutex (pthread), which
// ThreadSanitizer sees, unlike Debian's uninstrumented absl::Mutex. No other lock is taken
// under it, and it is never held across a suspension or a hop.
#pragma once

#include <absl/container/flat_hash_map.h>
#include <absl/container/inlined_vector.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/read_mostly_lock.h"
#include "server/pubsub/client_subscriptions.h"

namespace dashkv {

// Engines that a publish must reach, in increasing order.
using EngineList = absl::InlinedVector<unsigned, 8>;

// Design
//  One hash map per kind: name -> total subscribers and a per-engine subscriber count (a vector
//  of `engines` counters). An entry exists while it has at least one subscriber, so the map
//  sizes are Redis's pubsub_channels / pubsub_patterns / pubsubshard_channels. Targets() is
//  O(1) for the channel plus O(patterns x match) for the patterns; patterns are usually few.
class PubSubRegistry {
 public:
  explicit PubSubRegistry(unsigned engines) : engines_(engines), mu_(engines + 1) {}

  // Counts one more subscriber of `name` on `engine`.
  void Add(PubSubKind kind, std::string_view name, unsigned engine);
  // Counts one fewer. REQUIRES: a matching Add.
  void Remove(PubSubKind kind, std::string_view name, unsigned engine);

  // Sets `engines` to the engines with subscribers for `channel` in the namespace of `kind`
  // (kChannel: channel subscribers and matching patterns; kShardChannel: shard channel
  // subscribers) and returns how many subscriptions receive it (PUBLISH's reply).
  int64_t Targets(PubSubKind kind, std::string_view channel, EngineList* engines) const;
  // Returns the names of `kind` matching `pattern` (every name when nullopt), unordered.
  std::vector<std::string> Names(PubSubKind kind, std::optional<std::string_view> pattern) const;
  // Returns the subscribers of `name` across all engines.
  int64_t Subscribers(PubSubKind kind, std::string_view name) const;
  // Returns how many distinct names of `kind` have subscribers.
  size_t Size(PubSubKind kind) const;

 private:
  struct Entry {
    int64_t subscribers = 0;
    std::vector<uint32_t> per_engine;  // subscribers on each engine
  };
  using Map = PubSubNameMap<Entry>;

  // The calling thread's reader slot of mu_: its engine's index, or engines_ off the engines.
  unsigned ReaderSlot() const;

  const unsigned engines_;
  ReadMostlyLock mu_;
  Map maps_[kPubSubKinds];  // guarded by mu_
};

}  // namespace dashkv
