// RespClient: a small outbound RESP client over one TCP connection — connect with a timeout,
// write commands, read replies one at a time with a size limit — for server-to-server traffic
// (MIGRATE; later replication). Everything is asynchronous on the io_context it was made for;
// nothing blocks the thread.
// Thread: engine-local (the thread running that io_context).
//
// Design
//   Timeouts: each call arms one steady_timer; when it fires before the operation completes it
//   cancels the socket's pending operations, and the call returns DeadlineExceeded. A stale
//   expiry (the operation completed first) is recognised by an operation counter and ignored.
//   The timer's handler shares the socket state (shared_ptr), so destroying the client while a
//   cancelled wait is still queued is safe.
//   Reading: input accumulates in one buffer. ParseRespReply decides from the buffered bytes
//   whether a whole reply is there, or how many bytes it needs at least; the client reads until
//   it has them. A reply larger than the caller's limit fails as soon as its size is known (a
//   bulk string's or array's declared length), before anything is allocated for it, so a peer
//   declaring a 1 GB bulk costs nothing. Input is only buffered up to the limit.
//   Host names that are not literal addresses are resolved with asio's asynchronous resolver,
//   which runs getaddrinfo on a helper thread asio starts on first use (the only thread not
//   started by io/engine.h; it never touches server state).
#pragma once

#include <utility>  // before asio: awaitable.hpp uses std::exchange

#include <absl/status/status.h>
#include <absl/status/statusor.h>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace dashkv::io {

// One RESP2 reply as read from a peer.
struct RespReply {
  enum class Type : uint8_t { kSimpleString, kError, kInteger, kBulkString, kNull, kArray };

  Type type = Type::kNull;
  std::string str;                  // kSimpleString, kError (without the '-'), kBulkString
  int64_t integer = 0;              // kInteger
  std::vector<RespReply> elements;  // kArray

  bool is_error() const { return type == Type::kError; }
};

// The outcome of ParseRespReply.
struct RespParseResult {
  // Not ok: the input is not RESP (DataLoss) or the reply exceeds the limits
  // (ResourceExhausted); the stream cannot be resynchronised.
  absl::Status status;
  // > 0: one whole reply was parsed into `reply` from the first `consumed` bytes.
  size_t consumed = 0;
  // consumed == 0 and ok: the reply is incomplete; the input must grow to at least `need` bytes
  // (counted from its start) before parsing again can make progress.
  size_t need = 0;
  RespReply reply;
};

// Parses one RESP2 reply (+ - : $ *, with $-1 and *-1 as null) from the front of `in`. The
// whole reply may take at most `max_bytes` bytes on the wire and nest arrays at most `max_depth`
// deep. Reserves memory only for what `in` holds.
RespParseResult ParseRespReply(std::string_view in, size_t max_bytes, int max_depth = 16);

// Appends `args` to `out` as one RESP command (an array of bulk strings).
void AppendRespCommand(std::string& out, std::span<const std::string_view> args);

class RespClient {
 public:
  // The client is not connected until Connect succeeds. `context` must outlive the client.
  explicit RespClient(boost::asio::io_context& context);
  // Closes the connection (pending operations complete with an error).
  ~RespClient();
  RespClient(const RespClient&) = delete;
  RespClient& operator=(const RespClient&) = delete;

  // Connects to `host` (a literal IPv4/IPv6 address or a name to resolve) on `port`; sets
  // TCP_NODELAY. Fails with NotFound when the name does not resolve, DeadlineExceeded when
  // resolving and connecting take longer than `timeout`, Unavailable when the connection is
  // refused or fails. REQUIRES: not connected.
  boost::asio::awaitable<absl::Status> Connect(std::string host, uint16_t port,
                                               std::chrono::milliseconds timeout);

  // Writes the concatenation of `pieces` (kept alive by the caller until it resumes). Fails
  // with DeadlineExceeded when the peer accepts no byte for `timeout` (an idle timeout, as
  // Redis's MIGRATE: a large write may take longer in total), Unavailable on a socket error.
  boost::asio::awaitable<absl::Status> Write(std::span<const std::string_view> pieces,
                                             std::chrono::milliseconds timeout);
  boost::asio::awaitable<absl::Status> Write(std::string_view bytes,
                                             std::chrono::milliseconds timeout);

  // Reads the next reply; it must arrive whole within `timeout` and take at most `max_bytes`
  // on the wire. Fails with DeadlineExceeded, Unavailable (peer closed, socket error),
  // DataLoss (not RESP) or ResourceExhausted (over the limit); after a failure the connection
  // is closed. A reply of type kError is a success of this call.
  boost::asio::awaitable<absl::StatusOr<RespReply>> ReadReply(std::chrono::milliseconds timeout,
                                                              size_t max_bytes = 64 << 10);

  // Closes the connection. Idempotent.
  void Close();
  bool is_open() const;
  // Bytes read from the peer and not yet consumed by a reply.
  size_t buffered() const { return in_.size() - in_pos_; }

 private:
  struct State;
  class Deadline;

  std::shared_ptr<State> state_;
  std::string in_;     // bytes read: [in_pos_, in_.size()) are not consumed yet
  size_t in_pos_ = 0;
};

}  // namespace dashkv::io
