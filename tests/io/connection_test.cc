#include "io/connection.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>

#include <cerrno>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <string>
#include <vector>

#include "io/engine_pool.h"
#include "io/listener.h"

namespace dashkv::io {
namespace {

namespace asio = boost::asio;

// A tiny Service: PING, ECHO x, LEN x (length of x), HOP (a round trip to another engine),
// PUSHLATER n (replies +OK, then another engine sends back n out-of-band frames, as pub/sub
// does), AUTH (marks the client authenticated), MAXQBUF (the largest input buffer allocated by a
// connection of this engine), QUIT. Records the size of every batch and registers every
// connection (registered() counts them, engine-local lists for MAXQBUF).
class TestService : public Service {
 public:
  explicit TestService(EnginePool& pool) : pool_(pool) {}

  std::unique_ptr<ConnectionState> OnConnect(Connection& conn) override {
    connects_.fetch_add(1);
    std::lock_guard<std::mutex> lock(mu_);
    conns_.push_back(&conn);
    return std::make_unique<ConnectionState>();
  }

  asio::awaitable<void> Dispatch(Connection& conn, ConnectionState&,
                                 std::span<const CmdArgs> batch, ReplyBuilder& out) override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      batches_.push_back(batch.size());
    }
    for (const CmdArgs& args : batch) {
      std::string name(args[0]);
      for (char& c : name) c = static_cast<char>(toupper(c));
      if (name == "PING") {
        out.SendSimpleString("PONG");
      } else if (name == "ECHO" && args.size() == 2) {
        out.SendBulk(args[1]);
      } else if (name == "LEN" && args.size() == 2) {
        out.SendLong(static_cast<int64_t>(args[1].size()));
      } else if (name == "HOP") {
        unsigned other = (Engine::Current()->index() + 1) % pool_.size();
        unsigned where = co_await pool_.Await(other, [] { return Engine::Current()->index(); });
        out.SendLong(where);
      } else if (name == "PUSHLATER" && args.size() == 2) {
        out.SendOk();
        int n = std::stoi(std::string(args[1]));
        unsigned home = Engine::Current()->index();
        unsigned other = (home + 1) % pool_.size();
        Connection* c = &conn;
        // From another engine, hop back to the connection's engine to push (SendAsync is
        // engine-local); runs after this batch's reply was written, while the client is idle.
        pool_.Post(other, [this, c, home, n] {
          pool_.Post(home, [c, n] {
            for (int i = 0; i < n; ++i) {
              c->SendAsync(">1\r\n$1\r\n" + std::to_string(i % 10) + "\r\n");
            }
          });
        });
      } else if (name == "AUTH") {
        conn.set_authenticated(true);
        out.SendOk();
      } else if (name == "MAXQBUF") {
        size_t most = 0;
        std::lock_guard<std::mutex> lock(mu_);
        for (Connection* c : conns_) {
          if (&c->engine() == &conn.engine()) most = std::max(most, c->query_buffer_capacity());
        }
        out.SendLong(static_cast<int64_t>(most));
      } else if (name == "QUIT") {
        out.SendOk();
        conn.RequestClose();
      } else {
        out.SendError("ERR unknown command");
      }
    }
  }

  void OnDisconnect(Connection& conn, ConnectionState&) override {
    disconnects_.fetch_add(1);
    std::lock_guard<std::mutex> lock(mu_);
    conns_.erase(std::find(conns_.begin(), conns_.end(), &conn));
  }
  int connects() const { return connects_.load(); }

  std::vector<size_t> batches() {
    std::lock_guard<std::mutex> lock(mu_);
    return batches_;
  }
  int disconnects() const { return disconnects_.load(); }

 private:
  EnginePool& pool_;
  std::mutex mu_;
  std::vector<size_t> batches_;
  std::vector<Connection*> conns_;
  std::atomic<int> connects_{0}, disconnects_{0};
};

// A blocking loopback client.
class Client {
 public:
  explicit Client(uint16_t port) {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    int one = 1;
    setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  }
  ~Client() { close(fd_); }

