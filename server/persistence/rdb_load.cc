#include "server/persistence/rdb_load.h"

#include <absl/base/thread_annotations.h>
#include <absl/strings/escaping.h>
#include <absl/strings/str_cat.h>
#include <absl/strings/str_format.h>

#include <algorithm>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string_view>

#include "core/base/clock.h"
#include "core/base/logging.h"
#include "core/hash.h"
#include "core/rdb_encoding.h"
#include "server/config.h"
#include "server/persistence/rdb_file_reader.h"
#include "server/persistence/value_loader.h"
#include "server/storage/shard_set.h"

namespace dashkv {

double LoadProgress::LoadedPercent() const {
  double total = static_cast<double>(total_bytes.load(std::memory_order_relaxed));
  double loaded = static_cast<double>(loaded_bytes.load(std::memory_order_relaxed));
  return loaded / (total + 1) * 100;
}

int64_t LoadProgress::EtaSeconds(int64_t now_ms) const {
  int64_t elapsed = now_ms / 1000 - start_time_ms.load(std::memory_order_relaxed) / 1000;
  if (elapsed <= 0) return 1;
  uint64_t total = total_bytes.load(std::memory_order_relaxed);
  uint64_t loaded = loaded_bytes.load(std::memory_order_relaxed);
  double remaining = total > loaded ? static_cast<double>(total - loaded) : 0;
  return static_cast<int64_t>(static_cast<double>(elapsed) * remaining /
                              static_cast<double>(loaded + 1));
}

namespace {

// Debian's abseil has its own string_view: StrCat takes that one.
absl::string_view Av(std::string_view v) { return absl::string_view(v.data(), v.size()); }

constexpr size_t kMaxKeyInMessage = 128;

// The fixed part of an entry in a batch; the key bytes and the value bytes follow it.
struct EntryHeader {
  int64_t expire_ms;
  uint64_t value_offset;  // file offset of the value (for error messages)
  uint64_t value_len;
  int64_t idle_s;  // the IDLE opcode's seconds (capped), -1: none
  uint32_t key_len;
  uint32_t db;
  int16_t freq;  // the FREQ opcode's counter, -1: none
  uint8_t type;
  uint8_t has_expire;
};

// A run of entries for one shard.
struct Batch {
  std::string data;
  std::vector<size_t> starts;  // offset of each entry in data
};

// How many entries ahead of the one being inserted the shard prefetches table buckets.
constexpr size_t kPrefetchAhead = 8;

struct BatchCounts {
  uint64_t loaded = 0;
  uint64_t expired = 0;
  uint64_t empty = 0;
};

std::string QuoteKey(std::string_view key) {
  std::string shown = absl::CHexEscape(std::string(key.substr(0, kMaxKeyInMessage)));
  if (key.size() > kMaxKeyInMessage) shown += "...";
  return shown;
}

std::string EntryContext(uint64_t offset, std::string_view key, int type) {
  return absl::StrCat("at offset ", offset, " (key '", QuoteKey(key), "', type ", type, " (",
                      Av(RdbTypeName(type)), "))");
}

struct EntryView {
  EntryHeader h;
  std::string_view key;
  std::string_view raw;
};

EntryView ViewEntry(const Batch& batch, size_t i) {
  EntryView e;
  const char* p = batch.data.data() + batch.starts[i];
  std::memcpy(&e.h, p, sizeof(e.h));
  p += sizeof(e.h);
  e.key = std::string_view(p, e.h.key_len);
  e.raw = std::string_view(p + e.h.key_len, e.h.value_len);
  return e;
}

// Decodes and inserts the entries of `batch` on `shard`. Returns the first error.
// The table buckets of the entries kPrefetchAhead ahead are prefetched: the inserts of a big
// load miss the cache on almost every bucket otherwise.
absl::Status ApplyBatch(Shard& shard, const Batch& batch, const ValueLimits& limits,
                        int64_t now_ms, bool replace_existing, BatchCounts* counts) {
  const size_t n = batch.starts.size();
  auto prefetch = [&](size_t i) {
    if (i >= n) return;
    EntryView e = ViewEntry(batch, i);
    shard.db(e.h.db).table().Prefetch(HashBytes(e.key));
  };
  for (size_t i = 0; i < kPrefetchAhead; ++i) prefetch(i);
  for (size_t i = 0; i < n; ++i) {
    prefetch(i + kPrefetchAhead);
    auto [h, key, raw] = ViewEntry(batch, i);
    RdbReader reader(raw);
    absl::StatusOr<CompactObj> value = ReadRdbValue(h.type, reader, limits);
    if (!value.ok()) {
      if (IsEmptyValue(value.status())) {
        if (counts->empty++ < 10) {
          LOG(WARNING) << "rdbLoadObject skipping empty key: " << QuoteKey(key);
        }
        continue;
      }
      return absl::Status(value.status().code(),
                          absl::StrCat("Corrupt RDB value ",
                                       EntryContext(h.value_offset, key, h.type), ": ",
                                       value.status().message()));
    }
    if (reader.remaining() != 0) {
      return absl::DataLossError(absl::StrCat("Corrupt RDB value ",
                                              EntryContext(h.value_offset, key, h.type), ": ",
                                              reader.remaining(), " bytes left after the value"));
    }
    if (h.has_expire && h.expire_ms < now_ms) {  // Redis's rule as a master
      ++counts->expired;
      continue;
    }
    DbSlice& db = shard.db(h.db);
    // Quiet: no keyspace event, WATCH untouched, not a change since the last save (as Redis).
    OpResult<DbSlice::AddResult> added = db.FindOrAddForLoad(key);
    if (!added) {
      return absl::ResourceExhaustedError(
          absl::StrCat("Out of memory loading RDB ", EntryContext(h.value_offset, key, h.type)));
    }
    // A key already held counts even when its deadline has passed (Redis finds it in its
    // dict): a duplicate, or replaced with MERGE.
    if (!added->inserted && replace_existing) {
      if (added->it->first.HasExpire()) db.SetExpire(added->it, 0);
    } else if (!added->inserted) {
      return absl::DataLossError(
          absl::StrCat("Duplicated key found in RDB file: RDB has duplicated key '",
                       QuoteKey(key), "' in DB ", h.db, " (offset ", h.value_offset, ")"));
    }
    added->it->second = std::move(*value);
    if (h.has_expire) db.SetExpire(added->it, h.expire_ms);
    if (h.idle_s >= 0 || h.freq >= 0) [[unlikely]] {
      // The file's IDLE / FREQ, for the policy in force (Redis's objectSetLRUOrLFU).
      db.SetRecord(added->it,
                   RestoredRecord(db.eviction().access_mode(), NowMs(), h.idle_s, h.freq));
    } else if (!added->it->first.HasAuxRoom()) {
      // A record kept outside the key went with the value it replaced: a new key's again.
      db.SetRecord(added->it, NewRecord(db.eviction().access_mode(), NowMs()));
    }
    ++counts->loaded;
  }
  return absl::OkStatus();
}

// The loader: the reader thread's batching and flow control, and what the shards report back.
class Loader {
 public:
  Loader(ShardSet& shards, const Config& config, LoadProgress* progress,
         const LoadOptions& options, int64_t now_ms)
      : shards_(shards),
        config_(config),
        progress_(progress),
        options_(options),
        now_ms_(now_ms),
        open_(shards.size(), nullptr),
        in_flight_(shards.size(), 0) {}

