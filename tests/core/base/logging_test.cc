// Tests for core/base/logging.h: CHECK aborts with its condition, text and place; DCHECK does
// the same only in debug builds and evaluates nothing under NDEBUG; LOG writes Redis's format.
#include "core/base/logging.h"

#include <gtest/gtest.h>

namespace dashkv {
namespace {

TEST(LoggingTest, PassingChecksDoNothing) {
  int evaluations = 0;
  CHECK(++evaluations == 1) << "not printed";
  CHECK_EQ(evaluations, 1);
  CHECK_LT(0, evaluations);
  EXPECT_EQ(evaluations, 1);
}

TEST(LoggingDeathTest, FailedCheckAbortsWithConditionTextAndPlace) {
  const int x = 3;
  EXPECT_DEATH(CHECK(x == 4) << "x was " << x,
               "Check failed: x == 4 x was 3 \\(.*logging_test.cc:[0-9]+\\)");
}

TEST(LoggingTest, CheckIsOneStatement) {
  // CHECK fits an unbraced if/else without capturing the else.
  bool reached_else = false;
  if (false)
    CHECK(false) << "never";
  else
    reached_else = true;
  EXPECT_TRUE(reached_else);
}

TEST(LoggingTest, DcheckEvaluatesOnlyInDebugBuilds) {
  int evaluations = 0;
  DCHECK(++evaluations == 1) << "debug only";
#ifdef NDEBUG
  EXPECT_EQ(evaluations, 0);
#else
  EXPECT_EQ(evaluations, 1);
#endif
}

#ifdef NDEBUG
TEST(LoggingTest, FailingDcheckIsSilentInRelease) { DCHECK(false) << "not evaluated"; }
#else
TEST(LoggingDeathTest, FailingDcheckAbortsInDebug) {
  EXPECT_DEATH(DCHECK(false) << "debug", "Check failed: false debug");
}
#endif

TEST(LoggingTest, LogWritesRedisFormatLine) {
  testing::internal::CaptureStderr();
  LOG(WARNING) << "disk " << 42 << " full";
  const std::string out = testing::internal::GetCapturedStderr();
  // "pid:M dd Mon yyyy hh:mm:ss.mmm # message (file:line)"
  EXPECT_TRUE(testing::internal::RE::PartialMatch(
      out, testing::internal::RE("^[0-9]+:M [0-9]+ [A-Z][a-z]+ [0-9]+ [0-9:.]+ # disk 42 full "
                                 "\\(.*logging_test.cc:[0-9]+\\)\n$")))
      << out;
}

TEST(LoggingDeathTest, LogFatalAborts) { EXPECT_DEATH(LOG(FATAL) << "bye", "bye"); }

}  // namespace
}  // namespace dashkv
