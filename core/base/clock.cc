#include "core/base/clock.h"

#include <time.h>

#include <atomic>

#include "core/base/logging.h"

namespace dashkv {

namespace {

// The fake time in microseconds while a ScopedFakeClock is alive, kNoFake otherwise. The only
// mutable global of this layer; written by tests only.
constexpr int64_t kNoFake = INT64_MIN;
std::atomic<int64_t> fake_now_us{kNoFake};

}  // namespace

int64_t NowUs() {
  const int64_t fake = fake_now_us.load(std::memory_order_relaxed);
  if (fake != kNoFake) [[unlikely]] {
    return fake;
  }
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return int64_t{ts.tv_sec} * 1000000 + ts.tv_nsec / 1000;
}

ScopedFakeClock::ScopedFakeClock(int64_t start_us) {
  CHECK(start_us != kNoFake);
  int64_t expected = kNoFake;
  CHECK(fake_now_us.compare_exchange_strong(expected, start_us)) << "a fake clock is already set";
}

ScopedFakeClock::~ScopedFakeClock() { fake_now_us.store(kNoFake); }

void ScopedFakeClock::Set(int64_t now_us) {
  CHECK(now_us != kNoFake);
  fake_now_us.store(now_us, std::memory_order_relaxed);
}

void ScopedFakeClock::AdvanceUs(int64_t us) {
  fake_now_us.fetch_add(us, std::memory_order_relaxed);
}

}  // namespace dashkv
