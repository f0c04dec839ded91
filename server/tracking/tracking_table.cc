#include "server/tracking/tracking_table.h"

#include <algorithm>
#include <utility>

#include "core/base/logging.h"

namespace dashkv {

TrackingTable::TrackingTable(unsigned engines, PostFn post, ScheduleFn schedule)
    : post_(std::move(post)), schedule_(std::move(schedule)), outbox_(engines) {}

void TrackingTable::Attach(ChangeListeners* changes) {
  changes_ = changes;
  slot_ = changes->Add(this);
}

void TrackingTable::UpdateInterest() {
  const bool want = !keys_.empty() || !prefixes_.empty();
  if (want == interested_ || changes_ == nullptr) return;
  interested_ = want;
  changes_->SetInterest(slot_, want ? (kWantWrites | kWantRemovals) : 0);
}

void TrackingTable::UpdateCounts() {
  num_keys_.store(keys_.size(), std::memory_order_relaxed);
  num_items_.store(items_, std::memory_order_relaxed);
}

void TrackingTable::Remember(std::string_view key, uint64_t client, unsigned engine) {
  auto [it, inserted] = keys_.try_emplace(key);
  std::vector<Reader>& readers = it->second;
  for (const Reader& r : readers) {
    if (r.client == client) return;
  }
  readers.push_back({client, engine});
  ++items_;
  UpdateCounts();
  if (inserted && keys_.size() == 1) UpdateInterest();
}

void TrackingTable::AddPrefix(std::string_view prefix, uint64_t client, unsigned engine) {
  prefixes_.push_back({std::string(prefix), client, engine, next_group_++});
  if (next_group_ == 0) next_group_ = 1;
  UpdateInterest();
}

void TrackingTable::RemovePrefixes(uint64_t client) {
  std::erase_if(prefixes_, [&](const Prefix& p) { return p.client == client; });
  UpdateInterest();
}

void TrackingTable::Queue(unsigned engine, Invalidation inv) {
  DCHECK_LT(engine, outbox_.size());
  outbox_[engine].push_back(std::move(inv));
  if (!flush_scheduled_) {
    flush_scheduled_ = true;
    schedule_();
  }
}

void TrackingTable::Invalidate(std::string_view key) {
  const uint64_t origin = changes_ != nullptr ? changes_->origin() : 0;
  for (const Prefix& p : prefixes_) {
    if (!key.starts_with(p.prefix)) continue;
    auto [it, inserted] = bcast_pending_.try_emplace(p.group);
    if (inserted) {
      it->second.client = p.client;
      it->second.engine = p.engine;
    }
    std::vector<BcastKey>& keys = it->second.keys;
    // The same change told twice (RENAME's removal, then its write). A change by another
    // client stays: a NOLOOP client drops the first but must get the second.
    const uint64_t bcast_origin = BcastOrigin(origin);
    if (!keys.empty() && keys.back().key == key && keys.back().origin == bcast_origin) continue;
    keys.push_back({std::string(key), bcast_origin});
    if (!flush_scheduled_) {
      flush_scheduled_ = true;
      schedule_();
    }
  }
  auto it = keys_.find(key);
  if (it == keys_.end()) return;
  const uint64_t reader_origin = ReaderOrigin(origin);
  for (const Reader& r : it->second) {
    Queue(r.engine, {r.client, reader_origin, 0, std::string(key)});
  }
  items_ -= it->second.size();
  keys_.erase(it);
  UpdateCounts();
  if (keys_.empty()) UpdateInterest();
}

void TrackingTable::ClearKeys() {
  keys_.clear();
  items_ = 0;
  UpdateCounts();
  UpdateInterest();
}

void TrackingTable::EnforceLimit(size_t keep, unsigned effort) {
  if (keys_.size() <= keep) return;
  // Evicted by the server, not by the command that runs.
  const uint64_t origin = changes_ != nullptr ? changes_->origin() : 0;
  if (changes_ != nullptr) changes_->set_origin(0);
  // One walk picks the victims (a begin() per victim would rescan the emptied slots).
  std::vector<std::string> victims;
  const size_t n = std::min<size_t>(keys_.size() - keep, effort);
  for (auto it = keys_.begin(); victims.size() < n; ++it) victims.push_back(it->first);
  for (const std::string& key : victims) Invalidate(key);
  if (changes_ != nullptr) changes_->set_origin(origin);
}

void TrackingTable::Flush() {
  flush_scheduled_ = false;
  for (auto& [group, pending] : bcast_pending_) {
    for (BcastKey& k : pending.keys) {
      outbox_[pending.engine].push_back({pending.client, k.origin, group, std::move(k.key)});
    }
  }
  bcast_pending_.clear();
  for (unsigned e = 0; e < outbox_.size(); ++e) {
    if (outbox_[e].empty()) continue;
    std::vector<Invalidation> batch;
    batch.swap(outbox_[e]);
    post_(e, std::move(batch));
  }
}

void TrackingTable::AfterWrite(unsigned /*db*/, std::string_view key, bool modified) {
  if (modified) Invalidate(key);
}

void TrackingTable::AfterRemove(unsigned /*db*/, std::string_view key,
                                RemoveReason /*reason*/) {
  Invalidate(key);
}

void TrackingTable::BeforeFlush(unsigned /*db*/) { ClearKeys(); }

}  // namespace dashkv
