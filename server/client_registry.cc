#include "server/client_registry.h"

#include "core/memory.h"
#include "io/connection.h"
#include "server/config.h"
#include "server/conn_state.h"
#include "server/pubsub/pubsub.h"

namespace dashkv {
namespace {

// Fall of an engine's live allocations (e.g. ~1,000 closed idle connections) after which its
// once-a-second upkeep returns the freed pages to the OS.
constexpr int64_t kReturnMemoryDrop = 8 << 20;

}  // namespace

ClientRegistry::ClientRegistry(io::EnginePool& pool, const Config& config)
    : pool_(pool), config_(config), engines_(pool.size()) {}

void ClientRegistry::Add(unsigned engine, ConnState* state) {
  engines_[engine].clients.insert(state);
  connected_.fetch_add(1, std::memory_order_relaxed);
}

void ClientRegistry::Remove(unsigned engine, ConnState* state) {
  engines_[engine].clients.erase(state);
  connected_.fetch_sub(1, std::memory_order_relaxed);
}

void ClientRegistry::Cron(unsigned engine, int64_t now_ms) {
  const int64_t timeout_s = config_.timeout.load(std::memory_order_relaxed);
  if (timeout_s > 0) {
    // As Redis's clientsCronHandleTimeout: blocked and subscribed clients are exempt.
    for (ConnState* st : engines_[engine].clients) {
      if (st->blocked || InSubscribedMode(*st)) continue;
      if (now_ms - st->conn->last_command_ms() > timeout_s * 1000) st->conn->Shutdown();
    }
  }
  // mimalloc keeps a thread's freed pages until that thread frees more: an engine that went
  // idle after many connections closed would hold their memory resident for good. Once a
  // second, connections may open and close in between: the resident set tells then.
  if (!ReturnFreedMemoryIfDropped(kReturnMemoryDrop)) {
    ReturnFreedMemoryIfResident(kReturnMemoryDrop);
  }
}

boost::asio::awaitable<void> ClientRegistry::AcceptPending() {
  if (!accept_pending_) co_return;
  co_await pool_.Await(0, [this] {
    accept_pending_();
    return true;
  });
}

}  // namespace dashkv
