// MonitorFeed: the clients in MONITOR mode, and the feed of the commands the server runs to
// them, in Redis's format:
//   +1339518083.107412 [0 127.0.0.1:60866] "set" "key" "a \"quoted\" \x01 value"
// Thread-safe: any engine (a connection's thread or a shard running a script) may feed; each
// monitor is kept and written to on its own engine.
//
// Design
//   The dispatch pays one relaxed load per batch while nobody monitors (`active`). With monitors,
//   the feeding thread formats the lines of a batch into one string and posts it once to every
//   engine that has monitors, where each monitor's connection queues it (Connection::SendAsync).
//   Posts from one thread arrive in order, so each client's commands reach a monitor in the
//   order they ran; commands of different clients interleave as their batches arrive.
//   Which commands are fed, as Redis 7.0: those that ran (not those refused before running:
//   unknown, wrong arity, NOAUTH, NOPERM, ...), except admin commands; EVAL, EVALSHA and FCALL
//   before they run, then their calls as client "lua"; MULTI's queued commands when EXEC runs
//   them, before EXEC itself. Passwords of AUTH, HELLO ... AUTH and
//   MIGRATE ... AUTH/AUTH2 read "(redacted)".
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "io/service.h"

namespace dashkv {

namespace io {
class EnginePool;
}  // namespace io

class ConnState;
struct CommandSpec;

class MonitorFeed {
 public:
  explicit MonitorFeed(io::EnginePool& pool);
  MonitorFeed(const MonitorFeed&) = delete;
  MonitorFeed& operator=(const MonitorFeed&) = delete;

  // Whether any client monitors: one relaxed load.
  bool active() const { return count_.load(std::memory_order_relaxed) != 0; }

  // MONITOR: `state` (on engine `engine`) receives the feed from now on. Idempotent.
  void Add(unsigned engine, ConnState* state);
  // The client leaves MONITOR mode (RESET) or disconnects. No-op for a non-monitor.
  void Remove(unsigned engine, ConnState* state);
  static bool IsMonitor(const ConnState& state);

  // Whether the command is fed when it runs (not admin).
  static bool Feeds(const CommandSpec& spec);
  // Appends the feed line of a command run in database `db` by `client` ("ip:port", "lua").
  static void AppendLine(std::string* lines, int64_t now_us, unsigned db,
                         std::string_view client, io::CmdArgs args);
  // Sends `lines` (whole feed lines) to every monitor. Call from an engine thread.
  void Send(std::string lines);

 private:
  io::EnginePool& pool_;
  std::atomic<int64_t> count_{0};
  // Counts MONITOR calls: a line goes to the monitors added before it was fed.
  std::atomic<uint64_t> seq_{0};
  // The monitors of each engine: `states` touched only on that engine's thread, `count` read by
  // any feeding thread to skip engines without monitors.
  struct alignas(64) Monitors {
    std::vector<ConnState*> states;
    std::atomic<int64_t> count{0};
  };
  std::unique_ptr<Monitors[]> monitors_;
};

}  // namespace dashkv
