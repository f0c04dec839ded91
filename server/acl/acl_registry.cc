#include "server/acl/acl_registry.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "core/str_util.h"

namespace dashkv {

AclRegistry::AclRegistry(const CommandRegistry& registry, std::atomic<bool>* auth_required,
                         const std::atomic<bool>* all_channels_default)
    : rules_(registry, all_channels_default), auth_required_(auth_required) {
  absl::MutexLock lock(&mu_);
  Publish(std::make_shared<const AclUser>(rules_.DefaultUser()));
}

void AclRegistry::Publish(AclUserPtr user) {
  const bool is_default = user->name == "default";
  users_[user->name] = std::move(user);
  if (is_default) UpdateAuthRequired();
  generation_.fetch_add(1, std::memory_order_acq_rel);
}

void AclRegistry::UpdateAuthRequired() {
  const AclUser& d = *users_.at("default");
  auth_required_->store(!(d.nopass && d.enabled), std::memory_order_relaxed);
}

AclUserPtr AclRegistry::Find(std::string_view name) const {
  absl::MutexLock lock(&mu_);
  auto it = users_.find(name);
  return it == users_.end() ? nullptr : it->second;
}

AclUserPtr AclRegistry::Authenticate(std::string_view name, std::string_view password) const {
  AclUserPtr user = Find(name);
  if (user == nullptr || !user->CheckPassword(password)) return nullptr;
  return user;
}

std::string AclRegistry::SetUser(std::string_view name, std::span<const std::string_view> ops,
                                 AclUserPtr* before, AclUserPtr* after) {
  if (!ValidAclUserName(name)) return "Usernames can't contain spaces or null characters";
  absl::MutexLock lock(&mu_);
  auto it = users_.find(name);
  AclUser user = it == users_.end() ? rules_.NewUser(name) : *it->second;
  if (std::string err = rules_.Apply(&user, ops); !err.empty()) return err;
  if (before != nullptr) *before = it == users_.end() ? nullptr : it->second;
  auto published = std::make_shared<const AclUser>(std::move(user));
  if (after != nullptr) *after = published;
  Publish(std::move(published));
  return "";
}

std::vector<std::string> AclRegistry::DelUsers(std::span<const std::string_view> names) {
  std::vector<std::string> deleted;
  absl::MutexLock lock(&mu_);
  for (std::string_view name : names) {
    auto it = users_.find(name);
    if (it == users_.end() || name == "default") continue;
    deleted.push_back(it->first);
    users_.erase(it);
  }
  if (!deleted.empty()) generation_.fetch_add(1, std::memory_order_acq_rel);
  return deleted;
}

std::vector<AclUserPtr> AclRegistry::Users() const {
  absl::MutexLock lock(&mu_);
  std::vector<AclUserPtr> out;
  out.reserve(users_.size());
  for (const auto& [name, user] : users_) out.push_back(user);
  return out;
}

void AclRegistry::SetDefaultPassword(std::string_view password) {
  absl::MutexLock lock(&mu_);
  AclUser user = *users_.at("default");
  std::string pass = StrCat(">", password);
  std::string_view ops[] = {"resetpass", password.empty() ? std::string_view("nopass") : pass};
  std::string err = rules_.Apply(&user, ops);
  (void)err;  // these two rules cannot fail
  Publish(std::make_shared<const AclUser>(std::move(user)));
}

absl::Status AclRegistry::LoadUserLine(std::span<const std::string_view> words) {
  if (words.size() < 2 || !EqualsIgnoreCase(words[0], "user")) {
    return absl::InvalidArgumentError("should start with user keyword followed by the username");
  }
  std::string_view name = words[1];
  if (!ValidAclUserName(name)) {
    return absl::InvalidArgumentError("Usernames can't contain spaces or null characters");
  }
  absl::MutexLock lock(&mu_);
  if (std::find(config_users_.begin(), config_users_.end(), name) != config_users_.end()) {
    return absl::InvalidArgumentError(
        "Duplicate user found. A user can only be defined once in config files");
  }
  AclUser user = rules_.NewUser(name);
  if (name == "default") {
    // As Redis: the existing default user is reset, then given the line's rules.
    std::string_view reset[] = {"reset"};
    std::string err = rules_.Apply(&user, reset);
    (void)err;  // "reset" cannot fail
  }
  if (std::string err = rules_.Apply(&user, words.subspan(2)); !err.empty()) {
    return absl::InvalidArgumentError(err);
  }
  config_users_.emplace_back(name);
  Publish(std::make_shared<const AclUser>(std::move(user)));
  return absl::OkStatus();
}

absl::Status AclRegistry::LoadFile(const std::string& path, std::vector<std::string>* replaced) {
  std::ifstream in(path);
  if (!in) {
    return absl::InvalidArgumentError(StrCat("Error loading ACLs, opening file '", path,
                                             "': ", std::strerror(errno)));
  }
  std::string errors;
  absl::btree_map<std::string, AclUserPtr, std::less<>> loaded;
  std::string line;
  for (int lineno = 1; std::getline(in, line); ++lineno) {
    std::vector<std::string_view> words = SplitAclWords(line);
    if (words.empty()) continue;
    if (words.size() < 2 || words[0] != "user") {
      StrAppend(&errors, path, ":", lineno,
                " should start with user keyword followed by the username. ");
      continue;
    }
    if (loaded.contains(words[1])) {
      StrAppend(&errors, "WARNING: Duplicate user '", words[1], "' found on line ", lineno, ". ");
      continue;
    }
    AclUser user = rules_.NewUser(words[1]);
    std::string err = rules_.Apply(&user, std::span(words).subspan(2));
    if (!err.empty()) {
      // Redis's file wording: "Error in applying operation" for the SETUSER form's text.
      constexpr std::string_view kSetUser = "Error in ACL SETUSER modifier ";
      if (err.starts_with(kSetUser)) {
        err = StrCat("Error in applying operation ", err.substr(kSetUser.size()));
      }
      StrAppend(&errors, path, ":", lineno, ": ", err, ". ");
      continue;
    }
    std::string name = user.name;
    loaded[name] = std::make_shared<const AclUser>(std::move(user));
  }
  if (!errors.empty()) {
    return absl::InvalidArgumentError(StrCat(
        errors, "WARNING: ACL errors detected, no change to the previously active ACL rules "
                "was performed"));
  }
  if (!loaded.contains("default")) {
    loaded["default"] = std::make_shared<const AclUser>(rules_.DefaultUser());
  }
  absl::MutexLock lock(&mu_);
  if (replaced != nullptr) {
    for (const auto& [name, user] : users_) {
      if (name != "default") replaced->push_back(name);
    }
  }
  users_ = std::move(loaded);
  UpdateAuthRequired();
  generation_.fetch_add(1, std::memory_order_acq_rel);
  return absl::OkStatus();
}

absl::Status AclRegistry::SaveFile(const std::string& path) const {
  std::string text;
  for (const AclUserPtr& user : Users()) StrAppend(&text, rules_.Describe(*user), "\n");
  const std::string tmp = StrCat(path, ".tmp-", getpid());
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << text;
    out.flush();
    if (!out) return absl::InternalError("Failed to save the ACL file");
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    return absl::InternalError("Failed to save the ACL file");
  }
  return absl::OkStatus();
}

}  // namespace dashkv
