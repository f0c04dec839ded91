// ClientPause: the server-wide CLIENT PAUSE / CLIENT UNPAUSE state, and the wait of a client
// whose command the pause holds back.
// Thread-safe: any engine reads the state (relaxed atomics) and may pause or unpause; the
// waiting clients of an engine are kept and woken on that engine's thread.
//
// Design
//   A pause is an end time (ms since the epoch) and a kind: WRITE holds back the commands that
//   may change data or be replicated (kCmdWrite or kCmdMayReplicate, and an EXEC whose queue
//   holds one), ALL holds back every command. As Redis 7.0, a new pause in force keeps the later
//   end and the stronger kind, and while a pause is in force keys neither expire (the active
//   cycle is skipped and an expired key reads as missing but stays) nor are evicted, so the
//   data set is static.
//   The dispatch pays one relaxed load per batch when nothing is paused (`maybe_active`). A held
//   client waits on a timer that expires at the pause's end, registered with its engine;
//   UNPAUSE posts to every engine to cancel those timers, so the clients resume at once. A
//   waiter re-checks after waking (a pause may have been extended or made stronger).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>

namespace dashkv {

namespace io {
class EnginePool;
}  // namespace io

class ClientPause {
 public:
  enum class Kind : uint8_t { kNone = 0, kWrite = 1, kAll = 2 };

  explicit ClientPause(io::EnginePool& pool);
  ClientPause(const ClientPause&) = delete;
  ClientPause& operator=(const ClientPause&) = delete;

  // CLIENT PAUSE: pauses until `end_ms` (ms since the epoch). A pause in force keeps the later
  // end and the stronger kind.
  void Pause(int64_t end_ms, Kind kind);
  // CLIENT UNPAUSE: ends any pause and wakes every held client.
  void Unpause();

  // Whether a pause may be in force (it may have ended by time): one relaxed load.
  bool maybe_active() const { return end_ms_.load(std::memory_order_relaxed) != 0; }
  // Returns the kind of pause in force at `now_ms`.
  Kind InForce(int64_t now_ms) const {
    if (end_ms_.load(std::memory_order_relaxed) <= now_ms) return Kind::kNone;
    return static_cast<Kind>(kind_.load(std::memory_order_relaxed));
  }
  // The pause's end (0: none), for the shards' expiry check (ChangeListeners::keys_frozen).
  const std::atomic<int64_t>* end_ms() const { return &end_ms_; }

  // Suspends the calling coroutine (running on engine `engine`) while a pause of at least
  // `holds` is in force. Returns at once when none is.
  boost::asio::awaitable<void> WaitWhile(unsigned engine, Kind holds);

 private:
  io::EnginePool& pool_;
  std::atomic<int64_t> end_ms_{0};
  std::atomic<uint8_t> kind_{0};
  // The timers of the clients held on each engine; touched only on that engine's thread.
  struct alignas(64) Waiters {
    std::vector<boost::asio::steady_timer*> timers;
  };
  std::unique_ptr<Waiters[]> waiters_;
};

}  // namespace dashkv
