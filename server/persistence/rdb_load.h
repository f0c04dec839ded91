// Loading an RDB file into the shards (start-up, DEBUG RELOAD): one non-engine thread reads and
// checks the file (RdbFileReader) and hands each key to its owning shard in batches; the shards
// decode and insert in parallel. Redis 7.0's rules as a master: expired keys dropped, empty
// collections skipped, a duplicate key fatal.
// Thread: LoadRdbFile runs on a non-engine thread and blocks it; LoadProgress is read anywhere.
#pragma once

#include <absl/status/statusor.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace dashkv {

class Config;
class ShardSet;

// Design
//   The reader thread parses records and appends each entry (a fixed header, the key, the raw
//   value bytes) to the open batch of the key's shard (ShardSet::ShardOf). A batch is posted to
//   its shard when it holds kBatchBytes or kBatchEntries; at most kMaxInFlight batches per shard
//   are posted and not yet done (the reader waits for a completion beyond that), so memory stays
//   bounded by shards x (kMaxInFlight + 1) batches, whatever the file size. Batch buffers are
//   reused; an entry costs the reader one copy of its bytes and no allocation.
//   On its shard a batch is decoded entry by entry (ReadRdbValue: the value is built with the
//   owning thread's heap), checked against the rules and inserted with
//   DbSlice::FindOrAddForLoad and SetExpire: quietly, as Redis loads (no keyspace event, no
//   WATCH touched, no blocked client served, no change since the last save counted). The
//   expiry rule uses one `now` taken when loading starts (as Redis).
//   The first error (from the reader or any shard) stops the load: the reader posts nothing
//   more, the shards skip the batches still queued, and the error is returned once every
//   posted batch is done (no task outlives the call). The data loaded until then stays: the
//   caller refuses to start (or to serve) after a failed load.

// Loading progress for INFO's loading_* fields, written by the loader, read by any thread.
// Thread-safe: relaxed atomics (each field is a consistent value on its own).
struct LoadProgress {
  std::atomic<bool> loading{false};
  std::atomic<int64_t> start_time_ms{0};  // wall clock when loading began (loading_start_time)
  std::atomic<uint64_t> total_bytes{0};   // file size (loading_total_bytes)
  std::atomic<uint64_t> loaded_bytes{0};  // bytes read and checked (loading_loaded_bytes)
  std::atomic<uint64_t> keys_loaded{0};   // keys inserted so far
  std::atomic<uint64_t> rdb_used_mem{0};  // the file's "used-mem" AUX (loading_rdb_used_mem)

  // Returns loading_loaded_perc as Redis computes it: loaded / (total + 1) * 100.
  double LoadedPercent() const;
  // Returns loading_eta_seconds as Redis computes it from whole seconds elapsed (1 while
  // nothing has elapsed).
  int64_t EtaSeconds(int64_t now_ms) const;
};

// What a successful load did.
struct LoadStats {
  uint64_t keys_loaded = 0;
  uint64_t keys_expired = 0;   // dropped: their deadline had passed
  uint64_t empty_keys_skipped = 0;
  uint64_t bytes = 0;          // file size
  int rdb_version = 0;
  bool checksum_disabled = false;  // the file's CRC was 0 (logged as Redis does)
  std::vector<std::pair<std::string, std::string>> aux;  // AUX fields in file order
  // The function libraries' code (FUNCTION2 records, in file order), for the caller to
  // register (SnapshotManager: the function hooks).
  std::vector<std::string> functions;
};

// Tuning of LoadRdbFile (tests shrink them to exercise the flow control).
struct LoadOptions {
  size_t batch_bytes = 1 << 20;    // post a batch once it holds this many bytes ...
  size_t batch_entries = 4096;     // ... or this many entries
  unsigned max_in_flight = 4;      // posted but unfinished batches per shard
  size_t block_size = 4 << 20;     // file read size
  // A key the shards already hold (or that the file holds twice) replaces the one before,
  // instead of failing the load (DEBUG RELOAD MERGE).
  bool replace_existing = false;
  // Asked on the reading thread between records (every kStopCheckRecords records or
  // kStopCheckBytes bytes read, whichever comes first): true stops the load, which then
  // returns Cancelled (a SIGTERM at start-up). Null: never stops.
  std::function<bool()> stop_requested;
  static constexpr uint64_t kStopCheckRecords = 256;
  static constexpr uint64_t kStopCheckBytes = 1 << 20;
};

// Loads the RDB file at `path` into the shards' databases (adding to what they hold). Reads
// config.databases (SELECTDB bound), config.rdbchecksum (whether the CRC is compared) and the
// encoding thresholds. `progress` may be null. Logs as Redis does ("Loading RDB produced by
// version ...", progress about once a second, "Done loading RDB, keys loaded: N, keys expired:
// M.").
// Errors: NotFound when the file does not exist (the caller starts empty); Cancelled when
// options.stop_requested stopped it (what was loaded until then stays); the reader's
// errors (rdb_file_reader.h); DataLoss naming the key, type and offset for a corrupt value or
// "Duplicated key found in RDB file"; Unimplemented for a value type dashkv does not have yet
// (streams, modules); ResourceExhausted when a
// table may not grow.
// REQUIRES: not called on an engine thread; the engines run. Blocks until the load ends.
absl::StatusOr<LoadStats> LoadRdbFile(const std::string& path, ShardSet& shards,
                                      const Config& config, LoadProgress* progress,
                                      const LoadOptions& options = {});

}  // namespace dashkv
