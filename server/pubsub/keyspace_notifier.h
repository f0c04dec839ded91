// KeyspaceNotifier: Redis keyspace notifications (notify-keyspace-events), a change listener of
// one shard (server/storage/key_change.h). The events a command or DbSlice raises (`new`,
// `keymiss`, and `expired` / `evicted` for keys removed for those reasons) are published on
// `__keyspace@<db>__:<key>` (message: the event) and `__keyevent@<db>__:<event>` (message: the
// key) to subscribers on every thread, in the order the shard made the changes (PubSub keeps
// one publisher's messages in order). An event's two messages go out as one run (one post per
// target engine), so a client subscribed to both channels sees the events of a multi-shard
// command in the same order on each: two shards' pairs do not interleave.
// Thread: owned by its shard's thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>

#include "io/engine_pool.h"
#include "server/pubsub/pubsub.h"
#include "server/storage/key_change.h"

namespace dashkv {

class KeyspaceNotifier : public ChangeListener {
 public:
  // `flags`: the notify-keyspace-events bits (Config::notify_keyspace_events); `engine`: the
  // shard's engine.
  KeyspaceNotifier(PubSub* pubsub, io::EnginePool* pool, unsigned engine,
                   const std::atomic<uint32_t>* flags)
      : pubsub_(pubsub), pool_(pool), engine_(engine), flags_(flags) {}

  // Registers the notifier with the shard's listeners (events).
  void Attach(ChangeListeners* changes);

  void OnEvent(unsigned db, NotifyClass cls, std::string_view event,
               std::string_view key) override;

 private:
  void Publish(uint32_t flags, unsigned db, std::string_view event, std::string_view key);

  PubSub* pubsub_;
  io::EnginePool* pool_;
  unsigned engine_;
  const std::atomic<uint32_t>* flags_;
  std::string keyspace_channel_, keyevent_channel_;  // scratch
};

}  // namespace dashkv
