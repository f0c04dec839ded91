#include "io/resp_client.h"

#include <utility>  // before asio: awaitable.hpp uses std::exchange

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <chrono>
#include <functional>
#include <string>
#include <vector>

namespace dashkv::io {
namespace {

namespace asio = boost::asio;
using asio::ip::tcp;
using std::chrono::milliseconds;
using Type = RespReply::Type;

constexpr size_t kLimit = 1 << 16;

// ASSERT_* returns void: inside a coroutine a failed check must co_return instead.
#define CO_ASSERT_OK(result)                              \
  if (!(result).ok()) {                                   \
    ADD_FAILURE() << #result << ": " << (result).status(); \
    co_return;                                            \
  }

TEST(RespReplyParserTest, ParsesEveryRespTwoType) {
  RespParseResult r = ParseRespReply("+OK\r\n", kLimit);
  ASSERT_TRUE(r.status.ok());
  EXPECT_EQ(r.consumed, 5u);
  EXPECT_EQ(r.reply.type, Type::kSimpleString);
  EXPECT_EQ(r.reply.str, "OK");

  r = ParseRespReply("-BUSYKEY Target key name already exists.\r\n+OK\r\n", kLimit);
  EXPECT_EQ(r.reply.type, Type::kError);
  EXPECT_TRUE(r.reply.is_error());
  EXPECT_EQ(r.reply.str, "BUSYKEY Target key name already exists.");
  EXPECT_EQ(r.consumed, 42u);

  r = ParseRespReply(":-42\r\n", kLimit);
  EXPECT_EQ(r.reply.type, Type::kInteger);
  EXPECT_EQ(r.reply.integer, -42);

  r = ParseRespReply("$5\r\na\r\nbc\r\n", kLimit);
  EXPECT_EQ(r.reply.type, Type::kBulkString);
  EXPECT_EQ(r.reply.str, "a\r\nbc");
  EXPECT_EQ(r.consumed, 11u);

  EXPECT_EQ(ParseRespReply("$-1\r\n", kLimit).reply.type, Type::kNull);
  EXPECT_EQ(ParseRespReply("*-1\r\n", kLimit).reply.type, Type::kNull);

  r = ParseRespReply("*3\r\n:1\r\n*1\r\n$1\r\nx\r\n$0\r\n\r\n", kLimit);
  ASSERT_EQ(r.reply.type, Type::kArray);
  ASSERT_EQ(r.reply.elements.size(), 3u);
  EXPECT_EQ(r.reply.elements[0].integer, 1);
  ASSERT_EQ(r.reply.elements[1].elements.size(), 1u);
  EXPECT_EQ(r.reply.elements[1].elements[0].str, "x");
  EXPECT_EQ(r.reply.elements[2].str, "");
}

TEST(RespReplyParserTest, IncompleteInputTellsWhatItNeeds) {
  RespParseResult r = ParseRespReply("+O", kLimit);
  EXPECT_TRUE(r.status.ok());
  EXPECT_EQ(r.consumed, 0u);
  EXPECT_EQ(r.need, 3u);
  r = ParseRespReply("$10\r\nabc", kLimit);
  EXPECT_EQ(r.consumed, 0u);
  EXPECT_EQ(r.need, 17u);  // header 5 + 10 + CRLF
  r = ParseRespReply("*2\r\n:1\r\n", kLimit);
  EXPECT_EQ(r.consumed, 0u);
  EXPECT_GT(r.need, 8u);
  EXPECT_EQ(ParseRespReply("", kLimit).need, 1u);
}

TEST(RespReplyParserTest, RefusesWhatIsNotResp) {
  for (const char* bad : {"hello\r\n", "\r\n", ":12x\r\n", "$-2\r\n", "$abc\r\n", "*x\r\n",
                          "$3\r\nabcde\r\n", "*1\r\n?\r\n"}) {
    RespParseResult r = ParseRespReply(bad, kLimit);
    EXPECT_TRUE(absl::IsDataLoss(r.status)) << bad << ": " << r.status;
  }
}

TEST(RespReplyParserTest, DeclaredSizesOverTheLimitFailAtOnce) {
  // A 1 GB bulk is refused from its header alone.
  RespParseResult r = ParseRespReply("$1000000000\r\n", kLimit);
  EXPECT_TRUE(absl::IsResourceExhausted(r.status)) << r.status;
  r = ParseRespReply("$9223372036854775807\r\n", kLimit);
  EXPECT_TRUE(absl::IsResourceExhausted(r.status)) << r.status;
  r = ParseRespReply("*1000000000\r\n", kLimit);
  EXPECT_TRUE(absl::IsResourceExhausted(r.status)) << r.status;
  // A line that never ends.
  r = ParseRespReply("+" + std::string(kLimit, 'x'), kLimit);
  EXPECT_TRUE(absl::IsResourceExhausted(r.status)) << r.status;
  // Nesting.
  std::string deep;
  for (int i = 0; i < 40; ++i) deep += "*1\r\n";
  r = ParseRespReply(deep + ":1\r\n", kLimit, 16);
  EXPECT_TRUE(absl::IsResourceExhausted(r.status)) << r.status;
  // Exactly at the limit is fine.
  std::string exact = "$" + std::to_string(kLimit - 10) + "\r\n" + std::string(kLimit - 10, 'y') +
                      "\r\n";
  ASSERT_EQ(exact.size(), kLimit);
  r = ParseRespReply(exact, kLimit);
  EXPECT_TRUE(r.status.ok()) << r.status;
  EXPECT_EQ(r.consumed, kLimit);
}

TEST(RespReplyParserTest, AppendsCommands) {
  std::string out;
  std::vector<std::string_view> args = {"SET", "k", std::string_view("a\0b", 3), ""};
  AppendRespCommand(out, args);
  EXPECT_EQ(out, std::string("*4\r\n$3\r\nSET\r\n$1\r\nk\r\n$3\r\na\0b\r\n$0\r\n\r\n", 35));
}

// A test peer: a listening socket on 127.0.0.1 whose one connection runs `serve`.
class RespClientTest : public ::testing::Test {
 protected:
  using Serve = std::function<asio::awaitable<void>(tcp::socket&)>;

