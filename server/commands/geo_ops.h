// Helpers of the GEO command family: the option syntax of GEOSEARCH / GEOSEARCHSTORE /
// GEORADIUS* (parsed with the source sorted set at hand, since FROMMEMBER and BYMEMBER read it
// while parsing, as Redis does), the search over a sorted set of geohash scores, and the replies.
// Thread: everything here runs on the shard that owns the source key, except the reply and
// error senders (any thread holding the reply builder).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/geohash.h"
#include "io/reply_builder.h"
#include "server/cmd_args.h"
#include "server/commands/zset_ops.h"
#include "server/op_status.h"
#include "server/values/zset_value.h"

namespace dashkv {

// The command being parsed: which arguments it has and which options it allows.
enum class GeoCommand : uint8_t {
  kGeoRadius,            // key lon lat radius unit [...] [STORE|STOREDIST key]
  kGeoRadiusRo,          // key lon lat radius unit [...]
  kGeoRadiusByMember,    // key member radius unit [...] [STORE|STOREDIST key]
  kGeoRadiusByMemberRo,  // key member radius unit [...]
  kGeoSearch,            // key FROM... BY... [...]
  kGeoSearchStore,       // dst src FROM... BY... [...] [STOREDIST]
};

// A failed parse: the status and, for kGeoInvalidPair, the pair as parsed.
struct GeoError {
  OpStatus status = OpStatus::kOk;
  geo::Point pair;
};

// Returns Redis's text for `e`; `args` is the call (its name as typed goes into some texts).
std::string GeoErrorText(const GeoError& e, CmdArgs args);

// Parses a longitude,latitude pair as Redis: two floats (kNotAFloat), then the Mercator limits
// (kGeoInvalidPair).
OpResult<geo::Point> ParseLonLat(std::string_view lon, std::string_view lat, GeoError* error);
// Parses a unit name (m, km, ft, mi, any case); returns metres per unit, or nullopt.
std::optional<double> ParseGeoUnit(std::string_view unit);

// A parsed search.
struct GeoQuery {
  enum class Sort : uint8_t { kNone, kAsc, kDesc };
  geo::Shape shape;
  Sort sort = Sort::kNone;
  bool withdist = false;
  bool withhash = false;
  bool withcoord = false;
  bool any = false;
  bool storedist = false;
  int64_t count = 0;       // 0: unlimited
  size_t store_index = 0;  // argument index of the destination key; 0: none
  bool HasStore() const { return store_index != 0; }
};

// Parses a search over the sorted set `z` (nullptr when the source key is missing: the shape
// options that would read it are skipped, as Redis, and the caller replies with the empty result).
// Checks in Redis's order; the first failure is returned in `error`.
std::optional<GeoQuery> ParseGeoQuery(CmdArgs args, GeoCommand cmd, const ZsetValue* z,
                                      GeoError* error);

// One member found by a search.
struct GeoMatch {
  std::string member;
  double dist = 0;   // in the query's unit
  double score = 0;  // its geohash score
  geo::Point point;
};

// Runs `q` over `z`: the cells of the search plan in order, each in score order; sorted and cut
// to COUNT as Redis (COUNT without ANY sorts ascending). Memory grows with the matches found,
// never with COUNT.
std::vector<GeoMatch> SearchGeo(const ZsetValue& z, const GeoQuery& q);

// Sends the matches as GEOSEARCH replies them (WITHDIST / WITHHASH / WITHCOORD).
void SendGeoMatches(io::ReplyBuilder& rb, const std::vector<GeoMatch>& matches,
                    const GeoQuery& q);
// Returns the elements a STORE writes: members with their score, or distance for STOREDIST.
ScoredMembers GeoStoreItems(const std::vector<GeoMatch>& matches, const GeoQuery& q);

// Sends a coordinate as Redis does: "%.17Lf" without trailing zeros (RESP3 double, RESP2 bulk).
void SendCoordinate(io::ReplyBuilder& rb, double v);
// Sends a distance as Redis does: "%.4f", a bulk string in RESP2 and RESP3.
void SendDistance(io::ReplyBuilder& rb, double d);

// Returns the argument index of a GEORADIUS / GEORADIUSBYMEMBER call's STORE or STOREDIST key
// (the last one given), or 0. Redis's key extraction: the options from argument 5 on.
size_t GeoRadiusStoreIndex(CmdArgs args);

}  // namespace dashkv
