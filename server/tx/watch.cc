#include "server/tx/watch.h"

#include <algorithm>

#include "server/cmd_context.h"
#include "server/storage/shard.h"
#include "server/tx/transaction.h"

namespace dashkv {

namespace {
// Debian's abseil has its own string_view: heterogeneous lookups need that type.
absl::string_view Av(std::string_view s) { return absl::string_view(s.data(), s.size()); }
}  // namespace

void WatchTable::Watch(std::string lock_key, std::shared_ptr<WatchState> state) {
  auto& list = watchers_[lock_key];
  for (const auto& w : list) {
    if (w == state) return;
  }
  list.push_back(std::move(state));
  if (watchers_.size() == 1) UpdateInterest();
}

void WatchTable::Unwatch(std::string_view lock_key, const WatchState* state) {
  auto it = watchers_.find(Av(lock_key));
  if (it == watchers_.end()) return;
  auto& list = it->second;
  list.erase(std::remove_if(list.begin(), list.end(),
                            [state](const auto& w) { return w.get() == state; }),
             list.end());
  if (list.empty()) {
    watchers_.erase(it);
    if (watchers_.empty()) UpdateInterest();
  }
}

bool WatchTable::IsWatched(std::string_view lock_key) const {
  return watchers_.contains(Av(lock_key));
}

void WatchTable::Touch(std::string_view lock_key) {
  auto it = watchers_.find(Av(lock_key));
  if (it == watchers_.end()) return;
  for (auto& w : it->second) w->dirty.store(true, std::memory_order_release);
  watchers_.erase(it);
  if (watchers_.empty()) UpdateInterest();
}

void WatchTable::UpdateInterest() {
  if (changes_ != nullptr) {
    changes_->SetInterest(slot_, watchers_.empty() ? 0u : uint32_t{kWantWrites | kWantRemovals});
  }
}

void WatchTable::AfterWrite(unsigned db, std::string_view key, bool modified) {
  if (modified) Touch(LockKeyOf(db, key));
}

void WatchTable::AfterRemove(unsigned db, std::string_view key, RemoveReason reason) {
  if (reason != RemoveReason::kExpired) Touch(LockKeyOf(db, key));
}

void WatchTable::BeforeFlush(unsigned db) {
  if (empty()) return;
  int64_t now_ms = NowMs();
  TouchIf(static_cast<int>(db), [&](unsigned d, std::string_view key) {
    return shard_->KeyLive(d, key, now_ms);
  });
}

void WatchTable::BeforeSwap(unsigned db1, unsigned db2) {
  if (empty()) return;
  // Redis's touchAllWatchedKeysInDb both ways: a watched key of either database is touched
  // when it exists in either of them.
  int64_t now_ms = NowMs();
  for (unsigned db : {db1, db2}) {
    TouchIf(static_cast<int>(db), [&](unsigned, std::string_view key) {
      return shard_->KeyLive(db1, key, now_ms) || shard_->KeyLive(db2, key, now_ms);
    });
  }
}

}  // namespace dashkv
