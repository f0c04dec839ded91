#include "server/persistence/snapshot_manager.h"

#include "core/str_util.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <future>
#include <map>
#include <unistd.h>

#include "core/base/clock.h"
#include "core/base/logging.h"
#include "core/memory.h"
#include "core/rdb_encoding.h"
#include "io/thread_priority.h"
#include "server/config.h"
#include "server/storage/shard_set.h"
#include "server/tx/transaction.h"
#include "server/version.h"

namespace dashkv {

namespace asio = boost::asio;

namespace {

constexpr char kOpAux = char(0xFA);
constexpr char kOpSelectDb = char(0xFE);
constexpr char kOpResizeDb = char(0xFB);
constexpr char kOpFunction2 = char(0xF5);
// As Redis's CONFIG_BGSAVE_RETRY_DELAY: after a failed save the schedule waits this long.
constexpr int64_t kRetryDelayMs = 5000;

void AppendAux(std::string* out, std::string_view key, std::string_view value) {
  out->push_back(kOpAux);
  AppendRdbString(out, key, false);
  AppendRdbString(out, value, false);
}

int64_t UnixSeconds() { return NowMs() / 1000; }

}  // namespace

SnapshotManager::SnapshotManager(Config& config, ShardSet& shards, io::EnginePool& pool)
    : config_(config), shards_(shards), pool_(pool), last_save_time_(UnixSeconds()) {
  // The I/O engine: not pinned, and niced rather than SCHED_IDLE (a background engine could
  // starve a save): see kWriterNice.
  io_ = std::make_unique<io::Engine>(pool.size() + 1, io::EngineOptions{.spin_us = 0});
  io_->Start();
  io_->Post([] {
    if (absl::Status st = io::NiceCurrentThread(kWriterNice); !st.ok()) {
      LOG(WARNING) << "Snapshot writer thread keeps its priority: " << st;
    }
  });
}

SnapshotManager::~SnapshotManager() { StopIo(); }

void SnapshotManager::StopIo() {
  if (io_stopped_) return;
  io_stopped_ = true;
  io_->Stop();
  io_->Join();
  // A save cut short by the shutdown leaves no temporary file behind.
  std::lock_guard<std::mutex> lock(mu_);
  // The shutdown's locks are never given back: the engines that would take the release
  // messages are gone, and the process is ending.
  if (shutdown_locks_) shutdown_locks_->Forget();
  if (writer_) unlink(writer_->temp_path().c_str());
}

void SnapshotManager::Attach() {
  snapshots_.resize(shards_.size());
  shards_.RunOnAllBlocking([this](Shard& shard) {
    auto snap = std::make_unique<ShardSnapshot>(&shard, &pool_[shard.index()]);
    snap->Attach();
    snapshots_[shard.index()] = std::move(snap);
  });
}

uint64_t SnapshotManager::DirtySum() const {
  uint64_t sum = 0;
  for (unsigned i = 0; i < shards_.size(); ++i) {
    sum += shards_.shard(i).changes().change_count();
  }
  return sum;
}

std::string SnapshotManager::Header(const std::vector<ShardSnapshot::DbSize>& sizes) const {
  std::string out = StrCat("REDIS00", kRdbVersion);
  AppendAux(&out, "redis-ver", kRedisVersion);
  AppendAux(&out, "redis-bits", "64");
  AppendAux(&out, "ctime", StrCat(UnixSeconds()));
  AppendAux(&out, "used-mem", StrCat(UsedMemory()));
  AppendAux(&out, "aof-base", "0");
  if (function_codes_) {
    for (const std::string& code : function_codes_()) {
      out.push_back(kOpFunction2);
      AppendRdbString(&out, code, config_.rdbcompression.load(std::memory_order_relaxed));
    }
  }
  // Size hints per database, summed over the shards: the shards' chunks then select it again.
  std::map<unsigned, std::pair<uint64_t, uint64_t>> dbs;
  for (const auto& s : sizes) {
    dbs[s.db].first += s.keys;
    dbs[s.db].second += s.expires;
  }
  for (const auto& [db, counts] : dbs) {
    out.push_back(kOpSelectDb);
    AppendRdbLen(&out, db);
    out.push_back(kOpResizeDb);
    AppendRdbLen(&out, counts.first);
    AppendRdbLen(&out, counts.second);
  }
  return out;
}

asio::awaitable<absl::Status> SnapshotManager::Start(SaveKind kind) {
  uint64_t id;
  std::shared_ptr<RdbFileWriter> writer;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (save_id_ != 0) {
      co_return absl::FailedPreconditionError("Background save already in progress");
    }
    id = next_id_++;
    RdbFileWriter::Options opts;
    opts.dir = config_.dir();
    opts.filename = config_.dbfilename();
    opts.num_shards = shards_.size();
    opts.checksum = config_.rdbchecksum.load(std::memory_order_relaxed);
    opts.incremental_fsync = config_.rdb_save_incremental_fsync.load(std::memory_order_relaxed);
    auto created = RdbFileWriter::Create(
        io_.get(), std::move(opts), [this, id](absl::Status st) { OnWriterDone(id, st); });
    last_try_ms_ = NowMs();
    if (!created.ok()) {
      // As a Redis child that cannot open its file: the save started and failed at once, so
      // BGSAVE answers "started" and AwaitDone (SAVE) gets the error.
      LOG(WARNING) << "Background saving error: " << created.status().message();
      if (kind == SaveKind::kBackground) last_ok_ = false;
      last_status_ = created.status();
      last_duration_sec_ = 0;
      ++saves_;
      UpdateGate();
      co_return absl::OkStatus();
    }
    writer = *created;
    save_id_ = id;
    writer_ = writer;
    save_start_ms_ = NowMs();
    kind_ = kind;
    ++saves_;  // as Redis, counted when a save starts
  }
  RdbWriteOptions options;
  options.compress = config_.rdbcompression.load(std::memory_order_relaxed);
  const uint64_t version = version_.fetch_add(1) + 1;
  // Every shard adds its sizes at the cut; the last one writes the header, still inside the
  // step that holds every shard: no write (whose bucket serialization may wait for the writer,
  // which waits for the header) can run before it.
  struct Cut {
    std::mutex mu;
    std::vector<ShardSnapshot::DbSize> sizes;
    uint64_t dirty = 0;
    unsigned remaining;
  } cut;
  cut.remaining = shards_.size();
  co_await shards_.AwaitAll([&](Shard& shard) {
    std::vector<ShardSnapshot::DbSize> sizes;
    const uint64_t dirty = shard.changes().change_count();
    snapshots_[shard.index()]->Start(version, writer, options, kind == SaveKind::kBackground,
                                     &sizes);
    std::lock_guard<std::mutex> lock(cut.mu);
    cut.sizes.insert(cut.sizes.end(), sizes.begin(), sizes.end());
    cut.dirty += dirty;
    if (--cut.remaining != 0) return;
    // The save's figures are recorded before the header lets the writer finish: a small save
    // may end (OnWriterDone makes dirty_at_cut_ the new baseline) before this step returns.
    uint64_t keys = 0;
    for (const auto& s : cut.sizes) keys += s.keys;
    {
      std::lock_guard<std::mutex> manager_lock(mu_);
      if (save_id_ == id) {
        keys_total_ = keys;
        dirty_at_cut_ = cut.dirty;
      }
    }
    writer->WriteHeader(Header(cut.sizes));
  });
  co_return absl::OkStatus();
}

