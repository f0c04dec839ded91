#include "server/commands/list_ops.h"

#include "core/str_util.h"

namespace dashkv {

ListValue::Options ListOptions(const Config& config) {
  ListValue::Options o;
  o.fill = static_cast<int>(config.list_max_listpack_size.load(std::memory_order_relaxed));
  o.compress_depth = static_cast<int>(config.list_compress_depth.load(std::memory_order_relaxed));
  return o;
}

OpResult<ListValue*> FindList(DbSlice& db, std::string_view key, int64_t now_ms) {
  OpResult<PrimeIterator> res = db.FindOfType(key, ObjType::kList, now_ms);
  if (!res) return res.status();
  return GetList((*res)->second);
}

OpResult<ListValue*> FindOrAddList(DbSlice& db, std::string_view key, int64_t now_ms) {
  OpResult<DbSlice::AddResult> added = db.FindOrAddOfType(key, ObjType::kList, now_ms);
  if (!added) return added.status();
  if (!added->inserted) return GetList(added->it->second);
  auto* list = new ListValue();
  added->it->second.SetObject(ObjType::kList, ListValue::kListpack, list);
  return list;
}

void FinishListWrite(DbSlice& db, std::string_view key, int64_t now_ms) {
  PrimeIterator it = db.FindQuiet(key, now_ms);
  if (it.is_done() || it->second.type() != ObjType::kList) return;
  ListValue* list = GetList(it->second);
  if (list->empty()) return db.Erase(it);
  it->second.set_object_encoding(list->encoding());
}

std::optional<ListEnd> ParseListEnd(std::string_view s) {
  if (EqualsIgnoreCase(s, "LEFT")) return ListEnd::kHead;
  if (EqualsIgnoreCase(s, "RIGHT")) return ListEnd::kTail;
  return std::nullopt;
}

OpResult<std::optional<std::string>> OpListMove(DbSlice& db, const Config& config,
                                                std::string_view src, std::string_view dst,
                                                ListEnd from, ListEnd to, int64_t now_ms) {
  OpResult<ListValue*> source = FindList(db, src, now_ms);
  if (!source) {
    if (source.status() == OpStatus::kKeyNotFound) return std::optional<std::string>();
    return source.status();
  }
  PrimeIterator dit = db.FindQuiet(dst, now_ms);
  if (!dit.is_done() && dit->second.type() != ObjType::kList) return OpStatus::kWrongType;
  ListValue::Options opts = ListOptions(config);
  std::optional<std::string> v = (*source)->Pop(from, opts);
  FinishListWrite(db, src, now_ms);  // may erase src before dst is added (iterators change)
  OpResult<ListValue*> dest = FindOrAddList(db, dst, now_ms);
  if (!dest) return dest.status();
  (*dest)->Push(*v, to, opts);
  FinishListWrite(db, dst, now_ms);
  return v;
}

}  // namespace dashkv
