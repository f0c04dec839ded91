// Listener: binds the server's TCP addresses, accepts on engine 0 and hands every accepted
// socket to the next engine round-robin, where its Connection lives for its whole life. Clients
// beyond ClientLimits::maxclients get Redis's "-ERR max number of clients reached" and are
// closed; an accept that fails (EMFILE, ENFILE) is retried after 10 ms, never given up.
// Thread: Start/Stop from the owning (main) thread; the accept loops run on engine 0; the
// counters are atomic.
#pragma once

#include <absl/status/status.h>

#include <atomic>
#include <boost/asio/ip/tcp.hpp>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "io/connection.h"
#include "io/engine_pool.h"
#include "io/service.h"

namespace dashkv::io {

struct ListenerOptions {
  // Space-separated addresses, as Redis's `bind`: "*" is every IPv4 address, "::*" every IPv6
  // address; a "-" prefix makes an address optional (skipped if it does not exist here).
  std::string bind = "0.0.0.0";
  uint16_t port = 6379;  // 0: an ephemeral port (see port())
  ConnectionOptions conn;
};

// Design
//  One acceptor per bind address, all on engine 0 (with 2-8 engines one accept loop is far
//  from a bottleneck; SO_REUSEPORT per engine would spread accepts but loses round-robin
//  balance). async_accept creates each socket directly on the chosen engine's io_context, and
//  the Connection coroutine is spawned there through the engine's inbox.
class Listener {
 public:
  Listener(EnginePool& pool, Service& service, ListenerOptions options);
  // REQUIRES: Stop() was called, or the engines are stopped and joined.
  ~Listener();

  // Binds every address (SO_REUSEADDR) and starts accepting. Returns an error when an address
  // cannot be bound (port in use, bad address) or when no address could be bound.
  // REQUIRES: the pool is started; called once.
  absl::Status Start();
  // Returns the bound port (the actual one when options.port was 0).
  uint16_t port() const { return port_; }
  // Closes the acceptors (existing connections stay open) and waits until engine 0 has done so.
  // REQUIRES: the pool is still running.
  void Stop();

  // Accepts, without waiting, every connection already in the backlog and hands each to its
  // engine as the accept loop does (registered there before any later task of that engine
  // runs; at once when it is the calling engine). Lets CLIENT LIST/KILL see a client whose
  // connect() has returned although the accept loop has not run yet. REQUIRES: on engine 0.
  void AcceptPending();

  // Connections currently open / accepted since Start.
  uint64_t live_connections() const { return stats_->live.load(std::memory_order_relaxed); }
  uint64_t total_accepted() const { return stats_->accepted.load(std::memory_order_relaxed); }
  // Connections closed at accept because maxclients were connected.
  uint64_t total_refused() const { return stats_->refused.load(std::memory_order_relaxed); }

 private:
  struct Stats {
    std::atomic<uint64_t> live{0};
    std::atomic<uint64_t> accepted{0};
    std::atomic<uint64_t> refused{0};
  };
  absl::Status Bind(std::string_view address, bool optional);
  // Accepts until the acceptor is closed. Runs on engine 0.
  boost::asio::awaitable<void> AcceptLoop(boost::asio::ip::tcp::acceptor* acceptor);
  // Counts an accepted socket and starts its Connection on `target` (or refuses it beyond
  // maxclients). Runs on engine 0.
  void Admit(boost::asio::ip::tcp::socket socket, Engine& target);
  // Sends Redis's "max number of clients reached" error to a client over maxclients and closes
  // it. Runs on the socket's engine.
  static void RefuseClient(boost::asio::ip::tcp::socket socket,
                           const std::shared_ptr<Stats>& stats);
  // Runs one connection on its engine and keeps the counters.
  static boost::asio::awaitable<void> Serve(std::unique_ptr<Connection> conn,
                                            std::shared_ptr<Stats> stats);

  EnginePool& pool_;
  Service& service_;
  ListenerOptions options_;
  uint16_t port_ = 0;
  unsigned next_engine_ = 0;  // engine 0 only
  bool stopped_ = false;
  // Shared with the connection coroutines, which may outlive the Listener.
  std::shared_ptr<Stats> stats_ = std::make_shared<Stats>();
  std::vector<std::unique_ptr<boost::asio::ip::tcp::acceptor>> acceptors_;
};

}  // namespace dashkv::io
