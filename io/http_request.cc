#include "io/http_request.h"

namespace dashkv::io {
namespace {

// Debian's abseil has its own absl::string_view (no conversion from std::string_view): these
// few helpers stand in for absl's.
bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    char x = a[i], y = b[i];
    if (x >= 'A' && x <= 'Z') x = static_cast<char>(x + 32);
    if (y >= 'A' && y <= 'Z') y = static_cast<char>(y + 32);
    if (x != y) return false;
  }
  return true;
}

// Calls fn(piece) for each piece of `s` between `sep` bytes.
template <typename Fn>
void ForEachPiece(std::string_view s, char sep, Fn fn) {
  for (;;) {
    const size_t at = s.find(sep);
    fn(s.substr(0, at));
    if (at == std::string_view::npos) return;
    s.remove_prefix(at + 1);
  }
}

// RFC 9110 tchar: the bytes of a token (method, header name).
bool IsTokenChar(char c) {
  if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) return true;
  switch (c) {
    case '!': case '#': case '$': case '%': case '&': case '\'': case '*': case '+': case '-':
    case '.': case '^': case '_': case '`': case '|': case '~':
      return true;
    default:
      return false;
  }
}

// A byte of a request target: visible ASCII (RFC 9112 request-target, no spaces or controls).
bool IsTargetChar(char c) { return c > 0x20 && c < 0x7f; }

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// Strips leading and trailing spaces and tabs (optional whitespace around a field value).
std::string_view TrimOws(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// The path of a request target: origin form "/p?q" -> "/p"; absolute form "http://h:1/p?q" ->
// "/p" ("http://h" -> "/"); asterisk form "*" -> "*". Empty for anything else.
std::string_view PathOf(std::string_view target) {
  if (target == "*") return target;
  if (!target.empty() && target.front() != '/') {
    size_t scheme_end = target.find("://");
    if (scheme_end == std::string_view::npos) return {};
    std::string_view scheme = target.substr(0, scheme_end);
    if (!EqualsIgnoreCase(scheme, "http") && !EqualsIgnoreCase(scheme, "https")) {
      return {};
    }
    target.remove_prefix(scheme_end + 3);
    size_t slash = target.find('/');
    if (slash == std::string_view::npos) return "/";
    target.remove_prefix(slash);
  }
  return target.substr(0, target.find_first_of("?#"));
}

}  // namespace

HttpSniff SniffHttp(std::string_view input) {
  size_t i = 0;
  const size_t n = input.size();
  // Method: a token. '*' starts every RESP array (and no method).
  if (n == 0) return HttpSniff::kNeedMore;
  if (input[0] == '*' || !IsTokenChar(input[0])) return HttpSniff::kNotHttp;
  while (i < n && IsTokenChar(input[i])) ++i;
  if (i < n && input[i++] != ' ') return HttpSniff::kNotHttp;
  // Target: at least one visible byte, then one space.
  const size_t target_start = i;
  while (i < n && IsTargetChar(input[i])) ++i;
  if (i < n && (i == target_start || input[i++] != ' ')) return HttpSniff::kNotHttp;
  // "HTTP/1." and a digit, then CRLF or LF.
  constexpr std::string_view kVersion = "HTTP/1.";
  for (size_t k = 0; k < kVersion.size() && i < n; ++k, ++i) {
    if (input[i] != kVersion[k]) return HttpSniff::kNotHttp;
  }
  if (i < n && !IsDigit(input[i++])) return HttpSniff::kNotHttp;
  if (i < n && input[i] == '\r') ++i;
  if (i < n) return input[i] == '\n' ? HttpSniff::kHttp : HttpSniff::kNotHttp;
  return n > kMaxHttpHead ? HttpSniff::kNotHttp : HttpSniff::kNeedMore;
}

HttpRequestParser::Status HttpRequestParser::Fail(int status) {
  error_status_ = status;
  scanned_ = 0;
  line_checked_ = false;
  return Status::kError;
}

HttpRequestParser::Status HttpRequestParser::Parse(std::string_view input) {
  // Empty lines before the request line are skipped (they count toward the size bound).
  size_t start = 0;
  while (start < input.size() && (input[start] == '\n' || input[start] == '\r')) {
    if (input[start] == '\r' && start + 1 < input.size() && input[start + 1] != '\n') {
      return Fail(400);  // a bare CR
    }
    ++start;
  }
  // The request line is judged once complete (before the rest of the head arrives).
  if (!line_checked_) {
    const size_t eol = input.find('\n', start);
    if (eol != std::string_view::npos) {
      if (int status = ParseRequestLine(input.substr(start, eol - start)); status != 0) {
        return Fail(status);
      }
      line_checked_ = true;
    }
  }
  // The head ends at the first empty line: "\n\n" or "\n\r\n".
  size_t i = std::max(scanned_, start);
  for (; i < input.size(); ++i) {
    if (input[i] != '\n' || i == start) continue;
    const bool empty_line = input[i - 1] == '\n' ||
                            (input[i - 1] == '\r' && i - 1 > start && input[i - 2] == '\n');
    if (!empty_line) continue;
    if (i + 1 > kMaxHttpHead) return Fail(431);
    scanned_ = 0;
    line_checked_ = false;
    consumed_ = i + 1;
    return ParseHead(input.substr(start, i + 1 - start));
  }
  scanned_ = i;
  if (input.size() > kMaxHttpHead) return Fail(431);
  return Status::kNeedMore;
}

