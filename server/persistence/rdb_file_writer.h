// RdbFileWriter: one RDB file being written by every shard at once. Shards hand it chunks of
// serialized entries from their own threads; its I/O thread writes them to a temporary file in
// the order they arrive, computes the file's CRC64 as written, and at the end writes the EOF
// opcode and the checksum, fsyncs, renames the file over the target and fsyncs the directory.
// Thread-safe: every public call may come from any thread; the file is touched only on the I/O
// engine's thread.
#pragma once

#include <absl/functional/any_invocable.h>
#include <absl/status/status.h>
#include <absl/status/statusor.h>

#include <atomic>
#include <cstdlib>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "server/persistence/rdb_sink.h"

namespace dashkv {

namespace io {
class Engine;
}  // namespace io

// Design
//   Order. The header (magic, AUX fields, per-database size hints) goes first; chunks that
//   arrive before it wait. A chunk may end inside an entry (a big value leaves in pieces): the
//   shard that sent it then keeps "the floor" until it sends a chunk that ends at an entry
//   boundary, and other shards' chunks wait in arrival order meanwhile. So every entry is
//   contiguous in the file, and each shard starts its chunks with a SELECTDB opcode (the loader
//   takes any number of them).
//   Crash safety. The data goes to `temp-<pid>-<n>.rdb` in the target directory; only a file
//   that was completely written and fsynced is renamed over the target, then the directory is
//   fsynced, so a crash at any moment leaves the previous snapshot intact. A failed or aborted
//   save removes its temporary file; RemoveStaleTempFiles() removes those of dead processes.
//   With incremental fsync the file is fsynced every kAutoSyncBytes, so the final fsync does
//   not stall for the whole file.
//   Backpressure. in_flight(sid) counts shard sid's bytes queued and not yet written; a shard
//   slows down above a limit of its own (ShardSnapshot). Per shard, not in total: the shard that
//   holds the floor has its chunks written at once, so waiting for its own bytes always ends;
//   waiting for a total that includes chunks queued behind its own floor would never end.
//   Direct I/O. The file is opened with O_DIRECT where the file system takes it: the bytes
//   gather in an aligned staging buffer (kDirectBufferBytes) that goes to the device in one
//   write, without the kernel copying it into the page cache first. That copy, and the
//   writeback of the dirty pages after it, cost about 1.8 CPU-seconds per GB on this project's
//   machine (ext4 on a virtio disk), against 0.08 with O_DIRECT: during a BGSAVE that CPU comes
//   out of the shards' and the clients' share. The last block is padded to the alignment and
//   the file truncated to its length before the final fsync. Where O_DIRECT is refused (at
//   open, or a write gets EINVAL) the writer goes on through the page cache, fsyncing every
//   kAutoSyncBytes with incremental fsync (direct writes leave no dirty pages to sync).
//   Spent buffers. A written chunk's buffers go back to the shard that filled them
//   (TakeSpare), emptied with their capacity kept: a shard filling a fresh 128 KiB string per
//   chunk grew it by doubling and faulted its pages in anew each time (the freed block went
//   back to the allocator from the writer's thread): two thirds of the shard thread's page
//   faults during a BGSAVE under a SET load. Each shard has kSparesPerShard slots, each filled
//   only by the writer's thread and emptied only by the shard's (a flag hands it over), so
//   neither side takes a lock.
class RdbFileWriter : public std::enable_shared_from_this<RdbFileWriter> {
 public:
  struct Options {
    std::string dir;
    std::string filename;
    unsigned num_shards = 1;
    bool checksum = true;           // rdbchecksum: false writes a checksum of 0
    bool incremental_fsync = true;  // rdb-save-incremental-fsync
    bool direct_io = true;          // O_DIRECT where the file system takes it (see Design)
  };
  // Runs once, on the I/O thread, with the outcome of the whole file.
  using DoneFn = absl::AnyInvocable<void(absl::Status) &&>;

  static constexpr uint64_t kAutoSyncBytes = 32 << 20;
  // Direct I/O: the staging buffer's size, and the alignment of its address, of every write's
  // length and of the file offsets (a multiple of every common logical block size).
  static constexpr size_t kDirectBufferBytes = size_t{1} << 20;
  static constexpr size_t kDirectAlign = 4096;

  // Creates the temporary file. Runs on the calling thread (one open(2)).
  static absl::StatusOr<std::shared_ptr<RdbFileWriter>> Create(io::Engine* io, Options options,
                                                               DoneFn done);
  ~RdbFileWriter();

