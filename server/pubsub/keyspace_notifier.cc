#include "server/pubsub/keyspace_notifier.h"

#include "core/str_util.h"

namespace dashkv {

void KeyspaceNotifier::Attach(ChangeListeners* changes) {
  changes->SetInterest(changes->Add(this), kWantEvents);
}

void KeyspaceNotifier::OnEvent(unsigned db, NotifyClass cls, std::string_view event,
                               std::string_view key) {
  uint32_t flags = flags_->load(std::memory_order_relaxed);
  if (flags & cls) Publish(flags, db, event, key);
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
