#include "core/intent_lock.h"

#include <absl/container/flat_hash_map.h>

#include <algorithm>
#include <iterator>

#include "core/base/logging.h"

namespace dashkv {

namespace {

bool ModesConflict(LockMode a, LockMode b) {
  return a == LockMode::kExclusive || b == LockMode::kExclusive;
}

}  // namespace

void LockRequest::Add(uint64_t key, LockMode mode) {
  for (auto& [k, m] : keys) {
    if (k == key) {
      if (mode == LockMode::kExclusive) m = mode;
      return;
    }
  }
  keys.emplace_back(key, mode);
}

bool IntentLockTable::Conflicts(uint64_t key, LockMode mode) const {
  if (whole_writer_) return true;
  if (whole_readers_ > 0 && mode == LockMode::kExclusive) return true;
  auto it = locks_.find(key);
  if (it == locks_.end()) return false;
  const KeyState& ks = it->second;
  return ks.writer || (mode == LockMode::kExclusive && ks.readers > 0);
}

bool IntentLockTable::HolderConflict(const LockRequest& req) const {
  if (req.whole_shard) {
    if (whole_writer_) return true;
    if (req.whole_mode == LockMode::kExclusive) return whole_readers_ > 0 || held_keys_ > 0;
    return exclusive_keys_ > 0;
  }
  for (const auto& [key, mode] : req.keys) {
    if (Conflicts(key, mode)) return true;
  }
  return false;
}

bool IntentLockTable::TryAcquire(const LockRequest& req) {
  max_txid_ = std::max(max_txid_, req.txid);
  if (whole_queued_ > 0) return false;
  if (req.whole_shard) {
    if (!waiters_.empty()) return false;
  } else {
    for (const auto& [key, mode] : req.keys) {
      auto it = locks_.find(key);
      if (it != locks_.end() && it->second.queued > 0) return false;
    }
  }
  if (HolderConflict(req)) return false;
  Acquire(req);
  return true;
}

void IntentLockTable::Acquire(const LockRequest& req) {
  if (req.whole_shard) {
    if (req.whole_mode == LockMode::kExclusive) {
      whole_writer_ = true;
    } else {
      ++whole_readers_;
    }
  }
  for (const auto& [key, mode] : req.keys) {
    KeyState& ks = locks_[key];
    if (ks.readers == 0 && !ks.writer) ++held_keys_;
    if (mode == LockMode::kExclusive) {
      DCHECK(!ks.writer);
      ks.writer = true;
      ++exclusive_keys_;
    } else {
      ++ks.readers;
    }
  }
}

void IntentLockTable::EraseIfIdle(uint64_t key) {
  auto it = locks_.find(key);
  if (it != locks_.end() && it->second.readers == 0 && !it->second.writer &&
      it->second.queued == 0) {
    locks_.erase(it);
  }
}

void IntentLockTable::Drop(const LockRequest& req) {
  if (req.whole_shard) {
    if (req.whole_mode == LockMode::kExclusive) {
      DCHECK(whole_writer_);
      whole_writer_ = false;
    } else {
      DCHECK(whole_readers_ > 0);
      --whole_readers_;
    }
  }
  for (const auto& [key, mode] : req.keys) {
    auto it = locks_.find(key);
    CHECK(it != locks_.end());
    KeyState& ks = it->second;
    if (mode == LockMode::kExclusive) {
      DCHECK(ks.writer);
      ks.writer = false;
      --exclusive_keys_;
    } else {
      DCHECK(ks.readers > 0);
      --ks.readers;
    }
    if (ks.readers == 0 && !ks.writer) --held_keys_;
    EraseIfIdle(key);
  }
}

void IntentLockTable::Unqueue(const LockRequest& req) {
  if (req.whole_shard) --whole_queued_;
  for (const auto& [key, mode] : req.keys) {
    auto it = locks_.find(key);
    CHECK(it != locks_.end());
    --it->second.queued;
    EraseIfIdle(key);
  }
}

void IntentLockTable::Enqueue(LockRequest req, absl::AnyInvocable<void()> on_grant,
                              bool transient) {
  // A transient request that nothing holds or awaits runs at once. (An enqueue never makes
  // another waiter grantable, so there is nothing else to do here.)
  if (transient && whole_queued_ == 0 && !HolderConflict(req) &&
      (!req.whole_shard || waiters_.empty())) {
    bool queued = false;
    for (const auto& [key, mode] : req.keys) {
      auto it = locks_.find(key);
      queued = queued || (it != locks_.end() && it->second.queued > 0);
    }
    if (!queued) return std::move(on_grant)();
  }
  if (req.whole_shard) ++whole_queued_;
  for (const auto& [key, mode] : req.keys) ++locks_[key].queued;
  max_txid_ = std::max(max_txid_, req.txid);
  const uint64_t order = transient ? max_txid_ : req.txid;
  auto pos = waiters_.end();
  while (pos != waiters_.begin() && std::prev(pos)->order > order) --pos;
  const bool at_tail = pos == waiters_.end();
  waiters_.insert(pos, Waiter{std::move(req), std::move(on_grant), transient, order});
  // Ahead of others, the request may be blocked only by later waiters (TryAcquire refused it
  // for them): walk the queue so that nothing grantable stays queued.
  if (!at_tail) Process();
}

void IntentLockTable::Release(const LockRequest& req) {
  Drop(req);
  Process();
}

void IntentLockTable::Process() {
  if (processing_) {
    again_ = true;
    return;
  }
  processing_ = true;
  // Keys of earlier waiters that stay queued, with the strongest mode they want.
  absl::flat_hash_map<uint64_t, LockMode> claimed;
  do {
    again_ = false;
    claimed.clear();
    bool whole_claimed = false;
    for (auto it = waiters_.begin(); it != waiters_.end();) {
      const LockRequest& req = it->req;
      bool blocked = whole_claimed || HolderConflict(req);
      if (!blocked && req.whole_shard) blocked = !claimed.empty();
      for (size_t k = 0; !blocked && k < req.keys.size(); ++k) {
        auto c = claimed.find(req.keys[k].first);
        blocked = c != claimed.end() && ModesConflict(c->second, req.keys[k].second);
      }
      if (blocked) {
        if (req.whole_shard) whole_claimed = true;
        for (const auto& [key, mode] : req.keys) {
          auto [c, inserted] = claimed.emplace(key, mode);
          if (!inserted && mode == LockMode::kExclusive) c->second = mode;
        }
        ++it;
        continue;
      }
      // Granted. A transient waiter runs now and holds nothing afterwards; a transaction
      // holds its locks until it releases them. Callbacks may append waiters (the walk sees
      // them) and may release locks (the walk then runs again).
      Waiter w = std::move(*it);
      it = waiters_.erase(it);
      if (!w.transient) Acquire(w.req);
      Unqueue(w.req);
      std::move(w.on_grant)();
    }
  } while (again_);
  processing_ = false;
}

}  // namespace dashkv
