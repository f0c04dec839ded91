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

#include <absl/container/flat_hash_set.h>
#include <absl/status/status.h>

#include "io/client_limits.h"
#include "io/output_limit.h"
#include "io/tls_context.h"
#include "server/config_file.h"
#include "server/storage/eviction_settings.h"

namespace dashkv {

// Returns the policy's Redis name ("allkeys-lru").
std::string_view MaxmemoryPolicyName(MaxmemoryPolicy policy);
// Returns the policy named `name` (any case), or nullopt.
std::optional<MaxmemoryPolicy> ParseMaxmemoryPolicy(std::string_view name);

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

// enable-protected-configs (who may CONFIG SET dir and dbfilename) and enable-debug-command
// (who may run DEBUG): nobody, everybody, or clients on a loopback connection.
enum class ProtectedAction : uint8_t { kNo, kYes, kLocal };

// Returns the setting named `name` (no, yes, local; any case), or nullopt.
std::optional<ProtectedAction> ParseProtectedAction(std::string_view name);
// Returns the setting's name as CONFIG GET prints it.
std::string_view ProtectedActionName(ProtectedAction action);

// Returns whether a client may take a protected action under `setting`; `local_client`: it is
// connected from a loopback address (IsLocalPeer).
inline bool AllowsProtectedAction(ProtectedAction setting, bool local_client) {
  return setting == ProtectedAction::kYes || (setting == ProtectedAction::kLocal && local_client);
}

// Returns whether `remote_address` ("127.0.0.1:5000", "[::1]:5000", a connection's formatted
// peer) is local in Redis's sense: exactly 127.0.0.1 or ::1 (not the rest of 127.0.0.0/8).
bool IsLocalPeer(std::string_view remote_address);

// A `rename-command` directive of the config file: `from` becomes `to` ("" disables it). The
// server applies them when it builds its command table (Server::RenameCommands).
struct RenamedCommand {
  std::string from;
  std::string to;
  ConfigLine line;  // where it was read, for the start-up error
};

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
    // The apply moves a listener (tls-port): it runs after the other applies of the call, on the
    // listener's engine (see MovesListener).
    bool moves_listener = false;
    // For an immutable entry: applies a config file's value at start (null: a fixed value,
    // the file may only repeat it). Same contract as `set`.
    std::function<std::string(std::string_view)> load{};
    // Set for an alias (lua-time-limit): the setting's own name, which CONFIG REWRITE writes.
    std::string alias_of{};
    // Takes several arguments in a config file (save, bind, client-output-buffer-limit); they
    // reach `set` joined by spaces.
    bool multi_arg = false;
    // How CONFIG REWRITE writes the value: as is, as a memory value ("1gb"), or quoted.
    enum class Format : uint8_t { kPlain, kMemory, kQuoted } format = Format::kPlain;
    // Lines CONFIG REWRITE writes, when not one "name value" line.
    std::function<RewriteOption()> rewrite{};
    std::string default_value{};  // get() before the config file and flags (set by Load)
  };

  // Builds the registry and reads the settings: defaults, then the config file `config_file`
  // (none when empty), then the flags given on the command line (`given_flags`: their names,
  // as absl spells them; a flag whose value differs from its default counts as given too).
  // Returns the start-up error text (Redis's layout, with file and line) on a bad file.
  // REQUIRES: absl::ParseCommandLine ran; called once, before the server starts.
  absl::Status Load(const std::string& config_file,
                    const absl::flat_hash_set<std::string>& given_flags);
  // Load without a config file. CHECK-fails on error.
  void Init();

  // CONFIG REWRITE: writes the current settings into the config file as Redis 7.0 does
  // (server/config_file.h RewriteConfigText). Returns Redis's error text or "" on success.
  // Blocks on file I/O (one small file).
  std::string Rewrite();
  // The config file's absolute path ("" when started without one).
  const std::string& config_file() const { return config_file_; }

  // Returns every (name, value) whose name matches one of `patterns` (glob, any case), each
  // name once, in registry order.
  std::vector<std::pair<std::string, std::string>> Get(
      const std::vector<std::string_view>& patterns) const;
  // Applies name/value pairs atomically in Redis's sense: all are validated first; returns
  // Redis's error text or "" on success.
  // `local_client`: the client connects over loopback (enable-protected-configs local).
  // When an apply fails, the values are restored and the applies that had succeeded run again
  // (Redis's restoreBackupConfig), so what they built follows the restored values.
  // REQUIRES: on the listener's engine when MovesListener(pairs).
  std::string Set(const std::vector<std::pair<std::string_view, std::string_view>>& pairs,
                  bool local_client = false);
  // Returns whether setting `pairs` may move a listener (tls-port): CONFIG SET then runs on
  // the engine that owns the listener (io::Listener::kAcceptEngine), which also serializes such
  // calls.
  bool MovesListener(const std::vector<std::pair<std::string_view, std::string_view>>& pairs) const;

  // Settings read on hot paths.
  std::atomic<int64_t> maxmemory{0};
  // maxmemory-policy, maxmemory-samples, maxmemory-eviction-tenacity, lfu-log-factor,
  // lfu-decay-time: read by the shards on every lookup and eviction.
  EvictionSettings eviction;
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

  // Slow log and latency monitoring (server/observability/; Redis's names and defaults).
  std::atomic<int64_t> slowlog_log_slower_than{10000};  // µs; -1: off, 0: every command
  std::atomic<int64_t> slowlog_max_len{128};
  std::atomic<int64_t> latency_monitor_threshold{0};  // ms; 0: off
  std::atomic<bool> latency_tracking{true};
  // tracking-table-max-keys: the keys client-side caching tracks at most (0: no limit), shared
  // evenly by the shards (server/tracking/tracking_hub.h).
  std::atomic<int64_t> tracking_table_max_keys{1000000};
  // The CycleClock ticks from which a command's run goes to the slow log or the latency
  // monitor: the smaller of their thresholds (UINT64_MAX when both are off). One compare per
  // command (ServerStats::RecordCall).
  std::atomic<uint64_t> observe_ticks{UINT64_MAX};
  // latency-tracking-info-percentiles: the percentiles INFO latencystats shows.
  std::vector<double> latency_percentiles() const;

  // Snapshots (Redis's names and defaults).
  std::atomic<bool> rdbcompression{true};
  std::atomic<bool> rdbchecksum{true};
  std::atomic<bool> stop_writes_on_bgsave_error{true};
  std::atomic<bool> rdb_save_incremental_fsync{true};
  std::atomic<bool> has_save_points{false};  // `save` is not empty

  // Immutable after Init().
  uint16_t port = 6379;
  std::string bind;
  std::string aclfile;  // users loaded at start and by ACL LOAD, written by ACL SAVE
  std::atomic<int64_t> acllog_max_len{128};
  // acl-pubsub-default: users and selectors created from now on (ACL SETUSER, "reset", ACL
  // LOAD, user lines) may use every channel (allchannels) or none (resetchannels, the default).
  std::atomic<bool> acl_pubsub_allchannels{false};
  // Called after CONFIG SET requirepass (under the config lock) with the new password: the
  // ACL's default user follows it (server/acl/acl_registry.h). Set once before serving.
  std::function<void(std::string_view)> on_requirepass;
  unsigned threads = 1;
  unsigned databases = 16;
  uint32_t spin_us = 30;
  bool pin_cpus = false;
  bool maxmemory_from_cgroup = false;

  ProtectedAction enable_protected_configs = ProtectedAction::kNo;
  // dashkv's default is local (Redis's is no): tests and benchmarks on loopback keep DEBUG.
  ProtectedAction enable_debug_command = ProtectedAction::kLocal;
  // From the config file, in file order.
  std::vector<RenamedCommand> renamed_commands;
  // The config file's `user` lines (each: the arguments after "user", unquoted), in file order.
  // The ACL module applies them at start; Config only collects them.
  std::vector<std::vector<std::string>> acl_user_lines;

  // The snapshot directory (an absolute path: a relative --dir is resolved at start, and CONFIG
  // SET dir takes only existing directories) and file name.
  std::string dir() const;
  std::string dbfilename() const;
  // Returns the `save` schedule (empty: no automatic snapshots).
  std::vector<SavePoint> save_points() const;
  std::string requirepass() const;
  // Returns maxmemory-policy.
  MaxmemoryPolicy eviction_policy() const {
    return eviction.policy.load(std::memory_order_relaxed);
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
  // tls-port (0: no TLS listener). Changed by CONFIG SET on the listener's engine; read
  // anywhere.
  std::atomic<uint16_t> tls_port{0};
  // Moves the TLS listener to a port (0: closes it) and returns why it could not; runs on the
  // listener's engine. Set once by main before serving (null: no listener, as in unit tests).
  std::function<absl::Status(uint16_t port)> listen_tls;
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
  // Which flag values ApplyFlags takes: every flag's default, or only the flags given.
  enum class FlagPass : uint8_t { kDefaults, kGiven };
  // The protected-mode and tls-* part of ApplyFlags.
  void ApplyTlsFlags(FlagPass pass);
  void AddTlsEntries();
  // Entry::apply of the tls-* entries: rebuilds the context (when tls-port is set) and swaps it
  // in for new connections.
  std::string ApplyTls(std::string_view name);
  // Entry::apply of tls-port, as Redis's applyTLSPort: builds the TLS context if there is none
  // yet, then moves the listener (listen_tls).
  std::string ApplyTlsPort(std::string_view name);
  io::TlsOptions tls_;  // guarded by mu_
  // ---- end of protected mode and TLS ----

  const Entry* Find(std::string_view name) const;
  void AddEntries();
  // Adds the immutable entries a config file may set (port, bind, threads ...).
  void AddStartupEntries();
  // Sets the entries' rewrite formats, multi-argument flags and custom rewrites.
  void DecorateEntries();
  void ApplyFlags(FlagPass pass);
  // Applies a config file's directives in order; returns the first error.
  absl::Status ApplyFile(const std::vector<ConfigLine>& lines);
  // Returns the name CONFIG REWRITE files `name` under (see CanonicalNameFn).
  std::optional<std::string> RewriteName(std::string_view name) const;
  std::vector<RewriteOption> RewriteOptions() const;

  absl::flat_hash_set<std::string> given_flags_;
  std::string config_file_;
  // Serializes CONFIG REWRITEs (two engines may run one at the same time).
  std::mutex rewrite_mu_;
  // True while Load applies the config file (maxclients is then checked once at the end).
  bool loading_ = false;

  std::vector<Entry> entries_;
  // std::mutex rather than absl::Mutex: ThreadSanitizer sees a pthread mutex, not Debian's
  // uninstrumented absl::Mutex. Guards the strings below.
  mutable std::mutex mu_;
  std::string dir_;
  std::string dbfilename_;
  std::vector<SavePoint> save_points_;
  std::string requirepass_;
  std::vector<double> latency_percentiles_{50.0, 99.0, 99.9};
  // Recomputes observe_ticks from the slow log and latency monitor thresholds.
  void UpdateObserveTicks();
};

// Returns the names of the flags on a command line (as absl spells them: "--nopin_cpus" is
// pin_cpus), to tell which settings the command line gives (they override the config file).
absl::flat_hash_set<std::string> CommandLineFlagNames(int argc, char** argv);

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
