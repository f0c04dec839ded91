#include "io/tls_stream.h"

#include <boost/asio/error.hpp>
#include <boost/asio/ssl/error.hpp>
#include <cerrno>
#include <climits>

#include <openssl/err.h>
#include <openssl/ssl.h>

namespace dashkv::io {

namespace asio = boost::asio;

TlsStream::TlsStream(asio::ip::tcp::socket socket, std::shared_ptr<TlsContext> context)
    : socket_(std::move(socket)), context_(std::move(context)) {
  boost::system::error_code ec;
  socket_.non_blocking(true, ec);
  ssl_ = SSL_new(context_->native_handle());
  if (ssl_ == nullptr || SSL_set_fd(ssl_, socket_.native_handle()) != 1) {
    failed_ = true;  // out of memory: TryHandshake reports it
  } else {
    SSL_set_accept_state(ssl_);
  }
}

TlsStream::TlsStream(TlsStream&& other) noexcept
    : socket_(std::move(other.socket_)),
      ssl_(std::exchange(other.ssl_, nullptr)),
      context_(std::move(other.context_)),
      handshake_done_(other.handshake_done_),
      failed_(other.failed_) {}

TlsStream::~TlsStream() {
  if (ssl_ != nullptr) SSL_free(ssl_);
}

TlsStream::Want TlsStream::Classify(int ret, boost::system::error_code& ec) {
  const int saved_errno = errno;
  switch (SSL_get_error(ssl_, ret)) {
    case SSL_ERROR_WANT_READ:
      return Want::kRead;
    case SSL_ERROR_WANT_WRITE:
      return Want::kWrite;
    case SSL_ERROR_ZERO_RETURN:  // close_notify (or, with IGNORE_UNEXPECTED_EOF, a bare FIN)
      ec = asio::error::eof;
      break;
    case SSL_ERROR_SYSCALL:
      failed_ = true;
      ec = saved_errno != 0 ? boost::system::error_code(saved_errno, boost::system::system_category())
                            : boost::system::error_code(asio::error::eof);
      break;
    default: {
      failed_ = true;
      unsigned long e = ERR_get_error();
      ec = e != 0 ? boost::system::error_code(static_cast<int>(e), asio::error::get_ssl_category())
                  : boost::system::error_code(asio::error::connection_aborted);
      break;
    }
  }
  ERR_clear_error();
  return Want::kNothing;
}

template <typename Fn>
TlsStream::Want TlsStream::Transfer(size_t size, boost::system::error_code& ec, size_t* n,
                                    Fn&& op) {
  *n = 0;
  if (failed_ || ssl_ == nullptr) {
    ec = asio::error::connection_aborted;
    return Want::kNothing;
  }
  if (size == 0) return Want::kNothing;
  ERR_clear_error();
  errno = 0;
  int r = op(static_cast<int>(std::min<size_t>(size, INT_MAX)));
  if (r > 0) {
    *n = static_cast<size_t>(r);
    return Want::kNothing;
  }
  return Classify(r, ec);
}

TlsStream::Want TlsStream::TryRead(const asio::mutable_buffer& buf, boost::system::error_code& ec,
                                   size_t* n) {
  return Transfer(buf.size(), ec, n, [&](int len) { return SSL_read(ssl_, buf.data(), len); });
}

TlsStream::Want TlsStream::TryWrite(const asio::const_buffer& buf, boost::system::error_code& ec,
                                    size_t* n) {
  return Transfer(buf.size(), ec, n, [&](int len) { return SSL_write(ssl_, buf.data(), len); });
}

TlsStream::Want TlsStream::TryHandshake(boost::system::error_code& ec) {
  if (failed_ || ssl_ == nullptr) {
    ec = asio::error::no_memory;
    return Want::kNothing;
  }
  ERR_clear_error();
  errno = 0;
  int r = SSL_do_handshake(ssl_);
  if (r == 1) {
    handshake_done_ = true;
    return Want::kNothing;
  }
  Want want = Classify(r, ec);
  if (want == Want::kNothing && !ec) ec = asio::error::connection_aborted;
  return want;
}

size_t TlsStream::read_some(const asio::mutable_buffer& buf, boost::system::error_code& ec) {
  ec.clear();
  size_t n = 0;
  if (TryRead(buf, ec, &n) != Want::kNothing) ec = asio::error::would_block;
  return n;
}

size_t TlsStream::write_some(const asio::const_buffer& buf, boost::system::error_code& ec) {
  ec.clear();
  size_t n = 0;
  if (TryWrite(buf, ec, &n) != Want::kNothing) ec = asio::error::would_block;
  return n;
}

void TlsStream::Close() {
  if (!socket_.is_open()) return;
  if (ssl_ != nullptr && handshake_done_ && !failed_) {
    ERR_clear_error();
    SSL_shutdown(ssl_);  // queues and tries to send close_notify; never waits for the peer's
    ERR_clear_error();
  }
  failed_ = true;  // no more SSL calls on a closed descriptor
  boost::system::error_code ec;
  socket_.shutdown(asio::ip::tcp::socket::shutdown_both, ec);
  socket_.close(ec);
}

}  // namespace dashkv::io
