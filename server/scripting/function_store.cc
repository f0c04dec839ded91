#include "server/scripting/function_store.h"

namespace dashkv {

uint64_t FunctionStore::FirstGeneration() {
  static std::atomic<uint64_t> stores{0};
  return stores.fetch_add(1, std::memory_order_relaxed) << 32;
}

bool ValidFunctionName(std::string_view name) {
  if (name.empty()) return false;
  for (char c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_';
    if (!ok) return false;
  }
  return true;
}

std::string ParseLibraryMetadata(std::string_view code, std::string* name) {
  name->clear();
  if (!code.starts_with("#!")) return "Missing library metadata";
  std::string_view line = code.substr(0, code.find('\n'));
  size_t sp = line.find(' ');
  std::string_view engine = line.substr(2, sp == std::string_view::npos ? sp : sp - 2);
  if (engine != "lua") return "Engine '" + std::string(engine) + "' not found";
  bool named = false;
  while (sp != std::string_view::npos) {
    line.remove_prefix(sp + 1);
    sp = line.find(' ');
    std::string_view word = line.substr(0, sp);
    if (word.empty()) continue;
    if (!word.starts_with("name=")) return "Invalid metadata value given: " + std::string(word);
    *name = std::string(word.substr(5));
    named = true;
  }
  if (!named) return "Library name was not given";
  if (!ValidFunctionName(*name)) {
    return "Library names can only contain letters, numbers, or underscores(_) and must be at "
           "least one character long";
  }
  return "";
}

std::string FunctionStore::AddLocked(
    absl::btree_map<std::string, std::shared_ptr<const FunctionLibrary>>& libs,
    absl::flat_hash_map<std::string, std::shared_ptr<const FunctionInfo>>& fns,
    std::shared_ptr<FunctionLibrary> lib, bool replace) {
  auto old = libs.find(lib->name);
  if (old != libs.end() && !replace) return "Library '" + lib->name + "' already exists";
  for (const auto& f : lib->functions) {
    auto it = fns.find(f->name);
    if (it != fns.end() && it->second->library != lib->name) {
      return "Function " + f->name + " already exists";
    }
  }
  if (old != libs.end()) {
    for (const auto& f : old->second->functions) fns.erase(f->name);
    libs.erase(old);
  }
  for (const auto& f : lib->functions) fns[f->name] = f;
  libs[lib->name] = std::move(lib);
  return "";
}

std::string FunctionStore::Add(std::shared_ptr<FunctionLibrary> lib, bool replace) {
  std::lock_guard lock(mu_);
  std::string err = AddLocked(libs_, functions_, std::move(lib), replace);
  if (err.empty()) generation_.fetch_add(1, std::memory_order_acq_rel);
  return err;
}

bool FunctionStore::Delete(std::string_view name) {
  std::lock_guard lock(mu_);
  auto it = libs_.find(std::string(name));
  if (it == libs_.end()) return false;
  for (const auto& f : it->second->functions) functions_.erase(f->name);
  libs_.erase(it);
  generation_.fetch_add(1, std::memory_order_acq_rel);
  return true;
}

void FunctionStore::Flush() {
  std::lock_guard lock(mu_);
  libs_.clear();
  functions_.clear();
  generation_.fetch_add(1, std::memory_order_acq_rel);
}

std::string FunctionStore::Restore(std::vector<std::shared_ptr<FunctionLibrary>> libs,
                                   RestorePolicy policy) {
  std::lock_guard lock(mu_);
  // Built aside, so a failure leaves the store as it was.
  absl::btree_map<std::string, std::shared_ptr<const FunctionLibrary>> new_libs;
  absl::flat_hash_map<std::string, std::shared_ptr<const FunctionInfo>> new_fns;
  if (policy != RestorePolicy::kFlush) {
    new_libs = libs_;
    new_fns = functions_;
  }
  for (auto& lib : libs) {
    std::string err = AddLocked(new_libs, new_fns, std::move(lib),
                                policy == RestorePolicy::kReplace);
    if (!err.empty()) return err;
  }
  libs_ = std::move(new_libs);
  functions_ = std::move(new_fns);
  generation_.fetch_add(1, std::memory_order_acq_rel);
  return "";
}

std::shared_ptr<const FunctionInfo> FunctionStore::Find(std::string_view function) const {
  // Each thread keeps the functions it found, valid while the generation stays (every change
  // of the store bumps it under the mutex, after the change), so FCALL takes the mutex only for
  // a function new to the thread. Misses are not cached: a later FUNCTION LOAD needs no bump
  // to be seen.
  struct Cache {
    const FunctionStore* owner = nullptr;
    uint64_t generation = 0;
    absl::flat_hash_map<std::string, std::shared_ptr<const FunctionInfo>> functions;
  };
  static thread_local Cache cache;
  const uint64_t generation = generation_.load(std::memory_order_acquire);
  if (cache.owner != this || cache.generation != generation) {
    cache.owner = this;
    cache.generation = generation;
    cache.functions.clear();
  }
  // Debian's abseil has its own string_view type for heterogeneous lookup.
  const absl::string_view name(function.data(), function.size());
  if (auto it = cache.functions.find(name); it != cache.functions.end()) return it->second;
  std::shared_ptr<const FunctionInfo> found;
  {
    std::lock_guard lock(mu_);
    auto it = functions_.find(name);
    if (it == functions_.end()) return nullptr;
    found = it->second;
  }
  cache.functions.emplace(std::string(function), found);
  return found;
}

std::vector<std::shared_ptr<const FunctionLibrary>> FunctionStore::Libraries() const {
  std::lock_guard lock(mu_);
  std::vector<std::shared_ptr<const FunctionLibrary>> out;
  out.reserve(libs_.size());
  for (const auto& [name, lib] : libs_) out.push_back(lib);
  return out;
}

size_t FunctionStore::num_functions() const {
  std::lock_guard lock(mu_);
  return functions_.size();
}

}  // namespace dashkv
