// ClientLimits: the client settings that every connection and the listener read while they
// run, changed at run time by CONFIG SET.
// Thread-safe: relaxed atomics (a reader racing a store sees the old or the new value).
#pragma once

#include <atomic>
#include <cstdint>

namespace dashkv::io {

// Each connection reads these whenever it parses input and the listener at every accept, so a
// change applies at once to every client. Defaults are Redis's.
struct ClientLimits {
  std::atomic<int64_t> max_bulk_len{512LL * 1024 * 1024};         // proto-max-bulk-len
  std::atomic<int64_t> max_query_buffer{1024LL * 1024 * 1024};    // client-query-buffer-limit
  std::atomic<bool> auth_required{false};  // requirepass is set
  std::atomic<int64_t> maxclients{10000};  // the Listener refuses connections beyond it
  std::atomic<int64_t> tcp_keepalive{300};  // seconds; applied to connections opened later
};

// Returns a ClientLimits holding the defaults (for connections given none).
inline const ClientLimits& DefaultClientLimits() {
  static const ClientLimits limits;
  return limits;
}

}  // namespace dashkv::io
