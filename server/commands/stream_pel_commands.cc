// XACK, XPENDING, XCLAIM and XAUTOCLAIM (Redis 7.0 semantics): single-key commands on the
// pending entries lists of a consumer group, run on the key's shard.
#include <algorithm>
#include <climits>
#include <optional>
#include <string>
#include <vector>

#include "server/cmd_context.h"
#include "server/commands/stream_group_util.h"
#include "server/values/stream_groups.h"
#include "server/values/stream_value.h"

namespace dashkv::group_cmd {

// ---------------------------------------------------------------------------------------------
// XACK, XPENDING, XCLAIM, XAUTOCLAIM

// XACK key group id [id ...]
void CmdXAck(CmdArgs args, ShardCmdContext& ctx) {
  OpResult<std::pair<StreamValue*, StreamGroup*>> found =
      FindGroup(ctx.db, args[1], args[2], ctx.now_ms, /*for_write=*/true);
  ctx.NoChange();  // Redis signals no change of group state to WATCH
  if (!found) return ctx.SendStatus(found.status());
  if (found->second == nullptr) return ctx.rb.SendLong(0);
  std::vector<StreamID> ids;
  for (size_t i = 3; i < args.size(); ++i) {
    std::optional<StreamID> id = ParseStreamID(args[i], 0, /*strict=*/true);
    if (!id) return ctx.SendStatus(OpStatus::kStreamInvalidId);
    ids.push_back(*id);
  }
  int64_t acked = 0;
  for (StreamID id : ids) acked += found->second->Ack(id);
  ctx.rb.SendLong(acked);
}

// XPENDING key group [[IDLE min-idle-time] start end count [consumer]]
void CmdXPending(CmdArgs args, ShardCmdContext& ctx) {
  const bool summary = args.size() == 3;
  if (!summary && (args.size() < 6 || args.size() > 9)) {
    return ctx.SendStatus(OpStatus::kSyntaxError);
  }
  int64_t min_idle = 0;
  StreamID start, end;
  int64_t count = 0;
  std::optional<std::string_view> consumer_name;
  if (!summary) {
    size_t at = 3;
    if (EqualsIgnoreCase(args[3], "IDLE")) {
      std::optional<int64_t> idle = ParseInt64(args[4]);
      if (!idle) return ctx.SendStatus(OpStatus::kNotAnInteger);
      if (args.size() < 8) return ctx.SendStatus(OpStatus::kSyntaxError);
      min_idle = *idle;
      at += 2;
    }
    std::optional<int64_t> n = ParseInt64(args[at + 2]);
    if (!n) return ctx.SendStatus(OpStatus::kNotAnInteger);
    count = std::max<int64_t>(*n, 0);
    OpResult<StreamID> s = ParseRangeBound(args[at], true);
    if (!s) return ctx.SendStatus(s.status());
    OpResult<StreamID> e = ParseRangeBound(args[at + 1], false);
    if (!e) return ctx.SendStatus(e.status());
    start = *s;
    end = *e;
    if (at + 3 < args.size()) consumer_name = args[at + 3];
  }
  OpResult<std::pair<StreamValue*, StreamGroup*>> found =
      FindGroup(ctx.db, args[1], args[2], ctx.now_ms);
  if (!found) return ctx.SendStatus(found.status());
  if (found->second == nullptr) return ctx.rb.SendError(NoGroupText(args[1], args[2]));
  const StreamGroup& g = *found->second;
  io::ReplyBuilder& rb = ctx.rb;
  if (summary) {
    rb.StartArray(4);
    rb.SendLong(static_cast<int64_t>(g.pel.size()));
    if (g.pel.empty()) {
      rb.SendNull();
      rb.SendNull();
      return rb.SendNullArray();
    }
    SendId(rb, g.pel.begin()->first);
    SendId(rb, g.pel.rbegin()->first);
    size_t with_pending = 0;
    for (const auto& [name, c] : g.consumers) with_pending += !c->pel.empty();
    rb.StartArray(with_pending);
    for (const auto& [name, c] : g.consumers) {
      if (c->pel.empty()) continue;
      rb.StartArray(2);
      rb.SendBulk(name);
      rb.SendBulk(std::to_string(c->pel.size()));
    }
    return;
  }
  io::ReplyBuilder body(rb.version());
  size_t n = 0;
  auto emit = [&](StreamID id, const StreamPending& p) {
    const int64_t idle = std::max<int64_t>(ctx.now_ms - p.delivery_time_ms, 0);
    if (min_idle != 0 && idle < min_idle) return;
    body.StartArray(4);
    SendId(body, id);
    body.SendBulk(p.consumer->name);
    body.SendLong(idle);
    body.SendLong(static_cast<int64_t>(p.delivery_count));
    ++n;
  };
  if (consumer_name) {
    StreamConsumer* c = g.FindConsumer(*consumer_name);
    if (c == nullptr) return rb.SendEmptyArray();
    for (auto it = c->pel.lower_bound(start);
         it != c->pel.end() && it->first <= end && static_cast<int64_t>(n) < count; ++it) {
      emit(it->first, *it->second);
    }
  } else {
    for (auto it = g.pel.lower_bound(start);
         it != g.pel.end() && it->first <= end && static_cast<int64_t>(n) < count; ++it) {
      emit(it->first, *it->second);
    }
  }
  rb.StartArray(n);
  rb.SendRaw(body.buffer());
}

namespace {

// Parses an integer argument of XCLAIM / XAUTOCLAIM, with its own error text.
std::optional<int64_t> ParseClaimInt(std::string_view arg, std::string_view what,
                                     std::string_view cmd, std::string* err) {
  std::optional<int64_t> n = ParseInt64(arg);
  if (!n) {
    *err = "ERR Invalid ";
    err->append(what).append(" argument for ").append(cmd);
  }
  return n;
}

}  // namespace

// XCLAIM key group consumer min-idle-time id [id ...] [IDLE ms] [TIME ms-unix-time]
// [RETRYCOUNT count] [FORCE] [JUSTID] [LASTID id]
void CmdXClaim(CmdArgs args, ShardCmdContext& ctx) {
  OpResult<std::pair<StreamValue*, StreamGroup*>> found =
      FindGroup(ctx.db, args[1], args[2], ctx.now_ms, /*for_write=*/true);
  ctx.NoChange();  // Redis signals no change of group state to WATCH
  if (!found) return ctx.SendStatus(found.status());
  if (found->second == nullptr) return ctx.rb.SendError(NoGroupText(args[1], args[2]));
  StreamValue& s = *found->first;
  StreamGroup& g = *found->second;
  std::string err;
  std::optional<int64_t> min_idle = ParseClaimInt(args[4], "min-idle-time", "XCLAIM", &err);
  if (!min_idle) return ctx.rb.SendError(err);
  std::vector<StreamID> ids;
  size_t i = 5;
  for (; i < args.size(); ++i) {
    std::optional<StreamID> id = ParseStreamID(args[i], 0, /*strict=*/true);
    if (!id) break;
    ids.push_back(*id);
  }
  const int64_t now = ctx.now_ms;
  int64_t retry = -1;
  int64_t delivery = -1;
  bool force = false, justid = false;
  StreamID last_id;
  for (; i < args.size(); ++i) {
    const bool more = i + 1 < args.size();
    std::string_view opt = args[i];
    if (EqualsIgnoreCase(opt, "FORCE")) {
      force = true;
    } else if (EqualsIgnoreCase(opt, "JUSTID")) {
      justid = true;
    } else if (EqualsIgnoreCase(opt, "IDLE") && more) {
      std::optional<int64_t> v = ParseClaimInt(args[++i], "IDLE option", "XCLAIM", &err);
      if (!v) return ctx.rb.SendError(err);
      delivery = now - *v;
    } else if (EqualsIgnoreCase(opt, "TIME") && more) {
      std::optional<int64_t> v = ParseClaimInt(args[++i], "TIME option", "XCLAIM", &err);
      if (!v) return ctx.rb.SendError(err);
      delivery = *v;
    } else if (EqualsIgnoreCase(opt, "RETRYCOUNT") && more) {
      std::optional<int64_t> v = ParseClaimInt(args[++i], "RETRYCOUNT option", "XCLAIM", &err);
      if (!v) return ctx.rb.SendError(err);
      retry = *v;
    } else if (EqualsIgnoreCase(opt, "LASTID") && more) {
      std::optional<StreamID> id = ParseStreamID(args[++i], 0, /*strict=*/true);
      if (!id) return ctx.SendStatus(OpStatus::kStreamInvalidId);
      last_id = *id;
    } else {
      std::string text = "ERR Unrecognized XCLAIM option '";
      return ctx.rb.SendError(text.append(opt).append("'"));
    }
  }
  if (last_id > g.last_id) g.last_id = last_id;
  if (delivery < 0 || delivery > now) delivery = now;
  StreamConsumer* c = nullptr;
  io::ReplyBuilder body(ctx.rb.version());
  size_t n = 0;
  for (StreamID id : ids) {
    auto it = g.pel.find(id);
    StreamPending* p = it == g.pel.end() ? nullptr : it->second.get();
    if (!s.Contains(id)) {
      if (p != nullptr) g.Ack(id);  // the entry is gone: drop it from the PEL
      continue;
    }
    if (p == nullptr) {
      if (!force) continue;
      p = g.AddUnowned(id, now);
    }
    if (p->consumer != nullptr && *min_idle > 0 && now - p->delivery_time_ms < *min_idle) {
      continue;
    }
    if (c == nullptr) c = LookupOrCreateConsumer(ctx.db, args[1], g, args[3], now);
    p->delivery_time_ms = delivery;
    if (retry >= 0) {
      p->delivery_count = static_cast<uint64_t>(retry);
    } else if (!justid) {
      ++p->delivery_count;
    }
    g.MoveTo(id, p, c);
    justid ? SendId(body, id) : SendEntryOrNull(body, s, id);
    ++n;
  }
  ctx.rb.StartArray(n);
  ctx.rb.SendRaw(body.buffer());
}

// XAUTOCLAIM key group consumer min-idle-time start [COUNT count] [JUSTID]
void CmdXAutoClaim(CmdArgs args, ShardCmdContext& ctx) {
  OpResult<std::pair<StreamValue*, StreamGroup*>> found =
      FindGroup(ctx.db, args[1], args[2], ctx.now_ms, /*for_write=*/true);
  ctx.NoChange();  // Redis signals no change of group state to WATCH
  if (!found) return ctx.SendStatus(found.status());
  if (found->second == nullptr) return ctx.rb.SendError(NoGroupText(args[1], args[2]));
  StreamValue& s = *found->first;
  StreamGroup& g = *found->second;
  std::string err;
  std::optional<int64_t> min_idle = ParseClaimInt(args[4], "min-idle-time", "XAUTOCLAIM", &err);
  if (!min_idle) return ctx.rb.SendError(err);
  OpResult<StreamID> start = ParseRangeBound(args[5], true);
  if (!start) return ctx.SendStatus(start.status());
  int64_t count = 100;
  bool justid = false;
  for (size_t i = 6; i < args.size(); ++i) {
    if (EqualsIgnoreCase(args[i], "COUNT") && i + 1 < args.size()) {
      std::optional<int64_t> n = ParseInt64(args[++i]);
      if (!n || *n < 1 || *n > LONG_MAX / 16) return ctx.rb.SendError("ERR COUNT must be > 0");
      // Redis allocates 16 bytes per COUNT up front and refuses a COUNT whose allocation fails;
      // past 2^47 bytes (the x86-64 user address space) it always does.
      if (*n > (int64_t{1} << 43)) {
        return ctx.rb.SendError(
            "ERR Insufficient memory, failed allocating transient memory, COUNT too high.");
      }
      count = *n;
    } else if (EqualsIgnoreCase(args[i], "JUSTID")) {
      justid = true;
    } else {
      return ctx.SendStatus(OpStatus::kSyntaxError);
    }
  }
  const int64_t now = ctx.now_ms;
  // Redis examines at most 10 entries per entry it may return.
  int64_t attempts = count > INT64_MAX / 10 ? INT64_MAX : count * 10;
  StreamConsumer* c = nullptr;
  std::vector<StreamID> deleted;
  io::ReplyBuilder body(ctx.rb.version());
  size_t n = 0;
  auto it = g.pel.lower_bound(*start);
  StreamID cursor;
  while (attempts > 0 && count > 0 && it != g.pel.end()) {
    --attempts;
    const StreamID id = it->first;
    StreamPending* p = it->second.get();
    ++it;
    if (!s.Contains(id)) {
      g.Ack(id);  // erasing invalidates `it`: find the next one again
      it = g.pel.upper_bound(id);
      deleted.push_back(id);
      --count;
      continue;
    }
    if (*min_idle > 0 && now - p->delivery_time_ms < *min_idle) continue;
    if (c == nullptr) c = LookupOrCreateConsumer(ctx.db, args[1], g, args[3], now);
    p->delivery_time_ms = now;
    if (!justid) ++p->delivery_count;
    g.MoveTo(id, p, c);
    justid ? SendId(body, id) : SendEntryOrNull(body, s, id);
    ++n;
    --count;
  }
  if (it != g.pel.end()) cursor = it->first;
  ctx.rb.StartArray(3);
  SendId(ctx.rb, cursor);
  ctx.rb.StartArray(n);
  ctx.rb.SendRaw(body.buffer());
  ctx.rb.StartArray(deleted.size());
  for (StreamID id : deleted) SendId(ctx.rb, id);
}


}  // namespace dashkv::group_cmd
