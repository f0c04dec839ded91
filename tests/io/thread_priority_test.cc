#include "io/thread_priority.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <thread>

namespace dashkv::io {
namespace {

TEST(ThreadPriorityTest, NiceLowersOnlyTheCallingThread) {
  const int own = CurrentThreadNice();
  int inside = 0;
  std::thread t([&] {
    ASSERT_TRUE(NiceCurrentThread(10).ok());
    inside = CurrentThreadNice();
  });
  t.join();
  EXPECT_EQ(inside, std::min(own + 10, 19));
  EXPECT_EQ(CurrentThreadNice(), own);  // the thread that started it keeps its priority
}

TEST(ThreadPriorityTest, NiceIsCappedAt19) {
  int inside = 0;
  std::thread t([&] {
    ASSERT_TRUE(NiceCurrentThread(100).ok());
    inside = CurrentThreadNice();
  });
  t.join();
  EXPECT_EQ(inside, 19);
}

}  // namespace
}  // namespace dashkv::io
