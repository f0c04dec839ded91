#include "server/pubsub/pubsub.h"

#include <absl/container/inlined_vector.h>

#include <algorithm>
#include <initializer_list>
#include <memory>
#include <span>

#include "core/base/logging.h"
#include "core/glob.h"
#include "core/str_util.h"
#include "io/connection.h"
#include "io/engine.h"
#include "server/command_registry.h"
#include "server/conn_state.h"

namespace dashkv {

namespace {

// A message frame in both protocols: RESP2 "*n" and RESP3 ">n" differ only in the first byte.
class Frame {
 public:
  Frame(std::initializer_list<std::string_view> parts) {
    StrAppend(&resp2_, "*", parts.size(), "\r\n");
    for (std::string_view p : parts) StrAppend(&resp2_, "$", p.size(), "\r\n", p, "\r\n");
  }
  std::string_view For(io::RespVersion v) {
    if (v == io::RespVersion::kResp2) return resp2_;
    if (resp3_.empty()) {
      resp3_ = resp2_;
      resp3_[0] = '>';
    }
    return resp3_;
  }

 private:
  std::string resp2_, resp3_;
};

// A run of published (channel, message) pairs copied for the engines a publisher does not
// wait for: one buffer, shared by every target engine.
class PostedRun {
 public:
  explicit PostedRun(std::span<const std::pair<std::string_view, std::string_view>> messages) {
    size_t bytes = 0;
    for (const auto& [c, m] : messages) bytes += c.size() + m.size();
    buf_.reserve(bytes);
    for (const auto& [c, m] : messages) {
      ends_.push_back({buf_.size() + c.size(), buf_.size() + c.size() + m.size()});
      buf_.append(c).append(m);
    }
  }
  size_t size() const { return ends_.size(); }
  std::string_view channel(size_t i) const {
    size_t start = i == 0 ? 0 : ends_[i - 1].second;
    return std::string_view(buf_).substr(start, ends_[i].first - start);
  }
  std::string_view message(size_t i) const {
    return std::string_view(buf_).substr(ends_[i].first, ends_[i].second - ends_[i].first);
  }

