// txload: a MULTI/EXEC load generator for bench/e2e/transactions.py.
//
// Each of --connections connections sends --depth transactions back to back (pipelined), reads
// and checks every reply of the batch, then sends the next batch, until --transactions have been
// sent in all. One transaction is seven commands over random keys of a --keys keyspace:
//
//   MULTI
//   INCR ctr:<r1>              INCR ctr:<r2>
//   SET key:<r3> <16..64 bytes> GET key:<r4>
//   LPUSH list:<r5> <16..64 bytes>
//   EXEC
//
// Keys use redis-benchmark's `-r` format (key:%012d), so a keyspace prefilled for redis-benchmark
// makes every GET hit. Every reply is checked: +OK, five +QUEUED, and an EXEC array of exactly 5
// elements of the expected types (integer, integer, +OK, bulk or null, integer); any other reply
// ends the run with exit status 1. A transaction counts as one operation. Latency is measured
// like redis-benchmark's: from writing a batch until its last reply, given to every transaction
// of the batch.
//
// Prints one line: `transactions=N wall_s=S tx_per_s=R avg_ms=A p50_ms=P p99_ms=Q`.
// Single-threaded: epoll over non-blocking POSIX sockets. Plain C++20 and POSIX, no dependencies.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <string_view>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

constexpr int kCommandsPerTx = 7;  // MULTI, 5 queued commands, EXEC
constexpr int kQueued = 5;

struct Options {
  std::string host = "127.0.0.1";
  int port = 6379;
  int connections = 50;
  int depth = 1;
  long long transactions = 100000;
  long long keys = 100000;
  unsigned seed = 1;
};

[[noreturn]] void Die(const std::string& msg) {
  std::fprintf(stderr, "txload: %s\n", msg.c_str());
  std::exit(1);
}

// Appends one command in RESP to `out`.
void AppendCommand(std::string& out, std::initializer_list<std::string_view> args) {
  out += '*';
  out += std::to_string(args.size());
  out += "\r\n";
  for (std::string_view a : args) {
    out += '$';
    out += std::to_string(a.size());
    out += "\r\n";
    out.append(a);
    out += "\r\n";
  }
}

// Reply parsing over a buffer that may end in the middle of a reply.
enum class Parse { kOk, kIncomplete, kBad };

// Sets `next` past the reply that starts at `p` and `kind` to its first byte.
Parse SkipReply(const char* p, const char* end, const char** next, char* kind) {
  const char* eol = static_cast<const char*>(memchr(p, '\r', end - p));
  if (eol == nullptr || eol + 1 >= end) return Parse::kIncomplete;
  *kind = *p;
  const char* after = eol + 2;
  long long n = 0;
  switch (*p) {
    case '+': case '-': case ':': case '_': case ',': case '#':
      *next = after;
      return Parse::kOk;
    case '$':
    case '*':
      if (std::from_chars(p + 1, eol, n).ec != std::errc()) return Parse::kBad;
      break;
    default:
      return Parse::kBad;
  }
  if (*p == '$') {
    if (n < 0) {
      *next = after;
      return Parse::kOk;
    }
    if (end - after < n + 2) return Parse::kIncomplete;
    *next = after + n + 2;
    return Parse::kOk;
  }
  for (long long i = 0; i < n; ++i) {
    char k;
    Parse r = SkipReply(after, end, &after, &k);
    if (r != Parse::kOk) return r;
  }
  *next = after;
  return Parse::kOk;
}

// Checks the EXEC reply at [p, next): *5 of integer, integer, +OK, bulk/null, integer.
bool ExecReplyOk(const char* p, const char* next) {
  static constexpr char kKinds[kQueued] = {':', ':', '+', '$', ':'};
  if (std::string_view(p, std::min<size_t>(4, next - p)) != "*5\r\n") return false;
  p += 4;
  for (char want : kKinds) {
    char kind;
    if (SkipReply(p, next, &p, &kind) != Parse::kOk || kind != want) return false;
  }
  return p == next;
}

struct Conn {
  int fd = -1;
  std::mt19937_64 rng;
  std::string out;        // the batch being written
  size_t out_off = 0;
  bool want_out = false;  // EPOLLOUT registered
  std::string in;         // bytes read, not yet parsed
  int batch = 0;          // transactions in the current batch
  long long replies_left = 0;  // replies still expected for the batch
  Clock::time_point sent;
};

