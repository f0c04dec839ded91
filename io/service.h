// Service: the interface through which io/ hands parsed commands to the datastore. server/
// implements it; io/ never sees server types (cf. Dragonfly's facade/service_interface.h).
// Thread: a Service is shared by all engines and must be thread-safe; each call runs on the
// engine thread that owns the connection.
#pragma once

#include <utility>  // before asio: awaitable.hpp uses std::exchange

#include <boost/asio/awaitable.hpp>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "io/http_request.h"
#include "io/http_response.h"
#include "io/reply_builder.h"

namespace dashkv::io {

class Connection;

// One parsed command: views into the connection's input buffer, valid until Dispatch returns.
using CmdArgs = std::span<const std::string_view>;

// Per-connection state owned by the server (selected DB, name, MULTI state...). io/ only owns
// and destroys it. Thread: engine-local.
class ConnectionState {
 public:
  virtual ~ConnectionState() = default;
};

class Service {
 public:
  virtual ~Service() = default;

  // Creates the server's state for a new connection. Runs on the connection's engine thread.
  virtual std::unique_ptr<ConnectionState> OnConnect(Connection& conn) = 0;

  // Runs a batch of pipelined commands in order and appends exactly one reply per command to
  // `out` (in request order). The batch holds at least one command. May suspend (hops to other
  // shards). Sets conn.RequestClose() for QUIT and similar.
  virtual boost::asio::awaitable<void> Dispatch(Connection& conn, ConnectionState& state,
                                                std::span<const CmdArgs> batch,
                                                ReplyBuilder& out) = 0;

  // Called once when the connection ends (after the last Dispatch returned).
  virtual void OnDisconnect(Connection& conn, ConnectionState& state) = 0;

  // Answers a GET or HEAD `request` that arrived on a connection whose first bytes were an HTTP
  // request line (io/http_request.h; the connection speaks HTTP from then on): fills
  // `response` (the connection encodes it, and leaves the body out for HEAD). Requests with
  // other methods or with a body are answered by the connection itself (405, 413). May suspend.
  // The default knows no path: 404.
  virtual boost::asio::awaitable<void> ServeHttp(Connection& /*conn*/,
                                                 ConnectionState& /*state*/,
                                                 const HttpRequest& /*request*/,
                                                 HttpResponse& response) {
    response.status = 404;
    response.body = "Not Found\n";
    co_return;
  }
};

}  // namespace dashkv::io