int HttpRequestParser::ParseRequestLine(std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  // method SP target SP HTTP/d.d
  const size_t sp1 = line.find(' ');
  const size_t sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos) return 400;
  request_.method = line.substr(0, sp1);
  request_.target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  const std::string_view version = line.substr(sp2 + 1);
  if (request_.method.empty() || request_.target.empty()) return 400;
  for (char c : request_.method) {
    if (!IsTokenChar(c)) return 400;
  }
  for (char c : request_.target) {
    if (!IsTargetChar(c)) return 400;
  }
  if (version.size() != 8 || !version.starts_with("HTTP/") || !IsDigit(version[5]) ||
      version[6] != '.' || !IsDigit(version[7])) {
    return 400;
  }
  if (version[5] != '1') return 505;
  request_.minor_version = version[7] - '0';
  request_.path = PathOf(request_.target);
  return request_.path.empty() ? 400 : 0;
}

HttpRequestParser::Status HttpRequestParser::ParseHead(std::string_view head) {
  request_ = HttpRequest{};
  seen_host_ = false;
  seen_length_ = false;
  bool first = true;
  bool close = false, keep_alive = false;
  // The head ends with its blank line: every line before it ends in '\n'.
  head.remove_suffix(1);
  while (!head.empty()) {
    const size_t eol = head.find('\n');
    std::string_view line = head.substr(0, eol);
    head.remove_prefix(eol == std::string_view::npos ? head.size() : eol + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) break;  // the blank line that ends the head
    for (char c : line) {
      // Controls other than tab never appear in a request line or a field (a bare CR included).
      if ((static_cast<unsigned char>(c) < 0x20 && c != '\t') || c == 0x7f) return Fail(400);
    }
    if (first) {
      first = false;
      if (int status = ParseRequestLine(line); status != 0) return Fail(status);
      continue;
    }
    if (line.front() == ' ' || line.front() == '\t') return Fail(400);  // obs-fold
    size_t colon = line.find(':');
    if (colon == std::string_view::npos || colon == 0) return Fail(400);
    std::string_view name = line.substr(0, colon);
    for (char c : name) {
      if (!IsTokenChar(c)) return Fail(400);  // also whitespace before the colon
    }
    std::string_view value = TrimOws(line.substr(colon + 1));
    if (EqualsIgnoreCase(name, "connection")) {
      ForEachPiece(value, ',', [&](std::string_view token) {
        token = TrimOws(token);
        if (EqualsIgnoreCase(token, "close")) close = true;
        if (EqualsIgnoreCase(token, "keep-alive")) keep_alive = true;
      });
    } else if (!ApplyHeader(name, value)) {
      return Fail(400);
    }
  }
  if (request_.minor_version >= 1 && !seen_host_) return Fail(400);
  request_.keep_alive = !close && (request_.minor_version >= 1 || keep_alive);
  return Status::kRequest;
}

bool HttpRequestParser::ApplyHeader(std::string_view name, std::string_view value) {
  if (EqualsIgnoreCase(name, "host")) {
    if (seen_host_) return false;
    seen_host_ = true;
  } else if (EqualsIgnoreCase(name, "content-length")) {
    if (value.empty()) return false;
    uint64_t length = 0;
    for (char c : value) {
      if (!IsDigit(c)) return false;
      // Saturates: a length beyond 2^64 is refused like any other body.
      const uint64_t digit = static_cast<uint64_t>(c - '0');
      length = length > (UINT64_MAX - digit) / 10 ? UINT64_MAX : length * 10 + digit;
    }
    if (seen_length_ && length != request_.content_length) return false;
    seen_length_ = true;
    request_.content_length = length;
    request_.has_body |= length > 0;
  } else if (EqualsIgnoreCase(name, "transfer-encoding")) {
    request_.has_body = true;
  } else if (EqualsIgnoreCase(name, "authorization")) {
    if (!request_.authorization.empty()) return false;
    request_.authorization = value;
  }
  return true;
}

}  // namespace dashkv::io
