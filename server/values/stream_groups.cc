#include "server/values/stream_groups.h"

#include <optional>

namespace dashkv {

StreamConsumer* StreamGroup::FindConsumer(std::string_view name) const {
  auto it = consumers.find(name);
  return it == consumers.end() ? nullptr : it->second.get();
}

StreamConsumer* StreamGroup::AddConsumer(std::string_view name, int64_t now_ms) {
  auto [it, added] = consumers.try_emplace(std::string(name));
  if (!added) return nullptr;
  it->second = std::make_unique<StreamConsumer>();
  it->second->name = std::string(name);
  it->second->seen_time_ms = now_ms;
  return it->second.get();
}

size_t StreamGroup::DeleteConsumer(std::string_view name) {
  auto it = consumers.find(name);
  if (it == consumers.end()) return 0;
  const size_t pending = it->second->pel.size();
  for (const auto& [id, p] : it->second->pel) pel.erase(id);
  consumers.erase(it);
  return pending;
}

bool StreamGroup::Ack(StreamID id) {
  auto it = pel.find(id);
  if (it == pel.end()) return false;
  if (it->second->consumer != nullptr) it->second->consumer->pel.erase(id);
  pel.erase(it);
  return true;
}

void StreamGroup::Deliver(StreamID id, StreamConsumer* c, int64_t now_ms) {
  auto [it, added] = pel.try_emplace(id);
  if (added) it->second = std::make_unique<StreamPending>();
  StreamPending* p = it->second.get();
  MoveTo(id, p, c);
  p->delivery_time_ms = now_ms;
  p->delivery_count = 1;
}

void StreamGroup::MoveTo(StreamID id, StreamPending* p, StreamConsumer* c) {
  if (p->consumer == c) return;
  if (p->consumer != nullptr) p->consumer->pel.erase(id);
  c->pel[id] = p;
  p->consumer = c;
}

StreamPending* StreamGroup::AddUnowned(StreamID id, int64_t now_ms) {
  auto p = std::make_unique<StreamPending>();
  p->delivery_time_ms = now_ms;
  StreamPending* raw = p.get();
  pel.emplace(id, std::move(p));
  return raw;
}

size_t StreamGroup::MallocUsed() const {
  // B-tree slots counted as 32 bytes per element (see StreamValue::MallocUsed).
  size_t total = sizeof(*this) + pel.size() * (32 + sizeof(StreamPending));
  for (const auto& [name, c] : consumers) {
    total += 32 + sizeof(StreamConsumer) + name.capacity() + c->name.capacity() +
             c->pel.size() * 32;
  }
  return total;
}

StreamGroup* StreamGroups::Find(std::string_view name) const {
  auto it = groups_.find(name);
  return it == groups_.end() ? nullptr : it->second.get();
}

StreamGroup* StreamGroups::Create(std::string_view name, StreamID last_id,
                                  int64_t entries_read) {
  auto [it, added] = groups_.try_emplace(std::string(name));
  if (!added) return nullptr;
  it->second = std::make_unique<StreamGroup>();
  it->second->last_id = last_id;
  it->second->entries_read = entries_read;
  return it->second.get();
}

bool StreamGroups::Destroy(std::string_view name) {
  auto it = groups_.find(name);
  if (it == groups_.end()) return false;
  groups_.erase(it);
  return true;
}

std::unique_ptr<StreamGroups> StreamGroups::Clone() const {
  auto out = std::make_unique<StreamGroups>();
  for (const auto& [name, g] : groups_) {
    StreamGroup* copy = out->Create(name, g->last_id, g->entries_read);
    for (const auto& [cname, c] : g->consumers) {
      copy->AddConsumer(cname, c->seen_time_ms);
    }
    for (const auto& [id, p] : g->pel) {
      StreamPending* q = copy->AddUnowned(id, p->delivery_time_ms);
      q->delivery_count = p->delivery_count;
      copy->MoveTo(id, q, copy->FindConsumer(p->consumer->name));
    }
  }
  return out;
}

size_t StreamGroups::MallocUsed() const {
  size_t total = sizeof(*this);
  for (const auto& [name, g] : groups_) total += 32 + name.capacity() + g->MallocUsed();
  return total;
}

int64_t EstimateEntriesRead(const StreamValue& s, StreamID id) {
  if (s.entries_added() == 0) return 0;
  const int64_t added = static_cast<int64_t>(s.entries_added());
  if (s.length() == 0 && id <= s.last_id()) return added;
  if (id == s.last_id()) return added;
  if (id > s.last_id()) return StreamGroup::kInvalidEntriesRead;
  const StreamID zero;
  if (s.max_deleted_id() == zero || s.max_deleted_id() < s.first_id()) {
    // No tombstone inside the stream: positions are known from the start.
    const int64_t before_first = added - static_cast<int64_t>(s.length());
    if (id < s.first_id()) return before_first;
    if (id == s.first_id()) return before_first + 1;
  }
  return StreamGroup::kInvalidEntriesRead;
}

bool HasTombstonesFrom(const StreamValue& s, StreamID start) {
  if (s.length() == 0 || s.max_deleted_id() == StreamID{}) return false;
  if (s.first_id() > s.max_deleted_id()) return false;  // every tombstone is before the entries
  return start <= s.max_deleted_id();
}

std::optional<int64_t> GroupLag(const StreamValue& s, const StreamGroup& g) {
  const int64_t added = static_cast<int64_t>(s.entries_added());
  if (added == 0) return 0;
  if (g.entries_read != StreamGroup::kInvalidEntriesRead && !HasTombstonesFrom(s, g.last_id)) {
    return added - g.entries_read;
  }
  int64_t read = EstimateEntriesRead(s, g.last_id);
  if (read == StreamGroup::kInvalidEntriesRead) return std::nullopt;
  return added - read;
}

void AdvanceGroup(const StreamValue& s, StreamGroup& g, StreamID id) {
  if (id <= g.last_id) return;
  if (g.entries_read != StreamGroup::kInvalidEntriesRead && !HasTombstonesFrom(s, id)) {
    ++g.entries_read;
  } else if (s.entries_added() != 0) {
    g.entries_read = EstimateEntriesRead(s, id);
  }
  g.last_id = id;
}

}  // namespace dashkv
