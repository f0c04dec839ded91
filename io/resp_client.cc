#include "io/resp_client.h"

#include <absl/strings/str_cat.h>

#include <algorithm>
#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <optional>

#include "core/base/parse_int.h"

namespace dashkv::io {

namespace asio = boost::asio;
using asio::ip::tcp;
using boost::system::error_code;

namespace {

// Parses replies recursively over one input; `pos` moves forward as elements are parsed.
class ReplyParser {
 public:
  ReplyParser(std::string_view in, size_t max_bytes, int max_depth)
      : in_(in), max_bytes_(max_bytes), max_depth_(max_depth) {}

  // Parses one reply at pos_ into *out. Returns false when it needs more input (need_ set) or
  // failed (status_ set).
  bool Parse(RespReply* out, int depth) {
    std::optional<std::string_view> line = Line();
    if (!line) return false;
    const char type = (*line)[0];
    std::string_view body = line->substr(1);
    switch (type) {
      case '+':
      case '-':
        out->type = type == '+' ? RespReply::Type::kSimpleString : RespReply::Type::kError;
        out->str.assign(body);
        return true;
      case ':': {
        std::optional<int64_t> v = ParseInt64(body);
        if (!v) return Fail(absl::DataLossError("protocol error: bad integer"));
        out->type = RespReply::Type::kInteger;
        out->integer = *v;
        return true;
      }
      case '$':
        return ParseBulk(body, out);
      case '*':
        return ParseArray(body, out, depth);
      default:
        return Fail(absl::DataLossError("protocol error: unexpected reply type"));
    }
  }

  size_t pos() const { return pos_; }
  size_t need() const { return need_; }
  const absl::Status& status() const { return status_; }

 private:
  bool Fail(absl::Status status) {
    status_ = std::move(status);
    return false;
  }
  bool TooLarge() { return Fail(absl::ResourceExhaustedError("reply exceeds the size limit")); }
  bool Incomplete(size_t need) {
    if (need > max_bytes_) return TooLarge();
    need_ = need;
    return false;
  }

  // Returns the line at pos_ (without CRLF, at least one byte) and moves past it.
  std::optional<std::string_view> Line() {
    const size_t end = in_.find("\r\n", pos_);
    if (end != std::string_view::npos && end + 2 <= max_bytes_) {
      if (end == pos_) {
        Fail(absl::DataLossError("protocol error: empty line"));
        return std::nullopt;
      }
      std::string_view line = in_.substr(pos_, end - pos_);
      pos_ = end + 2;
      return line;
    }
    if (end != std::string_view::npos || in_.size() >= max_bytes_) {
      TooLarge();
    } else {
      Incomplete(in_.size() + 1);
    }
    return std::nullopt;
  }

  // Returns the length in a $ or * header: -1 (null) or >= 0; nullopt after Fail.
  std::optional<int64_t> Length(std::string_view body) {
    std::optional<int64_t> n = ParseInt64(body);
    if (!n || *n < -1) {
      Fail(absl::DataLossError("protocol error: bad length"));
      return std::nullopt;
    }
    return n;
  }

  bool ParseBulk(std::string_view body, RespReply* out) {
    std::optional<int64_t> len = Length(body);
    if (!len) return false;
    if (*len == -1) {
      out->type = RespReply::Type::kNull;
      return true;
    }
    // The declared size decides before anything is allocated.
    if (static_cast<uint64_t>(*len) > max_bytes_ || pos_ + *len + 2 > max_bytes_) {
      return TooLarge();
    }
    const size_t end = pos_ + static_cast<size_t>(*len);
    if (in_.size() < end + 2) return Incomplete(end + 2);
    if (in_[end] != '\r' || in_[end + 1] != '\n') {
      return Fail(absl::DataLossError("protocol error: bulk string without CRLF"));
    }
    out->type = RespReply::Type::kBulkString;
    out->str.assign(in_.substr(pos_, *len));
    pos_ = end + 2;
    return true;
  }

