#include "server/cmd_args.h"

#include <cmath>
#include <cstdlib>
#include <string>

namespace dashkv {

int64_t ArgParser::NextInt(OpStatus on_error) {
  if (error_) return 0;
  std::string_view s = Next();
  if (error_) return 0;
  auto v = ParseInt64(s);
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
