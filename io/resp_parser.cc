#include "io/resp_parser.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <optional>

#include "core/base/parse_int.h"

namespace dashkv::io {
namespace {

constexpr std::string_view kInvalidMultibulkLen = "Protocol error: invalid multibulk length";
constexpr std::string_view kInvalidBulkLen = "Protocol error: invalid bulk length";
constexpr std::string_view kTooBigMbulkCount = "Protocol error: too big mbulk count string";
constexpr std::string_view kTooBigBulkCount = "Protocol error: too big bulk count string";
constexpr std::string_view kTooBigInline = "Protocol error: too big inline request";
constexpr std::string_view kUnauthMultibulkLen =
    "Protocol error: unauthenticated multibulk length";
constexpr std::string_view kUnauthBulkLen = "Protocol error: unauthenticated bulk length";
constexpr std::string_view kUnbalancedQuotes = "Protocol error: unbalanced quotes in request";

// Redis keeps the multibulk count in an int.
constexpr int64_t kMaxMultibulkCount = std::numeric_limits<int32_t>::max();

inline bool IsDigit(char c) { return static_cast<unsigned char>(c - '0') < 10; }

// isspace() in the C locale.
inline bool IsSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

// Bytes that end an unquoted inline argument (sdssplitargs); NUL never reaches here.
inline bool IsArgEnd(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

inline bool IsHexDigit(char c) {
  return IsDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

inline int HexValue(char c) {
  if (IsDigit(c)) return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return c - 'A' + 10;
}

}  // namespace

void RespParser::Reset() {
  ClearCommandState();
  args_.clear();
  consumed_ = 0;
  bytes_needed_ = 0;
  error_ = {};
}

void RespParser::ClearCommandState() {
  multibulk_len_ = -1;
  bulk_len_ = -1;
  pos_ = 0;
  scan_pos_ = 0;
  offsets_.clear();
}

RespParser::Status RespParser::Fail(std::string_view error) {
  ClearCommandState();
  args_.clear();
  consumed_ = 0;
  error_ = error;
  return Status::kError;
}

RespParser::Status RespParser::NeedMore(size_t needed) {
  bytes_needed_ = needed;
  return Status::kNeedMore;
}

RespParser::Status RespParser::Parse(std::string_view buf) {
  if (multibulk_len_ > 0) return ParseMultiBulk(buf);
  if (buf.empty()) return NeedMore(1);
  if (buf[0] == '*') return ParseMultiBulk(buf);
  return ParseInline(buf);
}

inline RespParser::LineResult RespParser::ParseLengthLine(std::string_view buf, size_t start,
                                                          char type, int64_t* value,
                                                          size_t* next) {
  const char* base = buf.data();
  const size_t size = buf.size();
  // Fast path, first look at this line: the digits run straight into "\r<any>".
  if (scan_pos_ <= start && start < size && base[start] == type) {
    size_t q = start + 1;
    if (q < size && base[q] == '-') ++q;
    while (q < size && IsDigit(base[q])) ++q;
    if (q + 1 < size && base[q] == '\r') {
      *next = q + 2;
      const std::optional<int64_t> v =
          ParseInt64(std::string_view(base + start + 1, q - start - 1));
      if (!v) return LineResult::kInvalid;
      *value = *v;
      return LineResult::kOk;
    }
  }
  // Slow path: find the CR (resuming where an earlier call stopped), then validate.
  size_t from = std::max(scan_pos_, start);
  const void* cr = std::memchr(base + from, '\r', size - from);
  if (cr == nullptr) {
    scan_pos_ = size;
    return size - start > limits_.max_inline_len ? LineResult::kTooBig : LineResult::kNeedMore;
  }
  size_t q = static_cast<const char*>(cr) - base;
  scan_pos_ = q;
  if (q + 1 >= size) return LineResult::kNeedMore;  // Redis waits for the byte after CR
  if (base[start] != type) return LineResult::kBadType;
  *next = q + 2;
  const std::optional<int64_t> v = ParseInt64(std::string_view(base + start + 1, q - start - 1));
  if (!v) return LineResult::kInvalid;
  *value = *v;
  return LineResult::kOk;
}

RespParser::Status RespParser::ParseMultiBulk(std::string_view buf) {
  const char* base = buf.data();
  const size_t size = buf.size();
  if (multibulk_len_ < 0) {
    int64_t count = 0;
    size_t next = 0;
    switch (ParseLengthLine(buf, 0, '*', &count, &next)) {
      case LineResult::kOk:
        break;
      case LineResult::kNeedMore:
        return NeedMore(size + 1);
      case LineResult::kTooBig:
        return Fail(kTooBigMbulkCount);
      case LineResult::kInvalid:
      case LineResult::kBadType:
        return Fail(kInvalidMultibulkLen);
    }
    if (count > kMaxMultibulkCount || count > limits_.max_multibulk_len) {
      return Fail(kInvalidMultibulkLen);
    }
    if (limits_.unauthenticated && count > RespLimits::kUnauthMaxMultibulk) {
      return Fail(kUnauthMultibulkLen);
    }
    if (count <= 0) {
      ClearCommandState();
      args_.clear();
      consumed_ = next;
      return Status::kEmpty;
    }
    multibulk_len_ = count;
    bulk_len_ = -1;
    pos_ = next;
    offsets_.clear();
  }

  size_t pos = pos_;
  const size_t count = static_cast<size_t>(multibulk_len_);
  while (offsets_.size() < count) {
    if (bulk_len_ < 0) {
      int64_t len = 0;
      size_t next = 0;
      switch (ParseLengthLine(buf, pos, '$', &len, &next)) {
        case LineResult::kOk:
          break;
        case LineResult::kNeedMore:
          pos_ = pos;
          return NeedMore(size + 1);
        case LineResult::kTooBig:
          return Fail(kTooBigBulkCount);
        case LineResult::kBadType:
          error_buf_ = "Protocol error: expected '$', got '";
          error_buf_.push_back(base[pos]);
          error_buf_.push_back('\'');
          return Fail(error_buf_);
        case LineResult::kInvalid:
          return Fail(kInvalidBulkLen);
      }
      if (len < 0 || len > limits_.max_bulk_len) return Fail(kInvalidBulkLen);
      if (limits_.unauthenticated && len > RespLimits::kUnauthMaxBulk) {
        return Fail(kUnauthBulkLen);
      }
      bulk_len_ = len;
      pos = next;
    }
    // The two bytes after the data are skipped unchecked, as Redis does.
    const size_t end = pos + static_cast<size_t>(bulk_len_) + 2;
    if (end > size) {
      pos_ = pos;
      return NeedMore(end);
    }
    offsets_.push_back({pos, static_cast<size_t>(bulk_len_)});
    pos = end;
    bulk_len_ = -1;
  }

  args_.resize(count);
  for (size_t i = 0; i < count; ++i) args_[i] = std::string_view(base + offsets_[i].offset,
                                                                 offsets_[i].len);
  ClearCommandState();
  consumed_ = pos;
  return Status::kCommand;
}

RespParser::Status RespParser::ParseInline(std::string_view buf) {
  const char* base = buf.data();
  const size_t size = buf.size();
  const size_t from = std::min(scan_pos_, size);
  const void* nl = std::memchr(base + from, '\n', size - from);
  if (nl == nullptr) {
    scan_pos_ = size;
    if (size > limits_.max_inline_len) return Fail(kTooBigInline);
    return NeedMore(size + 1);
  }
  const size_t nl_pos = static_cast<const char*>(nl) - base;
  size_t line_len = nl_pos;
  if (line_len > 0 && base[line_len - 1] == '\r') --line_len;
  std::string_view line(base, line_len);
  // Redis splits a C string: a NUL ends the line.
  if (const void* nul = std::memchr(line.data(), '\0', line.size())) {
    line = line.substr(0, static_cast<const char*>(nul) - line.data());
  }
  if (!SplitInline(line)) return Fail(kUnbalancedQuotes);
  ClearCommandState();
  consumed_ = nl_pos + 1;
  return args_.empty() ? Status::kEmpty : Status::kCommand;
}

bool RespParser::SplitInline(std::string_view line) {
  args_.clear();
  inline_buf_.clear();
  // Decoded arguments are never longer than the line: with this reserve, views into inline_buf_
  // stay valid while later arguments are appended.
  bool reserved = false;
  const char* p = line.data();
  const char* const end = p + line.size();
  while (true) {
    while (p < end && IsSpace(*p)) ++p;
    if (p == end) return true;
    const char* token = p;
    while (p < end && !IsArgEnd(*p) && *p != '"' && *p != '\'') ++p;
    if (p == end || IsArgEnd(*p)) {  // plain argument: a view into the caller's buffer
      args_.emplace_back(token, p - token);
      continue;
    }
    if (!reserved) {
      inline_buf_.reserve(line.size());
      reserved = true;
    }
    const size_t arg_start = inline_buf_.size();
    inline_buf_.append(token, p - token);
    const char quote = *p++;
    while (true) {
      if (p == end) return false;  // unterminated quotes
      const char c = *p;
      if (c == quote) {
        // A closing quote must be followed by a space or the end of the line.
        if (p + 1 < end && !IsSpace(p[1])) return false;
        ++p;
        break;
      }
      if (quote == '"' && c == '\\' && end - p >= 4 && p[1] == 'x' && IsHexDigit(p[2]) &&
          IsHexDigit(p[3])) {
        inline_buf_.push_back(static_cast<char>(HexValue(p[2]) * 16 + HexValue(p[3])));
        p += 4;
      } else if (quote == '"' && c == '\\' && p + 1 < end) {
        char e = p[1];
        switch (e) {
          case 'n': e = '\n'; break;
          case 'r': e = '\r'; break;
          case 't': e = '\t'; break;
          case 'b': e = '\b'; break;
          case 'a': e = '\a'; break;
          default: break;
        }
        inline_buf_.push_back(e);
        p += 2;
      } else if (quote == '\'' && c == '\\' && p + 1 < end && p[1] == '\'') {
        inline_buf_.push_back('\'');
        p += 2;
      } else {
        inline_buf_.push_back(c);
        ++p;
      }
    }
    args_.emplace_back(inline_buf_.data() + arg_start, inline_buf_.size() - arg_start);
  }
}

}  // namespace dashkv::io