  // Queues the file header; shard chunks are written after it.
  void WriteHeader(std::string bytes);
  // Queues a chunk of shard `sid`. `lzf`: strings in it still to be encoded (RdbSink), which
  // this writer's thread compresses before writing (RdbLzf::kProbe). `entry_end`: the chunk
  // ends at an entry boundary.
  void Append(unsigned sid, std::string chunk, std::vector<LzfSpan> lzf, bool entry_end);
  // Tells that shard `sid` sent its last chunk. When every shard has, the file is finished.
  void ShardDone(unsigned sid);
  // Stops the save: further chunks are dropped, the temporary file is removed, and done() gets
  // `why`.
  void Abort(absl::Status why);

  // Moves a spent chunk buffer of shard `sid` (see Design) into `bytes` and `lzf`, emptied,
  // when the writer has one; returns whether it did. Shard `sid`'s thread only.
  bool TakeSpare(unsigned sid, std::string* bytes, std::vector<LzfSpan>* lzf);

  // Bytes of shard `sid` queued and not yet written; in_flight() sums every shard's.
  size_t in_flight(unsigned sid) const {
    return in_flight_[sid].load(std::memory_order_relaxed);
  }
  size_t in_flight() const;
  // Whether the save failed or was aborted (the shards stop early).
  bool failed() const { return failed_.load(std::memory_order_relaxed); }
  // Bytes written to the file so far.
  uint64_t bytes_written() const { return written_.load(std::memory_order_relaxed); }
  const std::string& temp_path() const { return temp_path_; }
  // Whether the file is being written with O_DIRECT (see Design).
  bool direct() const { return direct_.load(std::memory_order_relaxed); }

  // Removes `temp-<pid>-<n>.rdb` files in `dir` whose process is gone. Returns how many.
  static unsigned RemoveStaleTempFiles(const std::string& dir);

 private:
  struct Chunk {
    unsigned sid;
    bool entry_end;
    std::string bytes;
    std::vector<LzfSpan> lzf;
  };
  RdbFileWriter(io::Engine* io, Options options, DoneFn done, int fd, bool direct,
                std::string temp_path);

  // On the I/O thread.
  void OnHeader(std::string bytes);
  void OnChunk(Chunk chunk);
  void OnShardDone();
  void OnAbort(absl::Status why);
  // Writes the waiting chunks that may go now (see Design: the floor).
  void Drain();
  void WriteBytes(std::string_view bytes);
  // write(2)s all of `bytes` at the file's position; false (after Fail) on an error.
  bool WriteAll(const char* p, size_t n);
  // Direct I/O: writes the staging buffer, padded to kDirectAlign, and empties it.
  void FlushStaged();
  // Leaves direct I/O (`why`, for the log): the file takes buffered writes from its current
  // position on.
  void StopDirect(std::string_view why);
  void Written(unsigned sid, size_t bytes) {
    in_flight_[sid].fetch_sub(bytes, std::memory_order_relaxed);
  }
  // Keeps a written chunk's buffers for shard `sid` (TakeSpare), unless it has enough.
  void KeepSpare(unsigned sid, std::string bytes, std::vector<LzfSpan> lzf);
  void MaybeFinish();
  absl::Status Finish();
  void Fail(absl::Status why);

  io::Engine* io_;
  Options options_;
  DoneFn done_;
  int fd_;
  std::string temp_path_;

  std::unique_ptr<std::atomic<size_t>[]> in_flight_;  // by shard; the header's at num_shards
  // Spent buffers (Design): kSparesPerShard slots per shard, shard sid's from
  // sid * kSparesPerShard; none kept over kMaxSpareBytes.
  static constexpr size_t kSparesPerShard = 2;
  static constexpr size_t kMaxSpareBytes = size_t{1} << 20;
  struct Spare {
    std::atomic<bool> full{false};  // set by the writer's thread, cleared by the shard's
    std::string bytes;
    std::vector<LzfSpan> lzf;
  };
  std::unique_ptr<Spare[]> spares_;
  std::atomic<bool> failed_{false};
  std::atomic<bool> direct_;
  std::atomic<uint64_t> written_{0};

  // I/O thread only.
  bool header_written_ = false;
  int floor_ = -1;  // the shard whose entry is half written, or -1
  std::deque<Chunk> waiting_;
  std::string encoded_;  // a chunk with its deferred strings encoded (reused)
  unsigned shards_done_ = 0;
  uint64_t crc_ = 0;
  uint64_t unsynced_ = 0;
  struct FreeAligned {
    void operator()(char* p) const { std::free(p); }
  };
  std::unique_ptr<char, FreeAligned> staged_;  // direct I/O's buffer (kDirectBufferBytes)
  size_t staged_len_ = 0;
  uint64_t file_len_ = 0;  // bytes of the file's content so far, staged ones included
  bool finished_ = false;  // done_ has run
  absl::Status status_;
};

}  // namespace dashkv
