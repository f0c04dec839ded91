// The shard-side pops of the blocking commands (declared in server/blocking.h), built on the
// list and sorted-set ops of their families.
#include "server/blocking.h"
#include "server/commands/list_ops.h"
#include "server/commands/zset_ops.h"
#include "server/shard.h"

namespace dashkv {

OpStatus CheckBlockedKey(Shard& shard, const BlockRequest& req, size_t key, int64_t now_ms) {
  PrimeIterator it = shard.db(req.db).FindQuiet(req.keys[key], now_ms);
  if (it.is_done()) return OpStatus::kKeyNotFound;
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
    case BlockRequest::Kind::kListPop: {
      ListValue* list = *FindList(db, k, now_ms);
      ListValue::Options opts = ListOptions(*req.config);
      size_t n = std::min<size_t>(static_cast<size_t>(req.count), list->size());
      for (size_t i = 0; i < n; ++i) out.items.push_back(*list->Pop(req.from, opts));
      FinishListWrite(db, k, now_ms);
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
      PrimeIterator it = db.FindQuiet(k, now_ms);
      for (auto& [member, score] :
           PopElements(db, it, static_cast<uint64_t>(req.count), req.zmax)) {
        out.items.push_back(std::move(member));
        out.scores.push_back(score);
      }
      break;
    }
  }
  return out;
}

PopResult TryBlockedKeys(Shard& shard, const BlockRequest& req, size_t first, size_t last,
                         int64_t now_ms) {
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