  // Adds an entry to its shard's batch, posting the batch when full. May block (flow control).
  void Add(const RdbRecord& rec) {
    unsigned sid = shards_.ShardOf(rec.key);
    Batch*& batch = open_[sid];
    if (batch == nullptr) batch = TakeFreeBatch();
    // An IDLE beyond the LRU clock's range means "as old as can be": capped there.
    const int64_t idle_s =
        rec.idle_s ? static_cast<int64_t>(std::min<uint64_t>(*rec.idle_s, kLruClockMax + 1)) : -1;
    EntryHeader h{rec.expire_ms.value_or(0), rec.value_offset, rec.value.size(), idle_s,
                  static_cast<uint32_t>(rec.key.size()), rec.db,
                  static_cast<int16_t>(rec.freq ? int16_t(*rec.freq) : int16_t(-1)), rec.type,
                  static_cast<uint8_t>(rec.expire_ms.has_value())};
    std::string& d = batch->data;
    size_t at = d.size();
    d.resize(at + sizeof(h) + rec.key.size() + rec.value.size());
    char* out = d.data() + at;
    std::memcpy(out, &h, sizeof(h));
    std::memcpy(out + sizeof(h), rec.key.data(), rec.key.size());
    std::memcpy(out + sizeof(h) + rec.key.size(), rec.value.data(), rec.value.size());
    batch->starts.push_back(at);
    if (batch->starts.size() >= options_.batch_entries || d.size() >= options_.batch_bytes) {
      Post(sid);
    }
  }

  // Posts every open batch (drops them after a failure) and waits until all posted batches
  // are done.
  void Drain() {
    for (unsigned sid = 0; sid < open_.size(); ++sid) {
      if (open_[sid] != nullptr && !failed()) Post(sid);
    }
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [this] { return total_in_flight_ == 0; });
  }

