// Blocking commands (Redis 7.0 semantics): BLPOP, BRPOP, BRPOPLPUSH, BLMOVE, BLMPOP, BZPOPMIN,
// BZPOPMAX and BZMPOP, the blocking path of XREAD BLOCK and XREADGROUP BLOCK
// (RunBlockingStreamRead, called by stream_commands.cc and stream_readgroup_command.cc), and
// WAIT (a wait on no key while there are no replicas). How
// they park, wake and time out is described in server/tx/blocking.h.
//
// Each is a coordinator flagged kCmdBlocking (the server does not wrap it in intent locks):
//  - keys on one shard: one hop tries the keys in argument order and, if all are empty,
//    registers the client on that shard in the same callback (atomic: no write can slip in
//    between). If a transaction holds one of the keys, the hop is redone under KeyLocks.
//  - keys on several shards (or BLMOVE across shards): KeyLocks on every key, the keys tried in
//    argument order (one hop per run of keys on the same shard), then registration on every
//    involved shard before the locks are released; woken, the client retries under the locks.
//  - inside EXEC (ctx.locks held or ctx.in_exec) they never block: the timeout reply instead.
// Arguments are validated before anything blocks; the timeout runs on the connection's engine.
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <boost/asio/steady_timer.hpp>

#include "server/commands/blocking_commands.h"

#include "io/connection.h"
#include "server/tx/blocking.h"
#include "server/cmd_context.h"
#include "server/command_registry.h"
#include "server/commands/list_ops.h"
#include "server/commands/zset_ops.h"
#include "server/conn_state.h"
#include "server/config.h"
#include "server/cycle_clock.h"
#include "server/storage/shard_set.h"
#include "server/server_stats.h"
#include "server/tracking/tracking_hub.h"
#include "server/tx/transaction.h"

