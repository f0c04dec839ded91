#include "server/cmd_args.h"

#include <cmath>
#include <cstdlib>
#include <string>

namespace dashkv {

std::optional<int64_t> ParseStrictInt(std::string_view s) {
  if (s.empty() || s.size() > 20) return std::nullopt;
  size_t i = 0;
  bool negative = false;
  if (s[0] == '-') {
    negative = true;
    i = 1;
    if (s.size() == 1) return std::nullopt;
  }
  if (s[i] == '0') {
    if (s.size() == 1) return 0;
    return std::nullopt;  // leading zero, or "-0"
  }
  uint64_t v = 0;
  for (; i < s.size(); ++i) {
    unsigned d = static_cast<unsigned char>(s[i]) - '0';
    if (d > 9) return std::nullopt;
    if (v > (UINT64_MAX - d) / 10) return std::nullopt;
    v = v * 10 + d;
  }
  if (negative) {
    if (v > static_cast<uint64_t>(INT64_MAX) + 1) return std::nullopt;
    return static_cast<int64_t>(0 - v);
  }
  if (v > static_cast<uint64_t>(INT64_MAX)) return std::nullopt;
  return static_cast<int64_t>(v);
}

int64_t ArgParser::NextInt(OpStatus on_error) {
  if (error_) return 0;
  std::string_view s = Next();
  if (error_) return 0;
  auto v = ParseStrictInt(s);
  if (!v) {
    SetError(on_error);
    return 0;
  }
  return *v;
}

double ArgParser::NextDouble(OpStatus on_error) {
  if (error_) return 0;
  std::string_view s = Next();
  if (error_) return 0;
  std::string buf(s);
  char* end = nullptr;
  double d = buf.empty() || std::isspace(static_cast<unsigned char>(buf[0]))
                 ? NAN
                 : std::strtod(buf.c_str(), &end);
  if (buf.empty() || end != buf.c_str() + buf.size() || std::isnan(d)) {
    SetError(on_error);
    return 0;
  }
  return d;
}

}  // namespace dashkv
