// RespParser: incremental, zero-copy parser of client requests (RESP2/RESP3 multibulk arrays of
// bulk strings, and inline commands). Knows nothing of commands or server types.
// Thread: engine-local (one parser per connection).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace dashkv::io {

// Limits, with Redis's defaults. Set from flags/CONFIG by the owner of the parser.
struct RespLimits {
  int64_t max_bulk_len = 512LL * 1024 * 1024;    // proto-max-bulk-len
  int64_t max_multibulk_len = 2147483647;  // INT_MAX, as Redis; memory grows only with data
  size_t max_inline_len = 64 * 1024;             // PROTO_INLINE_MAX_SIZE
  // A password is required and the client has not authenticated: as Redis, a multibulk of more
  // than kUnauthMaxMultibulk elements or a bulk longer than kUnauthMaxBulk is a protocol error.
  bool unauthenticated = false;
  static constexpr int64_t kUnauthMaxMultibulk = 10;
  static constexpr int64_t kUnauthMaxBulk = 16384;
};

// Design
//  Parse() looks at the unconsumed bytes of the connection's input buffer, which the connection
//  keeps contiguous. It parses at most one command per call. A command that is not complete yet
//  leaves the parser in a resumable state (how many args seen, where the next one starts,
//  relative to the start of the command), so feeding a large multibulk in many small reads costs
//  O(total bytes), not O(n^2). The connection may move the unconsumed bytes (compaction) between
//  calls; offsets, never pointers, are kept across calls.
//  On kCommand, args() holds views into the buffer passed to this call; they stay valid until the
//  caller consumes/moves those bytes. Exception: an inline argument written with quotes is decoded
//  into parser-owned storage, valid until the next Parse()/Reset().
//  Hot path: one pass over a complete command, the CRLF after a length found by the digit scan
//  itself (memchr only for inline lines and unusual header lines); bulk data is skipped by length;
//  no allocation once the vectors have grown.
//  Behaviour follows Redis 7.0 (processMultibulkBuffer/processInlineBuffer): the byte after a '\r'
//  and the two bytes after bulk data are skipped unchecked, lengths are parsed like string2ll
//  (no '+', no leading zeros), a line still missing its '\r' ('\n' for inline) is an error once
//  more than max_inline_len bytes are waiting. Deliberate difference: Redis searches lines with
//  strchr and so stalls on a NUL before the line end; here a NUL ends an inline line (the rest of
//  the line is ignored) and makes a header line invalid.
class RespParser {
 public:
  enum class Status {
    kCommand,   // one command parsed: args() holds it, consumed() bytes belong to it
    kNeedMore,  // incomplete: feed more bytes (the same unconsumed bytes plus new ones)
    kEmpty,     // an empty inline line or empty multibulk ("*0\r\n"/"*-1\r\n"): consumed(), no args
    kError,     // protocol error: error() has Redis's text; the connection replies and closes
  };

  explicit RespParser(RespLimits limits = {}) : limits_(limits) {}

  // Parses the next command from `buf` (the unconsumed input, starting where the previous
  // command ended). REQUIRES: `buf` begins with the bytes given to the previous kNeedMore call.
  Status Parse(std::string_view buf);

  // Valid after kCommand: the command's arguments, views into the last `buf`.
  const std::vector<std::string_view>& args() const { return args_; }
  // Valid after kCommand/kEmpty: bytes of `buf` that the command occupied.
  size_t consumed() const { return consumed_; }
  // Valid after kError: e.g. "Protocol error: invalid bulk length" (no "-ERR " prefix).
  std::string_view error() const { return error_; }
  // Valid after kNeedMore: a lower bound on the total size `buf` must reach before the command
  // can complete (lets the connection reserve space for a large bulk string at once).
  size_t bytes_needed() const { return bytes_needed_; }

  // Valid after kNeedMore inside a multibulk: the bytes of the command already parsed (headers
  // and complete arguments; Redis has dropped them from its query buffer by then) and the total
  // length of its complete arguments (Redis's argv-mem). Both 0 otherwise. For CLIENT LIST.
  size_t partial_parsed_bytes() const { return multibulk_len_ > 0 ? pos_ : 0; }
  size_t partial_arg_bytes() const {
    size_t n = 0;
    if (multibulk_len_ > 0) {
      for (const ArgSpan& a : offsets_) n += a.len;
    }
    return n;
  }

  void set_limits(const RespLimits& limits) { limits_ = limits; }
  // Forgets any partial command.
  void Reset();

 private:
  RespLimits limits_;
  std::vector<std::string_view> args_;
  size_t consumed_ = 0;
  size_t bytes_needed_ = 0;
  std::string_view error_;
  enum class LineResult : uint8_t { kOk, kNeedMore, kInvalid, kTooBig, kBadType };
  struct ArgSpan {
    size_t offset;  // from the command's start
    size_t len;
  };

  Status ParseMultiBulk(std::string_view buf);
  Status ParseInline(std::string_view buf);
  // Parses the header line starting at `start`: `type`, an integer, CR, one more byte. On kOk sets
  // *value and *next (offset after the line); kBadType: complete line not starting with `type`.
  LineResult ParseLengthLine(std::string_view buf, size_t start, char type, int64_t* value,
                             size_t* next);
  // Splits an inline line like Redis's sdssplitargs into args_. Returns false on unbalanced quotes.
  bool SplitInline(std::string_view line);
  Status Fail(std::string_view error);
  Status NeedMore(size_t needed);
  void ClearCommandState();

  // Resumable state of a partially received multibulk (offsets from the command's start).
  int64_t multibulk_len_ = -1;   // -1: not inside a multibulk
  int64_t bulk_len_ = -1;        // length of the bulk being read, -1: expecting '$' header
  size_t pos_ = 0;               // parse position, relative to the start of the command
  size_t scan_pos_ = 0;          // bytes from the command's start already searched for a line end
  std::vector<ArgSpan> offsets_;  // args seen so far
  std::string inline_buf_;        // decoded quoted inline arguments
  std::string error_buf_;         // formatted error text
};

}  // namespace dashkv::io
