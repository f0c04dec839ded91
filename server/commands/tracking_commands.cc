// CLIENT TRACKING, CLIENT CACHING, CLIENT GETREDIR and CLIENT TRACKINGINFO (server-assisted
// client-side caching, server/tracking/tracking_hub.h).
#include "server/commands/tracking_commands.h"

#include <string>
#include <vector>

#include "core/base/parse_int.h"
#include "core/str_util.h"
#include "server/cmd_context.h"
#include "server/conn_state.h"
#include "server/tracking/prefix_collision.h"
#include "server/tracking/tracking_hub.h"

namespace dashkv {

namespace {

using boost::asio::awaitable;

// CLIENT TRACKING ON|OFF [REDIRECT client-id] [PREFIX prefix [PREFIX prefix ...]] [BCAST]
//   [OPTIN] [OPTOUT] [NOLOOP]
// The options are checked in Redis's order: each in turn (a REDIRECT's client must exist when
// it is read), then ON/OFF, then their combination with each other and the current state.
awaitable<void> ClientTrackingCmd(CmdArgs args, ConnCmdContext& ctx) {
  TrackingRequest req;
  std::vector<std::string_view> prefixes;  // views into args: no client-sized allocation
  for (size_t j = 3; j < args.size(); ++j) {
    const bool more = j + 1 < args.size();
    if (EqualsIgnoreCase(args[j], "redirect") && more) {
      ++j;
      if (req.redirect != 0) co_return ctx.SendStatus(OpStatus::kTrackingRedirectTwice);
      std::optional<int64_t> id = ParseInt64(args[j]);
      if (!id) co_return ctx.SendStatus(OpStatus::kNotAnInteger);
      std::optional<unsigned> engine;
      if (*id > 0) engine = co_await ctx.tracking().FindClient(static_cast<uint64_t>(*id));
      if (!engine) co_return ctx.SendStatus(OpStatus::kTrackingNoSuchRedirect);
      req.redirect = static_cast<uint64_t>(*id);
      req.redirect_engine = *engine;
    } else if (EqualsIgnoreCase(args[j], "bcast")) {
      req.bcast = true;
    } else if (EqualsIgnoreCase(args[j], "optin")) {
      req.optin = true;
    } else if (EqualsIgnoreCase(args[j], "optout")) {
      req.optout = true;
    } else if (EqualsIgnoreCase(args[j], "noloop")) {
      req.noloop = true;
    } else if (EqualsIgnoreCase(args[j], "prefix") && more) {
      prefixes.push_back(args[++j]);
    } else {
      co_return ctx.SendStatus(OpStatus::kSyntaxError);
    }
  }
  ConnState& state = ctx.state;
  if (EqualsIgnoreCase(args[2], "off")) {
    ctx.tracking().Disable(state);
    co_return ctx.rb.SendOk();
  }
  if (!EqualsIgnoreCase(args[2], "on")) co_return ctx.SendStatus(OpStatus::kSyntaxError);
  const ClientTracking* cur = state.tracking.get();
  const bool on = cur != nullptr && cur->on;
  if (!req.bcast && !prefixes.empty()) {
    co_return ctx.SendStatus(OpStatus::kTrackingPrefixNeedsBcast);
  }
  if (on && cur->bcast != req.bcast) co_return ctx.SendStatus(OpStatus::kTrackingBcastSwitch);
  if (req.bcast && (req.optin || req.optout)) {
    co_return ctx.SendStatus(OpStatus::kTrackingOptBcast);
  }
  if (req.optin && req.optout) co_return ctx.SendStatus(OpStatus::kTrackingOptBoth);
  if (on && ((req.optin && cur->optout) || (req.optout && cur->optin))) {
    co_return ctx.SendStatus(OpStatus::kTrackingOptSwitch);
  }
  bool overlapping = false;  // the client is left with overlapping prefixes (below)
  if (req.bcast) {
    static const std::vector<std::string> kNone;
    const std::vector<std::string>& existing = on ? cur->prefixes : kNone;
    if (auto c = FindPrefixCollision(prefixes, existing, on && cur->prefixes_overlap)) {
      ctx.rb.SendError(StrCat(
          "ERR Prefix '", prefixes[c->index], "' overlaps with ",
          c->with_existing ? "an existing" : "another provided", " prefix '", c->other,
          "'. Prefixes for a single client must not overlap."));
      // Redis 7.0.15's checkPrefixCollisionsOrReply returns the index of a requested prefix
      // that overlaps a later one, which its caller takes for success when it is not the
      // first: tracking goes on with every prefix and OK follows the error. Done the same, but
      // inside EXEC, whose reply holds one element per command: the error only there.
      if (c->with_existing || c->index == 0) co_return;
      overlapping = true;
    }
    req.prefixes.assign(prefixes.begin(), prefixes.end());
  }
  co_await ctx.tracking().Enable(state, std::move(req));
  if (overlapping) state.tracking->prefixes_overlap = true;
  if (!overlapping || !ctx.in_exec) ctx.rb.SendOk();
}

// CLIENT CACHING YES|NO
void ClientCachingCmd(CmdArgs args, ConnCmdContext& ctx) {
  ClientTracking* t = ctx.state.tracking.get();
  if (t == nullptr || !t->on) return ctx.SendStatus(OpStatus::kCachingNotTracking);
  if (EqualsIgnoreCase(args[2], "yes")) {
    if (!t->optin) return ctx.SendStatus(OpStatus::kCachingYesNotOptin);
  } else if (EqualsIgnoreCase(args[2], "no")) {
    if (!t->optout) return ctx.SendStatus(OpStatus::kCachingNoNotOptout);
  } else {
    return ctx.SendStatus(OpStatus::kSyntaxError);
  }
  ctx.tracking().SetCaching(ctx.state, true);
  ctx.rb.SendOk();
}

// CLIENT GETREDIR
void ClientGetRedirCmd(CmdArgs, ConnCmdContext& ctx) {
  const ClientTracking* t = ctx.state.tracking.get();
  ctx.rb.SendLong(t != nullptr && t->on ? static_cast<int64_t>(t->redirect) : -1);
}

// CLIENT TRACKINGINFO
void ClientTrackingInfoCmd(CmdArgs, ConnCmdContext& ctx) {
  static const ClientTracking kOff;
  const ClientTracking& t = ctx.state.tracking ? *ctx.state.tracking : kOff;
  std::vector<std::string_view> flags;
  flags.push_back(t.on ? "on" : "off");
  if (t.bcast) flags.push_back("bcast");
  if (t.optin) {
    flags.push_back("optin");
    if (t.caching) flags.push_back("caching-yes");
  }
  if (t.optout) {
    flags.push_back("optout");
    if (t.caching) flags.push_back("caching-no");
  }
  if (t.noloop) flags.push_back("noloop");
  if (t.broken_redirect) flags.push_back("broken_redirect");
  io::ReplyBuilder& rb = ctx.rb;
  rb.StartMap(3);
  rb.SendBulk("flags");
  rb.StartArray(flags.size());
  for (std::string_view f : flags) rb.SendBulk(f);
  rb.SendBulk("redirect");
  rb.SendLong(t.on ? static_cast<int64_t>(t.redirect) : -1);
  rb.SendBulk("prefixes");
  rb.StartArray(t.prefixes.size());
  for (const std::string& p : t.prefixes) rb.SendBulk(p);
}

}  // namespace

std::vector<CommandSpec> ClientTrackingSubcommands() {
  constexpr uint32_t kFlags = kCmdNoScript | kCmdLoading | kCmdStale;
  const std::vector<std::string_view> kCats = {"slow", "connection"};
  std::vector<CommandSpec> subs;
  subs.push_back(WithCoordHandler(
      MakeSubcommand("tracking", -3, kFlags, kCats, "6.0.0",
                     "Controls server-assisted client-side caching for the connection."),
      ClientTrackingCmd));
  subs.push_back(WithConnHandler(
      MakeSubcommand("caching", 3, kFlags, kCats, "6.0.0",
                     "Instructs the server whether to track the keys in the next request."),
      ClientCachingCmd));
  subs.push_back(WithConnHandler(
      MakeSubcommand("getredir", 2, kFlags, kCats, "6.0.0",
                     "Returns the client ID to which the connection's tracking notifications "
                     "are redirected."),
      ClientGetRedirCmd));
  subs.push_back(WithConnHandler(
      MakeSubcommand("trackinginfo", 2, kFlags, kCats, "6.2.0",
                     "Returns information about server-assisted client-side caching for the "
                     "connection."),
      ClientTrackingInfoCmd));
  return subs;
}

}  // namespace dashkv