  RespClientTest() : acceptor_(ctx_, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0)) {}

  uint16_t port() const { return acceptor_.local_endpoint().port(); }

  void StartPeer(Serve serve) {
    asio::co_spawn(
        ctx_,
        [this, serve]() -> asio::awaitable<void> {
          tcp::socket socket = co_await acceptor_.async_accept(asio::use_awaitable);
          peer_ = std::make_unique<tcp::socket>(std::move(socket));
          co_await serve(*peer_);
        },
        asio::detached);
  }

  // Runs `body` as a coroutine on the test's io_context until it returns.
  void Run(std::function<asio::awaitable<void>()> body) {
    bool done = false;
    asio::co_spawn(
        ctx_,
        [&]() -> asio::awaitable<void> {
          co_await body();
          done = true;
          ctx_.stop();
        },
        asio::detached);
    ctx_.run_for(std::chrono::seconds(20));
    ASSERT_TRUE(done);
  }

  // Reads `n` bytes the client sent.
  static asio::awaitable<std::string> ReadN(tcp::socket& s, size_t n) {
    std::string buf(n, '\0');
    co_await asio::async_read(s, asio::buffer(buf), asio::use_awaitable);
    co_return buf;
  }

  asio::io_context ctx_;
  tcp::acceptor acceptor_;
  std::unique_ptr<tcp::socket> peer_;
};

TEST_F(RespClientTest, PipelinesCommandsAndReadsRepliesInOrder) {
  std::string sent;
  AppendRespCommand(sent, std::vector<std::string_view>{"PING"});
  AppendRespCommand(sent, std::vector<std::string_view>{"GET", "k"});
  StartPeer([&](tcp::socket& s) -> asio::awaitable<void> {
    std::string got = co_await ReadN(s, sent.size());
    EXPECT_EQ(got, sent);
    // The replies arrive in pieces, byte by byte at first.
    for (char c : std::string("+PONG\r\n$3")) {
      co_await asio::async_write(s, asio::buffer(&c, 1), asio::use_awaitable);
    }
    co_await asio::async_write(s, asio::buffer(std::string_view("\r\nabc\r\n")),
                               asio::use_awaitable);
  });
  Run([&]() -> asio::awaitable<void> {
    RespClient client(ctx_);
    absl::Status st = co_await client.Connect("127.0.0.1", port(), milliseconds(1000));
    EXPECT_TRUE(st.ok()) << st;
    std::vector<std::string_view> pieces = {std::string_view(sent).substr(0, 5),
                                            std::string_view(sent).substr(5)};
    st = co_await client.Write(pieces, milliseconds(1000));
    EXPECT_TRUE(st.ok()) << st;
    absl::StatusOr<RespReply> r1 = co_await client.ReadReply(milliseconds(1000));
    CO_ASSERT_OK(r1);
    EXPECT_EQ(r1->str, "PONG");
    absl::StatusOr<RespReply> r2 = co_await client.ReadReply(milliseconds(1000));
    CO_ASSERT_OK(r2);
    EXPECT_EQ(r2->type, Type::kBulkString);
    EXPECT_EQ(r2->str, "abc");
    EXPECT_EQ(client.buffered(), 0u);
  });
}

TEST_F(RespClientTest, ResolvesHostNames) {
  StartPeer([](tcp::socket& s) -> asio::awaitable<void> {
    co_await asio::async_write(s, asio::buffer(std::string_view(":7\r\n")), asio::use_awaitable);
  });
  Run([&]() -> asio::awaitable<void> {
    RespClient client(ctx_);
    absl::Status st = co_await client.Connect("localhost", port(), milliseconds(5000));
    if (!st.ok()) {
      // localhost may resolve to ::1 first on some hosts; the IPv4 peer then refuses.
      EXPECT_TRUE(absl::IsUnavailable(st)) << st;
      co_return;
    }
    absl::StatusOr<RespReply> r = co_await client.ReadReply(milliseconds(1000));
    CO_ASSERT_OK(r);
    EXPECT_EQ(r->integer, 7);
  });
}

TEST_F(RespClientTest, UnresolvableHostIsNotFound) {
  Run([&]() -> asio::awaitable<void> {
    RespClient client(ctx_);
    absl::Status st = co_await client.Connect("no-such-host.invalid", 1, milliseconds(5000));
    EXPECT_TRUE(absl::IsNotFound(st) || absl::IsDeadlineExceeded(st)) << st;
    EXPECT_FALSE(client.is_open());
  });
}

TEST_F(RespClientTest, RefusedConnectionIsUnavailable) {
  const uint16_t closed_port = port();
  acceptor_.close();
  Run([&]() -> asio::awaitable<void> {
    RespClient client(ctx_);
    absl::Status st = co_await client.Connect("127.0.0.1", closed_port, milliseconds(1000));
    EXPECT_TRUE(absl::IsUnavailable(st)) << st;
    EXPECT_FALSE(client.is_open());
  });
}

TEST_F(RespClientTest, SilentPeerTimesOut) {
  StartPeer([](tcp::socket&) -> asio::awaitable<void> { co_return; });  // never replies
  Run([&]() -> asio::awaitable<void> {
    RespClient client(ctx_);
    absl::Status st = co_await client.Connect("127.0.0.1", port(), milliseconds(1000));
    EXPECT_TRUE(st.ok()) << st;
    const auto start = std::chrono::steady_clock::now();
    absl::StatusOr<RespReply> r = co_await client.ReadReply(milliseconds(50));
    EXPECT_TRUE(absl::IsDeadlineExceeded(r.status())) << r.status();
    EXPECT_GE(std::chrono::steady_clock::now() - start, milliseconds(50));
    EXPECT_FALSE(client.is_open());
  });
}

TEST_F(RespClientTest, TimeoutCoversTheWholeReplyNotEachByte) {
  // The peer sends a byte every 20 ms: each read makes progress, the reply never completes.
  StartPeer([this](tcp::socket& s) -> asio::awaitable<void> {
    asio::steady_timer timer(ctx_);
    for (int i = 0; i < 100; ++i) {
      boost::system::error_code ec;
      co_await asio::async_write(s, asio::buffer(std::string_view("+")),
                                 asio::redirect_error(asio::use_awaitable, ec));
      if (ec) co_return;
      timer.expires_after(milliseconds(20));
      co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    }
  });
  Run([&]() -> asio::awaitable<void> {
    RespClient client(ctx_);
    EXPECT_TRUE((co_await client.Connect("127.0.0.1", port(), milliseconds(1000))).ok());
    absl::StatusOr<RespReply> r = co_await client.ReadReply(milliseconds(200));
    EXPECT_TRUE(absl::IsDeadlineExceeded(r.status())) << r.status();
  });
}

TEST_F(RespClientTest, PeerClosingIsUnavailable) {
  StartPeer([](tcp::socket& s) -> asio::awaitable<void> {
    co_await asio::async_write(s, asio::buffer(std::string_view("+PAR")), asio::use_awaitable);
    s.close();
  });
  Run([&]() -> asio::awaitable<void> {
    RespClient client(ctx_);
    EXPECT_TRUE((co_await client.Connect("127.0.0.1", port(), milliseconds(1000))).ok());
    absl::StatusOr<RespReply> r = co_await client.ReadReply(milliseconds(1000));
    EXPECT_TRUE(absl::IsUnavailable(r.status())) << r.status();
  });
}

TEST_F(RespClientTest, HugeDeclaredBulkFailsWithoutReadingIt) {
  StartPeer([](tcp::socket& s) -> asio::awaitable<void> {
    co_await asio::async_write(s, asio::buffer(std::string_view("$1073741824\r\nxxxx")),
                               asio::use_awaitable);
  });
  Run([&]() -> asio::awaitable<void> {
    RespClient client(ctx_);
    EXPECT_TRUE((co_await client.Connect("127.0.0.1", port(), milliseconds(1000))).ok());
    absl::StatusOr<RespReply> r = co_await client.ReadReply(milliseconds(1000), 1024);
    EXPECT_TRUE(absl::IsResourceExhausted(r.status())) << r.status();
    EXPECT_FALSE(client.is_open());
  });
}

TEST_F(RespClientTest, EndlessLineIsCutAtTheLimit) {
  StartPeer([](tcp::socket& s) -> asio::awaitable<void> {
    std::string chunk(4096, 'z');
    chunk[0] = '+';
    boost::system::error_code ec;
    for (int i = 0; i < 1000 && !ec; ++i) {
      co_await asio::async_write(s, asio::buffer(chunk),
                                 asio::redirect_error(asio::use_awaitable, ec));
      chunk[0] = 'z';
    }
  });
  Run([&]() -> asio::awaitable<void> {
    RespClient client(ctx_);
    EXPECT_TRUE((co_await client.Connect("127.0.0.1", port(), milliseconds(1000))).ok());
    absl::StatusOr<RespReply> r = co_await client.ReadReply(milliseconds(5000), 64 << 10);
    EXPECT_TRUE(absl::IsResourceExhausted(r.status())) << r.status();
  });
}

TEST_F(RespClientTest, GarbageIsDataLoss) {
  StartPeer([](tcp::socket& s) -> asio::awaitable<void> {
    co_await asio::async_write(s, asio::buffer(std::string_view("HTTP/1.1 400 Bad\r\n")),
                               asio::use_awaitable);
  });
  Run([&]() -> asio::awaitable<void> {
    RespClient client(ctx_);
    EXPECT_TRUE((co_await client.Connect("127.0.0.1", port(), milliseconds(1000))).ok());
    absl::StatusOr<RespReply> r = co_await client.ReadReply(milliseconds(1000));
    EXPECT_TRUE(absl::IsDataLoss(r.status())) << r.status();
  });
}

TEST_F(RespClientTest, WritesLargePayloadsToASlowReader) {
  const std::string big(8 << 20, 'p');
  StartPeer([&](tcp::socket& s) -> asio::awaitable<void> {
    std::string got = co_await ReadN(s, big.size() + 2);
    EXPECT_EQ(got.substr(0, 1), "p");
    EXPECT_EQ(got.substr(got.size() - 2), "\r\n");
    co_await asio::async_write(s, asio::buffer(std::string_view("+OK\r\n")), asio::use_awaitable);
  });
  Run([&]() -> asio::awaitable<void> {
    RespClient client(ctx_);
    EXPECT_TRUE((co_await client.Connect("127.0.0.1", port(), milliseconds(1000))).ok());
    std::vector<std::string_view> pieces = {"", big, "", "\r\n"};
    absl::Status st = co_await client.Write(pieces, milliseconds(2000));
    EXPECT_TRUE(st.ok()) << st;
    absl::StatusOr<RespReply> r = co_await client.ReadReply(milliseconds(2000));
    CO_ASSERT_OK(r);
    EXPECT_EQ(r->str, "OK");
  });
}

TEST_F(RespClientTest, WriteToAPeerThatNeverReadsTimesOut) {
  StartPeer([](tcp::socket&) -> asio::awaitable<void> { co_return; });  // never reads
  Run([&]() -> asio::awaitable<void> {
    RespClient client(ctx_);
    EXPECT_TRUE((co_await client.Connect("127.0.0.1", port(), milliseconds(1000))).ok());
    const std::string big(64 << 20, 'q');  // more than the socket buffers hold
    absl::Status st = co_await client.Write(big, milliseconds(100));
    EXPECT_TRUE(absl::IsDeadlineExceeded(st)) << st;
  });
}

}  // namespace
}  // namespace dashkv::io
