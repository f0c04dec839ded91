// Server::ClientCron: the once-a-second upkeep of one engine's clients (idle timeout, and the
// memory of closed connections given back to the OS).
#include "core/memory.h"
#include "io/connection.h"
#include "server/pubsub/pubsub.h"
#include "server/server.h"

namespace dashkv {
namespace {

// Fall of an engine's live allocations (e.g. ~1,000 closed idle connections) after which its
// once-a-second upkeep returns the freed pages to the OS.
constexpr int64_t kReturnMemoryDrop = 8 << 20;

}  // namespace

void Server::ClientCron(unsigned engine, int64_t now_ms) {
  const int64_t timeout_s = config_.timeout.load(std::memory_order_relaxed);
  if (timeout_s > 0) {
    // As Redis's clientsCronHandleTimeout: blocked and subscribed clients are exempt.
    for (ConnState* st : engine_states_[engine].clients) {
      if (st->blocked || InSubscribedMode(*st)) continue;
      if (now_ms - st->conn->last_command_ms() > timeout_s * 1000) st->conn->Shutdown();
    }
  }
  // mimalloc keeps a thread's freed pages until that thread frees more: an engine that went
  // idle after many connections closed would hold their memory resident for good.
  ReturnFreedMemoryIfDropped(kReturnMemoryDrop);
}

}  // namespace dashkv