  void Send(std::string_view data) {
    while (!data.empty()) {
      ssize_t n = send(fd_, data.data(), data.size(), MSG_NOSIGNAL);
      ASSERT_GT(n, 0);
      data.remove_prefix(static_cast<size_t>(n));
    }
  }
  // Sends what it can; returns false once the peer has closed (a send fails).
  bool TrySend(std::string_view data) {
    while (!data.empty()) {
      ssize_t n = send(fd_, data.data(), data.size(), MSG_NOSIGNAL);
      if (n <= 0) return false;
      data.remove_prefix(static_cast<size_t>(n));
    }
    return true;
  }
  // Reads exactly n bytes (fewer on EOF).
  std::string Read(size_t n) {
    std::string out;
    char buf[65536];
    while (out.size() < n) {
      ssize_t got = recv(fd_, buf, std::min(sizeof(buf), n - out.size()), 0);
      if (got <= 0) break;
      out.append(buf, static_cast<size_t>(got));
    }
    return out;
  }
  // Returns true if the server closed the connection (EOF) with nothing more to read.
  // Whether the server closed the connection (a reset counts: it closed with input unread).
  bool AtEof() {
    char c;
    ssize_t n = recv(fd_, &c, 1, 0);
    return n == 0 || (n < 0 && errno == ECONNRESET);
  }

 private:
  int fd_ = -1;
};

class ConnectionTest : public ::testing::Test {
 protected:
  ConnectionTest() : pool_(2, EngineOptions{.spin_us = 0}), service_(pool_) {
    pool_.Start();
    ListenerOptions options;
    options.bind = "127.0.0.1";
    options.port = 0;
    limits_.max_query_buffer = 64 * 1024 * 1024;
    options.conn.limits = &limits_;
    listener_ = std::make_unique<Listener>(pool_, service_, options);
    absl::Status st = listener_->Start();
    EXPECT_TRUE(st.ok()) << st;
  }
  ~ConnectionTest() override {
    listener_->Stop();
    pool_.Stop();
    pool_.Join();
  }

  ClientLimits limits_;
  EnginePool pool_;
  TestService service_;
  std::unique_ptr<Listener> listener_;
};

// Runs a listener on one engine (so that MAXQBUF sees every connection) with its own limits.
class OneEngineTest : public ::testing::Test {
 protected:
  OneEngineTest() : pool_(1, EngineOptions{.spin_us = 0}), service_(pool_) {
    pool_.Start();
    listener_ = std::make_unique<Listener>(
        pool_, service_, ListenerOptions{.bind = "127.0.0.1", .port = 0, .conn = {&limits_}});
    absl::Status st = listener_->Start();
    EXPECT_TRUE(st.ok()) << st;
  }
  ~OneEngineTest() override {
    listener_->Stop();
    pool_.Stop();
    pool_.Join();
  }
  int64_t MaxQueryBuffer() {
    Client admin(listener_->port());
    admin.Send("MAXQBUF\r\n");
    std::string line;
    while (line.empty() || line.back() != '\n') line += admin.Read(1);
    return std::stoll(line.substr(1));
  }

  ClientLimits limits_;
  EnginePool pool_;
  TestService service_;
  std::unique_ptr<Listener> listener_;
};

// A declared bulk length reserves nothing by itself: the buffer follows the bytes that arrive.
TEST_F(OneEngineTest, DeclaredBulkLengthReservesOnlyWhatArrives) {
  Client c(listener_->port());
  c.Send("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$524288000\r\n");
  c.Send(std::string(100 * 1024, 'x'));
  // Wait (bounded) until the server has read the bytes, seen through the buffer it holds.
  int64_t cap = 0;
  for (int i = 0; i < 2000 && cap < 100 * 1024; ++i) cap = MaxQueryBuffer();
  EXPECT_GE(cap, 100 * 1024);
  EXPECT_LE(cap, 512 * 1024);  // before: 500 MB at once
  // The bulk still completes, and a big one that really arrives is served.
  const size_t kSize = 4 * 1024 * 1024;
  std::string req = "*2\r\n$3\r\nLEN\r\n$" + std::to_string(kSize) + "\r\n" +
                    std::string(kSize, 'y') + "\r\n";
  Client d(listener_->port());
  d.Send(req);
  EXPECT_EQ(d.Read(10), ":4194304\r\n");
}

