#include "server/commands/list_ops.h"

#include <algorithm>

#include "core/str_util.h"

namespace dashkv {

ListValue::Options ListOptions(const Config& config) {
  ListValue::Options o;
  o.fill = static_cast<int>(config.list_max_listpack_size.load(std::memory_order_relaxed));
  o.compress_depth = static_cast<int>(config.list_compress_depth.load(std::memory_order_relaxed));
  return o;
}

OpResult<const ListValue*> FindList(DbSlice& db, std::string_view key, int64_t now_ms) {
  OpResult<PrimeIterator> res = db.FindReadOnlyOfType(key, ObjType::kList, now_ms);
  if (!res) return res.status();
  return GetList((*res)->second);
}

OpResult<PrimeIterator> FindMutableList(DbSlice& db, std::string_view key, int64_t now_ms) {
  return db.FindMutableOfType(key, ObjType::kList, now_ms);
}

OpResult<PrimeIterator> FindOrAddList(DbSlice& db, std::string_view key, int64_t now_ms) {
  OpResult<DbSlice::AddResult> added = db.FindOrAddOfType(key, ObjType::kList, now_ms);
  if (!added) return added.status();
  if (added->inserted) {
    added->it->second.SetObject(ObjType::kList, ListValue::kListpack, new ListValue());
  }
  return added->it;
}

bool FinishListWrite(DbSlice& db, PrimeIterator it, std::string_view key) {
  ListValue* list = GetList(it->second);
  if (!list->empty()) {
    it->second.set_object_encoding(list->encoding());
    return false;
  }
  db.Erase(it, RemoveReason::kDeleted);
  db.Notify(kNotifyGeneric, "del", key);
  return true;
}

std::string_view PushEvent(ListEnd end) { return end == ListEnd::kHead ? "lpush" : "rpush"; }
std::string_view PopEvent(ListEnd end) { return end == ListEnd::kHead ? "lpop" : "rpop"; }

std::vector<std::string> OpListPop(DbSlice& db, PrimeIterator it, std::string_view key,
                                   ListEnd end, size_t count, const ListValue::Options& opts) {
  ListValue* list = GetList(it->second);
  size_t n = std::min(count, list->size());
  std::vector<std::string> out;
  out.reserve(n);
  for (size_t i = 0; i < n; ++i) out.push_back(*list->Pop(end, opts));
  db.Notify(kNotifyList, PopEvent(end), key);
  FinishListWrite(db, it, key);
  return out;
}

std::optional<ListEnd> ParseListEnd(std::string_view s) {
  if (EqualsIgnoreCase(s, "LEFT")) return ListEnd::kHead;
  if (EqualsIgnoreCase(s, "RIGHT")) return ListEnd::kTail;
  return std::nullopt;
}

OpResult<std::optional<std::string>> OpListMove(DbSlice& db, const Config& config,
                                                std::string_view src, std::string_view dst,
                                                ListEnd from, ListEnd to, int64_t now_ms) {
  // The checks only read, as a write's lookups: no keyspace hit or miss (Redis: a missing
  // source answers nil whatever the destination holds).
  PrimeIterator dit = db.FindReadOnlyQuiet(dst, now_ms);
  const bool dst_wrong = !dit.is_done() && dit->second.type() != ObjType::kList;
  PrimeIterator source = db.FindReadOnlyQuiet(src, now_ms);
  if (source.is_done()) return std::optional<std::string>();
  if (source->second.type() != ObjType::kList || dst_wrong) return OpStatus::kWrongType;
  ListValue::Options opts = ListOptions(config);
  // The destination first: creating it may move entries, and it must exist before the pop (the
  // element is never lost to an allocation failure).
  OpResult<PrimeIterator> dest = FindOrAddList(db, dst, now_ms);
  if (!dest) return dest.status();
  OpResult<PrimeIterator> sit = src == dst ? dest : FindMutableList(db, src, now_ms);
  if (!sit) return sit.status();
  ListValue* dlist = GetList((*dest)->second);
  ListValue* slist = GetList((*sit)->second);
  std::optional<std::string> v = slist->Pop(from, opts);
  dlist->Push(*v, to, opts);
  (*dest)->second.set_object_encoding(dlist->encoding());
  db.Notify(kNotifyList, PushEvent(to), dst);
  db.Notify(kNotifyList, PopEvent(from), src);
  if (src != dst) FinishListWrite(db, *sit, src);
  return v;
}

}  // namespace dashkv
