// ClientSubscriptions: the channels, patterns and shard channels one connection subscribes to
// (ConnState::pubsub; allocated at its first subscription).
// Thread: engine-local (the connection's thread).
#pragma once

#include <absl/container/flat_hash_map.h>
#include <absl/container/flat_hash_set.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/hash.h"

namespace dashkv {

// Transparent hashing of std::string names by std::string_view (Debian's absl::string_view is
// not std::string_view, so absl's own heterogeneous lookup does not apply).
struct PubSubNameHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return HashBytes(s); }
};
struct PubSubNameEq {
  using is_transparent = void;
  bool operator()(std::string_view a, std::string_view b) const { return a == b; }
};
using PubSubNameSet = absl::flat_hash_set<std::string, PubSubNameHash, PubSubNameEq>;
template <typename V>
using PubSubNameMap = absl::flat_hash_map<std::string, V, PubSubNameHash, PubSubNameEq>;

// The three pub/sub namespaces: SUBSCRIBE, PSUBSCRIBE and SSUBSCRIBE each have their own.
enum class PubSubKind : uint8_t { kChannel = 0, kPattern = 1, kShardChannel = 2 };
inline constexpr size_t kPubSubKinds = 3;

struct ClientSubscriptions {
  PubSubNameSet names[kPubSubKinds];  // by PubSubKind

  PubSubNameSet& of(PubSubKind kind) { return names[size_t(kind)]; }
  const PubSubNameSet& of(PubSubKind kind) const { return names[size_t(kind)]; }
  // Redis's count in subscribe/unsubscribe replies: channels + patterns for those two kinds,
  // shard channels alone for the shard kind.
  size_t ReplyCount(PubSubKind kind) const {
    if (kind == PubSubKind::kShardChannel) return of(kind).size();
    return of(PubSubKind::kChannel).size() + of(PubSubKind::kPattern).size();
  }
  size_t total() const { return names[0].size() + names[1].size() + names[2].size(); }
};

}  // namespace dashkv
