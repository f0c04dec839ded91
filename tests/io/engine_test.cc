#include "io/engine.h"

#include <gtest/gtest.h>

#include <boost/asio/post.hpp>
#include <chrono>

#include <atomic>
#include <future>
#include <memory>
#include <new>
#include <stdexcept>
#include <thread>
#include <vector>

namespace dashkv::io {
namespace {

#ifdef DASHKV_SANITIZER
constexpr int kScale = 10;  // sanitizers are ~10x slower
#else
constexpr int kScale = 1;
#endif

TEST(EngineTest, PostRunsOnTheEngineThread) {
  Engine engine(3, {});
  engine.Start();
  std::promise<std::pair<Engine*, unsigned>> seen;
  engine.Post([&] { seen.set_value({Engine::Current(), Engine::Current()->index()}); });
  auto [current, index] = seen.get_future().get();
  EXPECT_EQ(current, &engine);
  EXPECT_EQ(index, 3u);
  EXPECT_EQ(Engine::Current(), nullptr);
  EXPECT_FALSE(engine.IsMyThread());
  engine.Stop();
  engine.Join();
}

TEST(EngineTest, InboxDepthCountsTheMessagesWaiting) {
  Engine engine(0, {});
  engine.Start();
  std::promise<void> queued;
  std::promise<size_t> depth;
  // The first task waits (on the engine thread) until five more are queued behind it.
  engine.Post([&] {
    queued.get_future().wait();
    depth.set_value(engine.InboxDepth());
  });
  std::atomic<int> ran{0};
  for (int i = 0; i < 5; ++i) engine.Post([&] { ran.fetch_add(1); });
  queued.set_value();
  EXPECT_EQ(depth.get_future().get(), 5u);
  std::promise<size_t> after;
  engine.Post([&] { after.set_value(engine.InboxDepth()); });
  EXPECT_EQ(after.get_future().get(), 0u);  // the five ran before it, nothing after
  EXPECT_EQ(ran.load(), 5);
  engine.Stop();
  engine.Join();
}

TEST(EngineTest, WorkDoneCountsMessagesAndHandlersNotDeferredTasks) {
  Engine engine(0, {});
  engine.Start();
  // Reads the counter on the engine thread, where it lives.
  auto work_done = [&] {
    std::promise<uint64_t> p;
    engine.Post([&] { p.set_value(engine.work_done()); });
    return p.get_future().get();
  };
  const uint64_t before = work_done();
  for (int i = 0; i < 5; ++i) engine.Post([] {});
  std::promise<void> handled;
  boost::asio::post(engine.context(), [&] { handled.set_value(); });
  handled.get_future().wait();
  std::promise<void> deferred;
  engine.Post([&] { engine.Defer([&] { deferred.set_value(); }); });
  deferred.get_future().wait();
  // The reading messages (one before, this one), the five, the handler, the deferring message.
  EXPECT_EQ(work_done() - before, 1u + 5u + 1u + 1u);
  engine.Stop();
  engine.Join();
}

TEST(EngineTest, IdleTimeGrowsWhileTheEngineHasNothingToRun) {
  Engine engine(0, EngineOptions{.spin_us = 0});
  engine.Start();
  auto idle = [&] {
    std::promise<std::pair<uint64_t, uint64_t>> p;
    engine.Post([&] { p.set_value({engine.idle_ticks(), engine.idle_stretches()}); });
    return p.get_future().get();
  };
  const auto [ticks0, stretches0] = idle();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // the engine sleeps meanwhile
  const auto [ticks1, stretches1] = idle();
  EXPECT_GT(stretches1, stretches0);
  EXPECT_GT(ticks1, ticks0);
  // A task that keeps the engine busy adds no idle time while it runs.
  std::promise<std::pair<uint64_t, uint64_t>> during;
  engine.Post([&] {
    const uint64_t t = engine.idle_ticks();
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    during.set_value({t, engine.idle_ticks()});
  });
  const auto [start, end] = during.get_future().get();
  EXPECT_EQ(start, end);
  engine.Stop();
  engine.Join();
}

TEST(EngineTest, PostAcceptsAnyInvocableTask) {
  Engine engine(0, {});
  engine.Start();
  std::promise<int> done;
  Engine::Task task = [&done, p = std::make_unique<int>(7)]() mutable { done.set_value(*p); };
  engine.Post(std::move(task));
  EXPECT_EQ(done.get_future().get(), 7);
}

// Several producers, each posting an increasing sequence: the engine must see every producer's
// sequence in order and lose nothing.
void RunOrderingTest(EngineOptions options, int producers, int per_producer) {
  Engine engine(0, options);
  engine.Start();
  std::vector<int> last(producers, -1);  // engine-local
  std::atomic<int> errors{0};
  std::atomic<int64_t> remaining{static_cast<int64_t>(producers) * per_producer};
  std::promise<void> all_done;
  std::vector<std::thread> threads;
  for (int p = 0; p < producers; ++p) {
    threads.emplace_back([&, p] {
      for (int i = 0; i < per_producer; ++i) {
        engine.Post([&, p, i] {
          if (last[p] + 1 != i) errors.fetch_add(1, std::memory_order_relaxed);
          last[p] = i;
          if (remaining.fetch_sub(1, std::memory_order_relaxed) == 1) all_done.set_value();
        });
      }
    });
  }
  for (auto& t : threads) t.join();
  all_done.get_future().get();
  EXPECT_EQ(errors.load(), 0);
  engine.Stop();
  engine.Join();
  for (int p = 0; p < producers; ++p) EXPECT_EQ(last[p], per_producer - 1);
}

TEST(EngineTest, PerProducerOrderSingleProducer) { RunOrderingTest({}, 1, 200000 / kScale); }

TEST(EngineTest, MpscUnderContentionLosesNothing) {
  RunOrderingTest({}, 4, 1000000 / kScale);
}

TEST(EngineTest, MpscUnderContentionNoSpin) {
  RunOrderingTest({.spin_us = 0}, 4, 500000 / kScale);
}

// Every round lets the engine fall asleep (spin_us = 0), then posts: a lost wake-up would hang.
TEST(EngineTest, PostToSleepingEngineAlwaysRuns) {
  Engine engine(0, {.spin_us = 0});
  engine.Start();
  for (int round = 0; round < 20000 / kScale; ++round) {
    std::promise<void> done;
    engine.Post([&] { done.set_value(); });
    done.get_future().get();
  }
  engine.Stop();
  engine.Join();
}

// Two producers racing to wake the same sleeping engine, many rounds.
TEST(EngineTest, ConcurrentWakeUpsAlwaysRun) {
  Engine engine(0, {.spin_us = 0});
  engine.Start();
  for (int round = 0; round < 5000 / kScale; ++round) {
    std::atomic<int> count{0};
    std::promise<void> done;
    auto task = [&] {
      if (count.fetch_add(1) == 1) done.set_value();
    };
    std::thread other([&] { engine.Post(task); });
    engine.Post(task);
    other.join();
    done.get_future().get();
  }
  engine.Stop();
  engine.Join();
}

TEST(EngineTest, TasksPostedFromTheEngineRunLater) {
  Engine engine(0, {.spin_us = 0});
  engine.Start();
  std::promise<std::vector<int>> result;
  engine.Post([&] {
    auto order = std::make_shared<std::vector<int>>();
    Engine::Current()->Post([&, order] {
      order->push_back(2);
      result.set_value(*order);
    });
    order->push_back(1);
  });
  EXPECT_EQ(result.get_future().get(), (std::vector<int>{1, 2}));
}

TEST(EngineTest, StopDropsQueuedTasksWithoutLeaks) {
  auto engine = std::make_unique<Engine>(0, EngineOptions{});
  // Not started: tasks stay queued and are destroyed with the engine.
  auto counter = std::make_shared<int>(0);
  for (int i = 0; i < 100; ++i) engine->Post([counter] { ++*counter; });
  EXPECT_EQ(counter.use_count(), 101);
  engine.reset();
  EXPECT_EQ(counter.use_count(), 1);
  EXPECT_EQ(*counter, 0);
}

TEST(EngineTest, StopWakesASleepingEngine) {
  Engine engine(0, {.spin_us = 0});
  engine.Start();
  std::promise<void> ran;
  engine.Post([&] { ran.set_value(); });
  ran.get_future().get();
  engine.Stop();
  engine.Join();  // hangs if Stop() could not wake run_one()
}

TEST(EngineDeathTest, EscapedExceptionAborts) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        Engine engine(0, {});
        engine.Start();
        engine.Post([] { throw std::runtime_error("boom"); });
        engine.Join();
      },
      "exception escaped a task");
}

TEST(EngineDeathTest, EscapedBadAllocAbortsAsOutOfMemory) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        Engine engine(0, {});
        engine.Start();
        engine.Post([] { throw std::bad_alloc(); });
        engine.Join();
      },
      "out of memory outside any command");
}

}  // namespace
}  // namespace dashkv::io
