#include "server/observability/monitor.h"

#include <algorithm>
#include <cstdio>

#include "core/str_util.h"
#include "io/connection.h"
#include "io/engine_pool.h"
#include "server/command_registry.h"
#include "server/conn_state.h"

namespace dashkv {

namespace {

// Appends `arg` quoted and escaped as Redis's sdscatrepr does.
void AppendRepr(std::string* out, std::string_view arg) {
  out->push_back('"');
  for (unsigned char c : arg) {
    switch (c) {
      case '\\': out->append("\\\\"); break;
      case '"': out->append("\\\""); break;
      case '\n': out->append("\\n"); break;
      case '\r': out->append("\\r"); break;
      case '\t': out->append("\\t"); break;
      case '\a': out->append("\\a"); break;
      case '\b': out->append("\\b"); break;
      default:
        if (c >= 0x20 && c < 0x7f) {
          out->push_back(static_cast<char>(c));
        } else {
          char hex[8];
          std::snprintf(hex, sizeof(hex), "\\x%02x", c);
          out->append(hex);
        }
    }
  }
  out->push_back('"');
}

// Returns how many arguments from `i` on are secrets: AUTH's all, HELLO's two after AUTH,
// MIGRATE's one after AUTH and two after AUTH2 (0: `i` is no secret).
size_t SecretsAt(io::CmdArgs args, size_t i, size_t* redacted_until) {
  if (i < *redacted_until) return 1;
  const std::string_view cmd = args[0];
  if (EqualsIgnoreCase(cmd, "auth")) return 1;
  if (i + 1 < args.size() && EqualsIgnoreCase(args[i], "auth") &&
      (EqualsIgnoreCase(cmd, "hello") || EqualsIgnoreCase(cmd, "migrate"))) {
    *redacted_until = i + 1 + (EqualsIgnoreCase(cmd, "hello") ? 2 : 1);
  } else if (i + 1 < args.size() && EqualsIgnoreCase(args[i], "auth2") &&
             EqualsIgnoreCase(cmd, "migrate")) {
    *redacted_until = i + 3;
  }
  return 0;
}

}  // namespace

MonitorFeed::MonitorFeed(io::EnginePool& pool)
    : pool_(pool), monitors_(std::make_unique<Monitors[]>(pool.size())) {}

bool MonitorFeed::IsMonitor(const ConnState& state) { return state.monitor; }

void MonitorFeed::Add(unsigned engine, ConnState* state) {
  if (state->monitor) return;
  state->monitor = true;
  // Lines fed before this point and still on their way are not for this monitor.
  state->monitor_since = seq_.fetch_add(1, std::memory_order_relaxed) + 1;
  monitors_[engine].states.push_back(state);
  monitors_[engine].count.fetch_add(1, std::memory_order_relaxed);
  count_.fetch_add(1, std::memory_order_relaxed);
}

void MonitorFeed::Remove(unsigned engine, ConnState* state) {
  if (!state->monitor) return;
  state->monitor = false;
  std::vector<ConnState*>& v = monitors_[engine].states;
  v.erase(std::find(v.begin(), v.end(), state));
  monitors_[engine].count.fetch_sub(1, std::memory_order_relaxed);
  count_.fetch_sub(1, std::memory_order_relaxed);
}

bool MonitorFeed::Feeds(const CommandSpec& spec) {
  // skip_monitor commands (EVAL, EVALSHA, FCALL and their _RO forms) are fed too, before they
  // run, as Redis 7.0 does; only their calls are then fed as client "lua".
  return !spec.HasFlag(kCmdAdmin);
}

void MonitorFeed::AppendLine(std::string* lines, int64_t now_us, unsigned db,
                             std::string_view client, io::CmdArgs args) {
  char head[48];
  std::snprintf(head, sizeof(head), "+%lld.%06lld [%u ",
                static_cast<long long>(now_us / 1000000), static_cast<long long>(now_us % 1000000),
                db);
  lines->append(head);
  lines->append(client);
  lines->append("]");
  size_t redacted_until = 0;
  for (size_t i = 0; i < args.size(); ++i) {
    lines->push_back(' ');
    if (i > 0 && SecretsAt(args, i, &redacted_until) > 0) {
      lines->append("\"(redacted)\"");
    } else {
      AppendRepr(lines, args[i]);
    }
  }
  lines->append("\r\n");
}

void MonitorFeed::Send(std::string lines) {
  if (lines.empty()) return;
  auto shared = std::make_shared<const std::string>(std::move(lines));
  const uint64_t seq = seq_.load(std::memory_order_relaxed);
  for (unsigned i = 0; i < pool_.size(); ++i) {
    if (monitors_[i].count.load(std::memory_order_relaxed) == 0) continue;
    pool_.Post(i, [this, i, shared, seq] {
      for (ConnState* st : monitors_[i].states) {
        // CLIENT REPLY OFF|SKIP silences a monitor's feed too (Redis writes it as replies,
        // unlike pub/sub messages and invalidations, which pass).
        if (st->monitor_since <= seq && st->reply_mode == ConnState::ReplyMode::kOn) {
          st->conn->SendAsync(*shared);
        }
      }
    });
  }
}

}  // namespace dashkv
