// ReadMostlyLock: a reader-writer lock for data that every engine thread reads often and that
// changes seldom (a "big reader" lock). It holds one mutex per reader slot, each on a cache
// line of its own. A reader locks only its slot's mutex, so readers on different threads never
// write a line another core holds; a writer locks every slot's mutex, in slot order, which
// excludes every reader. Compared with one std::shared_mutex, whose lock word every reader
// writes twice (a line that moves between the cores on each read once several threads read),
// a read costs an uncontended lock of a line that stays in the reader's cache, and a write
// costs one lock per slot.
// Thread-safe. A thread holds at most one read guard of a lock at a time, and takes no other
// lock of it while holding one.
#pragma once

#include <memory>
#include <mutex>

namespace dashkv {

class ReadMostlyLock {
 public:
  // `slots`: how many reader slots (e.g. one per engine thread, plus one for the rest).
  explicit ReadMostlyLock(unsigned slots)
      : slots_(new Slot[slots > 0 ? slots : 1]), n_(slots > 0 ? slots : 1) {}
  ReadMostlyLock(const ReadMostlyLock&) = delete;
  ReadMostlyLock& operator=(const ReadMostlyLock&) = delete;

  unsigned slots() const { return n_; }

  // Locks reader slot `slot` (taken modulo slots()) for its lifetime.
  class ReadGuard {
   public:
    ReadGuard(const ReadMostlyLock& lock, unsigned slot)
        : guard_(lock.slots_[slot % lock.n_].mu) {}

   private:
    std::lock_guard<std::mutex> guard_;
  };

  // Locks every slot for its lifetime.
  class WriteGuard {
   public:
    explicit WriteGuard(const ReadMostlyLock& lock) : lock_(lock) {
      for (unsigned i = 0; i < lock_.n_; ++i) lock_.slots_[i].mu.lock();
    }
    ~WriteGuard() {
      for (unsigned i = lock_.n_; i > 0; --i) lock_.slots_[i - 1].mu.unlock();
    }
    WriteGuard(const WriteGuard&) = delete;
    WriteGuard& operator=(const WriteGuard&) = delete;

   private:
    const ReadMostlyLock& lock_;
  };

 private:
  struct alignas(64) Slot {
    mutable std::mutex mu;
  };
  std::unique_ptr<Slot[]> slots_;
  const unsigned n_;
};

}  // namespace dashkv
