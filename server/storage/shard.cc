#include "server/storage/shard.h"

#include <algorithm>

#include "core/base/logging.h"

namespace dashkv {

namespace {
thread_local Shard* current_shard = nullptr;
// Buckets an active expiry cycle may visit per database per tick: bounded work per tick.
constexpr unsigned kExpireBucketsPerCycle = 512;
}  // namespace

Shard::Shard(unsigned index, unsigned num_dbs, std::shared_ptr<ChunkReserve> chunk_reserve)
    : index_(index), chunk_reserve_(std::move(chunk_reserve)), dbs_(num_dbs) {
  watches_.Attach(&changes_);
  blocking_.Attach(&changes_);
}

DbSlice& Shard::db(unsigned i) {
  DCHECK_LT(i, dbs_.size());
  if (!dbs_[i]) {
    dbs_[i] = std::make_unique<DbSlice>(i, &stats_, &changes_);
    dbs_[i]->table().set_chunk_reserve(chunk_reserve_.get());
    if (budget_ != nullptr) dbs_[i]->set_eviction(&budget_->settings());
    if (no_touch_) [[unlikely]] dbs_[i]->set_no_touch(true);
    dbs_used_ = std::max(dbs_used_, i + 1);
  }
  return *dbs_[i];
}

void Shard::set_no_touch(bool yes) {
  no_touch_ = yes;
  for (auto& slice : dbs_) {
    if (slice) slice->set_no_touch(yes);
  }
}

void Shard::SwapDbs(unsigned db1, unsigned db2) {
  if (db1 == db2) return;
  changes_.Swapping(db1, db2);
  std::swap(dbs_[db1], dbs_[db2]);
  if (dbs_[db1]) dbs_used_ = std::max(dbs_used_, db1 + 1);
  if (dbs_[db2]) dbs_used_ = std::max(dbs_used_, db2 + 1);
  if (dbs_[db1]) dbs_[db1]->set_index(db1);
  if (dbs_[db2]) dbs_[db2]->set_index(db2);
  changes_.Swapped(db1, db2);
}

size_t Shard::ActiveExpireCycle(int64_t now_ms) {
  if (!active_expire_) return 0;
  size_t deleted = 0, sampled = 0;
  for (auto& db : dbs_) {
    if (db && db->expires() > 0) {
      deleted += db->ActiveExpire(now_ms, kExpireBucketsPerCycle, &sampled);
    }
  }
  if (sampled > 0) {
    const double perc = static_cast<double>(deleted) / static_cast<double>(sampled);
    stats_.expired_stale_perc = perc * 0.05 + stats_.expired_stale_perc * 0.95;
  }
  return deleted;
}

void Shard::set_memory_budget(MemoryBudget* budget) {
  budget_ = budget;
  evictor_.set_budget(budget);
  for (auto& db : dbs_) {
    if (db) db->set_eviction(&budget->settings());
  }
}

Shard* Shard::Current() { return current_shard; }
void Shard::SetCurrent(Shard* shard) { current_shard = shard; }

}  // namespace dashkv
