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
#include <chrono>
#include <exception>
#include <future>

#include "core/base/logging.h"

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

}  // namespace

Listener::Listener(EnginePool& pool, Service& service, ListenerOptions options)
    : pool_(pool), service_(service), options_(std::move(options)) {}

Listener::~Listener() {
  boost::system::error_code ec;
  for (auto& a : acceptors_) a->close(ec);
}

absl::Status Listener::Start() {
  std::vector<absl::string_view> addresses =
      absl::StrSplit(options_.bind, ' ', absl::SkipWhitespace());
  if (addresses.empty()) return absl::InvalidArgumentError("no bind address");
  for (absl::string_view a : addresses) {
    bool optional = absl::ConsumePrefix(&a, "-");
    if (a == "*") a = "0.0.0.0";
    if (a == "::*") a = "::";
    if (absl::Status st = Bind(std::string_view(a.data(), a.size()), optional); !st.ok()) {
      acceptors_.clear();
      return st;
    }
  }
  if (acceptors_.empty()) {
    return absl::UnavailableError(absl::StrCat("no address of '", options_.bind, "' exists"));
  }
  for (auto& a : acceptors_) {
    tcp::acceptor* acceptor = a.get();
    pool_.Post(0, [this, acceptor] {
      asio::co_spawn(pool_[0].context(), AcceptLoop(acceptor), AbortOnException);
    });
  }
  return absl::OkStatus();
}

absl::Status Listener::Bind(std::string_view address_sv, bool optional) {
  absl::string_view address(address_sv.data(), address_sv.size());
  boost::system::error_code ec;
  asio::ip::address ip = asio::ip::make_address(std::string(address), ec);
  if (ec) return absl::InvalidArgumentError(absl::StrCat("invalid bind address '", address, "'"));
  tcp::endpoint endpoint(ip, port_ != 0 ? port_ : options_.port);
  auto acceptor = std::make_unique<tcp::acceptor>(pool_[0].context());
  auto fail = [&](absl::string_view what) {
    return absl::UnavailableError(
        absl::StrCat(what, " ", address, ":", endpoint.port(), ": ", ec.message()));
  };
  if (acceptor->open(endpoint.protocol(), ec); ec) {
    return optional && IsMissingAddress(ec) ? absl::OkStatus() : fail("cannot open");
  }
  acceptor->set_option(tcp::acceptor::reuse_address(true), ec);
  if (ip.is_v6()) acceptor->set_option(asio::ip::v6_only(true), ec);
  if (acceptor->bind(endpoint, ec); ec) {
    return optional && IsMissingAddress(ec) ? absl::OkStatus() : fail("cannot bind");
  }
  if (acceptor->listen(511, ec); ec) return fail("cannot listen on");  // Redis's tcp-backlog
  acceptor->non_blocking(true, ec);  // for AcceptPending's synchronous accepts
  if (port_ == 0) {
    port_ = acceptor->local_endpoint(ec).port();
    if (ec) return fail("cannot read the port of");
  }
  acceptors_.push_back(std::move(acceptor));
  return absl::OkStatus();
}

asio::awaitable<void> Listener::AcceptLoop(tcp::acceptor* acceptor) {
  std::chrono::steady_clock::time_point last_error_log{};
  for (;;) {
    Engine& target = pool_[next_engine_ % pool_.size()];
    boost::system::error_code ec;
    // The socket is created on the target engine's io_context directly.
    tcp::socket socket = co_await acceptor->async_accept(
        target.context(), asio::redirect_error(asio::use_awaitable, ec));
    if (ec == asio::error::operation_aborted) co_return;  // Stop(); touch nothing else
    if (ec) {
      if (!acceptor->is_open()) co_return;
      // EMFILE/ENFILE and friends: the connection stays in the backlog; retry a little later
      // (descriptors free up as clients leave) instead of spinning, logging once a second.
      auto now = std::chrono::steady_clock::now();
      if (now - last_error_log >= std::chrono::seconds(1)) {
        last_error_log = now;
        ABSL_RAW_LOG(WARNING, "Accepting client connection: %s", ec.message().c_str());
      }
      asio::steady_timer timer(pool_[0].context(), std::chrono::milliseconds(10));
      co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
      continue;
    }
    Admit(std::move(socket), target);
  }
}

void Listener::Admit(tcp::socket socket, Engine& target) {
  ++next_engine_;
  stats_->accepted.fetch_add(1, std::memory_order_relaxed);
  const ClientLimits& limits =
      options_.conn.limits != nullptr ? *options_.conn.limits : DefaultClientLimits();
  // As Redis: beyond maxclients the client gets one error line and is closed.
  const bool refused = stats_->live.load(std::memory_order_relaxed) >=
                       static_cast<uint64_t>(limits.maxclients.load(std::memory_order_relaxed));
  if (!refused) stats_->live.fetch_add(1, std::memory_order_relaxed);
  auto start = [socket = std::move(socket), &target, service = &service_,
                options = options_.conn, stats = stats_, refused]() mutable {
    if (refused) return RefuseClient(std::move(socket), stats);
    auto conn = std::make_unique<Connection>(std::move(socket), target, *service, options);
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
  CHECK(Engine::Current() == &pool_[0]) << "Listener::AcceptPending off engine 0";
  for (auto& acceptor : acceptors_) {
    for (;;) {
      Engine& target = pool_[next_engine_ % pool_.size()];
      boost::system::error_code ec;
      tcp::socket socket = acceptor->accept(target.context(), ec);
      if (ec) break;  // would_block: the backlog is empty (or closed, or out of descriptors)
      Admit(std::move(socket), target);
    }
  }
}

void Listener::RefuseClient(tcp::socket socket, const std::shared_ptr<Stats>& stats) {
  static constexpr std::string_view kError = "-ERR max number of clients reached\r\n";
  stats->refused.fetch_add(1, std::memory_order_relaxed);
  boost::system::error_code ec;
  socket.non_blocking(true, ec);
  // Best effort, as Redis: a fresh socket's send buffer takes these few bytes at once.
  socket.write_some(asio::buffer(kError), ec);
  socket.close(ec);
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
    boost::system::error_code ec;
    for (auto& a : acceptors_) a->close(ec);
  };
  Engine* current = Engine::Current();
  if (current == &pool_[0]) {
    close_all();
  } else if (current != nullptr) {
    pool_.Post(0, close_all);  // cannot block an engine; closes shortly
  } else {
    std::promise<void> done;
    pool_.Post(0, [&] {
      close_all();
      done.set_value();
    });
    done.get_future().wait();
  }
}

}  // namespace dashkv::io
