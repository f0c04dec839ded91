#include "server/persistence/shard_snapshot.h"

#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <algorithm>
#include <chrono>

#include "core/access_record.h"
#include "core/base/clock.h"
#include "core/base/logging.h"
#include "core/rdb_encoding.h"
#include "io/engine.h"
#include "server/cycle_clock.h"
#include "server/storage/shard.h"

namespace dashkv {

namespace {

constexpr char kOpSelectDb = char(0xFE);
constexpr char kOpExpireMs = char(0xFC);
constexpr char kOpIdle = char(0xF8);
constexpr char kOpFreq = char(0xF9);

}  // namespace

ShardSnapshot::ShardSnapshot(Shard* shard, io::Engine* engine)
    : shard_(shard), engine_(engine), sink_(kChunkBytes, [this](std::string& bytes) {
        // A piece of an entry, or the chunk MaybeFlushChunk closes at an entry boundary.
        writer_->Append(shard_->index(), std::move(bytes), !in_entry_);
        if (in_entry_) {
          flushed_in_entry_ = true;
        } else {
          chunk_db_ = -1;
        }
        WaitForWriter();
      }) {}

ShardSnapshot::~ShardSnapshot() = default;

void ShardSnapshot::Attach() { slot_ = shard_->changes().Add(this); }

void ShardSnapshot::Start(uint64_t version, std::shared_ptr<RdbFileWriter> writer,
                          RdbWriteOptions options, std::vector<DbSize>* sizes) {
  DCHECK(shard_->IsMyThread());
  if (running()) Stop();  // a failed save whose walk has not noticed yet
  version_ = version;
  writer_ = std::move(writer);
  options_ = options;
  ++generation_;
  keys_written_.store(0, std::memory_order_relaxed);
  walk_db_ = 0;
  chunk_db_ = -1;
  last_slice_end_ = 0;
  dbs_.clear();
  for (unsigned db = 0; db < shard_->num_dbs(); ++db) {
    DbSlice* slice = shard_->db_if_exists(db);
    if (slice == nullptr || slice->size() == 0) continue;
    dbs_.push_back(DbCursor{slice, db});
    sizes->push_back(DbSize{db, slice->size(), slice->expires()});
  }
  record_op_ = RecordOp::kNone;
  if (!dbs_.empty()) {
    const EvictionSettings& eviction = dbs_.front().slice->eviction();  // one for all slices
    const MaxmemoryPolicy policy = eviction.policy.load(std::memory_order_relaxed);
    if (IsLruPolicy(policy)) record_op_ = RecordOp::kIdle;
    if (IsLfuPolicy(policy)) record_op_ = RecordOp::kFreq;
    lfu_decay_time_ = eviction.lfu_decay_time.load(std::memory_order_relaxed);
  }
  shard_->changes().SetInterest(slot_, kWantBefore);
  ScheduleSlice(false);
}

void ShardSnapshot::Abort() {
  if (running()) Stop();
}

void ShardSnapshot::Stop() {
  shard_->changes().SetInterest(slot_, 0);
  writer_.reset();
  dbs_.clear();
  ++generation_;
  chunk_db_ = -1;
  in_entry_ = false;
  flushed_in_entry_ = false;
  sink_.buffer()->clear();
}

ShardSnapshot::DbCursor* ShardSnapshot::CursorOf(unsigned db) {
  DbSlice* slice = shard_->db_if_exists(db);
  for (DbCursor& dbc : dbs_) {
    if (dbc.slice == slice) return dbc.done ? nullptr : &dbc;
  }
  return nullptr;  // empty at the cut: nothing of it belongs to the snapshot
}

void ShardSnapshot::BeforeChange(unsigned db, PrimeIterator it, uint64_t hash) {
  if (!running()) return;
  DbCursor* dbc = CursorOf(db);
  if (dbc == nullptr) return;
  PrimeTable& table = dbc->slice->table();
  auto serialize = [&](PrimeIterator bucket) { SerializeBucket(*dbc, bucket); };
  if (it.is_done()) {
    table.CVCUponInsertHash(version_, hash, serialize);
  } else {
    table.CVCUponErase(version_, it, serialize);
  }
  MaybeFlushChunk();
}

void ShardSnapshot::BeforeFlush(unsigned db) {
  if (!running()) return;
  DbCursor* dbc = CursorOf(db);
  if (dbc == nullptr) return;
  // The flush frees the table: write what the walk has not reached yet first.
  PrimeTable& table = dbc->slice->table();
  do {
    dbc->cursor = table.TraverseBuckets(dbc->cursor, [&](PrimeIterator b) {
      SerializeBucket(*dbc, b);
    });
    MaybeFlushChunk();
  } while (dbc->cursor != 0);
  dbc->done = true;
}

void ShardSnapshot::SerializeBucket(DbCursor& dbc, PrimeIterator bucket) {
  PrimeTable& table = dbc.slice->table();
  if (table.GetVersion(bucket) >= version_) return;
  // The entries' keys and values lie scattered over the heap, and reading them is most of the
  // cost of a cold bucket: ask for all of them first, so their cache misses overlap instead of
  // following one another.
  for (PrimeIterator it = bucket; !it.is_done(); ++it) {
    it->first.PrefetchData();
    it->second.PrefetchData();
  }
  for (PrimeIterator it = bucket; !it.is_done(); ++it) WriteEntry(dbc.cut_db, it);
  table.SetVersion(bucket, version_);
}

void ShardSnapshot::WriteEntry(unsigned cut_db, PrimeIterator it) {
  std::string* buf = sink_.buffer();
  if (chunk_db_ != int(cut_db)) {
    buf->push_back(kOpSelectDb);
    AppendRdbLen(buf, cut_db);
    chunk_db_ = int(cut_db);
  }
  const CompactObj& key = it->first;
  if (key.HasExpire()) {
    buf->push_back(kOpExpireMs);
    const uint64_t ms = uint64_t(key.ExpireTimeMs());
    for (int i = 0; i < 8; ++i) buf->push_back(char((ms >> (8 * i)) & 0xFF));
  }
  const CompactObj& value = it->second;
  if (record_op_ != RecordOp::kNone) [[unlikely]] {
    const int64_t now_ms = NowMs();
    if (record_op_ == RecordOp::kIdle) {
      buf->push_back(kOpIdle);
      const uint32_t record = GetRecord(key, value, AccessMode::kLru, now_ms);
      AppendRdbLen(buf, LruIdleMs(record, now_ms) / 1000);
    } else {
      buf->push_back(kOpFreq);
      const uint32_t record = GetRecord(key, value, AccessMode::kLfu, now_ms);
      buf->push_back(char(LfuDecayed(record, now_ms, lfu_decay_time_)));
    }
  }
  buf->push_back(char(RdbTypeOf(value)));
  std::string scratch;
  AppendRdbString(buf, key.GetString(&scratch), options_.compress);
  in_entry_ = true;
  WriteRdbValueBody(value, options_, sink_);
  in_entry_ = false;
  keys_written_.fetch_add(1, std::memory_order_relaxed);
  if (flushed_in_entry_) {
    // The entry's first pieces are out and we hold the writer's floor: the rest goes now, even
    // if empty, so the other shards' chunks are not held behind it.
    flushed_in_entry_ = false;
    writer_->Append(shard_->index(), std::move(*buf), /*entry_end=*/true);
    buf->clear();
    chunk_db_ = -1;
  }
}

void ShardSnapshot::MaybeFlushChunk() {
  if (sink_.buffer()->size() >= kChunkBytes) sink_.Flush();
}

void ShardSnapshot::WaitForWriter() {
  // Blocks the shard thread (see Design): only while the writer is kHardInFlight bytes of this
  // shard behind, which happens when writes dirty buckets faster than the disk takes them, or
  // while a value larger than that is written. The wait ends as the disk takes this shard's
  // bytes (never behind another shard's floor: see Design), or at a failure.
  const unsigned sid = shard_->index();
  while (writer_ && writer_->in_flight(sid) > kHardInFlight && !writer_->failed()) usleep(200);
}

void ShardSnapshot::ScheduleSlice(bool wait) {
  const uint64_t gen = generation_;
  if (!wait) {
    engine_->Defer([this, gen] { RunSlice(gen); });
    return;
  }
  auto timer = std::make_shared<boost::asio::steady_timer>(engine_->context(),
                                                           std::chrono::milliseconds(1));
  timer->async_wait([this, gen, timer](const boost::system::error_code&) { RunSlice(gen); });
}

void ShardSnapshot::RunSlice(uint64_t generation) {
  if (generation != generation_ || !running()) return;
  if (writer_->failed()) {
    writer_->ShardDone(shard_->index());  // the writer reports the failure when all are done
    return Stop();
  }
  if (writer_->in_flight(shard_->index()) > kSoftInFlight) return ScheduleSlice(true);
  // The slice's length: kSliceUs when the engine had nothing else to do since the last slice;
  // while it serves commands, a ninth of the time they took (at least kMinSliceUs), so the
  // walk takes about a tenth of a busy engine.
  const uint64_t now = CycleClock::Now();
  const double ticks_per_us = CycleClock::TicksPerUsec();
  const double busy_us = last_slice_end_ == 0 ? 0 : double(now - last_slice_end_) / ticks_per_us;
  double slice_us = kSliceUs;
  if (busy_us > kIdleGapUs) slice_us = std::clamp(busy_us / 9, kMinSliceUs, double(kSliceUs));
  const uint64_t deadline = now + uint64_t(slice_us * ticks_per_us);
  auto note_run_time = [&] {  // for the latency monitor (ShardStats::slowest_snapshot_slice_us)
    uint64_t& slowest = shard_->stats().slowest_snapshot_slice_us;
    slowest = std::max(slowest, uint64_t(double(CycleClock::Now() - now) / ticks_per_us));
  };
  do {
    if (walk_db_ == dbs_.size()) {
      note_run_time();
      return Finish();
    }
    DbCursor& dbc = dbs_[walk_db_];
    if (dbc.done) {
      ++walk_db_;
      continue;
    }
    dbc.cursor = dbc.slice->table().TraverseBuckets(dbc.cursor, [&](PrimeIterator b) {
      SerializeBucket(dbc, b);
    });
    if (dbc.cursor == 0) dbc.done = true;
    MaybeFlushChunk();
  } while (CycleClock::Now() < deadline);
  note_run_time();
  last_slice_end_ = CycleClock::Now();
  ScheduleSlice(false);
}

void ShardSnapshot::Finish() {
  sink_.Flush();
  writer_->ShardDone(shard_->index());
  Stop();
}

}  // namespace dashkv
