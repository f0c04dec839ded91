// Listener: binds the server's TCP addresses (the plain port and, when set, the TLS port on the
// same addresses), accepts on engine 0 and hands every accepted socket to the next engine
// round-robin, where its Connection lives for its whole life. Clients beyond
// ClientLimits::maxclients get Redis's "-ERR max number of clients reached" and are closed;
// in protected mode, clients from other than loopback addresses get Redis's "-DENIED ..." and
// are closed; an accept that fails (EMFILE, ENFILE) is retried after 10 ms, never given up.
// The TLS port can move at run time (SetTlsPort, for CONFIG SET tls-port).
// Thread: Start/Stop from the owning (main) thread; the accept loops and SetTlsPort run on
// engine kAcceptEngine; the counters are atomic.
#pragma once

#include <absl/status/status.h>
#include <absl/status/statusor.h>

#include <atomic>
#include <boost/asio/ip/tcp.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "io/connection.h"
#include "io/engine_pool.h"
#include "io/service.h"
#include "io/tls_context.h"

namespace dashkv::io {

struct ListenerOptions {
  // Space-separated addresses, as Redis's `bind`: "*" is every IPv4 address, "::*" every IPv6
  // address; a "-" prefix makes an address optional (skipped if it does not exist here).
  std::string bind = "0.0.0.0";
  uint16_t port = 6379;  // 0: an ephemeral port (see port())
  ConnectionOptions conn;
  // TLS port on the same addresses (0: none; SetTlsPort moves it). Its connections take the
  // context `tls` holds at accept time (CONFIG SET swaps it); a handshake not done within
  // tls_handshake_timeout is dropped. REQUIRES with tls_port or SetTlsPort: tls outlives the
  // listener and its connections.
  uint16_t tls_port = 0;
  const TlsContextSlot* tls = nullptr;
  std::chrono::milliseconds tls_handshake_timeout{10000};
  // Protected mode: returns whether clients from non-loopback addresses are refused now (Redis:
  // protected-mode yes and no password for the default user). Asked at each accept from such an
  // address, on engine 0. Empty: never.
  std::function<bool()> protected_mode{};
};

// Returns whether `address` is a loopback address (127.0.0.0/8, ::1, or IPv4-mapped 127/8):
// the clients protected mode lets in.
bool IsLoopback(const boost::asio::ip::address& address);

// Redis's reply to a client that protected mode refuses (one line, with its CRLF).
extern const std::string_view kProtectedModeError;

// Design
//  One acceptor per bind address and port, all on engine 0 (with 2-8 engines one accept loop
//  is far from a bottleneck; SO_REUSEPORT per engine would spread accepts but loses
//  round-robin balance). async_accept creates each socket directly on the chosen engine's
//  io_context, and the Connection coroutine is spawned there through the engine's inbox.
//  An acceptor is shared by the listener and its accept loop: closing it (Stop, SetTlsPort)
//  ends the loop the next time it resumes, whether its pending accept was cancelled
//  (operation_aborted) or had already completed, and the loop frees it on leaving.
class Listener {
 public:
  // The engine whose io_context owns the acceptors and runs the accept loops.
  static constexpr unsigned kAcceptEngine = 0;

  Listener(EnginePool& pool, Service& service, ListenerOptions options);
  // REQUIRES: Stop() was called, or the engines are stopped and joined.
  ~Listener();

  // Binds every address (SO_REUSEADDR) and starts accepting. Returns an error when an address
  // cannot be bound (port in use, bad address) or when no address could be bound.
  // REQUIRES: the pool is started; called once.
  absl::Status Start();
  // Returns the bound port (the actual one when options.port was 0).
  uint16_t port() const { return port_; }
  // Returns the TLS port listened on (0: none). Any thread.
  uint16_t tls_port() const { return tls_port_.load(std::memory_order_relaxed); }
  // Closes the acceptors (existing connections stay open) and waits until engine 0 has done so.
  // REQUIRES: the pool is still running.
  void Stop();

  // Moves the TLS listener to `port` on every bind address, or closes it (0), as Redis's
  // CONFIG SET tls-port: the new port is bound on every address first, and only then are the
  // old TLS acceptors closed, so a port that cannot be bound (in use, the plain port) returns
  // the error and the old port keeps listening. Open connections are not touched. The same
  // port as now changes nothing. Must not block beyond the bind/listen system calls.
  // REQUIRES: on engine kAcceptEngine; Start succeeded; options.tls is set and holds a
  // context when `port` is not 0.
  absl::Status SetTlsPort(uint16_t port);

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
  struct Acceptor {
    Acceptor(boost::asio::io_context& context, bool tls) : acceptor(context), tls(tls) {}
    boost::asio::ip::tcp::acceptor acceptor;
    const bool tls;
  };
  // One address of options.bind ("-" prefix: optional).
  struct BindAddress {
    std::string ip;
    bool optional;
  };
  // Returns an acceptor listening on `address`:`port` (0: ephemeral), or null when the address
  // is optional and does not exist here.
  absl::StatusOr<std::shared_ptr<Acceptor>> Bind(const BindAddress& address, uint16_t port,
                                                 bool tls);
  // Binds every address on the TLS port `port` (all or none).
  absl::StatusOr<std::vector<std::shared_ptr<Acceptor>>> BindTls(uint16_t port);
  // Accepts until the acceptor is closed. Runs on engine 0.
  boost::asio::awaitable<void> AcceptLoop(std::shared_ptr<Acceptor> acceptor);
  // Counts an accepted socket and starts its Connection on `target` (or refuses it beyond
  // maxclients or in protected mode). Runs on engine 0.
  void Admit(boost::asio::ip::tcp::socket socket, Engine& target, bool tls);
  // Sends `error` (best effort) to a refused client and closes it. Runs on the socket's engine.
  static void RefuseClient(boost::asio::ip::tcp::socket socket, std::string_view error);
  // Runs the TLS handshake (bounded by `timeout`), then the connection, or sends `refusal`
  // (when not empty) over TLS and closes. `counted`: the socket counts as live.
  static boost::asio::awaitable<void> ServeTls(boost::asio::ip::tcp::socket socket,
                                               std::shared_ptr<TlsContext> context,
                                               Engine& target, Service* service,
                                               ConnectionOptions options,
                                               std::shared_ptr<Stats> stats,
                                               std::string_view refusal,
                                               std::chrono::milliseconds timeout);
  // Runs one connection on its engine and keeps the counters.
  static boost::asio::awaitable<void> Serve(std::unique_ptr<Connection> conn,
                                            std::shared_ptr<Stats> stats);

  EnginePool& pool_;
  Service& service_;
  ListenerOptions options_;
  uint16_t port_ = 0;
  unsigned next_engine_ = 0;  // engine 0 only
  bool stopped_ = false;  // owning thread
  bool closed_ = false;   // engine 0: Stop has closed the acceptors
  std::atomic<uint16_t> tls_port_{0};  // written on engine 0
  std::vector<BindAddress> addresses_;  // parsed by Start
  // Shared with the connection coroutines, which may outlive the Listener.
  std::shared_ptr<Stats> stats_ = std::make_shared<Stats>();
  // Plain and TLS acceptors; engine 0 only once Start has returned.
  std::vector<std::shared_ptr<Acceptor>> acceptors_;
};

}  // namespace dashkv::io
