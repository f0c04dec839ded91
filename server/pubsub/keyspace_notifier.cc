#include "server/pubsub/keyspace_notifier.h"

#include <span>
#include <utility>

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
  std::pair<std::string_view, std::string_view> run[2];
  size_t n = 0;
  if (flags & kNotifyKeyspace) {
    keyspace_channel_ = StrCat("__keyspace@", db, "__:", key);
    run[n++] = {keyspace_channel_, event};
  }
  if (flags & kNotifyKeyevent) {
    keyevent_channel_ = StrCat("__keyevent@", db, "__:", event);
    run[n++] = {keyevent_channel_, key};
  }
  if (n > 0) pubsub_->PublishMany(*pool_, engine_, PubSubKind::kChannel, std::span(run, n));
}

}  // namespace dashkv