  bool failed() const { return failed_.load(std::memory_order_acquire); }
  // Records `status` as the load's error if it is the first.
  void Fail(absl::Status status) {
    std::unique_lock<std::mutex> lock(mu_);
    if (error_.ok()) error_ = std::move(status);
    failed_.store(true, std::memory_order_release);
  }
  absl::Status error() {
    std::unique_lock<std::mutex> lock(mu_);
    return error_;
  }
  BatchCounts counts() {
    std::unique_lock<std::mutex> lock(mu_);
    return counts_;
  }

 private:
  Batch* TakeFreeBatch() {
    std::unique_lock<std::mutex> lock(mu_);
    if (!free_.empty()) {
      Batch* b = free_.back();
      free_.pop_back();
      return b;
    }
    batches_.push_back(std::make_unique<Batch>());
    batches_.back()->data.reserve(options_.batch_bytes + options_.batch_bytes / 8);
    batches_.back()->starts.reserve(options_.batch_entries);
    return batches_.back().get();
  }

  void Post(unsigned sid) {
    Batch* batch = open_[sid];
    open_[sid] = nullptr;
    {
      std::unique_lock<std::mutex> lock(mu_);
      auto room = [this, sid] {
        return in_flight_[sid] < options_.max_in_flight;
      };
      cv_.wait(lock, room);
      ++in_flight_[sid];
      ++total_in_flight_;
    }
    shards_.Post(sid, [this, sid, batch](Shard& shard) { Run(sid, shard, batch); });
  }

  // On shard `sid`: applies the batch (unless the load failed) and gives it back.
  void Run(unsigned sid, Shard& shard, Batch* batch) {
    BatchCounts counts;
    absl::Status status;
    if (!failed()) {
      status = ApplyBatch(shard, *batch, ValueLimits::From(config_), now_ms_,
                          options_.replace_existing, &counts);
    }
    if (progress_ != nullptr) {
      progress_->keys_loaded.fetch_add(counts.loaded, std::memory_order_relaxed);
    }
    if (!status.ok()) Fail(std::move(status));
    batch->data.clear();
    if (batch->data.capacity() > 4 * options_.batch_bytes) batch->data.shrink_to_fit();
    batch->starts.clear();
    std::unique_lock<std::mutex> lock(mu_);
    counts_.loaded += counts.loaded;
    counts_.expired += counts.expired;
    counts_.empty += counts.empty;
    free_.push_back(batch);
    --in_flight_[sid];
    --total_in_flight_;
    cv_.notify_all();  // under the lock: the waiting reader owns mu_ and cv_
  }

  ShardSet& shards_;
  const Config& config_;
  LoadProgress* progress_;
  LoadOptions options_;
  int64_t now_ms_;
  std::vector<Batch*> open_;  // reader thread only

  // std::mutex rather than absl::Mutex: ThreadSanitizer sees a pthread mutex, not Debian's
  // uninstrumented absl::Mutex.
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<unsigned> in_flight_;
  unsigned total_in_flight_ = 0;
  std::vector<std::unique_ptr<Batch>> batches_;
  std::vector<Batch*> free_;
  absl::Status error_;
  BatchCounts counts_;
  std::atomic<bool> failed_{false};
};

void LogAux(std::string_view key, std::string_view value, LoadProgress* progress) {
  if (!key.empty() && key[0] == '%') {
    LOG(INFO) << "RDB '" << key << "': " << value;
  } else if (key == "redis-ver") {
    LOG(INFO) << "Loading RDB produced by version " << value;
  } else if (key == "ctime") {
    int64_t age = NowMs() / 1000 - std::strtoll(std::string(value).c_str(), nullptr, 10);
    LOG(INFO) << "RDB age " << (age < 0 ? 0 : age) << " seconds";
  } else if (key == "used-mem") {
    long long used = std::strtoll(std::string(value).c_str(), nullptr, 10);
    LOG(INFO) << absl::StrFormat("RDB memory usage when created %.2f Mb",
                                 static_cast<double>(used) / (1024 * 1024));
    if (progress != nullptr && used > 0) {
      progress->rdb_used_mem.store(static_cast<uint64_t>(used), std::memory_order_relaxed);
    }
  }
}

// Reads every record and hands the entries to the loader. Returns the reader's error or one
// of its own (stream values); function libraries go to `functions`. The shards' errors are
// the loader's.
absl::Status ReadAll(RdbFileReader& reader, Loader& loader, LoadProgress* progress,
                     const std::function<bool()>& stop_requested,
                     std::vector<std::string>* functions) {
  int64_t next_log_ms = NowMs() + 1000;
  uint64_t since_check = 0;
  uint64_t checked_at = 0;  // file offset of the last check
  for (;;) {
    absl::StatusOr<RdbRecord> rec = reader.Next();
    if (!rec.ok()) return rec.status();
    switch (rec->kind) {
      case RdbRecordKind::kEnd:
        return absl::OkStatus();
      case RdbRecordKind::kAux:
        LogAux(rec->key, rec->value, progress);
        continue;
      case RdbRecordKind::kResizeDb:
        continue;
      case RdbRecordKind::kFunction:
        functions->push_back(std::string(rec->value));  // registered by the caller
        continue;
      case RdbRecordKind::kEntry:
        break;
    }
    loader.Add(*rec);
    if (++since_check < LoadOptions::kStopCheckRecords &&
        reader.offset() - checked_at < LoadOptions::kStopCheckBytes) {
      continue;
    }
    since_check = 0;
    checked_at = reader.offset();
    if (loader.failed()) return absl::OkStatus();  // the loader holds the error
    if (stop_requested && stop_requested()) {
      return absl::CancelledError(
          absl::StrCat("Loading stopped at offset ", reader.offset(), " on request"));
    }
    if (progress != nullptr) {
      progress->loaded_bytes.store(reader.offset(), std::memory_order_relaxed);
    }
    if (int64_t now = NowMs(); now >= next_log_ms) {
      next_log_ms = now + 1000;
      uint64_t keys = progress ? progress->keys_loaded.load(std::memory_order_relaxed) : 0;
      LOG(INFO) << absl::StrFormat("Loading RDB: %.1f MB of %.1f MB (%.1f%%), %d keys loaded",
                                   reader.offset() / 1048576.0, reader.file_size() / 1048576.0,
                                   100.0 * reader.offset() / (reader.file_size() + 1), keys);
    }
  }
}

}  // namespace

