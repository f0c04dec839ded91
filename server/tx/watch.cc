#include "server/tx/watch.h"

#include <algorithm>

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
}

void WatchTable::Unwatch(std::string_view lock_key, const WatchState* state) {
  auto it = watchers_.find(Av(lock_key));
  if (it == watchers_.end()) return;
  auto& list = it->second;
  list.erase(std::remove_if(list.begin(), list.end(),
                            [state](const auto& w) { return w.get() == state; }),
             list.end());
  if (list.empty()) watchers_.erase(it);
}

bool WatchTable::IsWatched(std::string_view lock_key) const {
  return watchers_.contains(Av(lock_key));
}

void WatchTable::Touch(std::string_view lock_key) {
  auto it = watchers_.find(Av(lock_key));
  if (it == watchers_.end()) return;
  for (auto& w : it->second) w->dirty.store(true, std::memory_order_release);
  watchers_.erase(it);
}

}  // namespace dashkv
