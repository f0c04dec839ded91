#include "core/geohash.h"

#include <cmath>
#include <utility>

namespace dashkv::geo {
namespace {

constexpr double kDegToRad = M_PI / 180.0;
constexpr Interval kLonRange{kLonMin, kLonMax};
constexpr Interval kMercatorLatRange{kLatMin, kLatMax};

double DegToRad(double deg) { return deg * kDegToRad; }
double RadToDeg(double rad) { return rad / kDegToRad; }

// Spreads the 32 bits of v to the even bit positions of the result.
uint64_t Spread(uint32_t v) {
  uint64_t x = v;
  x = (x | (x << 16)) & 0x0000FFFF0000FFFFULL;
  x = (x | (x << 8)) & 0x00FF00FF00FF00FFULL;
  x = (x | (x << 4)) & 0x0F0F0F0F0F0F0F0FULL;
  x = (x | (x << 2)) & 0x3333333333333333ULL;
  x = (x | (x << 1)) & 0x5555555555555555ULL;
  return x;
}

// Gathers the even bit positions of v into a 32-bit number (the inverse of Spread).
uint32_t Compact(uint64_t v) {
  uint64_t x = v & 0x5555555555555555ULL;
  x = (x | (x >> 1)) & 0x3333333333333333ULL;
  x = (x | (x >> 2)) & 0x0F0F0F0F0F0F0F0FULL;
  x = (x | (x >> 4)) & 0x00FF00FF00FF00FFULL;
  x = (x | (x >> 8)) & 0x0000FFFF0000FFFFULL;
  x = (x | (x >> 16)) & 0x00000000FFFFFFFFULL;
  return static_cast<uint32_t>(x);
}

uint64_t Interleave(uint32_t lat, uint32_t lon) { return Spread(lat) | (Spread(lon) << 1); }

// Converts a double to uint64 as an x86-64 compiler's unchecked cast does (cvttsd2si, with the
// 2^63 offset for large values): Redis reads a score's cell bits this way, so a score no GEOADD
// wrote (negative, huge) decodes to the same point on both.
uint64_t X86DoubleToU64(double d) {
  constexpr double kTwo63 = 9223372036854775808.0;
  auto truncate = [](double v) -> uint64_t {
    if (!(v >= -kTwo63 && v < kTwo63)) return uint64_t{1} << 63;  // the "integer indefinite"
    return static_cast<uint64_t>(static_cast<int64_t>(v));
  };
  if (!(d >= kTwo63)) return truncate(d);  // NaN takes this branch too
  return truncate(d - kTwo63) ^ (uint64_t{1} << 63);
}

// The bounds of a search shape: min/max longitude and latitude.
struct Bounds {
  double min_lon, min_lat, max_lon, max_lat;
};

Bounds BoundsOf(const Shape& s) {
  const bool radius = s.kind == Shape::Kind::kRadius;
  const double height = s.to_meters * (radius ? s.radius : s.height / 2);
  const double width = s.to_meters * (radius ? s.radius : s.width / 2);
  const double lat = s.center.lat, lon = s.center.lon;
  const double lat_delta = RadToDeg(height / kEarthRadiusM);
  const double lon_delta_top =
      RadToDeg(width / kEarthRadiusM / std::cos(DegToRad(lat + lat_delta)));
  const double lon_delta_bottom =
      RadToDeg(width / kEarthRadiusM / std::cos(DegToRad(lat - lat_delta)));
  // The parallel nearer the equator is the wider one: the southern hemisphere takes the
  // bottom edge's longitude span, the northern the top edge's (as Redis).
  const double lon_delta = lat < 0 ? lon_delta_bottom : lon_delta_top;
  return {lon - lon_delta, lat - lat_delta, lon + lon_delta, lat + lat_delta};
}

}  // namespace

bool ValidPoint(Point p) {
  return p.lon >= kLonMin && p.lon <= kLonMax && p.lat >= kLatMin && p.lat <= kLatMax;
}

std::optional<Cell> Encode(Interval lon, Interval lat, Point p, int step) {
  if (lon.max - lon.min == 0 || lat.max - lat.min == 0) return std::nullopt;
  // Redis refuses points outside the Mercator limits whatever the ranges.
  if (!ValidPoint(p)) return std::nullopt;
  if (p.lon > lon.max || p.lon < lon.min || p.lat > lat.max || p.lat < lat.min) {
    return std::nullopt;
  }
  double lat_offset = (p.lat - lat.min) / (lat.max - lat.min);
  double lon_offset = (p.lon - lon.min) / (lon.max - lon.min);
  lat_offset *= static_cast<double>(uint64_t{1} << step);
  lon_offset *= static_cast<double>(uint64_t{1} << step);
  return Cell{Interleave(static_cast<uint32_t>(lat_offset), static_cast<uint32_t>(lon_offset)),
              static_cast<uint8_t>(step)};
}

std::optional<Cell> EncodeMercator(Point p, int step) {
  return Encode(kLonRange, kMercatorLatRange, p, step);
}

Area Decode(Interval lon, Interval lat, Cell c) {
  const double lat_scale = lat.max - lat.min;
  const double lon_scale = lon.max - lon.min;
  const uint32_t ilat = Compact(c.bits);
  const uint32_t ilon = Compact(c.bits >> 1);
  const double cells = static_cast<double>(uint64_t{1} << c.step);
  // The index + 1 wraps in 32 bits as Redis's does (only a score above 2^63 reaches it).
  const uint32_t ilat_next = ilat + 1, ilon_next = ilon + 1;
  Area a;
  a.cell = c;
  a.lat.min = lat.min + (ilat * 1.0 / cells) * lat_scale;
  a.lat.max = lat.min + (ilat_next * 1.0 / cells) * lat_scale;
  a.lon.min = lon.min + (ilon * 1.0 / cells) * lon_scale;
  a.lon.max = lon.min + (ilon_next * 1.0 / cells) * lon_scale;
  return a;
}

Area DecodeMercator(Cell c) { return Decode(kLonRange, kMercatorLatRange, c); }

Point Center(const Area& a) {
  Point p{(a.lon.min + a.lon.max) / 2, (a.lat.min + a.lat.max) / 2};
  if (p.lon > kLonMax) p.lon = kLonMax;
  if (p.lon < kLonMin) p.lon = kLonMin;
  if (p.lat > kLatMax) p.lat = kLatMax;
  if (p.lat < kLatMin) p.lat = kLatMin;
  return p;
}

uint64_t Align52(Cell c) { return c.bits << (kMaxStep * 2 - c.step * 2); }

double ScoreOf(Point p) {
  std::optional<Cell> c = EncodeMercator(p, kMaxStep);
  return static_cast<double>(c ? Align52(*c) : 0);
}

Point PointOfScore(double score) {
  return Center(DecodeMercator(Cell{X86DoubleToU64(score), kMaxStep}));
}

std::string HashString(double score) {
  static constexpr char kAlphabet[] = "0123456789bcdefghjkmnpqrstuvwxyz";
  const Point p = PointOfScore(score);
  const uint64_t bits = Encode(kLonRange, Interval{-90, 90}, p, kMaxStep).value_or(Cell{}).bits;
  std::string out(11, '0');  // 52 bits make 10 digits and 2 bits; the 11th digit stays '0'
  for (int i = 0; i < 10; ++i) out[i] = kAlphabet[(bits >> (52 - (i + 1) * 5)) & 0x1f];
  return out;
}

double LatDistance(double lat1, double lat2) {
  return kEarthRadiusM * std::fabs(DegToRad(lat2) - DegToRad(lat1));
}

double Distance(Point a, Point b) {
  const double lon1 = DegToRad(a.lon), lon2 = DegToRad(b.lon);
  const double v = std::sin((lon2 - lon1) / 2);
  // On one meridian the Haversine reduces to the latitude difference.
  if (v == 0.0) return LatDistance(a.lat, b.lat);
  const double lat1 = DegToRad(a.lat), lat2 = DegToRad(b.lat);
  const double u = std::sin((lat2 - lat1) / 2);
  const double h = u * u + std::cos(lat1) * std::cos(lat2) * v * v;
  return 2.0 * kEarthRadiusM * std::asin(std::sqrt(h));
}

std::optional<double> DistanceIfInside(const Shape& s, Point p) {
  if (s.kind == Shape::Kind::kRadius) {
    const double d = Distance(s.center, p);
    if (d > s.radius * s.to_meters) return std::nullopt;
    return d;
  }
  const double width_m = s.width * s.to_meters, height_m = s.height * s.to_meters;
  if (LatDistance(p.lat, s.center.lat) > height_m / 2) return std::nullopt;
  if (Distance(p, Point{s.center.lon, p.lat}) > width_m / 2) return std::nullopt;
  return Distance(s.center, p);
}

int EstimateStep(double range_m, double lat) {
  if (range_m == 0) return kMaxStep;
  int step = 1;
  while (range_m < kMercatorMax) {
    range_m *= 2;
    ++step;
  }
  step -= 2;  // one cell of the step covers the range in most cases
  // Cells narrow towards the poles.
  if (lat > 66 || lat < -66) {
    --step;
    if (lat > 80 || lat < -80) --step;
  }
  if (step < 1) step = 1;
  if (step > kMaxStep) step = kMaxStep;
  return step;
}

Cell Neighbour(Cell c, int dlon, int dlat) {
  const uint64_t mask = (uint64_t{1} << c.step) - 1;
  const uint64_t lat = (Compact(c.bits) + static_cast<uint64_t>(int64_t{dlat})) & mask;
  const uint64_t lon = (Compact(c.bits >> 1) + static_cast<uint64_t>(int64_t{dlon})) & mask;
  return Cell{Interleave(static_cast<uint32_t>(lat), static_cast<uint32_t>(lon)), c.step};
}

std::pair<uint64_t, uint64_t> ScoreInterval(Cell c) {
  return {Align52(c), Align52(Cell{c.bits + 1, c.step})};
}

SearchCells CellsToSearch(const Shape& s) {
  const bool radius = s.kind == Shape::Kind::kRadius;
  const double range_m =
      s.to_meters * (radius ? s.radius
                            : std::sqrt((s.width / 2) * (s.width / 2) +
                                        (s.height / 2) * (s.height / 2)));
  const Bounds b = BoundsOf(s);
  int step = EstimateStep(range_m, s.center.lat);
  auto plan = [&](int st) {
    const Cell c = EncodeMercator(s.center, st).value_or(Cell{});
    return SearchCells{c,
                       Neighbour(c, 0, 1),  Neighbour(c, 0, -1), Neighbour(c, 1, 0),
                       Neighbour(c, -1, 0), Neighbour(c, 1, 1),  Neighbour(c, -1, 1),
                       Neighbour(c, 1, -1), Neighbour(c, -1, -1)};
  };
  SearchCells cells = plan(step);
  // A neighbour that ends inside the bounds means the cells are too small to cover them: one
  // step coarser (cells twice as wide) then.
  const Area north = DecodeMercator(cells[1]), south = DecodeMercator(cells[2]);
  const Area east = DecodeMercator(cells[3]), west = DecodeMercator(cells[4]);
  const bool too_small = north.lat.max < b.max_lat || south.lat.min > b.min_lat ||
                         east.lon.max < b.max_lon || west.lon.min > b.min_lon;
  if (step > 1 && too_small) cells = plan(--step);
  // Drop the neighbours on a side the bounds do not reach past the centre cell.
  if (step >= 2) {
    const Area center = DecodeMercator(cells[0]);
    auto drop = [&](std::initializer_list<int> which) {
      for (int i : which) cells[i] = Cell{};
    };
    if (center.lat.min < b.min_lat) drop({2, 7, 8});  // south, south-east, south-west
    if (center.lat.max > b.max_lat) drop({1, 5, 6});  // north, north-east, north-west
    if (center.lon.min < b.min_lon) drop({4, 8, 6});  // west, south-west, north-west
    if (center.lon.max > b.max_lon) drop({3, 7, 5});  // east, south-east, north-east
  }
  return cells;
}

}  // namespace dashkv::geo