absl::StatusOr<LoadStats> LoadRdbFile(const std::string& path, ShardSet& shards,
                                      const Config& config, LoadProgress* progress,
                                      const LoadOptions& options) {
  CHECK(Shard::Current() == nullptr) << "LoadRdbFile on a shard thread";
  RdbFileReader::Options ropts;
  ropts.num_dbs = std::min(config.databases, shards.num_dbs());
  ropts.verify_checksum = config.rdbchecksum.load(std::memory_order_relaxed);
  ropts.block_size = options.block_size;
  absl::StatusOr<std::unique_ptr<RdbFileReader>> reader = RdbFileReader::Open(path, ropts);
  if (!reader.ok()) return reader.status();

  int64_t now_ms = NowMs();
  if (progress != nullptr) {
    progress->start_time_ms.store(now_ms, std::memory_order_relaxed);
    progress->total_bytes.store((*reader)->file_size(), std::memory_order_relaxed);
    progress->loaded_bytes.store(0, std::memory_order_relaxed);
    progress->keys_loaded.store(0, std::memory_order_relaxed);
    progress->rdb_used_mem.store(0, std::memory_order_relaxed);
    progress->loading.store(true, std::memory_order_release);
  }
  Loader loader(shards, config, progress, options, now_ms);
  std::vector<std::string> functions;
  absl::Status status =
      ReadAll(**reader, loader, progress, options.stop_requested, &functions);
  if (!status.ok()) loader.Fail(status);
  loader.Drain();  // no task outlives this call, also after an error
  if (progress != nullptr) progress->loading.store(false, std::memory_order_release);
  if (absl::Status error = loader.error(); !error.ok()) return error;

  LoadStats stats;
  BatchCounts counts = loader.counts();
  stats.keys_loaded = counts.loaded;
  stats.keys_expired = counts.expired;
  stats.empty_keys_skipped = counts.empty;
  stats.bytes = (*reader)->file_size();
  stats.rdb_version = (*reader)->version();
  stats.checksum_disabled = (*reader)->checksum_disabled();
  stats.aux = (*reader)->aux();
  stats.functions = std::move(functions);
  if (progress != nullptr) {
    progress->loaded_bytes.store(stats.bytes, std::memory_order_relaxed);
  }
  if (stats.checksum_disabled && ropts.verify_checksum) {
    LOG(WARNING) << "RDB file was saved with checksum disabled: no check performed.";
  }
  if (stats.empty_keys_skipped > 0) {
    LOG(WARNING) << "Done loading RDB, keys loaded: " << stats.keys_loaded
                 << ", keys expired: " << stats.keys_expired
                 << ", empty keys skipped: " << stats.empty_keys_skipped << ".";
  } else {
    LOG(INFO) << "Done loading RDB, keys loaded: " << stats.keys_loaded
              << ", keys expired: " << stats.keys_expired << ".";
  }
  return stats;
}

}  // namespace dashkv
