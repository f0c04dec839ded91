#include "core/memory.h"

#include <gtest/gtest.h>
#include <mimalloc.h>

#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <thread>
#include <vector>

namespace dashkv {
namespace {

TEST(MemoryTest, MallocIsMimalloc) {
#ifdef DASHKV_SANITIZER
  GTEST_SKIP() << "sanitizers replace malloc";
#else
  void* p = std::malloc(100);
  std::memset(p, 0, 100);
  EXPECT_TRUE(mi_is_in_heap_region(p));
  std::free(p);
  auto q = std::make_unique<char[]>(100);
  EXPECT_TRUE(mi_is_in_heap_region(q.get()));
#endif
}

TEST(MemoryTest, CountsNewAndDelete) {
  InitMemoryAccounting();
  int64_t before = ThreadUsedMemory();
  char* p = new char[1000];
  int64_t after = ThreadUsedMemory();
  EXPECT_GE(after - before, 1000);
  EXPECT_EQ(after - before, static_cast<int64_t>(AllocationSize(p)));
  delete[] p;
  EXPECT_EQ(ThreadUsedMemory(), before);

  before = ThreadUsedMemory();
  void* a = AllocateBytes(50);
  EXPECT_EQ(ThreadUsedMemory() - before, static_cast<int64_t>(AllocationSize(a)));
  FreeBytes(a);
  FreeBytes(nullptr);
  EXPECT_EQ(ThreadUsedMemory(), before);
}

TEST(MemoryTest, AllForms) {
  int64_t before = ThreadUsedMemory();
  struct alignas(64) Aligned {
    char c[64];
  };
  auto* x = new Aligned;
  EXPECT_EQ(reinterpret_cast<uintptr_t>(x) % 64, 0u);
  delete x;  // sized + aligned delete
  auto* xs = new Aligned[3];
  delete[] xs;
  auto* n = new (std::nothrow) int(5);
  delete n;
  auto* na = new (std::nothrow) Aligned;
  ::operator delete(na, std::align_val_t{64}, std::nothrow);
  void* raw = ::operator new(24);
  ::operator delete(raw, 24);
  EXPECT_EQ(ThreadUsedMemory(), before);
}

// Sanitizer builds: a huge malloc returns nullptr instead of ASan reporting it.
extern "C" const char* __asan_default_options() { return "allocator_may_return_null=1"; }

TEST(MemoryTest, FailedNewThrowsBadAllocAndCountsNothing) {
  const int64_t before = ThreadUsedMemory();
  const size_t huge = size_t{1} << 62;  // more than any address space
  EXPECT_THROW((void)::operator new(huge), std::bad_alloc);
  EXPECT_THROW((void)::operator new[](huge), std::bad_alloc);
  EXPECT_THROW((void)::operator new(huge, std::align_val_t{64}), std::bad_alloc);
  EXPECT_EQ(::operator new(huge, std::nothrow), nullptr);
  std::string s;
  EXPECT_THROW(s.reserve(s.max_size()), std::bad_alloc);
  EXPECT_EQ(ThreadUsedMemory(), before);
}

TEST(MemoryTest, SumsOverThreads) {
  constexpr int kThreads = 4;
  constexpr int kBlocks = 1000;
  constexpr size_t kSize = 1024;
  int64_t base = UsedMemory();
  std::vector<std::vector<char*>> blocks(kThreads);
  for (auto& b : blocks) b.reserve(kBlocks);  // allocated here, not in the threads
  std::vector<std::thread> threads;
  threads.reserve(kThreads);
  int64_t start = UsedMemory();
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&blocks, t] {
      for (int i = 0; i < kBlocks; ++i) blocks[t].push_back(new char[kSize]);
    });
  }
  for (auto& th : threads) th.join();
  threads.clear();  // frees the thread vector before measuring
  int64_t grown = UsedMemory() - start;
  int64_t expected = 0;
  for (auto& b : blocks) {
    for (char* p : b) expected += static_cast<int64_t>(AllocationSize(p));
  }
  // The threads are gone: their counters were folded into the retired total. Thread start-up
  // allocations (if any, e.g. std::thread state) were freed again.
  EXPECT_EQ(grown, expected);
  EXPECT_GE(PeakUsedMemory(), start + expected);

  // Free on other threads than the allocating ones: counters go negative, the sum stays right.
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&blocks, t] {
      for (char* p : blocks[(t + 1) % kThreads]) delete[] p;
      EXPECT_LT(ThreadUsedMemory(), 0);
    });
  }
  for (auto& th : threads) th.join();
  threads.clear();
  EXPECT_EQ(UsedMemory(), start);
  EXPECT_GE(start, base);
}

