// ShardSnapshot: one shard's part of a forkless point-in-time snapshot. At the cut it stamps a
// snapshot version; then it walks the shard's tables in short slices between batches of
// commands, and, as a change listener, serializes an entry's old contents just before a write
// changes an entry it has not reached yet. The entries go to the shared RdbFileWriter.
// Thread: owned by shard thread (progress counters are atomics any thread may read).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "server/persistence/cpu_pressure.h"
#include "server/persistence/rdb_file_writer.h"
#include "server/persistence/rdb_sink.h"
#include "server/persistence/value_serializer.h"
#include "server/storage/key_change.h"

namespace dashkv::io {
class Engine;
}  // namespace dashkv::io

namespace dashkv {

class DbSlice;
class Shard;

// Design
//   Versions. Every Dashtable bucket carries a snapshot state word (core/dash_table.h,
//   "Snapshot state"): a version and the slots already saved for it. A snapshot takes a
//   version v higher than any before; a bucket whose version is older than v still holds its
//   contents as of the cut. The walk writes the bucket's entries not yet saved and marks it
//   saved at v. A write saves only what it touches: a change or erase of an entry first writes
//   that entry's old contents, once, and marks its slot (CVCEntryUponChange); an insert into a
//   free slot marks the slot, so the new entry is never written (CVCEntryUponInsert). An insert
//   that moves entries (displacement, or a full segment whose hooks or split may touch any
//   bucket) writes every bucket it may change first, as a whole. So each key present at the
//   cut is written exactly once, with its value at the cut, and no key written after the cut
//   is. A split copies the words and keeps slots, so entries that move keep their state; the
//   walk may meet moved entries again and skips them by their state.
//   Databases are tracked by their DbSlice object, so SWAPDB during a snapshot keeps writing
//   each table under the number it had at the cut. FLUSHDB serializes the rest of the database
//   first (the flush then frees it); FLUSHALL aborts the snapshot (SnapshotManager), as Redis
//   7.0 kills its saving child.
//   Slices. The walk runs as a task on the shard's engine that serializes buckets for a while
//   and then yields, so the inbox's hops and the ready sockets run between slices. When the
//   engine has served nothing for kLongIdleUs (io::Engine::work_done() unchanged), or the save
//   is a foreground one whose caller waits for it (SAVE, SHUTDOWN, DEBUG RELOAD), the walk runs
//   kSliceUs slices back to back (deferred to the end of each loop turn). While the engine
//   serves commands during a BGSAVE, the walk runs on credit: of the shard thread's CPU time,
//   the snapshot may take kBusyShare, which pays first for the time writes spent saving the
//   entries they were about to change, the walk keeping at least kFloorShare so that it ends;
//   idle time is the walk's when the engine idles in stretches of kLongIdleUs or more, or when
//   the machine has CPU time to spare: in the last CpuPressure interval, runnable tasks waited
//   for a CPU less than kSparePressure of the time. Otherwise the gaps between requests are
//   not free: where clients share the machine's CPUs, the walk and the writer thread it feeds
//   take CPU time from them (measured: using the gaps kept 0.56x of a SET load's throughput
//   and 11x its p99, not using them 0.71x and 1.7x), while a dedicated server under a
//   moderate load would save at a few percent of a CPU. A request arriving during a slice
//   waits for it (kSliceUs at most). Without credit the walk waits on a timer
//   (kCreditWaitUs), so the engine can sleep between requests instead of polling for the
//   walk. Under load the snapshot takes longer instead of taking the throughput. While the
//   writer has more than kSoftInFlight bytes of this shard queued, the walk waits (a timer)
//   instead. A write's own entry serialization cannot wait; above kHardInFlight it blocks the
//   shard thread until the writer has taken this shard's bytes (bounded by the disk's speed),
//   so memory stays bounded by the buffers, never by the dataset.
//   Compression. A write saving its entry and a paced slice hand strings over raw, and the
//   writer's thread compresses them (RdbSink's deferred LZF), so the shard thread, which a
//   client is waiting for, pays a copy instead of LZF (measured: LZF was half of a forced
//   save's cost). While the writer is more than kSoftInFlight bytes of this shard behind, and
//   when the walk runs free (an idle engine, a foreground save), the shard compresses itself,
//   so idle shards compress in parallel instead of queueing behind one writer thread.
//   Chunks. Entries are buffered up to kChunkBytes and handed to the writer; a value larger
//   than that leaves in pieces (RdbSink) while this shard holds the writer's floor, and the
//   rest goes as soon as the entry ends, releasing the floor. Only the floor holder's bytes
//   are written while it holds it, and it waits only for its own bytes, so no wait can close a
//   cycle. Every chunk that starts at an entry boundary starts with a SELECTDB opcode.
class ShardSnapshot final : public ChangeListener {
 public:
  static constexpr size_t kChunkBytes = 128 * 1024;
  static constexpr size_t kSoftInFlight = 4 << 20;  // per shard
  static constexpr size_t kHardInFlight = 64 << 20;
  static constexpr double kSliceUs = 50;        // the longest slice
  static constexpr double kBusyShare = 0.1;      // of a busy shard thread's CPU time (Design)
  static constexpr double kFloorShare = 0.02;    // the walk's least share of it
  static constexpr double kMinCreditUs = 10;     // the least credit a paced slice starts with
  static constexpr double kMaxCreditUs = 2000;   // credit saved up in a long busy stretch
  static constexpr uint64_t kCreditWaitUs = 200;  // the timer of a walk waiting for credit
  static constexpr double kLongIdleUs = 10000;   // idle stretches this long: a light load
  static constexpr double kSparePressure = 0.02;  // CpuPressure share under which CPUs are spare

