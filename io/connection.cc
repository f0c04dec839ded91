#include "io/connection.h"

#include <absl/base/internal/raw_logging.h>
#include <absl/strings/match.h>
#include <absl/strings/str_cat.h>

#include <atomic>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <chrono>
#include <cstring>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include "core/base/clock.h"
#include "core/base/logging.h"
#include "io/engine.h"
#include "io/http_request.h"
#include "io/http_response.h"
#include "io/tls_stream.h"

namespace dashkv::io {
namespace {

namespace asio = boost::asio;

// Small: an idle or request/response client keeps only this; a client that fills it grows it
// (doubling per full read, see MakeRoom).
constexpr size_t kInitialInput = 4 * 1024;
// Free bytes wanted before a read: smaller tails are compacted away first.
constexpr size_t kMinRead = 2 * 1024;
// Buffers above these sizes are released once idle (after a big bulk string or reply).
constexpr size_t kMaxIdleInput = 256 * 1024;
constexpr size_t kMaxIdleOutput = 1024 * 1024;
// Output waiting for a slow reader above which the connection stops reading until it drains
// (bounds memory for a client that never reads its replies); much lower for a client that has
// not authenticated, whose replies are all -NOAUTH.
constexpr size_t kMaxPendingOutput = 256 * 1024 * 1024;
constexpr size_t kMaxUnauthPendingOutput = 64 * 1024;
// Unsent HTTP responses above which an HTTP connection stops reading until they drain (a client
// that pipelines requests and never reads).
constexpr size_t kMaxHttpPendingOutput = 4 * 1024 * 1024;

// Connection ids, unique per process (CLIENT ID); the only global state of this file.
std::atomic<uint64_t> next_connection_id{1};

std::string FormatEndpoint(const asio::ip::tcp::endpoint& ep) {
  const asio::ip::address addr = ep.address();
  if (addr.is_v6()) return absl::StrCat("[", addr.to_string(), "]:", ep.port());
  return absl::StrCat(addr.to_string(), ":", ep.port());
}

// Redis's anetKeepAlive: probes after `interval` idle seconds, then every interval/3 seconds,
// three unanswered probes close the connection. Failures are ignored (best effort).
void SetKeepAlive(int fd, int interval) {
  int yes = 1;
  int probe_interval = std::max(1, interval / 3);
  int count = 3;
  setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &yes, sizeof(yes));
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &interval, sizeof(interval));
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &probe_interval, sizeof(probe_interval));
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &count, sizeof(count));
}

bool IsQuit(std::string_view name) {
  return absl::EqualsIgnoreCase(absl::string_view(name.data(), name.size()), "quit");
}

// The TCP socket under a stream.
asio::ip::tcp::socket& TcpSocket(asio::ip::tcp::socket& s) { return s; }
asio::ip::tcp::socket& TcpSocket(TlsStream& s) { return s.socket(); }

void CloseStreamNow(asio::ip::tcp::socket& s) {
  boost::system::error_code ec;
  s.shutdown(asio::ip::tcp::socket::shutdown_both, ec);
  s.close(ec);  // cancels a pending read or write: Run() sees an error and returns
}
void CloseStreamNow(TlsStream& s) { s.Close(); }

}  // namespace

Connection::Connection(asio::ip::tcp::socket& socket, Engine& engine, Service& service,
                       ConnectionOptions options)
    : engine_(engine),
      service_(service),
      limits_(options.limits != nullptr ? *options.limits : DefaultClientLimits()),
      id_(next_connection_id.fetch_add(1, std::memory_order_relaxed)),
      created_ms_(NowMs()),
      last_command_ms_(created_ms_) {
  boost::system::error_code ec;
  fd_ = socket.native_handle();
  socket.set_option(asio::ip::tcp::no_delay(true), ec);
  if (int64_t keepalive = limits_.tcp_keepalive.load(std::memory_order_relaxed); keepalive > 0) {
    SetKeepAlive(fd_, static_cast<int>(std::min<int64_t>(keepalive, 1 << 30)));
  }
  auto remote = socket.remote_endpoint(ec);
  if (!ec) remote_ = FormatEndpoint(remote);
  auto local = socket.local_endpoint(ec);
  if (!ec) local_ = FormatEndpoint(local);
  socket.non_blocking(true, ec);  // for the direct write in Flush(); async ops are unaffected
  writer_done_ = std::make_unique<asio::steady_timer>(socket.get_executor());
}

