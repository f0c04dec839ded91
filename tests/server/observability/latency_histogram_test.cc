#include "server/observability/latency_histogram.h"

#include <gtest/gtest.h>

#include <random>

namespace dashkv {
namespace {

TEST(LatencyHistogramTest, EmptyHasNoPercentiles) {
  LatencyHistogram h;
  EXPECT_EQ(h.total(), 0u);
  EXPECT_EQ(h.ValueAtPercentile(50), 0u);
  EXPECT_EQ(h.total(), 0u);
}

TEST(LatencyHistogramTest, BucketBoundsContainTheirValues) {
  // Every value lies in its bucket, and the bucket is at most 1/16 of its lower bound wide.
  for (uint64_t v : {0ull, 1ull, 15ull, 16ull, 17ull, 31ull, 32ull, 1000ull, 1023ull, 1024ull,
                     123456789ull, (1ull << 46) + 12345, (1ull << 47) - 1}) {
    unsigned i = LatencyHistogram::Index(v);
    ASSERT_LT(i, LatencyHistogram::kBuckets);
    EXPECT_LE(v, LatencyHistogram::UpperBound(i)) << v;
    if (i > 0) {
      EXPECT_GT(v, LatencyHistogram::UpperBound(i - 1)) << v;
    }
    if (v >= 16) {
      EXPECT_LE(LatencyHistogram::UpperBound(i) - v, v / 16) << v;
    }
  }
}

TEST(LatencyHistogramTest, BoundsIncrease) {
  for (unsigned i = 1; i < LatencyHistogram::kBuckets; ++i) {
    EXPECT_GT(LatencyHistogram::UpperBound(i), LatencyHistogram::UpperBound(i - 1)) << i;
  }
}

TEST(LatencyHistogramTest, HugeValuesGoToTheLastBucket) {
  LatencyHistogram h;
  h.Record(UINT64_MAX);
  EXPECT_EQ(LatencyHistogram::Index(UINT64_MAX), LatencyHistogram::kBuckets - 1);
  EXPECT_EQ(h.total(), 1u);
}

TEST(LatencyHistogramTest, PercentilesWithinBucketPrecision) {
  LatencyHistogram h;
  for (uint64_t v = 1; v <= 10000; ++v) h.Record(v * 1000);  // 1 µs .. 10 ms
  auto near = [](uint64_t got, double want) {
    return got >= want && static_cast<double>(got) <= want * 1.07;
  };
  EXPECT_TRUE(near(h.ValueAtPercentile(50), 5000 * 1000.0)) << h.ValueAtPercentile(50);
  EXPECT_TRUE(near(h.ValueAtPercentile(99), 9900 * 1000.0)) << h.ValueAtPercentile(99);
  EXPECT_TRUE(near(h.ValueAtPercentile(100), 10000 * 1000.0)) << h.ValueAtPercentile(100);
  EXPECT_TRUE(near(h.ValueAtPercentile(0), 1000.0)) << h.ValueAtPercentile(0);
}

TEST(LatencyHistogramTest, MergeAddsCounts) {
  LatencyHistogram a, b;
  a.Record(100);
  b.Record(100);
  b.Record(5000);
  a.Merge(b);
  EXPECT_EQ(a.total(), 3u);
  uint64_t seen = 0;
  a.ForEachBucket([&](uint64_t, uint64_t n) { seen += n; });
  EXPECT_EQ(seen, 3u);
}

TEST(LatencyHistogramTest, PercentileText) {
  EXPECT_EQ(PercentileText(50), "50");
  EXPECT_EQ(PercentileText(99.9), "99.9");
  EXPECT_EQ(PercentileText(0), "0");
  EXPECT_EQ(PercentileText(100), "100");
  EXPECT_EQ(PercentileText(50.5), "50.5");
}

}  // namespace
}  // namespace dashkv
