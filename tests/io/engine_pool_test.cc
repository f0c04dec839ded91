#include "io/engine_pool.h"

#include <gtest/gtest.h>

#include <absl/base/internal/raw_logging.h>

#include <sched.h>

#include <atomic>
#include <boost/asio/co_spawn.hpp>
#include <future>
#include <new>
#include <stdexcept>
#include <thread>
#include <memory>
#include <string>
#include <vector>

namespace dashkv::io {
namespace {

namespace asio = boost::asio;

#ifdef DASHKV_SANITIZER
constexpr int kScale = 10;
#else
constexpr int kScale = 1;
#endif

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

// Hops kHops times from engine e to the other engines and adds the results to *sum.
// (A coroutine function, not a lambda: a lambda's captures die with the closure object.)
asio::awaitable<void> HopLoop(EnginePool* pool, unsigned e, int c, int hops,
                              std::atomic<int64_t>* sum) {
  int64_t local = 0;
  for (int h = 0; h < hops; ++h) {
    unsigned target = (e + 1 + (c + h) % 2) % 3;
    local += co_await pool->Await(target, [h] { return int64_t{h}; });
  }
  sum->fetch_add(local);
}

asio::awaitable<void> HopOnce(EnginePool* pool, unsigned target) {
  co_await pool->Await(target, [] { return 1; });
}

class EnginePoolTest : public ::testing::TestWithParam<uint32_t> {
 protected:
  EnginePoolTest() : pool_(3, EngineOptions{.spin_us = GetParam()}) { pool_.Start(); }
  ~EnginePoolTest() override {
    pool_.Stop();
    pool_.Join();
  }
  EnginePool pool_;
};

TEST_P(EnginePoolTest, AwaitReturnsValueAndResumesOnCaller) {
  unsigned ran_on = 99, resumed_on = 99;
  RunCoroOn(pool_, 0, [&]() -> asio::awaitable<void> {
    ran_on = co_await pool_.Await(1, [] { return Engine::Current()->index(); });
    resumed_on = Engine::Current()->index();
  });
  EXPECT_EQ(ran_on, 1u);
  EXPECT_EQ(resumed_on, 0u);
}

TEST_P(EnginePoolTest, AwaitVoidAndMoveOnlyResults) {
  bool ran = false;
  std::unique_ptr<std::string> s;
  RunCoroOn(pool_, 2, [&]() -> asio::awaitable<void> {
    co_await pool_.Await(0, [&] { ran = Engine::Current()->index() == 0; });
    s = co_await pool_.Await(1, [] { return std::make_unique<std::string>("hop"); });
  });
  EXPECT_TRUE(ran);
  ASSERT_TRUE(s);
  EXPECT_EQ(*s, "hop");
}

TEST_P(EnginePoolTest, AwaitOnOwnEngineRunsInline) {
  int result = 0;
  RunCoroOn(pool_, 1, [&]() -> asio::awaitable<void> {
    bool inline_ran = false;
    // Inline means fn ran before Await's awaitable was resumed by anyone else.
    result = co_await pool_.Await(1, [&] {
      inline_ran = Engine::Current()->index() == 1;
      return 42;
    });
    EXPECT_TRUE(inline_ran);
  });
  EXPECT_EQ(result, 42);
}

TEST_P(EnginePoolTest, AwaitManyRunsOnEachTarget) {
  std::vector<int> seen(3, -1);
  RunCoroOn(pool_, 0, [&]() -> asio::awaitable<void> {
    const unsigned targets[] = {2, 0, 1};
    co_await pool_.AwaitMany(targets, [&](unsigned j) {
      seen[j] = static_cast<int>(Engine::Current()->index());
    });
    EXPECT_EQ(Engine::Current()->index(), 0u);
  });
  EXPECT_EQ(seen, (std::vector<int>{0, 1, 2}));
}

TEST_P(EnginePoolTest, AwaitManySubsetsAndLocalOnly) {
  std::vector<int> hits(3, 0);
  RunCoroOn(pool_, 1, [&]() -> asio::awaitable<void> {
    const unsigned local[] = {1};
    co_await pool_.AwaitMany(local, [&](unsigned j) { hits[j]++; });
    const unsigned remote[] = {2};
    co_await pool_.AwaitMany(remote, [&](unsigned j) { hits[j]++; });
    co_await pool_.AwaitMany(std::span<const unsigned>(), [&](unsigned j) { hits[j]++; });
  });
  EXPECT_EQ(hits, (std::vector<int>{0, 1, 1}));
}

TEST_P(EnginePoolTest, AwaitRethrowsOnTheCallersEngine) {
  for (unsigned target : {1u, 0u}) {  // a hop, and inline
    bool caught = false;
    unsigned caught_on = 99;
    RunCoroOn(pool_, 0, [&]() -> asio::awaitable<void> {
      try {
        co_await pool_.Await(target, []() -> int { throw std::length_error("too long"); });
      } catch (const std::length_error& e) {
        caught = std::string(e.what()) == "too long";
        caught_on = Engine::Current()->index();
      }
      // The engine still serves hops afterwards.
      EXPECT_EQ(co_await pool_.Await(1, [] { return 7; }), 7);
      co_await pool_.Await(2, [] {});
    });
    EXPECT_TRUE(caught) << target;
    EXPECT_EQ(caught_on, 0u);
  }
}

TEST_P(EnginePoolTest, AwaitManyRethrowsAfterEveryBranchFinished) {
  for (unsigned home : {0u, 1u}) {  // with and without a local branch
    std::atomic<int> finished{0};
    bool caught = false;
    RunCoroOn(pool_, home, [&]() -> asio::awaitable<void> {
      const unsigned targets[] = {0, 1, 2};
      try {
        co_await pool_.AwaitMany(targets, [&](unsigned j) {
          if (j != 2) throw std::bad_alloc();
          // The branch that does not throw is slow: the caller must still wait for it.
          std::this_thread::sleep_for(std::chrono::milliseconds(20));
          finished.fetch_add(1);
        });
      } catch (const std::bad_alloc&) {
        caught = finished.load() == 1;
      }
    });
    EXPECT_TRUE(caught) << home;
  }
}

TEST_P(EnginePoolTest, AwaitAllRunsEverywhere) {
  std::vector<int> hits(3, 0);
  RunCoroOn(pool_, 2, [&]() -> asio::awaitable<void> {
    for (int i = 0; i < 100; ++i) {
      co_await pool_.AwaitAll([&](unsigned j) { hits[j] += Engine::Current()->index() == j; });
    }
  });
  EXPECT_EQ(hits, (std::vector<int>{100, 100, 100}));
}

// Many coroutines hopping concurrently between all engines in both directions.
TEST_P(EnginePoolTest, ManyConcurrentHops) {
  const int kCoros = 64, kHops = 2000 / kScale;
  std::atomic<int64_t> sum{0};
  std::atomic<int> finished{0};
  std::promise<void> all_done;
  for (unsigned e = 0; e < 3; ++e) {
    pool_.Post(e, [&, e] {
      for (int c = 0; c < kCoros; ++c) {
        asio::co_spawn(pool_[e].context(), HopLoop(&pool_, e, c, kHops, &sum), [&](std::exception_ptr ex) {
          if (ex) ABSL_RAW_LOG(FATAL, "coroutine threw");
          if (finished.fetch_add(1) + 1 == 3 * kCoros) all_done.set_value();
        });
      }
    });
  }
  all_done.get_future().get();
  EXPECT_EQ(sum.load(), int64_t{3} * kCoros * (int64_t{kHops} * (kHops - 1) / 2));
}

TEST_P(EnginePoolTest, RunOnAllBlocking) {
  std::vector<int> seen(3, -1);
  for (int round = 0; round < 200; ++round) {
    pool_.RunOnAllBlocking([&](unsigned j) { seen[j] = Engine::Current()->index(); });
  }
  EXPECT_EQ(seen, (std::vector<int>{0, 1, 2}));
}

INSTANTIATE_TEST_SUITE_P(SpinAndNoSpin, EnginePoolTest, ::testing::Values(0u, 30u));

TEST(EnginePoolStandaloneTest, BackgroundEngineRunsTasksAtIdlePriorityUnpinned) {
  EnginePool pool(2, EngineOptions{.spin_us = 30, .pin_cpus = true});
  pool.Start();
  std::promise<int> policy;
  std::promise<unsigned> index;
  std::promise<int> cpus;
  pool.background().Post([&] {
    index.set_value(Engine::Current() == &pool.background() ? Engine::Current()->index() : 99);
    policy.set_value(sched_getscheduler(0));
    cpu_set_t set;
    cpus.set_value(sched_getaffinity(0, sizeof(set), &set) == 0 ? CPU_COUNT(&set) : -1);
  });
  EXPECT_EQ(index.get_future().get(), 2u) << "index size(), after the engines";
  EXPECT_EQ(policy.get_future().get(), SCHED_IDLE);
  cpu_set_t mine;
  ASSERT_EQ(sched_getaffinity(0, sizeof(mine), &mine), 0);
  EXPECT_EQ(cpus.get_future().get(), CPU_COUNT(&mine)) << "not pinned: every CPU the test may use";
  EXPECT_EQ(pool.size(), 2u);
  std::promise<int> engine_policy;
  pool.Post(0, [&] { engine_policy.set_value(sched_getscheduler(0)); });
  EXPECT_EQ(engine_policy.get_future().get(), SCHED_OTHER) << "the engines keep the default";
  pool.Stop();
  pool.Join();
}

TEST(EnginePoolStandaloneTest, AvailableCpusAtLeastOne) {
  unsigned n = AvailableCpus();
  EXPECT_GE(n, 1u);
  EXPECT_LE(n, std::thread::hardware_concurrency() == 0 ? 1024u
                                                       : std::thread::hardware_concurrency());
}

TEST(EnginePoolStandaloneTest, DestroyWithoutJoinAndPendingHops) {
  // A coroutine parked in a hop whose target engine is already stopped: tearing the pool down
  // must neither hang nor leak (ASan checks the latter).
  auto pool = std::make_unique<EnginePool>(2);
  pool->Start();
  pool->Post(1, [&] {});
  pool->RunOnAllBlocking([](unsigned) {});
  pool->operator[](1).Stop();
  pool->operator[](1).Join();
  std::promise<void> spawned;
  pool->Post(0, [&] {
    asio::co_spawn((*pool)[0].context(), HopOnce(pool.get(), 1), [](std::exception_ptr) {});
    spawned.set_value();
  });
  spawned.get_future().get();
  pool.reset();
}

}  // namespace
}  // namespace dashkv::io
