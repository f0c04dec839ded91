#include "server/tx/transaction.h"

#include <absl/container/inlined_vector.h>

#include <algorithm>
#include <atomic>
#include <chrono>

#include "core/base/logging.h"
#include "io/engine.h"

namespace dashkv {

namespace asio = boost::asio;

namespace {
constexpr uint64_t kLockSeed = 0x9e3779b97f4a7c15ULL;  // unrelated to the table and shard seeds

// Transaction ids (Design): (clock << kTxIdEngineBits) | (engine index + 1) on an engine's
// thread; threads without an engine (in-process tests) share one counter and tag 0. The clock
// counts microseconds of the monotonic clock since the process started (48 bits: 8.9 years).
constexpr unsigned kTxIdEngineBits = 16;
thread_local uint64_t tls_txid_clock = 0;
std::atomic<uint64_t> shared_txid_clock{1};
const std::chrono::steady_clock::time_point txid_epoch = std::chrono::steady_clock::now();

uint64_t TxIdTimeUs() {
  return uint64_t(std::chrono::duration_cast<std::chrono::microseconds>(
                      std::chrono::steady_clock::now() - txid_epoch)
                      .count());
}

// Releases `req` on `shard` and serves the clients whose keys the transaction made ready
// (blocking.h). The lock waiters the release grants run there and then, as commands of their
// own clients: the change origin of the command whose task this may be does not cover them.
void ReleaseOnShard(Shard& shard, const LockRequest& req) {
  ScopedNoOrigin no_origin(shard.changes());
  shard.locks().Release(req);
  shard.blocking().ServeReady();
}
}  // namespace

uint64_t NextTxId() {
  const io::Engine* engine = io::Engine::Current();
  if (engine == nullptr || engine->index() + 1 >= (1u << kTxIdEngineBits)) {
    return shared_txid_clock.fetch_add(1, std::memory_order_relaxed) << kTxIdEngineBits;
  }
  uint64_t clock = std::max(tls_txid_clock + 1, TxIdTimeUs());
  if (Shard* shard = Shard::Current(); shard != nullptr) {
    clock = std::max(clock, (shard->locks().max_txid() >> kTxIdEngineBits) + 1);
  }
  tls_txid_clock = clock;
  return (clock << kTxIdEngineBits) | (engine->index() + 1);
}

std::string LockKeyOf(unsigned db, std::string_view key) {
  std::string out;
  out.reserve(key.size() + 2);
  out.push_back(static_cast<char>(db & 0xff));
  out.push_back(static_cast<char>((db >> 8) & 0xff));
  out.append(key);
  return out;
}

uint64_t LockHashOf(unsigned db, std::string_view key) {
  return HashBytes(key, kLockSeed + db);
}

KeyLocks::KeyLocks(ShardSet& shard_set)
    : shard_set_(shard_set), requests_(shard_set.size()),
      granted_(shard_set.size(), 0), released_(shard_set.size(), 0) {}

KeyLocks::~KeyLocks() { DCHECK(!held_); }

void KeyLocks::Add(unsigned db, std::string_view key, LockMode mode) {
  DCHECK(!held_);
  unsigned sid = shard_set_.ShardOf(key);
  if (requests_[sid].empty()) {
    shards_.insert(std::upper_bound(shards_.begin(), shards_.end(), sid), sid);
  }
  requests_[sid].Add(LockHashOf(db, key), mode);
}

void KeyLocks::AddAllShards(LockMode mode) {
  DCHECK(!held_);
  shards_.clear();
  for (unsigned sid = 0; sid < shard_set_.size(); ++sid) {
    LockRequest& req = requests_[sid];
    req.keys.clear();  // the whole shard covers every key
    if (req.whole_shard && req.whole_mode == LockMode::kExclusive) mode = LockMode::kExclusive;
    req.whole_shard = true;
    req.whole_mode = mode;
    shards_.push_back(sid);
  }
}

void KeyLocks::AddUnmerged(unsigned sid, uint64_t lock_hash, LockMode mode) {
  DCHECK(!held_);
  if (requests_[sid].empty()) {
    shards_.insert(std::upper_bound(shards_.begin(), shards_.end(), sid), sid);
  }
  requests_[sid].keys.emplace_back(lock_hash, mode);
}

void KeyLocks::MergeDuplicates() {
  DCHECK(!held_);
  for (unsigned sid : shards_) {
    auto& keys = requests_[sid].keys;
    if (keys.size() < 2) continue;
    // Exclusive sorts after shared: the last entry of a run of equal keys has the strongest mode.
    std::sort(keys.begin(), keys.end());
    size_t out = 0;
    for (size_t i = 0; i < keys.size(); ++i) {
      if (i + 1 < keys.size() && keys[i + 1].first == keys[i].first) continue;
      keys[out++] = keys[i];
    }
    keys.resize(out);
  }
}

bool KeyLocks::Covers(unsigned db, std::string_view key, LockMode mode) const {
  const LockRequest& req = requests_[shard_set_.ShardOf(key)];
  if (req.whole_shard) return mode == LockMode::kShared || req.whole_mode == LockMode::kExclusive;
  uint64_t lk = LockHashOf(db, key);
  for (const auto& [k, m] : req.keys) {
    if (k == lk) return mode == LockMode::kShared || m == LockMode::kExclusive;
  }
  return false;
}

asio::awaitable<void> KeyLocks::AcquireOne(unsigned sid) {
  const LockRequest* req = &requests_[sid];
  Shard* local = Shard::Current();
  if (local != nullptr && local->index() == sid && local->locks().TryAcquire(*req)) co_return;
  co_await shard_set_.AwaitAsync<void>(sid, [req](Shard& shard, io::Completion<void> done) {
    if (shard.locks().TryAcquire(*req)) return done();
    // The copy of the request is the queue's; the coordinator's stays for Release. Queued
    // ahead of others, it may let waiters run (ReleaseOnShard says why without the origin).
    ScopedNoOrigin no_origin(shard.changes());
    shard.locks().Enqueue(*req, [done = std::move(done)]() mutable { done(); },
                          /*transient=*/false);
  });
}

void KeyLocks::TakeTxId() {
  const uint64_t txid = NextTxId();
  for (unsigned sid : shards_) requests_[sid].txid = txid;
}

bool KeyLocks::TryAcquireOn(Shard& shard) {
  const unsigned sid = shard.index();
  granted_[sid] = shard.locks().TryAcquire(requests_[sid]) ? 1 : 0;
  return granted_[sid] != 0;
}

bool KeyLocks::SettleTryAcquire() {
  DCHECK(!held_);
  bool all = true;
  for (unsigned sid : shards_) all &= granted_[sid] != 0;
  if (all) {
    held_ = true;
    return true;
  }
  GiveBackGrants();
  return false;
}

void KeyLocks::GiveBackGrants() {
  for (unsigned sid : shards_) {
    if (!granted_[sid]) continue;
    granted_[sid] = 0;
    shard_set_.Post(sid, [req = requests_[sid]](Shard& shard) { ReleaseOnShard(shard, req); });
  }
}

asio::awaitable<void> KeyLocks::Acquire() {
  DCHECK(!held_);
  if (shards_.empty()) {
    held_ = true;
    co_return;
  }
  TakeTxId();
  if (shards_.size() > 1) {
    // Phase 1: one parallel hop; every shard grants at once or grants nothing.
    co_await shard_set_.AwaitMany(shards_, [this](Shard& shard) { TryAcquireOn(shard); });
    if (SettleTryAcquire()) co_return;
  }
  // Phase 2: acquire in ascending shard order, waiting.
  held_ = true;
  for (unsigned sid : shards_) co_await AcquireOne(sid);
}

asio::awaitable<void> KeyLocks::AcquireOrdered(bool but_last) {
  DCHECK(!held_);
  TakeTxId();
  held_ = true;
  const size_t n = shards_.size() - (but_last && !shards_.empty() ? 1 : 0);
  for (size_t i = 0; i < n; ++i) co_await AcquireOne(shards_[i]);
}

void KeyLocks::ReleaseOn(Shard& shard) {
  const unsigned sid = shard.index();
  ReleaseOnShard(shard, requests_[sid]);
  released_[sid] = 1;
}

void KeyLocks::Abandon() {
  if (held_) return Release();
  GiveBackGrants();
}

void KeyLocks::Release() {
  DCHECK(held_);
  held_ = false;
  for (unsigned sid : shards_) {
    if (released_[sid]) continue;
    // The request moves into the message: the coordinator is done with it.
    shard_set_.Post(sid, [req = std::move(requests_[sid])](Shard& shard) {
      ReleaseOnShard(shard, req);
    });
  }
}

}  // namespace dashkv
