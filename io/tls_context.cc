#include "io/tls_context.h"

#include <absl/strings/ascii.h>
#include <absl/strings/str_cat.h>
#include <absl/strings/str_split.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

namespace dashkv::io {
namespace {

namespace ssl = boost::asio::ssl;

// The text of OpenSSL's oldest queued error ("error:80000002:system library::No such file or
// directory"); clears the queue.
std::string TakeOpenSslError() {
  char buf[256] = "unknown error";
  if (unsigned long e = ERR_get_error(); e != 0) ERR_error_string_n(e, buf, sizeof(buf));
  ERR_clear_error();
  return buf;
}

// The SSL_OP_NO_* bits that disable every protocol `text` does not name; nullopt for a word
// that is not a protocol.
std::optional<uint64_t> ProtocolOptions(std::string_view text) {
  static constexpr int kTls1 = 1, kTls11 = 2, kTls12 = 4, kTls13 = 8;
  int wanted = 0;
  for (absl::string_view word : absl::StrSplit(absl::string_view(text.data(), text.size()), ' ',
                                               absl::SkipWhitespace())) {
    std::string w = absl::AsciiStrToLower(word);
    if (w == "tlsv1") {
      wanted |= kTls1;
    } else if (w == "tlsv1.1") {
      wanted |= kTls11;
    } else if (w == "tlsv1.2") {
      wanted |= kTls12;
    } else if (w == "tlsv1.3") {
      wanted |= kTls13;
    } else {
      return std::nullopt;
    }
  }
  if (wanted == 0) wanted = kTls12 | kTls13;
  uint64_t options = 0;
  if (!(wanted & kTls1)) options |= SSL_OP_NO_TLSv1;
  if (!(wanted & kTls11)) options |= SSL_OP_NO_TLSv1_1;
  if (!(wanted & kTls12)) options |= SSL_OP_NO_TLSv1_2;
  if (!(wanted & kTls13)) options |= SSL_OP_NO_TLSv1_3;
  return options;
}

// OpenSSL's passphrase callback: copies the passphrase held in `userdata`.
int PassphraseCallback(char* buf, int size, int /*rwflag*/, void* userdata) {
  const std::string& pass = *static_cast<const std::string*>(userdata);
  if (pass.size() > static_cast<size_t>(size)) return 0;
  pass.copy(buf, pass.size());
  return static_cast<int>(pass.size());
}

}  // namespace

std::string_view TlsAuthClientsName(TlsAuthClients mode) {
  switch (mode) {
    case TlsAuthClients::kNo: return "no";
    case TlsAuthClients::kYes: return "yes";
    case TlsAuthClients::kOptional: return "optional";
  }
  return "yes";
}

std::optional<TlsAuthClients> ParseTlsAuthClients(std::string_view text) {
  std::string t = absl::AsciiStrToLower(absl::string_view(text.data(), text.size()));
  if (t == "no") return TlsAuthClients::kNo;
  if (t == "yes") return TlsAuthClients::kYes;
  if (t == "optional") return TlsAuthClients::kOptional;
  return std::nullopt;
}

absl::StatusOr<std::shared_ptr<TlsContext>> BuildTlsContext(const TlsOptions& o) {
  auto fail = [](std::string text) { return absl::InvalidArgumentError(std::move(text)); };
  if (o.cert_file.empty()) return fail("No tls-cert-file configured!");
  if (o.key_file.empty()) return fail("No tls-key-file configured!");
  if (o.auth_clients != TlsAuthClients::kNo && o.ca_cert_file.empty() && o.ca_cert_dir.empty()) {
    return fail("Either tls-ca-cert-file or tls-ca-cert-dir must be specified when tls-cluster, "
                "tls-replication or tls-auth-clients are enabled!");
  }
  std::optional<uint64_t> protocol_options = ProtocolOptions(o.protocols);
  if (!protocol_options) {
    return fail("Invalid tls-protocols specified. Use a combination of 'TLSv1', 'TLSv1.1', "
                "'TLSv1.2' and 'TLSv1.3'.");
  }
  ERR_clear_error();
  ssl::context context(ssl::context::tls_server);
  SSL_CTX* ctx = context.native_handle();
  uint64_t options = SSL_OP_NO_SSLv2 | SSL_OP_NO_SSLv3 | SSL_OP_NO_COMPRESSION |
                     SSL_OP_NO_RENEGOTIATION | SSL_OP_IGNORE_UNEXPECTED_EOF |
                     *protocol_options;
  if (o.prefer_server_ciphers) options |= SSL_OP_CIPHER_SERVER_PREFERENCE;
  SSL_CTX_set_options(ctx, options);
  // Non-blocking sockets: a write may end part-way (SSL_ERROR_WANT_WRITE) and is retried with
  // the same bytes from a buffer that may have moved (the connection's output strings).
  SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER |
                            SSL_MODE_RELEASE_BUFFERS);
  int verify = SSL_VERIFY_NONE;
  if (o.auth_clients == TlsAuthClients::kYes) {
    verify = SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT;
  } else if (o.auth_clients == TlsAuthClients::kOptional) {
    verify = SSL_VERIFY_PEER;
  }
  SSL_CTX_set_verify(ctx, verify, nullptr);
  if (o.session_caching) {
    SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_SERVER);
    SSL_CTX_sess_set_cache_size(ctx, o.session_cache_size);
    SSL_CTX_set_timeout(ctx, o.session_cache_timeout);
    static constexpr unsigned char kSessionContext[] = "dashkv";
    SSL_CTX_set_session_id_context(ctx, kSessionContext, sizeof(kSessionContext) - 1);
  } else {
    SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
  }
  if (SSL_CTX_use_certificate_chain_file(ctx, o.cert_file.c_str()) <= 0) {
    return fail(absl::StrCat("Failed to load certificate: ", o.cert_file, ": ",
                             TakeOpenSslError()));
  }
  // The passphrase is needed only while the key file is read.
  SSL_CTX_set_default_passwd_cb(ctx, PassphraseCallback);
  SSL_CTX_set_default_passwd_cb_userdata(ctx, const_cast<std::string*>(&o.key_file_pass));
  const bool key_ok = SSL_CTX_use_PrivateKey_file(ctx, o.key_file.c_str(), SSL_FILETYPE_PEM) > 0;
  SSL_CTX_set_default_passwd_cb(ctx, nullptr);
  SSL_CTX_set_default_passwd_cb_userdata(ctx, nullptr);
  if (!key_ok || SSL_CTX_check_private_key(ctx) <= 0) {
    return fail(absl::StrCat("Failed to load private key: ", o.key_file, ": ",
                             TakeOpenSslError()));
  }
  if ((!o.ca_cert_file.empty() || !o.ca_cert_dir.empty()) &&
      SSL_CTX_load_verify_locations(ctx, o.ca_cert_file.empty() ? nullptr : o.ca_cert_file.c_str(),
                                    o.ca_cert_dir.empty() ? nullptr : o.ca_cert_dir.c_str()) <=
          0) {
    return fail(absl::StrCat("Failed to configure CA certificate(s) file/directory: ",
                             TakeOpenSslError()));
  }
  if (!o.ciphers.empty() && SSL_CTX_set_cipher_list(ctx, o.ciphers.c_str()) <= 0) {
    return fail(absl::StrCat("Failed to configure ciphers: ", o.ciphers));
  }
  if (!o.ciphersuites.empty() && SSL_CTX_set_ciphersuites(ctx, o.ciphersuites.c_str()) <= 0) {
    return fail(absl::StrCat("Failed to configure ciphersuites: ", o.ciphersuites));
  }
  ERR_clear_error();
  return std::make_shared<TlsContext>(std::move(context));
}

}  // namespace dashkv::io
