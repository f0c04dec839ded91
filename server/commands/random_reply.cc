#include "server/commands/random_reply.h"

#include "core/str_util.h"
#include "server/cmd_context.h"

namespace dashkv {

OpResult<RandCount> ParseRandCount(CmdArgs args, std::string_view flag) {
  RandCount out;
  std::optional<int64_t> count = ParseInt64(args[2]);
  if (!count) return OpStatus::kNotAnInteger;
  if (*count == INT64_MIN) return OpStatus::kRandCountRange;
  out.count = *count;
  if (args.size() > 4 || (args.size() == 4 && (flag.empty() || !EqualsIgnoreCase(args[3], flag)))) {
    return OpStatus::kSyntaxError;
  }
  out.with_values = args.size() == 4;
  if (out.with_values && (out.count > INT64_MAX / 2 || out.count < -(INT64_MAX / 2))) {
    return OpStatus::kValueOutOfRange;
  }
  return out;
}

DrawReply::DrawReply(io::ReplyBuilder& rb, const Config& config, uint64_t draws,
                     unsigned per_draw)
    : rb_(rb), start_(rb.size()) {
  int64_t limit = config.proto_max_bulk_len.load(std::memory_order_relaxed);
  limit_ = limit > 0 ? static_cast<uint64_t>(limit) : 0;
  constexpr uint64_t kMinBulkBytes = 6;  // "$0\r\n\r\n"
  may_fit_ = draws <= limit_ / (kMinBulkBytes * per_draw);
}

void DrawReply::Abort() {
  rb_.buffer().resize(start_);
  SendStatus(rb_, OpStatus::kRandReplyTooLarge);
}

}  // namespace dashkv