void SnapshotManager::OnWriterDone(uint64_t id, absl::Status status) {
  std::vector<Waiter> waiters;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (id != save_id_) return;  // aborted (FLUSHALL): already accounted
    const int64_t now = NowMs();
    save_id_ = 0;
    writer_.reset();
    last_duration_sec_ = (now - save_start_ms_ + 500) / 1000;
    last_status_ = status;
    if (status.ok()) {
      last_ok_ = true;
      last_save_time_ = now / 1000;
      dirty_saved_ = dirty_at_cut_;
      LOG(INFO) << "DB saved on disk (" << keys_total_ << " keys, "
                << (now - save_start_ms_) << " ms)";
    } else {
      if (kind_ == SaveKind::kBackground) last_ok_ = false;
      LOG(WARNING) << "Background saving error: " << status.message();
    }
    UpdateGate();
    waiters.swap(waiters_);
  }
  for (Waiter& w : waiters) {
    pool_.Post(w.engine, [done = std::move(w.done), status]() mutable { done(status); });
  }
}

asio::awaitable<absl::Status> SnapshotManager::AwaitDone() {
  const unsigned me = io::Engine::Current()->index();
  co_return co_await pool_.AwaitAsync<absl::Status>(
      me, [this, me](io::Completion<absl::Status> done) {
        std::lock_guard<std::mutex> lock(mu_);
        if (save_id_ == 0) {
          done(last_status_);
          return;
        }
        waiters_.push_back(Waiter{me, std::move(done)});
      });
}

asio::awaitable<absl::Status> SnapshotManager::SaveWithLocks(bool wait) {
  KeyLocks locks(shards_);
  locks.AddAllShards(LockMode::kShared);
  co_await locks.Acquire();
  absl::Status st = co_await Start(wait ? SaveKind::kForeground : SaveKind::kBackground);
  locks.Release();
  if (!st.ok() || !wait) co_return st;
  co_return co_await AwaitDone();
}