template <typename Stream>
StreamConnection<Stream>::StreamConnection(Stream stream, Engine& engine, Service& service,
                                           ConnectionOptions options)
    : Connection(TcpSocket(stream), engine, service, options), stream_(std::move(stream)) {}

template <typename Stream>
StreamConnection<Stream>::~StreamConnection() = default;

Connection::~Connection() {
  if (watch_) watch_->conn = nullptr;
}

void Connection::WatchPeer(absl::AnyInvocable<void()> on_close) {
  DCHECK(engine_.IsMyThread());
  if (!watch_) {
    watch_ = std::make_shared<PeerWatch>();
    watch_->conn = this;
  }
  watch_->active = true;
  watch_->on_close = std::move(on_close);
  if (!watch_->armed) ArmPeerWatch();
}

void Connection::StopWatchingPeer() {
  if (!watch_) return;
  watch_->active = false;
  watch_->on_close = nullptr;  // a pending wait stays armed and is reused by the next watch
}

void Connection::PeerClosed(PeerWatch& w) {
  w.active = false;
  if (w.on_close) {
    auto fn = std::move(w.on_close);
    w.on_close = nullptr;
    fn();
  }
}

template <typename Stream>
void StreamConnection<Stream>::ArmPeerWatch() {
  watch_->armed = true;
  TcpSocket(stream_).async_wait(asio::ip::tcp::socket::wait_read,
                                [w = watch_](boost::system::error_code ec) {
    w->armed = false;
    if (w->conn == nullptr || !w->active) return;
    auto& c = static_cast<StreamConnection&>(*w->conn);
    bool closed = ec || c.closed_;
    while (!closed) {  // drain what the client sent; EOF or an error means it is gone
      char buf[4096];
      boost::system::error_code rec;
      size_t n = c.stream_.read_some(asio::buffer(buf), rec);
      if (rec == asio::error::would_block || rec == asio::error::try_again) break;
      if (rec || n == 0) {
        closed = true;
        break;
      }
      c.parked_in_.append(buf, n);
      c.engine_.net().AddRead(n);
    }
    if (!closed) return c.ArmPeerWatch();
    PeerClosed(*w);
  });
}

bool Connection::TakeParkedInput() {
  if (parked_in_.empty()) return false;
  const size_t used = in_end_ - in_start_;
  if (in_end_ + parked_in_.size() > in_cap_) {
    Reallocate(std::max({in_cap_, used + parked_in_.size() + kMinRead, kInitialInput}));
  }
  std::memcpy(in_.get() + in_end_, parked_in_.data(), parked_in_.size());
  in_end_ += parked_in_.size();
  parked_in_.clear();
  return true;
}

size_t Connection::query_buffer_size() const {
  if (!batch_.empty()) return in_end_ - std::min(in_end_, batch_end_) + parked_in_.size();
  const size_t unconsumed = in_end_ - in_start_;
  return unconsumed - std::min(unconsumed, parser_.partial_parsed_bytes()) + parked_in_.size();
}

size_t Connection::memory_bytes() const {
  return sizeof(*this) + in_cap_ + reply_.capacity() + pending_.capacity() +
         queued_.capacity() + parked_in_.capacity() +
         args_.capacity() * sizeof(std::string_view) +
         cmd_ranges_.capacity() * sizeof(cmd_ranges_[0]) + batch_.capacity() * sizeof(CmdArgs);
}

size_t Connection::query_buffer_free() const { return in_cap_ - in_end_; }

void Connection::Register() {
  if (registered_) return;
  registered_ = true;
  state_ = service_.OnConnect(*this);
}

bool Connection::Unauthenticated() const {
  return !authenticated_ && limits_.auth_required.load(std::memory_order_relaxed);
}

void Connection::Shutdown() {
  CHECK(engine_.IsMyThread()) << "Connection::Shutdown from another engine";
  CloseSocket();
}

void Connection::CloseSocket() {
  if (closed_) return;
  closed_ = true;
  fd_ = -1;
  CloseStream();
}

template <typename Stream>
void StreamConnection<Stream>::CloseStream() {
  CloseStreamNow(stream_);
}

void Connection::Received(size_t n) {
  engine_.net().AddRead(n);
  input_filled_ = in_end_ + n == in_cap_;
  in_end_ += n;
}

