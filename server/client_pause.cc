#include "server/client_pause.h"

#include <algorithm>
#include <chrono>

#include <absl/synchronization/mutex.h>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "core/base/clock.h"
#include "io/engine_pool.h"

namespace dashkv {

namespace asio = boost::asio;

namespace {
// Pause and Unpause are rare admin commands; one lock keeps the kind and the end consistent.
absl::Mutex pause_mu;
}  // namespace

ClientPause::ClientPause(io::EnginePool& pool)
    : pool_(pool), waiters_(std::make_unique<Waiters[]>(pool.size())) {}

void ClientPause::Pause(int64_t end_ms, Kind kind) {
  absl::MutexLock lock(&pause_mu);
  const int64_t old_end = end_ms_.load(std::memory_order_relaxed);
  uint8_t k = static_cast<uint8_t>(kind);
  if (old_end > NowMs()) {  // a pause in force: the later end, the stronger kind
    k = std::max(k, kind_.load(std::memory_order_relaxed));
    end_ms = std::max(end_ms, old_end);
  }
  kind_.store(k, std::memory_order_relaxed);
  end_ms_.store(end_ms, std::memory_order_relaxed);
}

void ClientPause::Unpause() {
  {
    absl::MutexLock lock(&pause_mu);
    end_ms_.store(0, std::memory_order_relaxed);
    kind_.store(0, std::memory_order_relaxed);
  }
  // Posted after the stores: a waiter that still saw the pause has registered its timer
  // before this runs on its engine.
  for (unsigned i = 0; i < pool_.size(); ++i) {
    pool_.Post(i, [this, i] {
      for (asio::steady_timer* t : waiters_[i].timers) t->cancel();
    });
  }
}

asio::awaitable<void> ClientPause::WaitWhile(unsigned engine, Kind holds) {
  for (;;) {
    const int64_t now = NowMs();
    if (InForce(now) < holds) co_return;
    const int64_t left = end_ms_.load(std::memory_order_relaxed) - now;
    asio::steady_timer timer(pool_[engine].context(), std::chrono::milliseconds(left));
    std::vector<asio::steady_timer*>& timers = waiters_[engine].timers;
    timers.push_back(&timer);
    boost::system::error_code ec;
    co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    timers.erase(std::find(timers.begin(), timers.end(), &timer));
  }
}

}  // namespace dashkv
