#include "server/observability/slowlog.h"

#include <algorithm>
#include <ctime>

#include "core/str_util.h"
#include "server/command_registry.h"

namespace dashkv {

namespace {

constexpr size_t kMaxArgs = 32;
constexpr size_t kMaxArgBytes = 128;
constexpr std::string_view kRedacted = "(redacted)";

// Settings whose CONFIG SET value is a secret (Redis's sensitive configs).
bool IsSecretSetting(std::string_view name) {
  static constexpr std::string_view kSecret[] = {"requirepass", "masterauth",
                                                 "tls-key-file-pass", "tls-client-key-file-pass"};
  for (std::string_view s : kSecret) {
    if (EqualsIgnoreCase(name, s)) return true;
  }
  return false;
}

// Marks in `hide` the arguments of `args` that hold secrets.
void MarkSecrets(std::string_view cmd, CmdArgs args, std::vector<bool>& hide) {
  const size_t n = args.size();
  auto hide_from = [&](size_t i, size_t count) {
    for (size_t k = i; k < n && k < i + count; ++k) hide[k] = true;
  };
  if (cmd == "auth") {
    hide_from(1, n);
  } else if (cmd == "acl|setuser") {
    hide_from(2, n);
  } else if (cmd == "hello") {
    for (size_t i = 2; i < n; ++i) {
      if (EqualsIgnoreCase(args[i], "auth")) {
        hide_from(i + 1, 2);
        i += 2;
      }
    }
  } else if (cmd == "migrate") {
    for (size_t i = 6; i < n; ++i) {
      if (EqualsIgnoreCase(args[i], "auth")) {
        hide_from(i + 1, 1);
        ++i;
      } else if (EqualsIgnoreCase(args[i], "auth2")) {
        hide_from(i + 1, 2);
        i += 2;
      } else if (EqualsIgnoreCase(args[i], "keys")) {
        break;
      }
    }
  } else if (cmd == "config|set") {
    for (size_t i = 2; i + 1 < n; i += 2) {
      if (IsSecretSetting(args[i])) hide[i + 1] = true;
    }
  }
}

}  // namespace

SlowLog::SlowLog(unsigned engines) : rings_(engines) {}

std::vector<std::string> SlowLog::RecordedArgs(const CommandSpec& spec, CmdArgs args) {
  std::vector<bool> hide(args.size(), false);
  MarkSecrets(spec.name, args, hide);
  const size_t kept = std::min(args.size(), kMaxArgs);
  std::vector<std::string> out;
  out.reserve(kept);
  for (size_t i = 0; i < kept; ++i) {
    if (i == kMaxArgs - 1 && args.size() > kMaxArgs) {
      out.push_back(StrCat("... (", args.size() - kMaxArgs + 1, " more arguments)"));
    } else if (hide[i]) {
      out.emplace_back(kRedacted);
    } else if (args[i].size() > kMaxArgBytes) {
      out.push_back(StrCat(args[i].substr(0, kMaxArgBytes), "... (",
                                 args[i].size() - kMaxArgBytes, " more bytes)"));
    } else {
      out.emplace_back(args[i]);
    }
  }
  return out;
}

void SlowLog::Add(unsigned engine, const CommandSpec& spec, CmdArgs args, int64_t duration_us,
                  std::string_view client_addr, std::string_view client_name, int64_t max_len) {
  if (max_len <= 0) return;
  SlowLogEntry e;
  e.id = next_id_.fetch_add(1, std::memory_order_relaxed);
  e.unix_time = static_cast<int64_t>(std::time(nullptr));
  e.duration_us = duration_us;
  e.args = RecordedArgs(spec, args);
  e.client_addr = client_addr;
  e.client_name = client_name;
  Ring& ring = rings_[engine];
  std::lock_guard<std::mutex> lock(ring.mu);
  ring.entries.push_back(std::move(e));
  while (ring.entries.size() > static_cast<size_t>(max_len)) ring.entries.pop_front();
}

std::vector<SlowLogEntry> SlowLog::Get(int64_t count, int64_t max_len) const {
  std::vector<SlowLogEntry> all;
  for (const Ring& ring : rings_) {
    std::lock_guard<std::mutex> lock(ring.mu);
    all.insert(all.end(), ring.entries.begin(), ring.entries.end());
  }
  std::sort(all.begin(), all.end(),
            [](const SlowLogEntry& a, const SlowLogEntry& b) { return a.id > b.id; });
  size_t keep = std::min(all.size(), static_cast<size_t>(std::max<int64_t>(max_len, 0)));
  if (count >= 0) keep = std::min(keep, static_cast<size_t>(count));
  all.resize(keep);
  return all;
}

size_t SlowLog::Len(int64_t max_len) const {
  size_t n = 0;
  for (const Ring& ring : rings_) {
    std::lock_guard<std::mutex> lock(ring.mu);
    n += ring.entries.size();
  }
  return std::min(n, static_cast<size_t>(std::max<int64_t>(max_len, 0)));
}

void SlowLog::Reset() {
  for (Ring& ring : rings_) {
    std::lock_guard<std::mutex> lock(ring.mu);
    ring.entries.clear();
  }
}

}  // namespace dashkv
