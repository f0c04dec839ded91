#include "server/persistence/rdb_file_writer.h"

#include <absl/strings/numbers.h>
#include "core/str_util.h"
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "core/base/logging.h"
#include "core/crc64.h"
#include "io/engine.h"

namespace dashkv {

namespace {

constexpr char kEofOpcode = char(0xFF);

absl::Status ErrnoStatus(std::string_view what, const std::string& path) {
  return absl::InternalError(StrCat(what, " ", path, ": ", std::strerror(errno)));
}

// Parses "temp-<pid>-<n>.rdb"; returns the pid or 0.
pid_t TempFilePid(std::string_view name) {
  constexpr std::string_view kPrefix = "temp-", kSuffix = ".rdb";
  if (!name.starts_with(kPrefix) || !name.ends_with(kSuffix)) return 0;
  name.remove_prefix(kPrefix.size());
  name.remove_suffix(kSuffix.size());
  size_t dash = name.find('-');
  if (dash == std::string_view::npos) return 0;
  int64_t pid, n;
  if (!absl::SimpleAtoi(std::string(name.substr(0, dash)), &pid) ||
      !absl::SimpleAtoi(std::string(name.substr(dash + 1)), &n) || pid <= 0) {
    return 0;
  }
  return pid_t(pid);
}

}  // namespace

absl::StatusOr<std::shared_ptr<RdbFileWriter>> RdbFileWriter::Create(io::Engine* io,
                                                                    Options options,
                                                                    DoneFn done) {
  static std::atomic<uint64_t> counter{0};
  std::string temp = StrCat(options.dir, "/temp-", getpid(), "-", counter.fetch_add(1),
                                  ".rdb");
  constexpr int kFlags = O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC;
  bool direct = options.direct_io;
  int fd = direct ? open(temp.c_str(), kFlags | O_DIRECT, 0644) : -1;
  if (fd < 0) {  // O_DIRECT refused (or not asked for): through the page cache
    direct = false;
    fd = open(temp.c_str(), kFlags, 0644);
  }
  if (fd < 0) return ErrnoStatus("Failed opening the temp RDB file", temp);
  return std::shared_ptr<RdbFileWriter>(
      new RdbFileWriter(io, std::move(options), std::move(done), fd, direct, std::move(temp)));
}

RdbFileWriter::RdbFileWriter(io::Engine* io, Options options, DoneFn done, int fd, bool direct,
                             std::string temp_path)
    : io_(io), options_(std::move(options)), done_(std::move(done)), fd_(fd),
      temp_path_(std::move(temp_path)),
      in_flight_(new std::atomic<size_t>[options_.num_shards + 1]),
      spares_(new Spare[options_.num_shards * kSparesPerShard]) {
  for (unsigned i = 0; i <= options_.num_shards; ++i) in_flight_[i].store(0);
  direct_.store(direct, std::memory_order_relaxed);
  if (direct) {
    staged_.reset(static_cast<char*>(std::aligned_alloc(kDirectAlign, kDirectBufferBytes)));
    if (staged_ == nullptr) StopDirect("no memory for its aligned buffer");
  }
}

size_t RdbFileWriter::in_flight() const {
  size_t sum = 0;
  for (unsigned i = 0; i <= options_.num_shards; ++i) sum += in_flight(i);
  return sum;
}

RdbFileWriter::~RdbFileWriter() {
  if (fd_ >= 0) close(fd_);
}

void RdbFileWriter::WriteHeader(std::string bytes) {
  in_flight_[options_.num_shards].fetch_add(bytes.size(), std::memory_order_relaxed);
  io_->Post([self = shared_from_this(), b = std::move(bytes)]() mutable {
    self->OnHeader(std::move(b));
  });
}

void RdbFileWriter::Append(unsigned sid, std::string chunk, std::vector<LzfSpan> lzf,
                           bool entry_end) {
  in_flight_[sid].fetch_add(chunk.size(), std::memory_order_relaxed);
  io_->Post([self = shared_from_this(),
             c = Chunk{sid, entry_end, std::move(chunk), std::move(lzf)}]() mutable {
    self->OnChunk(std::move(c));
  });
}

void RdbFileWriter::ShardDone(unsigned /*sid*/) {
  io_->Post([self = shared_from_this()] { self->OnShardDone(); });
}

void RdbFileWriter::Abort(absl::Status why) {
  failed_.store(true, std::memory_order_relaxed);
  io_->Post([self = shared_from_this(), why = std::move(why)]() mutable {
    self->OnAbort(std::move(why));
  });
}

void RdbFileWriter::OnHeader(std::string bytes) {
  WriteBytes(bytes);
  Written(options_.num_shards, bytes.size());
  header_written_ = true;
  Drain();
  MaybeFinish();
}

void RdbFileWriter::OnChunk(Chunk chunk) {
  if (finished_) {  // aborted: late chunks are dropped
    Written(chunk.sid, chunk.bytes.size());
    return;
  }
  waiting_.push_back(std::move(chunk));
  if (header_written_) Drain();
}

void RdbFileWriter::Drain() {
  // Writes the oldest waiting chunk while the floor is free, else the oldest chunk of the shard
  // holding it; each shard's chunks stay in their order.
  while (!waiting_.empty()) {
    auto it = waiting_.begin();
    if (floor_ >= 0) {
      while (it != waiting_.end() && it->sid != unsigned(floor_)) ++it;
      if (it == waiting_.end()) return;
    }
    Chunk chunk = std::move(*it);
    waiting_.erase(it);
    if (chunk.lzf.empty()) {
      WriteBytes(chunk.bytes);
    } else {
      encoded_.clear();
      // Snapshot files probe (RdbLzf::kProbe): random values cost a short attempt.
      EncodeLzfSpans(chunk.bytes, chunk.lzf, RdbLzf::kProbe, &encoded_);
      WriteBytes(encoded_);
    }
    Written(chunk.sid, chunk.bytes.size());
    floor_ = chunk.entry_end ? -1 : int(chunk.sid);
    KeepSpare(chunk.sid, std::move(chunk.bytes), std::move(chunk.lzf));
  }
}

void RdbFileWriter::KeepSpare(unsigned sid, std::string bytes, std::vector<LzfSpan> lzf) {
  if (bytes.capacity() > kMaxSpareBytes) return;  // a big value's piece: not kept
  for (size_t i = 0; i < kSparesPerShard; ++i) {
    Spare& s = spares_[sid * kSparesPerShard + i];
    if (s.full.load(std::memory_order_acquire)) continue;
    bytes.clear();
    lzf.clear();
    s.bytes = std::move(bytes);
    s.lzf = std::move(lzf);
    s.full.store(true, std::memory_order_release);
    return;
  }
}

bool RdbFileWriter::TakeSpare(unsigned sid, std::string* bytes, std::vector<LzfSpan>* lzf) {
  for (size_t i = 0; i < kSparesPerShard; ++i) {
    Spare& s = spares_[sid * kSparesPerShard + i];
    if (!s.full.load(std::memory_order_acquire)) continue;
    *bytes = std::move(s.bytes);
    *lzf = std::move(s.lzf);
    s.full.store(false, std::memory_order_release);
    return true;
  }
  return false;
}

void RdbFileWriter::WriteBytes(std::string_view bytes) {
  if (!status_.ok() || bytes.empty()) return;
  // Blocking writes on the I/O engine's own thread, never on a shard's.
  size_t off = 0;
  while (off < bytes.size() && direct()) {
    size_t n = std::min(bytes.size() - off, kDirectBufferBytes - staged_len_);
    std::memcpy(staged_.get() + staged_len_, bytes.data() + off, n);
    staged_len_ += n;
    off += n;
    if (staged_len_ == kDirectBufferBytes) FlushStaged();
    if (!status_.ok()) return;
  }
  if (off < bytes.size()) {
    if (!WriteAll(bytes.data() + off, bytes.size() - off)) return;
    unsynced_ += bytes.size() - off;
  }
  if (options_.checksum) crc_ = Crc64(crc_, bytes);
  file_len_ += bytes.size();
  written_.fetch_add(bytes.size(), std::memory_order_relaxed);
  // Direct writes leave no dirty pages behind, so only buffered ones need the periodic sync.
  if (options_.incremental_fsync && unsynced_ >= kAutoSyncBytes) {
    unsynced_ = 0;
    if (fdatasync(fd_) != 0) Fail(ErrnoStatus("fsync error saving DB on disk:", temp_path_));
  }
}

bool RdbFileWriter::WriteAll(const char* p, size_t n) {
  while (n > 0) {
    ssize_t w = write(fd_, p, n);
    if (w <= 0) {
      if (w < 0 && errno == EINTR) continue;
      if (w == 0) errno = ENOSPC;  // no progress: as a full disk
      Fail(ErrnoStatus("Write error saving DB on disk:", temp_path_));
      return false;
    }
    p += w;
    n -= size_t(w);
  }
  return true;
}

void RdbFileWriter::FlushStaged() {
  if (staged_len_ == 0) return;
  // Only the last flush (from Finish) may end inside a block; Finish cuts its padding off.
  size_t len = (staged_len_ + kDirectAlign - 1) / kDirectAlign * kDirectAlign;
  std::memset(staged_.get() + staged_len_, 0, len - staged_len_);
  size_t done = 0;
  while (done < len) {
    ssize_t w = write(fd_, staged_.get() + done, len - done);
    if (w > 0) {
      done += size_t(w);
      continue;
    }
    if (w < 0 && errno == EINTR) continue;
    if (w == 0) errno = ENOSPC;  // no progress: as a full disk
    if (errno == EINVAL && done == 0) {
      // The file system took O_DIRECT at open but refuses these writes: buffered from here.
      StopDirect("refuses O_DIRECT writes");
      if (status_.ok()) WriteAll(staged_.get(), staged_len_);
      unsynced_ += staged_len_;
      staged_len_ = 0;
      return;
    }
    Fail(ErrnoStatus("Write error saving DB on disk:", temp_path_));
    return;
  }
  staged_len_ = 0;
}

void RdbFileWriter::StopDirect(std::string_view why) {
  int fl = fcntl(fd_, F_GETFL);
  if (fl < 0 || fcntl(fd_, F_SETFL, fl & ~O_DIRECT) != 0) {
    return Fail(ErrnoStatus("Failed leaving O_DIRECT on", temp_path_));
  }
  direct_.store(false, std::memory_order_relaxed);
  LOG(INFO) << "snapshot: " << temp_path_ << ": " << why << ", writing it buffered";
}

void RdbFileWriter::OnShardDone() {
  ++shards_done_;
  MaybeFinish();
}

void RdbFileWriter::MaybeFinish() {
  if (finished_ || !header_written_ || shards_done_ < options_.num_shards) return;
  if (!waiting_.empty() && status_.ok()) {
    // Every shard is done, so nothing can release a held floor any more: a bug.
    LOG(ERROR) << "snapshot: " << waiting_.size() << " chunks left behind the floor";
    Fail(absl::InternalError("snapshot chunks out of order"));
  }
  finished_ = true;
  absl::Status st = status_.ok() ? Finish() : status_;
  if (!st.ok()) unlink(temp_path_.c_str());
  std::move(done_)(st);
}

absl::Status RdbFileWriter::Finish() {
  std::string trailer(1, kEofOpcode);
  WriteBytes(trailer);  // the checksum covers the EOF opcode
  uint64_t crc = options_.checksum ? crc_ : 0;
  std::string crc_bytes(8, '\0');
  for (int i = 0; i < 8; ++i) crc_bytes[i] = char((crc >> (8 * i)) & 0xFF);
  WriteBytes(crc_bytes);
  if (direct()) FlushStaged();
  if (!status_.ok()) return status_;
  if (direct() && ftruncate(fd_, off_t(file_len_)) != 0) {
    return ErrnoStatus("Failed truncating the temp RDB file", temp_path_);
  }
  if (fsync(fd_) != 0) return ErrnoStatus("fsync error saving DB on disk:", temp_path_);
  if (close(fd_) != 0) {
    fd_ = -1;
    return ErrnoStatus("close error saving DB on disk:", temp_path_);
  }
  fd_ = -1;
  std::string target = StrCat(options_.dir, "/", options_.filename);
  if (rename(temp_path_.c_str(), target.c_str()) != 0) {
    return absl::InternalError(StrCat("Error moving temp DB file ", temp_path_,
                                            " on the final destination ", target, ": ",
                                            std::strerror(errno)));
  }
  int dir_fd = open(options_.dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd < 0) return ErrnoStatus("Failed opening the directory", options_.dir);
  int rc = fsync(dir_fd);
  close(dir_fd);
  if (rc != 0) return ErrnoStatus("Failed to fsync the directory", options_.dir);
  return absl::OkStatus();
}

void RdbFileWriter::OnAbort(absl::Status why) {
  if (status_.ok()) status_ = std::move(why);
  for (const Chunk& c : waiting_) Written(c.sid, c.bytes.size());
  waiting_.clear();
  if (finished_) return;
  finished_ = true;
  unlink(temp_path_.c_str());
  std::move(done_)(status_);
}

void RdbFileWriter::Fail(absl::Status why) {
  if (status_.ok()) status_ = std::move(why);
  failed_.store(true, std::memory_order_relaxed);
}

unsigned RdbFileWriter::RemoveStaleTempFiles(const std::string& dir) {
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return 0;
  unsigned removed = 0;
  while (dirent* e = readdir(d)) {
    pid_t pid = TempFilePid(e->d_name);
    if (pid == 0) continue;
    if (pid != getpid() && (kill(pid, 0) == 0 || errno != ESRCH)) continue;  // alive
    std::string path = StrCat(dir, "/", e->d_name);
    if (unlink(path.c_str()) == 0) {
      LOG(INFO) << "Removed stale temporary snapshot file " << path;
      ++removed;
    }
  }
  closedir(d);
  return removed;
}

}  // namespace dashkv