TEST(MemoryTest, LiveThreadsAreSummed) {
  // Phases: 1 = threads started (std::thread state allocated), 2 = each allocated a block,
  // 3 = main measured, threads free and exit.
  std::atomic<int> started{0}, allocated{0};
  std::atomic<bool> measured{false};
  std::vector<std::thread> threads;
  threads.reserve(2);
  std::vector<char*> ptrs(2);
  for (int t = 0; t < 2; ++t) {
    threads.emplace_back([&, t] {
      started.fetch_add(1);
      while (started.load() < 3) std::this_thread::yield();
      ptrs[t] = new char[4096];
      allocated.fetch_add(1);
      while (!measured.load()) std::this_thread::yield();
      delete[] ptrs[t];
    });
  }
  while (started.load() < 2) std::this_thread::yield();
  int64_t start = UsedMemory();
  started.store(3);
  while (allocated.load() < 2) std::this_thread::yield();
  int64_t expected = static_cast<int64_t>(AllocationSize(ptrs[0]) + AllocationSize(ptrs[1]));
  int64_t grown = UsedMemory() - start;
  measured.store(true);
  for (auto& th : threads) th.join();
  EXPECT_EQ(grown, expected);
}

TEST(MemoryTest, SampledSumSeesOwnChangesAtOnceAndOthersAtTheNextSum) {
  // Phases: 1 = the thread allocated a block, 2 = main sampled, 3 = the thread freed its block,
  // 4 = main measured, the thread exits.
  std::atomic<int> phase{0};
  int64_t theirs = 0;                           // the thread's block's size
  int64_t theirs_before = 0, theirs_after = 0;  // its SampledUsedMemory around its allocation
  std::thread th([&] {
    theirs_before = SampledUsedMemory().total();
    char* p = new char[8192];
    theirs = static_cast<int64_t>(AllocationSize(p));
    theirs_after = SampledUsedMemory().total();
    phase.store(1);
    while (phase.load() < 2) std::this_thread::yield();
    delete[] p;
    phase.store(3);
    while (phase.load() < 4) std::this_thread::yield();
  });
  while (phase.load() < 1) std::this_thread::yield();
  // A thread that registered after the last sum sees its own count on top of it.
  EXPECT_EQ(theirs_after - theirs_before, theirs);

  const int64_t sum = UsedMemory();
  EXPECT_EQ(SampledUsedMemory().total(), sum);
  char* mine = new char[4096];
  const auto mine_size = static_cast<int64_t>(AllocationSize(mine));
  EXPECT_EQ(SampledUsedMemory().total(), sum + mine_size);  // own allocation: at once
  EXPECT_EQ(SampledUsedMemory().sum, sum);
  EXPECT_EQ(SampledUsedMemory().own, mine_size);
  phase.store(2);
  while (phase.load() < 3) std::this_thread::yield();
  EXPECT_EQ(SampledUsedMemory().total(), sum + mine_size);  // another thread's free: not yet
  const int64_t next = UsedMemory();
  EXPECT_EQ(next, sum + mine_size - theirs);
  EXPECT_EQ(SampledUsedMemory().total(), next);
  delete[] mine;
  EXPECT_EQ(SampledUsedMemory().total(), next - mine_size);  // own free: at once
  phase.store(4);
  th.join();
}

