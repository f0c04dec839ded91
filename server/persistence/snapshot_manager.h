// SnapshotManager: the server's snapshots — SAVE, BGSAVE, the `save` schedule, the snapshot at
// shutdown and after FLUSHALL — and what INFO persistence, LASTSAVE and the write gates report.
// It owns one ShardSnapshot per shard and the I/O engine that writes the file.
// Thread-safe: the save state sits behind a mutex touched only when a save starts or ends and
// by INFO/LASTSAVE; the gates are one atomic word read once per command batch.
#pragma once

#include <absl/base/thread_annotations.h>
#include <absl/status/status.h>

#include <atomic>
#include <boost/asio/awaitable.hpp>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "io/engine.h"
#include "io/engine_pool.h"
#include "server/persistence/rdb_file_writer.h"
#include "server/persistence/rdb_load.h"
#include "server/persistence/shard_snapshot.h"

namespace dashkv {

class Config;
class KeyLocks;
class Shard;
class ShardSet;

// Design
//   The cut. A save starts inside a step that holds every shard (a command with a whole-shard
//   lock scope, or SaveWithLocks taking one): one hop runs ShardSnapshot::Start on every shard
//   while no other command can run anywhere, so the snapshot is the dataset between two
//   commands of a global serial order. A write acknowledged before the save started is in it;
//   a transaction is all in or all out; a client's later write is never in without its earlier
//   one. Then the shards walk their tables in the background (ShardSnapshot) and the writer
//   finishes the file (RdbFileWriter); the manager hears the outcome on the I/O thread.
//   One save at a time. A save has an id; Abort (FLUSHALL) ends it at once, so a new save may
//   start before the aborted writer has cleaned up, and the old writer's outcome is ignored.
//   Changes since the last save: every shard counts its mutable lookups (ShardStats::dirty);
//   the cut records their sum, and a successful save makes that sum the new baseline.
class SnapshotManager {
 public:
  // Bits of gate(): why commands are refused before they run.
  enum Gate : uint32_t {
    kGateLoading = 1u << 0,     // -LOADING for commands without the loading flag
    kGateSaveFailed = 1u << 1,  // -MISCONF for writes, if stop-writes-on-bgsave-error applies
  };

  // A background save's failure is what INFO's rdb_last_bgsave_status and -MISCONF report;
  // a foreground one (SAVE, SHUTDOWN, FLUSHALL, DEBUG RELOAD) is reported to its caller only,
  // as in Redis. Either kind's success clears the failure.
  enum class SaveKind : uint8_t { kForeground, kBackground };

  // The niceness added to the I/O thread, which compresses, checksums and writes a save's file
  // (and runs DEBUG RELOAD's load): where the CPUs are contended, the shard threads serving
  // clients get them first and the save takes longer; on idle CPUs it runs at full speed.
  static constexpr int kWriterNice = 10;

  SnapshotManager(Config& config, ShardSet& shards, io::EnginePool& pool);
  ~SnapshotManager();
  // Stops and joins the I/O thread (idempotent). main() calls it after the engines stopped
  // and before they are destroyed: the I/O thread's last task may still be posting a
  // completion to an engine.
  void StopIo();

  // Function libraries in snapshots: `codes` returns every library's code (written as
  // FUNCTION2 records in the header); `restore` registers the libraries a load read (`merge`:
  // DEBUG RELOAD MERGE, replacing same-named ones; otherwise they replace all), failing the
  // load when one does not load. Set once, before the first save or load.
  void SetFunctionHooks(std::function<std::vector<std::string>()> codes,
                        std::function<absl::Status(std::vector<std::string>, bool merge)> restore);
  SnapshotManager(const SnapshotManager&) = delete;
  SnapshotManager& operator=(const SnapshotManager&) = delete;

  // Creates the per-shard snapshots and registers them as change listeners. REQUIRES: the
  // engines run; before the shards serve commands.
  void Attach();

  // Takes the cut and starts a save in the background. REQUIRES: a coroutine on an engine
  // thread whose caller holds every shard. FailedPrecondition when a save is running. A save
  // that cannot create its file counts as started and failed (AwaitDone reports it).
  boost::asio::awaitable<absl::Status> Start(SaveKind kind);
  // Resumes when the running save is done (at once if none): its outcome, or the last one.
  // REQUIRES: a coroutine on an engine thread.
  boost::asio::awaitable<absl::Status> AwaitDone();
  // Takes every shard (shared), starts a save and, if `wait`, awaits it: SAVE (foreground), or
  // the schedule (background, not waited for). REQUIRES: a coroutine on an engine thread holding no intent lock.
  boost::asio::awaitable<absl::Status> SaveWithLocks(bool wait);
  // Saves and waits for the file, after the running save if there is one. REQUIRES: as Start.
  boost::asio::awaitable<absl::Status> SaveHoldingShards();
  // Saves for a shutdown: takes every shard exclusive, waits for a running save to end, saves,
  // and on success keeps the shards until the process exits (nothing changes after the final
  // snapshot). REQUIRES: as SaveWithLocks.
  boost::asio::awaitable<absl::Status> SaveForShutdown();
  // SaveForShutdown from a thread that is not an engine (main, on SIGTERM): blocks until done.
  absl::Status SaveBlocking();
  // SHUTDOWN has saved (or was told not to): the signal it raises must not save again.
  void MarkShutdownHandled() { shutdown_handled_.store(true); }
  bool shutdown_handled() const { return shutdown_handled_.load(); }

