// Config's protected-mode and tls-* settings: flags (applied like the others: a flag given on the
// command line overrides the config file), CONFIG GET/SET entries, and the TLS context they
// build (Redis's names, defaults and error texts).
#include <absl/flags/flag.h>
#include <absl/strings/numbers.h>

#include <cstdint>
#include <limits>
#include <string>

#include "core/base/logging.h"
#include "core/base/parse_int.h"
#include "core/str_util.h"
#include "server/config.h"
#include "server/config_flag_pick.h"

ABSL_FLAG(bool, protected_mode, true,
          "Redis protected-mode: while no password is set, refuse clients that connect from "
          "other than loopback addresses (--protected_mode=no to accept them).");
ABSL_FLAG(uint16_t, tls_port, 0, "TLS port to listen on, beside --port (0: none).");
ABSL_FLAG(std::string, tls_cert_file, "", "Server certificate (chain) file, PEM.");
ABSL_FLAG(std::string, tls_key_file, "", "Private key file of the certificate, PEM.");
ABSL_FLAG(std::string, tls_key_file_pass, "", "Passphrase of an encrypted tls-key-file.");
ABSL_FLAG(std::string, tls_ca_cert_file, "", "CA certificates that sign client certificates.");
ABSL_FLAG(std::string, tls_ca_cert_dir, "", "Directory of CA certificates (c_rehash layout).");
ABSL_FLAG(std::string, tls_auth_clients, "yes",
          "Client certificates: yes (required), optional (checked when sent) or no.");
ABSL_FLAG(std::string, tls_protocols, "", "Protocols, e.g. \"TLSv1.2 TLSv1.3\" (the default).");
ABSL_FLAG(std::string, tls_ciphers, "", "TLSv1.2 cipher list (OpenSSL syntax).");
ABSL_FLAG(std::string, tls_ciphersuites, "", "TLSv1.3 cipher suites (OpenSSL syntax).");
ABSL_FLAG(bool, tls_prefer_server_ciphers, false, "Prefer the server's cipher order.");
ABSL_FLAG(bool, tls_session_caching, true, "Cache TLS sessions for resumption.");
ABSL_FLAG(int64_t, tls_session_cache_size, 20 * 1024, "Sessions the cache holds.");
ABSL_FLAG(int64_t, tls_session_cache_timeout, 300, "Seconds a cached session stays valid.");
ABSL_FLAG(int64_t, tls_handshake_timeout_ms, 10000,
          "Milliseconds a TLS client has to complete its handshake before it is closed.");

