#include "server/observability/latency_monitor.h"

#include <gtest/gtest.h>

namespace dashkv {
namespace {

TEST(LatencyMonitorTest, SameSecondKeepsTheLargest) {
  LatencyMonitor m;
  m.Add("command", 5, 1000);
  m.Add("command", 9, 1000);
  m.Add("command", 3, 1000);
  auto h = m.History("command");
  ASSERT_EQ(h.size(), 1u);
  EXPECT_EQ(h[0].ms, 9);
  m.Add("command", 2, 1001);
  h = m.History("command");
  ASSERT_EQ(h.size(), 2u);
  EXPECT_EQ(h[1].time, 1001);
  auto latest = m.LatestSamples();
  ASSERT_EQ(latest.size(), 1u);
  EXPECT_EQ(latest[0].ms, 2);
  EXPECT_EQ(latest[0].max_ms, 9);
}

TEST(LatencyMonitorTest, KeepsTheLast160Samples) {
  LatencyMonitor m;
  for (int s = 0; s < 500; ++s) m.Add("expire-cycle", s + 1, 1000 + s);
  auto h = m.History("expire-cycle");
  ASSERT_EQ(h.size(), LatencyMonitor::kSamples);
  EXPECT_EQ(h.front().time, 1000 + 500 - 160);
  EXPECT_EQ(h.back().time, 1499);
  EXPECT_EQ(m.LatestSamples()[0].max_ms, 500);
}

TEST(LatencyMonitorTest, ResetNamedOrAll) {
  LatencyMonitor m;
  m.Add("a", 1, 1);
  m.Add("b", 1, 1);
  EXPECT_EQ(m.Reset({"a", "zzz"}), 1u);
  EXPECT_EQ(m.LatestSamples().size(), 1u);
  EXPECT_EQ(m.Reset({}), 1u);
  EXPECT_TRUE(m.LatestSamples().empty());
}

TEST(LatencyMonitorTest, GraphAndDoctor) {
  LatencyMonitor m;
  EXPECT_TRUE(m.Graph("command", 100).empty());
  for (int s = 0; s < 100; ++s) m.Add("command", 1 + s % 7, s);
  std::string g = m.Graph("command", 100);
  EXPECT_EQ(g.rfind("command - high 7 ms, low 1 ms (all time high 7 ms)\n", 0), 0u) << g;
  EXPECT_NE(m.Doctor(1).find("command"), std::string::npos);
  LatencyMonitor empty;
  EXPECT_FALSE(empty.Doctor(0).empty());
}

}  // namespace
}  // namespace dashkv
