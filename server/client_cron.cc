// Server::ClientCron: the once-a-second upkeep of one engine's clients (idle timeout).
#include "io/connection.h"
#include "server/pubsub.h"
#include "server/server.h"

namespace dashkv {

void Server::ClientCron(unsigned engine, int64_t now_ms) {
  const int64_t timeout_s = config_.timeout.load(std::memory_order_relaxed);
  if (timeout_s > 0) {
    // As Redis's clientsCronHandleTimeout: blocked and subscribed clients are exempt.
    for (ConnState* st : engine_states_[engine].clients) {
      if (st->blocked || InSubscribedMode(*st)) continue;
      if (now_ms - st->conn->last_command_ms() > timeout_s * 1000) st->conn->Shutdown();
    }
  }
}

}  // namespace dashkv