TEST_F(OneEngineTest, LimitsChangedAtRunTimeApplyToOpenConnections) {
  Client c(listener_->port());
  c.Send("PING\r\n");
  EXPECT_EQ(c.Read(7), "+PONG\r\n");
  limits_.max_bulk_len = 1000;
  c.Send("*2\r\n$4\r\nECHO\r\n$1001\r\n");
  EXPECT_EQ(c.Read(44), "-ERR Protocol error: invalid bulk length\r\n");
  EXPECT_TRUE(c.AtEof());
  limits_.max_bulk_len = 512LL << 20;
  Client d(listener_->port());
  d.Send("PING\r\n");
  EXPECT_EQ(d.Read(7), "+PONG\r\n");
  limits_.max_query_buffer = 64 * 1024;
  d.Send("*2\r\n$4\r\nECHO\r\n$1000000\r\n");
  std::string chunk(32 * 1024, 'x');
  // The server closes once the buffer passes 64 KiB: a later send may already fail.
  for (int i = 0; i < 4 && d.TrySend(chunk); ++i) {
  }
  EXPECT_TRUE(d.AtEof());
}

TEST_F(OneEngineTest, UnauthenticatedLimits) {
  limits_.auth_required = true;
  {
    Client c(listener_->port());
    c.Send("*10\r\n$4\r\nPING\r\n");  // ten elements are allowed
    for (int i = 0; i < 9; ++i) c.Send("$1\r\nx\r\n");
    EXPECT_EQ(c.Read(7), "+PONG\r\n");
    c.Send("*11\r\n");
    EXPECT_EQ(c.Read(57), "-ERR Protocol error: unauthenticated multibulk length\r\n");
    EXPECT_TRUE(c.AtEof());
  }
  {
    Client c(listener_->port());
    c.Send("*2\r\n$4\r\nECHO\r\n$16384\r\n" + std::string(16384, 'a') + "\r\n");
    EXPECT_EQ(c.Read(8), "$16384\r\n");
    c.Read(16384 + 2);
    c.Send("*2\r\n$4\r\nECHO\r\n$16385\r\n");
    EXPECT_EQ(c.Read(52), "-ERR Protocol error: unauthenticated bulk length\r\n");
    EXPECT_TRUE(c.AtEof());
  }
  {
    // AUTH lifts the limits for the very next command of the same pipeline.
    Client c(listener_->port());
    std::string req = "AUTH\r\n*11\r\n";
    for (int i = 0; i < 11; ++i) req += "$4\r\nPING\r\n";
    c.Send(req);
    EXPECT_EQ(c.Read(5), "+OK\r\n");
    EXPECT_EQ(c.Read(7), "+PONG\r\n");
  }
  limits_.auth_required = false;  // no password: no limits for anyone
  Client c(listener_->port());
  c.Send("*11\r\n");
  for (int i = 0; i < 11; ++i) c.Send("$4\r\nPING\r\n");
  EXPECT_EQ(c.Read(7), "+PONG\r\n");
}

TEST_F(OneEngineTest, MaxClientsRefusesWithRedisError) {
  limits_.maxclients = 2;
  Client a(listener_->port()), b(listener_->port());
  a.Send("PING\r\n");
  b.Send("PING\r\n");
  EXPECT_EQ(a.Read(7), "+PONG\r\n");
  EXPECT_EQ(b.Read(7), "+PONG\r\n");
  {
    Client c(listener_->port());
    EXPECT_EQ(c.Read(36), "-ERR max number of clients reached\r\n");
    EXPECT_TRUE(c.AtEof());
  }
  EXPECT_EQ(listener_->total_refused(), 1u);
  limits_.maxclients = 3;
  Client d(listener_->port());
  d.Send("PING\r\n");
  EXPECT_EQ(d.Read(7), "+PONG\r\n");
}

TEST_F(ConnectionTest, PingPong) {
  Client c(listener_->port());
  c.Send("*1\r\n$4\r\nPING\r\n");
  EXPECT_EQ(c.Read(7), "+PONG\r\n");
  c.Send("PING\r\n");  // inline
  EXPECT_EQ(c.Read(7), "+PONG\r\n");
}