  // Stops the running save on `shard` (during a hop holding every shard: FLUSHALL); the first
  // call also aborts the file, which is then removed. No effect without a running save.
  void AbortOnShard(Shard& shard);

  // Periodic work (shard 0's timer): starts a save when a `save` point is due.
  void Cron(int64_t now_ms);

  bool in_progress() const;
  // Unix time of the last successful save (the start time before any).
  int64_t last_save_time() const;
  uint32_t gate() const { return gate_.load(std::memory_order_relaxed); }
  void set_loading(bool loading);
  // Whether a write must be refused with -MISCONF now (gate() had kGateSaveFailed).
  bool WritesRefused() const;

  // Appends INFO's persistence section fields, from `loading` to the rdb_* ones.
  void AppendInfo(std::string* out) const;
  // Appends the loading_* fields INFO adds at the end of the section while loading.
  void AppendLoadingInfo(std::string* out) const;

  // Loads dir/dbfilename into the shards at start-up, adding to what they hold; commands
  // without the loading flag get -LOADING meanwhile. NotFound when there is no file;
  // Cancelled when `stop_requested` (asked between records, see LoadOptions) returned true.
  // After any other outcome than success or NotFound, commands keep getting -LOADING: the
  // server is about to exit and never serves (or saves) the half-loaded dataset.
  // REQUIRES: a thread that is not an engine (main); the engines run.
  absl::StatusOr<LoadStats> LoadAtStart(std::function<bool()> stop_requested = nullptr);
  // Loads dir/dbfilename on the I/O thread (DEBUG RELOAD) and resumes with the outcome.
  // REQUIRES: a coroutine on an engine thread; the caller holds every shard.
  boost::asio::awaitable<absl::StatusOr<LoadStats>> Load(LoadOptions options);

 private:
  struct Waiter {
    unsigned engine;
    io::Completion<absl::Status> done;
  };
  uint64_t DirtySum() const;
  void OnWriterDone(uint64_t id, absl::Status status);
  std::string Header(const std::vector<ShardSnapshot::DbSize>& sizes) const;
  void UpdateGate();
  // Records a finished load: INFO's rdb_last_load_keys_*. (Loading counts no change since the
  // last save: what was counted before a DEBUG RELOAD NOSAVE stays, as in Redis.)
  void LoadDone(const absl::StatusOr<LoadStats>& stats);
  // Registers the function libraries of a successful load (restore_functions_).
  absl::Status RestoreFunctions(absl::StatusOr<LoadStats>& stats, bool merge);
  std::string DumpPath() const;

  Config& config_;
  ShardSet& shards_;
  io::EnginePool& pool_;
  std::unique_ptr<io::Engine> io_;  // writes the file
  bool io_stopped_ = false;
  std::vector<std::unique_ptr<ShardSnapshot>> snapshots_;  // by shard
  std::atomic<uint32_t> gate_{0};
  std::atomic<uint64_t> version_{0};
  std::atomic<bool> shutdown_handled_{false};
  LoadProgress load_progress_;
  std::function<std::vector<std::string>()> function_codes_;
  std::function<absl::Status(std::vector<std::string>, bool)> restore_functions_;

  // std::mutex rather than absl::Mutex: ThreadSanitizer sees a pthread mutex, not Debian's
  // uninstrumented absl::Mutex. Guards the fields below.
  mutable std::mutex mu_;
  uint64_t save_id_ = 0;   // id of the running save; 0: none
  uint64_t next_id_ = 1;
  std::shared_ptr<RdbFileWriter> writer_;
  std::vector<Waiter> waiters_;
  int64_t save_start_ms_ = 0;
  SaveKind kind_ = SaveKind::kBackground;  // of the running save
  uint64_t keys_total_ = 0;
  uint64_t dirty_at_cut_ = 0;
  uint64_t dirty_saved_ = 0;  // the sum at the last successful save's cut
  int64_t last_save_time_;
  int64_t last_try_ms_ = 0;
  bool last_ok_ = true;
  absl::Status last_status_;
  int64_t last_duration_sec_ = -1;
  uint64_t saves_ = 0;
  uint64_t load_keys_loaded_ = 0;
  uint64_t load_keys_expired_ = 0;
  std::unique_ptr<KeyLocks> shutdown_locks_;
};

}  // namespace dashkv
