#include "server/persistence/cpu_pressure.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>

#include "core/base/parse_int.h"

namespace dashkv {

std::optional<uint64_t> ParsePressureSomeTotalUs(std::string_view text) {
  // "some avg10=0.00 avg60=0.00 avg300=0.00 total=12345\nfull ..."
  if (!text.starts_with("some ")) return std::nullopt;
  const size_t eol = text.find('\n');
  std::string_view line = text.substr(0, eol);
  const size_t at = line.find(" total=");
  if (at == std::string_view::npos) return std::nullopt;
  std::optional<int64_t> v = ParseInt64(line.substr(at + 7));
  if (!v || *v < 0) return std::nullopt;
  return uint64_t(*v);
}

std::optional<uint64_t> CpuPressure::ReadTotalUs() const {
  const int fd = open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  char buf[256];
  const ssize_t n = read(fd, buf, sizeof(buf));
  close(fd);
  if (n <= 0) return std::nullopt;
  return ParsePressureSomeTotalUs(std::string_view(buf, size_t(n)));
}

std::optional<double> CpuPressure::WaitingShare(int64_t now_ms) {
  if (unavailable_) return std::nullopt;
  if (last_total_us_ && now_ms - last_ms_ < kSampleMs) return share_;
  std::optional<uint64_t> total = ReadTotalUs();
  if (!total) {
    unavailable_ = true;
    share_.reset();
    return std::nullopt;
  }
  if (last_total_us_ && now_ms > last_ms_ && *total >= *last_total_us_) {
    share_ = std::min(1.0, double(*total - *last_total_us_) / (1000.0 * double(now_ms - last_ms_)));
  }
  last_total_us_ = total;
  last_ms_ = now_ms;
  return share_;
}

}  // namespace dashkv