TEST_F(ConnectionTest, PipelineIsOneBatchWithRepliesInOrder) {
  Client c(listener_->port());
  std::string req, want;
  for (int i = 0; i < 50; ++i) {
    std::string v = std::to_string(i);
    req += "*2\r\n$4\r\nECHO\r\n$" + std::to_string(v.size()) + "\r\n" + v + "\r\n";
    want += "$" + std::to_string(v.size()) + "\r\n" + v + "\r\n";
  }
  c.Send(req);
  EXPECT_EQ(c.Read(want.size()), want);
  std::vector<size_t> batches = service_.batches();
  size_t total = 0;
  for (size_t b : batches) total += b;
  EXPECT_EQ(total, 50u);
  // One send of < 16 KiB on loopback arrives in one read: one Dispatch.
  EXPECT_EQ(batches.size(), 1u);
}

TEST_F(ConnectionTest, CommandsSplitAtEveryByte) {
  Client c(listener_->port());
  const std::string req = "*2\r\n$4\r\nECHO\r\n$5\r\nhello\r\nPING\r\n*1\r\n$4\r\nping\r\n";
  const std::string want = "$5\r\nhello\r\n+PONG\r\n+PONG\r\n";
  for (size_t split = 1; split < req.size(); ++split) {
    c.Send(req.substr(0, split));
    usleep(200);  // let the server see the partial command (correctness holds either way)
    c.Send(req.substr(split));
    ASSERT_EQ(c.Read(want.size()), want) << "split at " << split;
  }
}

TEST_F(ConnectionTest, ByteByByte) {
  Client c(listener_->port());
  const std::string req = "*2\r\n$4\r\nECHO\r\n$3\r\nabc\r\nNOSUCH\r\n";
  for (char ch : req) c.Send(std::string_view(&ch, 1));
  EXPECT_EQ(c.Read(31), "$3\r\nabc\r\n-ERR unknown command\r\n");
}

TEST_F(ConnectionTest, ProtocolErrorAfterRepliesThenClose) {
  Client c(listener_->port());
  c.Send("PING\r\n*1\r\n$4\r\nPING\r\n*1\r\n$x\r\n");
  const std::string want = "+PONG\r\n+PONG\r\n-ERR Protocol error: invalid bulk length\r\n";
  EXPECT_EQ(c.Read(want.size()), want);
  EXPECT_TRUE(c.AtEof());
}

TEST_F(ConnectionTest, SendAsyncReachesAnIdleClientInOrder) {
  Client c(listener_->port());
  c.Send("PUSHLATER 3\r\n");
  EXPECT_EQ(c.Read(5 + 3 * 11),
            "+OK\r\n>1\r\n$1\r\n0\r\n>1\r\n$1\r\n1\r\n>1\r\n$1\r\n2\r\n");
  // Replies of later commands follow the pushes; the connection keeps working.
  c.Send("PUSHLATER 1\r\n");
  EXPECT_EQ(c.Read(5 + 11), "+OK\r\n>1\r\n$1\r\n0\r\n");
  c.Send("PING\r\n");
  EXPECT_EQ(c.Read(7), "+PONG\r\n");
}

TEST_F(ConnectionTest, QuitRepliesThenClosesAndSkipsLaterCommands) {
  Client c(listener_->port());
  c.Send("PING\r\nQUIT\r\nPING\r\n");
  EXPECT_EQ(c.Read(12), "+PONG\r\n+OK\r\n");
  EXPECT_TRUE(c.AtEof());
}

TEST_F(ConnectionTest, HopInsideDispatch) {
  Client c(listener_->port());
  c.Send("HOP\r\nHOP\r\nPING\r\n");
  std::string got = c.Read(15);
  EXPECT_EQ(got.size(), 15u);
  EXPECT_EQ(got.substr(8), "+PONG\r\n");
  EXPECT_EQ(got.substr(0, 4), got.substr(4, 4));  // both hops answer the same engine
}

