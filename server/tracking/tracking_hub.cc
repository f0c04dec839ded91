#include "server/tracking/tracking_hub.h"

#include <algorithm>
#include <iterator>
#include <utility>

#include "core/base/logging.h"
#include "core/str_util.h"
#include "io/connection.h"
#include "io/engine.h"
#include "server/command_registry.h"
#include "server/pubsub/pubsub.h"
#include "server/storage/shard.h"
#include "server/storage/shard_set.h"

namespace dashkv {

namespace asio = boost::asio;

namespace {

constexpr std::string_view kPushHead = ">2\r\n$10\r\ninvalidate\r\n";
constexpr std::string_view kMessageHead = "*3\r\n$7\r\nmessage\r\n$20\r\n__redis__:invalidate\r\n";

// The RESP array of `keys` (the same bytes in RESP2 and RESP3).
std::string KeyArray(std::span<const std::string_view> keys) {
  std::string out = StrCat("*", keys.size(), "\r\n");
  for (std::string_view k : keys) StrAppend(&out, "$", k.size(), "\r\n", k, "\r\n");
  return out;
}

// Whether a call of `spec` remembers its keys for a client that tracks reads: read-only
// commands, as Redis, but for the pub/sub ones (shard channels are no keys) and the read-only
// scripts (EVAL_RO, EVALSHA_RO, FCALL_RO: the commands they run track their own keys).
bool TracksKeysOf(const CommandSpec& spec) {
  return spec.HasFlag(kCmdReadOnly) && !spec.HasFlag(kCmdPubSub) &&
         spec.tx_scope != TxScope::kScript;
}

// Queues `frame` for the tracking client itself: after the replies of the batch it runs.
void SendToTracker(ConnState& state, std::string_view frame) {
  ClientTracking& t = *state.tracking;
  if (t.dispatching) {
    t.deferred.append(frame);
  } else {
    state.conn->SendAsync(frame);
  }
}

}  // namespace

TrackingHub::TrackingHub(io::EnginePool& pool, const std::atomic<int64_t>* max_keys)
    : pool_(pool), max_keys_(max_keys), locals_(pool.size()) {}

TrackingHub::~TrackingHub() = default;

template <typename F>
void TrackingHub::RunOn(unsigned engine, F fn) {
  io::Engine* current = io::Engine::Current();
  if (current != nullptr && current->index() == engine) return fn();
  pool_.Post(engine, std::move(fn));
}

void TrackingHub::AttachShards(ShardSet& shards) {
  shards_ = &shards;
  tables_.resize(shards.size());
  shards.RunOnAllBlocking([this](Shard& shard) {
    const unsigned sid = shard.index();
    auto post = [this](unsigned engine, std::vector<Invalidation> batch) {
      RunOn(engine, [this, engine, batch = std::move(batch)]() mutable {
        Deliver(engine, std::move(batch));
      });
    };
    auto schedule = [this, sid] { pool_.Post(sid, [this, sid] { tables_[sid]->Flush(); }); };
    auto table = std::make_unique<TrackingTable>(pool_.size(), post, schedule);
    table->Attach(&shard.changes());
    tables_[sid] = std::move(table);
  });
}

void TrackingHub::AddClient(unsigned engine, ConnState* state) {
  locals_[engine].clients.emplace(state->conn->id(), state);
}

void TrackingHub::RemoveClient(unsigned engine, ConnState* state) {
  Disable(*state);
  locals_[engine].clients.erase(state->conn->id());
}

asio::awaitable<std::optional<unsigned>> TrackingHub::FindClient(uint64_t id) {
  std::atomic<int> found{-1};
  co_await pool_.AwaitAll([&](unsigned i) {
    if (locals_[i].clients.contains(id)) found.store(static_cast<int>(i));
  });
  if (found.load() < 0) co_return std::nullopt;
  co_return static_cast<unsigned>(found.load());
}

asio::awaitable<void> TrackingHub::Enable(ConnState& state, TrackingRequest request) {
  if (state.tracking == nullptr) {
    state.tracking = std::make_unique<ClientTracking>();
    state.tracking->dispatching = true;  // this batch's replies go first, as for later ones
  }
  ClientTracking& t = *state.tracking;
  if (!t.on) clients_.fetch_add(1, std::memory_order_relaxed);
  t.on = true;
  t.broken_redirect = false;
  t.redirect = request.redirect;
  t.redirect_engine = request.redirect_engine;
  t.optin = request.optin;
  t.optout = request.optout;
  t.noloop = request.noloop;
  t.bcast = request.bcast;
  Refresh(state);
  if (!request.bcast) co_return;
  if (request.prefixes.empty()) request.prefixes.emplace_back();  // every key
  // The new prefixes, sorted, merged into the client's in one pass (a request may hold many).
  std::vector<std::string>& req = request.prefixes;
  std::sort(req.begin(), req.end());
  req.erase(std::unique(req.begin(), req.end()), req.end());
  std::vector<std::string> added;
  for (std::string& p : req) {
    if (!std::binary_search(t.prefixes.begin(), t.prefixes.end(), p)) added.push_back(std::move(p));
  }
  if (added.empty()) co_return;
  std::vector<std::string> merged;
  merged.reserve(t.prefixes.size() + added.size());
  std::merge(std::make_move_iterator(t.prefixes.begin()), std::make_move_iterator(t.prefixes.end()),
             added.begin(), added.end(), std::back_inserter(merged));
  t.prefixes = std::move(merged);
  {
    absl::MutexLock lock(&mu_);
    for (const std::string& p : added) ++prefix_clients_[p];
  }
  const uint64_t id = state.conn->id();
  const unsigned engine = state.conn->engine().index();
  co_await shards_->AwaitAll([&](Shard& shard) {
    for (const std::string& p : added) tables_[shard.index()]->AddPrefix(p, id, engine);
  });
}

void TrackingHub::Disable(ConnState& state) {
  if (state.tracking == nullptr || !state.tracking->on) return;
  ClientTracking& t = *state.tracking;
  if (t.bcast && !t.prefixes.empty()) {
    {
      absl::MutexLock lock(&mu_);
      for (const std::string& p : t.prefixes) {
        auto it = prefix_clients_.find(p);
        if (it != prefix_clients_.end() && --it->second == 0) prefix_clients_.erase(it);
      }
    }
    // Posted from this engine: a later Enable's registrations reach each shard after it.
    const uint64_t id = state.conn->id();
    for (unsigned sid = 0; sid < tables_.size(); ++sid) {
      RunOn(sid, [this, sid, id] { tables_[sid]->RemovePrefixes(id); });
    }
    t.prefixes.clear();
    t.prefixes_overlap = false;
  }
  clients_.fetch_sub(1, std::memory_order_relaxed);
  t.on = t.bcast = t.optin = t.optout = t.noloop = t.caching = t.broken_redirect = false;
  Refresh(state);
}

void TrackingHub::SetCaching(ConnState& state, bool caching) {
  state.tracking->caching = caching;
  Refresh(state);
}

void TrackingHub::Refresh(ConnState& state) {
  const ClientTracking* t = state.tracking.get();
  if (t == nullptr || !t->on) {
    state.tracking_now = 0;
    state.tracking_opt = false;
    state.change_origin = 0;
    return;
  }
  state.tracking_now = kTrackingOn | (t->TracksReads() ? kTrackingReads : 0);
  state.tracking_opt = t->optin || t->optout;
  state.change_origin = ChangeOriginOf(state.conn->id(), /*by_script=*/false);
}

void TrackingHub::FlushDeferred(ConnState& state, io::ReplyBuilder& out) {
  ClientTracking& t = *state.tracking;
  t.dispatching = false;
  if (t.deferred.empty()) return;
  out.SendRaw(t.deferred);
  t.deferred.clear();
}

void TrackingHub::AfterCommand(ConnState& state, io::CmdArgs args) {
  ClientTracking& t = *state.tracking;
  if (!t.caching || state.in_multi || EqualsIgnoreCase(args[0], "client")) return;
  t.caching = false;
  Refresh(state);
}

uint64_t TrackingHub::BeginCommand(Shard& shard, const ConnState& client, bool by_script) {
  ChangeListeners& changes = shard.changes();
  const uint64_t outer = changes.origin();
  changes.set_origin(ChangeOriginOf(client.conn->id(), by_script));
  return outer;
}

void TrackingHub::EndCommand(Shard& shard, const ConnState& client, const CommandSpec& spec,
                             io::CmdArgs args, uint64_t outer_origin) {
  const unsigned sid = shard.index();
  TrackingTable& table = *tables_[sid];
  shard.changes().set_origin(outer_origin);
  if (!(client.tracking_now & kTrackingReads) || !TracksKeysOf(spec)) return;
  const uint64_t id = client.conn->id();
  const unsigned engine = client.conn->engine().index();
  for (uint32_t idx : spec.KeysOf(args)) {
    if (shards_->ShardOf(args[idx]) == sid) table.Remember(args[idx], id, engine);
  }
  EnforceMaxKeys(sid);
}

void TrackingHub::EnforceMaxKeys(unsigned sid) {
  const int64_t max = max_keys_->load(std::memory_order_relaxed);
  if (max <= 0) return;
  // The limit is on all shards' keys together, as Redis's one table: this shard gives up the
  // excess, as far as it holds keys (the others may run over until they remember a key).
  const size_t total = total_keys();
  if (total <= static_cast<size_t>(max)) return;
  TrackingTable& table = *tables_[sid];
  const size_t excess = total - static_cast<size_t>(max);
  table.EnforceLimit(table.keys() > excess ? table.keys() - excess : 0);
}

void TrackingHub::RememberCoordKeys(const ConnState& client, const CommandSpec& spec,
                                    io::CmdArgs args) {
  if (!TracksKeysOf(spec)) return;
  std::vector<std::vector<std::string>> per_shard(tables_.size());
  for (uint32_t idx : spec.KeysOf(args)) {
    per_shard[shards_->ShardOf(args[idx])].emplace_back(args[idx]);
  }
  const uint64_t id = client.conn->id();
  const unsigned engine = client.conn->engine().index();
  for (unsigned sid = 0; sid < per_shard.size(); ++sid) {
    if (per_shard[sid].empty()) continue;
    RunOn(sid, [this, sid, id, engine, keys = std::move(per_shard[sid])] {
      for (const std::string& k : keys) tables_[sid]->Remember(k, id, engine);
      EnforceMaxKeys(sid);
    });
  }
}

void TrackingHub::InvalidateAll() {
  for (unsigned e = 0; e < locals_.size(); ++e) {
    RunOn(e, [this, e] {
      for (auto& [id, st] : locals_[e].clients) {
        if (st->tracking != nullptr && st->tracking->on) {
          Send(*st, st->conn->resp_version() == io::RespVersion::kResp3 ? "_\r\n" : "$-1\r\n");
        }
      }
    });
  }
}

void TrackingHub::Deliver(unsigned engine, std::vector<Invalidation> batch) {
  Local& local = locals_[engine];
  std::vector<std::string_view> keys;
  for (size_t i = 0; i < batch.size();) {
    const Invalidation& inv = batch[i];
    size_t end = i + 1;
    if (inv.group != 0) {
      while (end < batch.size() && batch[end].client == inv.client &&
             batch[end].group == inv.group) {
        ++end;
      }
    }
    auto it = local.clients.find(inv.client);
    ConnState* st = it == local.clients.end() ? nullptr : it->second;
    // A message for a mode the client has left (or a client gone) is dropped, as in Redis.
    if (st != nullptr && st->tracking != nullptr && st->tracking->on &&
        st->tracking->bcast == (inv.group != 0)) {
      keys.clear();
      for (size_t k = i; k < end; ++k) {
        if (st->tracking->noloop && batch[k].origin == inv.client) continue;
        keys.push_back(batch[k].key);
      }
      if (!keys.empty()) Send(*st, KeyArray(keys));
    }
    i = end;
  }
}

void TrackingHub::Send(ConnState& state, std::string value) {
  ClientTracking& t = *state.tracking;
  if (t.redirect == 0) {
    // RESP2 has no push messages: without a redirect the invalidation is lost, as in Redis.
    if (state.conn->resp_version() == io::RespVersion::kResp3) {
      SendToTracker(state, StrCat(kPushHead, value));
    }
    return;
  }
  const uint64_t tracker = state.conn->id();
  const unsigned tracker_engine = state.conn->engine().index();
  const uint64_t redirect = t.redirect;
  const unsigned redirect_engine = t.redirect_engine;
  RunOn(redirect_engine, [this, tracker, tracker_engine, redirect, redirect_engine,
                          value = std::move(value)] {
    auto& clients = locals_[redirect_engine].clients;
    if (auto it = clients.find(redirect); it != clients.end()) {
      ConnState& r = *it->second;
      if (r.conn->resp_version() == io::RespVersion::kResp3) {
        r.conn->SendAsync(StrCat(kPushHead, value));
      } else if (InSubscribedMode(r)) {
        r.conn->SendAsync(StrCat(kMessageHead, value));
      }
      return;
    }
    // The redirect client has gone: the tracking client learns it (RESP3) and shows flag R.
    RunOn(tracker_engine, [this, tracker, tracker_engine, redirect] {
      auto& mine = locals_[tracker_engine].clients;
      auto it = mine.find(tracker);
      if (it == mine.end()) return;
      ConnState& st = *it->second;
      if (st.tracking == nullptr || !st.tracking->on || st.tracking->redirect != redirect) return;
      st.tracking->broken_redirect = true;
      if (st.conn->resp_version() == io::RespVersion::kResp3) {
        SendToTracker(st, StrCat(">2\r\n$21\r\ntracking-redir-broken\r\n:", redirect, "\r\n"));
      }
    });
  });
}

size_t TrackingHub::total_keys() const {
  size_t n = 0;
  for (const auto& t : tables_) n += t->keys();
  return n;
}

size_t TrackingHub::total_items() const {
  size_t n = 0;
  for (const auto& t : tables_) n += t->items();
  return n;
}

size_t TrackingHub::total_prefixes() const {
  absl::MutexLock lock(&mu_);
  return prefix_clients_.size();
}

}  // namespace dashkv
