// OutputLimitTracker: Redis's hard/soft output buffer limit rules, with the clock passed in.

#include "io/output_limit.h"

#include <gtest/gtest.h>

namespace dashkv::io {
namespace {

TEST(OutputLimitTest, ZeroDisablesBothLimits) {
  OutputLimitTracker t;
  EXPECT_FALSE(t.Exceeded({0, 0, 0}, 1ULL << 40, 0));
  EXPECT_FALSE(t.Exceeded({0, 0, 0}, 1ULL << 40, 1000));
}

TEST(OutputLimitTest, HardLimitAtOnce) {
  OutputLimitTracker t;
  OutputLimit limit{1000, 0, 0};
  EXPECT_FALSE(t.Exceeded(limit, 999, 0));
  EXPECT_TRUE(t.Exceeded(limit, 1000, 0));
}

TEST(OutputLimitTest, SoftLimitMustHoldLongerThanItsSeconds) {
  OutputLimitTracker t;
  OutputLimit limit{0, 100, 5};
  EXPECT_FALSE(t.Exceeded(limit, 100, 10));  // first seen above: the timer starts
  EXPECT_FALSE(t.Exceeded(limit, 200, 15));  // 5 s: not more than soft_seconds yet
  EXPECT_TRUE(t.Exceeded(limit, 200, 16));
}

TEST(OutputLimitTest, DroppingBelowSoftRestartsTheTimer) {
  OutputLimitTracker t;
  OutputLimit limit{0, 100, 5};
  EXPECT_FALSE(t.Exceeded(limit, 150, 0));
  EXPECT_FALSE(t.Exceeded(limit, 50, 4));   // drained: timer reset
  EXPECT_FALSE(t.Exceeded(limit, 150, 8));  // starts again here
  EXPECT_FALSE(t.Exceeded(limit, 150, 13));
  EXPECT_TRUE(t.Exceeded(limit, 150, 14));
}

TEST(OutputLimitTest, ClassLoadsWhatWasStored) {
  OutputLimitClass c;
  c.Store({33554432, 8388608, 60});
  OutputLimit l = c.Load();
  EXPECT_EQ(l.hard_bytes, 33554432u);
  EXPECT_EQ(l.soft_bytes, 8388608u);
  EXPECT_EQ(l.soft_seconds, 60);
}

}  // namespace
}  // namespace dashkv::io
