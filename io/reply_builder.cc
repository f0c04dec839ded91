#include "io/reply_builder.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>

namespace dashkv::io {
namespace {

// "00".."99": two digits per division.
constexpr char kDigitPairs[] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

// Holds "<type><int>\r\n" or "$<len>\r\n".
constexpr size_t kHeaderMax = 1 + 20 + 2;
// "%.17g" of a double is at most 24 chars ("-2.2250738585072014e-308").
constexpr size_t kDoubleMax = 32;

// Writes the decimal digits of `v` ending just before `end`; returns the first written char.
char* FormatUnsignedBackwards(uint64_t v, char* end) {
  char* p = end;
  while (v >= 100) {
    const unsigned i = static_cast<unsigned>(v % 100) * 2;
    v /= 100;
    p -= 2;
    std::memcpy(p, kDigitPairs + i, 2);
  }
  if (v >= 10) {
    p -= 2;
    std::memcpy(p, kDigitPairs + v * 2, 2);
  } else {
    *--p = static_cast<char>('0' + v);
  }
  return p;
}

// Formats "<type><n>\r\n" at the end of `out` (kHeaderMax bytes); returns its first byte.
char* FormatHeader(char type, int64_t n, char* out_end) {
  char* p = out_end;
  *--p = '\n';
  *--p = '\r';
  const uint64_t magnitude = n < 0 ? 0 - static_cast<uint64_t>(n) : static_cast<uint64_t>(n);
  p = FormatUnsignedBackwards(magnitude, p);
  if (n < 0) *--p = '-';
  *--p = type;
  return p;
}

size_t FormatDoubleTo(double v, char* out) {
  if (std::isinf(v)) {
    if (v > 0) {
      std::memcpy(out, "inf", 3);
      return 3;
    }
    std::memcpy(out, "-inf", 4);
    return 4;
  }
  // to_chars with a precision is specified to match printf's "%.17g", and is several times faster.
  const auto res = std::to_chars(out, out + kDoubleMax, v, std::chars_format::general, 17);
  return res.ec == std::errc() ? static_cast<size_t>(res.ptr - out) : 0;
}

}  // namespace

std::string FormatDouble(double v) {
  char tmp[kDoubleMax];
  return std::string(tmp, FormatDoubleTo(v, tmp));
}

void ReplyBuilder::AppendHeader(char type, int64_t n) {
  char tmp[kHeaderMax];
  char* end = tmp + kHeaderMax;
  char* p = FormatHeader(type, n, end);
  buf_.append(p, end - p);
}

void ReplyBuilder::SendSimpleString(std::string_view s) {
  buf_.push_back('+');
  buf_.append(s);
  buf_.append("\r\n", 2);
}

void ReplyBuilder::SendError(std::string_view msg) {
  ++error_count_;
  std::string_view code = msg.substr(msg.empty() || msg[0] != '-' ? 0 : 1);
  code = code.substr(0, std::min(code.find(' '), sizeof(last_error_code_)));
  std::memcpy(last_error_code_, code.data(), code.size());
  last_error_code_size_ = static_cast<uint8_t>(code.size());
  if (msg.empty() || msg[0] != '-') buf_.push_back('-');
  const size_t start = buf_.size();
  buf_.append(msg);
  for (size_t i = start; i < buf_.size(); ++i) {
    if (buf_[i] == '\r' || buf_[i] == '\n') buf_[i] = ' ';
  }
  buf_.append("\r\n", 2);
}

void ReplyBuilder::SendLong(int64_t v) { AppendHeader(':', v); }

void ReplyBuilder::SendDouble(double v) {
  char tmp[kDoubleMax];
  SendDoubleText(std::string_view(tmp, FormatDoubleTo(v, tmp)));
}

void ReplyBuilder::SendDoubleText(std::string_view text) {
  if (!resp3()) {
    SendBulk(text);
    return;
  }
  buf_.push_back(',');
  buf_.append(text);
  buf_.append("\r\n", 2);
}

void ReplyBuilder::SendBulk(std::string_view s) {
  char tmp[kHeaderMax];
  char* end = tmp + kHeaderMax;
  char* p = FormatHeader('$', static_cast<int64_t>(s.size()), end);
  const size_t header_len = end - p;
  buf_.reserve(buf_.size() + header_len + s.size() + 2);
  buf_.append(p, header_len);
  buf_.append(s);
  buf_.append("\r\n", 2);
}

void ReplyBuilder::SendNull() {
  if (resp3()) {
    buf_.append("_\r\n", 3);
  } else {
    buf_.append("$-1\r\n", 5);
  }
}

void ReplyBuilder::SendNullArray() {
  if (resp3()) {
    buf_.append("_\r\n", 3);
  } else {
    buf_.append("*-1\r\n", 5);
  }
}

void ReplyBuilder::SendBool(bool b) {
  if (resp3()) {
    buf_.append(b ? "#t\r\n" : "#f\r\n", 4);
  } else {
    buf_.append(b ? ":1\r\n" : ":0\r\n", 4);
  }
}

void ReplyBuilder::SendVerbatim(std::string_view s, std::string_view format) {
  if (!resp3()) {
    SendBulk(s);
    return;
  }
  AppendHeader('=', static_cast<int64_t>(s.size() + format.size() + 1));
  buf_.append(format);
  buf_.push_back(':');
  buf_.append(s);
  buf_.append("\r\n", 2);
}

void ReplyBuilder::SendBigNumber(std::string_view digits) {
  if (!resp3()) {
    SendBulk(digits);
    return;
  }
  buf_.push_back('(');
  buf_.append(digits);
  buf_.append("\r\n", 2);
}

void ReplyBuilder::StartArray(size_t n) { AppendHeader('*', static_cast<int64_t>(n)); }

void ReplyBuilder::StartMap(size_t n) {
  if (resp3()) {
    AppendHeader('%', static_cast<int64_t>(n));
  } else {
    AppendHeader('*', static_cast<int64_t>(2 * n));
  }
}

void ReplyBuilder::StartSet(size_t n) {
  AppendHeader(resp3() ? '~' : '*', static_cast<int64_t>(n));
}

void ReplyBuilder::StartPush(size_t n) {
  AppendHeader(resp3() ? '>' : '*', static_cast<int64_t>(n));
}

}  // namespace dashkv::io
