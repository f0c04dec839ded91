#include "io/listener.h"

#include <absl/base/internal/raw_logging.h>
#include <absl/strings/str_cat.h>
#include <absl/strings/str_split.h>
#include <absl/strings/strip.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/ip/v6_only.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <chrono>
#include <exception>
#include <future>

#include "core/base/logging.h"
#include "io/tls_stream.h"

namespace dashkv::io {
namespace {

namespace asio = boost::asio;
using asio::ip::tcp;

// Aborts on an exception escaping a connection or accept coroutine: a bug, never a client's.
void AbortOnException(std::exception_ptr e) {
  if (!e) return;
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& ex) {
    ABSL_RAW_LOG(FATAL, "exception escaped a connection coroutine (a bug): %s", ex.what());
  } catch (...) {
    ABSL_RAW_LOG(FATAL, "unknown exception escaped a connection coroutine (a bug)");
  }
}

bool IsMissingAddress(const boost::system::error_code& ec) {
  return ec == boost::system::errc::address_not_available ||
         ec == boost::system::errc::address_family_not_supported;
}

constexpr std::string_view kMaxClientsError = "-ERR max number of clients reached\r\n";

}  // namespace

const std::string_view kProtectedModeError =
    "-DENIED Redis is running in protected mode because protected mode is enabled and no "
    "password is set for the default user. In this mode connections are only accepted from the "
    "loopback interface. If you want to connect from external computers to Redis you may adopt "
    "one of the following solutions: 1) Just disable protected mode sending the command 'CONFIG "
    "SET protected-mode no' from the loopback interface by connecting to Redis from the same "
    "host the server is running, however MAKE SURE Redis is not publicly accessible from "
    "internet if you do so. Use CONFIG REWRITE to make this change permanent. 2) Alternatively "
    "you can just disable the protected mode by editing the Redis configuration file, and "
    "setting the protected mode option to 'no', and then restarting the server. 3) If you "
    "started the server manually just for testing, restart it with the '--protected-mode no' "
    "option. 4) Setup a an authentication password for the default user. NOTE: You only need to "
    "do one of the above things in order for the server to start accepting connections from the "
    "outside.\r\n";

bool IsLoopback(const asio::ip::address& address) {
  if (address.is_v4()) return address.to_v4().is_loopback();
  const asio::ip::address_v6 v6 = address.to_v6();
  if (v6.is_v4_mapped()) {
    return asio::ip::make_address_v4(asio::ip::v4_mapped, v6).is_loopback();
  }
  return v6.is_loopback();
}

Listener::Listener(EnginePool& pool, Service& service, ListenerOptions options)
    : pool_(pool), service_(service), options_(std::move(options)) {}

Listener::~Listener() {
  boost::system::error_code ec;
  for (auto& a : acceptors_) a->acceptor.close(ec);
}