asio::awaitable<absl::Status> SnapshotManager::SaveHoldingShards() {
  for (;;) {
    absl::Status st = co_await Start(SaveKind::kForeground);
    if (st.ok()) co_return co_await AwaitDone();
    if (!absl::IsFailedPrecondition(st)) co_return st;
    co_await AwaitDone();  // a save was running: this one follows it
  }
}

asio::awaitable<absl::Status> SnapshotManager::SaveForShutdown() {
  // Every shard exclusive, for good after a successful save: nothing may change (and be
  // acknowledged) between the final snapshot and the exit.
  auto locks = std::make_unique<KeyLocks>(shards_);
  locks->AddAllShards(LockMode::kExclusive);
  co_await locks->Acquire();
  absl::Status st = co_await SaveHoldingShards();
  if (!st.ok()) {
    locks->Release();
    co_return st;
  }
  std::lock_guard<std::mutex> lock(mu_);
  shutdown_locks_ = std::move(locks);
  co_return st;
}

absl::Status SnapshotManager::SaveBlocking() {
  // A std::promise rather than absl::Notification, which ThreadSanitizer cannot see through.
  std::promise<absl::Status> done;
  std::future<absl::Status> result = done.get_future();
  asio::co_spawn(
      pool_[0].context(),
      [this, &done]() -> asio::awaitable<void> { done.set_value(co_await SaveForShutdown()); },
      asio::detached);
  return result.get();
}

void SnapshotManager::AbortOnShard(Shard& shard) {
  snapshots_[shard.index()]->Abort();
  std::vector<Waiter> waiters;
  std::shared_ptr<RdbFileWriter> writer;
  absl::Status why = absl::CancelledError("Background save aborted by FLUSHALL");
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (save_id_ == 0) return;
    save_id_ = 0;
    writer.swap(writer_);
    waiters.swap(waiters_);
    // As Redis when it kills its saving child: not an error of the save.
    LOG(INFO) << "Background saving aborted by FLUSHALL";
  }
  // The name goes now, so that no one sees it after the save is over; the I/O thread may still
  // write to the unlinked file until it takes the abort.
  unlink(writer->temp_path().c_str());
  writer->Abort(why);
  for (Waiter& w : waiters) {
    pool_.Post(w.engine, [done = std::move(w.done), why]() mutable { done(why); });
  }
}

void SnapshotManager::Cron(int64_t now_ms) {
  if (gate() & kGateLoading) return;
  std::vector<SavePoint> points = config_.save_points();
  if (points.empty()) return;
  uint64_t changes;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (save_id_ != 0) return;
    if (!last_ok_ && now_ms - last_try_ms_ < kRetryDelayMs) return;
    changes = DirtySum() - dirty_saved_;
    const int64_t since = now_ms / 1000 - last_save_time_;
    bool due = false;
    for (const SavePoint& p : points) {
      if (changes >= uint64_t(p.changes) && since >= p.seconds) {
        LOG(INFO) << p.changes << " changes in " << p.seconds << " seconds. Saving...";
        due = true;
        break;
      }
    }
    if (!due) return;
    last_try_ms_ = now_ms;
  }
  asio::co_spawn(pool_[0].context(), SaveWithLocks(false), asio::detached);
}

bool SnapshotManager::in_progress() const {
  std::lock_guard<std::mutex> lock(mu_);
  return save_id_ != 0;
}

int64_t SnapshotManager::last_save_time() const {
  std::lock_guard<std::mutex> lock(mu_);
  return last_save_time_;
}

void SnapshotManager::set_loading(bool loading) {
  if (loading) {
    gate_.fetch_or(kGateLoading);
  } else {
    gate_.fetch_and(~uint32_t(kGateLoading));
  }
}

void SnapshotManager::UpdateGate() {
  if (last_ok_) {
    gate_.fetch_and(~uint32_t(kGateSaveFailed));
  } else {
    gate_.fetch_or(kGateSaveFailed);
  }
}

bool SnapshotManager::WritesRefused() const {
  return (gate() & kGateSaveFailed) &&
         config_.stop_writes_on_bgsave_error.load(std::memory_order_relaxed) &&
         config_.has_save_points.load(std::memory_order_relaxed);
}

std::string SnapshotManager::DumpPath() const {
  return StrCat(config_.dir(), "/", config_.dbfilename());
}

void SnapshotManager::LoadDone(const absl::StatusOr<LoadStats>& stats) {
  if (!stats.ok()) return;
  std::lock_guard<std::mutex> lock(mu_);
  load_keys_loaded_ = stats->keys_loaded;
  load_keys_expired_ = stats->keys_expired;
}