TEST_F(ConnectionTest, BigBulk) {
  Client c(listener_->port());
  const size_t kSize = 8 * 1024 * 1024;
  std::string value(kSize, 'v');
  std::string req = "*2\r\n$4\r\nECHO\r\n$" + std::to_string(kSize) + "\r\n" + value + "\r\n";
  req += "*2\r\n$3\r\nLEN\r\n$" + std::to_string(kSize) + "\r\n" + value + "\r\n";
  c.Send(req);
  std::string want = "$" + std::to_string(kSize) + "\r\n" + value + "\r\n:" +
                     std::to_string(kSize) + "\r\n";
  std::string got = c.Read(want.size());
  EXPECT_EQ(got.size(), want.size());
  EXPECT_TRUE(got == want);
  c.Send("PING\r\n");
  EXPECT_EQ(c.Read(7), "+PONG\r\n");
}

// A client may send far more than the socket buffers hold before it reads any reply (as Redis
// allows): the server must keep reading while its replies wait, not deadlock on its write.
TEST_F(ConnectionTest, KeepsReadingWhileTheClientDoesNotRead) {
  Client c(listener_->port());
  const size_t kSize = 8 * 1024 * 1024;
  const int kCommands = 6;
  std::string value(kSize, 'w');
  std::string one = "*2\r\n$4\r\nECHO\r\n$" + std::to_string(kSize) + "\r\n" + value + "\r\n";
  std::string req;
  for (int i = 0; i < kCommands; ++i) req += one;
  c.Send(req);  // 48 MB: completes only if the server reads while its replies are pending
  std::string reply = "$" + std::to_string(kSize) + "\r\n" + value + "\r\n";
  for (int i = 0; i < kCommands; ++i) EXPECT_TRUE(c.Read(reply.size()) == reply) << i;
  c.Send("PING\r\n");
  EXPECT_EQ(c.Read(7), "+PONG\r\n");
}

TEST_F(ConnectionTest, ManyClientsCountedAndDisconnected) {
  {
    std::vector<std::unique_ptr<Client>> clients;
    for (int i = 0; i < 20; ++i) clients.push_back(std::make_unique<Client>(listener_->port()));
    for (auto& c : clients) c->Send("PING\r\n");
    for (auto& c : clients) EXPECT_EQ(c->Read(7), "+PONG\r\n");
    EXPECT_EQ(listener_->total_accepted(), 20u);
    EXPECT_EQ(listener_->live_connections(), 20u);
  }
  // Closed clients: every connection ends with OnDisconnect (wait without sleeping for time).
  pool_.RunOnAllBlocking([](unsigned) {});
  for (int i = 0; i < 2000 && service_.disconnects() < 20; ++i) usleep(1000);
  EXPECT_EQ(service_.disconnects(), 20);
}

TEST(ListenerTest, PortInUseIsAnError) {
  EnginePool pool(1);
  pool.Start();
  TestService service(pool);
  Listener first(pool, service, {.bind = "127.0.0.1", .port = 0, .conn = {}});
  ASSERT_TRUE(first.Start().ok());
  Listener second(pool, service, {.bind = "127.0.0.1", .port = first.port(), .conn = {}});
  EXPECT_FALSE(second.Start().ok());
  Listener bad(pool, service, {.bind = "not-an-ip", .port = 0, .conn = {}});
  EXPECT_FALSE(bad.Start().ok());
  first.Stop();
  second.Stop();
  bad.Stop();
  pool.Stop();
  pool.Join();
}

TEST(ListenerTest, QueryBufferLimitCloses) {
  EnginePool pool(1);
  pool.Start();
  TestService service(pool);
  ClientLimits limits;
  limits.max_query_buffer = 64 * 1024;
  ListenerOptions options{.bind = "127.0.0.1", .port = 0, .conn = {&limits}};
  Listener listener(pool, service, options);
  ASSERT_TRUE(listener.Start().ok());
  {
    Client c(listener.port());
    c.Send("*2\r\n$4\r\nECHO\r\n$1000000\r\n");
    std::string chunk(32 * 1024, 'x');
    for (int i = 0; i < 4; ++i) c.Send(chunk);
    EXPECT_TRUE(c.AtEof());
  }
  listener.Stop();
  pool.Stop();
  pool.Join();
}

}  // namespace
}  // namespace dashkv::io
