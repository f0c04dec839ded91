#include "server/storage/key_change.h"

#include "core/base/logging.h"

namespace dashkv {

unsigned ChangeListeners::Add(ChangeListener* listener) {
  CHECK_LT(size_, kMaxListeners);
  listeners_[size_] = listener;
  interest_[size_] = 0;
  return size_++;
}

void ChangeListeners::SetInterest(unsigned slot, uint32_t interest) {
  DCHECK_LT(slot, size_);
  interest_[slot] = interest;
  wanted_ = 0;
  for (unsigned i = 0; i < size_; ++i) wanted_ |= interest_[i];
}

void ChangeListeners::Before(unsigned db, PrimeIterator it, uint64_t hash) {
  ForEach(kWantBefore, [&](ChangeListener& l) { l.BeforeChange(db, it, hash); });
}

void ChangeListeners::Removed(unsigned db, std::string_view key, RemoveReason reason) {
  ForEach(kWantRemovals, [&](ChangeListener& l) { l.AfterRemove(db, key, reason); });
}

void ChangeListeners::Flushing(unsigned db) {
  // Writes queued before the flush are told first, so listeners see the changes in order.
  Finish();
  for (unsigned i = 0; i < size_; ++i) listeners_[i]->BeforeFlush(db);
}

void ChangeListeners::Swapping(unsigned db1, unsigned db2) {
  Finish();
  for (unsigned i = 0; i < size_; ++i) listeners_[i]->BeforeSwap(db1, db2);
}

void ChangeListeners::Swapped(unsigned db1, unsigned db2) {
  for (unsigned i = 0; i < size_; ++i) listeners_[i]->AfterSwap(db1, db2);
}

void ChangeListeners::Event(unsigned db, NotifyClass cls, std::string_view event,
                            std::string_view key) {
  ForEach(kWantEvents, [&](ChangeListener& l) { l.OnEvent(db, cls, event, key); });
}

void ChangeListeners::RunPending() {
  // A listener may queue more writes (a blocking serve pushes to a destination): take the list.
  std::vector<Pending> pending;
  pending.swap(pending_);
  for (const Pending& p : pending) {
    ForEach(kWantWrites, [&](ChangeListener& l) { l.AfterWrite(p.db, p.key, p.modified); });
  }
  pending.clear();
  if (pending_.empty()) pending_.swap(pending);  // keep the capacity
}

}  // namespace dashkv
