// Config: the server's settings — command-line flags (abseil) at start, and the Redis names that
// CONFIG GET/SET read and change at run time.
// Thread-safe: hot-path values are atomics read with relaxed loads; the registry of entries is
// immutable after Init(); string values sit behind one small mutex (mu_), only touched by
// CONFIG and INFO.
#pragma once


#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <absl/status/status.h>

#include "io/client_limits.h"
#include "io/output_limit.h"
#include "io/tls_context.h"

namespace dashkv {

// maxmemory-policy: which keys go when maxmemory is reached (Redis's eight policies).
enum class MaxmemoryPolicy : uint8_t {
  kNoEviction,
  kAllKeysLru,
  kVolatileLru,
  kAllKeysLfu,
  kVolatileLfu,
  kAllKeysRandom,
  kVolatileRandom,
  kVolatileTtl,
};

// Returns the policy's Redis name ("allkeys-lru").
std::string_view MaxmemoryPolicyName(MaxmemoryPolicy policy);
// Returns the policy named `name` (any case), or nullopt.
std::optional<MaxmemoryPolicy> ParseMaxmemoryPolicy(std::string_view name);
// Returns whether `policy` evicts by access frequency (allkeys-lfu, volatile-lfu).
bool IsLfuPolicy(MaxmemoryPolicy policy);
// Returns whether `policy` evicts by access recency (allkeys-lru, volatile-lru).
bool IsLruPolicy(MaxmemoryPolicy policy);

// One point of the `save` schedule: snapshot when at least `changes` writes happened in the last
// `seconds` seconds.
struct SavePoint {
  int64_t seconds;
  int64_t changes;
  bool operator==(const SavePoint&) const = default;
};

// Parses a `save` value ("3600 1 300 100", "" for none); nullopt when it is not pairs of
// non-negative integers (Redis's "Invalid save parameters").
std::optional<std::vector<SavePoint>> ParseSavePoints(std::string_view text);
// Prints a schedule as CONFIG GET save shows it.
std::string SavePointsText(const std::vector<SavePoint>& points);

// enable-protected-configs: who may CONFIG SET dir and dbfilename.
enum class ProtectedConfigs : uint8_t { kNo, kYes, kLocal };

// Client classes of client-output-buffer-limit, in Redis's order (CONFIG GET prints them so).
enum class ClientClass : uint8_t { kNormal = 0, kReplica = 1, kPubSub = 2 };

class Config {
 public:
  // One CONFIG name. `set` returns an error text ("" on success); null for immutable entries.
  struct Entry {
    std::string name;
    std::function<std::string()> get;
    std::function<std::string(std::string_view)> set;
    // A protected config: settable only as enable-protected-configs allows.
    bool protected_config = false;
    // Runs once per CONFIG SET after all values are set, for entries that take effect together
    // (the tls-* files); `name` is the first such argument. Returns an error text or "", after
    // which every value of the call is restored.
    std::string (Config::*apply)(std::string_view name) = nullptr;
  };

  // Reads the flags (after absl::ParseCommandLine) and builds the registry.
  void Init();

  // Returns every (name, value) whose name matches one of `patterns` (glob, any case), each
  // name once, in registry order.
  std::vector<std::pair<std::string, std::string>> Get(
      const std::vector<std::string_view>& patterns) const;
  // Applies name/value pairs atomically in Redis's sense: all are validated first; returns
  // Redis's error text or "" on success.
  // `local_client`: the client connects over loopback (enable-protected-configs local).
  std::string Set(const std::vector<std::pair<std::string_view, std::string_view>>& pairs,
                  bool local_client = false);

  // Settings read on hot paths.
  std::atomic<int64_t> maxmemory{0};
  // Client settings read by every connection and by the listener (io/client_limits.h).
  io::ClientLimits client_limits;
  std::atomic<int64_t>& proto_max_bulk_len = client_limits.max_bulk_len;
  std::atomic<int64_t>& client_query_buffer_limit = client_limits.max_query_buffer;
  std::atomic<bool>& auth_required = client_limits.auth_required;  // requirepass is set
  std::atomic<int64_t>& maxclients = client_limits.maxclients;
  std::atomic<int64_t>& tcp_keepalive = client_limits.tcp_keepalive;
  std::atomic<int> hz{10};
  // Seconds of idleness after which a client is closed (0: never); see CloseIdleClients.
  std::atomic<int64_t> timeout{0};
  // busy-reply-threshold (alias lua-time-limit): milliseconds after which a running script may
  // be stopped by SCRIPT KILL / FUNCTION KILL.
  std::atomic<int64_t> busy_reply_threshold{5000};
  // notify-keyspace-events: the NotifyClass bits (server/storage/key_change.h) as set, and the
  // classes published (none unless K or E is set).
  std::atomic<uint32_t> notify_keyspace_events{0};
  std::atomic<uint32_t> notify_classes{0};
  // client-output-buffer-limit, by ClientClass (connections point at these).
  io::OutputLimitClass output_limits[3];
  const io::OutputLimitClass* output_limit(ClientClass c) const {
    return &output_limits[size_t(c)];
  }

  // Encoding thresholds of the aggregate types (Redis 7 names and defaults; the *-ziplist-*
  // names are aliases).
  std::atomic<int64_t> list_max_listpack_size{-2};  // <0: node bytes (-2 = 8 KiB); >0: entries
  std::atomic<int64_t> list_compress_depth{0};
  std::atomic<int64_t> hash_max_listpack_entries{512};
  std::atomic<int64_t> hash_max_listpack_value{64};
  std::atomic<int64_t> set_max_intset_entries{512};
  std::atomic<int64_t> set_max_listpack_entries{128};
  std::atomic<int64_t> set_max_listpack_value{64};
  std::atomic<int64_t> zset_max_listpack_entries{128};
  std::atomic<int64_t> zset_max_listpack_value{64};
  // hll-sparse-max-bytes: the longest a sparse HyperLogLog may grow before it turns dense.
  std::atomic<int64_t> hll_sparse_max_bytes{3000};
  std::atomic<int64_t> stream_node_max_bytes{4096};
  std::atomic<int64_t> stream_node_max_entries{100};

