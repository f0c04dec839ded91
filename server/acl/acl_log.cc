#include "server/acl/acl_log.h"

#include <algorithm>

namespace dashkv {

std::string_view AclReasonName(AclDenied reason) {
  switch (reason) {
    case AclDenied::kCommand:
      return "command";
    case AclDenied::kKey:
      return "key";
    case AclDenied::kAuth:
      return "auth";
    case AclDenied::kChannel:
      return "channel";
    case AclDenied::kOk:
      break;
  }
  return "unknown";
}

std::string_view AclContextName(AclContext context) {
  switch (context) {
    case AclContext::kToplevel:
      return "toplevel";
    case AclContext::kMulti:
      return "multi";
    case AclContext::kLua:
      return "lua";
  }
  return "unknown";
}

void AclLog::Add(AclLogEntry entry, size_t max_len) {
  absl::MutexLock lock(&mu_);
  auto like = std::find_if(entries_.begin(), entries_.end(), [&](const AclLogEntry& e) {
    return e.reason == entry.reason && e.context == entry.context && e.object == entry.object &&
           e.username == entry.username && entry.updated_ms - e.updated_ms < kMergeWindowMs;
  });
  if (like != entries_.end()) {
    entry.count = like->count + 1;
    entries_.erase(like);
  }
  entries_.push_front(std::move(entry));
  while (entries_.size() > max_len) entries_.pop_back();
}

std::vector<AclLogEntry> AclLog::Newest(size_t count) const {
  absl::MutexLock lock(&mu_);
  count = std::min(count, entries_.size());
  return std::vector<AclLogEntry>(entries_.begin(), entries_.begin() + count);
}

void AclLog::Reset() {
  absl::MutexLock lock(&mu_);
  entries_.clear();
}

size_t AclLog::size() const {
  absl::MutexLock lock(&mu_);
  return entries_.size();
}

}  // namespace dashkv
