// Connection: one client socket for its whole life on one engine: read -> parse -> dispatch a
// batch to the Service -> write all replies with one socket write.
// Thread: engine-local.
#pragma once

#include <utility>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <cstdint>
#include <memory>
#include <string>

#include "io/reply_builder.h"
#include "io/resp_parser.h"
#include "io/service.h"

namespace dashkv::io {

class Engine;

struct ConnectionOptions {
  RespLimits limits;
  size_t max_query_buffer = 1024LL * 1024 * 1024;  // client-query-buffer-limit
};

class Connection {
 public:
  Connection(boost::asio::ip::tcp::socket socket, Engine& engine, Service& service,
             ConnectionOptions options);
  ~Connection();

  // Serves the client until it disconnects, sends QUIT, or violates the protocol.
  boost::asio::awaitable<void> Run();

  uint64_t id() const { return id_; }
  Engine& engine() { return engine_; }
  const std::string& remote_address() const { return remote_; }  // "ip:port"
  const std::string& local_address() const { return local_; }
  int fd();
  RespVersion resp_version() const { return reply_.version(); }
  void set_resp_version(RespVersion v) { reply_.set_version(v); }
  // Closes the connection once the replies of the current batch are written.
  void RequestClose() { close_requested_ = true; }
  bool close_requested() const { return close_requested_; }
  // Closes the socket now (CLIENT KILL on this engine); Run() returns soon after.
  void Shutdown();
  // Milliseconds since the epoch (wall clock) of creation and of the last command.
  int64_t created_ms() const { return created_ms_; }
  int64_t last_command_ms() const { return last_command_ms_; }
  size_t query_buffer_size() const;
  size_t query_buffer_free() const;
  size_t output_buffer_size() const { return reply_.size(); }
  // Number of commands in the batch being dispatched (for INFO/CLIENT LIST).
  ConnectionState* state() { return state_.get(); }

 private:
  // (implementation detail)
  boost::asio::ip::tcp::socket socket_;
  Engine& engine_;
  Service& service_;
  ConnectionOptions options_;
  RespParser parser_;
  ReplyBuilder reply_;
  std::unique_ptr<ConnectionState> state_;
  std::string remote_, local_;
  uint64_t id_;
  int64_t created_ms_ = 0;
  int64_t last_command_ms_ = 0;
  bool close_requested_ = false;
  std::string in_;      // input buffer
  size_t in_start_ = 0; // first unconsumed byte of in_
  size_t in_end_ = 0;   // end of valid data in in_
};

}  // namespace dashkv::io
