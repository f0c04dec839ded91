// ClientRegistry: the connected clients of every engine (CLIENT LIST/KILL, INFO clients, the
// idle timeout), and what the listener tells the server (its port, taking in pending accepts).
// Thread: engine i's set is touched only on engine i; the counts are atomics.
#pragma once

#include <utility>  // before asio: awaitable.hpp uses std::exchange

#include <absl/container/flat_hash_set.h>

#include <atomic>
#include <boost/asio/awaitable.hpp>
#include <cstdint>
#include <functional>
#include <vector>

#include "io/engine_pool.h"

namespace dashkv {

class ConnState;
class Config;

class ClientRegistry {
 public:
  ClientRegistry(io::EnginePool& pool, const Config& config);

  // REQUIRES: runs on `engine`.
  void Add(unsigned engine, ConnState* state);
  void Remove(unsigned engine, ConnState* state);
  // The clients of engine `i`. REQUIRES: called on engine i.
  const absl::flat_hash_set<ConnState*>& on(unsigned i) const { return engines_[i].clients; }
  int64_t connected() const { return connected_.load(std::memory_order_relaxed); }

  // The once-a-second upkeep of engine `engine`'s clients: closes those idle for longer than
  // `timeout`, and gives the memory of closed connections back to the OS.
  // REQUIRES: runs on `engine`.
  void Cron(unsigned engine, int64_t now_ms);

  // Sets what AcceptPending runs on engine 0 (main: the Listener's AcceptPending). Call before
  // clients connect.
  void set_accept_pending(std::function<void()> fn) { accept_pending_ = std::move(fn); }
  // Takes in every connection waiting in the listen backlog, so that a following scan of the
  // registries (CLIENT LIST/KILL) sees a client whose connect() has returned.
  // REQUIRES: called from a coroutine on an engine thread.
  boost::asio::awaitable<void> AcceptPending();
  // The port actually listened on (set by main once bound).
  std::atomic<int>& port() { return port_; }

 private:
  struct alignas(64) EngineClients {
    absl::flat_hash_set<ConnState*> clients;
  };

  io::EnginePool& pool_;
  const Config& config_;
  std::vector<EngineClients> engines_;
  std::atomic<int64_t> connected_{0};
  std::atomic<int> port_{0};
  std::function<void()> accept_pending_;  // immutable once clients connect
};

}  // namespace dashkv
