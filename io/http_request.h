// HTTP/1.x on the RESP port: recognising an HTTP request line among the first bytes of a
// connection (SniffHttp), and parsing request heads incrementally within a fixed bound
// (HttpRequestParser). Only what a GET-only endpoint such as /metrics needs: request bodies are
// never read. Knows nothing of paths or of the server.
// Thread: engine-local (one parser per HTTP connection).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace dashkv::io {

// The most bytes a request head (request line, header lines and the blank line) may take. A
// longer head is refused (431) and the connection closed, so a client sending an endless header
// never holds more than this much of our memory.
inline constexpr size_t kMaxHttpHead = 8 * 1024;

enum class HttpSniff : uint8_t {
  kHttp,      // the first line is an HTTP/1.x request line
  kNotHttp,   // it cannot be one: RESP (or an inline command)
  kNeedMore,  // the first line is incomplete and may still become one
};

// Decides whether `input`, the first bytes a client sent on a fresh connection, starts with an
// HTTP/1.x request line: a method token (letters), one space, a request target without spaces,
// one space, "HTTP/1." and one digit, then CRLF or LF. Anything else is RESP, including inline
// commands such as "GET key\r\n" or "GET /a/b\r\n" (no version). Decides at the first byte for
// a RESP array ('*'), so a RESP client pays one comparison per connection. A first line that
// passes kMaxHttpHead bytes without ending is not HTTP (the RESP parser then applies its own
// inline limit).
HttpSniff SniffHttp(std::string_view input);

// One request head; the views point into the buffer given to HttpRequestParser::Parse and stay
// valid while those bytes do.
struct HttpRequest {
  std::string_view method;  // "GET", "HEAD", ... (case-sensitive, as RFC 9110)
  std::string_view target;  // as sent: origin form "/metrics?x" or absolute form "http://h/m"
  std::string_view path;    // the target's path: without query, scheme or authority
  int minor_version = 1;    // the x of HTTP/1.x
  // The client wants the connection kept open after the response: HTTP/1.1 unless it sent
  // "Connection: close", HTTP/1.0 only with "Connection: keep-alive".
  bool keep_alive = true;
  // The request announces a body (Content-Length above 0, or any Transfer-Encoding).
  bool has_body = false;
  uint64_t content_length = 0;
  std::string_view authorization;  // the Authorization header's value (empty: none)
};

// Design
//  Parse() is called with the unconsumed input each time more bytes arrive. It looks for the end
//  of the head (an empty line) from where the previous call stopped, so a client that sends one
//  byte at a time costs O(total bytes), and parses the head only once it is complete; the
//  request line is checked as soon as it is complete, so that what is no request (RESP sent on
//  an HTTP connection) is refused at once rather than waited on. Empty
//  lines before a request line are skipped (RFC 9112 section 2.2). Lines may end in CRLF or in
//  a bare LF. Refused, with the status to answer (the connection is closed after it):
//  a head longer than kMaxHttpHead (431), a malformed request line or header line, a header
//  line folded onto the next (obs-fold), a missing or repeated Host in HTTP/1.1, an invalid or
//  conflicting Content-Length (400), a version other than HTTP/1.x (505).
class HttpRequestParser {
 public:
  enum class Status : uint8_t {
    kRequest,   // request() holds a complete head of consumed() bytes
    kNeedMore,  // the head is incomplete: call again with the same bytes and more
    kError,     // malformed or too large: answer error_status() and close
  };

  // Parses the next request head at the start of `input`. REQUIRES: `input` begins with the
  // bytes given to the previous kNeedMore call.
  Status Parse(std::string_view input);

  // Valid after kRequest.
  const HttpRequest& request() const { return request_; }
  // Valid after kRequest: the bytes the head took (including skipped empty lines).
  size_t consumed() const { return consumed_; }
  // Valid after kError: 400, 431 or 505.
  int error_status() const { return error_status_; }

 private:
  Status Fail(int status);
  // Parses the request line `line` (without its line end) into request_; returns 0, or the
  // status that refuses it (400, 505).
  int ParseRequestLine(std::string_view line);
  // Parses the complete head `head` (request line through the empty line).
  Status ParseHead(std::string_view head);
  // Applies one header field to request_; returns false when it makes the request invalid.
  bool ApplyHeader(std::string_view name, std::string_view value);

  HttpRequest request_;
  size_t consumed_ = 0;
  size_t scanned_ = 0;  // bytes of the pending head already searched for its end
  bool line_checked_ = false;  // the pending head's request line is complete and valid
  int error_status_ = 0;
  bool seen_host_ = false;
  bool seen_length_ = false;
};

}  // namespace dashkv::io