TEST(MemoryTest, ReturnsFreedMemoryOnlyAfterABigEnoughDrop) {
  std::thread([] {
    constexpr int64_t kDrop = 8 << 20;
    EXPECT_FALSE(ReturnFreedMemoryIfDropped(kDrop));  // nothing freed yet
    std::vector<std::unique_ptr<char[]>> blocks;
    for (int i = 0; i < 256; ++i) blocks.emplace_back(new char[64 << 10]);  // 16 MiB
    EXPECT_FALSE(ReturnFreedMemoryIfDropped(kDrop));  // a new high, no drop
    blocks.resize(128);                               // frees 8 MiB
    EXPECT_TRUE(ReturnFreedMemoryIfDropped(kDrop));
    EXPECT_TRUE(ReturnFreedMemoryIfDropped(kDrop));   // once more, past the purge delay
    EXPECT_FALSE(ReturnFreedMemoryIfDropped(kDrop));  // the drop was taken
    blocks.clear();
    EXPECT_TRUE(ReturnFreedMemoryIfDropped(kDrop));
    EXPECT_TRUE(ReturnFreedMemoryIfDropped(kDrop));
    // A release spread over several calls: once one drop is big enough, every further fall
    // is returned too, however small, until a call sees none.
    for (int i = 0; i < 256; ++i) blocks.emplace_back(new char[64 << 10]);  // 16 MiB
    EXPECT_FALSE(ReturnFreedMemoryIfDropped(kDrop));
    blocks.resize(112);  // frees 9 MiB
    EXPECT_TRUE(ReturnFreedMemoryIfDropped(kDrop));
    blocks.resize(100);  // frees 0.75 MiB
    EXPECT_TRUE(ReturnFreedMemoryIfDropped(kDrop));
    EXPECT_TRUE(ReturnFreedMemoryIfDropped(kDrop));   // no fall: once more, then it stops
    EXPECT_FALSE(ReturnFreedMemoryIfDropped(kDrop));
    blocks.resize(90);   // a small fall after a pause is not enough
    EXPECT_FALSE(ReturnFreedMemoryIfDropped(kDrop));
  }).join();
}

// Memory taken and freed between two calls: no drop of the counted memory is seen, but the
// freed pages stay resident in this thread's heap until a collect.
TEST(MemoryTest, ReturnsFreedMemoryThatStayedResident) {
  std::thread([] {
    constexpr int64_t kGap = 8 << 20;
    EXPECT_FALSE(ReturnFreedMemoryIfResident(kGap));
    EXPECT_FALSE(ReturnFreedMemoryIfDropped(kGap));
    {
      std::vector<std::unique_ptr<char[]>> blocks;
      for (int i = 0; i < 512; ++i) {
        blocks.emplace_back(new char[64 << 10]);  // 32 MiB, touched
        std::memset(blocks.back().get(), 1, 64 << 10);
      }
    }
    EXPECT_FALSE(ReturnFreedMemoryIfDropped(kGap));  // no high was seen
    EXPECT_TRUE(ReturnFreedMemoryIfResident(kGap));
  }).join();
}

// Blocks allocated on one thread and freed on another: the allocating thread's heap holds the
// pages, so its call must see the fall although its own counter did not move.
TEST(MemoryTest, ReturnFreedMemoryIfDroppedSeesFreesOfOtherThreads) {
  constexpr int64_t kDrop = 4 << 20;
  std::vector<std::unique_ptr<char[]>> blocks;
  std::mutex mu;
  std::condition_variable cv;
  int step = 0;
  std::thread owner([&] {
    EXPECT_FALSE(ReturnFreedMemoryIfDropped(kDrop));
    for (int i = 0; i < 128; ++i) blocks.emplace_back(new char[64 << 10]);  // 8 MiB
    EXPECT_FALSE(ReturnFreedMemoryIfDropped(kDrop));  // a new high
    {
      std::unique_lock lock(mu);
      step = 1;
      cv.notify_all();
      cv.wait(lock, [&] { return step == 2; });
    }
    EXPECT_TRUE(ReturnFreedMemoryIfDropped(kDrop));  // freed by the other thread
  });
  std::thread freer([&] {
    std::unique_lock lock(mu);
    cv.wait(lock, [&] { return step == 1; });
    blocks.clear();
    step = 2;
    cv.notify_all();
  });
  owner.join();
  freer.join();
}

TEST(MemoryTest, Rss) {
  size_t rss = ProcessRssBytes();
  EXPECT_GT(rss, 1u << 20);
  EXPECT_LT(rss, size_t{1} << 36);
}

}  // namespace
}  // namespace dashkv