void Connection::MakeRoom() {
  const size_t used = in_end_ - in_start_;
  // The parser's need, but never more than what has arrived again: a declared bulk length is
  // not a reason to reserve memory before its bytes come.
  size_t want = std::max(used + kMinRead, std::min(in_needed_, 2 * used));
  // The last read filled the buffer (a pipeline): double it, so big batches take one read.
  if (input_filled_) want = std::max(want, std::min(2 * in_cap_, kMaxIdleInput));
  input_filled_ = false;
  if (in_start_ + want <= in_cap_) return;
  if (want > in_cap_) {
    // Geometric (O(total) copying) yet bounded by the input that arrived.
    Reallocate(std::max({want, std::min(2 * in_cap_, 2 * used + kInitialInput), kInitialInput}));
    return;
  }
  if (used > 0) std::memmove(in_.get(), in_.get() + in_start_, used);
  in_start_ = 0;
  in_end_ = used;
}

void Connection::Reallocate(size_t capacity) {
  const size_t used = in_end_ - in_start_;
  std::unique_ptr<char[]> buf = std::make_unique_for_overwrite<char[]>(capacity);
  if (used > 0) std::memcpy(buf.get(), in_.get() + in_start_, used);
  in_ = std::move(buf);
  in_cap_ = capacity;
  in_start_ = 0;
  in_end_ = used;
}

void Connection::TrimInput() {
  if (in_start_ != in_end_) return;
  in_start_ = in_end_ = 0;
  if (in_cap_ > kMaxIdleInput) Reallocate(kInitialInput);
}

Connection::BatchEnd Connection::ParseBatch(size_t* end_pos) {
  args_.clear();
  cmd_ranges_.clear();
  batch_.clear();
  in_needed_ = 0;
  const bool unauthenticated = Unauthenticated();
  parser_.set_limits({.max_bulk_len = limits_.max_bulk_len.load(std::memory_order_relaxed),
                      .unauthenticated = unauthenticated});
  const char* const begin = in_.get();
  const char* const end = in_.get() + in_end_;
  size_t pos = in_start_;
  BatchEnd result = BatchEnd::kNeedMore;
  while (pos < in_end_) {
    RespParser::Status st = parser_.Parse(std::string_view(begin + pos, in_end_ - pos));
    if (st == RespParser::Status::kNeedMore) {
      in_needed_ = parser_.bytes_needed();
      break;
    }
    if (st == RespParser::Status::kError) {
      result = BatchEnd::kError;
      break;
    }
    pos += parser_.consumed();
    if (st == RespParser::Status::kEmpty) continue;
    const std::vector<std::string_view>& args = parser_.args();
    // Quoted inline arguments live in the parser and die at the next Parse(): dispatch them now.
    bool owned_by_parser = false;
    for (std::string_view a : args) {
      owned_by_parser |= a.data() < begin || a.data() + a.size() > end;
    }
    cmd_ranges_.emplace_back(static_cast<uint32_t>(args_.size()),
                             static_cast<uint32_t>(args_.size() + args.size()));
    args_.insert(args_.end(), args.begin(), args.end());
    // Unauthenticated: one command per batch, so that an AUTH lifts the limits for the next.
    if (owned_by_parser || unauthenticated || IsQuit(args.front())) {
      result = pos < in_end_ ? BatchEnd::kCut : BatchEnd::kNeedMore;
      break;
    }
  }
  for (auto [first, last] : cmd_ranges_) batch_.emplace_back(args_.data() + first, last - first);
  *end_pos = batch_end_ = pos;
  return result;
}

template <typename Stream>
asio::awaitable<HttpSniff> StreamConnection<Stream>::ReadFirstLine() {
  for (;;) {
    MakeRoom();
    boost::system::error_code ec;
    size_t n = co_await stream_.async_read_some(
        asio::buffer(in_.get() + in_end_, in_cap_ - in_end_),
        asio::redirect_error(asio::use_awaitable, ec));
    if (ec || n == 0) co_return HttpSniff::kNeedMore;  // gone before it said anything
    Received(n);
    const HttpSniff sniff = SniffHttp(std::string_view(in_.get() + in_start_, in_end_ - in_start_));
    if (sniff != HttpSniff::kNeedMore) co_return sniff;
  }
}

