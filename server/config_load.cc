// Config's start-up (defaults, config file, flags), its start-only entries and CONFIG REWRITE.
// The entries changeable at run time and the flags live in config.cc.
#include <absl/flags/reflection.h>
#include <absl/strings/numbers.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <fstream>

#include "core/base/logging.h"
#include "core/str_util.h"
#include "io/engine_pool.h"
#include "server/config.h"

namespace dashkv {

namespace {

constexpr std::string_view kSetFailedPrefix =
    "ERR CONFIG SET failed (possibly related to argument '";

// Returns the reason of a CONFIG SET error text ("... - argument must be ..."), as a config
// file error prints it.
std::string_view ErrorReason(std::string_view err) {
  if (!err.starts_with(kSetFailedPrefix)) return err;
  size_t dash = err.find("') - ", kSetFailedPrefix.size());
  return dash == std::string_view::npos ? err : err.substr(dash + 5);
}

// Parses an integer setting in [lo, hi]; returns Redis's reason text, or "" with *out set.
std::string ParseIntSetting(std::string_view v, int64_t lo, int64_t hi, int64_t* out) {
  if (!absl::SimpleAtoi(std::string(v), out)) {
    return "argument couldn't be parsed into an integer";
  }
  if (*out < lo || *out > hi) {
    return StrCat("argument must be between ", lo, " and ", hi, " inclusive");
  }
  return "";
}

std::string ParseYesNo(std::string_view v, bool* out) {
  if (EqualsIgnoreCase(v, "yes")) {
    *out = true;
  } else if (EqualsIgnoreCase(v, "no")) {
    *out = false;
  } else {
    return "argument must be 'yes' or 'no'";
  }
  return "";
}

std::string AbsolutePath(const std::string& path) {
  if (!path.empty() && path[0] == '/') return path;
  char cwd[4096];
  if (getcwd(cwd, sizeof(cwd)) == nullptr) return path;
  return StrCat(cwd, "/", path);
}

// Splits "a b  c" at spaces.
std::vector<std::string_view> Words(std::string_view s) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < s.size()) {
    size_t b = s.find_first_not_of(' ', i);
    if (b == std::string_view::npos) break;
    size_t e = std::min(s.find(' ', b), s.size());
    out.push_back(s.substr(b, e - b));
    i = e;
  }
  return out;
}

}  // namespace

std::optional<ProtectedAction> ParseProtectedAction(std::string_view name) {
  if (EqualsIgnoreCase(name, "no")) return ProtectedAction::kNo;
  if (EqualsIgnoreCase(name, "yes")) return ProtectedAction::kYes;
  if (EqualsIgnoreCase(name, "local")) return ProtectedAction::kLocal;
  return std::nullopt;
}

std::string_view ProtectedActionName(ProtectedAction action) {
  switch (action) {
    case ProtectedAction::kYes: return "yes";
    case ProtectedAction::kLocal: return "local";
    case ProtectedAction::kNo: break;
  }
  return "no";
}

bool IsLocalPeer(std::string_view remote_address) {
  std::string_view host = remote_address;
  if (host.starts_with('[')) {
    host = host.substr(1, host.find(']') - 1);
  } else if (size_t colon = host.rfind(':'); colon != std::string_view::npos) {
    host = host.substr(0, colon);
  }
  return host == "127.0.0.1" || host == "::1";
}

absl::flat_hash_set<std::string> CommandLineFlagNames(int argc, char** argv) {
  absl::flat_hash_set<std::string> names;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg == "--") break;
    if (!arg.starts_with('-')) continue;
    arg.remove_prefix(arg.starts_with("--") ? 2 : 1);
    std::string name(arg.substr(0, arg.find('=')));
    if (absl::FindCommandLineFlag(name) == nullptr && name.starts_with("no")) {
      name = name.substr(2);
    }
    names.insert(std::move(name));
  }
  return names;
}