class Load {
 public:
  explicit Load(const Options& o) : o_(o) {
    values_.reserve(10);
    for (int i = 0; i < 10; ++i) values_.emplace_back(16 + i * 48 / 9, 'a' + i);  // 16..64
  }

  void Run() {
    epfd_ = epoll_create1(0);
    if (epfd_ < 0) Die("epoll_create1 failed");
    conns_.resize(o_.connections);
    for (int i = 0; i < o_.connections; ++i) Connect(conns_[i], i);
    latencies_us_.reserve(o_.transactions);
    start_ = Clock::now();
    for (Conn& c : conns_) StartBatch(c);
    std::vector<epoll_event> events(o_.connections);
    while (done_ < o_.transactions) {
      int n = epoll_wait(epfd_, events.data(), events.size(), 10000);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) Die("no reply from the server for 10 s");
      for (int i = 0; i < n; ++i) {
        Conn& c = conns_[events[i].data.u32];
        if (events[i].events & EPOLLOUT) Flush(c);
        if (events[i].events & (EPOLLIN | EPOLLERR | EPOLLHUP)) Read(c);
      }
    }
    const double wall = std::chrono::duration<double>(Clock::now() - start_).count();
    Report(wall);
  }

 private:
  void Connect(Conn& c, int index) {
    c.rng.seed(o_.seed * 1000003ULL + index);
    c.fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(o_.port);
    if (c.fd < 0 || inet_pton(AF_INET, o_.host.c_str(), &addr.sin_addr) != 1) Die("bad --host");
    if (connect(c.fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
      Die("connect " + o_.host + ":" + std::to_string(o_.port) + ": " + strerror(errno));
    }
    int one = 1;
    setsockopt(c.fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    if (fcntl(c.fd, F_SETFL, fcntl(c.fd, F_GETFL) | O_NONBLOCK) != 0) Die("fcntl O_NONBLOCK");
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u32 = index;
    if (epoll_ctl(epfd_, EPOLL_CTL_ADD, c.fd, &ev) != 0) Die("epoll_ctl ADD failed");
  }

  std::string Key(Conn& c, const char* prefix) {
    char buf[40];
    int n = std::snprintf(buf, sizeof(buf), "%s%012lld", prefix,
                          static_cast<long long>(c.rng() % o_.keys));
    return std::string(buf, n);
  }

  void StartBatch(Conn& c) {
    const long long left = o_.transactions - issued_;
    if (left <= 0) return;
    c.batch = static_cast<int>(std::min<long long>(o_.depth, left));
    issued_ += c.batch;
    c.replies_left = static_cast<long long>(c.batch) * kCommandsPerTx;
    c.out.clear();
    c.out_off = 0;
    for (int t = 0; t < c.batch; ++t) {
      const std::string& v1 = values_[c.rng() % values_.size()];
      const std::string& v2 = values_[c.rng() % values_.size()];
      AppendCommand(c.out, {"MULTI"});
      AppendCommand(c.out, {"INCR", Key(c, "ctr:")});
      AppendCommand(c.out, {"INCR", Key(c, "ctr:")});
      AppendCommand(c.out, {"SET", Key(c, "key:"), v1});
      AppendCommand(c.out, {"GET", Key(c, "key:")});
      AppendCommand(c.out, {"LPUSH", Key(c, "list:"), v2});
      AppendCommand(c.out, {"EXEC"});
    }
    c.sent = Clock::now();
    Flush(c);
  }

  void Flush(Conn& c) {
    while (c.out_off < c.out.size()) {
      ssize_t n = send(c.fd, c.out.data() + c.out_off, c.out.size() - c.out_off, MSG_NOSIGNAL);
      if (n > 0) {
        c.out_off += n;
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
      Die(std::string("send: ") + strerror(errno));
    }
    const bool want_out = c.out_off < c.out.size();
    if (want_out == c.want_out) return;  // epoll_ctl only when the interest changes
    c.want_out = want_out;
    epoll_event ev{};
    ev.events = EPOLLIN | (want_out ? uint32_t{EPOLLOUT} : 0u);
    ev.data.u32 = static_cast<uint32_t>(&c - conns_.data());
    if (epoll_ctl(epfd_, EPOLL_CTL_MOD, c.fd, &ev) != 0) Die("epoll_ctl MOD failed");
  }

  void Read(Conn& c) {
    char buf[1 << 16];
    for (;;) {
      ssize_t n = recv(c.fd, buf, sizeof(buf), 0);
      if (n > 0) {
        c.in.append(buf, n);
        if (n < static_cast<ssize_t>(sizeof(buf))) break;
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
      Die(n == 0 ? "server closed the connection" : std::string("recv: ") + strerror(errno));
    }
    Consume(c);
  }

  // Parses and checks every complete reply in c.in; starts the next batch when one completes.
  void Consume(Conn& c) {
    const char* p = c.in.data();
    const char* end = p + c.in.size();
    while (c.replies_left > 0) {
      const char* next;
      char kind;
      Parse r = SkipReply(p, end, &next, &kind);
      if (r == Parse::kIncomplete) break;
      const long long index = c.batch * kCommandsPerTx - c.replies_left;
      const int step = static_cast<int>(index % kCommandsPerTx);
      std::string_view reply(p, r == Parse::kOk ? next - p : std::min<ptrdiff_t>(80, end - p));
      bool ok = r == Parse::kOk;
      if (ok && step == 0) ok = reply == "+OK\r\n";
      else if (ok && step <= kQueued) ok = reply == "+QUEUED\r\n";
      else if (ok) ok = ExecReplyOk(p, next);
      if (!ok) {
        Die("unexpected reply to command " + std::to_string(step) + " of a transaction: " +
            std::string(reply.substr(0, 200)));
      }
      p = next;
      if (--c.replies_left == 0) FinishBatch(c);
    }
    c.in.erase(0, p - c.in.data());
    if (c.replies_left == 0 && !c.in.empty()) Die("reply bytes beyond the expected replies");
  }

  void FinishBatch(Conn& c) {
    const auto us = std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - c.sent);
    latencies_us_.insert(latencies_us_.end(), c.batch, static_cast<uint32_t>(us.count()));
    done_ += c.batch;
    StartBatch(c);
  }

  void Report(double wall) {
    std::sort(latencies_us_.begin(), latencies_us_.end());
    auto pct = [&](double q) {
      size_t i = static_cast<size_t>(q * (latencies_us_.size() - 1) + 0.5);
      return latencies_us_[i] / 1000.0;
    };
    double sum = 0;
    for (uint32_t l : latencies_us_) sum += l;
    std::printf("transactions=%lld wall_s=%.3f tx_per_s=%.1f avg_ms=%.3f p50_ms=%.3f p99_ms=%.3f\n",
                done_, wall, done_ / wall, sum / latencies_us_.size() / 1000.0, pct(0.50),
                pct(0.99));
  }

  const Options o_;
  std::vector<std::string> values_;
  std::vector<Conn> conns_;
  std::vector<uint32_t> latencies_us_;  // one entry per transaction
  int epfd_ = -1;
  long long issued_ = 0;
  long long done_ = 0;
  Clock::time_point start_;
};

}  // namespace

int main(int argc, char** argv) {
  Options o;
  auto usage = [] {
    Die("usage: txload [--host H] [--port P] [--connections C] [--depth D] "
        "[--transactions N] [--keys K] [--seed S]");
  };
  for (int i = 1; i < argc; ++i) {
    std::string_view flag = argv[i];
    if (i + 1 >= argc) usage();
    const char* v = argv[++i];
    if (flag == "--host") o.host = v;
    else if (flag == "--port") o.port = std::atoi(v);
    else if (flag == "--connections") o.connections = std::atoi(v);
    else if (flag == "--depth") o.depth = std::atoi(v);
    else if (flag == "--transactions") o.transactions = std::atoll(v);
    else if (flag == "--keys") o.keys = std::atoll(v);
    else if (flag == "--seed") o.seed = static_cast<unsigned>(std::atoll(v));
    else usage();
  }
  if (o.connections < 1 || o.depth < 1 || o.transactions < 1 || o.keys < 1 || o.port < 1) usage();
  Load(o).Run();
  return 0;
}
