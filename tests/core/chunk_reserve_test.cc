#include "core/chunk_reserve.h"

#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <new>
#include <set>
#include <thread>
#include <vector>

#include "core/memory.h"

namespace dashkv {
namespace {

void FreeChunk(void* p) { ::operator delete(p, std::align_val_t(ChunkReserve::kChunkAlign)); }

TEST(ChunkReserveTest, EmptyReserveMissesAndAsksForOneRefill) {
  ChunkReserve r;
  int requests = 0;
  r.set_refill_request([&] { ++requests; });
  EXPECT_EQ(r.TryTake(), nullptr);
  EXPECT_EQ(requests, 1);
  EXPECT_EQ(r.TryTake(), nullptr);
  EXPECT_EQ(requests, 1) << "a request is outstanding until Refill starts";
  EXPECT_EQ(r.misses(), 2u);
  EXPECT_EQ(r.hits(), 0u);
  EXPECT_EQ(r.target(), ChunkReserve::kInitialTarget + 2);
}

TEST(ChunkReserveTest, RefillFillsToTargetWithAlignedFaultedChunks) {
  ChunkReserve r;
  int requests = 0;
  r.set_refill_request([&] { ++requests; });
  EXPECT_EQ(r.TryTake(), nullptr);  // target 1 -> 2
  r.Refill();
  ASSERT_EQ(r.ready(), r.target());
  std::set<void*> seen;
  for (unsigned i = 0, n = r.ready(); i < n; ++i) {
    void* p = r.TryTake();
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % ChunkReserve::kChunkAlign, 0u);
    const size_t usable = AllocationSize(p);
    EXPECT_GE(usable, ChunkReserve::kChunkBytes);
    std::memset(p, 0xab, usable);  // the whole usable size is the caller's
    EXPECT_TRUE(seen.insert(p).second);
  }
  EXPECT_EQ(r.hits(), seen.size());
  // Each take left the reserve below target; Refill had cleared the request, so one more came.
  EXPECT_EQ(requests, 2);
  EXPECT_EQ(r.ready(), 0u);
  for (void* p : seen) FreeChunk(p);
}

TEST(ChunkReserveTest, TargetGrowsWithMissesUpToCapacity) {
  ChunkReserve r;
  for (int i = 0; i < 20; ++i) EXPECT_EQ(r.TryTake(), nullptr);
  EXPECT_EQ(r.target(), ChunkReserve::kCapacity);
  r.Refill();  // no request function: Refill still works when called
  EXPECT_EQ(r.ready(), ChunkReserve::kCapacity);
  r.Refill();  // full: allocates nothing more
  EXPECT_EQ(r.ready(), ChunkReserve::kCapacity);
}

TEST(ChunkReserveTest, DestructorFreesChunksStillHeld) {
  InitMemoryAccounting();
  const int64_t before = UsedMemory();
  {
    ChunkReserve r;
    (void)r.TryTake();
    r.Refill();
    ASSERT_EQ(r.ready(), 2u);
    EXPECT_GE(UsedMemory(), before + int64_t(2 * ChunkReserve::kChunkBytes));
  }
  EXPECT_EQ(UsedMemory(), before);
}

// Each period without a take gives back one ready chunk, down to the initial target; the freed
// chunks leave used_memory.
TEST(ChunkReserveTest, IdlePeriodsShrinkTheReserveToItsInitialTarget) {
  InitMemoryAccounting();
  ChunkReserve r;
  for (unsigned i = 0; i < ChunkReserve::kCapacity; ++i) EXPECT_EQ(r.TryTake(), nullptr);
  r.Refill();
  ASSERT_EQ(r.ready(), ChunkReserve::kCapacity);
  EXPECT_EQ(r.Decay(), 0u) << "the takes above fell in this period";
  for (unsigned depth = ChunkReserve::kCapacity - 1; depth >= ChunkReserve::kInitialTarget;
       --depth) {
    const int64_t used = UsedMemory();
    EXPECT_EQ(r.Decay(), 1u);
    EXPECT_EQ(r.ready(), depth);
    EXPECT_EQ(r.target(), depth);
    EXPECT_LE(UsedMemory(), used - int64_t(ChunkReserve::kChunkBytes));
  }
  EXPECT_EQ(r.Decay(), 0u);
  EXPECT_EQ(r.ready(), ChunkReserve::kInitialTarget);
  EXPECT_EQ(r.hits(), 0u) << "freeing is not taking";
}

// A take in a period keeps the depth; the chunk taken is refilled as before.
TEST(ChunkReserveTest, TakesInAPeriodKeepTheReserveDepth) {
  ChunkReserve r;
  int requests = 0;
  r.set_refill_request([&] { ++requests; });
  for (unsigned i = 0; i < ChunkReserve::kCapacity; ++i) (void)r.TryTake();
  r.Refill();
  (void)r.Decay();
  void* p = r.TryTake();
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(r.Decay(), 0u);
  EXPECT_EQ(r.target(), ChunkReserve::kCapacity);
  r.Refill();
  EXPECT_EQ(r.ready(), ChunkReserve::kCapacity);
  EXPECT_EQ(r.Decay(), 1u) << "no take since the previous period";
  FreeChunk(p);
}

// A cap bounds the target the misses raise and the chunks a refill makes.
TEST(ChunkReserveTest, TheCapBoundsTheTargetAndTheRefill) {
  ChunkReserve r;
  EXPECT_EQ(r.cap(), ChunkReserve::kCapacity);
  EXPECT_EQ(r.SetCap(2), 0u);
  for (int i = 0; i < 20; ++i) EXPECT_EQ(r.TryTake(), nullptr);
  EXPECT_EQ(r.target(), 2u);
  r.Refill();
  EXPECT_EQ(r.ready(), 2u);
  EXPECT_EQ(r.SetCap(ChunkReserve::kCapacity + 5), 0u);
  EXPECT_EQ(r.cap(), ChunkReserve::kCapacity) << "never above what the ring holds";
}

// Lowering the cap frees the ready chunks above it at once; they leave used_memory.
TEST(ChunkReserveTest, LoweringTheCapFreesTheChunksAboveIt) {
  InitMemoryAccounting();
  ChunkReserve r;
  for (unsigned i = 0; i < ChunkReserve::kCapacity; ++i) EXPECT_EQ(r.TryTake(), nullptr);
  r.Refill();
  ASSERT_EQ(r.ready(), ChunkReserve::kCapacity);
  const int64_t used = UsedMemory();
  EXPECT_EQ(r.SetCap(1), ChunkReserve::kCapacity - 1);
  EXPECT_EQ(r.ready(), 1u);
  EXPECT_EQ(r.target(), 1u);
  EXPECT_LE(UsedMemory(), used - int64_t{ChunkReserve::kCapacity - 1} *
                                     int64_t{ChunkReserve::kChunkBytes});
  EXPECT_EQ(r.SetCap(1), 0u);
  EXPECT_EQ(r.hits(), 0u) << "freeing is not taking";
}

// With a cap of 0 the reserve holds nothing and asks for nothing; raising the cap again lets
// misses raise the target as before.
TEST(ChunkReserveTest, ACapOfZeroHoldsAndAsksForNothing) {
  ChunkReserve r;
  int requests = 0;
  r.set_refill_request([&] { ++requests; });
  EXPECT_EQ(r.SetCap(0), 0u);
  EXPECT_EQ(r.target(), 0u);
  EXPECT_EQ(r.TryTake(), nullptr);
  EXPECT_EQ(r.TryTake(), nullptr);
  EXPECT_EQ(requests, 0);
  EXPECT_EQ(r.misses(), 2u);
  r.Refill();
  EXPECT_EQ(r.ready(), 0u);
  EXPECT_EQ(r.Decay(), 0u);
  EXPECT_EQ(r.target(), 0u);
  EXPECT_EQ(r.SetCap(ChunkReserve::kCapacity), 0u);
  EXPECT_EQ(r.TryTake(), nullptr);
  EXPECT_EQ(r.target(), 1u);
  EXPECT_EQ(requests, 1);
}

// A producer thread refills on request while the consumer takes chunks as fast as it can, and
// now and then ends idle periods that free chunks: every chunk is handed over exactly once and
// is the consumer's to write (run it under TSan too).
TEST(ChunkReserveTest, ProducerThreadHandsOverEveryChunkOnce) {
  ChunkReserve r;
  std::mutex mu;
  std::condition_variable cv;
  bool pending = false, stop = false;
  r.set_refill_request([&] {
    std::lock_guard<std::mutex> lock(mu);
    pending = true;
    cv.notify_one();
  });
  std::thread producer([&] {
    std::unique_lock<std::mutex> lock(mu);
    for (;;) {
      cv.wait(lock, [&] { return pending || stop; });
      if (stop) return;
      pending = false;
      lock.unlock();
      r.Refill();
      lock.lock();
    }
  });
  constexpr int kChunks = 64;
  std::vector<void*> taken;
  while (taken.size() < kChunks) {
    void* p = r.TryTake();
    if (p == nullptr) {
      std::this_thread::yield();
      continue;
    }
    std::memset(p, int(taken.size()), ChunkReserve::kChunkBytes);
    taken.push_back(p);
    if (taken.size() % 8 == 0) {  // an idle period while the producer may be refilling
      (void)r.Decay();
      (void)r.Decay();
    }
  }
  {
    std::lock_guard<std::mutex> lock(mu);
    stop = true;
    cv.notify_one();
  }
  producer.join();
  EXPECT_EQ(std::set<void*>(taken.begin(), taken.end()).size(), taken.size());
  for (size_t i = 0; i < taken.size(); ++i) {
    EXPECT_EQ(static_cast<unsigned char*>(taken[i])[ChunkReserve::kChunkBytes - 1],
              static_cast<unsigned char>(i));
  }
  EXPECT_EQ(r.hits(), uint64_t(kChunks));
  EXPECT_LE(r.target(), ChunkReserve::kCapacity);
  for (void* p : taken) FreeChunk(p);
}

}  // namespace
}  // namespace dashkv
