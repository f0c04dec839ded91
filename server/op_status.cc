#include "core/str_util.h"
#include "server/op_status.h"


namespace dashkv {

std::string_view StatusText(OpStatus status) {
  switch (status) {
    case OpStatus::kOk:
    case OpStatus::kKeyNotFound:
    case OpStatus::kSkipped:
      return "";
    case OpStatus::kWrongType:
      return "WRONGTYPE Operation against a key holding the wrong kind of value";
    case OpStatus::kNotAnInteger:
      return "ERR value is not an integer or out of range";
    case OpStatus::kNotAFloat:
      return "ERR value is not a valid float";
    case OpStatus::kOutOfRange:
      return "ERR index out of range";
    case OpStatus::kIncrOverflow:
      return "ERR increment or decrement would overflow";
    case OpStatus::kNanOrInf:
      return "ERR increment would produce NaN or Infinity";
    case OpStatus::kSyntaxError:
      return "ERR syntax error";
    case OpStatus::kOutOfMemory:
      return "OOM command not allowed when used memory > 'maxmemory'.";
    case OpStatus::kStringTooLong:
      return "ERR string exceeds maximum allowed size (proto-max-bulk-len)";
    case OpStatus::kBitOffset:
      return "ERR bit offset is not an integer or out of range";
    case OpStatus::kBitValue:
      return "ERR bit is not an integer or out of range";
    case OpStatus::kInvalidDbIndex:
      return "ERR DB index is out of range";
    case OpStatus::kNoSuchKey:
      return "ERR no such key";
    case OpStatus::kDecrOverflow:
      return "ERR decrement would overflow";
    case OpStatus::kInvalidExpire:
      return "ERR invalid expire time";
    case OpStatus::kBitfieldReadOnly:
      return "ERR BITFIELD_RO only supports the GET subcommand";
  }
  return "ERR unknown error";
}

std::string InvalidExpireText(std::string_view command) {
  return StrCat("ERR invalid expire time in '", command, "' command");
}

}  // namespace dashkv
