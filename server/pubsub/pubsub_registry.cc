#include "server/pubsub/pubsub_registry.h"

#include "core/base/logging.h"
#include "core/glob.h"
#include "io/engine.h"

namespace dashkv {

unsigned PubSubRegistry::ReaderSlot() const {
  const io::Engine* engine = io::Engine::Current();
  return engine != nullptr && engine->index() < engines_ ? engine->index() : engines_;
}

void PubSubRegistry::Add(PubSubKind kind, std::string_view name, unsigned engine) {
  ReadMostlyLock::WriteGuard lock(mu_);
  Entry& e = maps_[size_t(kind)][name];
  if (e.per_engine.empty()) e.per_engine.resize(engines_);
  ++e.subscribers;
  ++e.per_engine[engine];
}

void PubSubRegistry::Remove(PubSubKind kind, std::string_view name, unsigned engine) {
  ReadMostlyLock::WriteGuard lock(mu_);
  Map& map = maps_[size_t(kind)];
  auto it = map.find(name);
  CHECK(it != map.end() && it->second.per_engine[engine] > 0);
  --it->second.per_engine[engine];
  if (--it->second.subscribers == 0) map.erase(it);
}

int64_t PubSubRegistry::Targets(PubSubKind kind, std::string_view channel,
                                EngineList* engines) const {
  absl::InlinedVector<bool, 8> hit(engines_, false);
  int64_t receivers = 0;
  auto mark = [&](const Entry& e) {
    receivers += e.subscribers;
    for (unsigned i = 0; i < engines_; ++i) {
      if (e.per_engine[i] > 0) hit[i] = true;
    }
  };
  {
    ReadMostlyLock::ReadGuard lock(mu_, ReaderSlot());
    const Map& channels = maps_[size_t(kind)];
    if (auto it = channels.find(channel); it != channels.end()) mark(it->second);
    if (kind == PubSubKind::kChannel) {
      for (const auto& [pattern, e] : maps_[size_t(PubSubKind::kPattern)]) {
        if (GlobMatch(pattern, channel)) mark(e);
      }
    }
  }
  engines->clear();
  if (receivers == 0) return 0;
  for (unsigned i = 0; i < engines_; ++i) {
    if (hit[i]) engines->push_back(i);
  }
  return receivers;
}

std::vector<std::string> PubSubRegistry::Names(PubSubKind kind,
                                               std::optional<std::string_view> pattern) const {
  std::vector<std::string> out;
  ReadMostlyLock::ReadGuard lock(mu_, ReaderSlot());
  for (const auto& [name, e] : maps_[size_t(kind)]) {
    if (!pattern || GlobMatch(*pattern, name)) out.push_back(name);
  }
  return out;
}

int64_t PubSubRegistry::Subscribers(PubSubKind kind, std::string_view name) const {
  ReadMostlyLock::ReadGuard lock(mu_, ReaderSlot());
  const Map& map = maps_[size_t(kind)];
  auto it = map.find(name);
  return it == map.end() ? 0 : it->second.subscribers;
}

size_t PubSubRegistry::Size(PubSubKind kind) const {
  ReadMostlyLock::ReadGuard lock(mu_, ReaderSlot());
  return maps_[size_t(kind)].size();
}

}  // namespace dashkv
