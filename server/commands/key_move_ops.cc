#include "server/commands/key_move_ops.h"

#include <utility>

#include "core/base/logging.h"
#include "server/values/value_clone.h"

namespace dashkv {

OpResult<DetachedEntry> OpCopyOut(DbSlice& db, std::string_view key, SourceLookup lookup,
                                  int64_t now_ms) {
  PrimeIterator it = lookup == SourceLookup::kRead ? db.FindReadOnly(key, now_ms)
                                                   : db.FindReadOnlyQuiet(key, now_ms);
  if (it.is_done()) return OpStatus::kKeyNotFound;
  DetachedEntry entry;
  entry.value = CloneValue(it->second);
  entry.deadline_ms = it->first.HasExpire() ? it->first.ExpireTimeMs() : 0;
  return entry;
}

namespace {

// Makes room for a new `key` in `db`: returns kSkipped when it exists and mode is kSkip, else
// erases an existing entry (kOverwritten) and returns kOk. The insert that follows cannot fail
// for want of room after an erase: it goes to the segment that just freed a slot.
OpStatus ClearDestination(DbSlice& db, std::string_view key, IfExists mode, int64_t now_ms) {
  if (db.FindReadOnlyQuiet(key, now_ms).is_done()) return OpStatus::kOk;
  if (mode == IfExists::kSkip) return OpStatus::kSkipped;
  db.EraseKey(key, now_ms, RemoveReason::kOverwritten);
  return OpStatus::kOk;
}

}  // namespace

OpStatus OpStoreEntry(DbSlice& db, std::string_view key, DetachedEntry entry, IfExists mode,
                      int64_t now_ms) {
  if (OpStatus st = ClearDestination(db, key, mode, now_ms); st != OpStatus::kOk) return st;
  OpResult<DbSlice::AddResult> added = db.FindOrAdd(key, now_ms);
  if (!added) return added.status();
  added->it->second = std::move(entry.value);
  db.SetExpire(added->it, entry.deadline_ms);
  // The value came from another shard without its access record: a new key's.
  db.SetRecord(added->it, NewRecord(db.eviction().access_mode(), now_ms));
  return OpStatus::kOk;
}

OpStatus OpMoveEntry(DbSlice& src, std::string_view src_key, DbSlice& dst,
                     std::string_view dst_key, IfExists mode, int64_t now_ms) {
  DCHECK(&src != &dst || src_key != dst_key);
  if (src.FindReadOnlyQuiet(src_key, now_ms).is_done()) return OpStatus::kKeyNotFound;
  if (OpStatus st = ClearDestination(dst, dst_key, mode, now_ms); st != OpStatus::kOk) return st;
  // Insert the destination first, so that a full table leaves the source untouched.
  OpResult<DbSlice::AddResult> added = dst.FindOrAdd(dst_key, now_ms);
  if (!added) return added.status();
  PrimeIterator to = added->it;
  // The insert may have moved entries: find the source again (still live: same clock), for
  // changing, since its value leaves before the entry is erased.
  PrimeIterator from = src.FindMutable(src_key, now_ms);
  CHECK(!from.is_done());
  int64_t deadline = from->first.HasExpire() ? from->first.ExpireTimeMs() : 0;
  const uint32_t record = src.Record(from, now_ms);  // the object keeps it, as in Redis
  to->second = std::move(from->second);
  dst.SetExpire(to, deadline);
  dst.SetRecord(to, record);
  src.Erase(from, RemoveReason::kDeleted);
  return OpStatus::kOk;
}

}  // namespace dashkv