  // Snapshots (Redis's names and defaults).
  std::atomic<bool> rdbcompression{true};
  std::atomic<bool> rdbchecksum{true};
  std::atomic<bool> stop_writes_on_bgsave_error{true};
  std::atomic<bool> rdb_save_incremental_fsync{true};
  std::atomic<bool> has_save_points{false};  // `save` is not empty

  // Immutable after Init().
  uint16_t port = 6379;
  std::string bind;
  unsigned threads = 1;
  unsigned databases = 16;
  uint32_t spin_us = 30;
  bool pin_cpus = false;
  bool maxmemory_from_cgroup = false;

  ProtectedConfigs enable_protected_configs = ProtectedConfigs::kNo;

  // The snapshot directory (an absolute path: a relative --dir is resolved at start, and CONFIG
  // SET dir takes only existing directories) and file name.
  std::string dir() const;
  std::string dbfilename() const;
  // Returns the `save` schedule (empty: no automatic snapshots).
  std::vector<SavePoint> save_points() const;
  std::string requirepass() const;
  // Returns maxmemory-policy.
  MaxmemoryPolicy eviction_policy() const {
    return maxmemory_policy_.load(std::memory_order_relaxed);
  }
  // Returns maxmemory-policy's Redis name, as CONFIG GET and INFO print it.
  std::string maxmemory_policy() const {
    return std::string(MaxmemoryPolicyName(eviction_policy()));
  }
  // client-output-buffer-limit as CONFIG GET prints it ("normal 0 0 0 slave ... pubsub ...").
  std::string OutputLimitsText() const;
  // Applies "<class> <hard> <soft> <seconds> ..." (memory units allowed; classes normal,
  // slave/replica, pubsub); returns Redis's CONFIG SET error text, or "" on success.
  std::string SetOutputLimits(std::string_view text);

  // ---- Protected mode and TLS (server/config_tls.cc) ----
  // protected-mode: while set and the default user has no password, clients from other than
  // loopback addresses are refused (Redis's -DENIED).
  std::atomic<bool> protected_mode{true};
  // Returns whether the default user has no password.
  bool DefaultUserHasNoPassword() const { return !auth_required.load(std::memory_order_relaxed); }
  // Returns whether protected mode refuses non-loopback clients now. Any thread.
  bool ProtectedModeActive() const {
    return protected_mode.load(std::memory_order_relaxed) && DefaultUserHasNoPassword();
  }
  // tls-port (0: no TLS listener). Immutable after Init().
  uint16_t tls_port = 0;
  // Milliseconds a TLS client has to complete its handshake (dashkv only).
  int64_t tls_handshake_timeout_ms = 10000;
  // The TLS context new connections use (null until ConfigureTls succeeds).
  io::TlsContextSlot tls_context;
  // Builds the TLS context from the tls-* settings when tls-port is set (nothing otherwise);
  // returns the reason (Redis's log text) when it cannot be built.
  absl::Status ConfigureTls();
  // Returns the current tls-* settings.
  io::TlsOptions tls_options() const;

 private:
  void InitTls();
  void AddTlsEntries();
  // Entry::apply of the tls-* entries: rebuilds the context (when tls-port is set) and swaps it
  // in for new connections.
  std::string ApplyTls(std::string_view name);
  io::TlsOptions tls_;  // guarded by mu_
  // ---- end of protected mode and TLS ----

  const Entry* Find(std::string_view name) const;
  void AddEntries();

  std::vector<Entry> entries_;
  // std::mutex rather than absl::Mutex: ThreadSanitizer sees a pthread mutex, not Debian's
  // uninstrumented absl::Mutex. Guards the strings below.
  mutable std::mutex mu_;
  std::string dir_;
  std::string dbfilename_;
  std::vector<SavePoint> save_points_;
  std::string requirepass_;
  std::atomic<MaxmemoryPolicy> maxmemory_policy_{MaxmemoryPolicy::kNoEviction};
};

// File descriptors kept for the server's own use besides clients (Redis's
// CONFIG_MIN_RESERVED_FDS, plus each engine thread's epoll, timer and wake-up descriptors).
int64_t ReservedFds(unsigned threads);

// Raises RLIMIT_NOFILE so that `maxclients` clients fit beside `reserved` descriptors, as
// Redis's adjustOpenFilesLimit: when the limit cannot be raised that far, settles for the highest
// it can get, logs why, and returns the number of clients that fit (never below 1; may be lower
// than asked). Only raises the soft limit (and the hard one only where allowed).
int64_t AdjustOpenFilesLimit(int64_t maxclients, int64_t reserved);

// Parses notify-keyspace-events letters ("KEA", "Kx", "" ...) into NotifyClass bits; nullopt for
// a letter Redis does not know.
std::optional<uint32_t> ParseKeyspaceEvents(std::string_view letters);
// Prints NotifyClass bits as CONFIG GET notify-keyspace-events shows them.
std::string KeyspaceEventsText(uint32_t flags);

// Parses a Redis memory value ("100", "1k" (1000), "1kb" (1024), "2mb", "1gb", any case).
std::optional<int64_t> ParseMemory(std::string_view s);

// Returns the memory limit of the process's cgroup (v2 memory.max or v1 limit_in_bytes), or 0
// when there is none.
int64_t CgroupMemoryLimit();

}  // namespace dashkv
