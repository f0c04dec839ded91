// ArgParser: the one argument parser shared by all command handlers (NX|XX, EX seconds, COUNT n,
// ...). Handlers never loop over arguments with strcasecmp chains of their own.
// Thread: a stack value inside one handler call.
#pragma once


#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "core/base/parse_int.h"
#include "core/str_util.h"
#include "server/op_status.h"

namespace dashkv {

using CmdArgs = std::span<const std::string_view>;

// Design
//  A cursor over the arguments. Checks are case-insensitive like Redis. The first failure is
//  remembered (error()); later calls become no-ops returning neutral values, so a handler can
//  parse its whole syntax and test error() once.
class ArgParser {
 public:
  // Starts at args[start] (by default just after the command name).
  explicit ArgParser(CmdArgs args, size_t start = 1) : args_(args), pos_(start) {}

  bool HasNext() const { return pos_ < args_.size() && !error_; }
  size_t remaining() const { return pos_ < args_.size() ? args_.size() - pos_ : 0; }
  size_t position() const { return pos_; }

  // Returns the next argument and consumes it ("" and kSyntaxError when there is none).
  std::string_view Next() {
    if (pos_ >= args_.size()) {
      SetError(OpStatus::kSyntaxError);
      return {};
    }
    return args_[pos_++];
  }
  std::string_view Peek() const { return pos_ < args_.size() ? args_[pos_] : std::string_view{}; }

  // Consumes the next argument if it equals `word` ignoring case; returns whether it did.
  bool Check(std::string_view word) {
    if (error_ || pos_ >= args_.size() || !EqualsIgnoreCase(args_[pos_], word)) return false;
    ++pos_;
    return true;
  }

  // Consumes the next argument as a strict int64 (Redis's string2ll rules); on failure records
  // `on_error` (default kNotAnInteger) and returns 0.
  int64_t NextInt(OpStatus on_error = OpStatus::kNotAnInteger);
  // Consumes the next argument as a double (no NaN); on failure records kNotAFloat.
  double NextDouble(OpStatus on_error = OpStatus::kNotAFloat);

  // Records `status` unless an error is recorded already.
  void SetError(OpStatus status) {
    if (!error_) error_ = status;
  }
  bool HasError() const { return error_.has_value(); }
  OpStatus error() const { return error_.value_or(OpStatus::kOk); }

 private:
  CmdArgs args_;
  size_t pos_;
  std::optional<OpStatus> error_;
};

}  // namespace dashkv
