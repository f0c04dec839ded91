// TLS server settings (Redis's tls-* names) and the OpenSSL context built from them, through
// Boost.Asio's ssl::context. TlsContextSlot holds the context new connections take, so CONFIG SET
// can swap it while every open connection keeps the context it was accepted with.
// Thread-safe: a TlsContext is immutable once built; TlsContextSlot guards its pointer with a
// mutex (read once per accepted TLS connection, written by CONFIG SET).
#pragma once

#include <utility>  // before asio: awaitable.hpp uses std::exchange

#include <absl/status/statusor.h>

#include <boost/asio/ssl/context.hpp>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

namespace dashkv::io {

// tls-auth-clients: whether a client must present a certificate signed by the configured CA.
enum class TlsAuthClients : uint8_t { kNo, kYes, kOptional };

// Returns Redis's name of `mode` ("yes", "no", "optional").
std::string_view TlsAuthClientsName(TlsAuthClients mode);
// Parses "yes", "no" or "optional" (any case).
std::optional<TlsAuthClients> ParseTlsAuthClients(std::string_view text);

// Redis's tls-* server settings; defaults are Redis 7.0's.
struct TlsOptions {
  std::string cert_file;
  std::string key_file;
  std::string key_file_pass;  // passphrase of an encrypted key file ("" for none)
  std::string ca_cert_file;
  std::string ca_cert_dir;
  TlsAuthClients auth_clients = TlsAuthClients::kYes;
  std::string protocols;     // e.g. "TLSv1.2 TLSv1.3"; "": TLSv1.2 and TLSv1.3
  std::string ciphers;       // TLSv1.2 and below (OpenSSL cipher list); "": OpenSSL's default
  std::string ciphersuites;  // TLSv1.3; "": OpenSSL's default
  bool prefer_server_ciphers = false;
  bool session_caching = true;
  int64_t session_cache_size = 20 * 1024;
  int64_t session_cache_timeout = 300;  // seconds
};

// An OpenSSL server context. Connections share it (OpenSSL counts references, so a replaced
// context lives until its last connection closes).
class TlsContext {
 public:
  explicit TlsContext(boost::asio::ssl::context context) : context_(std::move(context)) {}
  SSL_CTX* native_handle() { return context_.native_handle(); }

 private:
  boost::asio::ssl::context context_;
};

// Builds a context from `options`: loads the certificate chain, the private key (decrypted with
// key_file_pass) and the CA certificates, and applies the protocol, cipher, client-auth and
// session-cache settings. Returns an error naming what failed (Redis's log texts: "Failed to
// load certificate: <file>: <OpenSSL error>", ...). Reads files: call it off the hot path.
absl::StatusOr<std::shared_ptr<TlsContext>> BuildTlsContext(const TlsOptions& options);

// The context that newly accepted TLS connections use.
class TlsContextSlot {
 public:
  std::shared_ptr<TlsContext> Get() const {
    std::lock_guard<std::mutex> lock(mu_);
    return context_;
  }
  void Set(std::shared_ptr<TlsContext> context) {
    std::lock_guard<std::mutex> lock(mu_);
    context_ = std::move(context);
  }

 private:
  // std::mutex rather than absl::Mutex: ThreadSanitizer sees a pthread mutex.
  mutable std::mutex mu_;
  std::shared_ptr<TlsContext> context_;
};

}  // namespace dashkv::io
