// The shard-side pops and reads of the blocking commands (declared in server/tx/blocking.h),
// built on the list, sorted-set and stream ops of their families.
#include <algorithm>

#include "server/tx/blocking.h"
#include "server/commands/list_ops.h"
#include "server/commands/stream_readgroup.h"
#include "server/commands/zset_ops.h"
#include "server/storage/shard.h"
#include "server/tx/transaction.h"

namespace dashkv {

OpStatus CheckBlockedKey(Shard& shard, const BlockRequest& req, size_t key, int64_t now_ms) {
  if (req.kind == BlockRequest::Kind::kStreamReadGroup) {
    // A gone key or group is served: with its error.
    OpStatus st = BlockedGroupState(shard.db(req.db), req.keys[key], req.group, now_ms);
    return st == OpStatus::kKeyNotFound ? st : OpStatus::kOk;
  }
  PrimeIterator it = shard.db(req.db).FindReadOnlyQuiet(req.keys[key], now_ms);
  if (it.is_done()) return OpStatus::kKeyNotFound;
  if (req.kind == BlockRequest::Kind::kStreamRead) {
    if (it->second.type() != ObjType::kStream) return OpStatus::kWrongType;
    return HasEntryAfter(AsStream(it->second), req.after[key]) ? OpStatus::kOk
                                                                : OpStatus::kKeyNotFound;
  }
  ObjType want = req.kind == BlockRequest::Kind::kZsetPop ? ObjType::kZset : ObjType::kList;
  return it->second.type() == want ? OpStatus::kOk : OpStatus::kWrongType;
}

PopResult ServeBlockedKey(Shard& shard, const BlockRequest& req, size_t key, int64_t now_ms) {
  DbSlice& db = shard.db(req.db);
  std::string_view k = req.keys[key];
  PopResult out;
  out.key = key;
  out.status = OpStatus::kOk;
  switch (req.kind) {
    case BlockRequest::Kind::kStreamRead: {
      PrimeIterator it = *db.FindReadOnlyOfType(k, ObjType::kStream, now_ms);
      out.streams.push_back(
          {key, ReadAfter(AsStream(it->second), req.after[key], static_cast<size_t>(req.count))});
      break;
    }
    case BlockRequest::Kind::kStreamReadGroup: {
      OpResult<std::vector<CopiedEntry>> read =
          DeliverToBlockedConsumer(db, k, req.group, req.consumer, req.noack,
                                   static_cast<size_t>(req.count), now_ms);
      // Redis signals no change of group state to WATCH.
      shard.changes().MarkUnmodified();
      if (!read) {
        out.status = read.status();
      } else {
        out.streams.push_back({key, std::move(*read)});
      }
      break;
    }
    case BlockRequest::Kind::kListPop: {
      PrimeIterator it = *FindMutableList(db, k, now_ms);
      out.items = OpListPop(db, it, k, req.from, static_cast<size_t>(req.count),
                            ListOptions(*req.config));
      break;
    }
    case BlockRequest::Kind::kListMove: {
      OpResult<std::optional<std::string>> moved =
          OpListMove(db, *req.config, k, req.dest, req.from, req.to, now_ms);
      if (!moved) {
        out.status = moved.status();
      } else {
        out.items.push_back(std::move(**moved));
      }
      break;
    }
    case BlockRequest::Kind::kZsetPop: {
      PrimeIterator it = *db.FindMutableOfType(k, ObjType::kZset, now_ms);
      for (auto& [member, score] :
           PopElements(db, it, k, static_cast<uint64_t>(req.count), req.zmax)) {
        out.items.push_back(std::move(member));
        out.scores.push_back(score);
      }
      break;
    }
  }
  return out;
}

void ReturnPopped(Shard& shard, const BlockRequest& req, const PopResult& popped,
                  int64_t now_ms) {
  if (popped.status != OpStatus::kOk || popped.items.empty()) return;
  DbSlice& db = shard.db(req.db);
  std::string_view k = req.keys[popped.key];
  switch (req.kind) {
    case BlockRequest::Kind::kStreamRead:
      return;  // a read took nothing
    case BlockRequest::Kind::kStreamReadGroup:
      return;  // the entries stay pending for the consumer, as when Redis's reply is lost
    case BlockRequest::Kind::kListMove:
      return;  // the element is in the destination (blocking.h Design)
    case BlockRequest::Kind::kListPop: {
      OpResult<PrimeIterator> entry = FindOrAddList(db, k, now_ms);
      if (!entry) return;  // overwritten by another type, or out of memory
      ListValue* list = GetList((*entry)->second);
      ListValue::Options opts = ListOptions(*req.config);
      // Popped first = nearest the end: pushed back last.
      for (auto it = popped.items.rbegin(); it != popped.items.rend(); ++it) {
        list->Push(*it, req.from, opts);
      }
      FinishListWrite(db, *entry, k);
      // The pop was announced: so is its undoing, a push to the same end.
      db.Notify(kNotifyList, PushEvent(req.from), k);
      break;
    }
    case BlockRequest::Kind::kZsetPop: {
      OpResult<DbSlice::AddResult> added = db.FindOrAddOfType(k, ObjType::kZset, now_ms);
      if (!added) return;
      ZsetLimits limits = ZsetLimits::From(*req.config);
      PrimeIterator it = added->it;
      if (added->inserted) {
        size_t max_len = 0;
        for (const std::string& m : popped.items) max_len = std::max(max_len, m.size());
        it->second.SetObject(ObjType::kZset, 0,
                             ZsetValue::Create(popped.items.size(), max_len, limits).release());
      }
      ZsetValue& z = AsZset(it->second);
      bool readded = false;
      for (size_t i = 0; i < popped.items.size(); ++i) {
        if (z.Score(popped.items[i])) continue;
        z.Set(popped.items[i], popped.scores[i], limits);
        readded = true;
      }
      // The pop was announced: so is its undoing.
      if (readded) db.Notify(kNotifyZset, "zadd", k);
      break;
    }
  }
}

OpStatus BlockedKeysError(Shard& shard, const BlockRequest& req, size_t first, size_t last,
                          int64_t now_ms) {
  if (req.kind != BlockRequest::Kind::kStreamReadGroup) return OpStatus::kOk;
  for (size_t k = first; k < last; ++k) {
    OpStatus st = BlockedGroupState(shard.db(req.db), req.keys[k], req.group, now_ms);
    if (st != OpStatus::kOk && st != OpStatus::kKeyNotFound) return st;
  }
  return OpStatus::kOk;
}

PopResult TryBlockedKeys(Shard& shard, const BlockRequest& req, size_t first, size_t last,
                         int64_t now_ms) {
  if (TakesOnServe(req) != ServeTakes::kElements) {  // readers read every key with entries
    PopResult out;
    if (OpStatus err = BlockedKeysError(shard, req, first, last, now_ms); err != OpStatus::kOk) {
      out.status = err;
      return out;
    }
    for (size_t k = first; k < last; ++k) {
      // A wrong-typed key counts as empty: the call checked the types before it blocked.
      if (CheckBlockedKey(shard, req, k, now_ms) != OpStatus::kOk) continue;
      PopResult one = ServeBlockedKey(shard, req, k, now_ms);
      out.status = OpStatus::kOk;
      out.key = out.streams.empty() ? k : out.key;
      for (StreamRead& r : one.streams) out.streams.push_back(std::move(r));
    }
    return out;
  }
  for (size_t k = first; k < last; ++k) {
    OpStatus st = CheckBlockedKey(shard, req, k, now_ms);
    if (st == OpStatus::kKeyNotFound) continue;
    if (st != OpStatus::kOk) {
      PopResult err;
      err.status = st;
      return err;
    }
    return ServeBlockedKey(shard, req, k, now_ms);
  }
  return PopResult{};
}

}  // namespace dashkv