namespace dashkv {

namespace {

using boost::asio::awaitable;
using Kind = BlockRequest::Kind;

// The reply shape of each command.
enum class Shape : uint8_t {
  kKeyValue,          // BLPOP, BRPOP: [key, element]
  kValue,             // BLMOVE, BRPOPLPUSH: element
  kKeyValues,         // BLMPOP: [key, [elements]]
  kKeyMemberScore,    // BZPOPMIN, BZPOPMAX: [key, member, score]
  kKeyScoredMembers,  // BZMPOP: [key, [[member, score] ...]]
  kStreams,           // XREAD, XREADGROUP: [[key, [entry ...]] ...] (RESP3: a map)
};

// Parses a timeout in seconds (fractional allowed) as Redis 7.0 does; returns milliseconds,
// 0 for "forever".
OpResult<int64_t> ParseTimeout(std::string_view s, int64_t now_ms) {
  constexpr size_t kMaxChars = 5 * 1024;  // Redis's MAX_LONG_DOUBLE_CHARS
  if (s.empty() || s.size() >= kMaxChars || std::isspace(static_cast<unsigned char>(s[0]))) {
    return OpStatus::kTimeoutNotFloat;
  }
  std::string buf(s);
  char* end = nullptr;
  errno = 0;
  long double v = std::strtold(buf.c_str(), &end);
  if (*end != '\0' || std::isnan(v) ||
      (errno == ERANGE && (v == HUGE_VALL || v == -HUGE_VALL || v == 0))) {
    return OpStatus::kTimeoutNotFloat;
  }
  // Rounded up, as Redis: a positive timeout below 1 ms (0.001 itself is 0.99999... ms as a
  // long double) still expires, it never becomes 0 ("forever").
  long double ms = std::ceil(v * 1000);
  // Redis casts to long long; out of range (inf included) ends up negative on x86.
  constexpr long double kLimit = 9223372036854775807.0L;
  int64_t t = (ms > -kLimit && ms < kLimit) ? static_cast<int64_t>(ms) : INT64_MIN;
  if (t < 0) return OpStatus::kTimeoutNegative;
  if (t > 0 && t > INT64_MAX - now_ms) return OpStatus::kTimeoutOutOfRange;
  return t;
}

// numkeys key [key ...] LEFT|RIGHT / MIN|MAX [COUNT count] of BLMPOP and BZMPOP.
struct MPopArgs {
  size_t num_keys = 0;
  bool high = false;  // RIGHT / MAX
  int64_t count = 1;
};
OpResult<MPopArgs> ParseMPop(CmdArgs args, size_t numkeys_index, std::string_view low,
                             std::string_view high) {
  MPopArgs out;
  std::optional<int64_t> numkeys = ParseInt64(args[numkeys_index]);
  if (!numkeys || *numkeys <= 0) return OpStatus::kNumkeysNotPositive;
  if (static_cast<uint64_t>(*numkeys) >= args.size() - numkeys_index) {
    return OpStatus::kSyntaxError;  // no room for the direction
  }
  out.num_keys = static_cast<size_t>(*numkeys);
  ArgParser p(args, numkeys_index + 1 + out.num_keys);
  if (p.Check(high)) {
    out.high = true;
  } else if (!p.Check(low)) {
    return OpStatus::kSyntaxError;
  }
  if (p.Check("COUNT")) {
    out.count = p.NextInt(OpStatus::kCountNotPositive);
    if (!p.HasError() && out.count < 1) return OpStatus::kCountNotPositive;
  }
  if (p.HasNext()) p.SetError(OpStatus::kSyntaxError);
  if (p.HasError()) return p.error();
  return out;
}

// The reply of a command that blocked and timed out: a null array for all of them, BLMOVE
// included (Redis 7.0's replyToBlockedClientTimedOut); RESP3 null.
void SendTimeoutReply(io::ReplyBuilder& rb, Shape) { rb.SendNullArray(); }

// The reply of a command that found nothing and may not block (inside EXEC): BLMOVE and
// BRPOPLPUSH answer a null bulk there, the others a null array.
void SendNothingReply(io::ReplyBuilder& rb, Shape shape) {
  shape == Shape::kValue ? rb.SendNull() : rb.SendNullArray();
}

void SendPopResult(io::ReplyBuilder& rb, const BlockRequest& req, const PopResult& r,
                   Shape shape) {
  if (r.status != OpStatus::kOk) return SendStatus(rb, r.status);
  const std::string& key = req.keys[r.key];
  switch (shape) {
    case Shape::kStreams:
      return SendStreamReads(rb, req.keys, r.streams);
    case Shape::kKeyValue:
      rb.StartArray(2);
      rb.SendBulk(key);
      return rb.SendBulk(r.items[0]);
    case Shape::kValue:
      return rb.SendBulk(r.items[0]);
    case Shape::kKeyValues:
      rb.StartArray(2);
      rb.SendBulk(key);
      rb.StartArray(r.items.size());
      for (const std::string& s : r.items) rb.SendBulk(s);
      return;
    case Shape::kKeyMemberScore:
      rb.StartArray(3);
      rb.SendBulk(key);
      rb.SendBulk(r.items[0]);
      return SendScore(rb, r.scores[0]);
    case Shape::kKeyScoredMembers: {
      ScoredMembers items;
      for (size_t i = 0; i < r.items.size(); ++i) items.emplace_back(r.items[i], r.scores[i]);
      rb.StartArray(2);
      rb.SendBulk(key);
      return SendScoredMembers(rb, items, true, /*nested=*/true);
    }
  }
}

void SendWakeReply(ConnCmdContext& ctx, WakeReason why, Shape shape) {
  if (why == WakeReason::kUnblockError) return ctx.SendStatus(OpStatus::kUnblocked);
  if (why == WakeReason::kClosed) ctx.state.conn->RequestClose();
  SendTimeoutReply(ctx.rb, shape);
}

// The shard owning every key (and the destination), or nullopt.
std::optional<unsigned> SingleShard(ShardSet& ss, const BlockRequest& req) {
  unsigned sid = ss.ShardOf(req.keys[0]);
  for (const std::string& k : req.keys) {
    if (ss.ShardOf(k) != sid) return std::nullopt;
  }
  if (req.kind == Kind::kListMove && ss.ShardOf(req.dest) != sid) return std::nullopt;
  return sid;
}

// Readers lock their keys shared (they change nothing), the others exclusive (XREADGROUP
// changes its group).
LockMode ModeOf(const BlockRequest& req) {
  return TakesOnServe(req) == ServeTakes::kNothing ? LockMode::kShared : LockMode::kExclusive;
}

void AddLocks(KeyLocks& locks, const BlockRequest& req) {
  for (const std::string& k : req.keys) locks.Add(req.db, k, ModeOf(req));
  if (req.kind == Kind::kListMove) locks.Add(req.db, req.dest, LockMode::kExclusive);
}

bool KeysLocked(Shard& shard, const BlockRequest& req) {
  if (shard.locks().empty()) return false;
  for (const std::string& k : req.keys) {
    if (shard.locks().Conflicts(LockHashOf(req.db, k), ModeOf(req))) return true;
  }
  return req.kind == Kind::kListMove &&
         shard.locks().Conflicts(LockHashOf(req.db, req.dest), LockMode::kExclusive);
}

// BLMOVE with source and destination on different shards, under locks on both. The keyspace
// events come in Redis's order: the destination's push, then the source's pop (and `del`),
// raised by a last hop on the source's shard when anyone listens.
awaitable<PopResult> MoveAcrossShards(ShardSet& ss, const BlockRequest& req, int64_t now) {
  unsigned src = ss.ShardOf(req.keys[0]), dst = ss.ShardOf(req.dest);
  OpStatus dst_status = co_await ss.Await(dst, [&](Shard& s) {
    PrimeIterator it = s.db(req.db).FindReadOnlyQuiet(req.dest, now);
    return !it.is_done() && it->second.type() != ObjType::kList ? OpStatus::kWrongType
                                                                : OpStatus::kOk;
  });
  bool emptied = false, notify = false;
  PopResult popped = co_await ss.Await(src, [&](Shard& s) {
    PopResult out;
    out.status = CheckBlockedKey(s, req, 0, now);
    if (out.status != OpStatus::kOk) return out;  // missing (block) or wrong type
    if (dst_status != OpStatus::kOk) {
      out.status = dst_status;
      return out;
    }
    DbSlice& slice = s.db(req.db);
    PrimeIterator it = *FindMutableList(slice, req.keys[0], now);
    ListValue* list = GetList(it->second);
    out.items.push_back(*list->Pop(req.from, ListOptions(*req.config)));
    notify = s.changes().notifies(kNotifyList) || s.changes().notifies(kNotifyGeneric);
    if (list->empty()) {
      slice.Erase(it, RemoveReason::kDeleted);
      emptied = true;
    } else {
      it->second.set_object_encoding(list->encoding());
    }
    return out;
  });
  if (popped.status != OpStatus::kOk) co_return popped;
  const std::string& value = popped.items[0];
  OpStatus pushed = co_await ss.Await(dst, [&](Shard& s) {
    DbSlice& slice = s.db(req.db);
    OpResult<PrimeIterator> it = FindOrAddList(slice, req.dest, now);
    if (!it) return it.status();
    GetList((*it)->second)->Push(value, req.to, ListOptions(*req.config));
    FinishListWrite(slice, *it, req.dest);
    slice.Notify(kNotifyList, PushEvent(req.to), req.dest);
    return OpStatus::kOk;
  });
  if (pushed == OpStatus::kOk) {
    if (notify) {
      co_await ss.Await(src, [&](Shard& s) {
        DbSlice& slice = s.db(req.db);
        slice.Notify(kNotifyList, PopEvent(req.from), req.keys[0]);
        if (emptied) slice.Notify(kNotifyGeneric, "del", req.keys[0]);
      });
    }
    co_return popped;
  }
  co_await ss.Await(src, [&](Shard& s) {  // out of memory: give the element back, silently
    OpResult<PrimeIterator> it = FindOrAddList(s.db(req.db), req.keys[0], now);
    if (!it) return;
    GetList((*it)->second)->Push(value, req.from, ListOptions(*req.config));
    FinishListWrite(s.db(req.db), *it, req.keys[0]);
  });
  popped.status = pushed;
  co_return popped;
}

// Tries the keys in argument order (REQUIRES: their locks are held, or one shard owns them).
awaitable<PopResult> Attempt(ShardSet& ss, const BlockRequest& req) {
  int64_t now = NowMs();
  if (req.kind == Kind::kListMove && ss.ShardOf(req.keys[0]) != ss.ShardOf(req.dest)) {
    co_return co_await MoveAcrossShards(ss, req, now);
  }
  const bool consumes = TakesOnServe(req) == ServeTakes::kElements;
  // The keys in runs on one shard: [runs[j], runs[j + 1]), one hop each.
  const size_t n = req.keys.size();
  std::vector<size_t> runs{0};
  while (runs.back() < n) {
    const unsigned sid = ss.ShardOf(req.keys[runs.back()]);
    size_t end = runs.back() + 1;
    while (end < n && ss.ShardOf(req.keys[end]) == sid) ++end;
    runs.push_back(end);
  }
  PopResult read;  // readers: every key with entries
  // XREADGROUP: a key or group gone on any shard answers the call before any key is served.
  if (req.kind == Kind::kStreamReadGroup) {
    for (size_t j = 0; j + 1 < runs.size(); ++j) {
      const size_t first = runs[j], last = runs[j + 1];
      read.status = co_await ss.Await(ss.ShardOf(req.keys[first]), [&](Shard& s) {
        return BlockedKeysError(s, req, first, last, now);
      });
      if (read.status != OpStatus::kOk) co_return read;
    }
    read.status = OpStatus::kKeyNotFound;
  }
  for (size_t j = 0; j + 1 < runs.size(); ++j) {
    const size_t first = runs[j], last = runs[j + 1];
    PopResult r = co_await ss.Await(ss.ShardOf(req.keys[first]), [&](Shard& s) {
      return TryBlockedKeys(s, req, first, last, now);
    });
    if (consumes || (r.status != OpStatus::kOk && r.status != OpStatus::kKeyNotFound)) {
      if (r.status != OpStatus::kKeyNotFound) co_return r;
    } else if (r.status == OpStatus::kOk) {
      if (read.streams.empty()) read.key = r.key;
      read.status = OpStatus::kOk;
      for (StreamRead& one : r.streams) read.streams.push_back(std::move(one));
    }
  }
  co_return read;
}

// Returns whether the client of a woken command has left: its peer watch fired, CLIENT KILL
// closed its socket, or the kernel knows the peer closed (blocking.h Design, check 2).
bool ClientLeft(ConnCmdContext& ctx, const BlockedCall& call) {
  return call.interrupt() == WakeReason::kClosed || SocketPeerGone(ctx.state.conn->fd());
}

// Gives back what was popped for a client that left (ReturnPopped) as one shard task, after any
// transaction holding the key; the write serves the next waiter. With `locks_held` the caller
// holds the key's locks (a cross-shard retry): their release serves the waiters.
awaitable<void> GiveBack(ShardSet& ss, const BlockRequest& req, const PopResult& popped,
                         bool locks_held) {
  if (popped.status != OpStatus::kOk || req.kind == Kind::kListMove ||
      TakesOnServe(req) != ServeTakes::kElements) {
    co_return;  // nothing to give back (XREADGROUP: the entries stay pending, see ReturnPopped)
  }
  const std::string& key = req.keys[popped.key];
  const unsigned sid = ss.ShardOf(key);
  if (locks_held) {
    co_await ss.Await(sid, [&](Shard& s) { ReturnPopped(s, req, popped, NowMs()); });
    co_return;
  }
  bool done = co_await ss.Await(sid, [&](Shard& s) {
    if (!s.locks().empty() && s.locks().Conflicts(LockHashOf(req.db, key), LockMode::kExclusive)) {
      return false;
    }
    ReturnPopped(s, req, popped, NowMs());
    s.blocking().ServeReady();
    return true;
  });
  if (done) co_return;
  KeyLocks locks(ss);  // a transaction holds the key: queue behind it
  locks.Add(req.db, key, LockMode::kExclusive);
  co_await locks.Acquire();
  co_await ss.Await(sid, [&](Shard& s) { ReturnPopped(s, req, popped, NowMs()); });
  locks.Release();
}

// While a command is parked: marks the connection blocked, runs the timeout and watches for a
// disconnect. Thread: the connection's engine.
class WaitScope {
 public:
  WaitScope(ConnCmdContext& ctx, const std::shared_ptr<BlockedCall>& call, int64_t deadline_ms)
      : ctx_(ctx), timer_(ctx.state.conn->engine().context()), start_(CycleClock::Now()) {
    ctx.state.blocked = call;
    ctx.stats().blocked_clients().fetch_add(1, std::memory_order_relaxed);
    if (deadline_ms > 0) {
      timer_.expires_after(std::chrono::milliseconds(std::max<int64_t>(0, deadline_ms - NowMs())));
      timer_.async_wait([call](boost::system::error_code ec) {
        if (!ec) call->Interrupt(WakeReason::kTimeout);
      });
    }
    ctx.state.conn->WatchPeer([call] { call->Interrupt(WakeReason::kClosed); });
    // As Redis, what the batch's earlier commands replied goes out before the client waits,
    // and so do a tracking client's invalidations, now and as they come while it waits. Not
    // under CLIENT REPLY OFF|SKIP, whose dropping keeps offsets into the reply buffer.
    if (ctx.state.reply_mode == ConnState::ReplyMode::kOn) {
      tracking_parked_ = TrackingHub::Park(ctx.state, ctx.rb);
      if (!ctx.rb.empty()) {
        ctx.state.conn->SendAsync(ctx.rb.buffer());
        ctx.rb.Clear();
      }
    }
  }
  ~WaitScope() {
    if (tracking_parked_) TrackingHub::Unpark(ctx_.state);
    timer_.cancel();
    ctx_.state.conn->StopWatchingPeer();
    ctx_.state.blocked.reset();
    ctx_.stats().blocked_clients().fetch_sub(1, std::memory_order_relaxed);
    ctx_.wait_ticks += CycleClock::Now() - start_;  // parked: not the command's run time
  }
  WaitScope(const WaitScope&) = delete;
  WaitScope& operator=(const WaitScope&) = delete;

