#include "core/str_util.h"
#include "server/config.h"

#include <absl/flags/flag.h>
#include <absl/flags/reflection.h>
#include <absl/strings/numbers.h>

#include <absl/strings/str_split.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>

#include "core/base/logging.h"
#include "core/glob.h"
#include "io/engine_pool.h"
#include "server/config_flag_pick.h"
#include "server/cycle_clock.h"
#include "server/observability/latency_histogram.h"
#include "server/storage/key_change.h"

ABSL_FLAG(uint16_t, port, 6379, "TCP port to listen on.");
ABSL_FLAG(std::string, bind, "0.0.0.0", "Addresses to listen on, space separated (Redis 'bind').");
ABSL_FLAG(uint32_t, threads, 0,
          "Engine threads, one shard each. 0: the CPUs this process may use (cgroup quota "
          "respected).");
ABSL_FLAG(std::string, maxmemory, "",
          "Memory limit (e.g. 4gb). Writes past it get -OOM. Empty: none, or 90% of the "
          "container's memory limit when one is set.");
ABSL_FLAG(std::string, maxmemory_policy, "noeviction", "Redis maxmemory-policy.");
ABSL_FLAG(int32_t, maxmemory_samples, 5, "Keys sampled per database per eviction step (>= 1).");
ABSL_FLAG(int32_t, maxmemory_eviction_tenacity, 10,
          "Time an eviction step may take: 10 = 500 us, 100 = unlimited (0..100).");
ABSL_FLAG(int32_t, lfu_log_factor, 10, "LFU counter's logarithm factor (>= 0).");
ABSL_FLAG(int32_t, lfu_decay_time, 1, "Minutes per LFU counter decrement (>= 0; 0: never).");
ABSL_FLAG(std::string, dir, ".", "Working directory for snapshots.");
ABSL_FLAG(std::string, dbfilename, "dump.rdb", "Snapshot file name.");
ABSL_FLAG(std::string, save, "3600 1 300 100 60 10000",
          "Snapshot schedule: pairs of 'seconds changes' (Redis 'save'); \"\" turns it off.");
ABSL_FLAG(bool, rdbcompression, true, "Compress strings in snapshots with LZF.");
ABSL_FLAG(bool, rdbchecksum, true, "Write and check the CRC64 of snapshot files.");
ABSL_FLAG(bool, stop_writes_on_bgsave_error, true,
          "Refuse writes with -MISCONF while the last snapshot failed and a schedule is set.");
ABSL_FLAG(std::string, enable_protected_configs, "no",
          "Who may CONFIG SET dir and dbfilename: no, yes or local (loopback clients).");
ABSL_FLAG(std::string, enable_debug_command, "local",
          "Who may run DEBUG: no, yes or local (loopback clients; Redis's default is no).");
ABSL_FLAG(std::string, requirepass, "", "Password clients must AUTH with (empty: none).");
ABSL_FLAG(std::string, aclfile, "", "ACL file of users, loaded at start (Redis 'aclfile').");
ABSL_FLAG(int64_t, acllog_max_len, 128, "Entries kept in the ACL LOG (Redis 'acllog-max-len').");
ABSL_FLAG(std::string, acl_pubsub_default, "resetchannels",
          "Channels of ACL users created from now on: resetchannels (none) or allchannels "
          "(Redis 'acl-pubsub-default').");
ABSL_FLAG(uint32_t, dbnum, 16, "Number of logical databases (Redis 'databases').");
ABSL_FLAG(int64_t, proto_max_bulk_len, 512LL * 1024 * 1024, "Largest bulk string accepted.");
ABSL_FLAG(int64_t, client_query_buffer_limit, 1024LL * 1024 * 1024,
          "Largest query buffer of one client.");
ABSL_FLAG(int32_t, hz, 10, "Background task frequency (active expiry cycles per second).");
ABSL_FLAG(uint32_t, spin_us, 30,
          "Microseconds an idle engine thread keeps polling before it sleeps: saves the ~50 us "
          "wake-up of a cross-thread hop under load, costs CPU when idle. 0 disables.");
ABSL_FLAG(std::string, client_output_buffer_limit,
          "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60",
          "Redis client-output-buffer-limit: <class> <hard> <soft> <soft seconds> ..., classes "
          "normal, replica (slave), pubsub; a client over a limit is disconnected.");
ABSL_FLAG(int64_t, maxclients, 10000,
          "Largest number of connected clients (Redis 'maxclients'); the file descriptor limit "
          "is raised to fit them, or maxclients lowered when it cannot be.");
ABSL_FLAG(int64_t, timeout, 0, "Close a client after this many idle seconds (0: never).");
ABSL_FLAG(int64_t, busy_reply_threshold, 5000,
          "Milliseconds a script runs before SCRIPT KILL / FUNCTION KILL may stop it (Redis "
          "busy-reply-threshold, alias lua-time-limit).");
ABSL_FLAG(int64_t, tcp_keepalive, 300,
          "Seconds between TCP keepalive probes of new client connections (0: off).");
ABSL_FLAG(int64_t, hll_sparse_max_bytes, 3000,
          "Longest sparse HyperLogLog in bytes before it turns dense (Redis "
          "'hll-sparse-max-bytes').");
