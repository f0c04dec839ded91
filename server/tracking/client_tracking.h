// ClientTracking: one connection's CLIENT TRACKING state (server-assisted client-side caching,
// Redis 7.0 semantics): its mode, redirect and BCAST prefixes, and the invalidation messages
// held back while the connection runs a batch of commands.
// Thread: engine-local (the connection's thread).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace dashkv {

struct ClientTracking {
  bool on = false;
  bool bcast = false;
  bool optin = false;
  bool optout = false;
  bool noloop = false;
  // CLIENT CACHING yes (OPTIN) / no (OPTOUT) was given for the next command or transaction.
  bool caching = false;
  // An invalidation found the redirect client gone (CLIENT LIST flag R).
  bool broken_redirect = false;
  uint64_t redirect = 0;         // client id; 0: none
  unsigned redirect_engine = 0;  // the engine of the redirect client (a client never moves)
  std::vector<std::string> prefixes;  // BCAST prefixes, sorted
  // Some of them overlap each other (accepted after an error, as Redis 7.0.15 does; see
  // CLIENT TRACKING in server/commands/tracking_commands.cc).
  bool prefixes_overlap = false;

  // Set while the connection runs a batch: the invalidations for this client wait in
  // `deferred` and are written after the batch's replies. An invalidation never overtakes the
  // reply of a read it follows (the read and the change may run on different threads), and one
  // caused by the client's own write follows that write's reply, as in Redis.
  bool dispatching = false;
  std::string deferred;

  // Returns whether a read-only command run now remembers its keys for this client.
  bool TracksReads() const {
    if (!on || bcast) return false;
    if (optin) return caching;
    if (optout) return !caching;
    return true;
  }
};

// Bits of ConnState::tracking_now, read by the shards while a command of the client runs.
enum TrackingNow : uint8_t {
  kTrackingOn = 1 << 0,     // tracking is on: the client's changes name it (NOLOOP)
  kTrackingReads = 1 << 1,  // read-only commands remember their keys for the client
};

// The change origin (ChangeListeners::origin) of a command of `client` with tracking on, or of
// a call of a script it runs (`by_script`). A NOLOOP client is not sent its own changes, as in
// Redis 7.0, where a script's writes are the caller's in default mode but, in BCAST mode, the
// script client's (so a BCAST NOLOOP client is sent the changes of the scripts it runs).
constexpr uint64_t ChangeOriginOf(uint64_t client, bool by_script) {
  return client << 1 | static_cast<uint64_t>(by_script);
}
// The client a change of origin `origin` is not sent to, if NOLOOP: for a key it read, and
// for a key under one of its BCAST prefixes (0: none).
constexpr uint64_t ReaderOrigin(uint64_t origin) { return origin >> 1; }
constexpr uint64_t BcastOrigin(uint64_t origin) { return (origin & 1) != 0 ? 0 : origin >> 1; }

// One invalidation on its way from a shard to the engine of the client it is for.
struct Invalidation {
  uint64_t client;  // the tracking client
  uint64_t origin;  // the client whose command changed the key (0: none), for NOLOOP
  // 0: a key the client read (one message per key); otherwise a BCAST prefix group: the
  // consecutive entries of one client with the same group leave as one message.
  uint32_t group;
  std::string key;
};

}  // namespace dashkv