  bool ParseArray(std::string_view body, RespReply* out, int depth) {
    std::optional<int64_t> count = Length(body);
    if (!count) return false;
    if (*count == -1) {
      out->type = RespReply::Type::kNull;
      return true;
    }
    if (depth >= max_depth_) return Fail(absl::ResourceExhaustedError("reply nests too deep"));
    // Every element takes at least 3 bytes ("+\r\n" is the smallest).
    if (static_cast<uint64_t>(*count) > (max_bytes_ - pos_) / 3) return TooLarge();
    out->type = RespReply::Type::kArray;
    out->elements.clear();
    // Reserves only what the input can hold already.
    out->elements.reserve(std::min<size_t>(*count, (in_.size() - pos_) / 3));
    for (int64_t i = 0; i < *count; ++i) {
      out->elements.emplace_back();
      if (!Parse(&out->elements.back(), depth + 1)) return false;
    }
    return true;
  }

  std::string_view in_;
  size_t max_bytes_;
  int max_depth_;
  size_t pos_ = 0;
  size_t need_ = 0;
  absl::Status status_;
};

// Returns Unavailable with the socket error's text (what went wrong where).
absl::Status SocketError(std::string_view what, const error_code& ec) {
  return absl::UnavailableError(std::string(what) + ": " + ec.message());
}

absl::Status Timeout(std::string_view what) {
  return absl::DeadlineExceededError(std::string(what) + ": timeout");
}

constexpr size_t kMinRead = 4096;
constexpr size_t kMaxWriteChunk = 1 << 20;  // bytes handed to one write_some
constexpr size_t kMaxWriteBuffers = 64;     // buffers handed to one write_some (writev)

}  // namespace

RespParseResult ParseRespReply(std::string_view in, size_t max_bytes, int max_depth) {
  RespParseResult result;
  ReplyParser parser(in, max_bytes, max_depth);
  if (parser.Parse(&result.reply, 0)) {
    result.consumed = parser.pos();
  } else if (!parser.status().ok()) {
    result.status = parser.status();
  } else {
    result.need = parser.need();
  }
  return result;
}

void AppendRespCommand(std::string& out, std::span<const std::string_view> args) {
  absl::StrAppend(&out, "*", args.size(), "\r\n");
  for (std::string_view a : args) {
    absl::StrAppend(&out, "$", a.size(), "\r\n");
    out.append(a);
    out.append("\r\n");
  }
}

struct RespClient::State {
  explicit State(asio::io_context& context) : socket(context), resolver(context), timer(context) {}

  tcp::socket socket;
  tcp::resolver resolver;
  asio::steady_timer timer;
  uint64_t op = 0;         // counts armed deadlines; a stale expiry sees another value
  bool timed_out = false;  // the current deadline fired
};

// Arms the state's timer for one operation; disarms on destruction.
class RespClient::Deadline {
 public:
  Deadline(const std::shared_ptr<State>& state, std::chrono::milliseconds timeout)
      : state_(*state) {
    state_.timed_out = false;
    const uint64_t op = ++state_.op;
    state_.timer.expires_after(timeout);
    state_.timer.async_wait([state, op](const error_code& ec) {
      if (ec || state->op != op) return;  // disarmed, or a later operation's timer
      state->timed_out = true;
      error_code ignored;
      state->socket.cancel(ignored);
      state->resolver.cancel();
    });
  }
  ~Deadline() {
    ++state_.op;
    state_.timer.cancel();
  }
  Deadline(const Deadline&) = delete;
  Deadline& operator=(const Deadline&) = delete;

  bool expired() const { return state_.timed_out; }