ABSL_FLAG(bool, pin_cpus, false, "Pin engine thread i to the i-th CPU the process may use.");

namespace dashkv {

std::optional<int64_t> ParseMemory(std::string_view s) {
  std::string lower = AsciiStrToLower(s);
  int64_t mul = 1;
  auto strip = [&](std::string_view suffix, int64_t m) {
    if (lower.size() > suffix.size() && lower.ends_with(suffix)) {
      lower.resize(lower.size() - suffix.size());
      mul = m;
      return true;
    }
    return false;
  };
  strip("gb", 1LL << 30) || strip("mb", 1LL << 20) || strip("kb", 1LL << 10) ||
      strip("g", 1000LL * 1000 * 1000) || strip("m", 1000LL * 1000) || strip("k", 1000) ||
      strip("b", 1);
  // Digits only, like Redis's memtoull: no sign, spaces or hex (SimpleAtoi alone allows them).
  if (lower.empty() ||
      !std::all_of(lower.begin(), lower.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return std::nullopt;
  }
  int64_t v;
  if (!absl::SimpleAtoi(lower, &v)) return std::nullopt;
  if (v > INT64_MAX / mul) return std::nullopt;
  return v * mul;
}

int64_t CgroupMemoryLimit() {
  for (const char* path : {"/sys/fs/cgroup/memory.max",
                           "/sys/fs/cgroup/memory/memory.limit_in_bytes"}) {
    std::ifstream f(path);
    std::string s;
    if (f >> s) {
      int64_t v;
      // Unlimited: "max" (v2) or a huge number (v1).
      if (absl::SimpleAtoi(s, &v) && v > 0 && v < (1LL << 50)) return v;
      return 0;
    }
  }
  return 0;
}

int64_t ReservedFds(unsigned threads) { return 32 + 4 * static_cast<int64_t>(threads); }

int64_t AdjustOpenFilesLimit(int64_t maxclients, int64_t reserved) {
  const rlim_t wanted = static_cast<rlim_t>(maxclients + reserved);
  struct rlimit limit;
  if (getrlimit(RLIMIT_NOFILE, &limit) == -1) {
    LOG(WARNING) << "Unable to obtain the current NOFILE limit (" << std::strerror(errno)
                 << "), assuming 1024 and setting the max clients configuration accordingly.";
    return std::max<int64_t>(1, 1024 - reserved);
  }
  const rlim_t old_limit = limit.rlim_cur;
  if (old_limit >= wanted) return maxclients;
  // Highest soft limit we may set, stepping down by 16 as Redis does when the OS refuses.
  rlim_t best = wanted;
  int error = 0;
  while (best > old_limit) {
    struct rlimit next = limit;
    next.rlim_cur = best;
    if (next.rlim_max != RLIM_INFINITY && next.rlim_max < best) next.rlim_max = best;
    if (setrlimit(RLIMIT_NOFILE, &next) == 0) break;
    error = errno;
    best = best < 16 ? old_limit : best - 16;
  }
  best = std::max(best, old_limit);
  if (best >= wanted) {
    LOG(INFO) << "Increased maximum number of open files to " << wanted
              << " (it was originally set to " << old_limit << ").";
    return maxclients;
  }
  const int64_t fit = std::max<int64_t>(1, static_cast<int64_t>(best) - reserved);
  LOG(WARNING) << "You requested maxclients of " << maxclients << " requiring at least "
               << wanted << " max file descriptors.";
  LOG(WARNING) << "Server can't set maximum open files to " << wanted
               << " because of OS error: " << std::strerror(error) << ".";
  LOG(WARNING) << "Current maximum open files is " << best << ". maxclients has been reduced to "
               << fit << " to compensate for low ulimit. If you need higher maxclients increase "
               << "'ulimit -n'.";
  return fit;
}

namespace {

std::string YesNo(bool b) { return b ? "yes" : "no"; }

// Returns whether `s` is written as a memory value (digits, then an optional unit), whatever
// its size: Redis answers "must be between" for one too large, "a memory value" otherwise.
bool IsMemoryText(std::string_view s) {
  size_t digits = 0;
  while (digits < s.size() && s[digits] >= '0' && s[digits] <= '9') ++digits;
  if (digits == 0) return false;
  std::string unit = AsciiStrToLower(s.substr(digits));
  for (std::string_view u : {"", "b", "k", "kb", "m", "mb", "g", "gb"}) {
    if (unit == u) return true;
  }
  return false;
}

// Parses acl-pubsub-default: allchannels (true) or resetchannels (false), any case.
std::optional<bool> ParseAclPubsubDefault(std::string_view v) {
  if (EqualsIgnoreCase(v, "allchannels")) return true;
  if (EqualsIgnoreCase(v, "resetchannels")) return false;
  return std::nullopt;
}


// Returns `dir` as an absolute path (relative to the working directory at the call).
std::string AbsoluteDir(const std::string& dir) {
  if (!dir.empty() && dir[0] == '/') return dir;
  char cwd[4096];
  if (getcwd(cwd, sizeof(cwd)) == nullptr) return dir;
  if (dir.empty() || dir == ".") return cwd;
  return StrCat(cwd, "/", dir);
}

constexpr std::string_view kClientClassNames[] = {"normal", "slave", "pubsub"};

// The classes `A` stands for (every type class, expired and evicted; not m, n, K, E).
constexpr uint32_t kNotifyAll = kNotifyGeneric | kNotifyString | kNotifyList | kNotifySet |
                                kNotifyHash | kNotifyZset | kNotifyExpired | kNotifyEvicted |
                                kNotifyStream | kNotifyModule;

// maxmemory-policy names in the order Redis lists them in its CONFIG SET error.
constexpr std::pair<std::string_view, MaxmemoryPolicy> kPolicyNames[] = {
    {"volatile-lru", MaxmemoryPolicy::kVolatileLru},
    {"volatile-lfu", MaxmemoryPolicy::kVolatileLfu},
    {"volatile-random", MaxmemoryPolicy::kVolatileRandom},
    {"volatile-ttl", MaxmemoryPolicy::kVolatileTtl},
    {"allkeys-lru", MaxmemoryPolicy::kAllKeysLru},
    {"allkeys-lfu", MaxmemoryPolicy::kAllKeysLfu},
    {"allkeys-random", MaxmemoryPolicy::kAllKeysRandom},
    {"noeviction", MaxmemoryPolicy::kNoEviction},
};

// Returns "volatile-lru, volatile-lfu, ..., noeviction".
std::string PolicyNameList() {
  std::string out;
  for (const auto& [name, policy] : kPolicyNames) StrAppend(&out, out.empty() ? "" : ", ", name);
  return out;
}

std::string SetFailed(std::string_view name, std::string_view why) {
  return StrCat("ERR CONFIG SET failed (possibly related to argument '", name, "') - ",
                      why);
}

}  // namespace

std::string_view MaxmemoryPolicyName(MaxmemoryPolicy policy) {
  for (const auto& [name, p] : kPolicyNames) {
    if (p == policy) return name;
  }
  return "noeviction";
}

std::optional<MaxmemoryPolicy> ParseMaxmemoryPolicy(std::string_view name) {
  for (const auto& [n, policy] : kPolicyNames) {
    if (EqualsIgnoreCase(n, name)) return policy;
  }
  return std::nullopt;
}

std::string Config::OutputLimitsText() const {
  std::string out;
  for (size_t c = 0; c < std::size(output_limits); ++c) {
    io::OutputLimit l = output_limits[c].Load();
    StrAppend(&out, c ? " " : "", kClientClassNames[c], " ", l.hard_bytes, " ", l.soft_bytes,
              " ", l.soft_seconds);
  }
  return out;
}

std::string Config::SetOutputLimits(std::string_view text) {
  std::vector<std::string_view> args;
  for (std::string_view rest = text; !rest.empty();) {
    size_t start = rest.find_first_not_of(" \t");
    if (start == std::string_view::npos) break;
    rest.remove_prefix(start);
    size_t end = std::min(rest.find_first_of(" \t"), rest.size());
    args.push_back(rest.substr(0, end));
    rest.remove_prefix(end);
  }
  const std::string_view name = "client-output-buffer-limit";
  if (args.size() % 4 != 0) {
    return SetFailed(name, "Wrong number of arguments in buffer limit configuration.");
  }
  // Validate everything first: a bad class leaves all of them unchanged (as Redis).
  std::vector<std::pair<size_t, io::OutputLimit>> parsed;
  for (size_t i = 0; i < args.size(); i += 4) {
    std::string cls = AsciiStrToLower(args[i]);
    size_t c = cls == "normal"                       ? 0
               : cls == "slave" || cls == "replica" ? 1
               : cls == "pubsub"                    ? 2
                                                    : 3;
    if (c == 3) {
      return SetFailed(name, "Invalid client class specified in buffer limit configuration.");
    }
    auto hard = ParseMemory(args[i + 1]);
    auto soft = ParseMemory(args[i + 2]);
    int64_t seconds;
    if (!hard || !soft || !absl::SimpleAtoi(std::string(args[i + 3]), &seconds) || seconds < 0) {
      return SetFailed(name, "Error in hard, soft or soft_seconds setting in buffer limit "
                             "configuration.");
    }
    parsed.emplace_back(c, io::OutputLimit{static_cast<uint64_t>(*hard),
                                           static_cast<uint64_t>(*soft), seconds});
  }
  for (const auto& [c, limit] : parsed) output_limits[c].Store(limit);
  return "";
}

void Config::ApplyFlags(FlagPass pass) {
  const bool given = pass == FlagPass::kGiven;
  auto pick = [&](const auto& flag) {
    return PickFlag(flag, pass == FlagPass::kDefaults, given_flags_);
  };
  if (auto v = pick(FLAGS_port)) port = *v;
  if (auto v = pick(FLAGS_bind)) bind = *v;
  if (auto v = pick(FLAGS_threads)) threads = *v ? *v : io::AvailableCpus();
  if (auto v = pick(FLAGS_dbnum)) databases = std::max(1u, *v);
  if (auto v = pick(FLAGS_proto_max_bulk_len)) proto_max_bulk_len = *v;
  if (auto v = pick(FLAGS_client_query_buffer_limit)) client_query_buffer_limit = *v;
  if (auto v = pick(FLAGS_hz)) hz = std::clamp(*v, 1, 500);
  if (auto v = pick(FLAGS_timeout)) timeout = std::max<int64_t>(0, *v);
  if (auto v = pick(FLAGS_busy_reply_threshold)) busy_reply_threshold = std::max<int64_t>(0, *v);
  if (auto v = pick(FLAGS_tcp_keepalive)) tcp_keepalive = std::max<int64_t>(0, *v);
  // Checked against the descriptor limit once the file is read too (Load).
  if (auto v = pick(FLAGS_maxclients)) maxclients = std::max<int64_t>(1, *v);
  if (auto v = pick(FLAGS_spin_us)) spin_us = *v;
  if (auto v = pick(FLAGS_pin_cpus)) pin_cpus = *v;
  if (auto mm = pick(FLAGS_maxmemory)) {
    if (!mm->empty()) {
      maxmemory = ParseMemory(*mm).value_or(0);
      maxmemory_from_cgroup = false;
    } else if (int64_t limit = CgroupMemoryLimit(); limit > 0 && !given) {
      // Leave headroom below the container limit so writes get -OOM before the kernel kills us.
      maxmemory = limit / 10 * 9;
      maxmemory_from_cgroup = true;
    }
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto v = pick(FLAGS_dir)) dir_ = AbsoluteDir(*v);
    if (auto v = pick(FLAGS_dbfilename)) dbfilename_ = *v;
    if (auto v = pick(FLAGS_save)) {
      if (auto points = ParseSavePoints(*v)) {
        save_points_ = std::move(*points);
        has_save_points = !save_points_.empty();
      } else {
        ABSL_RAW_LOG(ERROR, "--save: invalid save parameters, no automatic snapshots");
      }
    }
    if (auto v = pick(FLAGS_requirepass)) {
      requirepass_ = *v;
      auth_required = !requirepass_.empty();
    }
  }
  if (auto v = pick(FLAGS_aclfile)) aclfile = *v;
  if (auto v = pick(FLAGS_acllog_max_len)) acllog_max_len = std::max<int64_t>(0, *v);
  if (auto v = pick(FLAGS_acl_pubsub_default)) {
    if (std::optional<bool> all = ParseAclPubsubDefault(*v)) {
      acl_pubsub_allchannels = *all;
    } else {
      ABSL_RAW_LOG(ERROR,
                   "--acl_pubsub_default: expected allchannels or resetchannels; using "
                   "resetchannels");
    }
  }
  if (auto v = pick(FLAGS_hll_sparse_max_bytes)) hll_sparse_max_bytes = std::max<int64_t>(0, *v);
  if (auto v = pick(FLAGS_rdbcompression)) rdbcompression = *v;
  if (auto v = pick(FLAGS_rdbchecksum)) rdbchecksum = *v;
  if (auto v = pick(FLAGS_stop_writes_on_bgsave_error)) stop_writes_on_bgsave_error = *v;
  if (auto v = pick(FLAGS_enable_protected_configs)) {
    if (std::optional<ProtectedAction> p = ParseProtectedAction(*v)) {
      enable_protected_configs = *p;
    } else {
      ABSL_RAW_LOG(ERROR, "--enable_protected_configs: expected no, yes or local; using no");
    }
  }
  if (auto v = pick(FLAGS_enable_debug_command)) {
    if (std::optional<ProtectedAction> p = ParseProtectedAction(*v)) {
      enable_debug_command = *p;
    } else {
      ABSL_RAW_LOG(ERROR, "--enable_debug_command: expected no, yes or local; using local");
    }
  }
  if (auto v = pick(FLAGS_maxmemory_policy)) {
    if (std::optional<MaxmemoryPolicy> policy = ParseMaxmemoryPolicy(*v)) {
      eviction.policy = *policy;
    } else {
      ABSL_RAW_LOG(ERROR, "--maxmemory_policy: unknown policy '%s', using noeviction",
                   v->c_str());
    }
  }
  // Out-of-range values are clamped into Redis's ranges.
  if (auto v = pick(FLAGS_maxmemory_samples)) eviction.samples = std::max(*v, 1);
  if (auto v = pick(FLAGS_maxmemory_eviction_tenacity)) {
    eviction.tenacity = std::clamp(*v, 0, 100);
  }
  if (auto v = pick(FLAGS_lfu_log_factor)) eviction.lfu_log_factor = std::max(*v, 0);
  if (auto v = pick(FLAGS_lfu_decay_time)) eviction.lfu_decay_time = std::max(*v, 0);
  if (auto v = pick(FLAGS_client_output_buffer_limit)) {
    std::string limits_err = SetOutputLimits(*v);
    if (!limits_err.empty()) {
      ABSL_RAW_LOG(ERROR, "--client_output_buffer_limit: %s", limits_err.c_str());
    }
  }
  ApplyTlsFlags(pass);
}

std::string Config::dir() const {
  std::lock_guard<std::mutex> lock(mu_);
  return dir_;
}
std::string Config::dbfilename() const {
  std::lock_guard<std::mutex> lock(mu_);
  return dbfilename_;
}
std::vector<SavePoint> Config::save_points() const {
  std::lock_guard<std::mutex> lock(mu_);
  return save_points_;
}
std::vector<double> Config::latency_percentiles() const {
  std::lock_guard<std::mutex> lock(mu_);
  return latency_percentiles_;
}

void Config::UpdateObserveTicks() {
  const double ticks_per_us = CycleClock::TicksPerUsec();
  uint64_t ticks = UINT64_MAX;
  const int64_t slow_us = slowlog_log_slower_than.load(std::memory_order_relaxed);
  if (slow_us >= 0) ticks = static_cast<uint64_t>(static_cast<double>(slow_us) * ticks_per_us);
  const int64_t latency_ms = latency_monitor_threshold.load(std::memory_order_relaxed);
  if (latency_ms > 0) {
    ticks = std::min(ticks,
                     static_cast<uint64_t>(static_cast<double>(latency_ms) * 1000 * ticks_per_us));
  }
  observe_ticks.store(ticks, std::memory_order_relaxed);
}

std::string Config::requirepass() const {
  std::lock_guard<std::mutex> lock(mu_);
  return requirepass_;
}

void Config::AddEntries() {
  auto atomic_mem_entry = [this](std::string name, std::atomic<int64_t>* field, int64_t lo) {
    entries_.push_back(
        {name, [field] { return StrCat(field->load(std::memory_order_relaxed)); },
         [field, name, lo](std::string_view v) {
           auto x = ParseMemory(v);
           if (!x && !IsMemoryText(v)) return SetFailed(name, "argument must be a memory value");
           if (!x || *x < lo) {
             return SetFailed(name, StrCat("argument must be between ", lo,
                                           " and 9223372036854775807 inclusive"));
           }
           field->store(*x, std::memory_order_relaxed);
           return std::string();
         }});
    entries_.back().format = Entry::Format::kMemory;
  };
  // An integer setting read on hot paths; `aliases` are older names (the *-ziplist-* ones).
  auto atomic_int_entry = [this](std::vector<std::string> names, std::atomic<int64_t>* field,
                                 int64_t lo, int64_t hi) {
    for (std::string& name : names) {
      entries_.push_back(
          {name, [field] { return StrCat(field->load(std::memory_order_relaxed)); },
           [field, name, lo, hi](std::string_view v) {
             int64_t x;
             if (!absl::SimpleAtoi(std::string(v), &x)) {
               return SetFailed(name, "argument couldn't be parsed into an integer");
             }
             if (x < lo || x > hi) {
               return SetFailed(name, StrCat("argument must be between ", lo, " and ", hi,
                                             " inclusive"));
             }
             field->store(x, std::memory_order_relaxed);
             return std::string();
           }});
      if (&name != &names[0]) entries_.back().alias_of = names[0];
    }
  };
  atomic_int_entry({"list-max-listpack-size", "list-max-ziplist-size"}, &list_max_listpack_size,
                   INT32_MIN, INT32_MAX);
  atomic_int_entry({"list-compress-depth"}, &list_compress_depth, 0, INT32_MAX);
  atomic_int_entry({"hash-max-listpack-entries", "hash-max-ziplist-entries"},
                   &hash_max_listpack_entries, 0, INT64_MAX);
  atomic_int_entry({"hash-max-listpack-value", "hash-max-ziplist-value"},
                   &hash_max_listpack_value, 0, INT64_MAX);
  atomic_int_entry({"set-max-intset-entries"}, &set_max_intset_entries, 0, INT64_MAX);
  atomic_int_entry({"set-max-listpack-entries"}, &set_max_listpack_entries, 0, INT64_MAX);
  atomic_int_entry({"set-max-listpack-value"}, &set_max_listpack_value, 0, INT64_MAX);
  atomic_int_entry({"zset-max-listpack-entries", "zset-max-ziplist-entries"},
                   &zset_max_listpack_entries, 0, INT64_MAX);
  atomic_int_entry({"zset-max-listpack-value", "zset-max-ziplist-value"},
                   &zset_max_listpack_value, 0, INT64_MAX);
  atomic_mem_entry("stream-node-max-bytes", &stream_node_max_bytes, 0);
  atomic_int_entry({"stream-node-max-entries"}, &stream_node_max_entries, 0, INT64_MAX);

  auto fixed = [this](std::string name, std::string value) {
    entries_.push_back({std::move(name), [value] { return value; }, nullptr});
  };

  AddStartupEntries();
  atomic_int_entry({"acllog-max-len"}, &acllog_max_len, 0, INT64_MAX);
  entries_.push_back(
      {"acl-pubsub-default",
       [this] { return std::string(acl_pubsub_allchannels ? "allchannels" : "resetchannels"); },
       [this](std::string_view v) {
         std::optional<bool> all = ParseAclPubsubDefault(v);
         if (!all) {
           return SetFailed("acl-pubsub-default",
                            "argument(s) must be one of the following: allchannels, "
                            "resetchannels");
         }
         acl_pubsub_allchannels = *all;
         return std::string();
       }});
  atomic_mem_entry("maxmemory", &maxmemory, 0);
  atomic_mem_entry("hll-sparse-max-bytes", &hll_sparse_max_bytes, 0);
  atomic_int_entry({"maxmemory-samples"}, &eviction.samples, 1, INT32_MAX);
  atomic_int_entry({"tracking-table-max-keys"}, &tracking_table_max_keys, 0, INT64_MAX);
  atomic_int_entry({"maxmemory-eviction-tenacity"}, &eviction.tenacity, 0, 100);
  atomic_int_entry({"lfu-log-factor"}, &eviction.lfu_log_factor, 0, INT32_MAX);
  atomic_int_entry({"lfu-decay-time"}, &eviction.lfu_decay_time, 0, INT32_MAX);
  entries_.push_back({"maxmemory-policy", [this] { return maxmemory_policy(); },
                      [this](std::string_view v) {
                        std::optional<MaxmemoryPolicy> policy = ParseMaxmemoryPolicy(v);
                        if (!policy) {
                          return SetFailed("maxmemory-policy",
                                           StrCat("argument(s) must be one of the following: ",
                                                  PolicyNameList()));
                        }
                        eviction.policy = *policy;
                        return std::string();
                      }});
  entries_.push_back({"notify-keyspace-events",
                      [this] { return KeyspaceEventsText(notify_keyspace_events.load()); },
                      [this](std::string_view v) {
                        std::optional<uint32_t> flags = ParseKeyspaceEvents(v);
                        if (!flags) {
                          return SetFailed("notify-keyspace-events",
                                           "Invalid event class character. Use "
                                           "'Ag$lshzxeKEtmdn'.");
                        }
                        notify_keyspace_events.store(*flags);
                        const bool published = *flags & (kNotifyKeyspace | kNotifyKeyevent);
                        notify_classes.store(published ? *flags : 0u);
                        return std::string();
                      }});
  atomic_mem_entry("proto-max-bulk-len", &proto_max_bulk_len, 1024 * 1024);
  atomic_mem_entry("client-query-buffer-limit", &client_query_buffer_limit, 1024 * 1024);
  entries_.push_back({"hz", [this] { return StrCat(hz.load()); },
                      [this](std::string_view v) {
                        int64_t x;
                        if (!absl::SimpleAtoi(std::string(v), &x)) {
                          return SetFailed("hz", "argument couldn't be parsed into an integer");
                        }
                        hz = static_cast<int>(std::clamp<int64_t>(x, 1, 500));
                        return std::string();
                      }});
  entries_.push_back({"dir", [this] { return dir(); },
                      [this](std::string_view v) {
                        std::string path(v);
                        struct stat st;
                        if (stat(path.c_str(), &st) != 0) return SetFailed("dir", strerror(errno));
                        if (!S_ISDIR(st.st_mode)) return SetFailed("dir", strerror(ENOTDIR));
                        std::lock_guard<std::mutex> lock(mu_);
                        dir_ = AbsoluteDir(path);
                        return std::string();
                      },
                      true});
  entries_.push_back({"dbfilename", [this] { return dbfilename(); },
                      [this](std::string_view v) {
                        if (v.empty() || v.find('/') != std::string_view::npos) {
                          return SetFailed("dbfilename",
                                           "dbfilename can't be a path, just a filename");
                        }
                        std::lock_guard<std::mutex> lock(mu_);
                        dbfilename_ = std::string(v);
                        return std::string();
                      },
                      true});
  entries_.push_back({"requirepass", [this] { return requirepass(); },
                      [this](std::string_view v) {
                        std::lock_guard<std::mutex> lock(mu_);
                        requirepass_ = std::string(v);
                        auth_required = !requirepass_.empty();
                        if (on_requirepass) on_requirepass(requirepass_);
                        return std::string();
                      }});
  entries_.push_back({"save", [this] { return SavePointsText(save_points()); },
                      [this](std::string_view v) {
                        auto points = ParseSavePoints(v);
                        if (!points) return SetFailed("save", "Invalid save parameters");
                        std::lock_guard<std::mutex> lock(mu_);
                        save_points_ = std::move(*points);
                        has_save_points = !save_points_.empty();
                        return std::string();
                      }});
  auto bool_entry = [this](std::string name, std::atomic<bool>* field) {
    entries_.push_back({name, [field] { return YesNo(field->load()); },
                        [field, name](std::string_view v) {
                          if (EqualsIgnoreCase(v, "yes")) {
                            field->store(true);
                          } else if (EqualsIgnoreCase(v, "no")) {
                            field->store(false);
                          } else {
                            return SetFailed(name, "argument must be 'yes' or 'no'");
                          }
                          return std::string();
                        }});
  };
  bool_entry("rdbcompression", &rdbcompression);
  bool_entry("rdbchecksum", &rdbchecksum);
  bool_entry("stop-writes-on-bgsave-error", &stop_writes_on_bgsave_error);
  bool_entry("rdb-save-incremental-fsync", &rdb_save_incremental_fsync);

  // Slow log and latency monitoring. The two thresholds also set observe_ticks.
  auto observed_int_entry = [this](std::string name, std::atomic<int64_t>* field, int64_t lo) {
    entries_.push_back(
        {name, [field] { return StrCat(field->load(std::memory_order_relaxed)); },
         [this, field, name, lo](std::string_view v) {
           int64_t x;
           if (!absl::SimpleAtoi(std::string(v), &x)) {
             return SetFailed(name, "argument couldn't be parsed into an integer");
           }
           if (x < lo) {
             return SetFailed(name, StrCat("argument must be between ", lo,
                                           " and 9223372036854775807 inclusive"));
           }
           field->store(x, std::memory_order_relaxed);
           UpdateObserveTicks();
           return std::string();
         }});
  };
  observed_int_entry("slowlog-log-slower-than", &slowlog_log_slower_than, -1);
  observed_int_entry("latency-monitor-threshold", &latency_monitor_threshold, 0);
  atomic_int_entry({"slowlog-max-len"}, &slowlog_max_len, 0, INT64_MAX);
  bool_entry("latency-tracking", &latency_tracking);
  entries_.push_back(
      {"latency-tracking-info-percentiles",
       [this] {
         std::string out;
         for (double p : latency_percentiles()) {
           if (!out.empty()) out += ' ';
           out += PercentileText(p);
         }
         return out;
       },
       [this](std::string_view v) {
         std::vector<double> ps;
         for (const std::string& word :
              std::vector<std::string>(absl::StrSplit(std::string(v), ' ', absl::SkipEmpty()))) {
           double p;
           if (!absl::SimpleAtod(word, &p)) {
             return SetFailed("latency-tracking-info-percentiles",
                              "Invalid latency-tracking-info-percentiles parameters");
           }
           if (p < 0.0 || p > 100.0) {
             return SetFailed("latency-tracking-info-percentiles",
                              "latency-tracking-info-percentiles parameters should sit between "
                              "[0.0,100.0]");
           }
           ps.push_back(p);
         }
         std::lock_guard<std::mutex> lock(mu_);
         latency_percentiles_ = std::move(ps);
         return std::string();
       }});
  fixed("rdb-del-sync-files", "no");
  fixed("loglevel", "notice");
  atomic_int_entry({"timeout"}, &timeout, 0, INT32_MAX);
  atomic_int_entry({"busy-reply-threshold", "lua-time-limit"}, &busy_reply_threshold, 0,
                   INT64_MAX);
  atomic_int_entry({"tcp-keepalive"}, &tcp_keepalive, 0, INT32_MAX);
  entries_.push_back({"maxclients", [this] { return StrCat(maxclients.load()); },
                      [this](std::string_view v) {
                        int64_t x;
                        if (!absl::SimpleAtoi(std::string(v), &x)) {
                          return SetFailed("maxclients",
                                           "argument couldn't be parsed into an integer");
                        }
                        if (x < 1 || x > UINT32_MAX) {
                          return SetFailed("maxclients", "argument must be between 1 and "
                                                         "4294967295 inclusive");
                        }
                        // At start the descriptor limit is checked once, after the file.
                        if (x > maxclients.load() && !loading_) {
                          int64_t fit = AdjustOpenFilesLimit(x, ReservedFds(threads));
                          if (fit < x) {
                            return SetFailed("maxclients",
                                             StrCat("The operating system is not able to handle "
                                                    "the specified number of clients, try with ",
                                                    fit));
                          }
                        }
                        maxclients = x;
                        return std::string();
                      }});
  entries_.push_back({"client-output-buffer-limit", [this] { return OutputLimitsText(); },
                      [this](std::string_view v) { return SetOutputLimits(v); }});
  fixed("appendonly", "no");
  fixed("daemonize", "no");
  fixed("cluster-enabled", "no");
  fixed("io-threads", "1");
  AddTlsEntries();
}

const Config::Entry* Config::Find(std::string_view name) const {
  for (const auto& e : entries_) {
    if (EqualsIgnoreCase(e.name, name)) return &e;
  }
  return nullptr;
}

std::vector<std::pair<std::string, std::string>> Config::Get(
    const std::vector<std::string_view>& patterns) const {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& e : entries_) {
    for (auto p : patterns) {
      if (GlobMatch(p, e.name, GlobCase::kNoCase)) {
        // Like Redis, a plain name is answered with the client's own spelling.
        out.emplace_back(IsPlainPattern(p) ? std::string(p) : e.name, e.get());
        break;
      }
    }
  }
  return out;
}