absl::Status Listener::Start() {
  std::vector<absl::string_view> addresses =
      absl::StrSplit(options_.bind, ' ', absl::SkipWhitespace());
  if (addresses.empty()) return absl::InvalidArgumentError("no bind address");
  for (absl::string_view a : addresses) {
    bool optional = absl::ConsumePrefix(&a, "-");
    if (a == "*") a = "0.0.0.0";
    if (a == "::*") a = "::";
    addresses_.push_back({std::string(a), optional});
  }
  for (const BindAddress& address : addresses_) {
    absl::StatusOr<std::shared_ptr<Acceptor>> plain =
        Bind(address, port_ != 0 ? port_ : options_.port, /*tls=*/false);
    if (!plain.ok()) {
      acceptors_.clear();
      return plain.status();
    }
    if (*plain == nullptr) continue;  // an optional address that does not exist here
    if (port_ == 0) {
      boost::system::error_code ec;
      port_ = (*plain)->acceptor.local_endpoint(ec).port();
      if (ec) return absl::UnavailableError("cannot read the bound port: " + ec.message());
    }
    acceptors_.push_back(*std::move(plain));
  }
  if (acceptors_.empty()) {
    return absl::UnavailableError(absl::StrCat("no address of '", options_.bind, "' exists"));
  }
  if (options_.tls_port != 0) {
    absl::StatusOr<std::vector<std::shared_ptr<Acceptor>>> tls = BindTls(options_.tls_port);
    if (!tls.ok()) {
      acceptors_.clear();
      return tls.status();
    }
    acceptors_.insert(acceptors_.end(), tls->begin(), tls->end());
    tls_port_.store(options_.tls_port, std::memory_order_relaxed);
  }
  for (const std::shared_ptr<Acceptor>& a : acceptors_) {
    pool_.Post(kAcceptEngine, [this, a] {
      asio::co_spawn(pool_[kAcceptEngine].context(), AcceptLoop(a), AbortOnException);
    });
  }
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<Listener::Acceptor>> Listener::Bind(const BindAddress& address,
                                                                  uint16_t port, bool tls) {
  boost::system::error_code ec;
  asio::ip::address ip = asio::ip::make_address(address.ip, ec);
  if (ec) {
    return absl::InvalidArgumentError(absl::StrCat("invalid bind address '", address.ip, "'"));
  }
  tcp::endpoint endpoint(ip, port);
  auto a = std::make_shared<Acceptor>(pool_[kAcceptEngine].context(), tls);
  tcp::acceptor& acceptor = a->acceptor;
  auto fail = [&](absl::string_view what) {
    return absl::UnavailableError(
        absl::StrCat(what, " ", address.ip, ":", endpoint.port(), ": ", ec.message()));
  };
  const bool skip_missing = address.optional;
  if (acceptor.open(endpoint.protocol(), ec); ec) {
    if (skip_missing && IsMissingAddress(ec)) return nullptr;
    return fail("cannot open");
  }
  acceptor.set_option(tcp::acceptor::reuse_address(true), ec);
  if (ip.is_v6()) acceptor.set_option(asio::ip::v6_only(true), ec);
  if (acceptor.bind(endpoint, ec); ec) {
    if (skip_missing && IsMissingAddress(ec)) return nullptr;
    return fail("cannot bind");
  }
  if (acceptor.listen(511, ec); ec) return fail("cannot listen on");  // Redis's tcp-backlog
  acceptor.non_blocking(true, ec);  // for AcceptPending's synchronous accepts
  return a;
}

absl::StatusOr<std::vector<std::shared_ptr<Listener::Acceptor>>> Listener::BindTls(
    uint16_t port) {
  std::vector<std::shared_ptr<Acceptor>> bound;
  for (const BindAddress& address : addresses_) {
    // On failure the acceptors bound so far close as `bound` goes.
    absl::StatusOr<std::shared_ptr<Acceptor>> a = Bind(address, port, /*tls=*/true);
    if (!a.ok()) return a.status();
    if (*a != nullptr) bound.push_back(*std::move(a));
  }
  if (bound.empty()) {
    return absl::UnavailableError(absl::StrCat("no address of '", options_.bind, "' exists"));
  }
  return bound;
}

absl::Status Listener::SetTlsPort(uint16_t port) {
  CHECK(Engine::Current() == &pool_[kAcceptEngine]) << "Listener::SetTlsPort off engine 0";
  if (closed_) return absl::FailedPreconditionError("the listener is stopped");
  if (port == tls_port()) return absl::OkStatus();
  std::vector<std::shared_ptr<Acceptor>> fresh;
  if (port != 0) {
    CHECK(options_.tls != nullptr && options_.tls->Get() != nullptr)
        << "a TLS port without a TLS context";
    absl::StatusOr<std::vector<std::shared_ptr<Acceptor>>> bound = BindTls(port);
    if (!bound.ok()) return bound.status();
    fresh = *std::move(bound);
  }
  // The old TLS acceptors: a pending accept completes with operation_aborted, and each loop
  // ends (and drops its share of the acceptor) when it resumes.
  boost::system::error_code ec;
  for (const std::shared_ptr<Acceptor>& a : acceptors_) {
    if (a->tls) a->acceptor.close(ec);
  }
  std::erase_if(acceptors_, [](const std::shared_ptr<Acceptor>& a) { return a->tls; });
  for (std::shared_ptr<Acceptor>& a : fresh) {
    asio::co_spawn(pool_[kAcceptEngine].context(), AcceptLoop(a), AbortOnException);
    acceptors_.push_back(std::move(a));
  }
  tls_port_.store(port, std::memory_order_relaxed);
  return absl::OkStatus();
}

asio::awaitable<void> Listener::AcceptLoop(std::shared_ptr<Acceptor> a) {
  tcp::acceptor& acceptor = a->acceptor;
  std::chrono::steady_clock::time_point last_error_log{};
  // Closed (Stop, SetTlsPort) while this loop was suspended: the accept may have completed
  // before the close, so the check comes after every resumption, not only on an error.
  while (acceptor.is_open()) {
    Engine& target = pool_[next_engine_ % pool_.size()];
    boost::system::error_code ec;
    // The socket is created on the target engine's io_context directly.
    tcp::socket socket = co_await acceptor.async_accept(
        target.context(), asio::redirect_error(asio::use_awaitable, ec));
    if (ec == asio::error::operation_aborted) co_return;  // closed
    if (ec) {
      if (!acceptor.is_open()) co_return;
      // EMFILE/ENFILE and friends: the connection stays in the backlog; retry a little later
      // (descriptors free up as clients leave) instead of spinning, logging once a second.
      auto now = std::chrono::steady_clock::now();
      if (now - last_error_log >= std::chrono::seconds(1)) {
        last_error_log = now;
        ABSL_RAW_LOG(WARNING, "Accepting client connection: %s", ec.message().c_str());
      }
      asio::steady_timer timer(pool_[kAcceptEngine].context(), std::chrono::milliseconds(10));
      co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
      continue;
    }
    Admit(std::move(socket), target, a->tls);
  }
}

void Listener::Admit(tcp::socket socket, Engine& target, bool tls) {
  ++next_engine_;
  stats_->accepted.fetch_add(1, std::memory_order_relaxed);
  const ClientLimits& limits =
      options_.conn.limits != nullptr ? *options_.conn.limits : DefaultClientLimits();
  // As Redis: beyond maxclients the client gets one error line and is closed.
  const bool refused = stats_->live.load(std::memory_order_relaxed) >=
                       static_cast<uint64_t>(limits.maxclients.load(std::memory_order_relaxed));
  bool denied = false;
  if (!refused && options_.protected_mode && options_.protected_mode()) {
    boost::system::error_code ec;
    tcp::endpoint remote = socket.remote_endpoint(ec);
    denied = !ec && !IsLoopback(remote.address());
  }
  if (refused) stats_->refused.fetch_add(1, std::memory_order_relaxed);
  std::string_view refusal = refused ? kMaxClientsError : denied ? kProtectedModeError : "";
  if (refusal.empty()) stats_->live.fetch_add(1, std::memory_order_relaxed);
  std::shared_ptr<TlsContext> context;
  if (tls) {
    context = options_.tls->Get();
    if (context == nullptr) {  // cannot happen: a TLS port is bound only with a context
      if (refusal.empty()) stats_->live.fetch_sub(1, std::memory_order_relaxed);
      return;
    }
  }
  auto start = [socket = std::move(socket), &target, service = &service_,
                options = options_.conn, stats = stats_, refusal, context = std::move(context),
                timeout = options_.tls_handshake_timeout]() mutable {
    if (context != nullptr) {
      asio::co_spawn(target.context(),
                     ServeTls(std::move(socket), std::move(context), target, service, options,
                              std::move(stats), refusal, timeout),
                     AbortOnException);
      return;
    }
    if (!refusal.empty()) return RefuseClient(std::move(socket), refusal);
    auto conn = std::make_unique<StreamConnection<tcp::socket>>(std::move(socket), target,
                                                                *service, options);
    conn->Register();  // known to CLIENT LIST/KILL before its first command
    asio::co_spawn(target.context(), Serve(std::move(conn), std::move(stats)),
                   AbortOnException);
  };
  if (Engine::Current() == &target) {
    start();
  } else {
    target.Post(std::move(start));
  }
}

void Listener::AcceptPending() {
  CHECK(Engine::Current() == &pool_[kAcceptEngine]) << "Listener::AcceptPending off engine 0";
  for (const std::shared_ptr<Acceptor>& a : acceptors_) {
    for (;;) {
      Engine& target = pool_[next_engine_ % pool_.size()];
      boost::system::error_code ec;
      tcp::socket socket = a->acceptor.accept(target.context(), ec);
      if (ec) break;  // would_block: the backlog is empty (or closed, or out of descriptors)
      Admit(std::move(socket), target, a->tls);
    }
  }
}

void Listener::RefuseClient(tcp::socket socket, std::string_view error) {
  boost::system::error_code ec;
  socket.non_blocking(true, ec);
  // Best effort, as Redis: a fresh socket's send buffer takes these few bytes at once.
  asio::write(socket, asio::buffer(error), ec);
  socket.shutdown(tcp::socket::shutdown_both, ec);
  socket.close(ec);
}

asio::awaitable<void> Listener::ServeTls(tcp::socket socket, std::shared_ptr<TlsContext> context,
                                         Engine& target, Service* service,
                                         ConnectionOptions options, std::shared_ptr<Stats> stats,
                                         std::string_view refusal,
                                         std::chrono::milliseconds timeout) {
  auto stream = std::make_unique<TlsStream>(std::move(socket), std::move(context));
  // A client that stays silent (or stops half-way) is closed when the timer fires; the flag
  // keeps the timer's handler off the socket once the handshake has ended either way.
  auto handshake_over = std::make_shared<bool>(false);
  asio::steady_timer timer(target.context(), timeout);
  timer.async_wait([handshake_over, s = &stream->socket()](boost::system::error_code ec) {
    if (ec || *handshake_over) return;
    s->close(ec);  // the pending handshake wait completes with operation_aborted
  });
  boost::system::error_code ec;
  co_await stream->async_handshake(asio::redirect_error(asio::use_awaitable, ec));
  *handshake_over = true;
  timer.cancel();
  if (ec || !refusal.empty()) {
    if (!ec) {  // best effort, as for plain clients
      co_await asio::async_write(*stream, asio::buffer(refusal),
                                 asio::redirect_error(asio::use_awaitable, ec));
    }
    stream->Close();
    if (refusal.empty()) stats->live.fetch_sub(1, std::memory_order_relaxed);
    co_return;
  }
  auto conn = std::make_unique<StreamConnection<TlsStream>>(std::move(*stream), target, *service,
                                                            options);
  stream.reset();
  conn->Register();
  co_await Serve(std::move(conn), std::move(stats));
}

asio::awaitable<void> Listener::Serve(std::unique_ptr<Connection> conn,
                                      std::shared_ptr<Stats> stats) {
  co_await conn->Run();
  conn.reset();
  stats->live.fetch_sub(1, std::memory_order_relaxed);
}

void Listener::Stop() {
  if (stopped_) return;
  stopped_ = true;
  auto close_all = [this] {
    closed_ = true;
    boost::system::error_code ec;
    for (auto& a : acceptors_) a->acceptor.close(ec);
  };
  Engine* current = Engine::Current();
  if (current == &pool_[kAcceptEngine]) {
    close_all();
  } else if (current != nullptr) {
    pool_.Post(kAcceptEngine, close_all);  // cannot block an engine; closes shortly
  } else {
    std::promise<void> done;
    pool_.Post(kAcceptEngine, [&] {
      close_all();
      done.set_value();
    });
    done.get_future().wait();
  }
}

}  // namespace dashkv::io