void Config::AddStartupEntries() {
  auto int_entry = [this](std::string name, int64_t lo, int64_t hi, auto get, auto store) {
    entries_.push_back({name, [get] { return StrCat(get()); }, nullptr});
    entries_.back().load = [lo, hi, store](std::string_view v) {
      int64_t x;
      std::string err = ParseIntSetting(v, lo, hi, &x);
      if (err.empty()) store(x);
      return err;
    };
  };
  auto action_entry = [this](std::string name, ProtectedAction* field) {
    entries_.push_back({name, [field] { return std::string(ProtectedActionName(*field)); },
                        nullptr});
    entries_.back().load = [field](std::string_view v) {
      std::optional<ProtectedAction> p = ParseProtectedAction(v);
      if (!p) return std::string("argument(s) must be one of the following: no, yes, local");
      *field = *p;
      return std::string();
    };
  };
  int_entry("port", 0, 65535, [this] { return port; }, [this](int64_t x) { port = uint16_t(x); });
  entries_.push_back({"bind", [this] { return bind; }, nullptr});
  entries_.back().load = [this](std::string_view v) {
    bind = std::string(v);
    return std::string();
  };
  entries_.back().multi_arg = true;
  // ACL users loaded at start (and by ACL LOAD, written by ACL SAVE); fixed while running.
  entries_.push_back({"aclfile", [this] { return aclfile; }, nullptr});
  entries_.back().load = [this](std::string_view v) {
    aclfile = std::string(v);
    return std::string();
  };
  int_entry("databases", 1, INT_MAX, [this] { return databases; },
            [this](int64_t x) { databases = unsigned(x); });
  action_entry("enable-protected-configs", &enable_protected_configs);
  action_entry("enable-debug-command", &enable_debug_command);
  // dashkv's own start-up settings (flags --threads, --spin_us, --pin_cpus).
  int_entry("threads", 0, 1024, [this] { return threads; },
            [this](int64_t x) { threads = x ? unsigned(x) : io::AvailableCpus(); });
  int_entry("spin-us", 0, 1000000, [this] { return spin_us; },
            [this](int64_t x) { spin_us = uint32_t(x); });
  entries_.push_back({"pin-cpus", [this] { return std::string(pin_cpus ? "yes" : "no"); },
                      nullptr});
  entries_.back().load = [this](std::string_view v) { return ParseYesNo(v, &pin_cpus); };
}

void Config::DecorateEntries() {
  for (Entry& e : entries_) {
    if (e.name == "dir" || e.name == "dbfilename" || e.name == "requirepass" ||
        e.name == "notify-keyspace-events" || e.name == "aclfile") {
      e.format = Entry::Format::kQuoted;
    }
    if (e.name == "save" || e.name == "client-output-buffer-limit" ||
        e.name == "latency-tracking-info-percentiles") {
      e.multi_arg = true;
    }
  }
  for (Entry& e : entries_) {
    if (e.name == "save") {
      // Always written (an empty schedule as save "", so that the default does not return).
      e.rewrite = [this] {
        RewriteOption o{"save", {}, true};
        for (const SavePoint& p : save_points()) {
          o.lines.push_back(StrCat("save ", p.seconds, " ", p.changes));
        }
        if (o.lines.empty()) o.lines.push_back("save \"\"");
        return o;
      };
    } else if (e.name == "dir") {
      e.rewrite = [this] {
        return RewriteOption{"dir", {"dir " + QuoteConfigString(dir())}, true};
      };
    } else if (e.name == "bind") {
      // At its default, no line (an old one is removed).
      e.rewrite = [this, &e] {
        RewriteOption o{"bind", {}, true};
        if (bind != e.default_value) o.lines.push_back("bind " + bind);
        return o;
      };
    } else if (e.name == "client-output-buffer-limit") {
      // One line per class, forced where the class differs from its default.
      e.rewrite = [this, &e] {
        static constexpr std::string_view kNames[] = {"normal", "replica", "pubsub"};
        RewriteOption o{"client-output-buffer-limit", {}, false};
        std::vector<std::string_view> defaults = Words(e.default_value);
        for (size_t c = 0; c < std::size(output_limits); ++c) {
          io::OutputLimit l = output_limits[c].Load();
          std::string now = StrCat(l.hard_bytes, " ", l.soft_bytes, " ", l.soft_seconds);
          std::string was = defaults.size() >= 4 * c + 4
                                ? StrCat(defaults[4 * c + 1], " ", defaults[4 * c + 2], " ",
                                         defaults[4 * c + 3])
                                : "";
          if (now == was) continue;
          o.force = true;
          o.lines.push_back(StrCat("client-output-buffer-limit ", kNames[c], " ",
                                   FormatConfigMemory(int64_t(l.hard_bytes)), " ",
                                   FormatConfigMemory(int64_t(l.soft_bytes)), " ",
                                   l.soft_seconds));
        }
        return o;
      };
    }
  }
}

absl::Status Config::Load(const std::string& config_file,
                          const absl::flat_hash_set<std::string>& given_flags) {
  given_flags_ = given_flags;
  ApplyFlags(FlagPass::kDefaults);
  AddEntries();
  UpdateObserveTicks();
  DecorateEntries();
  for (Entry& e : entries_) e.default_value = e.get();
  if (!config_file.empty()) {
    absl::StatusOr<std::vector<ConfigLine>> lines = ReadConfigFile(config_file);
    if (!lines.ok()) return lines.status();
    config_file_ = AbsolutePath(config_file);
    loading_ = true;
    absl::Status st = ApplyFile(*lines);
    loading_ = false;
    if (!st.ok()) return st;
  }
  ApplyFlags(FlagPass::kGiven);
  maxclients = AdjustOpenFilesLimit(maxclients.load(), ReservedFds(threads));
  return absl::OkStatus();
}