std::string Config::Set(const std::vector<std::pair<std::string_view, std::string_view>>& pairs,
                        bool local_client) {
  const bool protected_allowed = AllowsProtectedAction(enable_protected_configs, local_client);
  for (size_t i = 0; i < pairs.size(); ++i) {
    const Entry* e = Find(pairs[i].first);
    if (!e) {
      return StrCat("ERR Unknown option or number of arguments for CONFIG SET - '",
                          pairs[i].first, "'");
    }
    // As Redis, these two errors name the argument as the client spelled it.
    if (!e->set) return SetFailed(pairs[i].first, "can't set immutable config");
    if (e->protected_config && !protected_allowed) {
      return SetFailed(pairs[i].first, "can't set protected config");
    }
    for (size_t j = 0; j < i; ++j) {
      if (EqualsIgnoreCase(pairs[j].first, pairs[i].first)) {
        return SetFailed(pairs[i].first, "duplicate parameter");
      }
    }
  }
  // Apply in order; on the first failure restore the values already changed (Redis's rollback).
  std::vector<std::pair<const Entry*, std::string>> applied;
  auto roll_back = [&applied] {
    for (auto it = applied.rbegin(); it != applied.rend(); ++it) it->first->set(it->second);
  };
  // Entries that take effect together (Entry::apply) apply once, after every value is set;
  // a listener moves last, being the costliest change to undo.
  std::vector<std::pair<const Entry*, std::string_view>> applies;
  for (const auto& [name, value] : pairs) {
    const Entry* e = Find(name);
    std::string previous = e->get();
    std::string err = e->set(value);
    if (!err.empty()) {
      roll_back();
      return err;
    }
    applied.emplace_back(e, std::move(previous));
    if (e->apply != nullptr && std::none_of(applies.begin(), applies.end(), [e](const auto& a) {
          return a.first->apply == e->apply;
        })) {
      applies.emplace_back(e, name);
    }
  }
  std::stable_partition(applies.begin(), applies.end(),
                        [](const auto& a) { return !a.first->moves_listener; });
  for (size_t i = 0; i < applies.size(); ++i) {
    std::string err = (this->*applies[i].first->apply)(applies[i].second);
    if (err.empty()) continue;
    roll_back();
    // What the earlier applies built from the new values is rebuilt from the restored ones.
    for (size_t j = 0; j < i; ++j) {
      if (std::string again = (this->*applies[j].first->apply)(applies[j].second);
          !again.empty()) {
        ABSL_RAW_LOG(WARNING, "Failed applying restored failed CONFIG SET command: %s",
                     again.c_str());
      }
    }
    return err;
  }
  return "";
}

