#include "core/score.h"

#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "core/base/logging.h"
#include "core/str_util.h"

namespace dashkv {

namespace {


// Reads one end of a score range: strtod up to the first NUL, must consume everything up to it.
bool ParseRangeEnd(std::string_view s, double* value, bool* exclusive) {
  *exclusive = !s.empty() && s[0] == '(';
  if (*exclusive) s.remove_prefix(1);
  NulTerminated c(s);
  char* end = nullptr;
  double v = std::strtod(c.c_str(), &end);
  if (*end != '\0' || std::isnan(v)) return false;
  *value = v;
  return true;
}

int CompareBytes(std::string_view a, std::string_view b) {
  size_t n = a.size() < b.size() ? a.size() : b.size();
  int c = n == 0 ? 0 : std::memcmp(a.data(), b.data(), n);
  if (c != 0) return c;
  return a.size() < b.size() ? -1 : (a.size() > b.size() ? 1 : 0);
}

}  // namespace

std::optional<double> ParseScore(std::string_view s) {
  if (s.empty() || std::isspace(static_cast<unsigned char>(s[0]))) return std::nullopt;
  NulTerminated c(s);
  char* end = nullptr;
  errno = 0;
  double v = std::strtod(c.c_str(), &end);
  if (static_cast<size_t>(end - c.c_str()) != s.size()) return std::nullopt;
  if (errno == ERANGE && (std::isinf(v) || v == 0)) return std::nullopt;
  if (std::isnan(v)) return std::nullopt;
  return v;
}

std::optional<ScoreRange> ParseScoreRange(std::string_view min, std::string_view max) {
  ScoreRange r;
  if (!ParseRangeEnd(min, &r.min, &r.min_exclusive)) return std::nullopt;
  if (!ParseRangeEnd(max, &r.max, &r.max_exclusive)) return std::nullopt;
  return r;
}

int CompareToLexBound(std::string_view m, const LexBound& b) {
  switch (b.kind) {
    case LexBound::Kind::kNegInf:
      return 1;
    case LexBound::Kind::kPosInf:
      return -1;
    default:
      return CompareBytes(m, b.value);
  }
}

bool LexRange::IsEmpty() const {
  using Kind = LexBound::Kind;
  if (min.kind == Kind::kPosInf || max.kind == Kind::kNegInf) return true;
  if (min.kind == Kind::kNegInf || max.kind == Kind::kPosInf) return false;
  int c = CompareBytes(min.value, max.value);
  return c > 0 || (c == 0 && (min.kind == Kind::kExclusive || max.kind == Kind::kExclusive));
}

std::optional<LexBound> ParseLexBound(std::string_view s) {
  if (s.empty()) return std::nullopt;
  LexBound b;
  switch (s[0]) {
    case '+':
    case '-':
      // Redis tests the byte after the sign against NUL: "+" alone (or "+\0...") is infinity.
      if (s.size() > 1 && s[1] != '\0') return std::nullopt;
      b.kind = s[0] == '+' ? LexBound::Kind::kPosInf : LexBound::Kind::kNegInf;
      return b;
    case '[':
    case '(':
      b.kind = s[0] == '[' ? LexBound::Kind::kInclusive : LexBound::Kind::kExclusive;
      b.value.assign(s.data() + 1, s.size() - 1);
      return b;
    default:
      return std::nullopt;
  }
}

std::optional<LexRange> ParseLexRange(std::string_view min, std::string_view max) {
  auto lo = ParseLexBound(min);
  if (!lo) return std::nullopt;
  auto hi = ParseLexBound(max);
  if (!hi) return std::nullopt;
  return LexRange{std::move(*lo), std::move(*hi)};
}

size_t FormatScoreRedis70(double v, char* buf) {
  if (std::isinf(v)) {
    std::string_view t = v > 0 ? "inf" : "-inf";
    std::memcpy(buf, t.data(), t.size());
    return t.size();
  }
  // std::to_chars(general, 17) is specified as printf("%.17g") in the "C" locale.
  auto res = std::to_chars(buf, buf + kMaxScoreChars, v, std::chars_format::general, 17);
  DCHECK(res.ec == std::errc());
  return static_cast<size_t>(res.ptr - buf);
}

std::string FormatScoreRedis70(double v) {
  char buf[kMaxScoreChars];
  return std::string(buf, FormatScoreRedis70(v, buf));
}

size_t FormatScoreShortest(double v, char* buf) {
  if (std::isinf(v) || std::isnan(v)) return FormatScoreRedis70(v, buf);
  // Shortest round-trip digits in scientific form: "[-]d[.ddd]e[+-]XX".
  char sci[kMaxScoreChars];
  auto res = std::to_chars(sci, sci + sizeof(sci), v, std::chars_format::scientific);
  DCHECK(res.ec == std::errc());
  std::string_view s(sci, static_cast<size_t>(res.ptr - sci));
  size_t e_pos = s.find('e');
  int exp = 0;
  std::from_chars(s.data() + e_pos + 1 + (s[e_pos + 1] == '+'), s.data() + s.size(), exp);
  char digits[20] = {};
  size_t nd = 0;
  bool negative = s[0] == '-';
  for (size_t i = negative ? 1 : 0; i < e_pos; ++i) {
    if (s[i] != '.') digits[nd++] = s[i];
  }
  char* out = buf;
  if (negative) *out++ = '-';
  if (exp < -4 || exp >= 17) {  // "%g" with precision 17 switches to exponent notation here.
    *out++ = digits[0];
    if (nd > 1) {
      *out++ = '.';
      std::memcpy(out, digits + 1, nd - 1);
      out += nd - 1;
    }
    *out++ = 'e';
    *out++ = exp < 0 ? '-' : '+';
    int a = exp < 0 ? -exp : exp;
    if (a < 10) *out++ = '0';
    out = std::to_chars(out, buf + kMaxScoreChars, a).ptr;
  } else if (exp < 0) {  // 0.000ddd
    *out++ = '0';
    *out++ = '.';
    for (int i = -1; i > exp; --i) *out++ = '0';
    std::memcpy(out, digits, nd);
    out += nd;
  } else {  // ddd[.ddd], zero-padded when the digits end before the decimal point
    size_t int_digits = static_cast<size_t>(exp) + 1;
    for (size_t i = 0; i < int_digits; ++i) *out++ = i < nd ? digits[i] : '0';
    if (nd > int_digits) {
      *out++ = '.';
      std::memcpy(out, digits + int_digits, nd - int_digits);
      out += nd - int_digits;
    }
  }
  return static_cast<size_t>(out - buf);
}

std::string FormatScoreShortest(double v) {
  char buf[kMaxScoreChars];
  return std::string(buf, FormatScoreShortest(v, buf));
}

}  // namespace dashkv
