#include "io/http_response.h"

#include <ctime>
#include <string>

namespace dashkv::io {

std::string_view HttpReason(int status) {
  switch (status) {
    case 200: return "OK";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 413: return "Content Too Large";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 503: return "Service Unavailable";
    case 505: return "HTTP Version Not Supported";
    default: return "Unknown";
  }
}

void AppendHttpResponse(const HttpResponse& response, bool head_only, bool keep_alive,
                        std::string* out) {
  // IMF-fixdate (RFC 9110 section 5.6.7), e.g. "Sun, 06 Nov 1994 08:49:37 GMT".
  char date[64];
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  const size_t date_len = std::strftime(date, sizeof(date), "%a, %d %b %Y %H:%M:%S GMT", &tm);
  // Debian's abseil cannot take std::string_view pieces: appended one by one.
  out->append("HTTP/1.1 ").append(std::to_string(response.status)).append(" ");
  out->append(HttpReason(response.status)).append("\r\nDate: ").append(date, date_len);
  out->append("\r\nContent-Type: ").append(response.content_type);
  out->append("\r\nContent-Length: ").append(std::to_string(response.body.size()));
  out->append("\r\nConnection: ").append(keep_alive ? "keep-alive" : "close").append("\r\n");
  for (const auto& [name, value] : response.headers) {
    out->append(name).append(": ").append(value).append("\r\n");
  }
  out->append("\r\n");
  if (!head_only) out->append(response.body);
}

}  // namespace dashkv::io
