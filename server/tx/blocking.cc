#include "server/tx/blocking.h"

#include <poll.h>

#include <algorithm>
#include <boost/asio/async_result.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "core/base/logging.h"
#include "server/cmd_context.h"
#include "server/storage/shard.h"
#include "server/tx/transaction.h"

namespace dashkv {

namespace asio = boost::asio;

bool SocketPeerGone(int fd) {
  if (fd < 0) return true;
  pollfd p{fd, POLLRDHUP, 0};
  if (poll(&p, 1, 0) <= 0) return false;  // nothing to report (or EINTR: asked again later)
  return (p.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL)) != 0;
}

void BlockedClient::Finish(WakeReason reason, PopResult result) {
  DCHECK(claimed());
  reason_ = reason;
  result_ = std::move(result);
  home_->Post([self = shared_from_this()] { self->Fire(); });
}

void BlockedClient::Fire() {
  fired_ = true;
  if (!handler_) return;
  auto handler = std::move(*handler_);
  handler_.reset();
  handler();
}

asio::awaitable<WakeReason> BlockedClient::Wait() {
  if (!fired_) {
    co_await asio::async_initiate<const asio::use_awaitable_t<>, void()>(
        [this](auto handler) { handler_.emplace(std::move(handler)); }, asio::use_awaitable);
  }
  co_return reason_;
}

bool BlockedCall::Interrupt(WakeReason reason) {
  if (interrupt_) return false;
  interrupt_ = reason;
  if (current_ && current_->TryClaim()) current_->Finish(reason);
  return true;
}

void BlockedCall::SetCurrent(std::shared_ptr<BlockedClient> client) {
  current_ = std::move(client);
  if (interrupt_ && current_->TryClaim()) current_->Finish(*interrupt_);
}

bool BlockingRegistry::Add(const std::shared_ptr<BlockedClient>& client,
                           const std::vector<size_t>& key_indexes,
                           const BlockedClient* replace) {
  DCHECK(shard_->IsMyThread());
  if (closed_) return false;
  const BlockRequest& req = client->request();
  std::vector<std::string>& mine = keys_of_[client.get()];
  for (size_t k : key_indexes) {
    std::string lk = LockKeyOf(req.db, req.keys[k]);
    if (std::find(mine.begin(), mine.end(), lk) != mine.end()) continue;  // BLPOP k k
    std::deque<Entry>& queue = queues_[lk];
    auto old = replace == nullptr ? queue.end()
                                  : std::find_if(queue.begin(), queue.end(), [&](const Entry& e) {
                                      return e.client.get() == replace;
                                    });
    if (old != queue.end()) {
      old->client = client;
      old->key = static_cast<uint32_t>(k);
    } else {
      queue.push_back({client, static_cast<uint32_t>(k)});
    }
    mine.push_back(std::move(lk));
  }
  if (replace != nullptr) Unlink(replace);  // whatever was not taken over
  UpdateInterest();
  return true;
}

void BlockingRegistry::UpdateInterest() {
  if (changes_ != nullptr) {
    changes_->SetInterest(slot_, queues_.empty() ? 0u : uint32_t{kWantWrites | kWantRemovals});
  }
}

void BlockingRegistry::MarkDbsReady(unsigned db1, unsigned db2) {
  if (queues_.empty()) return;
  std::vector<std::string> keys;
  for (const auto& [lk, queue] : queues_) {
    unsigned db = LockKeyDb(lk);
    if (db == db1 || db == db2) keys.push_back(lk);
  }
  for (const std::string& lk : keys) MarkReady(LockKeyDb(lk), LockKeyName(lk));
}

void BlockingRegistry::MarkGroupReadersReady(const std::string& lock_key) {
  auto q = queues_.find(lock_key);
  if (q == queues_.end()) return;
  for (const Entry& e : q->second) {
    if (e.client->request().kind == BlockRequest::Kind::kStreamReadGroup) {
      return MarkReady(LockKeyDb(lock_key), LockKeyName(lock_key));
    }
  }
}

void BlockingRegistry::AfterRemove(unsigned db, std::string_view key, RemoveReason) {
  if (!queues_.empty()) MarkGroupReadersReady(LockKeyOf(db, key));
}

void BlockingRegistry::BeforeFlush(unsigned db) {
  if (queues_.empty()) return;
  std::vector<std::string> keys;
  for (const auto& [lk, queue] : queues_) {
    if (LockKeyDb(lk) == db) keys.push_back(lk);
  }
  for (const std::string& lk : keys) MarkGroupReadersReady(lk);
}

void BlockingRegistry::AfterSwap(unsigned db1, unsigned db2) { MarkDbsReady(db1, db2); }

std::vector<std::string> BlockingRegistry::Unlink(const BlockedClient* client) {
  auto it = keys_of_.find(client);
  if (it == keys_of_.end()) return {};
  std::vector<std::string> keys = std::move(it->second);
  keys_of_.erase(it);
  for (const std::string& lk : keys) {
    auto q = queues_.find(lk);
    if (q == queues_.end()) continue;
    std::erase_if(q->second, [&](const Entry& e) { return e.client.get() == client; });
    if (q->second.empty()) queues_.erase(q);
  }
  if (queues_.empty()) UpdateInterest();
  return keys;
}

void BlockingRegistry::Remove(const BlockedClient* client) {
  DCHECK(shard_->IsMyThread());
  for (std::string& lk : Unlink(client)) {
    if (queues_.contains(lk) && ready_set_.insert(lk).second) ready_.push_back(std::move(lk));
  }
  ServeReady();
}

