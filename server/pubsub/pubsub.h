// PubSub: Redis publish/subscribe across engine threads (SUBSCRIBE, PSUBSCRIBE, SSUBSCRIBE and
// their UNSUBSCRIBEs, PUBLISH, SPUBLISH). Owned by the Server.
// Thread: each engine's subscription tables are engine-local (touched only on that engine);
// the registry is thread-safe (see pubsub_registry.h); Publish runs on any engine.
//
// Design
//  A subscriber lives in the tables of the engine that owns its connection: name -> that
//  engine's subscribing connections, one map per kind (channels, patterns, shard channels).
//  The registry counts subscribers per engine, so PUBLISH reads from it, in one shared-lock
//  lookup, the engines that have receivers (channel subscribers or a matching pattern) and
//  how many subscriptions receive the message, which is its reply (as Redis). It delivers on
//  its own engine inline and posts one one-way message to each other target engine, so it
//  replies without waiting for another thread. Each target engine looks the channel and its
//  patterns up in its own tables and queues the frames on its connections
//  (io::Connection::SendAsync). Messages of one publisher arrive in publish order (an engine
//  inbox is FIFO per producer), and a message is in every target's inbox before PUBLISH
//  replies, so a publish that follows it (from any client) is delivered after it.
//  The registry is updated before a (un)subscribe replies, so a message published after the
//  client saw its subscription confirmed reaches it. A message already on its way to an engine
//  when the last local subscriber leaves is dropped there (and was counted by the publisher).
#pragma once

#include <utility>  // before asio: awaitable.hpp uses std::exchange

#include <absl/container/flat_hash_map.h>

#include <boost/asio/awaitable.hpp>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "io/engine_pool.h"
#include "io/output_limit.h"
#include "io/reply_builder.h"
#include "io/service.h"
#include "server/pubsub/client_subscriptions.h"
#include "server/pubsub/pubsub_registry.h"

namespace dashkv {

class ConnState;
struct CommandSpec;

class PubSub {
 public:
  // `normal_limit` / `pubsub_limit`: the output buffer limit classes a connection gets when it
  // leaves / enters subscribed mode. They must outlive the PubSub.
  PubSub(unsigned engines, const io::OutputLimitClass* normal_limit,
         const io::OutputLimitClass* pubsub_limit);

  // Subscribes `state`'s connection to `name`; returns false when it already was.
  // REQUIRES: runs on the connection's engine.
  bool Subscribe(ConnState& state, PubSubKind kind, std::string_view name);
  // Unsubscribes it; returns false when it was not subscribed.
  // REQUIRES: runs on the connection's engine.
  bool Unsubscribe(ConnState& state, PubSubKind kind, std::string_view name);
  // Drops every subscription of `state` (RESET, disconnect), leaving no trace in the tables
  // or the registry. REQUIRES: runs on the connection's engine.
  void UnsubscribeAll(ConnState& state);

  // Delivers `message` to every subscriber of `channel` (kChannel: channel subscribers as
  // "message" plus matching patterns as "pmessage"; kShardChannel: "smessage") on every engine;
  // returns the number of receiving subscriptions. REQUIRES: runs on engine `my_engine`.
  int64_t Publish(io::EnginePool& pool, unsigned my_engine, PubSubKind kind,
                  std::string_view channel, std::string_view message);

  // Publishes a run of messages (channel, message) in order, with one message per target
  // engine for the whole run; returns the receivers of each. REQUIRES: as Publish.
  std::vector<int64_t> PublishMany(
      io::EnginePool& pool, unsigned my_engine, PubSubKind kind,
      std::span<const std::pair<std::string_view, std::string_view>> messages);

  const PubSubRegistry& registry() const { return registry_; }

 private:
  using Subscribers = std::vector<ConnState*>;
  // One engine's tables, by PubSubKind.
  struct alignas(64) LocalTables {
    PubSubNameMap<Subscribers> maps[kPubSubKinds];
  };

  // Queues the message on the subscribers of engine `engine`; returns how many it reached.
  // REQUIRES: runs on engine `engine`.
  int64_t DeliverLocal(unsigned engine, PubSubKind kind, std::string_view channel,
                       std::string_view message);
  // Switches the connection's output limit class when it enters or leaves subscribed mode.
  void UpdateMode(ConnState& state, bool was_subscribed);

  std::vector<LocalTables> locals_;  // locals_[i] touched only by engine i
  PubSubRegistry registry_;
  const io::OutputLimitClass* normal_limit_;
  const io::OutputLimitClass* pubsub_limit_;
};

// Returns whether the connection is in subscribed mode (any channel, pattern or shard channel).
bool InSubscribedMode(const ConnState& state);

// Returns whether `spec` is refused because the connection is a RESP2 one in subscribed mode
// (only commands flagged kCmdSubscribedOk may run there: (P|S)SUBSCRIBE, (P|S)UNSUBSCRIBE, PING,
// QUIT and RESET). Cheap when the connection has never subscribed.
bool SubscribedModeForbids(const ConnState& state, const CommandSpec& spec);
// Sends Redis's error for such a command.
void SendSubscribedModeError(io::ReplyBuilder& rb, const CommandSpec& spec);

}  // namespace dashkv
