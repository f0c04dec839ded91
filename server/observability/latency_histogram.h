// LatencyHistogram: the distribution of one command's run times on one engine (latency
// tracking: INFO latencystats, LATENCY HISTOGRAM).
// Thread: owned by one engine; Merge() copies are read elsewhere.
//
// Design
//   Durations are counted in log-linear buckets of any unit (the server counts CycleClock ticks,
//   converted only when read, so the command path does no floating point): every power of two is
//   split into 16 equal sub-buckets, so a bucket's width is at most 1/16 of its lower bound and a
//   reported percentile (the upper bound of the bucket holding it) is within 6.25% of the true
//   value. Values below 16 have a bucket each. Recording is a count-leading-zeros, two shifts and
//   an increment; the 5.5 KiB of counts of one command on one engine are allocated at its first
//   run (server/server_stats.h), so an idle command costs a pointer.
#pragma once

#include <array>
#include <bit>
#include <cstdint>
#include <cstdio>
#include <string>

namespace dashkv {

class LatencyHistogram {
 public:
  static constexpr unsigned kSubBits = 4;
  static constexpr unsigned kSub = 1u << kSubBits;
  static constexpr unsigned kMaxExp = 46;  // larger values share the last bucket
  static constexpr unsigned kBuckets = (kMaxExp - kSubBits + 2) * kSub;

  void Record(uint64_t v) { ++counts_[Index(v)]; }
  uint64_t total() const {
    uint64_t n = 0;
    for (uint64_t c : counts_) n += c;
    return n;
  }

  // Returns the upper bound of the bucket holding the value at percentile `p` (0..100), 0 when
  // empty.
  uint64_t ValueAtPercentile(double p) const {
    const uint64_t total = this->total();
    if (total == 0) return 0;
    uint64_t rank = static_cast<uint64_t>(p / 100.0 * static_cast<double>(total) + 0.5);
    if (rank == 0) rank = 1;
    if (rank > total) rank = total;
    uint64_t seen = 0;
    for (unsigned i = 0; i < kBuckets; ++i) {
      seen += counts_[i];
      if (seen >= rank) return UpperBound(i);
    }
    return UpperBound(kBuckets - 1);
  }

  // Calls fn(upper_bound, count) for each non-empty bucket, in increasing order.
  template <typename Fn>
  void ForEachBucket(Fn&& fn) const {
    for (unsigned i = 0; i < kBuckets; ++i) {
      if (counts_[i] != 0) fn(UpperBound(i), counts_[i]);
    }
  }

  void Merge(const LatencyHistogram& o) {
    for (unsigned i = 0; i < kBuckets; ++i) counts_[i] += o.counts_[i];
  }

  // The bucket of `v`: values below kSub have their own; above, the exponent selects a group of
  // kSub buckets and the kSubBits bits after the leading one select the bucket in it.
  static unsigned Index(uint64_t v) {
    if (v < kSub) return static_cast<unsigned>(v);
    unsigned exp = 63u - static_cast<unsigned>(std::countl_zero(v));
    if (exp > kMaxExp) return kBuckets - 1;
    unsigned sub = static_cast<unsigned>(v >> (exp - kSubBits)) & (kSub - 1);
    return (exp - kSubBits + 1) * kSub + sub;
  }
  // The largest value counted in bucket `i`.
  static uint64_t UpperBound(unsigned i) {
    if (i < kSub) return i;
    unsigned exp = i / kSub + kSubBits - 1;
    uint64_t sub = i % kSub;
    return ((kSub + sub + 1) << (exp - kSubBits)) - 1;
  }

 private:
  std::array<uint64_t, kBuckets> counts_{};
};

// A percentile as Redis writes it (latency-tracking-info-percentiles, INFO latencystats):
// fixed notation without trailing zeros: "99.9", "50", "0".
inline std::string PercentileText(double p) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%f", p);
  std::string s(buf);
  while (!s.empty() && s.back() == '0') s.pop_back();
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s;
}

}  // namespace dashkv
