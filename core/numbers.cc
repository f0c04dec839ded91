#include "core/numbers.h"

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "core/str_util.h"

namespace dashkv {

namespace {

inline bool IsCSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

// Applies Redis's acceptance rules to a strtod/strtold result: the whole input consumed, no
// leading space, no NaN, no overflow to infinity and no underflow to zero.
template <typename T>
bool AcceptFloat(std::string_view s, const char* begin, const char* end, T value, int err) {
  if (s.empty() || IsCSpace(s[0])) return false;
  if (static_cast<size_t>(end - begin) != s.size()) return false;
  if (std::isnan(value)) return false;
  if (err == ERANGE && (std::isinf(value) || value == 0)) return false;
  return true;
}

constexpr char kDigitPairs[] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

// Writes the digits of `u` right-aligned ending at `end`; returns the first written position.
inline char* WriteDigitsBackwards(uint64_t u, char* end) {
  while (u >= 100) {
    const unsigned pair = static_cast<unsigned>(u % 100) * 2;
    u /= 100;
    *--end = kDigitPairs[pair + 1];
    *--end = kDigitPairs[pair];
  }
  if (u >= 10) {
    const unsigned pair = static_cast<unsigned>(u) * 2;
    *--end = kDigitPairs[pair + 1];
    *--end = kDigitPairs[pair];
  } else {
    *--end = static_cast<char>('0' + u);
  }
  return end;
}

}  // namespace

std::optional<double> ParseDouble(std::string_view s) {
  if (s.empty() || IsCSpace(s[0])) return std::nullopt;
  NulTerminated cs(s);
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(cs.c_str(), &end);
  if (!AcceptFloat(s, cs.c_str(), end, v, errno)) return std::nullopt;
  return v;
}

std::optional<long double> ParseLongDouble(std::string_view s) {
  if (s.empty() || s.size() >= kLongDoubleMaxChars || IsCSpace(s[0])) return std::nullopt;
  NulTerminated cs(s);
  char* end = nullptr;
  errno = 0;
  const long double v = std::strtold(cs.c_str(), &end);
  if (!AcceptFloat(s, cs.c_str(), end, v, errno)) return std::nullopt;
  return v;
}

std::string FormatLongDouble(long double v) {
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  // The largest long double has 4933 integer digits: 4933 + '-' + '.' + 17 decimals fits.
  char buf[kLongDoubleMaxChars + 32];
  int len = std::snprintf(buf, sizeof(buf), "%.17Lf", v);
  if (len <= 0 || static_cast<size_t>(len) >= sizeof(buf)) return std::string();
  std::string_view out(buf, static_cast<size_t>(len));
  if (out.find('.') != std::string_view::npos) {
    while (out.back() == '0') out.remove_suffix(1);
    if (out.back() == '.') out.remove_suffix(1);
  }
  if (out == "-0") return "0";
  return std::string(out);
}

std::string FormatDouble(double v) {
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  const int len = std::snprintf(buf, sizeof(buf), "%.17g", v);
  return std::string(buf, static_cast<size_t>(len));
}

std::string FormatDoubleShortest(double v) {
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  if (std::isnan(v)) return "nan";
  char buf[64];
  const auto res = std::to_chars(buf, buf + sizeof(buf), v);
  return std::string(buf, res.ptr);
}

size_t FormatInt64(int64_t v, char* buf) {
  char tmp[kInt64MaxChars];
  char* const end = tmp + sizeof(tmp);
  // Magnitude via unsigned arithmetic so INT64_MIN is well-defined.
  const uint64_t mag = v < 0 ? 0 - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
  char* start = WriteDigitsBackwards(mag, end);
  if (v < 0) *--start = '-';
  const size_t len = static_cast<size_t>(end - start);
  std::memcpy(buf, start, len);
  return len;
}

std::string Int64ToString(int64_t v) {
  char buf[kInt64MaxChars];
  return std::string(buf, FormatInt64(v, buf));
}

}  // namespace dashkv
