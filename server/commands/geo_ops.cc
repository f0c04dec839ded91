#include "server/commands/geo_ops.h"

#include <algorithm>
#include <cstdio>

#include "core/numbers.h"
#include "core/score.h"
#include "core/str_util.h"

namespace dashkv {
namespace {

// Parses "radius unit" into `shape` (a circle).
bool ParseRadius(std::string_view radius, std::string_view unit, geo::Shape* shape,
                 GeoError* error) {
  std::optional<double> r = ParseScore(radius);
  if (!r) return error->status = OpStatus::kGeoNeedRadius, false;
  if (*r < 0) return error->status = OpStatus::kGeoRadiusNegative, false;
  std::optional<double> to_meters = ParseGeoUnit(unit);
  if (!to_meters) return error->status = OpStatus::kGeoUnit, false;
  shape->kind = geo::Shape::Kind::kRadius;
  shape->radius = *r;
  shape->to_meters = *to_meters;
  return true;
}

// Parses "width height unit" into `shape` (a box).
bool ParseBox(std::string_view width, std::string_view height, std::string_view unit,
              geo::Shape* shape, GeoError* error) {
  std::optional<double> w = ParseScore(width);
  if (!w) return error->status = OpStatus::kGeoNeedWidth, false;
  std::optional<double> h = ParseScore(height);
  if (!h) return error->status = OpStatus::kGeoNeedHeight, false;
  if (*h < 0 || *w < 0) return error->status = OpStatus::kGeoBoxNegative, false;
  std::optional<double> to_meters = ParseGeoUnit(unit);
  if (!to_meters) return error->status = OpStatus::kGeoUnit, false;
  shape->kind = geo::Shape::Kind::kBox;
  shape->width = *w;
  shape->height = *h;
  shape->to_meters = *to_meters;
  return true;
}

// Reads the point of `member` in `z` (kGeoNoMember when it is not there).
bool MemberPoint(const ZsetValue& z, std::string_view member, geo::Point* out, GeoError* error) {
  std::optional<double> score = z.Score(member);
  if (!score) return error->status = OpStatus::kGeoNoMember, false;
  *out = geo::PointOfScore(*score);
  return true;
}

// Appends the members of `cell` inside the shape, in score order, stopping at `limit` matches
// (0: no limit).
void CollectCell(const ZsetValue& z, geo::Cell cell, const GeoQuery& q, uint64_t limit,
                 std::vector<GeoMatch>& out) {
  const auto [lo, hi] = geo::ScoreInterval(cell);
  ScoreRange range{static_cast<double>(lo), static_cast<double>(hi), false, true};
  const auto [first, last] = z.ScoreRanks(range);
  // In chunks, so that an ANY search stops soon after it has enough.
  constexpr uint64_t kChunk = 64;
  for (uint64_t from = first; from < last; from += kChunk) {
    z.Range(from, std::min(last, from + kChunk), false, [&](std::string_view m, double score) {
      if (limit != 0 && out.size() >= limit) return;
      const geo::Point p = geo::PointOfScore(score);
      std::optional<double> d = geo::DistanceIfInside(q.shape, p);
      if (!d) return;
      out.push_back(GeoMatch{std::string(m), *d, score, p});
    });
    if (limit != 0 && out.size() >= limit) return;
  }
}

}  // namespace

std::string GeoErrorText(const GeoError& e, CmdArgs args) {
  switch (e.status) {
    case OpStatus::kGeoInvalidPair:
      return GeoInvalidPairText(e.pair.lon, e.pair.lat);
    case OpStatus::kGeoNeedsFrom:
    case OpStatus::kGeoNeedsBy:
      return GeoExactlyOneText(e.status, args[0]);
    case OpStatus::kGeoStoreWith:
      return GeoStoreWithText(EqualsIgnoreCase(args[0], "geosearchstore"));
    default:
      return std::string(StatusText(e.status));
  }
}

OpResult<geo::Point> ParseLonLat(std::string_view lon, std::string_view lat, GeoError* error) {
  std::optional<double> x = ParseScore(lon);
  std::optional<double> y = x ? ParseScore(lat) : std::nullopt;
  if (!x || !y) {
    error->status = OpStatus::kNotAFloat;
    return OpStatus::kNotAFloat;
  }
  geo::Point p{*x, *y};
  if (!geo::ValidPoint(p)) {
    error->status = OpStatus::kGeoInvalidPair;
    error->pair = p;
    return OpStatus::kGeoInvalidPair;
  }
  return p;
}

std::optional<double> ParseGeoUnit(std::string_view unit) {
  if (EqualsIgnoreCase(unit, "m")) return 1;
  if (EqualsIgnoreCase(unit, "km")) return 1000;
  if (EqualsIgnoreCase(unit, "ft")) return 0.3048;
  if (EqualsIgnoreCase(unit, "mi")) return 1609.34;
  return std::nullopt;
}

namespace {

// What the options of a search named.
struct GeoOptionsSeen {
  bool frommember = false, fromlonlat = false, byradius = false, bybox = false;
};

// Parses the arguments before the options (GEORADIUS: center and radius; GEORADIUSBYMEMBER: the
// member's point and radius, unless the set is missing) and returns where the options start,
// or 0 on failure.
size_t ParseFixedArgs(CmdArgs args, GeoCommand cmd, const ZsetValue* z, GeoQuery& q,
                      GeoError* error) {
  switch (cmd) {
    case GeoCommand::kGeoRadius:
    case GeoCommand::kGeoRadiusRo: {
      OpResult<geo::Point> center = ParseLonLat(args[2], args[3], error);
      if (!center) return 0;
      q.shape.center = *center;
      return ParseRadius(args[4], args[5], &q.shape, error) ? 6 : 0;
    }
    case GeoCommand::kGeoRadiusByMember:
    case GeoCommand::kGeoRadiusByMemberRo:
      // Without a set nothing of it is checked (Redis replies with the empty result).
      if (z != nullptr && (!MemberPoint(*z, args[2], &q.shape.center, error) ||
                           !ParseRadius(args[3], args[4], &q.shape, error))) {
        return 0;
      }
      return 5;
    case GeoCommand::kGeoSearch:
      return 2;
    case GeoCommand::kGeoSearchStore:
      q.store_index = 1;
      return 3;
  }
  return 0;
}

// Parses one option at p (which the caller saw is not at the end); false on failure (the
// error set).
bool ParseOption(ArgParser& p, GeoCommand cmd, const ZsetValue* z, GeoQuery& q,
                 GeoOptionsSeen& seen, GeoError* error) {
  const bool search = cmd == GeoCommand::kGeoSearch || cmd == GeoCommand::kGeoSearchStore;
  const bool may_store = cmd == GeoCommand::kGeoRadius || cmd == GeoCommand::kGeoRadiusByMember;
  // The arguments an option needs after its name must all be there, else it is a syntax error
  // (as an unknown word is).
  auto takes = [&](size_t n, std::string_view word) {
    return p.remaining() > n && p.Check(word);
  };
  if (p.Check("WITHDIST")) {
    q.withdist = true;
  } else if (p.Check("WITHHASH")) {
    q.withhash = true;
  } else if (p.Check("WITHCOORD")) {
    q.withcoord = true;
  } else if (p.Check("ANY")) {
    q.any = true;
  } else if (p.Check("ASC")) {
    q.sort = GeoQuery::Sort::kAsc;
  } else if (p.Check("DESC")) {
    q.sort = GeoQuery::Sort::kDesc;
  } else if (takes(1, "COUNT")) {
    q.count = p.NextInt();
    if (p.HasError()) return error->status = p.error(), false;
    if (q.count <= 0) return error->status = OpStatus::kGeoCountNotPositive, false;
  } else if (may_store && p.remaining() > 1 &&
             (EqualsIgnoreCase(p.Peek(), "STORE") || EqualsIgnoreCase(p.Peek(), "STOREDIST"))) {
    q.storedist = EqualsIgnoreCase(p.Next(), "STOREDIST");
    q.store_index = p.position();
    p.Next();
  } else if (cmd == GeoCommand::kGeoSearchStore && p.Check("STOREDIST")) {
    q.storedist = true;
  } else if (search && !seen.fromlonlat && takes(1, "FROMMEMBER")) {
    std::string_view member = p.Next();
    if (z != nullptr && !MemberPoint(*z, member, &q.shape.center, error)) return false;
    seen.frommember = true;
  } else if (search && !seen.frommember && takes(2, "FROMLONLAT")) {
    std::string_view lon = p.Next(), lat = p.Next();
    OpResult<geo::Point> center = ParseLonLat(lon, lat, error);
    if (!center) return false;
    q.shape.center = *center;
    seen.fromlonlat = true;
  } else if (search && !seen.bybox && takes(2, "BYRADIUS")) {
    std::string_view radius = p.Next(), unit = p.Next();
    if (!ParseRadius(radius, unit, &q.shape, error)) return false;
    seen.byradius = true;
  } else if (search && !seen.byradius && takes(3, "BYBOX")) {
    std::string_view w = p.Next(), h = p.Next(), unit = p.Next();
    if (!ParseBox(w, h, unit, &q.shape, error)) return false;
    seen.bybox = true;
  } else {
    return error->status = OpStatus::kSyntaxError, false;
  }
  return true;
}

}  // namespace

std::optional<GeoQuery> ParseGeoQuery(CmdArgs args, GeoCommand cmd, const ZsetValue* z,
                                      GeoError* error) {
  GeoQuery q;
  const size_t base = ParseFixedArgs(args, cmd, z, q, error);
  if (base == 0) return std::nullopt;
  GeoOptionsSeen seen;
  ArgParser p(args, base);
  while (p.HasNext()) {
    if (!ParseOption(p, cmd, z, q, seen, error)) return std::nullopt;
  }
  auto fail = [&](OpStatus s) -> std::optional<GeoQuery> {
    error->status = s;
    return std::nullopt;
  };
  const bool search = cmd == GeoCommand::kGeoSearch || cmd == GeoCommand::kGeoSearchStore;
  if (q.HasStore() && (q.withdist || q.withhash || q.withcoord)) {
    return fail(OpStatus::kGeoStoreWith);
  }
  if (search && !seen.frommember && !seen.fromlonlat) return fail(OpStatus::kGeoNeedsFrom);
  if (search && !seen.byradius && !seen.bybox) return fail(OpStatus::kGeoNeedsBy);
  if (q.any && q.count == 0) return fail(OpStatus::kGeoAnyNeedsCount);
  // COUNT keeps the nearest ones: it sorts ascending unless told otherwise (or ANY).
  if (q.count != 0 && q.sort == GeoQuery::Sort::kNone && !q.any) q.sort = GeoQuery::Sort::kAsc;
  return q;
}

std::vector<GeoMatch> SearchGeo(const ZsetValue& z, const GeoQuery& q) {
  std::vector<GeoMatch> out;
  const uint64_t limit = q.any ? static_cast<uint64_t>(q.count) : 0;
  const geo::SearchCells cells = geo::CellsToSearch(q.shape);
  // A huge radius can make neighbours coincide: a cell equal to the one read just before is
  // skipped (only then, and never against the centre cell, as Redis).
  size_t last = 0;
  for (size_t i = 0; i < cells.size(); ++i) {
    if (cells[i].none()) continue;
    if (last != 0 && cells[i] == cells[last]) continue;
    if (limit != 0 && out.size() >= limit) break;
    CollectCell(z, cells[i], q, limit, out);
    last = i;
  }
  const size_t returned =
      q.count == 0 || out.size() < static_cast<uint64_t>(q.count) ? out.size()
                                                                   : static_cast<size_t>(q.count);
  if (q.sort == GeoQuery::Sort::kAsc) {
    std::stable_sort(out.begin(), out.end(),
                     [](const GeoMatch& a, const GeoMatch& b) { return a.dist < b.dist; });
  } else if (q.sort == GeoQuery::Sort::kDesc) {
    std::stable_sort(out.begin(), out.end(),
                     [](const GeoMatch& a, const GeoMatch& b) { return a.dist > b.dist; });
  }
  out.resize(returned);
  return out;
}

void SendCoordinate(io::ReplyBuilder& rb, double v) {
  char buf[512];
  int n = std::snprintf(buf, sizeof(buf), "%.17Lf", static_cast<long double>(v));
  if (n <= 0 || static_cast<size_t>(n) >= sizeof(buf)) return rb.SendDoubleText("0");
  if (std::string_view(buf, n).find('.') != std::string_view::npos) {
    while (buf[n - 1] == '0') --n;
    if (buf[n - 1] == '.') --n;
  }
  if (n == 2 && buf[0] == '-' && buf[1] == '0') return rb.SendDoubleText("0");
  rb.SendDoubleText(std::string_view(buf, n));
}

void SendDistance(io::ReplyBuilder& rb, double d) {
  char buf[512];
  int n = std::snprintf(buf, sizeof(buf), "%.4f", d);
  rb.SendBulk(std::string_view(buf, std::clamp<int>(n, 0, sizeof(buf) - 1)));
}

void SendGeoMatches(io::ReplyBuilder& rb, const std::vector<GeoMatch>& matches,
                    const GeoQuery& q) {
  const size_t options = size_t{q.withdist} + q.withhash + q.withcoord;
  rb.StartArray(matches.size());
  for (const GeoMatch& m : matches) {
    if (options != 0) rb.StartArray(options + 1);
    rb.SendBulk(m.member);
    if (q.withdist) SendDistance(rb, m.dist / q.shape.to_meters);
    if (q.withhash) rb.SendLong(static_cast<int64_t>(m.score));
    if (q.withcoord) {
      rb.StartArray(2);
      SendCoordinate(rb, m.point.lon);
      SendCoordinate(rb, m.point.lat);
    }
  }
}

ScoredMembers GeoStoreItems(const std::vector<GeoMatch>& matches, const GeoQuery& q) {
  ScoredMembers items;
  items.reserve(matches.size());
  for (const GeoMatch& m : matches) {
    items.emplace_back(m.member, q.storedist ? m.dist / q.shape.to_meters : m.score);
  }
  return items;
}

size_t GeoRadiusStoreIndex(CmdArgs args) {
  size_t index = 0;
  for (size_t i = 5; i + 1 < args.size(); ++i) {
    if (EqualsIgnoreCase(args[i], "STORE") || EqualsIgnoreCase(args[i], "STOREDIST")) {
      index = ++i;
    }
  }
  return index;
}

}  // namespace dashkv
