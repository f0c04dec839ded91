// TlsStream: a TLS server stream over a non-blocking TCP socket, with the members of
// tcp::socket that StreamConnection uses (non-blocking read_some/write_some, async_read_some,
// async_write_some), so one connection template serves plain and TLS clients.
// Thread: engine-local (the socket's io_context thread).
//
// Design
//  OpenSSL reads and writes the socket descriptor itself (SSL_set_fd), as Redis does. Every
//  operation is one non-blocking SSL call; when OpenSSL wants the socket readable (or
//  writable, a TLS read may have to write), the async operations wait for that with
//  socket.async_wait and try again. So the synchronous calls never block and never lose bytes
//  when the socket is full. (asio::ssl::stream's synchronous calls write encrypted output with
//  asio::write and drop what a full non-blocking socket does not take; the connection's direct
//  write and its peer watch depend on exactly those non-blocking calls.)
//  A write that ends with SSL_ERROR_WANT_WRITE must be retried with the same bytes; the
//  context sets SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER, so the retry may come from another buffer
//  holding them (StreamConnection moves the unsent rest to its writer's buffer).
//  The handshake (async_handshake) is one more async operation: it costs nothing while the
//  client is silent; the caller bounds its time.
#pragma once

#include <utility>  // before asio: awaitable.hpp uses std::exchange

#include <boost/asio/async_result.hpp>
#include <boost/asio/buffer.hpp>
#include <boost/asio/compose.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/system/error_code.hpp>
#include <cstddef>
#include <memory>

#include "io/tls_context.h"

typedef struct ssl_st SSL;

namespace dashkv::io {

class TlsStream {
 public:
  using executor_type = boost::asio::ip::tcp::socket::executor_type;

  // Takes `socket` (open, connected) and makes it non-blocking; the handshake has not run yet.
  TlsStream(boost::asio::ip::tcp::socket socket, std::shared_ptr<TlsContext> context);
  TlsStream(TlsStream&& other) noexcept;
  TlsStream& operator=(TlsStream&&) = delete;
  ~TlsStream();

  executor_type get_executor() { return socket_.get_executor(); }
  boost::asio::ip::tcp::socket& socket() { return socket_; }

  // Non-blocking: return what OpenSSL could do now, or would_block (nothing done).
  size_t read_some(const boost::asio::mutable_buffer& buf, boost::system::error_code& ec);
  size_t write_some(const boost::asio::const_buffer& buf, boost::system::error_code& ec);

  // Completes with (error_code, bytes) once some bytes are read (eof: the peer closed).
  template <typename MutableBuffers, typename Token>
  auto async_read_some(const MutableBuffers& buffers, Token&& token) {
    boost::asio::mutable_buffer buf = FirstBuffer<boost::asio::mutable_buffer>(buffers);
    return Async(
        [this, buf](boost::system::error_code& ec, size_t* n) { return TryRead(buf, ec, n); },
        std::forward<Token>(token));
  }
  // Completes with (error_code, bytes) once some bytes are written.
  template <typename ConstBuffers, typename Token>
  auto async_write_some(const ConstBuffers& buffers, Token&& token) {
    boost::asio::const_buffer buf = FirstBuffer<boost::asio::const_buffer>(buffers);
    return Async(
        [this, buf](boost::system::error_code& ec, size_t* n) { return TryWrite(buf, ec, n); },
        std::forward<Token>(token));
  }
  // Runs the server side of the handshake; completes with (error_code, 0).
  template <typename Token>
  auto async_handshake(Token&& token) {
    return Async([this](boost::system::error_code& ec, size_t*) { return TryHandshake(ec); },
                 std::forward<Token>(token));
  }

  // Sends close_notify when the session is healthy (best effort, no waiting), then shuts the
  // socket down and closes it; pending operations complete with operation_aborted.
  void Close();

 private:
  // What an SSL call needs before it can go on.
  enum class Want : uint8_t { kNothing, kRead, kWrite };

  // One attempt each; kNothing with ec set on failure.
  Want TryRead(const boost::asio::mutable_buffer& buf, boost::system::error_code& ec, size_t* n);
  Want TryWrite(const boost::asio::const_buffer& buf, boost::system::error_code& ec, size_t* n);
  Want TryHandshake(boost::system::error_code& ec);
  // Maps the result `ret` of an SSL call to what it waits for, or to ec.
  Want Classify(int ret, boost::system::error_code& ec);
  // The shared steps of TryRead and TryWrite around `op(len)` (SSL_read or SSL_write of at most
  // `size` bytes): refuses on a failed stream, counts the bytes moved, classifies a failure.
  template <typename Fn>
  Want Transfer(size_t size, boost::system::error_code& ec, size_t* n, Fn&& op);

  template <typename Buffer, typename Buffers>
  static Buffer FirstBuffer(const Buffers& buffers) {
    for (auto it = boost::asio::buffer_sequence_begin(buffers);
         it != boost::asio::buffer_sequence_end(buffers); ++it) {
      if (Buffer b(*it); b.size() > 0) return b;
    }
    return Buffer();
  }

  // The composed operation: attempt; wait for readiness and repeat while OpenSSL wants the
  // socket; a result ready at the first attempt is delivered through a post (never inside the
  // initiating call).
  template <typename Attempt>
  struct Op {
    TlsStream* stream;
    Attempt attempt;
    enum class State : uint8_t { kStart, kWaiting, kPosted } state = State::kStart;
    boost::system::error_code result_ec{};
    size_t result_n = 0;

    template <typename Self>
    void operator()(Self& self, boost::system::error_code ec = {}) {
      if (state == State::kPosted) return self.complete(result_ec, result_n);
      if (ec) return self.complete(ec, 0);  // the wait failed: closed or cancelled
      size_t n = 0;
      Want want = attempt(ec, &n);
      if (want != Want::kNothing) {
        state = State::kWaiting;
        stream->socket_.async_wait(want == Want::kRead
                                       ? boost::asio::ip::tcp::socket::wait_read
                                       : boost::asio::ip::tcp::socket::wait_write,
                                   std::move(self));
        return;
      }
      if (state == State::kStart) {
        state = State::kPosted;
        result_ec = ec;
        result_n = n;
        boost::asio::post(stream->socket_.get_executor(), std::move(self));
        return;
      }
      self.complete(ec, n);
    }
  };

  template <typename Attempt, typename Token>
  auto Async(Attempt attempt, Token&& token) {
    return boost::asio::async_compose<Token, void(boost::system::error_code, size_t)>(
        Op<Attempt>{this, std::move(attempt)}, token, socket_);
  }

  boost::asio::ip::tcp::socket socket_;
  SSL* ssl_ = nullptr;
  std::shared_ptr<TlsContext> context_;  // kept alive for ssl_
  bool handshake_done_ = false;
  bool failed_ = false;  // a fatal TLS or socket error: no close_notify
};

}  // namespace dashkv::io