void SnapshotManager::SetFunctionHooks(
    std::function<std::vector<std::string>()> codes,
    std::function<absl::Status(std::vector<std::string>, bool merge)> restore) {
  function_codes_ = std::move(codes);
  restore_functions_ = std::move(restore);
}

absl::Status SnapshotManager::RestoreFunctions(absl::StatusOr<LoadStats>& stats, bool merge) {
  if (!stats.ok() || !restore_functions_) return absl::OkStatus();
  absl::Status status = restore_functions_(std::move(stats->functions), merge);
  if (!status.ok()) LOG(WARNING) << "Failed loading the RDB's function libraries: " << status;
  return status;
}

absl::StatusOr<LoadStats> SnapshotManager::LoadAtStart(std::function<bool()> stop_requested) {
  set_loading(true);
  LoadOptions options;
  options.stop_requested = std::move(stop_requested);
  absl::StatusOr<LoadStats> stats =
      LoadRdbFile(DumpPath(), shards_, config_, &load_progress_, options);
  if (absl::Status fs = RestoreFunctions(stats, /*merge=*/false); !fs.ok()) stats = fs;
  // A failed or stopped load leaves the gate closed: no command (SAVE, BGSAVE, a read) sees the
  // partial dataset before the process exits.
  if (stats.ok() || absl::IsNotFound(stats.status())) set_loading(false);
  LoadDone(stats);
  return stats;
}

asio::awaitable<absl::StatusOr<LoadStats>> SnapshotManager::Load(LoadOptions options) {
  const unsigned me = io::Engine::Current()->index();
  using Result = absl::StatusOr<LoadStats>;
  Result stats = co_await pool_.AwaitAsync<Result>(
      me, [this, me, options](io::Completion<Result> done) mutable {
        // The loader blocks its thread and hops to the shards: the I/O thread is no shard.
        io_->Post([this, me, options, done = std::move(done)]() mutable {
          Result result = LoadRdbFile(DumpPath(), shards_, config_, &load_progress_, options);
          if (absl::Status fs = RestoreFunctions(result, options.replace_existing); !fs.ok()) {
            result = fs;
          }
          pool_.Post(me, [done = std::move(done), result = std::move(result)]() mutable {
            done(std::move(result));
          });
        });
      });
  LoadDone(stats);
  co_return stats;
}

void SnapshotManager::AppendLoadingInfo(std::string* out) const {
  if (!(gate() & kGateLoading)) return;
  const LoadProgress& p = load_progress_;
  char perc[32];
  snprintf(perc, sizeof(perc), "%.2f", p.LoadedPercent());
  StrAppend(out, "loading_start_time:", p.start_time_ms.load() / 1000,
            "\r\nloading_total_bytes:", p.total_bytes.load(),
            "\r\nloading_rdb_used_mem:", p.rdb_used_mem.load(),
            "\r\nloading_loaded_bytes:", p.loaded_bytes.load(), "\r\nloading_loaded_perc:", perc,
            "\r\nloading_eta_seconds:", p.EtaSeconds(NowMs()), "\r\n");
}

void SnapshotManager::AppendInfo(std::string* out) const {
  std::lock_guard<std::mutex> lock(mu_);
  const bool running = save_id_ != 0;
  uint64_t processed = 0, bytes = 0;
  if (running) {
    for (const auto& s : snapshots_) processed += s->keys_written();
    if (writer_) bytes = writer_->bytes_written();
  }
  const int64_t now = NowMs();
  StrAppend(out, "loading:", (gate() & kGateLoading) ? 1 : 0, "\r\nasync_loading:0\r\n");
  StrAppend(
      out, "current_cow_peak:0\r\ncurrent_cow_size:0\r\ncurrent_cow_size_age:0\r\n",
      "current_fork_perc:0.00\r\ncurrent_save_keys_processed:", processed,
      "\r\ncurrent_save_keys_total:", running ? keys_total_ : 0,
      "\r\ncurrent_save_bytes_written:", bytes,
      "\r\nrdb_changes_since_last_save:", DirtySum() - dirty_saved_,
      "\r\nrdb_bgsave_in_progress:", running ? 1 : 0,
      "\r\nrdb_last_save_time:", last_save_time_,
      "\r\nrdb_last_bgsave_status:", last_ok_ ? "ok" : "err",
      "\r\nrdb_last_bgsave_time_sec:", last_duration_sec_,
      "\r\nrdb_current_bgsave_time_sec:", running ? (now - save_start_ms_) / 1000 : -1,
      "\r\nrdb_saves:", saves_, "\r\nrdb_last_cow_size:0\r\nrdb_last_load_keys_expired:",
      load_keys_expired_, "\r\nrdb_last_load_keys_loaded:", load_keys_loaded_, "\r\n");
}

}  // namespace dashkv