namespace dashkv {
namespace {


std::string YesNoText(bool b) { return b ? "yes" : "no"; }

std::string TlsSetFailed(std::string_view name, std::string_view why) {
  return StrCat("ERR CONFIG SET failed (possibly related to argument '", name, "') - ", why);
}

std::optional<bool> ParseYesNo(std::string_view v) {
  std::string t = AsciiStrToLower(v);
  if (t == "yes") return true;
  if (t == "no") return false;
  return std::nullopt;
}

}  // namespace

void Config::ApplyTlsFlags(FlagPass pass) {
  auto pick = [&](const auto& flag) {
    return PickFlag(flag, pass == FlagPass::kDefaults, given_flags_);
  };
  if (auto v = pick(FLAGS_protected_mode)) protected_mode = *v;
  if (auto v = pick(FLAGS_tls_port)) tls_port = *v;
  if (auto v = pick(FLAGS_tls_handshake_timeout_ms)) {
    tls_handshake_timeout_ms = std::max<int64_t>(1, *v);
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (auto v = pick(FLAGS_tls_cert_file)) tls_.cert_file = *v;
  if (auto v = pick(FLAGS_tls_key_file)) tls_.key_file = *v;
  if (auto v = pick(FLAGS_tls_key_file_pass)) tls_.key_file_pass = *v;
  if (auto v = pick(FLAGS_tls_ca_cert_file)) tls_.ca_cert_file = *v;
  if (auto v = pick(FLAGS_tls_ca_cert_dir)) tls_.ca_cert_dir = *v;
  if (auto v = pick(FLAGS_tls_auth_clients)) {
    if (auto mode = io::ParseTlsAuthClients(*v)) {
      tls_.auth_clients = *mode;
    } else {
      ABSL_RAW_LOG(ERROR, "--tls_auth_clients: expected yes, no or optional; using yes");
    }
  }
  if (auto v = pick(FLAGS_tls_protocols)) tls_.protocols = *v;
  if (auto v = pick(FLAGS_tls_ciphers)) tls_.ciphers = *v;
  if (auto v = pick(FLAGS_tls_ciphersuites)) tls_.ciphersuites = *v;
  if (auto v = pick(FLAGS_tls_prefer_server_ciphers)) tls_.prefer_server_ciphers = *v;
  if (auto v = pick(FLAGS_tls_session_caching)) tls_.session_caching = *v;
  if (auto v = pick(FLAGS_tls_session_cache_size)) {
    tls_.session_cache_size = std::clamp<int64_t>(*v, 0, INT32_MAX);
  }
  if (auto v = pick(FLAGS_tls_session_cache_timeout)) {
    tls_.session_cache_timeout = std::clamp<int64_t>(*v, 0, INT32_MAX);
  }
}

io::TlsOptions Config::tls_options() const {
  std::lock_guard<std::mutex> lock(mu_);
  return tls_;
}

absl::Status Config::ConfigureTls() {
  if (tls_port == 0) return absl::OkStatus();
  absl::StatusOr<std::shared_ptr<io::TlsContext>> context = io::BuildTlsContext(tls_options());
  if (!context.ok()) return context.status();
  tls_context.Set(*std::move(context));
  return absl::OkStatus();
}

std::string Config::ApplyTls(std::string_view name) {
  if (absl::Status st = ConfigureTls(); !st.ok()) {
    ABSL_RAW_LOG(WARNING, "%s", std::string(st.message()).c_str());
    ABSL_RAW_LOG(WARNING,
                 "Failed applying new configuration. Possibly related to new %.*s setting. "
                 "Restoring previous settings.",
                 static_cast<int>(name.size()), name.data());
    return TlsSetFailed(name, "Unable to update TLS configuration. Check server logs.");
  }
  return "";
}

std::string Config::ApplyTlsPort(std::string_view name) {
  auto failed = [name](std::string_view why, const absl::Status& st) {
    ABSL_RAW_LOG(WARNING, "%s", std::string(st.message()).c_str());
    ABSL_RAW_LOG(WARNING,
                 "Failed applying new configuration. Possibly related to new %.*s setting. "
                 "Restoring previous settings.",
                 static_cast<int>(name.size()), name.data());
    return TlsSetFailed(name, why);
  };
  const uint16_t port = tls_port.load();
  // As Redis: a first TLS port builds the context from the tls-* settings; an existing one is
  // kept (the tls-* entries rebuild it when they change).
  if (port != 0 && tls_context.Get() == nullptr) {
    absl::StatusOr<std::shared_ptr<io::TlsContext>> context = io::BuildTlsContext(tls_options());
    if (!context.ok()) {
      return failed("Unable to update TLS configuration. Check server logs.", context.status());
    }
    tls_context.Set(*std::move(context));
  }
  if (!listen_tls) return "";
  if (absl::Status st = listen_tls(port); !st.ok()) {
    return failed("Unable to listen on this port. Check server logs.", st);
  }
  return "";
}

void Config::AddTlsEntries() {
  entries_.push_back({"protected-mode", [this] { return YesNoText(protected_mode.load()); },
                      [this](std::string_view v) {
                        std::optional<bool> b = ParseYesNo(v);
                        if (!b) return TlsSetFailed("protected-mode", "argument must be 'yes' or 'no'");
                        protected_mode = *b;
                        return std::string();
                      }});
  // tls-port takes effect by moving the TLS listener (ApplyTlsPort); CONFIG SET runs there.
  entries_.push_back({"tls-port", [this] { return StrCat(tls_port.load()); },
                      [this](std::string_view v) {
                        // Redis's strict integer syntax: no sign, spaces or leading zeros.
                        std::optional<int64_t> x = ParseInt64(v);
                        if (!x) {
                          return TlsSetFailed("tls-port",
                                              "argument couldn't be parsed into an integer");
                        }
                        if (*x < 0 || *x > 65535) {
                          return TlsSetFailed("tls-port",
                                              "argument must be between 0 and 65535 inclusive");
                        }
                        tls_port = static_cast<uint16_t>(*x);
                        return std::string();
                      },
                      false, &Config::ApplyTlsPort});
  entries_.back().moves_listener = true;
  // A tls-* value that takes effect when the context is rebuilt (ApplyTls).
  auto add = [this](std::string name, auto get, auto parse) {
    entries_.push_back(
        {name,
         [this, get] {
           std::lock_guard<std::mutex> lock(mu_);
           return get(tls_);
         },
         [this, parse](std::string_view v) {
           std::lock_guard<std::mutex> lock(mu_);
           return parse(tls_, v);
         },
         false, &Config::ApplyTls});
  };
  auto string_entry = [&add](std::string name, std::string io::TlsOptions::*field) {
    add(name, [field](const io::TlsOptions& o) { return o.*field; },
        [field](io::TlsOptions& o, std::string_view v) {
          o.*field = std::string(v);
          return std::string();
        });
  };
  auto bool_entry = [&add](std::string name, bool io::TlsOptions::*field) {
    add(name, [field](const io::TlsOptions& o) { return YesNoText(o.*field); },
        [field, name](io::TlsOptions& o, std::string_view v) {
          std::optional<bool> b = ParseYesNo(v);
          if (!b) return TlsSetFailed(name, "argument must be 'yes' or 'no'");
          o.*field = *b;
          return std::string();
        });
  };
  auto int_entry = [&add](std::string name, int64_t io::TlsOptions::*field) {
    add(name, [field](const io::TlsOptions& o) { return StrCat(o.*field); },
        [field, name](io::TlsOptions& o, std::string_view v) {
          int64_t x;
          if (!absl::SimpleAtoi(absl::string_view(v.data(), v.size()), &x)) {
            return TlsSetFailed(name, "argument couldn't be parsed into an integer");
          }
          if (x < 0 || x > INT32_MAX) {
            return TlsSetFailed(name, "argument must be between 0 and 2147483647 inclusive");
          }
          o.*field = x;
          return std::string();
        });
  };
  string_entry("tls-cert-file", &io::TlsOptions::cert_file);
  string_entry("tls-key-file", &io::TlsOptions::key_file);
  string_entry("tls-key-file-pass", &io::TlsOptions::key_file_pass);
  string_entry("tls-ca-cert-file", &io::TlsOptions::ca_cert_file);
  string_entry("tls-ca-cert-dir", &io::TlsOptions::ca_cert_dir);
  add("tls-auth-clients",
      [](const io::TlsOptions& o) { return std::string(io::TlsAuthClientsName(o.auth_clients)); },
      [](io::TlsOptions& o, std::string_view v) {
        std::optional<io::TlsAuthClients> mode = io::ParseTlsAuthClients(v);
        if (!mode) {
          return TlsSetFailed("tls-auth-clients",
                              "argument(s) must be one of the following: no, yes, optional");
        }
        o.auth_clients = *mode;
        return std::string();
      });
  string_entry("tls-protocols", &io::TlsOptions::protocols);
  string_entry("tls-ciphers", &io::TlsOptions::ciphers);
  string_entry("tls-ciphersuites", &io::TlsOptions::ciphersuites);
  bool_entry("tls-prefer-server-ciphers", &io::TlsOptions::prefer_server_ciphers);
  bool_entry("tls-session-caching", &io::TlsOptions::session_caching);
  int_entry("tls-session-cache-size", &io::TlsOptions::session_cache_size);
  int_entry("tls-session-cache-timeout", &io::TlsOptions::session_cache_timeout);
  // Replication and cluster over TLS do not exist in dashkv: their settings read as Redis's
  // defaults and cannot change.
  for (const char* name : {"tls-cluster", "tls-replication"}) {
    entries_.push_back({name, [] { return std::string("no"); }, nullptr});
  }
  for (const char* name : {"tls-client-cert-file", "tls-client-key-file",
                           "tls-client-key-file-pass", "tls-dh-params-file"}) {
    entries_.push_back({name, [] { return std::string(); }, nullptr});
  }
}

}  // namespace dashkv