template <typename Stream>
asio::awaitable<void> StreamConnection<Stream>::Run() {
  DCHECK(engine_.IsMyThread());
  Register();
  // The first line decides between HTTP and RESP; the RESP loop below starts with the bytes
  // it read, and is the same per read as it would be without HTTP.
  const HttpSniff protocol = co_await ReadFirstLine();
  if (protocol == HttpSniff::kHttp) co_await ServeHttp();
  boost::system::error_code ec;
  bool open = protocol == HttpSniff::kNotHttp;
  while (open) {
    const int64_t max_query = limits_.max_query_buffer.load(std::memory_order_relaxed);
    if (in_end_ - in_start_ > static_cast<size_t>(max_query)) {
      ABSL_RAW_LOG(WARNING, "closing client %s: query buffer above %lld bytes", remote_.c_str(),
                   static_cast<long long>(max_query));
      break;
    }
    // Every complete command, in as few batches as possible (usually one).
    for (;;) {
      size_t end_pos = in_start_;
      BatchEnd end = ParseBatch(&end_pos);
      if (!batch_.empty()) {
        last_command_ms_ = NowMs();
        co_await service_.Dispatch(*this, *state_, batch_, reply_);
        batch_.clear();
      }
      in_start_ = end_pos;  // only now: the batch's views point into [in_start_, end_pos)
      // Input that arrived while a command was parked: parse it before reading more.
      if (TakeParkedInput() && end == BatchEnd::kNeedMore) end = BatchEnd::kCut;
      if (end == BatchEnd::kError) {
        reply_.SendRaw("-ERR ");
        reply_.SendRaw(parser_.error());
        reply_.SendRaw("\r\n");
      }
      if (!reply_.empty() && !closed_) Flush();
      if (write_failed_) open = false;
      // The client sends faster than it reads: let the writer drain before reading on.
      const size_t unsent = pending_.size() + queued_.size();
      if (unsent > kMaxPendingOutput || (unsent > kMaxUnauthPendingOutput && Unauthenticated())) {
        co_await WaitForWriter();
      }
      if (end == BatchEnd::kError || close_requested_ || closed_) open = false;
      if (!open || end != BatchEnd::kCut) break;
    }
    TrimInput();
    if (!open || closed_) break;
    MakeRoom();
    size_t n = co_await stream_.async_read_some(
        asio::buffer(in_.get() + in_end_, in_cap_ - in_end_),
        asio::redirect_error(asio::use_awaitable, ec));
    if (ec || n == 0) break;
    Received(n);
  }
  finishing_ = true;
  co_await WaitForWriter();  // the last replies (QUIT's OK, a protocol error) go out first
  service_.OnDisconnect(*this, *state_);
  CloseSocket();
}

template <typename Stream>
asio::awaitable<void> StreamConnection<Stream>::ServeHttp() {
  HttpRequestParser parser;
  for (;;) {
    // Every complete request head in the input, answered in order.
    bool open = true;
    while (open && !closed_) {
      const HttpRequestParser::Status status =
          parser.Parse(std::string_view(in_.get() + in_start_, in_end_ - in_start_));
      if (status == HttpRequestParser::Status::kNeedMore) break;
      HttpResponse response;
      bool head_only = false;
      if (status == HttpRequestParser::Status::kError) {
        response.status = parser.error_status();
        open = false;
      } else {
        const HttpRequest& request = parser.request();
        head_only = request.method == "HEAD";
        if (!head_only && request.method != "GET") {
          response.status = 405;
          response.headers.emplace_back("Allow", "GET, HEAD");
        } else if (request.has_body) {
          response.status = 413;  // no path takes a body
        } else {
          last_command_ms_ = NowMs();
          co_await service_.ServeHttp(*this, *state_, request, response);
        }
        // A body is never read, so the next request's start is unknown: close after this one.
        open = request.keep_alive && !request.has_body && !close_requested_;
        in_start_ += parser.consumed();  // only now: `request` views the input
      }
      if (response.status != 200 && response.body.empty()) {
        response.body = std::string(HttpReason(response.status)) + "\n";
      }
      AppendHttpResponse(response, head_only, open, &reply_.buffer());
      if (!closed_) Flush();
      if (write_failed_) co_return;
      if (pending_.size() + queued_.size() > kMaxHttpPendingOutput) co_await WaitForWriter();
    }
    if (!open || closed_) co_return;
    TrimInput();
    MakeRoom();
    boost::system::error_code ec;
    size_t n = co_await stream_.async_read_some(
        asio::buffer(in_.get() + in_end_, in_cap_ - in_end_),
        asio::redirect_error(asio::use_awaitable, ec));
    if (ec || n == 0) co_return;
    Received(n);
  }
}