 private:
  State& state_;
};

RespClient::RespClient(asio::io_context& context) : state_(std::make_shared<State>(context)) {}

RespClient::~RespClient() { Close(); }

void RespClient::Close() {
  error_code ignored;
  state_->socket.close(ignored);
  in_.clear();
  in_pos_ = 0;
}

bool RespClient::is_open() const { return state_->socket.is_open(); }

asio::awaitable<absl::Status> RespClient::Connect(std::string host, uint16_t port,
                                                  std::chrono::milliseconds timeout) {
  std::shared_ptr<State> state = state_;
  Deadline deadline(state, timeout);
  error_code ec;
  std::vector<tcp::endpoint> endpoints;
  asio::ip::address address = asio::ip::make_address(host, ec);
  if (!ec) {
    endpoints.emplace_back(address, port);
  } else {
    tcp::resolver::results_type results = co_await state->resolver.async_resolve(
        host, std::to_string(port), asio::redirect_error(asio::use_awaitable, ec));
    if (deadline.expired()) co_return Timeout("resolving " + host);
    if (ec || results.empty()) {
      co_return absl::NotFoundError("cannot resolve " + host + ": " + ec.message());
    }
    for (const auto& entry : results) endpoints.push_back(entry.endpoint());
  }
  co_await asio::async_connect(state->socket, endpoints,
                               asio::redirect_error(asio::use_awaitable, ec));
  if (deadline.expired()) {
    Close();
    co_return Timeout("connecting");
  }
  if (ec) {
    Close();
    co_return SocketError("connecting", ec);
  }
  state->socket.set_option(tcp::no_delay(true), ec);  // best effort
  co_return absl::OkStatus();
}

asio::awaitable<absl::Status> RespClient::Write(std::span<const std::string_view> pieces,
                                                std::chrono::milliseconds timeout) {
  std::shared_ptr<State> state = state_;
  size_t piece = 0, offset = 0;  // the first byte not written yet
  std::vector<asio::const_buffer> buffers;
  while (piece < pieces.size()) {
    buffers.clear();
    size_t bytes = 0;
    for (size_t p = piece, off = offset;
         p < pieces.size() && buffers.size() < kMaxWriteBuffers && bytes < kMaxWriteChunk;
         ++p, off = 0) {
      size_t n = std::min(pieces[p].size() - off, kMaxWriteChunk - bytes);
      if (n > 0) buffers.emplace_back(pieces[p].data() + off, n);
      bytes += n;
    }
    if (bytes == 0) break;  // only empty pieces remain
    error_code ec;
    size_t written;
    {
      Deadline deadline(state, timeout);
      written = co_await state->socket.async_write_some(
          buffers, asio::redirect_error(asio::use_awaitable, ec));
      if (deadline.expired()) {
        Close();
        co_return Timeout("writing");
      }
    }
    if (ec) {
      Close();
      co_return SocketError("writing", ec);
    }
    // Advances past `written` bytes.
    while (written > 0 && piece < pieces.size()) {
      size_t n = std::min(written, pieces[piece].size() - offset);
      written -= n;
      offset += n;
      if (offset == pieces[piece].size()) {
        ++piece;
        offset = 0;
      }
    }
  }
  co_return absl::OkStatus();
}

asio::awaitable<absl::Status> RespClient::Write(std::string_view bytes,
                                                std::chrono::milliseconds timeout) {
  // A coroutine of its own: the one-piece span must live as long as the write.
  co_return co_await Write(std::span<const std::string_view>(&bytes, 1), timeout);
}

asio::awaitable<absl::StatusOr<RespReply>> RespClient::ReadReply(
    std::chrono::milliseconds timeout, size_t max_bytes) {
  std::shared_ptr<State> state = state_;
  Deadline deadline(state, timeout);
  size_t need = 0;
  for (;;) {
    if (in_.size() - in_pos_ >= need) {
      std::string_view pending(in_.data() + in_pos_, in_.size() - in_pos_);
      RespParseResult parsed = ParseRespReply(pending, max_bytes);
      if (!parsed.status.ok()) {
        Close();
        co_return parsed.status;
      }
      if (parsed.consumed > 0) {
        in_pos_ += parsed.consumed;
        if (in_pos_ == in_.size()) {
          in_.clear();
          in_pos_ = 0;
        }
        co_return std::move(parsed.reply);
      }
      need = parsed.need;
    }
    if (!state->socket.is_open()) co_return absl::UnavailableError("not connected");
    // Drops consumed input, then reads at least up to `need` (bounded by max_bytes).
    if (in_pos_ > 0) {
      in_.erase(0, in_pos_);
      in_pos_ = 0;
    }
    const size_t have = in_.size();
    const size_t room = std::max(kMinRead, need > have ? need - have : 0);
    in_.resize(have + room);
    error_code ec;
    size_t n = co_await state->socket.async_read_some(
        asio::buffer(in_.data() + have, room), asio::redirect_error(asio::use_awaitable, ec));
    in_.resize(have + (ec ? 0 : n));
    if (deadline.expired()) {
      Close();
      co_return Timeout("reading");
    }
    if (ec == asio::error::eof) {
      Close();
      co_return absl::UnavailableError("reading: connection closed by peer");
    }
    if (ec) {
      Close();
      co_return SocketError("reading", ec);
    }
  }
}

}  // namespace dashkv::io
