// Pub/Sub commands: SUBSCRIBE, UNSUBSCRIBE, PSUBSCRIBE, PUNSUBSCRIBE, SSUBSCRIBE, SUNSUBSCRIBE,
// PUBLISH, SPUBLISH and PUBSUB. Subscriptions live on the connection's engine; PUBLISH reaches
// the other engines through server/pubsub/pubsub.h. Without a cluster the shard channels (S*) are a
// namespace of their own, as in Redis 7.0 standalone.
#include <optional>

#include "core/str_util.h"
#include "io/connection.h"
#include "io/engine.h"
#include "server/cmd_context.h"
#include "server/command_registry.h"
#include "server/conn_state.h"
#include "server/pubsub/pubsub.h"
#include "server/config.h"
#include "server/storage/shard_set.h"

namespace dashkv {

namespace {

using boost::asio::awaitable;

// Names of the confirmations of each kind, as Redis sends them.
struct KindNames {
  std::string_view subscribe;
  std::string_view unsubscribe;
};

constexpr KindNames Names(PubSubKind kind) {
  switch (kind) {
    case PubSubKind::kChannel: return {"subscribe", "unsubscribe"};
    case PubSubKind::kPattern: return {"psubscribe", "punsubscribe"};
    case PubSubKind::kShardChannel: return {"ssubscribe", "sunsubscribe"};
  }
  return {};
}

// Sends one confirmation: [kind, name or nil, the client's subscription count], a push frame
// in RESP3, an array in RESP2.
void SendConfirmation(io::ReplyBuilder& rb, std::string_view what,
                      std::optional<std::string_view> name, size_t count) {
  rb.StartPush(3);
  rb.SendBulk(what);
  if (name) {
    rb.SendBulk(*name);
  } else {
    rb.SendNull();
  }
  rb.SendLong(static_cast<int64_t>(count));
}

void Subscribe(CmdArgs args, ConnCmdContext& ctx, PubSubKind kind) {
  PubSub& pubsub = ctx.pubsub();
  for (size_t i = 1; i < args.size(); ++i) {
    pubsub.Subscribe(ctx.state, kind, args[i]);
    SendConfirmation(ctx.rb, Names(kind).subscribe, args[i], ctx.state.pubsub->ReplyCount(kind));
  }
}

// Without names: every name of `kind` the client has, one confirmation each (or one with a nil
// name when it has none).
void Unsubscribe(CmdArgs args, ConnCmdContext& ctx, PubSubKind kind) {
  PubSub& pubsub = ctx.pubsub();
  ClientSubscriptions* subs = ctx.state.pubsub.get();
  const std::string_view what = Names(kind).unsubscribe;
  if (args.size() > 1) {
    for (size_t i = 1; i < args.size(); ++i) {
      pubsub.Unsubscribe(ctx.state, kind, args[i]);
      SendConfirmation(ctx.rb, what, args[i], subs ? subs->ReplyCount(kind) : 0);
    }
    return;
  }
  if (subs == nullptr || subs->of(kind).empty()) {
    return SendConfirmation(ctx.rb, what, std::nullopt, subs ? subs->ReplyCount(kind) : 0);
  }
  std::vector<std::string> names(subs->of(kind).begin(), subs->of(kind).end());
  for (const std::string& name : names) {
    pubsub.Unsubscribe(ctx.state, kind, name);
    SendConfirmation(ctx.rb, what, name, subs->ReplyCount(kind));
  }
}

// SUBSCRIBE channel [channel ...]
void CmdSubscribe(CmdArgs args, ConnCmdContext& ctx) {
  Subscribe(args, ctx, PubSubKind::kChannel);
}
// PSUBSCRIBE pattern [pattern ...]
void CmdPSubscribe(CmdArgs args, ConnCmdContext& ctx) {
  Subscribe(args, ctx, PubSubKind::kPattern);
}
// SSUBSCRIBE shardchannel [shardchannel ...]
void CmdSSubscribe(CmdArgs args, ConnCmdContext& ctx) {
  Subscribe(args, ctx, PubSubKind::kShardChannel);
}
// UNSUBSCRIBE [channel ...]
void CmdUnsubscribe(CmdArgs args, ConnCmdContext& ctx) {
  Unsubscribe(args, ctx, PubSubKind::kChannel);
}
// PUNSUBSCRIBE [pattern ...]
void CmdPUnsubscribe(CmdArgs args, ConnCmdContext& ctx) {
  Unsubscribe(args, ctx, PubSubKind::kPattern);
}
// SUNSUBSCRIBE [shardchannel ...]
void CmdSUnsubscribe(CmdArgs args, ConnCmdContext& ctx) {
  Unsubscribe(args, ctx, PubSubKind::kShardChannel);
}

// PUBLISH channel message
awaitable<void> CmdPublish(CmdArgs args, ConnCmdContext& ctx) {
  ctx.rb.SendLong(ctx.pubsub().Publish(ctx.pool(), ctx.state.conn->engine().index(),
                                          PubSubKind::kChannel, args[1], args[2]));
  co_return;
}

// SPUBLISH shardchannel message
awaitable<void> CmdSPublish(CmdArgs args, ConnCmdContext& ctx) {
  ctx.rb.SendLong(ctx.pubsub().Publish(ctx.pool(), ctx.state.conn->engine().index(),
                                          PubSubKind::kShardChannel, args[1], args[2]));
  co_return;
}

// A pipelined run of PUBLISH (or SPUBLISH) calls: one message per target engine for all.
template <PubSubKind kKind>
awaitable<void> PublishRun(std::span<const CmdArgs> calls, ConnCmdContext& ctx) {
  std::vector<std::pair<std::string_view, std::string_view>> messages;
  messages.reserve(calls.size());
  for (CmdArgs args : calls) messages.emplace_back(args[1], args[2]);
  for (int64_t n : ctx.pubsub().PublishMany(ctx.pool(), ctx.state.conn->engine().index(),
                                               kKind, messages)) {
    ctx.rb.SendLong(n);
  }
  co_return;
}

// PUBSUB CHANNELS|SHARDCHANNELS [pattern]
void SendNames(CmdArgs args, ConnCmdContext& ctx, PubSubKind kind) {
  std::optional<std::string_view> pattern;
  if (args.size() == 3) pattern = args[2];
  std::vector<std::string> names = ctx.pubsub().registry().Names(kind, pattern);
  ctx.rb.SendBulkArray(names);
}

// PUBSUB NUMSUB|SHARDNUMSUB [channel ...]: a flat array of name, count (also in RESP3).
void SendNumSub(CmdArgs args, ConnCmdContext& ctx, PubSubKind kind) {
  const PubSubRegistry& registry = ctx.pubsub().registry();
  ctx.rb.StartArray((args.size() - 2) * 2);
  for (size_t i = 2; i < args.size(); ++i) {
    ctx.rb.SendBulk(args[i]);
    ctx.rb.SendLong(registry.Subscribers(kind, args[i]));
  }
}

// PUBSUB CHANNELS [pattern] and PUBSUB SHARDCHANNELS [pattern]
template <PubSubKind kKind>
void PubSubChannels(CmdArgs args, ConnCmdContext& ctx) {
  if (args.size() > 3) return ctx.rb.SendError(SubcommandSyntaxText(args[0], args[1]));
  SendNames(args, ctx, kKind);
}

// PUBSUB NUMSUB [channel ...] and PUBSUB SHARDNUMSUB [shardchannel ...]
template <PubSubKind kKind>
void PubSubNumSub(CmdArgs args, ConnCmdContext& ctx) {
  SendNumSub(args, ctx, kKind);
}

// PUBSUB NUMPAT
void PubSubNumPat(CmdArgs, ConnCmdContext& ctx) {
  const PubSubRegistry& registry = ctx.pubsub().registry();
  ctx.rb.SendLong(static_cast<int64_t>(registry.Size(PubSubKind::kPattern)));
}

// PUBSUB HELP
void PubSubHelp(CmdArgs, ConnCmdContext& ctx) {
  static constexpr std::string_view kHelp[] = {
      "PUBSUB <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "CHANNELS [<pattern>]",
      "    Return the currently active channels matching a <pattern> (default: '*').",
      "NUMPAT",
      "    Return number of subscriptions to patterns.",
      "NUMSUB [<channel> ...]",
      "    Return the number of subscribers for the specified channels, excluding",
      "    pattern subscriptions(default: no channels).",
      "SHARDCHANNELS [<pattern>]",
      "    Return the currently active shard level channels matching a <pattern> (default: "
      "'*').",
      "SHARDNUMSUB [<shardchannel> ...]",
      "    Return the number of subscribers for the specified shard level channel(s)",
      "HELP",
      "    Prints this help.",
  };
  SendHelp(ctx.rb, kHelp);
}

// PUBSUB's subcommands (Redis 7.0's metadata).
std::vector<CommandSpec> PubSubSubcommands() {
  constexpr uint32_t kFlags = kCmdPubSub | kCmdLoading | kCmdStale;
  const std::vector<std::string_view> kCats = {"pubsub", "slow"};
  auto sub = [&](std::string name, int arity, std::string_view since, std::string_view summary,
                 ConnHandler handler) {
    return WithConnHandler(MakeSubcommand(std::move(name), arity, kFlags, kCats, since, summary),
                           handler);
  };
  std::vector<CommandSpec> subs;
  subs.push_back(sub("channels", -2, "2.8.0", "Returns the active channels.",
                     PubSubChannels<PubSubKind::kChannel>));
  subs.push_back(sub("numpat", 2, "2.8.0", "Returns a count of unique pattern subscriptions.",
                     PubSubNumPat));
  subs.push_back(sub("numsub", -2, "2.8.0", "Returns a count of subscribers to channels.",
                     PubSubNumSub<PubSubKind::kChannel>));
  subs.push_back(sub("shardchannels", -2, "7.0.0", "Returns the active shard channels.",
                     PubSubChannels<PubSubKind::kShardChannel>));
  subs.push_back(sub("shardnumsub", -2, "7.0.0",
                     "Returns the count of subscribers of shard channels.",
                     PubSubNumSub<PubSubKind::kShardChannel>));
  subs.push_back(WithConnHandler(
      MakeSubcommand("help", 2, kCmdLoading | kCmdStale, {"slow"}, "6.2.0",
                     "Returns helpful text about the different subcommands."),
      PubSubHelp));
  return subs;
}

}  // namespace

void RegisterPubSubCommands(CommandRegistry* registry) {
  auto spec = [](std::string name, int arity, uint32_t flags, int first_key, int last_key,
                 std::vector<std::string_view> cats, std::string_view summary,
                 std::string_view since) {
    CommandSpec s = MakeSpec(std::move(name), arity, flags, first_key, last_key, std::move(cats),
                             "pubsub", since, summary);
    s.tx_scope = TxScope::kNone;  // channels are not keys: no intent locks
    return s;
  };
  auto conn = [&](CommandSpec s, ConnHandler h) {
    s.kind = HandlerKind::kConn;
    s.conn_handler = h;
    registry->Register(std::move(s));
  };
  // The (un)subscribe commands may run in RESP2 subscribed mode (kCmdSubscribedOk).
  constexpr uint32_t kSub =
      kCmdPubSub | kCmdNoScript | kCmdLoading | kCmdStale | kCmdSubscribedOk;
  constexpr uint32_t kPub = kCmdPubSub | kCmdLoading | kCmdStale | kCmdFast | kCmdMayReplicate;
  auto channels = [](CommandSpec s, AclChannelArgs which) {
    s.acl_channels = which;
    return s;
  };
  conn(channels(spec("subscribe", -2, kSub, 0, 0, {"pubsub", "slow"},
                     "Listens for messages published to channels.", "2.0.0"),
                AclChannelArgs::kSubscribe),
       CmdSubscribe);
  conn(spec("unsubscribe", -1, kSub, 0, 0, {"pubsub", "slow"},
            "Stops listening to messages posted to channels.", "2.0.0"),
       CmdUnsubscribe);
  conn(channels(spec("psubscribe", -2, kSub, 0, 0, {"pubsub", "slow"},
                     "Listens for messages published to channels that match one or more "
                     "patterns.",
                     "2.0.0"),
                AclChannelArgs::kPatterns),
       CmdPSubscribe);
  conn(spec("punsubscribe", -1, kSub, 0, 0, {"pubsub", "slow"},
            "Stops listening to messages published to channels that match one or more "
            "patterns.",
            "2.0.0"),
       CmdPUnsubscribe);
  conn(channels(spec("ssubscribe", -2, kSub, 1, -1, {"pubsub", "slow"},
                     "Listens for messages published to shard channels.", "7.0.0"),
                AclChannelArgs::kSubscribe),
       CmdSSubscribe);
  conn(spec("sunsubscribe", -1, kSub, 1, -1, {"pubsub", "slow"},
            "Stops listening to messages posted to shard channels.", "7.0.0"),
       CmdSUnsubscribe);
  CommandSpec publish = spec("publish", 3, kPub, 0, 0, {"pubsub", "fast"},
                             "Posts a message to a channel.", "2.0.0");
  publish.acl_channels = AclChannelArgs::kPublish;
  publish.batch_handler = PublishRun<PubSubKind::kChannel>;
  registry->RegisterCoord(std::move(publish), CmdPublish);
  CommandSpec spublish = spec("spublish", 3, kPub, 1, 1, {"pubsub", "fast"},
                              "Post a message to a shard channel", "7.0.0");
  spublish.acl_channels = AclChannelArgs::kPublish;
  spublish.batch_handler = PublishRun<PubSubKind::kShardChannel>;
  registry->RegisterCoord(std::move(spublish), CmdSPublish);
  CommandSpec pubsub = spec("pubsub", -2, 0, 0, 0, {"slow"},
                            "A container for Pub/Sub commands.", "2.8.0");
  pubsub.kind = HandlerKind::kConn;
  pubsub.subcommands = PubSubSubcommands();
  registry->Register(std::move(pubsub));
}

}  // namespace dashkv
