#include "server/commands/key_move_ops.h"

#include <utility>

#include "core/base/logging.h"
#include "server/values/value_clone.h"

namespace dashkv {

OpResult<DetachedEntry> OpCopyOut(DbSlice& db, std::string_view key, int64_t now_ms) {
  PrimeIterator it = db.Find(key, now_ms);
  if (it.is_done()) return OpStatus::kKeyNotFound;
  DetachedEntry entry;
  entry.value = CloneValue(it->second);
  entry.deadline_ms = it->first.HasExpire() ? it->first.ExpireTimeMs() : 0;
  return entry;
}

OpStatus OpStoreEntry(DbSlice& db, std::string_view key, DetachedEntry entry, IfExists mode,
                      int64_t now_ms) {
  OpResult<DbSlice::AddResult> added = db.FindOrAdd(key, now_ms);
  if (!added) return added.status();
  if (!added->inserted && mode == IfExists::kSkip) return OpStatus::kSkipped;
  added->it->second = std::move(entry.value);
  db.SetExpire(added->it, entry.deadline_ms);
  return OpStatus::kOk;
}

OpStatus OpMoveEntry(DbSlice& src, std::string_view src_key, DbSlice& dst,
                     std::string_view dst_key, IfExists mode, int64_t now_ms) {
  DCHECK(&src != &dst || src_key != dst_key);
  if (src.FindQuiet(src_key, now_ms).is_done()) return OpStatus::kKeyNotFound;
  if (mode == IfExists::kSkip && !dst.FindQuiet(dst_key, now_ms).is_done()) {
    return OpStatus::kSkipped;
  }
  // Insert the destination first, so that a full table leaves both keys untouched.
  OpResult<DbSlice::AddResult> added = dst.FindOrAdd(dst_key, now_ms);
  if (!added) return added.status();
  PrimeIterator to = added->it;
  // The insert may have moved entries: find the source again (still live: same clock).
  PrimeIterator from = src.FindQuiet(src_key, now_ms);
  CHECK(!from.is_done());
  int64_t deadline = from->first.HasExpire() ? from->first.ExpireTimeMs() : 0;
  to->second = std::move(from->second);
  dst.SetExpire(to, deadline);
  src.Erase(from);
  return OpStatus::kOk;
}

}  // namespace dashkv
