// HttpResponse: what a Service answers to an HTTP request on the RESP port, and its encoding as
// an HTTP/1.1 message (status line, Date, Content-Type, Content-Length, Connection, the extra
// headers, the body).
// Thread: engine-local.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace dashkv::io {

struct HttpResponse {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
  // Further header fields, e.g. {"Allow", "GET, HEAD"} or {"WWW-Authenticate", ...}.
  // REQUIRES: no CR or LF in names and values.
  std::vector<std::pair<std::string, std::string>> headers;
};

// Returns the reason phrase of `status` ("OK", "Not Found", ...; "Unknown" for others).
std::string_view HttpReason(int status);

// Appends `response` as an HTTP/1.1 message to `out`. `head_only`: a HEAD request (the headers
// announce the body's length, the body is left out). `keep_alive`: the connection stays open
// ("Connection: keep-alive", which also answers an HTTP/1.0 client that asked for it), else
// "Connection: close".
void AppendHttpResponse(const HttpResponse& response, bool head_only, bool keep_alive,
                        std::string* out);

}  // namespace dashkv::io