template <typename Stream>
void StreamConnection<Stream>::Flush() {
  std::string& out = reply_.buffer();
  if (writing_ || push_flush_posted_) {  // behind earlier output: keep the order
    queued_.append(out);
    CheckOutputLimit();
  } else {
    size_t sent = 0;
    boost::system::error_code ec;
    while (sent < out.size()) {
      size_t n = stream_.write_some(asio::buffer(out.data() + sent, out.size() - sent), ec);
      if (ec) break;
      sent += n;
    }
    if (sent > 0) engine_.net().AddWrite(sent);
    if (ec && ec != asio::error::would_block && ec != asio::error::try_again) {
      write_failed_ = true;
    } else if (sent < out.size()) {
      pending_.assign(out, sent, std::string::npos);
      StartWriter();
      CheckOutputLimit();
    }
  }
  reply_.Clear();
  if (out.capacity() > kMaxIdleOutput) out.shrink_to_fit();
}

void Connection::SendAsync(std::string_view bytes) {
  DCHECK(engine_.IsMyThread());
  if (closed_ || finishing_ || close_requested_ || write_failed_) return;
  queued_.append(bytes);
  // Written after the current task: every push of this engine loop iteration (a pipeline of
  // PUBLISHes, say) leaves in one write.
  if (!writing_ && !push_flush_posted_) {
    push_flush_posted_ = true;
    asio::post(engine_.context(), [this] { FlushPushes(); });
  }
  CheckOutputLimit();
}

template <typename Stream>
void StreamConnection<Stream>::FlushPushes() {
  push_flush_posted_ = false;
  if (!writing_ && !closed_ && !write_failed_ && !queued_.empty()) {
    size_t sent = 0;
    boost::system::error_code ec;
    while (sent < queued_.size()) {
      size_t n = stream_.write_some(asio::buffer(queued_.data() + sent, queued_.size() - sent),
                                    ec);
      if (ec) break;
      sent += n;
    }
    if (sent > 0) engine_.net().AddWrite(sent);
    if (ec && ec != asio::error::would_block && ec != asio::error::try_again) {
      write_failed_ = true;
    } else if (sent < queued_.size()) {
      pending_.assign(queued_, sent, std::string::npos);
      StartWriter();
    }
    queued_.clear();
    if (queued_.capacity() > kMaxIdleOutput) std::string().swap(queued_);
  }
  if (!writing_ && waiting_for_writer_) writer_done_->cancel();
}

template <typename Stream>
void StreamConnection<Stream>::StartWriter() {
  writing_ = true;
  asio::co_spawn(stream_.get_executor(), WriteLoop(), asio::detached);
}

void Connection::CheckOutputLimit() {
  if (output_limit_ == nullptr || closed_) return;
  const int64_t now_s = std::chrono::duration_cast<std::chrono::seconds>(
                            std::chrono::steady_clock::now().time_since_epoch())
                            .count();
  if (!limit_tracker_.Exceeded(output_limit_->Load(), pending_.size() + queued_.size(), now_s)) {
    return;
  }
  ABSL_RAW_LOG(WARNING,
               "Client id=%llu addr=%s closed for overcoming of output buffer limits "
               "(%zu bytes pending).",
               static_cast<unsigned long long>(id_), remote_.c_str(),
               pending_.size() + queued_.size());
  // pending_ may be under an async_write: the writer frees it when the close cancels it.
  std::string().swap(queued_);
  write_failed_ = true;
  CloseSocket();
}

template <typename Stream>
asio::awaitable<void> StreamConnection<Stream>::WriteLoop() {
  boost::system::error_code ec;
  while (!pending_.empty()) {
    co_await asio::async_write(stream_, asio::buffer(pending_),
                               asio::redirect_error(asio::use_awaitable, ec));
    if (ec) {
      write_failed_ = true;
      queued_.clear();
    } else {
      engine_.net().AddWrite(pending_.size());
    }
    pending_.clear();
    pending_.swap(queued_);
  }
  if (pending_.capacity() > kMaxIdleOutput) std::string().swap(pending_);
  if (queued_.capacity() > kMaxIdleOutput) std::string().swap(queued_);
  writing_ = false;
  if (waiting_for_writer_) writer_done_->cancel();
}

asio::awaitable<void> Connection::WaitForWriter() {
  while (writing_ || push_flush_posted_) {
    boost::system::error_code ec;
    writer_done_->expires_at(asio::steady_timer::time_point::max());
    waiting_for_writer_ = true;
    co_await writer_done_->async_wait(asio::redirect_error(asio::use_awaitable, ec));
    waiting_for_writer_ = false;
  }
}

template class StreamConnection<asio::ip::tcp::socket>;
template class StreamConnection<TlsStream>;

}  // namespace dashkv::io
