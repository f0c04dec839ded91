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
//   and defers itself to the end of the engine's next loop turn (io::Engine::Defer), so the
//   inbox's hops and the ready sockets run between slices. A slice lasts kSliceUs when the
//   engine is otherwise idle, and about a ninth of the time the engine spent on other work
//   since the previous slice when it is busy: under load the walk takes about a tenth of the
//   engine and the snapshot takes longer, instead of halving the throughput. While
//   the writer has more than kSoftInFlight bytes of this shard queued, the walk waits (a timer)
//   instead. A write's own bucket serialization cannot wait; above kHardInFlight it blocks the
//   shard thread until the writer has taken this shard's bytes (bounded by the disk's speed),
//   so memory stays bounded by the buffers, never by the dataset.
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
  static constexpr uint64_t kSliceUs = 50;        // a slice of an otherwise idle engine
  static constexpr double kMinSliceUs = 5;         // the shortest slice of a busy one
  static constexpr double kIdleGapUs = 20;         // a gap between slices longer than this: busy

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
  // `sizes`) and starts the walk. REQUIRES: shard thread; the caller
  // holds every shard (no other command runs anywhere until every shard has taken the cut).
  void Start(uint64_t version, std::shared_ptr<RdbFileWriter> writer, RdbWriteOptions options,
             std::vector<DbSize>* sizes);
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
  void ScheduleSlice(bool wait);
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
  uint64_t last_slice_end_ = 0;  // CycleClock ticks; 0 before the first slice
  RdbSink sink_;
  int chunk_db_ = -1;  // the SELECTDB the current chunk is under, or -1 at a chunk start
  bool in_entry_ = false;
  bool flushed_in_entry_ = false;  // a piece of the current entry went out: we hold the floor
  std::atomic<uint64_t> keys_written_{0};
};

}  // namespace dashkv
