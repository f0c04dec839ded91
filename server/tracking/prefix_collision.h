// The BCAST prefix check of CLIENT TRACKING: a client's prefixes must not overlap (one a prefix
// of another), among those it asks for and with those it has.
// Thread: any (pure functions).
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace dashkv {

// Whether one of `a`, `b` is a prefix of the other (Redis's stringCheckPrefix).
inline bool PrefixesOverlap(std::string_view a, std::string_view b) {
  return a.size() <= b.size() ? b.starts_with(a) : a.starts_with(b);
}

struct PrefixCollision {
  size_t index;          // the requested prefix Redis reports (the first in request order)
  bool with_existing;    // it overlaps one the client has (else a later requested one)
  std::string other;     // the prefix it overlaps
};

// Returns the collision Redis's checkPrefixCollisionsOrReply reports for `requested` given the
// client's `existing` prefixes (sorted), or nullopt. Redis scans all pairs; this finds the
// same answer in O(n log n) so that a request with a huge number of prefixes costs no
// quadratic work. `existing_overlap`: some existing prefixes overlap each other (Redis 7.0.15
// accepts such a set after replying an error, see tracking_commands.cc); they are then
// scanned in order, as Redis does.
std::optional<PrefixCollision> FindPrefixCollision(std::span<const std::string_view> requested,
                                                   std::span<const std::string> existing,
                                                   bool existing_overlap = false);

}  // namespace dashkv
