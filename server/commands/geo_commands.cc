// GEO commands (Redis 7.0 semantics) on sorted sets whose scores are 52-bit geohashes
// (core/geohash.h). Single-key commands run on the owning shard. GEOSEARCHSTORE and the STORE
// forms of GEORADIUS / GEORADIUSBYMEMBER run on one shard when source and destination share it;
// otherwise the search runs on the source's shard and the result is written in a second hop,
// under intent locks on both keys (server/tx/transaction.h), so the command is atomic.
#include <algorithm>
#include <memory>
#include <vector>

#include "core/geohash.h"
#include "server/cmd_context.h"
#include "server/command_registry.h"
#include "server/commands/geo_ops.h"
#include "server/commands/zset_ops.h"
#include "server/config.h"
#include "server/conn_state.h"
#include "server/services.h"
#include "server/storage/shard_set.h"

namespace dashkv {

namespace {

using boost::asio::awaitable;

// Looks up the sorted set at `key` for reading: nullptr when missing; WRONGTYPE sent (and
// false returned) for another type.
bool FindGeoSet(ShardCmdContext& ctx, std::string_view key, const ZsetValue** out) {
  OpResult<PrimeIterator> found = ctx.db.FindReadOnlyOfType(key, ObjType::kZset, ctx.now_ms);
  *out = nullptr;
  if (found) {
    *out = &AsZset((*found)->second);
  } else if (found.status() != OpStatus::kKeyNotFound) {
    ctx.SendStatus(found.status());
    return false;
  }
  return true;
}

// GEOADD key [NX|XX] [CH] longitude latitude member [longitude latitude member ...]
void CmdGeoAdd(CmdArgs args, ShardCmdContext& ctx) {
  bool nx = false, xx = false, ch = false;
  ArgParser p(args, 2);
  while (true) {
    if (p.Check("NX")) nx = true;
    else if (p.Check("XX")) xx = true;
    else if (p.Check("CH")) ch = true;
    else break;
  }
  const size_t first = p.position(), rest = args.size() - first;
  if (rest % 3 != 0 || rest == 0 || (nx && xx)) return ctx.SendStatus(OpStatus::kSyntaxError);
  const size_t n = rest / 3;  // bounded by the arguments received
  std::vector<double> scores(n);
  size_t max_len = 0;
  for (size_t i = 0; i < n; ++i) {
    GeoError error;
    OpResult<geo::Point> p = ParseLonLat(args[first + 3 * i], args[first + 3 * i + 1], &error);
    if (!p) return ctx.rb.SendError(GeoErrorText(error, args));
    scores[i] = geo::ScoreOf(*p);
    max_len = std::max(max_len, args[first + 3 * i + 2].size());
  }
  OpResult<PrimeIterator> found = ctx.db.FindMutableOfType(args[1], ObjType::kZset, ctx.now_ms);
  if (!found && found.status() != OpStatus::kKeyNotFound) return ctx.SendStatus(found.status());
  const ZsetLimits limits = ZsetLimits::From(ctx.config);
  PrimeIterator it;
  if (found) {
    it = *found;
  } else {
    if (xx) {
      ctx.NoChange();
      return ctx.rb.SendLong(0);
    }
    OpResult<DbSlice::AddResult> added = ctx.db.FindOrAdd(args[1], ctx.now_ms);
    if (!added) return ctx.SendStatus(added.status());
    it = added->it;
    it->second.SetObject(ObjType::kZset, 0, ZsetValue::Create(n, max_len, limits).release());
  }
  ZsetValue& z = AsZset(it->second);
  int64_t added = 0, changed = 0;
  for (size_t i = 0; i < n; ++i) {
    std::string_view m = args[first + 3 * i + 2];
    std::optional<double> old = z.Score(m);
    if (old ? nx : xx) continue;
    if (old && *old == scores[i]) continue;
    z.Set(m, scores[i], limits);
    ++(old ? changed : added);
  }
  if (z.empty()) ctx.db.Erase(it, RemoveReason::kDeleted);
  // As ZADD (GEOADD is one in Redis): the event only when a member was added or moved.
  if (added + changed > 0) {
    ctx.db.Notify(kNotifyZset, "zadd", args[1]);
  } else {
    ctx.NoChange();
  }
  ctx.rb.SendLong(added + (ch ? changed : 0));
}

// GEODIST key member1 member2 [M|KM|FT|MI]
void CmdGeoDist(CmdArgs args, ShardCmdContext& ctx) {
  double to_meters = 1;
  if (args.size() == 5) {
    std::optional<double> unit = ParseGeoUnit(args[4]);
    if (!unit) return ctx.SendStatus(OpStatus::kGeoUnit);
    to_meters = *unit;
  } else if (args.size() > 5) {
    return ctx.SendStatus(OpStatus::kSyntaxError);
  }
  const ZsetValue* z;
  if (!FindGeoSet(ctx, args[1], &z)) return;
  std::optional<double> a = z ? z->Score(args[2]) : std::nullopt;
  std::optional<double> b = a ? z->Score(args[3]) : std::nullopt;
  if (!b) return ctx.rb.SendNull();
  SendDistance(ctx.rb, geo::Distance(geo::PointOfScore(*a), geo::PointOfScore(*b)) / to_meters);
}

// GEOHASH key [member ...]
void CmdGeoHash(CmdArgs args, ShardCmdContext& ctx) {
  const ZsetValue* z;
  if (!FindGeoSet(ctx, args[1], &z)) return;
  ctx.rb.StartArray(args.size() - 2);
  for (size_t i = 2; i < args.size(); ++i) {
    std::optional<double> s = z ? z->Score(args[i]) : std::nullopt;
    s ? ctx.rb.SendBulk(geo::HashString(*s)) : ctx.rb.SendNull();
  }
}

// GEOPOS key [member ...]
void CmdGeoPos(CmdArgs args, ShardCmdContext& ctx) {
  const ZsetValue* z;
  if (!FindGeoSet(ctx, args[1], &z)) return;
  ctx.rb.StartArray(args.size() - 2);
  for (size_t i = 2; i < args.size(); ++i) {
    std::optional<double> s = z ? z->Score(args[i]) : std::nullopt;
    if (!s) {
      ctx.rb.SendNullArray();
      continue;
    }
    const geo::Point p = geo::PointOfScore(*s);
    ctx.rb.StartArray(2);
    SendCoordinate(ctx.rb, p.lon);
    SendCoordinate(ctx.rb, p.lat);
  }
}

// The argument index of the source key.
constexpr size_t SourceIndex(GeoCommand cmd) { return cmd == GeoCommand::kGeoSearchStore ? 2 : 1; }

// What a search found, copied out of the source's shard.
struct GeoOutcome {
  GeoError error;  // status kOk unless the reply is this error
  GeoQuery query;
  std::vector<GeoMatch> matches;
};

// Parses and runs a search of `args` over its source key in `db`.
GeoOutcome RunGeoQuery(DbSlice& db, CmdArgs args, GeoCommand cmd, int64_t now_ms) {
  GeoOutcome out;
  OpResult<PrimeIterator> found = db.FindReadOnlyOfType(args[SourceIndex(cmd)], ObjType::kZset,
                                                        now_ms);
  if (!found && found.status() != OpStatus::kKeyNotFound) {
    out.error.status = found.status();
    return out;
  }
  const ZsetValue* z = found ? &AsZset((*found)->second) : nullptr;
  std::optional<GeoQuery> q = ParseGeoQuery(args, cmd, z, &out.error);
  if (!q) return out;
  out.query = *q;
  if (z != nullptr) out.matches = SearchGeo(*z, *q);
  return out;
}

constexpr std::string_view StoreEvent(GeoCommand cmd) {
  return cmd == GeoCommand::kGeoSearchStore ? "geosearchstore" : "georadiusstore";
}

// GEOSEARCH, GEOSEARCHSTORE and the GEORADIUS family, all keys on this shard.
// GEOSEARCH key <FROMMEMBER member | FROMLONLAT lon lat> <BYRADIUS r unit | BYBOX w h unit>
//   [ASC|DESC] [COUNT count [ANY]] [WITHCOORD] [WITHDIST] [WITHHASH]
// GEOSEARCHSTORE destination source <FROM...> <BY...> [ASC|DESC] [COUNT count [ANY]] [STOREDIST]
// GEORADIUS key lon lat radius unit [WITH...] [COUNT count [ANY]] [ASC|DESC]
//   [STORE key | STOREDIST key]; GEORADIUSBYMEMBER key member radius unit [...]; the _RO forms
template <GeoCommand kCmd>
void CmdGeoSearch(CmdArgs args, ShardCmdContext& ctx) {
  GeoOutcome o = RunGeoQuery(ctx.db, args, kCmd, ctx.now_ms);
  if (o.error.status != OpStatus::kOk) return ctx.rb.SendError(GeoErrorText(o.error, args));
  if (!o.query.HasStore()) {
    ctx.NoChange();  // GEORADIUS is a write command even when it stores nothing
    return SendGeoMatches(ctx.rb, o.matches, o.query);
  }
  DCHECK(kCmd == GeoCommand::kGeoSearchStore || o.query.store_index == GeoRadiusStoreIndex(args));
  OpResult<StoreResult> n =
      StoreZset(ctx.db, args[o.query.store_index], GeoStoreItems(o.matches, o.query),
                ZsetLimits::From(ctx.config), StoreEvent(kCmd), ctx.now_ms);
  if (!n) return ctx.SendStatus(n.status());
  if (!n->changed) ctx.NoChange();
  ctx.rb.SendLong(n->size);
}

// The same with the keys on different shards (or GEORADIUS inside MULTI): search on the
// source's shard, then store on the destination's.
template <GeoCommand kCmd>
awaitable<void> CmdGeoSearchMulti(CmdArgs args, ConnCmdContext& ctx) {
  ShardSet& ss = ctx.shard_set();
  const unsigned db = ctx.state.db;
  const int64_t now = ctx.now_ms;
  GeoOutcome o = co_await ss.Await(ss.ShardOf(args[SourceIndex(kCmd)]), [&](Shard& shard) {
    return RunGeoQuery(shard.db(db), args, kCmd, now);
  });
  if (o.error.status != OpStatus::kOk) co_return ctx.rb.SendError(GeoErrorText(o.error, args));
  if (!o.query.HasStore()) co_return SendGeoMatches(ctx.rb, o.matches, o.query);
  const std::string_view dst = args[o.query.store_index];
  const ScoredMembers items = GeoStoreItems(o.matches, o.query);
  const ZsetLimits limits = ZsetLimits::From(ctx.config());
  OpResult<StoreResult> n = co_await ss.Await(ss.ShardOf(dst), [&](Shard& shard) {
    return StoreZset(shard.db(db), dst, items, limits, StoreEvent(kCmd), now);
  });
  if (!n) co_return ctx.SendStatus(n.status());
  ctx.rb.SendLong(n->size);
}

// GEORADIUS / GEORADIUSBYMEMBER: the source key; the keys Redis's key specs name (the argument
// after the first STORE and after the first STOREDIST, from the options on); and the key the
// command writes (the last STORE / STOREDIST), in argument order.
KeyIndexes GeoRadiusKeys(CmdArgs args) {
  KeyIndexes keys{1};
  const size_t options = EqualsIgnoreCase(args[0], "georadius") ? 6 : 5;
  for (std::string_view keyword : {"STORE", "STOREDIST"}) {
    for (size_t i = options; i + 1 < args.size(); ++i) {
      if (EqualsIgnoreCase(args[i], keyword)) {
        keys.push_back(static_cast<uint32_t>(i + 1));
        break;
      }
    }
  }
  if (size_t store = GeoRadiusStoreIndex(args)) keys.push_back(static_cast<uint32_t>(store));
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  return keys;
}

// Runs a GEORADIUS call as a shard command when its keys share a shard.
std::optional<unsigned> RouteGeoRadius(CmdArgs args, const ServerServices& services) {
  const ShardSet& ss = services.shard_set;
  const unsigned sid = ss.ShardOf(args[1]);
  for (uint32_t k : GeoRadiusKeys(args)) {
    if (ss.ShardOf(args[k]) != sid) return std::nullopt;
  }
  return sid;
}

CommandSpec GeoSpec(std::string name, int arity, uint32_t flags, int first_key, int last_key,
                    std::string_view since, std::string_view summary) {
  const bool write = (flags & kCmdWrite) != 0;
  return MakeSpec(std::move(name), arity, flags, first_key, last_key,
                  {write ? "write" : "read", "geo", "slow"}, "geo", since, summary);
}

// A read command of one key.
CommandSpec ReadSpec(std::string name, int arity, std::string_view since,
                     std::string_view summary) {
  return WithSingleKey(GeoSpec(std::move(name), arity, kCmdReadOnly, 1, 1, since, summary), 1,
                       {"RO", "access"});
}

// GEORADIUS / GEORADIUSBYMEMBER: a write command with a keys function, run on one shard when
// it can be, else by its coordinator handler.
template <GeoCommand kCmd>
CommandSpec RadiusStoreSpec(std::string name, int arity, int store_from,
                            std::string_view summary) {
  CommandSpec s = GeoSpec(std::move(name), arity, kCmdWrite | kCmdDenyOom, 1, 1, "3.2.0", summary);
  s.key_specs.push_back(KeySpec::AtIndex({"RO", "access"}, 1));
  s.key_specs.push_back(KeySpec::AfterKeyword({"OW", "update"}, "STORE", store_from, 0));
  s.key_specs.push_back(KeySpec::AfterKeyword({"OW", "update"}, "STOREDIST", store_from, 0));
  s.keys_fn = GeoRadiusKeys;
  s.shard_route = RouteGeoRadius;
  s.shard_handler = CmdGeoSearch<kCmd>;
  return s;
}

}  // namespace

void RegisterGeoCommands(CommandRegistry* r) {
  using G = GeoCommand;
  r->RegisterShard(
      WithSingleKey(GeoSpec("geoadd", -5, kCmdWrite | kCmdDenyOom, 1, 1, "3.2.0",
                            "Adds members with their longitude and latitude to a geospatial "
                            "sorted set, or moves them."),
                    1, {"RW", "update"}),
      CmdGeoAdd);
  r->RegisterShard(ReadSpec("geodist", -4, "3.2.0",
                            "Returns the distance between two members of a geospatial set."),
                   CmdGeoDist);
  r->RegisterShard(ReadSpec("geohash", -2, "3.2.0",
                            "Returns the 11-character geohash strings of members."),
                   CmdGeoHash);
  r->RegisterShard(ReadSpec("geopos", -2, "3.2.0",
                            "Returns the longitude and latitude of members."),
                   CmdGeoPos);
  r->RegisterShard(ReadSpec("geosearch", -7, "6.2.0",
                            "Returns the members inside a circle or a box around a member or "
                            "a point."),
                   CmdGeoSearch<G::kGeoSearch>);
  r->RegisterShard(ReadSpec("georadius_ro", -6, "3.2.10",
                            "Returns the members within a distance of a point (read-only)."),
                   CmdGeoSearch<G::kGeoRadiusRo>);
  r->RegisterShard(ReadSpec("georadiusbymember_ro", -5, "3.2.10",
                            "Returns the members within a distance of a member (read-only)."),
                   CmdGeoSearch<G::kGeoRadiusByMemberRo>);
  CommandSpec store = GeoSpec("geosearchstore", -8, kCmdWrite | kCmdDenyOom, 1, 2, "6.2.0",
                              "Stores the members inside a circle or a box around a member or "
                              "a point in a sorted set.");
  store.key_specs.push_back(KeySpec::AtIndex({"OW", "update"}, 1));
  store.key_specs.push_back(KeySpec::AtIndex({"RO", "access"}, 2));
  r->RegisterShard(std::move(store), CmdGeoSearch<G::kGeoSearchStore>,
                   CmdGeoSearchMulti<G::kGeoSearchStore>);
  r->RegisterCoord(RadiusStoreSpec<G::kGeoRadius>(
                       "georadius", -6, 6,
                       "Returns the members within a distance of a point, or stores them."),
                   CmdGeoSearchMulti<G::kGeoRadius>);
  r->RegisterCoord(RadiusStoreSpec<G::kGeoRadiusByMember>(
                       "georadiusbymember", -5, 5,
                       "Returns the members within a distance of a member, or stores them."),
                   CmdGeoSearchMulti<G::kGeoRadiusByMember>);
}

}  // namespace dashkv
