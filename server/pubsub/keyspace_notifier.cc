#include "server/pubsub/keyspace_notifier.h"

#include "core/str_util.h"

namespace dashkv {

void KeyspaceNotifier::Attach(ChangeListeners* changes) {
  changes->SetInterest(changes->Add(this), kWantEvents | kWantRemovals);
}

void KeyspaceNotifier::OnEvent(unsigned db, NotifyClass cls, std::string_view event,
                               std::string_view key) {
  uint32_t flags = flags_->load(std::memory_order_relaxed);
  if (flags & cls) Publish(flags, db, event, key);
}

void KeyspaceNotifier::AfterRemove(unsigned db, std::string_view key, RemoveReason reason) {
  uint32_t flags = flags_->load(std::memory_order_relaxed);
  if (reason == RemoveReason::kExpired && (flags & kNotifyExpired)) {
    Publish(flags, db, "expired", key);
  } else if (reason == RemoveReason::kEvicted && (flags & kNotifyEvicted)) {
    Publish(flags, db, "evicted", key);
  }
}

void KeyspaceNotifier::Publish(uint32_t flags, unsigned db, std::string_view event,
                               std::string_view key) {
  if (flags & kNotifyKeyspace) {
    channel_ = StrCat("__keyspace@", db, "__:", key);
    pubsub_->Publish(*pool_, engine_, PubSubKind::kChannel, channel_, event);
  }
  if (flags & kNotifyKeyevent) {
    channel_ = StrCat("__keyevent@", db, "__:", event);
    pubsub_->Publish(*pool_, engine_, PubSubKind::kChannel, channel_, key);
  }
}

}  // namespace dashkv
