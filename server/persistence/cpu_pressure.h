// CpuPressure: whether the machine has CPU time to spare, from the kernel's pressure stall
// information (/proc/pressure/cpu, its "some" line: the time during which at least one runnable
// task waited for a CPU). A sample is the share of the wall time since the previous sample in
// which some task waited; samples are taken at most every kSampleMs.
// Thread: owned by its user.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace dashkv {

// Returns the "total=" microseconds of the "some" line of a /proc/pressure file, or nullopt.
std::optional<uint64_t> ParsePressureSomeTotalUs(std::string_view text);

class CpuPressure {
 public:
  static constexpr int64_t kSampleMs = 100;

  explicit CpuPressure(std::string path = "/proc/pressure/cpu") : path_(std::move(path)) {}

  // The waiting share (0..1) of the last interval between samples as of `now_ms`, or nullopt
  // while unknown (before two samples, or without pressure information: kernels before 4.20,
  // or booted with psi=0).
  std::optional<double> WaitingShare(int64_t now_ms);

 private:
  std::optional<uint64_t> ReadTotalUs() const;

  std::string path_;
  bool unavailable_ = false;
  int64_t last_ms_ = 0;
  std::optional<uint64_t> last_total_us_;
  std::optional<double> share_;
};

}  // namespace dashkv
