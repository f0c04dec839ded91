#include "server/storage/shard_set.h"

namespace dashkv {

std::string_view detail::HashTagAfter(std::string_view key, size_t open) {
  size_t close = key.find('}', open + 1);
  if (close == std::string_view::npos || close == open + 1) return key;
  return key.substr(open + 1, close - open - 1);
}

namespace {

// Returns a chunk reserve that the pool's background engine refills on request. The posted task
// holds a weak reference: a refill queued behind the shard's destruction does nothing.
std::shared_ptr<ChunkReserve> MakeChunkReserve(io::Engine& background) {
  auto reserve = std::make_shared<ChunkReserve>();
  reserve->set_refill_request([weak = std::weak_ptr<ChunkReserve>(reserve), &background] {
    background.Post([weak] {
      if (std::shared_ptr<ChunkReserve> r = weak.lock()) r->Refill();
    });
  });
  return reserve;
}

}  // namespace

ShardSet::ShardSet(io::EnginePool& pool, unsigned num_dbs)
    : pool_(pool), size_(pool.size()), num_dbs_(num_dbs), shards_(pool.size(), nullptr) {
  pool_.RunOnAllBlocking([this](unsigned i) {
    shards_[i] = new Shard(i, num_dbs_, MakeChunkReserve(pool_.background()));
    Shard::SetCurrent(shards_[i]);
  });
  no_touch_twin_.reset(new ShardSet(*this, ShardTaskMode(/*no_touch=*/true, 0), ViewTag{}));
}

ShardSet::ShardSet(const ShardSet& base, ShardTaskMode mode, ViewTag)
    : pool_(base.pool_), size_(base.size_), num_dbs_(base.num_dbs_), shards_(base.shards_),
      mode_(mode), owner_(false) {}

std::shared_ptr<ShardSet> ShardSet::View(ShardTaskMode mode) const {
  return std::shared_ptr<ShardSet>(new ShardSet(*this, mode, ViewTag{}));
}

ShardSet::~ShardSet() {
  if (!owner_) return;  // a view owns no shard
  // The engines have stopped (see the header), so no shard thread runs any more.
  for (Shard*& shard : shards_) {
    delete shard;
    shard = nullptr;
  }
}

}  // namespace dashkv
