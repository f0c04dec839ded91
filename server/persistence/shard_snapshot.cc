#include "server/persistence/shard_snapshot.h"

#include <time.h>
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

// The calling thread's CPU time in nanoseconds.
int64_t ThreadCpuNs() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return int64_t(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

}  // namespace

ShardSnapshot::ShardSnapshot(Shard* shard, io::Engine* engine)
    : shard_(shard),
      engine_(engine),
      sink_(kChunkBytes, [this](std::string& bytes, std::vector<LzfSpan>& spans) {
        // A piece of an entry, or the chunk MaybeFlushChunk closes at an entry boundary.
        writer_->Append(shard_->index(), std::move(bytes), std::move(spans), !in_entry_);
        bytes.clear();
        spans.clear();
        writer_->TakeSpare(shard_->index(), &bytes, &spans);
        if (in_entry_) {
          flushed_in_entry_ = true;
        } else {
          chunk_db_ = -1;
        }
        WaitForWriter();
      }) {
  // Strings the shard compresses itself probe as the writer's do (RdbLzf::kProbe).
  sink_.set_lzf(RdbLzf::kProbe);
}

ShardSnapshot::~ShardSnapshot() = default;

void ShardSnapshot::Attach() { slot_ = shard_->changes().Add(this); }

void ShardSnapshot::Start(uint64_t version, std::shared_ptr<RdbFileWriter> writer,
                          RdbWriteOptions options, bool paced, std::vector<DbSize>* sizes) {
  DCHECK(shard_->IsMyThread());
  if (running()) Stop();  // a failed save whose walk has not noticed yet
  version_ = version;
  writer_ = std::move(writer);
  options_ = options;
  ++generation_;
  keys_written_.store(0, std::memory_order_relaxed);
  walk_db_ = 0;
  chunk_db_ = -1;
  paced_ = paced;
  stats_ = {};
  NoteSeen();
  last_work_tick_ = CycleClock::Now();
  credit_us_ = 0;
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
  ScheduleSlice(0);
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
  sink_.Clear();  // deferred strings too: the next snapshot's offsets start at 0
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
  const uint64_t start = CycleClock::Now();
  sink_.set_defer_lzf(writer_->in_flight(shard_->index()) <= kSoftInFlight);
  if (it.is_done()) {
    table.CVCEntryUponInsert(version_, hash,
                             [&](PrimeIterator bucket) { SerializeBucket(*dbc, bucket); });
  } else {
    table.CVCEntryUponChange(version_, it, [&](PrimeIterator entry) {
      entry->first.PrefetchData();
      entry->second.PrefetchData();
      WriteEntry(dbc->cut_db, entry);
    });
  }
  MaybeFlushChunk();
  forced_ticks_ += CycleClock::Now() - start;
}

