#include "core/access_record.h"

#include <algorithm>

namespace dashkv {
namespace {

constexpr int kLossyLruShift = 9;  // LossyRecord's 512 s steps
constexpr uint32_t kLossyMax = 15;

uint32_t FromLossy(uint8_t lossy, AccessMode mode, int64_t now_ms) {
  if (mode == AccessMode::kLfu) return (LfuMinutes(now_ms) << 8) | lossy;
  // The most recent clock value at or before now whose bits 9..12 are `lossy`.
  const uint32_t now_steps = LruClock(now_ms) >> kLossyLruShift;
  const uint32_t steps = now_steps - ((now_steps - lossy) & kLossyMax);
  return (steps << kLossyLruShift) & kLruClockMax;
}

}  // namespace

uint32_t RestoredRecord(AccessMode mode, int64_t now_ms, int64_t idle_s, int freq) {
  if (mode == AccessMode::kLfu && freq >= 0) {
    return (LfuMinutes(now_ms) << 8) | static_cast<uint32_t>(std::min(freq, 255));
  }
  if (mode == AccessMode::kLru && idle_s >= 0) {
    const int64_t clock = LruClock(now_ms);
    int64_t at = clock - std::min<int64_t>(idle_s, kLruClockMax + 1);
    if (at < 0) at = (clock + kLruClockMax / 2) % kLruClockMax;
    return static_cast<uint32_t>(at);
  }
  return NewRecord(mode, now_ms);
}

uint8_t LfuDecayed(uint32_t record, int64_t now_ms, int64_t decay_time) {
  const uint32_t last = record >> 8;
  const uint32_t counter = record & 0xff;
  const uint32_t now = LfuMinutes(now_ms);
  const uint32_t elapsed = now >= last ? now - last : 65535 - last + now;
  const uint64_t periods = decay_time > 0 ? elapsed / static_cast<uint64_t>(decay_time) : 0;
  if (periods == 0) return static_cast<uint8_t>(counter);
  return periods > counter ? 0 : static_cast<uint8_t>(counter - periods);
}

uint8_t LfuLogIncr(uint8_t counter, int64_t log_factor, double r) {
  if (counter == 255) return 255;
  const double base = counter > kLfuInitVal ? counter - kLfuInitVal : 0;
  const double p = 1.0 / (base * static_cast<double>(log_factor) + 1);
  return r < p ? counter + 1 : counter;
}

uint32_t GetRecordSlow(const CompactObj& key, const CompactObj& value, AccessMode mode,
                       int64_t now_ms) {
  if (value.HasAuxRoom() && value.aux() != 0) return value.aux();
  const uint8_t lossy =
      static_cast<uint8_t>((key.user_flags() << 2) | (value.user_flags() & 0x3));
  return FromLossy(lossy, mode, now_ms);
}

void SetRecordSlow(CompactObj& key, CompactObj& value, uint32_t record, AccessMode mode) {
  value.set_aux(record);  // a no-op when the value has no room either
  const uint8_t lossy = LossyRecord(record, mode);
  key.set_user_flags(lossy >> 2);
  value.set_user_flags(lossy & 0x3);
}

}  // namespace dashkv
