#include "server/cmd_context.h"

#include <new>
#include <stdexcept>

#include "core/base/logging.h"
#include "server/conn_state.h"
#include "server/storage/shard_set.h"

namespace dashkv {

ShardSet& ConnCmdContext::shard_set() const {
  if (state.change_origin != 0) [[unlikely]] {
    const ShardTaskMode mode(state.no_touch, state.change_origin);
    if (state.origin_shards == nullptr) {
      state.origin_shards = services_.shard_set.View(mode);
    } else {
      state.origin_shards->set_mode(mode);
    }
    return *state.origin_shards;
  }
  return state.no_touch ? services_.shard_set.no_touch() : services_.shard_set;
}

void SendHelp(io::ReplyBuilder& rb, std::span<const std::string_view> lines) {
  rb.StartArray(lines.size());
  for (std::string_view line : lines) rb.SendSimpleString(line);
}

void SendStatus(io::ReplyBuilder& rb, OpStatus status) {
  std::string_view text = StatusText(status);
  DCHECK(!text.empty());
  rb.SendError(text);
}

bool IsAllocationFailure(const std::exception& e) {
  return dynamic_cast<const std::bad_alloc*>(&e) != nullptr ||
         dynamic_cast<const std::length_error*>(&e) != nullptr;
}

void SendAllocationFailure(io::ReplyBuilder& rb, size_t reply_start, const CommandSpec& spec,
                           const std::exception& e) {
  if (rb.size() > reply_start) rb.buffer().resize(reply_start);
  SendStatus(rb, OpStatus::kAllocationFailed);
  thread_local int64_t last_log_s = 0;
  const int64_t now_s = NowMs() / 1000;
  if (now_s != last_log_s) {
    last_log_s = now_s;
    LOG(WARNING) << "command '" << spec.name << "' failed: out of memory (" << e.what() << ")";
  }
}

}  // namespace dashkv
