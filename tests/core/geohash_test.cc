#include "core/geohash.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <set>
#include <string>

namespace dashkv::geo {
namespace {

// Redis's reply text of a coordinate: "%.17Lf" without trailing zeros.
std::string Human(double v) {
  char buf[128];
  int n = std::snprintf(buf, sizeof(buf), "%.17Lf", static_cast<long double>(v));
  std::string s(buf, n);
  while (s.back() == '0') s.pop_back();
  if (s.back() == '.') s.pop_back();
  return s;
}

std::string Fixed4(double v) {
  char buf[64];
  return std::string(buf, std::snprintf(buf, sizeof(buf), "%.4f", v));
}

// Expected values below are Redis 7.0.15's replies for the same input.
TEST(GeohashTest, ScoreOfKnownPoints) {
  EXPECT_EQ(ScoreOf({13.361389, 38.115556}), 3479099956230698.0);
  EXPECT_EQ(ScoreOf({15.087269, 37.502669}), 3479447370796909.0);
  // The top edges put a bit above the 52: latitude's at bit 52, longitude's at bit 53.
  EXPECT_EQ(ScoreOf({-180, 85.05112878}), 4503599627370496.0);
  EXPECT_EQ(ScoreOf({180, -85.05112878}), 9007199254740992.0);
}

TEST(GeohashTest, PointOfScoreIsTheCellCentre) {
  Point p = PointOfScore(3479099956230698.0);
  EXPECT_EQ(Human(p.lon), "13.36138933897018433");
  EXPECT_EQ(Human(p.lat), "38.11555639549629859");
  p = PointOfScore(4503599627370496.0);
  EXPECT_EQ(Human(p.lon), "-179.99999731779098511");
  EXPECT_EQ(Human(p.lat), "85.0511287799999991");  // clamped to the limit
  p = PointOfScore(9007199254740992.0);
  EXPECT_EQ(Human(p.lon), "180");
  EXPECT_EQ(Human(p.lat), "-85.05112751263942528");
}

TEST(GeohashTest, ScoresNoGeoaddWroteDecodeAsRedis) {
  // -5 and 9.3e18 read as (nearly) all ones: clamped to the north-east corner; 1e300 and 2^64
  // read as 0: the south-west cell.
  for (double s : {-5.0, 9.3e18}) {
    Point p = PointOfScore(s);
    EXPECT_EQ(Human(p.lon), "180") << s;
    EXPECT_EQ(Human(p.lat), "85.0511287799999991") << s;
    EXPECT_EQ(HashString(s), "bp05b5048p0") << s;
  }
  for (double s : {1e300, 18446744073709551615.0}) {
    Point p = PointOfScore(s);
    EXPECT_EQ(Human(p.lon), "-179.99999731779098511") << s;
    EXPECT_EQ(Human(p.lat), "-85.05112751263942528") << s;
    EXPECT_EQ(HashString(s), "00bh0hbj200") << s;
  }
}

TEST(GeohashTest, HashStringUsesTheStandardLatitudeRange) {
  EXPECT_EQ(HashString(3479099956230698.0), "sqc8b49rny0");
  EXPECT_EQ(HashString(3479447370796909.0), "sqdtr74hyu0");
}

TEST(GeohashTest, Distances) {
  Point palermo = PointOfScore(3479099956230698.0);
  Point catania = PointOfScore(3479447370796909.0);
  EXPECT_EQ(Fixed4(Distance(palermo, catania)), "166274.1516");
  EXPECT_EQ(Fixed4(Distance(palermo, catania) / 1000), "166.2742");
  // Same meridian: the latitude difference.
  Point o = PointOfScore(ScoreOf({0, 0})), n = PointOfScore(ScoreOf({0, 1}));
  Point s = PointOfScore(ScoreOf({0, -1}));
  EXPECT_EQ(Fixed4(Distance(o, n)), "111226.0989");
  EXPECT_EQ(Fixed4(Distance(s, n) / 1000), "222.4525");
  EXPECT_EQ(Distance(o, n), LatDistance(o.lat, n.lat));
}

TEST(GeohashTest, ValidPointLimits) {
  EXPECT_TRUE(ValidPoint({180, 85.05112878}));
  EXPECT_TRUE(ValidPoint({-180, -85.05112878}));
  EXPECT_FALSE(ValidPoint({180.0000001, 0}));
  EXPECT_FALSE(ValidPoint({0, 85.06}));
  EXPECT_FALSE(ValidPoint({NAN, 0}));
  EXPECT_FALSE(ValidPoint({0, INFINITY}));
}

TEST(GeohashTest, EncodeDecodeRoundTripStaysInTheCell) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> lon(-180, 180), lat(kLatMin, kLatMax);
  for (int i = 0; i < 10000; ++i) {
    Point p{lon(rng), lat(rng)};
    for (int step : {1, 5, 13, 26}) {
      std::optional<Cell> c = EncodeMercator(p, step);
      ASSERT_TRUE(c);
      Area a = DecodeMercator(*c);
      EXPECT_LE(a.lon.min, p.lon);
      EXPECT_GE(a.lon.max, p.lon);
      EXPECT_LE(a.lat.min, p.lat);
      EXPECT_GE(a.lat.max, p.lat);
    }
  }
  EXPECT_FALSE(EncodeMercator({0, 86}, 26));
}

TEST(GeohashTest, NeighboursWrapAroundTheGrid) {
  // Step 2: a 4x4 grid. Cell (lon 3, lat 0) east -> (0, 0); south -> (3, 3).
  Cell c = *EncodeMercator({170, -80}, 2);
  Area a = DecodeMercator(c);
  EXPECT_GT(a.lon.max, 170);
  Area east = DecodeMercator(Neighbour(c, 1, 0));
  EXPECT_EQ(east.lon.min, -180);
  Area south = DecodeMercator(Neighbour(c, 0, -1));
  EXPECT_EQ(south.lat.max, kLatMax);
  Area west = DecodeMercator(Neighbour(c, -1, 0));
  EXPECT_EQ(west.lon.max, a.lon.min);
  Area north = DecodeMercator(Neighbour(c, 0, 1));
  EXPECT_EQ(north.lat.min, a.lat.max);
  EXPECT_EQ(Neighbour(Neighbour(c, 1, 1), -1, -1), c);
}

TEST(GeohashTest, EstimateStep) {
  EXPECT_EQ(EstimateStep(0, 0), 26);
  EXPECT_EQ(EstimateStep(1, 0), 24);       // 1 m doubles 25 times past the Mercator half width
  EXPECT_EQ(EstimateStep(200000, 0), 6);
  EXPECT_EQ(EstimateStep(200000, 70), 5);  // wider cells towards the poles
  EXPECT_EQ(EstimateStep(200000, -81), 4);
  EXPECT_EQ(EstimateStep(1e9, 0), 1);
  EXPECT_EQ(EstimateStep(INFINITY, 0), 1);
}

TEST(GeohashTest, ScoreIntervalCoversTheCell) {
  Cell c = *EncodeMercator({13.361389, 38.115556}, 10);
  auto [lo, hi] = ScoreInterval(c);
  EXPECT_EQ(hi - lo, uint64_t{1} << 32);
  EXPECT_LE(lo, 3479099956230698u);
  EXPECT_GT(hi, 3479099956230698u);
}

// Brute force: every point inside a shape is in one of the cells the search reads.
TEST(GeohashTest, SearchCellsCoverEveryPointInside) {
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> lon(-180, 180), lat(-84, 84), unit(0, 1);
  for (int q = 0; q < 300; ++q) {
    Shape s;
    s.center = {lon(rng), lat(rng)};
    s.to_meters = 1000;
    if (q % 2) {
      s.kind = Shape::Kind::kBox;
      s.width = 1 + unit(rng) * 2000;
      s.height = 1 + unit(rng) * 2000;
    } else {
      s.radius = 1 + unit(rng) * 1000;
    }
    SearchCells cells = CellsToSearch(s);
    for (int i = 0; i < 2000; ++i) {
      // Points near the centre, some of them inside.
      Point p{s.center.lon + (unit(rng) - 0.5) * 40, s.center.lat + (unit(rng) - 0.5) * 30};
      if (!ValidPoint(p)) continue;
      Point stored = PointOfScore(ScoreOf(p));
      if (!DistanceIfInside(s, stored)) continue;
      const auto score = static_cast<uint64_t>(ScoreOf(p));
      bool found = false;
      for (const Cell& c : cells) {
        if (c.none()) continue;
        auto [lo, hi] = ScoreInterval(c);
        found |= score >= lo && score < hi;
      }
      EXPECT_TRUE(found) << "query " << q << " point " << p.lon << "," << p.lat;
    }
  }
}

TEST(GeohashTest, BoxTestsMeridianAndParallelDistances) {
  Shape s;
  s.kind = Shape::Kind::kBox;
  s.center = {0, 0};
  s.width = 200;
  s.height = 100;
  s.to_meters = 1000;
  EXPECT_TRUE(DistanceIfInside(s, {0.8, 0.4}));
  EXPECT_FALSE(DistanceIfInside(s, {0.8, 0.5}));   // 55.6 km north of the centre > 50
  EXPECT_FALSE(DistanceIfInside(s, {0.95, 0.1}));  // 105.7 km east > 100
  s.kind = Shape::Kind::kRadius;
  s.radius = 99.5;
  EXPECT_TRUE(DistanceIfInside(s, {0.8, 0.4}));  // 99.47 km away
  s.radius = 99.4;
  EXPECT_FALSE(DistanceIfInside(s, {0.8, 0.4}));
}

}  // namespace
}  // namespace dashkv::geo
