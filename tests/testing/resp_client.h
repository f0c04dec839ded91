// A small blocking RESP client for tests: sends commands, parses RESP2/RESP3 replies into
// RespValue trees. Test-only; no dependency on the server.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <initializer_list>
#include <ostream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace dashkv::testing {

struct RespValue {
  enum class Type { kSimple, kError, kInt, kBulk, kNull, kArray, kMap, kSet, kPush, kDouble,
                    kBool, kVerbatim, kBigNumber, kClosed };
  Type type = Type::kNull;
  std::string str;  // simple/error/bulk/double/verbatim/bignumber text
  int64_t num = 0;  // integer, bool
  std::vector<RespValue> elems;  // aggregates (maps: key, value, key, value ...)

  bool is_error() const { return type == Type::kError; }
  bool is_null() const { return type == Type::kNull; }
  bool operator==(std::string_view s) const {
    return (type == Type::kBulk || type == Type::kSimple || type == Type::kVerbatim ||
            type == Type::kDouble) && str == s;
  }
  bool operator==(int64_t v) const { return type == Type::kInt && num == v; }
  // Returns the array of strings of an aggregate of strings.
  std::vector<std::string> strings() const {
    std::vector<std::string> out;
    for (const auto& e : elems) out.push_back(e.str);
    return out;
  }
};

inline std::ostream& operator<<(std::ostream& os, const RespValue& v) {
  using T = RespValue::Type;
  switch (v.type) {
    case T::kSimple: return os << "+" << v.str;
    case T::kError: return os << "-" << v.str;
    case T::kInt: return os << ":" << v.num;
    case T::kBool: return os << "#" << v.num;
    case T::kNull: return os << "(nil)";
    case T::kClosed: return os << "(closed)";
    case T::kBulk: return os << "\"" << v.str << "\"";
    case T::kDouble: return os << "," << v.str;
    case T::kVerbatim: return os << "=" << v.str;
    case T::kBigNumber: return os << "(" << v.str;
    default: {
      os << "[";
      for (size_t i = 0; i < v.elems.size(); ++i) os << (i ? ", " : "") << v.elems[i];
      return os << "]";
    }
  }
}

class RespClient {
 public:
  explicit RespClient(uint16_t port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
      ::close(fd_);
      fd_ = -1;
    }
    int one = 1;
    setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    timeval tv{10, 0};  // a hung server fails the test instead of hanging it
    setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  }
  ~RespClient() {
    if (fd_ >= 0) ::close(fd_);
  }
  RespClient(const RespClient&) = delete;
  RespClient& operator=(const RespClient&) = delete;

  bool connected() const { return fd_ >= 0; }

  // Sends one command as a multibulk and returns its reply.
  RespValue Run(std::initializer_list<std::string_view> args) {
    return Run(std::vector<std::string_view>(args));
  }
  RespValue Run(const std::vector<std::string_view>& args) {
    SendRaw(Encode(args));
    return Read();
  }
  RespValue Run(const std::vector<std::string>& args) {
    return Run(std::vector<std::string_view>(args.begin(), args.end()));
  }

  static std::string Encode(const std::vector<std::string_view>& args) {
    std::string s = "*" + std::to_string(args.size()) + "\r\n";
    for (auto a : args) {
      s += "$" + std::to_string(a.size()) + "\r\n";
      s.append(a);
      s += "\r\n";
    }
    return s;
  }

  void SendRaw(std::string_view bytes) {
    while (!bytes.empty()) {
      ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
      if (n <= 0) return;
      bytes.remove_prefix(n);
    }
  }

  // Reads one reply (kClosed when the server closed the connection).
  RespValue Read() {
    RespValue v;
    std::string line;
    if (!ReadLine(&line)) {
      v.type = RespValue::Type::kClosed;
      return v;
    }
    char t = line[0];
    std::string rest = line.substr(1);
    using T = RespValue::Type;
    switch (t) {
      case '+': v.type = T::kSimple; v.str = rest; break;
      case '-': v.type = T::kError; v.str = rest; break;
      case ':': v.type = T::kInt; v.num = std::stoll(rest); break;
      case '_': v.type = T::kNull; break;
      case '#': v.type = T::kBool; v.num = rest == "t"; break;
      case ',': v.type = T::kDouble; v.str = rest; break;
      case '(': v.type = T::kBigNumber; v.str = rest; break;
      case '$':
      case '=': {
        int64_t n = std::stoll(rest);
        if (n < 0) {
          v.type = T::kNull;
          break;
        }
        v.type = t == '$' ? T::kBulk : T::kVerbatim;
        v.str = ReadExact(n + 2).substr(0, n);
        if (t == '=' && v.str.size() >= 4) v.str = v.str.substr(4);
        break;
      }
      case '*':
      case '~':
      case '>':
      case '%': {
        int64_t n = std::stoll(rest);
        if (n < 0) {
          v.type = T::kNull;
          break;
        }
        v.type = t == '*' ? T::kArray : t == '~' ? T::kSet : t == '>' ? T::kPush : T::kMap;
        if (t == '%') n *= 2;
        for (int64_t i = 0; i < n; ++i) v.elems.push_back(Read());
        break;
      }
      default:
        v.type = T::kError;
        v.str = "client: bad reply line: " + line;
    }
    return v;
  }

 private:
  bool Fill() {
    char buf[65536];
    ssize_t n = ::recv(fd_, buf, sizeof(buf), 0);
    if (n <= 0) return false;
    in_.append(buf, n);
    return true;
  }
  bool ReadLine(std::string* line) {
    size_t pos;
    while ((pos = in_.find("\r\n")) == std::string::npos) {
      if (!Fill()) return false;
    }
    *line = in_.substr(0, pos);
    in_.erase(0, pos + 2);
    return true;
  }
  std::string ReadExact(size_t n) {
    while (in_.size() < n) {
      if (!Fill()) break;
    }
    std::string s = in_.substr(0, n);
    in_.erase(0, std::min(n, in_.size()));
    return s;
  }

  int fd_ = -1;
  std::string in_;
};

}  // namespace dashkv::testing
