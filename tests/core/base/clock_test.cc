// Tests for core/base/clock.h: the real clock moves with wall time, a ScopedFakeClock replaces
// it for every thread and only moves when told, and the real clock comes back after it.
#include "core/base/clock.h"

#include <gtest/gtest.h>

#include <time.h>

#include <cstdint>
#include <thread>

namespace dashkv {
namespace {

int64_t SystemNowUs() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return int64_t{ts.tv_sec} * 1000000 + ts.tv_nsec / 1000;
}

TEST(ClockTest, RealClockIsWallTime) {
  const int64_t before = SystemNowUs();
  const int64_t now = NowUs();
  const int64_t after = SystemNowUs();
  EXPECT_LE(before, now);
  EXPECT_LE(now, after);
  const int64_t ms = NowMs();
  EXPECT_LE(before / 1000, ms);
  EXPECT_LE(ms, SystemNowUs() / 1000);
}

TEST(ClockTest, FakeClockStandsStillUntilMoved) {
  constexpr int64_t kStart = 1700000000123456;  // 2023-11-14, in microseconds
  ScopedFakeClock clock(kStart);
  EXPECT_EQ(NowUs(), kStart);
  EXPECT_EQ(NowMs(), kStart / 1000);
  EXPECT_EQ(NowUs(), kStart);

  clock.AdvanceMs(1500);
  EXPECT_EQ(NowUs(), kStart + 1500000);
  EXPECT_EQ(NowMs(), kStart / 1000 + 1500);

  clock.AdvanceUs(-2000000);
  EXPECT_EQ(NowUs(), kStart - 500000);

  clock.Set(42000);
  EXPECT_EQ(NowUs(), 42000);
  EXPECT_EQ(NowMs(), 42);
}

TEST(ClockTest, FakeClockIsSeenByOtherThreads) {
  ScopedFakeClock clock(5000000);
  int64_t seen = 0;
  std::thread t([&] { seen = NowMs(); });
  t.join();
  EXPECT_EQ(seen, 5000);
}

TEST(ClockTest, RealClockReturnsAfterFake) {
  { ScopedFakeClock clock(1000); }
  const int64_t before = SystemNowUs();
  EXPECT_GE(NowUs(), before);
}

TEST(ClockDeathTest, OneFakeClockAtATime) {
  ScopedFakeClock clock(1000);
  EXPECT_DEATH(ScopedFakeClock second(2000), "a fake clock is already set");
}

}  // namespace
}  // namespace dashkv