 private:
  ConnCmdContext& ctx_;
  boost::asio::steady_timer timer_;
  const uint64_t start_;
  bool tracking_parked_ = false;  // TrackingHub::Park took over the invalidations
};

// Keys on one shard: try and register in one hop; parked, the shard serves the client.
awaitable<void> BlockOnShard(ConnCmdContext& ctx, std::shared_ptr<const BlockRequest> req,
                             unsigned sid, int64_t deadline_ms, Shape shape) {
  ShardSet& ss = ctx.shard_set();
  auto client =
      std::make_shared<BlockedClient>(&ctx.state.conn->engine(), req, true, ctx.state.conn->fd());
  enum class Step : uint8_t { kLocked, kDone, kParked, kRefused };
  PopResult res;
  std::vector<size_t> all(req->keys.size());
  for (size_t i = 0; i < all.size(); ++i) all[i] = i;
  auto attempt = [&](bool check_locks) {
    return ss.Await(sid, [&, check_locks](Shard& s) {
      if (check_locks && KeysLocked(s, *req)) return Step::kLocked;
      res = TryBlockedKeys(s, *req, 0, req->keys.size(), NowMs());
      if (res.status != OpStatus::kKeyNotFound) return Step::kDone;
      return s.blocking().Add(client, all) ? Step::kParked : Step::kRefused;
    });
  };
  Step step = co_await attempt(true);
  if (step == Step::kLocked) {  // a transaction holds a key: queue behind it
    KeyLocks locks(ss);
    AddLocks(locks, *req);
    co_await locks.Acquire();
    step = co_await attempt(false);
    locks.Release();
  }
  if (step == Step::kDone) co_return SendPopResult(ctx.rb, *req, res, shape);
  if (step == Step::kRefused) co_return SendTimeoutReply(ctx.rb, shape);
  auto call = std::make_shared<BlockedCall>();
  WakeReason why;
  {
    WaitScope scope(ctx, call, deadline_ms);
    call->SetCurrent(client);
    why = co_await client->Wait();
  }
  if (why == WakeReason::kServed) {
    if (!ClientLeft(ctx, *call)) co_return SendPopResult(ctx.rb, *req, client->result(), shape);
    co_await GiveBack(ss, *req, client->result(), /*locks_held=*/false);
    co_return ctx.state.conn->RequestClose();
  }
  ss.Post(sid, [client](Shard& s) { s.blocking().Remove(client.get()); });
  SendWakeReply(ctx, why, shape);
}

// Keys on several shards: attempts and registrations under KeyLocks; woken, retries.
awaitable<void> BlockAcrossShards(ConnCmdContext& ctx, std::shared_ptr<const BlockRequest> req,
                                  int64_t deadline_ms, Shape shape) {
  ShardSet& ss = ctx.shard_set();
  // The shards the client waits on, and its source keys on each.
  std::vector<unsigned> shards;
  std::vector<std::vector<size_t>> keys_on(ss.size());
  for (size_t i = 0; i < req->keys.size(); ++i) {
    unsigned sid = ss.ShardOf(req->keys[i]);
    if (keys_on[sid].empty()) shards.push_back(sid);
    keys_on[sid].push_back(i);
  }
  std::sort(shards.begin(), shards.end());
  auto unregister = [&](std::shared_ptr<BlockedClient> c) {
    return ss.AwaitMany(shards, [c](Shard& s) { s.blocking().Remove(c.get()); });
  };
  KeyLocks locks(ss);
  AddLocks(locks, *req);
  auto call = std::make_shared<BlockedCall>();
  std::optional<WaitScope> scope;
  std::shared_ptr<BlockedClient> prev;  // the previous wait (claimed by the wake)
  for (;;) {
    co_await locks.Acquire();
    // Woken, the client may have left: then it takes nothing, or gives back what it took
    // (blocking.h Design, check 2).
    const bool retry = prev != nullptr;
    bool left = retry && ClientLeft(ctx, *call);
    PopResult res;
    if (!left) res = co_await Attempt(ss, *req);
    if (retry && !left && res.status == OpStatus::kOk && ClientLeft(ctx, *call)) {
      co_await GiveBack(ss, *req, res, /*locks_held=*/true);
      left = true;
    }
    if (left) res = PopResult{};
    std::optional<WakeReason> stop = left ? WakeReason::kClosed : call->interrupt();
    if (res.status != OpStatus::kKeyNotFound || stop) {
      if (prev) co_await unregister(prev);
      locks.Release();
      scope.reset();
      if (res.status != OpStatus::kKeyNotFound) co_return SendPopResult(ctx.rb, *req, res, shape);
      co_return SendWakeReply(ctx, *stop, shape);
    }
    auto client = std::make_shared<BlockedClient>(&ctx.state.conn->engine(), req, false,
                                                  ctx.state.conn->fd());
    std::vector<uint8_t> added(ss.size(), 0);
    co_await ss.AwaitMany(shards, [&](Shard& s) {
      added[s.index()] = s.blocking().Add(client, keys_on[s.index()], prev.get()) ? 1 : 0;
    });
    locks.Release();
    bool refused = false;
    for (unsigned sid : shards) refused |= added[sid] == 0;
    if (refused) {  // shutting down
      co_await unregister(client);
      scope.reset();
      co_return SendTimeoutReply(ctx.rb, shape);
    }
    if (!scope) scope.emplace(ctx, call, deadline_ms);
    call->SetCurrent(client);
    WakeReason why = co_await client->Wait();
    if (why == WakeReason::kReady) {
      prev = client;
      continue;
    }
    co_await unregister(client);
    scope.reset();
    co_return SendWakeReply(ctx, why, shape);
  }
}

// Runs a parsed blocking command.
awaitable<void> RunBlocking(ConnCmdContext& ctx, std::shared_ptr<BlockRequest> request,
                            int64_t timeout_ms, Shape shape) {
  request->db = ctx.state.db;
  request->config = &ctx.config();
  std::shared_ptr<const BlockRequest> req = std::move(request);
  ShardSet& ss = ctx.shard_set();
  if (ctx.locks != nullptr || ctx.in_exec) {  // inside EXEC: never blocks
    PopResult res = co_await Attempt(ss, *req);
    if (res.status == OpStatus::kKeyNotFound) co_return SendNothingReply(ctx.rb, shape);
    co_return SendPopResult(ctx.rb, *req, res, shape);
  }
  int64_t deadline = timeout_ms > 0 ? ctx.now_ms + timeout_ms : 0;
  if (std::optional<unsigned> sid = SingleShard(ss, *req)) {
    co_await BlockOnShard(ctx, req, *sid, deadline, shape);
  } else {
    co_await BlockAcrossShards(ctx, req, deadline, shape);
  }
}

// BLPOP / BRPOP key [key ...] timeout
template <ListEnd kEnd>
awaitable<void> CmdBPop(CmdArgs args, ConnCmdContext& ctx) {
  OpResult<int64_t> timeout = ParseTimeout(args.back(), ctx.now_ms);
  if (!timeout) co_return ctx.SendStatus(timeout.status());
  auto req = std::make_shared<BlockRequest>();
  req->kind = Kind::kListPop;
  req->from = kEnd;
  req->keys.assign(args.begin() + 1, args.end() - 1);
  co_await RunBlocking(ctx, std::move(req), *timeout, Shape::kKeyValue);
}

awaitable<void> RunMove(CmdArgs args, ConnCmdContext& ctx, ListEnd from, ListEnd to,
                        std::string_view timeout_arg) {
  OpResult<int64_t> timeout = ParseTimeout(timeout_arg, ctx.now_ms);
  if (!timeout) co_return ctx.SendStatus(timeout.status());
  auto req = std::make_shared<BlockRequest>();
  req->kind = Kind::kListMove;
  req->keys.emplace_back(args[1]);
  req->dest = std::string(args[2]);
  req->from = from;
  req->to = to;
  co_await RunBlocking(ctx, std::move(req), *timeout, Shape::kValue);
}

// BRPOPLPUSH source destination timeout
awaitable<void> CmdBRPopLPush(CmdArgs args, ConnCmdContext& ctx) {
  co_await RunMove(args, ctx, ListEnd::kTail, ListEnd::kHead, args[3]);
}

// BLMOVE source destination LEFT|RIGHT LEFT|RIGHT timeout
awaitable<void> CmdBLMove(CmdArgs args, ConnCmdContext& ctx) {
  std::optional<ListEnd> from = ParseListEnd(args[3]), to = ParseListEnd(args[4]);
  if (!from || !to) co_return ctx.SendStatus(OpStatus::kSyntaxError);
  co_await RunMove(args, ctx, *from, *to, args[5]);
}

// BLMPOP timeout numkeys key [key ...] LEFT|RIGHT [COUNT count]
awaitable<void> CmdBLMPop(CmdArgs args, ConnCmdContext& ctx) {
  // Redis checks numkeys, the direction and COUNT before the timeout.
  OpResult<MPopArgs> a = ParseMPop(args, 2, "LEFT", "RIGHT");
  if (!a) co_return ctx.SendStatus(a.status());
  OpResult<int64_t> timeout = ParseTimeout(args[1], ctx.now_ms);
  if (!timeout) co_return ctx.SendStatus(timeout.status());
  auto req = std::make_shared<BlockRequest>();
  req->kind = Kind::kListPop;
  req->from = a->high ? ListEnd::kTail : ListEnd::kHead;
  req->count = a->count;
  req->keys.assign(args.begin() + 3, args.begin() + 3 + a->num_keys);
  co_await RunBlocking(ctx, std::move(req), *timeout, Shape::kKeyValues);
}

// BZPOPMIN / BZPOPMAX key [key ...] timeout
template <bool kMax>
awaitable<void> CmdBZPop(CmdArgs args, ConnCmdContext& ctx) {
  OpResult<int64_t> timeout = ParseTimeout(args.back(), ctx.now_ms);
  if (!timeout) co_return ctx.SendStatus(timeout.status());
  auto req = std::make_shared<BlockRequest>();
  req->kind = Kind::kZsetPop;
  req->zmax = kMax;
  req->keys.assign(args.begin() + 1, args.end() - 1);
  co_await RunBlocking(ctx, std::move(req), *timeout, Shape::kKeyMemberScore);
}

// BZMPOP timeout numkeys key [key ...] MIN|MAX [COUNT count]
awaitable<void> CmdBZMPop(CmdArgs args, ConnCmdContext& ctx) {
  // Redis checks numkeys, the direction and COUNT before the timeout.
  OpResult<MPopArgs> a = ParseMPop(args, 2, "MIN", "MAX");
  if (!a) co_return ctx.SendStatus(a.status());
  OpResult<int64_t> timeout = ParseTimeout(args[1], ctx.now_ms);
  if (!timeout) co_return ctx.SendStatus(timeout.status());
  auto req = std::make_shared<BlockRequest>();
  req->kind = Kind::kZsetPop;
  req->zmax = a->high;
  req->count = a->count;
  req->keys.assign(args.begin() + 3, args.begin() + 3 + a->num_keys);
  co_await RunBlocking(ctx, std::move(req), *timeout, Shape::kKeyScoredMembers);
}

// WAIT numreplicas timeout. dashkv has no replicas, so no replica ever acknowledges a write:
// 0 at once when none is asked for (numreplicas <= 0) or inside EXEC, else 0 when the timeout
// (milliseconds, 0: never) passes or CLIENT UNBLOCK ends the wait — Redis 7.0's answers without
// replicas. The waiting client counts in blocked_clients and CLIENT UNBLOCK finds it.
awaitable<void> CmdWait(CmdArgs args, ConnCmdContext& ctx) {
  const std::optional<int64_t> replicas = ParseInt64(args[1]);
  if (!replicas) co_return ctx.SendStatus(OpStatus::kNotAnInteger);
  const std::optional<int64_t> timeout = ParseInt64(args[2]);
  if (!timeout) co_return ctx.SendStatus(OpStatus::kTimeoutNotInteger);
  if (*timeout < 0) co_return ctx.SendStatus(OpStatus::kTimeoutNegative);
  const int64_t now = NowMs();
  // A deadline past the clock's range ends at once (Redis 7.0's overflows into the past).
  if (*replicas <= 0 || ctx.locks != nullptr || ctx.in_exec || *timeout > INT64_MAX - now) {
    co_return ctx.rb.SendLong(0);
  }
  // A wait on no key: nothing but the timeout, CLIENT UNBLOCK or a disconnect finishes it.
  auto client = std::make_shared<BlockedClient>(&ctx.state.conn->engine(),
                                                std::make_shared<const BlockRequest>(), true,
                                                ctx.state.conn->fd());
  auto call = std::make_shared<BlockedCall>();
  WakeReason why;
  {
    WaitScope scope(ctx, call, *timeout > 0 ? now + *timeout : 0);
    call->SetCurrent(client);
    why = co_await client->Wait();
  }
  if (why == WakeReason::kUnblockError) co_return ctx.SendStatus(OpStatus::kUnblocked);
  if (why == WakeReason::kClosed) ctx.state.conn->RequestClose();
  ctx.rb.SendLong(0);
}

}  // namespace

awaitable<void> RunBlockingStreamRead(ConnCmdContext& ctx, std::shared_ptr<BlockRequest> request,
                                      int64_t timeout_ms) {
  co_await RunBlocking(ctx, std::move(request), timeout_ms, Shape::kStreams);
}

namespace {

CommandSpec Spec(std::string name, int arity, uint32_t flags, int first_key, int last_key,
                 int numkeys_index, std::string_view group, std::string_view since,
                 std::string_view summary) {
  CommandSpec s = MakeSpec(std::move(name), arity, flags | kCmdWrite | kCmdBlocking, first_key,
                           last_key,
                           {"write", group == "list" ? "list" : "sortedset",
                            (flags & kCmdFast) ? "fast" : "slow", "blocking"},
                           group, since, summary);
  s.numkeys_index = numkeys_index;
  return s;
}

}  // namespace

void RegisterBlockingCommands(CommandRegistry* r) {
  r->RegisterCoord(Spec("blpop", -3, kCmdNoScript, 1, -2, 0, "list", "2.0.0",
                        "Removes and returns the first element in a list. Blocks until an "
                        "element is available otherwise. Deletes the list if the last element "
                        "was popped."), CmdBPop<ListEnd::kHead>);
  r->RegisterCoord(Spec("brpop", -3, kCmdNoScript, 1, -2, 0, "list", "2.0.0",
                        "Removes and returns the last element in a list. Blocks until an "
                        "element is available otherwise. Deletes the list if the last element "
                        "was popped."), CmdBPop<ListEnd::kTail>);
  r->RegisterCoord(Spec("brpoplpush", 4, kCmdDenyOom | kCmdNoScript, 1, 2, 0, "list", "2.2.0",
                        "Pops an element from a list, pushes it to another list and returns it. "
                        "Block until an element is available otherwise. Deletes the list if the "
                        "last element was popped."), CmdBRPopLPush);
  r->RegisterCoord(Spec("blmove", 6, kCmdDenyOom | kCmdNoScript, 1, 2, 0, "list", "6.2.0",
                        "Pops an element from a list, pushes it to another list and returns it. "
                        "Blocks until an element is available otherwise. Deletes the list if "
                        "the last element was moved."), CmdBLMove);
  r->RegisterCoord(Spec("blmpop", -5, 0, 0, 0, 2, "list", "7.0.0",
                        "Pops the first element from one of multiple lists. Blocks until an "
                        "element is available otherwise. Deletes the list if the last element "
                        "was popped."), CmdBLMPop);
  r->RegisterCoord(Spec("bzpopmin", -3, kCmdFast | kCmdNoScript, 1, -2, 0, "sorted-set", "5.0.0",
                        "Removes and returns the member with the lowest score from one or more "
                        "sorted sets. Blocks until a member is available otherwise. Deletes the "
                        "sorted set if the last element was popped."), CmdBZPop<false>);
  r->RegisterCoord(Spec("bzpopmax", -3, kCmdFast | kCmdNoScript, 1, -2, 0, "sorted-set", "5.0.0",
                        "Removes and returns the member with the highest score from one or more "
                        "sorted sets. Blocks until a member available otherwise. Deletes the "
                        "sorted set if the last element was popped."), CmdBZPop<true>);
  r->RegisterCoord(Spec("bzmpop", -5, 0, 0, 0, 2, "sorted-set", "7.0.0",
                        "Removes and returns a member by score from one or more sorted sets. "
                        "Blocks until a member is available otherwise. Deletes the sorted set "
                        "if the last element was popped."), CmdBZMPop);
  CommandSpec wait = MakeSpec("wait", 3, kCmdNoScript, 0, 0, {"slow", "connection"}, "generic",
                              "3.0.0",
                              "Wait for the synchronous replication of all the write commands "
                              "sent in the context of the current connection");
  wait.tips = {"request_policy:all_shards", "response_policy:agg_min"};
  r->RegisterCoord(std::move(wait), CmdWait);
}

}  // namespace dashkv