void Config::Init() {
  absl::Status st = Load("", {});
  CHECK(st.ok()) << st;
}

absl::Status Config::ApplyFile(const std::vector<ConfigLine>& lines) {
  bool save_seen = false;
  for (const ConfigLine& line : lines) {
    const std::vector<std::string>& args = line.args;
    const std::string& name = args[0];
    auto fail = [&line](std::string_view reason) {
      return absl::InvalidArgumentError(ConfigErrorText(line, reason));
    };
    if (name == "rename-command" && args.size() == 3) {
      renamed_commands.push_back({args[1], args[2], line});
      continue;
    }
    if (name == "user" && args.size() >= 2) {
      acl_user_lines.emplace_back(args.begin() + 1, args.end());
      continue;
    }
    const Entry* e = Find(name);
    if (e == nullptr) return fail("Bad directive or wrong number of arguments");
    if (args.size() < 2 || (!e->multi_arg && args.size() != 2)) {
      return fail("wrong number of arguments");
    }
    std::string value = args[1];
    for (size_t i = 2; i < args.size(); ++i) StrAppend(&value, " ", args[i]);
    std::string err;
    if (e->name == "save") {
      // As Redis: the file's first `save` replaces the default schedule, later ones add to it,
      // save "" empties it.
      std::optional<std::vector<SavePoint>> points = ParseSavePoints(value);
      if (!points) return fail("Invalid save parameters");
      std::lock_guard<std::mutex> lock(mu_);
      if (!save_seen || value.empty()) save_points_.clear();
      save_seen = true;
      save_points_.insert(save_points_.end(), points->begin(), points->end());
      has_save_points = !save_points_.empty();
    } else if (e->set) {
      err = e->set(value);
    } else if (e->load) {
      err = e->load(value);
    } else if (!EqualsIgnoreCase(value, e->get())) {
      err = StrCat("argument must be '", e->get(), "' (dashkv supports no other value)");
    }
    if (!err.empty()) return fail(ErrorReason(err));
    if (e->name == "maxmemory") maxmemory_from_cgroup = false;
  }
  return absl::OkStatus();
}

std::optional<std::string> Config::RewriteName(std::string_view name) const {
  std::string lower = AsciiStrToLower(name);
  if (lower == "include" || lower == "rename-command" || lower == "user") return lower;
  const Entry* e = Find(lower);
  if (e == nullptr) return std::nullopt;
  return e->alias_of.empty() ? e->name : e->alias_of;
}

std::vector<RewriteOption> Config::RewriteOptions() const {
  std::vector<RewriteOption> options;
  for (const Entry& e : entries_) {
    if (!e.alias_of.empty()) continue;
    if (e.rewrite) {
      options.push_back(e.rewrite());
      continue;
    }
    std::string value = e.get();
    std::string text = value;
    if (e.format == Entry::Format::kQuoted) {
      text = QuoteConfigString(value);
    } else if (int64_t bytes; e.format == Entry::Format::kMemory &&
                              absl::SimpleAtoi(value, &bytes)) {
      text = FormatConfigMemory(bytes);
    }
    options.push_back({e.name, {StrCat(e.name, " ", text)}, value != e.default_value});
  }
  return options;
}

std::string Config::Rewrite() {
  if (config_file_.empty()) return "ERR The server is running without a config file";
  std::lock_guard<std::mutex> lock(rewrite_mu_);
  std::string old_text;
  {
    std::ifstream in(config_file_, std::ios::binary);
    if (!in && errno != ENOENT) {
      return StrCat("ERR Rewriting config file: ", std::strerror(errno));
    }
    if (in) {
      char buf[65536];
      while (in.read(buf, sizeof(buf)) || in.gcount() > 0) {
        old_text.append(buf, static_cast<size_t>(in.gcount()));
        if (old_text.size() > kMaxConfigFileBytes) {
          return "ERR Rewriting config file: the file is too large";
        }
      }
    }
  }
  std::string text = RewriteConfigText(old_text, RewriteOptions(),
                                       [this](std::string_view n) { return RewriteName(n); });
  if (absl::Status st = ReplaceFile(config_file_, text); !st.ok()) {
    return StrCat("ERR Rewriting config file: ", std::string(st.message()));
  }
  return "";
}

}  // namespace dashkv
