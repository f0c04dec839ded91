#include "io/hop.h"

#include <gtest/gtest.h>

#include <absl/base/internal/raw_logging.h>

#include <atomic>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <cstdlib>
#include <future>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

#include "io/engine_pool.h"

// Counts the heap allocations of the whole process (every thread), for the test that a hop
// allocates nothing.
namespace {
std::atomic<uint64_t> g_allocations{0};
}  // namespace

// noinline: GCC would otherwise see malloc and free meet across new/delete and warn.
[[gnu::noinline]] void* operator new(std::size_t n) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
[[gnu::noinline]] void operator delete(void* p) noexcept { std::free(p); }
[[gnu::noinline]] void operator delete(void* p, std::size_t) noexcept { std::free(p); }

namespace dashkv::io {
namespace {

namespace asio = boost::asio;

// Runs the coroutine made by `make()` on engine i and blocks until it has finished.
template <typename MakeCoro>
void RunCoroOn(EnginePool& pool, unsigned i, MakeCoro make) {
  std::promise<void> done;
  pool.Post(i, [&] {
    asio::co_spawn(pool[i].context(), make(), [&](std::exception_ptr e) {
      if (e) ABSL_RAW_LOG(FATAL, "coroutine threw");
      done.set_value();
    });
  });
  done.get_future().get();
}

class HopTest : public ::testing::TestWithParam<uint32_t> {
 protected:
  HopTest() : pool_(2, EngineOptions{.spin_us = GetParam()}) { pool_.Start(); }
  ~HopTest() override {
    pool_.Stop();
    pool_.Join();
  }
  EnginePool pool_;
};

TEST_P(HopTest, RunsOnTargetAndResumesOnHome) {
  Hop hop;
  unsigned ran_on = 99, resumed_on = 99;
  RunCoroOn(pool_, 0, [&]() -> asio::awaitable<void> {
    unsigned* out = &ran_on;
    co_await hop.Run(pool_[1], [out] { *out = Engine::Current()->index(); });
    hop.RethrowIfFailed();
    resumed_on = Engine::Current()->index();
    EXPECT_FALSE(hop.in_flight());
  });
  EXPECT_EQ(ran_on, 1u);
  EXPECT_EQ(resumed_on, 0u);
  EXPECT_EQ(hop.hops(), 1u);
}

TEST_P(HopTest, OwnEngineRunsInlineWithoutSuspending) {
  Hop hop;
  bool inline_ran = false;
  RunCoroOn(pool_, 1, [&]() -> asio::awaitable<void> {
    bool* ran = &inline_ran;
    co_await hop.Run(pool_[1], [ran] { *ran = Engine::Current()->index() == 1; });
    hop.RethrowIfFailed();
  });
  EXPECT_TRUE(inline_ran);
  EXPECT_EQ(hop.hops(), 0u);
}

// Runs `hops` hops in a row from engine 0 to engine 1 through one node, each seeing the
// previous ones' effects in order; returns the process's heap allocations during them (after
// `warmup` hops that let the engines' loops reach their steady state).
uint64_t HopInOrder(EnginePool& pool, Hop& hop, int hops, int warmup) {
  std::vector<int> order;
  order.reserve(hops);
  uint64_t allocations = 0;
  RunCoroOn(pool, 0, [&]() -> asio::awaitable<void> {
    std::vector<int>* seen = &order;
    for (int h = 0; h < warmup; ++h) co_await hop.Run(pool[1], [] {});
    const uint64_t before = g_allocations.load(std::memory_order_relaxed);
    for (int h = 0; h < hops; ++h) {
      co_await hop.Run(pool[1], [seen, h] {
        if (Engine::Current()->index() == 1) seen->push_back(h);
      });
      hop.RethrowIfFailed();
      if (Engine::Current()->index() != 0) co_return;
    }
    allocations = g_allocations.load(std::memory_order_relaxed) - before;
  });
  EXPECT_EQ(order.size(), size_t(hops));
  for (int h = 0; h < hops && h < int(order.size()); ++h) EXPECT_EQ(order[h], h);
  EXPECT_EQ(hop.hops(), uint64_t(hops + warmup));
  return allocations;
}

TEST_P(HopTest, ManyHopsReuseTheNodeInOrder) {
  Hop hop;
  HopInOrder(pool_, hop, 20000, 0);
}

// Engines that never sleep during the test (a sleeping engine's wake-up is an asio post, which
// allocates): the hops themselves allocate nothing.
TEST(HopAllocationTest, HopsAllocateNothing) {
  EnginePool pool(2, EngineOptions{.spin_us = 10'000'000});
  pool.Start();
  Hop hop;
  EXPECT_EQ(HopInOrder(pool, hop, 20000, 100), 0u);
  pool.Stop();
  pool.Join();
}

asio::awaitable<int> AddOne(int x) { co_return x + 1; }

// A coroutine resumed by a hop runs from the engine's inbox, outside io_context::poll: the
// frames it makes there (here a nested coroutine's; in the server the dispatch's and a socket
// read's) come from the engine thread's cache of freed frames, not the heap (io/engine.cc).
TEST(HopAllocationTest, FramesMadeAfterAHopReuseTheEnginesCache) {
  EnginePool pool(2, EngineOptions{.spin_us = 10'000'000});
  pool.Start();
  Hop hop;
  constexpr int kWarmup = 100, kHops = 20000;
  uint64_t allocations = 0;
  int sum = 0;
  RunCoroOn(pool, 0, [&]() -> asio::awaitable<void> {
    uint64_t before = 0;
    for (int h = 0; h < kWarmup + kHops; ++h) {
      if (h == kWarmup) before = g_allocations.load(std::memory_order_relaxed);
      co_await hop.Run(pool[1], [] {});
      hop.RethrowIfFailed();
      sum = co_await AddOne(sum);
    }
    allocations = g_allocations.load(std::memory_order_relaxed) - before;
  });
  EXPECT_EQ(sum, kWarmup + kHops);
  EXPECT_EQ(allocations, 0u);
  pool.Stop();
  pool.Join();
}

TEST_P(HopTest, RethrowsOnHomeAndStaysUsable) {
  for (unsigned target : {1u, 0u}) {  // a hop, and inline
    Hop hop;
    bool caught = false;
    unsigned caught_on = 99;
    int after = 0;
    RunCoroOn(pool_, 0, [&]() -> asio::awaitable<void> {
      co_await hop.Run(pool_[target], [] { throw std::length_error("too long"); });
      try {
        hop.RethrowIfFailed();
      } catch (const std::length_error& e) {
        caught = std::string(e.what()) == "too long";
        caught_on = Engine::Current()->index();
      }
      int* a = &after;
      co_await hop.Run(pool_[1], [a] { *a = 7; });
      hop.RethrowIfFailed();
    });
    EXPECT_TRUE(caught) << target;
    EXPECT_EQ(caught_on, 0u);
    EXPECT_EQ(after, 7);
  }
}

// What owns a Hop in the server: a connection's state, owned by the connection's coroutine.
struct Owner {
  explicit Owner(std::atomic<int>* destroyed) : destroyed(destroyed) {}
  ~Owner() { destroyed->fetch_add(1); }
  Hop hop;
  bool closed = false;
  std::atomic<int>* destroyed;
};

// The connection is closed (on its own engine) while its hop is in flight: the work still runs
// to the end with the node alive, and the owner goes away only after the coroutine resumed.
TEST_P(HopTest, OwnerClosedWhileInFlightOutlivesTheHop) {
  std::atomic<int> destroyed{0};
  std::atomic<bool> release{false};
  std::atomic<bool> work_started{false};
  std::atomic<int> destroyed_when_work_ended{-1};
  std::promise<void> finished;
  bool saw_closed = false;
  Owner* owner_seen = nullptr;
  pool_.Post(0, [&] {
    auto coro = [](EnginePool* pool, std::atomic<int>* destroyed, std::atomic<bool>* release,
                   std::atomic<bool>* started, std::atomic<int>* at_end, bool* saw_closed,
                   Owner** seen) -> asio::awaitable<void> {
      auto owner = std::make_unique<Owner>(destroyed);
      *seen = owner.get();
      co_await owner->hop.Run((*pool)[1], [release, started, at_end, destroyed] {
        started->store(true);
        while (!release->load()) std::this_thread::yield();
        at_end->store(destroyed->load());
      });
      owner->hop.RethrowIfFailed();
      *saw_closed = owner->closed;
    };
    asio::co_spawn(pool_[0].context(),
                   coro(&pool_, &destroyed, &release, &work_started, &destroyed_when_work_ended,
                        &saw_closed, &owner_seen),
                   [&](std::exception_ptr e) {
                     if (e) ABSL_RAW_LOG(FATAL, "coroutine threw");
                     finished.set_value();
                   });
  });
  while (!work_started.load()) std::this_thread::yield();
  // Close it on its engine (as CLIENT KILL does) while the work runs on engine 1.
  std::promise<void> closed;
  pool_.Post(0, [&] {
    owner_seen->closed = true;
    closed.set_value();
  });
  closed.get_future().get();
  EXPECT_EQ(destroyed.load(), 0);
  release.store(true);
  finished.get_future().get();
  EXPECT_EQ(destroyed_when_work_ended.load(), 0);
  EXPECT_TRUE(saw_closed);
  EXPECT_EQ(destroyed.load(), 1);
}

INSTANTIATE_TEST_SUITE_P(SpinOrSleep, HopTest, ::testing::Values(0u, 30u));

// A hop still queued on a stopped engine when the pool goes away: its coroutine (and what the
// coroutine owns, the Hop included) is destroyed, not leaked and not resumed.
TEST(HopShutdownTest, HopQueuedAtShutdownUnwindsItsCoroutine) {
  std::atomic<int> destroyed{0};
  std::atomic<bool> resumed{false};
  std::atomic<bool> ran{false};
  {
    EnginePool pool(2);
    pool.Start();
    pool[1].Stop();
    pool[1].Join();
    std::promise<void> about_to_hop;
    pool.Post(0, [&] {
      auto coro = [](EnginePool* pool, std::atomic<int>* destroyed, std::atomic<bool>* ran,
                     std::atomic<bool>* resumed,
                     std::promise<void>* about) -> asio::awaitable<void> {
        auto owner = std::make_unique<Owner>(destroyed);
        about->set_value();
        co_await owner->hop.Run((*pool)[1], [ran] { ran->store(true); });
        resumed->store(true);
      };
      asio::co_spawn(pool[0].context(), coro(&pool, &destroyed, &ran, &resumed, &about_to_hop),
                     asio::detached);
    });
    about_to_hop.get_future().get();
    // The pool's destructor joins engine 0 (the push completes first), then drops the node.
  }
  EXPECT_FALSE(ran.load());
  EXPECT_FALSE(resumed.load());
  EXPECT_EQ(destroyed.load(), 1);
}

}  // namespace
}  // namespace dashkv::io
