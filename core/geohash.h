// Geohash geometry of the GEO commands: 52-bit interleaved cell numbers (the sorted-set scores
// Redis stores), their decoding, Haversine distances, the 11-character base32 GEOHASH text, and
// the search plan of a radius or box query (a cell and its 8 neighbours at an estimated step).
// Every floating-point step follows Redis's order of operations, so the same input gives the
// same bits, coordinates and distances as Redis 7.0.
// Thread: pure functions.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>

namespace dashkv::geo {

// The projection's limits (EPSG:900913 / web Mercator latitude bounds).
inline constexpr double kLonMin = -180;
inline constexpr double kLonMax = 180;
inline constexpr double kLatMin = -85.05112878;
inline constexpr double kLatMax = 85.05112878;
inline constexpr int kMaxStep = 26;  // bits per coordinate: 2 * 26 = 52-bit scores
inline constexpr double kEarthRadiusM = 6372797.560856;
inline constexpr double kMercatorMax = 20037726.37;  // half the Mercator world width, metres

struct Point {
  double lon = 0;
  double lat = 0;
};

struct Interval {
  double min = 0;
  double max = 0;
};

// A cell: `step` bits of longitude and of latitude, interleaved in `bits` (longitude in the odd
// positions, latitude in the even ones; the top pair is the most significant). step 0 with
// bits 0 is "no cell" (a neighbour excluded from a search).
struct Cell {
  uint64_t bits = 0;
  uint8_t step = 0;

  bool none() const { return bits == 0 && step == 0; }
  bool operator==(const Cell&) const = default;
};

// A cell with its bounds.
struct Area {
  Cell cell;
  Interval lon;
  Interval lat;
};

// Returns whether GEOADD and the search commands accept the point (lon in [-180, 180], lat in
// [kLatMin, kLatMax]; NaN fails).
bool ValidPoint(Point p);

// Returns the cell of `step` bits per coordinate containing `p` within the given ranges, or
// nullopt when p lies outside them (or a range is empty). REQUIRES: 1 <= step <= 32.
std::optional<Cell> Encode(Interval lon, Interval lat, Point p, int step);
// Encode over the Mercator ranges ([-180, 180] x [kLatMin, kLatMax]).
std::optional<Cell> EncodeMercator(Point p, int step);

// Returns the bounds of `c` within the given ranges.
Area Decode(Interval lon, Interval lat, Cell c);
Area DecodeMercator(Cell c);
// Returns the centre of an area, clamped to the Mercator limits.
Point Center(const Area& a);

// Returns the 52-bit score of `c`: its bits shifted to the 52-bit alignment.
uint64_t Align52(Cell c);
// Returns the sorted-set score GEOADD stores for `p`. REQUIRES: ValidPoint(p).
double ScoreOf(Point p);
// Returns the point a score stands for (the centre of its 52-bit cell). Any score decodes; one
// that no GEOADD wrote gives whatever its bits say (converted to an integer as x86-64 does).
Point PointOfScore(double score);
// Returns the 11-character GEOHASH text of a score: its point re-encoded over the standard
// latitude range [-90, 90], as 10 base32 digits of 5 bits and a trailing '0'.
std::string HashString(double score);

// Great-circle distance in metres (Haversine on a sphere of kEarthRadiusM).
double Distance(Point a, Point b);
// Distance in metres along a meridian between two latitudes.
double LatDistance(double lat1, double lat2);

// The area of a search, in metres (radius, or box width and height) around `center`.
struct Shape {
  enum class Kind : uint8_t { kRadius, kBox };
  Kind kind = Kind::kRadius;
  Point center;
  double radius = 0;      // kRadius, in `unit`s
  double width = 0;       // kBox, in `unit`s
  double height = 0;      // kBox, in `unit`s
  double to_meters = 1;   // metres per unit (m 1, km 1000, ft 0.3048, mi 1609.34)
};

// Returns the distance in metres from the shape's centre to `p` when p lies inside the shape,
// else nullopt. A box is tested on the meridian and parallel distances from the centre.
std::optional<double> DistanceIfInside(const Shape& shape, Point p);

// Returns the cell step whose cells are about `range_m` metres wide at latitude `lat`, less one
// or two near the poles; 26 for a zero range. In [1, 26].
int EstimateStep(double range_m, double lat);

// The cells a search reads, in Redis's order: the centre cell, then north, south, east, west,
// north-east, north-west, south-east, south-west. Excluded neighbours are none().
using SearchCells = std::array<Cell, 9>;
SearchCells CellsToSearch(const Shape& shape);

// Returns the half-open score interval [first, second) of the members inside `c`.
std::pair<uint64_t, uint64_t> ScoreInterval(Cell c);

// Returns `c` moved by `dlon` cells east (negative: west) and `dlat` cells north (negative:
// south), wrapping around at the edges of the cell grid. REQUIRES: c.step >= 1.
Cell Neighbour(Cell c, int dlon, int dlat);

}  // namespace dashkv::geo
