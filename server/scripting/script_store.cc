#include "server/scripting/script_store.h"

#include "core/str_util.h"

namespace dashkv {

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

std::shared_ptr<const StoredScript> ScriptStore::Find(std::string_view sha) const {
  if (sha.size() != 40) return nullptr;
  std::string lower(sha);
  for (char& c : lower) c = AsciiToLower(c);
  // Each thread keeps the scripts it found, valid while the generation stays (SCRIPT FLUSH
  // bumps it), so EVALSHA takes the mutex only for a script new to the thread.
  struct Cache {
    const ScriptStore* owner = nullptr;
    uint64_t generation = 0;
    absl::flat_hash_map<std::string, std::shared_ptr<const StoredScript>> scripts;
  };
  static thread_local Cache cache;
  const uint64_t generation = generation_.load(std::memory_order_acquire);
  if (cache.owner != this || cache.generation != generation) {
    cache.owner = this;
    cache.generation = generation;
    cache.scripts.clear();
  }
  if (auto it = cache.scripts.find(lower); it != cache.scripts.end()) return it->second;
  std::shared_ptr<const StoredScript> found;
  {
    std::lock_guard lock(mu_);
    auto it = by_sha_.find(lower);
    if (it == by_sha_.end()) return nullptr;
    found = it->second;
  }
  cache.scripts.emplace(std::move(lower), found);
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