void ShardSnapshot::BeforeFlush(unsigned db) {
  if (!running()) return;
  DbCursor* dbc = CursorOf(db);
  if (dbc == nullptr) return;
  // The flush frees the table: write what the walk has not reached yet first.
  PrimeTable& table = dbc->slice->table();
  sink_.set_defer_lzf(false);
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
  const uint16_t saved = table.SavedSlots(bucket, version_);
  if (saved == 0xffff) return;
  auto pending = [&](const PrimeIterator& it) { return ((saved >> it.slot_id()) & 1) == 0; };
  // The entries' keys and values lie scattered over the heap, and reading them is most of the
  // cost of a cold bucket: ask for all of them first, so their cache misses overlap instead of
  // following one another.
  for (PrimeIterator it = bucket; !it.is_done(); ++it) {
    if (!pending(it)) continue;
    it->first.PrefetchData();
    it->second.PrefetchData();
  }
  for (PrimeIterator it = bucket; !it.is_done(); ++it) {
    if (pending(it)) WriteEntry(dbc.cut_db, it);
  }
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
  sink_.AppendString(key.GetString(&scratch), options_.compress);
  in_entry_ = true;
  WriteRdbValueBody(value, options_, sink_);
  in_entry_ = false;
  keys_written_.fetch_add(1, std::memory_order_relaxed);
  if (flushed_in_entry_) {
    // The entry's first pieces are out and we hold the writer's floor: the rest goes now, even
    // if empty, so the other shards' chunks are not held behind it.
    flushed_in_entry_ = false;
    writer_->Append(shard_->index(), std::move(*buf), std::move(*sink_.spans()),
                    /*entry_end=*/true);
    buf->clear();
    sink_.spans()->clear();
    writer_->TakeSpare(shard_->index(), buf, sink_.spans());
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

void ShardSnapshot::ScheduleSlice(uint64_t wait_us) {
  const uint64_t gen = generation_;
  if (wait_us == 0) {
    engine_->Defer([this, gen] { RunSlice(gen); });
    return;
  }
  auto timer = std::make_shared<boost::asio::steady_timer>(engine_->context(),
                                                           std::chrono::microseconds(wait_us));
  timer->async_wait([this, gen, timer](const boost::system::error_code&) {
    if (gen == generation_) ++seen_work_;  // this handler is the walk's, not the engine's work
    RunSlice(gen);
  });
}

double ShardSnapshot::NextSliceUs() {
  const uint64_t work = engine_->work_done();
  const uint64_t now = CycleClock::Now();
  if (work != seen_work_) last_work_tick_ = now;
  if (!paced_ || double(now - last_work_tick_) >= kLongIdleUs * CycleClock::TicksPerUsec()) {
    credit_us_ = 0;  // credit is for busy stretches; an idle engine walks freely
    return kSliceUs;
  }
  // Credit earned since the last slice (see Design): kBusyShare of the thread's CPU time,
  // less what writes spent saving entries, at least kFloorShare; plus the engine's idle time
  // if it idled in long stretches.
  double idle_us = double(engine_->idle_ticks() - seen_idle_ticks_) / CycleClock::TicksPerUsec();
  const uint64_t stretches = engine_->idle_stretches() - seen_idle_stretches_;
  const bool long_idle = stretches != 0 && idle_us >= kLongIdleUs * double(stretches);
  if (!long_idle && !SpareCpu()) idle_us = 0;
  const double cpu_us = double(ThreadCpuNs() - seen_cpu_ns_) / 1000;
  const double forced_us = double(forced_ticks_) / CycleClock::TicksPerUsec();
  const double other_us = std::max(0.0, cpu_us - forced_us);
  const double earned_us = other_us * kBusyShare / (1 - kBusyShare) - forced_us;
  credit_us_ += idle_us + std::max(earned_us, other_us * kFloorShare);
  stats_.idle_credit_us += idle_us;
  stats_.forced_us += forced_us;
  credit_us_ = std::clamp(credit_us_, -kMaxCreditUs, kMaxCreditUs);
  NoteSeen();
  return credit_us_ >= kMinCreditUs ? std::min(credit_us_, kSliceUs) : 0;
}

bool ShardSnapshot::SpareCpu() {
  const std::optional<double> waiting = pressure_.WaitingShare(NowMs());
  return waiting && *waiting < kSparePressure;
}

void ShardSnapshot::NoteSeen() {
  seen_work_ = engine_->work_done();
  seen_idle_ticks_ = engine_->idle_ticks();
  seen_idle_stretches_ = engine_->idle_stretches();
  seen_cpu_ns_ = paced_ ? ThreadCpuNs() : 0;
  forced_ticks_ = 0;
}

void ShardSnapshot::RunSlice(uint64_t generation) {
  if (generation != generation_ || !running()) return;
  if (writer_->failed()) {
    writer_->ShardDone(shard_->index());  // the writer reports the failure when all are done
    return Stop();
  }
  if (writer_->in_flight(shard_->index()) > kSoftInFlight) return ScheduleSlice(1000);
  const double slice_us = NextSliceUs();
  if (slice_us == 0) {
    ++stats_.credit_waits;
    return ScheduleSlice(kCreditWaitUs);
  }
  ++(credit_us_ > 0 ? stats_.paced_slices : stats_.idle_slices);
  sink_.set_defer_lzf(credit_us_ > 0);  // the writer is under kSoftInFlight behind (above)
  const uint64_t now = CycleClock::Now();
  const double ticks_per_us = CycleClock::TicksPerUsec();
  const uint64_t deadline = now + uint64_t(slice_us * ticks_per_us);
  auto note_run_time = [&] {  // for the latency monitor (ShardStats::slowest_snapshot_slice_us)
    const double ran_us = double(CycleClock::Now() - now) / ticks_per_us;
    uint64_t& slowest = shard_->stats().slowest_snapshot_slice_us;
    slowest = std::max(slowest, uint64_t(ran_us));
    return ran_us;
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
  const double ran_us = note_run_time();
  stats_.walk_us += ran_us;
  // A paced slice (the only kind that starts with credit) pays for itself; NoteSeen keeps the
  // slice's own CPU time out of what the next slice counts as the engine's work.
  if (credit_us_ > 0) credit_us_ -= ran_us;
  NoteSeen();
  ScheduleSlice(0);
}

void ShardSnapshot::Finish() {
  LOG(INFO) << "Snapshot shard " << shard_->index() << ": walk " << uint64_t(stats_.walk_us / 1000)
            << " ms in " << stats_.idle_slices << " free and " << stats_.paced_slices
            << " paced slices, writes saving entries " << uint64_t(stats_.forced_us / 1000)
            << " ms, idle credit " << uint64_t(stats_.idle_credit_us / 1000) << " ms, "
            << stats_.credit_waits << " waits for credit";
  sink_.Flush();
  writer_->ShardDone(shard_->index());
  Stop();
}

}  // namespace dashkv