  // The size of one database at the cut (for the file's size hints).
  struct DbSize {
    unsigned db;
    uint64_t keys;
    uint64_t expires;
  };

  // `engine`: the shard's engine, whose inbox runs the walk's slices.
  ShardSnapshot(Shard* shard, io::Engine* engine);
  ~ShardSnapshot() override;
  ShardSnapshot(const ShardSnapshot&) = delete;
  ShardSnapshot& operator=(const ShardSnapshot&) = delete;

  // Registers with the shard's change listeners (wanting nothing until a snapshot runs).
  // REQUIRES: shard thread, before the shard serves commands.
  void Attach();

  // Takes the cut: records this shard's non-empty databases and their sizes (appended to
  // `sizes`) and starts the walk, paced to the shard's load when `paced` (see Design).
  // REQUIRES: shard thread; the caller holds every shard (no other command runs anywhere
  // until every shard has taken the cut).
  void Start(uint64_t version, std::shared_ptr<RdbFileWriter> writer, RdbWriteOptions options,
             bool paced, std::vector<DbSize>* sizes);
  // Stops the snapshot running here, if any (the writer is aborted by the caller).
  void Abort();
  bool running() const { return writer_ != nullptr; }

  // Progress of the running (or last) snapshot, readable from any thread.
  uint64_t keys_written() const { return keys_written_.load(std::memory_order_relaxed); }

  // ChangeListener.
  void BeforeChange(unsigned db, PrimeIterator it, uint64_t hash) override;
  void BeforeFlush(unsigned db) override;

 private:
  struct DbCursor {
    DbSlice* slice;
    unsigned cut_db;  // the database number at the cut
    uint64_t cursor = 0;
    bool done = false;
  };

  DbCursor* CursorOf(unsigned db);
  // Serializes the entries of `bucket` not yet saved for this snapshot, and marks it saved.
  void SerializeBucket(DbCursor& dbc, PrimeIterator bucket);
  void WriteEntry(unsigned cut_db, PrimeIterator it);
  // Hands the buffered bytes to the writer when they reach a chunk (at an entry boundary).
  void MaybeFlushChunk();
  // Blocks the shard thread while the writer is more than kHardInFlight behind (see Design).
  void WaitForWriter();
  // Runs one slice of the walk and schedules the next, or finishes.
  void RunSlice(uint64_t generation);
  // Runs the next slice at the end of this loop turn, or after `wait_us` on a timer.
  void ScheduleSlice(uint64_t wait_us);
  // Returns the length of the next slice in microseconds (0: wait for credit), from what the
  // engine did since the last slice (see Design).
  double NextSliceUs();
  // Records the engine's counters as of now, the base of the next NextSliceUs().
  void NoteSeen();
  // Whether the machine's CPUs have time to spare (see Design).
  bool SpareCpu();
  void Finish();
  void Stop();

  Shard* shard_;
  io::Engine* engine_;
  unsigned slot_ = 0;  // our listener slot
  uint64_t version_ = 0;
  uint64_t generation_ = 0;  // a slice task of an earlier snapshot sees a different value
  std::shared_ptr<RdbFileWriter> writer_;
  RdbWriteOptions options_;
  // The access record each entry carries, from the policy at the cut (as Redis's
  // rdbSaveKeyValuePair): IDLE (seconds) under an LRU policy, FREQ under an LFU one, else none.
  enum class RecordOp : uint8_t { kNone, kIdle, kFreq };
  RecordOp record_op_ = RecordOp::kNone;
  int64_t lfu_decay_time_ = 1;
  std::vector<DbCursor> dbs_;
  size_t walk_db_ = 0;  // the database the walk is in
  // Pacing (see Design), as of the end of the last slice.
  bool paced_ = false;
  uint64_t seen_work_ = 0;        // the engine's work_done()
  uint64_t last_work_tick_ = 0;   // CycleClock when a slice last saw work_done() move
  uint64_t seen_idle_ticks_ = 0;  // the engine's idle_ticks()
  uint64_t seen_idle_stretches_ = 0;
  int64_t seen_cpu_ns_ = 0;       // the shard thread's CPU time (paced only)
  uint64_t forced_ticks_ = 0;     // CycleClock ticks writes spent saving entries since then
  double credit_us_ = 0;
  CpuPressure pressure_;
  // How the snapshot's time went (logged when the shard's part ends).
  struct PaceStats {
    double walk_us = 0;
    double forced_us = 0;  // of paced stretches
    double idle_credit_us = 0;
    uint64_t idle_slices = 0;
    uint64_t paced_slices = 0;
    uint64_t credit_waits = 0;
  } stats_;
  RdbSink sink_;
  int chunk_db_ = -1;  // the SELECTDB the current chunk is under, or -1 at a chunk start
  bool in_entry_ = false;
  bool flushed_in_entry_ = false;  // a piece of the current entry went out: we hold the floor
  std::atomic<uint64_t> keys_written_{0};
};

}  // namespace dashkv
