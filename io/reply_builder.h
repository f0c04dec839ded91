// ReplyBuilder: encodes replies in RESP2 or RESP3 into an output buffer.
// Thread: engine-local; a builder may be filled on a shard thread and moved back (it owns its
// buffer and points to nothing else).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace dashkv::io {

enum class RespVersion : uint8_t { kResp2 = 2, kResp3 = 3 };

// Design
//  Appends straight into one std::string; integers are formatted without allocation. Aggregate
//  headers are written by Start*(n) with the element count known up front; the caller then
//  sends exactly that many elements (maps: 2n). In RESP2, maps/sets/pushes become arrays, doubles
//  become bulk strings, null becomes $-1 (or *-1 for SendNullArray), booleans become integers.
class ReplyBuilder {
 public:
  explicit ReplyBuilder(RespVersion v = RespVersion::kResp2) : version_(v) {}

  RespVersion version() const { return version_; }
  void set_version(RespVersion v) { version_ = v; }
  bool resp3() const { return version_ == RespVersion::kResp3; }

  // "+OK\r\n". REQUIRES: no CR/LF in `s`.
  void SendSimpleString(std::string_view s);
  void SendOk() { SendSimpleString("OK"); }
  // "-<msg>\r\n". `msg` carries its code: "ERR syntax error", "WRONGTYPE Operation against...".
  // CR/LF inside `msg` are replaced by spaces (as Redis does); a leading '-' in `msg` is not
  // doubled. Counts into error_count().
  void SendError(std::string_view msg);
  void SendLong(int64_t v);                  // ":v\r\n"
  void SendDouble(double v);                 // RESP3 ",v\r\n"; RESP2 bulk; Redis's %.17g format
  // RESP3 ",<text>\r\n" / RESP2 bulk <text>: for doubles already formatted by the caller (Redis
  // formats some doubles, e.g. INCRBYFLOAT and ZSCORE, with its own rules).
  void SendDoubleText(std::string_view text);
  void SendBulk(std::string_view s);         // "$len\r\n<s>\r\n"
  void SendNull();                           // RESP2 "$-1\r\n", RESP3 "_\r\n"
  void SendNullArray();                      // RESP2 "*-1\r\n", RESP3 "_\r\n"
  void SendBool(bool b);                     // RESP3 "#t\r\n"; RESP2 ":1\r\n"/":0\r\n"
  void SendVerbatim(std::string_view s, std::string_view format = "txt");  // RESP3 '='; RESP2 bulk
  void SendBigNumber(std::string_view digits);  // RESP3 '('; RESP2 bulk
  void StartArray(size_t n);                 // "*n\r\n"
  void StartMap(size_t n);                   // RESP3 "%n\r\n"; RESP2 "*<2n>\r\n"
  void StartSet(size_t n);                   // RESP3 "~n\r\n"; RESP2 "*n\r\n"
  void StartPush(size_t n);                  // RESP3 ">n\r\n"; RESP2 "*n\r\n"
  void SendEmptyArray() { StartArray(0); }
  // Convenience: an array of bulk strings.
  template <typename Range>
  void SendBulkArray(const Range& items) {
    StartArray(std::size(items));
    for (const auto& s : items) SendBulk(s);
  }
  // Appends pre-encoded RESP bytes verbatim (e.g. a reply built by another builder).
  void SendRaw(std::string_view bytes) { buf_.append(bytes); }

  std::string& buffer() { return buf_; }
  const std::string& buffer() const { return buf_; }
  size_t size() const { return buf_.size(); }
  size_t capacity() const { return buf_.capacity(); }
  bool empty() const { return buf_.empty(); }
  void Clear() { buf_.clear(); }
  // Errors sent since construction (the server counts failed calls from it).
  uint64_t error_count() const { return error_count_; }
  // The code of the last error sent ("ERR", "WRONGTYPE", ...: its first word, up to 32 bytes).
  std::string_view last_error_code() const {
    return std::string_view(last_error_code_, last_error_code_size_);
  }
  // Adds errors sent through another builder whose bytes were copied in with SendRaw.
  void AddErrorCount(uint64_t n) { error_count_ += n; }

 private:
  void AppendHeader(char type, int64_t n);  // "<type><n>\r\n"
  std::string buf_;
  RespVersion version_;
  uint64_t error_count_ = 0;
  char last_error_code_[32];
  uint8_t last_error_code_size_ = 0;
};

// Formats a double like Redis's addReplyDouble in RESP2 ("%.17g", "inf", "-inf", "nan").
std::string FormatDouble(double v);

}  // namespace dashkv::io