 private:
  std::string buf_;
  std::vector<std::pair<size_t, size_t>> ends_;  // per pair: end of channel, end of message
};

std::string_view MessageKind(PubSubKind kind) {
  return kind == PubSubKind::kShardChannel ? "smessage" : "message";
}

}  // namespace

PubSub::PubSub(unsigned engines, const io::OutputLimitClass* normal_limit,
               const io::OutputLimitClass* pubsub_limit)
    : locals_(engines),
      registry_(engines),
      normal_limit_(normal_limit),
      pubsub_limit_(pubsub_limit) {}

bool PubSub::Subscribe(ConnState& state, PubSubKind kind, std::string_view name) {
  const unsigned engine = state.conn->engine().index();
  DCHECK(state.conn->engine().IsMyThread());
  if (state.pubsub == nullptr) state.pubsub = std::make_unique<ClientSubscriptions>();
  const bool was_subscribed = state.pubsub->total() > 0;
  if (!state.pubsub->of(kind).emplace(name).second) return false;
  locals_[engine].maps[size_t(kind)][name].push_back(&state);
  registry_.Add(kind, name, engine);
  UpdateMode(state, was_subscribed);
  return true;
}

bool PubSub::Unsubscribe(ConnState& state, PubSubKind kind, std::string_view name) {
  if (state.pubsub == nullptr) return false;
  const unsigned engine = state.conn->engine().index();
  DCHECK(state.conn->engine().IsMyThread());
  auto& mine = state.pubsub->of(kind);
  auto it = mine.find(name);
  if (it == mine.end()) return false;
  auto& map = locals_[engine].maps[size_t(kind)];
  auto local = map.find(name);
  CHECK(local != map.end());
  Subscribers& subs = local->second;
  auto pos = std::find(subs.begin(), subs.end(), &state);
  CHECK(pos != subs.end());
  *pos = subs.back();  // order among subscribers does not matter
  subs.pop_back();
  if (subs.empty()) map.erase(local);
  registry_.Remove(kind, name, engine);
  mine.erase(it);
  UpdateMode(state, true);
  return true;
}

void PubSub::UnsubscribeAll(ConnState& state) {
  if (state.pubsub == nullptr) return;
  for (size_t k = 0; k < kPubSubKinds; ++k) {
    auto kind = static_cast<PubSubKind>(k);
    // Unsubscribe erases from the set being walked: take the names out first.
    std::vector<std::string> names(state.pubsub->of(kind).begin(), state.pubsub->of(kind).end());
    for (const std::string& name : names) Unsubscribe(state, kind, name);
  }
}

void PubSub::UpdateMode(ConnState& state, bool was_subscribed) {
  const bool subscribed = state.pubsub->total() > 0;
  if (subscribed == was_subscribed) return;
  state.conn->set_output_limit(subscribed ? pubsub_limit_ : normal_limit_);
}

int64_t PubSub::Publish(io::EnginePool& pool, unsigned my_engine, PubSubKind kind,
                        std::string_view channel, std::string_view message) {
  const std::pair<std::string_view, std::string_view> one(channel, message);
  return PublishMany(pool, my_engine, kind, std::span(&one, 1))[0];
}

std::vector<int64_t> PubSub::PublishMany(
    io::EnginePool& pool, unsigned my_engine, PubSubKind kind,
    std::span<const std::pair<std::string_view, std::string_view>> messages) {
  std::vector<int64_t> totals(messages.size(), 0);
  EngineList targets, hit;
  for (size_t i = 0; i < messages.size(); ++i) {
    totals[i] = registry_.Targets(kind, messages[i].first, &hit);
    for (unsigned e : hit) {
      if (std::find(targets.begin(), targets.end(), e) == targets.end()) targets.push_back(e);
    }
  }
  // The other engines get one copy of the run, shared: (channel, message) pairs as offsets
  // into one buffer.
  std::shared_ptr<const PostedRun> run;
  for (unsigned e : targets) {
    if (e == my_engine) continue;
    if (run == nullptr) run = std::make_shared<const PostedRun>(messages);
    pool.Post(e, [this, e, kind, run] {
      for (size_t i = 0; i < run->size(); ++i) {
        DeliverLocal(e, kind, run->channel(i), run->message(i));
      }
    });
  }
  if (std::find(targets.begin(), targets.end(), my_engine) != targets.end()) {
    for (const auto& [channel, message] : messages) DeliverLocal(my_engine, kind, channel, message);
  }
  return totals;
}

int64_t PubSub::DeliverLocal(unsigned engine, PubSubKind kind, std::string_view channel,
                             std::string_view message) {
  LocalTables& tables = locals_[engine];
  int64_t reached = 0;
  auto& channels = tables.maps[size_t(kind)];
  if (auto it = channels.find(channel); it != channels.end()) {
    Frame frame({MessageKind(kind), channel, message});
    for (ConnState* st : it->second) st->conn->SendAsync(frame.For(st->conn->resp_version()));
    reached += static_cast<int64_t>(it->second.size());
  }
  if (kind != PubSubKind::kChannel) return reached;
  for (const auto& [pattern, subs] : tables.maps[size_t(PubSubKind::kPattern)]) {
    if (!GlobMatch(pattern, channel)) continue;
    Frame frame({"pmessage", pattern, channel, message});
    for (ConnState* st : subs) st->conn->SendAsync(frame.For(st->conn->resp_version()));
    reached += static_cast<int64_t>(subs.size());
  }
  return reached;
}

bool InSubscribedMode(const ConnState& state) {
  return state.pubsub != nullptr && state.pubsub->total() > 0;
}

bool SubscribedModeForbids(const ConnState& state, const CommandSpec& spec) {
  if (!InSubscribedMode(state) || state.conn->resp_version() != io::RespVersion::kResp2) {
    return false;
  }
  return !spec.HasFlag(kCmdSubscribedOk);
}

void SendSubscribedModeError(io::ReplyBuilder& rb, const CommandSpec& spec) {
  rb.SendError(StrCat("ERR Can't execute '", spec.name,
                      "': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are "
                      "allowed in this context"));
}

}  // namespace dashkv