void BlockingRegistry::MarkReady(unsigned db, std::string_view key) {
  std::string lk = LockKeyOf(db, key);
  if (!queues_.contains(lk) || !ready_set_.insert(lk).second) return;
  ready_.push_back(std::move(lk));
  // The command hooks (pipeline_runner.cc, transaction.cc) usually serve first; this message
  // covers the writes made elsewhere (coordinator hops without intent locks).
  io::Engine* engine = io::Engine::Current();
  if (!post_pending_ && engine != nullptr) {
    post_pending_ = true;
    engine->Post([this] {
      post_pending_ = false;
      ServeReady();
    });
  }
}

bool BlockingRegistry::Locked(const std::string& lock_key) const {
  const IntentLockTable& locks = shard_->locks();
  if (locks.empty()) return false;
  return locks.Conflicts(LockHashOf(LockKeyDb(lock_key), LockKeyName(lock_key)),
                         LockMode::kExclusive);
}

bool BlockingRegistry::ServeKey(const std::string& lock_key, int64_t now_ms) {
  if (Locked(lock_key)) return false;
  // Pops restart the walk after each client served (the key changed); readers change nothing
  // and a group reader changes only its group, so the walk goes on from where it is (`i`): one
  // pass serves every reader and every group. `held`: the groups whose new entries are kept for
  // a cross-shard consumer of theirs (woken, or retrying): their later consumers are skipped.
  std::vector<std::string> held;
  auto is_held = [&](const BlockRequest& req) {
    return std::find(held.begin(), held.end(), req.group) != held.end();
  };
  size_t i = 0;
  for (;;) {
    auto it = queues_.find(lock_key);
    if (it == queues_.end()) return true;
    std::deque<Entry>& queue = it->second;
    for (; i < queue.size(); ++i) {
      const Entry& e = queue[i];
      const BlockRequest& req = e.client->request();
      const ServeTakes takes = TakesOnServe(req);
      if (takes == ServeTakes::kGroupEntries && !held.empty() && is_held(req)) continue;
      if (e.client->claimed()) {
        // Served-on-shard clients are claimed only by an interrupt: they take nothing. A
        // cross-shard one may be retrying: an element (its group's entries) is kept for it
        // (see Design); readers keep nothing.
        if (e.client->served_on_shard() || takes == ServeTakes::kNothing) continue;
        if (takes == ServeTakes::kElements) return true;
        held.push_back(req.group);
        continue;
      }
      OpStatus st = CheckBlockedKey(*shard_, req, e.key, now_ms);
      if (st == OpStatus::kKeyNotFound) {
        // Nothing (left) to pop; nothing after this reader's id or new to this consumer's
        // group: the next client may have something.
        if (takes == ServeTakes::kElements) return true;
        continue;
      }
      if (st == OpStatus::kOk) break;
      // kWrongType: this client waits for another type; it stays blocked.
    }
    if (i == queue.size()) return true;
    std::shared_ptr<BlockedClient> client = queue[i].client;  // Unlink drops the entry
    const size_t key = queue[i].key;
    const BlockRequest& req = client->request();
    const ServeTakes takes = TakesOnServe(req);
    if (client->PeerGone()) {
      // It left; its engine has not seen it yet. It takes nothing (see Design).
      if (client->TryClaim()) client->Finish(WakeReason::kClosed);
      Unlink(client.get());  // queue[i] is now the next client
      if (takes == ServeTakes::kElements) i = 0;
      continue;
    }
    if (!client->served_on_shard()) {
      // A cross-shard client retries under its locks; a popped element waits for it.
      if (client->TryClaim()) client->Finish(WakeReason::kReady);
      if (takes == ServeTakes::kElements) return true;
      if (takes == ServeTakes::kGroupEntries) held.push_back(req.group);
      ++i;
      continue;
    }
    if (req.kind == BlockRequest::Kind::kListMove && Locked(LockKeyOf(req.db, req.dest))) {
      return false;
    }
    if (!client->TryClaim()) {  // timing out: its removal serves the key again
      if (takes == ServeTakes::kElements) return true;
      ++i;
      continue;
    }
    PopResult result = ServeBlockedKey(*shard_, req, key, now_ms);
    shard_->FinishChanges();  // a pushed destination may have waiters of its own
    Unlink(client.get());     // queue[i] is now the next client
    client->Finish(WakeReason::kServed, std::move(result));
    if (takes == ServeTakes::kElements) i = 0;
  }
}

void BlockingRegistry::ServeReady() {
  DCHECK(shard_->IsMyThread());
  if (serving_ || deferred_ || ready_.empty()) return;
  // The clients served run commands of their own, not the one whose task may run this.
  ScopedNoOrigin no_origin(shard_->changes());
  serving_ = true;
  const int64_t now_ms = NowMs();
  std::vector<std::string> deferred;  // locked by a transaction: served at its release
  while (!ready_.empty()) {
    std::string lk = std::move(ready_.front());
    ready_.pop_front();
    ready_set_.erase(lk);
    if (!ServeKey(lk, now_ms)) deferred.push_back(std::move(lk));
  }
  for (std::string& lk : deferred) {
    if (ready_set_.insert(lk).second) ready_.push_back(std::move(lk));
  }
  serving_ = false;
}

void BlockingRegistry::Shutdown() {
  DCHECK(shard_->IsMyThread());
  closed_ = true;
  for (auto& [lk, queue] : queues_) {
    for (Entry& e : queue) {
      if (e.client->TryClaim()) e.client->Finish(WakeReason::kShutdown);
    }
  }
  queues_.clear();
  keys_of_.clear();
  ready_.clear();
  ready_set_.clear();
  UpdateInterest();
}

}  // namespace dashkv