bool Config::MovesListener(
    const std::vector<std::pair<std::string_view, std::string_view>>& pairs) const {
  return std::any_of(pairs.begin(), pairs.end(), [this](const auto& p) {
    const Entry* e = Find(p.first);
    return e != nullptr && e->moves_listener;
  });
}

std::optional<std::vector<SavePoint>> ParseSavePoints(std::string_view text) {
  std::vector<std::string> words = absl::StrSplit(std::string(text), ' ', absl::SkipEmpty());
  if (words.size() % 2 != 0) return std::nullopt;
  std::vector<SavePoint> points;
  for (size_t i = 0; i < words.size(); i += 2) {
    SavePoint p;
    if (!absl::SimpleAtoi(words[i], &p.seconds) || !absl::SimpleAtoi(words[i + 1], &p.changes) ||
        p.seconds < 0 || p.changes < 0) {
      return std::nullopt;
    }
    points.push_back(p);
  }
  return points;
}

std::string SavePointsText(const std::vector<SavePoint>& points) {
  std::string out;
  for (const SavePoint& p : points) {
    if (!out.empty()) out += ' ';
    absl::StrAppend(&out, p.seconds, " ", p.changes);
  }
  return out;
}

std::optional<uint32_t> ParseKeyspaceEvents(std::string_view letters) {
  uint32_t flags = 0;
  for (char c : letters) {
    switch (c) {
      case 'A': flags |= kNotifyAll; break;
      case 'g': flags |= kNotifyGeneric; break;
      case '$': flags |= kNotifyString; break;
      case 'l': flags |= kNotifyList; break;
      case 's': flags |= kNotifySet; break;
      case 'h': flags |= kNotifyHash; break;
      case 'z': flags |= kNotifyZset; break;
      case 'x': flags |= kNotifyExpired; break;
      case 'e': flags |= kNotifyEvicted; break;
      case 'K': flags |= kNotifyKeyspace; break;
      case 'E': flags |= kNotifyKeyevent; break;
      case 't': flags |= kNotifyStream; break;
      case 'm': flags |= kNotifyKeyMiss; break;
      case 'd': flags |= kNotifyModule; break;
      case 'n': flags |= kNotifyNew; break;
      default: return std::nullopt;
    }
  }
  return flags;
}

std::string KeyspaceEventsText(uint32_t flags) {
  std::string out;
  if ((flags & kNotifyAll) == kNotifyAll) {
    out += 'A';
  } else {
    static constexpr std::pair<uint32_t, char> kLetters[] = {
        {kNotifyGeneric, 'g'}, {kNotifyString, '$'},  {kNotifyList, 'l'},
        {kNotifySet, 's'},     {kNotifyHash, 'h'},    {kNotifyZset, 'z'},
        {kNotifyExpired, 'x'}, {kNotifyEvicted, 'e'}, {kNotifyStream, 't'},
        {kNotifyModule, 'd'},  {kNotifyNew, 'n'}};
    for (auto [bit, letter] : kLetters) {
      if (flags & bit) out += letter;
    }
  }
  if (flags & kNotifyKeyspace) out += 'K';
  if (flags & kNotifyKeyevent) out += 'E';
  if (flags & kNotifyKeyMiss) out += 'm';
  return out;
}

}  // namespace dashkv
