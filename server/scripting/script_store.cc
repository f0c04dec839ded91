#include "server/scripting/script_store.h"

#include "core/sha1.h"
#include "core/str_util.h"

namespace dashkv {

uint64_t ScriptStore::FirstGeneration() {
  static std::atomic<uint64_t> stores{0};
  return stores.fetch_add(1, std::memory_order_relaxed) << 32;
}

bool SetScriptFlag(std::string_view name, ScriptFlags* flags) {
  if (name == "no-writes") {
    flags->no_writes = true;
  } else if (name == "allow-oom") {
    flags->allow_oom = true;
  } else if (name == "allow-stale") {
    flags->allow_stale = true;
  } else if (name == "no-cluster") {
    flags->no_cluster = true;
  } else if (name == "allow-cross-slot-keys") {
    flags->allow_cross_slot_keys = true;
  } else {
    return false;
  }
  return true;
}

std::string ParseShebang(std::string_view body, ScriptFlags* flags) {
  *flags = ScriptFlags{};
  if (!body.starts_with("#!")) return "";
  flags->shebang = true;
  size_t eol = body.find('\n');
  std::string_view line = body.substr(0, eol);
  // "#!<engine> [flags=a,b]": words separated by spaces.
  size_t sp = line.find(' ');
  std::string_view engine = line.substr(2, sp == std::string_view::npos ? sp : sp - 2);
  if (engine != "lua") return "Unexpected engine in script shebang: " + std::string(line);
  while (sp != std::string_view::npos) {
    line.remove_prefix(sp + 1);
    sp = line.find(' ');
    std::string_view word = line.substr(0, sp);
    if (word.empty()) continue;
    if (!word.starts_with("flags=")) return "Unknown lua shebang option: " + std::string(word);
    word.remove_prefix(6);
    while (!word.empty()) {
      size_t comma = word.find(',');
      std::string_view f = word.substr(0, comma);
      if (!SetScriptFlag(f, flags)) return "Unexpected flag in script shebang: " + std::string(f);
      word = comma == std::string_view::npos ? std::string_view() : word.substr(comma + 1);
    }
  }
  return "";
}

std::shared_ptr<const StoredScript> ScriptStore::Add(std::string_view sha, std::string_view body,
                                                     std::string* error) {
  {
    std::lock_guard lock(mu_);
    auto it = by_sha_.find(std::string(sha));
    if (it != by_sha_.end()) return it->second;
  }
  auto script = std::make_shared<StoredScript>();
  *error = ParseShebang(body, &script->flags);
  if (!error->empty()) return nullptr;
  script->sha = std::string(sha);
  script->body = std::string(body);
  std::lock_guard lock(mu_);
  auto [it, added] = by_sha_.emplace(script->sha, script);
  if (added) body_bytes_ += script->body.size();
  return it->second;
}

namespace {

// The scripts a thread found, valid while the store's generation stays (SCRIPT FLUSH bumps
// it after emptying the store, under its mutex), so EVALSHA and a repeated EVAL take no mutex
// and EVAL computes no SHA1 for a script the thread already met. Misses are not cached.
struct ThreadScripts {
  const ScriptStore* owner = nullptr;
  uint64_t generation = 0;
  absl::flat_hash_map<std::string, std::shared_ptr<const StoredScript>> by_sha;
  // Keys view the body held by the value's script.
  absl::flat_hash_map<absl::string_view, std::shared_ptr<const StoredScript>> by_body;
};

ThreadScripts& CacheOf(const ScriptStore* store, uint64_t generation) {
  static thread_local ThreadScripts cache;
  if (cache.owner != store || cache.generation != generation) {
    cache.owner = store;
    cache.generation = generation;
    cache.by_sha.clear();
    cache.by_body.clear();
  }
  return cache;
}

}  // namespace

std::shared_ptr<const StoredScript> ScriptStore::FindLocked(const std::string& lower_sha) const {
  std::lock_guard lock(mu_);
  auto it = by_sha_.find(lower_sha);
  return it == by_sha_.end() ? nullptr : it->second;
}

std::shared_ptr<const StoredScript> ScriptStore::Find(std::string_view sha) const {
  if (sha.size() != 40) return nullptr;
  std::string lower(sha);
  for (char& c : lower) c = AsciiToLower(c);
  ThreadScripts& cache = CacheOf(this, generation_.load(std::memory_order_acquire));
  if (auto it = cache.by_sha.find(lower); it != cache.by_sha.end()) return it->second;
  std::shared_ptr<const StoredScript> found = FindLocked(lower);
  if (found != nullptr) cache.by_sha.emplace(std::move(lower), found);
  return found;
}

std::shared_ptr<const StoredScript> ScriptStore::FindByBody(std::string_view body) const {
  ThreadScripts& cache = CacheOf(this, generation_.load(std::memory_order_acquire));
  const absl::string_view key(body.data(), body.size());
  if (auto it = cache.by_body.find(key); it != cache.by_body.end()) return it->second;
  std::shared_ptr<const StoredScript> found = FindLocked(Sha1Hex(body));
  if (found != nullptr) {
    cache.by_body.emplace(absl::string_view(found->body.data(), found->body.size()), found);
  }
  return found;
}

void ScriptStore::Flush() {
  std::lock_guard lock(mu_);
  by_sha_.clear();
  body_bytes_ = 0;
  generation_.fetch_add(1, std::memory_order_acq_rel);
}

size_t ScriptStore::size() const {
  std::lock_guard lock(mu_);
  return by_sha_.size();
}

size_t ScriptStore::body_bytes() const {
  std::lock_guard lock(mu_);
  return body_bytes_;
}

}  // namespace dashkv
