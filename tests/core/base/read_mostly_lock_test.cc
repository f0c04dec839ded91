// ReadMostlyLock: readers on different slots do not exclude each other; a writer excludes
// every reader, whatever its slot, and waits for the readers inside.

#include "core/base/read_mostly_lock.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

namespace dashkv {
namespace {

TEST(ReadMostlyLockTest, ReadersOfDifferentSlotsRunTogether) {
  ReadMostlyLock lock(3);
  ReadMostlyLock::ReadGuard held(lock, 0);
  std::atomic<bool> read{false};
  std::thread other([&] {
    ReadMostlyLock::ReadGuard mine(lock, 1);
    read = true;
  });
  other.join();  // would never return if slot 1 waited for slot 0's reader
  EXPECT_TRUE(read);
}

TEST(ReadMostlyLockTest, AWriterWaitsForAReaderOfAnySlot) {
  for (unsigned slot : {0u, 2u, 5u}) {  // 5: taken modulo the slots
    ReadMostlyLock lock(3);
    std::atomic<bool> written{false};
    std::thread writer;
    {
      ReadMostlyLock::ReadGuard held(lock, slot);
      writer = std::thread([&] {
        ReadMostlyLock::WriteGuard w(lock);
        written = true;
      });
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      EXPECT_FALSE(written) << "slot " << slot;
    }
    writer.join();
    EXPECT_TRUE(written);
  }
}

// Readers on every slot check an invariant a writer breaks only while it holds the lock. The
// writer starts once every reader runs and goes on until they have read many times meanwhile.
TEST(ReadMostlyLockTest, ReadersNeverSeeAWriteHalfDone) {
  constexpr unsigned kReaders = 4;
  constexpr uint64_t kMinWrites = 20000, kMinReads = 20000;
  ReadMostlyLock lock(kReaders);
  uint64_t a = 0, b = 0;  // a == b outside the writer's guard
  std::atomic<bool> stop{false};
  std::atomic<unsigned> started{0};
  std::atomic<uint64_t> torn{0}, reads{0};
  std::vector<std::thread> readers;
  for (unsigned i = 0; i < kReaders; ++i) {
    readers.emplace_back([&, i] {
      started.fetch_add(1);
      while (!stop.load(std::memory_order_relaxed)) {
        ReadMostlyLock::ReadGuard g(lock, i);
        if (a != b) torn.fetch_add(1, std::memory_order_relaxed);
        reads.fetch_add(1, std::memory_order_relaxed);
      }
    });
  }
  while (started.load() < kReaders) std::this_thread::yield();
  const uint64_t reads_before = reads.load();
  uint64_t writes = 0;
  while (writes < kMinWrites || reads.load(std::memory_order_relaxed) < reads_before + kMinReads) {
    ReadMostlyLock::WriteGuard w(lock);
    ++a;
    for (int spin = 0; spin < 50; ++spin) std::atomic_signal_fence(std::memory_order_seq_cst);
    ++b;
    ++writes;
  }
  stop = true;
  for (auto& t : readers) t.join();
  EXPECT_EQ(torn.load(), 0u);
  EXPECT_EQ(a, writes);
  EXPECT_EQ(b, writes);
}

}  // namespace
}  // namespace dashkv
