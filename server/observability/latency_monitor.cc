#include "server/observability/latency_monitor.h"

#include <absl/strings/str_format.h>

#include <algorithm>
#include <cmath>

#include "core/str_util.h"

namespace dashkv {

std::vector<LatencyMonitor::Sample> LatencyMonitor::Event::InOrder() const {
  std::vector<Sample> out;
  out.reserve(count);
  for (size_t k = 0; k < count; ++k) out.push_back(ring[(next + kSamples - count + k) % kSamples]);
  return out;
}

void LatencyMonitor::Add(std::string_view event, int64_t ms, int64_t now_s) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = events_.find(event);
  if (it == events_.end()) it = events_.emplace(std::string(event), Event{}).first;
  Event& e = it->second;
  e.max_ms = std::max(e.max_ms, ms);
  if (e.count > 0) {
    Sample& last = e.ring[(e.next + kSamples - 1) % kSamples];
    if (last.time == now_s) {
      last.ms = std::max(last.ms, ms);
      return;
    }
  }
  e.ring[e.next] = Sample{now_s, ms};
  e.next = (e.next + 1) % kSamples;
  e.count = std::min(e.count + 1, kSamples);
}

std::vector<LatencyMonitor::Latest> LatencyMonitor::LatestSamples() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<Latest> out;
  for (const auto& [name, e] : events_) {
    if (e.count == 0) continue;
    const Sample& last = e.ring[(e.next + kSamples - 1) % kSamples];
    out.push_back(Latest{name, last.time, last.ms, e.max_ms});
  }
  return out;
}

std::vector<LatencyMonitor::Sample> LatencyMonitor::History(std::string_view event) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = events_.find(event);
  return it == events_.end() ? std::vector<Sample>{} : it->second.InOrder();
}

size_t LatencyMonitor::Reset(const std::vector<std::string>& events) {
  std::lock_guard<std::mutex> lock(mu_);
  if (events.empty()) {
    size_t n = events_.size();
    events_.clear();
    return n;
  }
  size_t n = 0;
  for (const std::string& name : events) n += events_.erase(name);
  return n;
}

namespace {

// A sample's age as a short label: "12s", "5m", "3h", "2d".
std::string AgeLabel(int64_t age_s) {
  if (age_s < 60) return StrCat(age_s, "s");
  if (age_s < 3600) return StrCat(age_s / 60, "m");
  if (age_s < 86400) return StrCat(age_s / 3600, "h");
  return StrCat(age_s / 86400, "d");
}

}  // namespace

std::string LatencyMonitor::Graph(std::string_view event, int64_t now_s) const {
  std::vector<Sample> samples;
  int64_t max_ms = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = events_.find(event);
    if (it == events_.end() || it->second.count == 0) return {};
    samples = it->second.InOrder();
    max_ms = it->second.max_ms;
  }
  // One column per sample (the newest 80), the bar's height scaled between the lowest and the
  // highest sample shown; under each column the sample's age, written top to bottom.
  constexpr size_t kColumns = 80;
  constexpr int kRows = 4;
  if (samples.size() > kColumns) samples.erase(samples.begin(), samples.end() - kColumns);
  int64_t lo = samples[0].ms, hi = samples[0].ms;
  for (const Sample& s : samples) {
    lo = std::min(lo, s.ms);
    hi = std::max(hi, s.ms);
  }
  std::string out = StrCat(event, " - high ", hi, " ms, low ", lo, " ms (all time high ",
                                 max_ms, " ms)\n", std::string(kColumns, '-'), "\n");
  std::vector<int> height(samples.size());
  for (size_t c = 0; c < samples.size(); ++c) {
    height[c] = hi == lo ? kRows
                         : 1 + static_cast<int>((samples[c].ms - lo) * (kRows - 1) / (hi - lo));
  }
  for (int row = kRows; row >= 1; --row) {
    std::string line;
    for (size_t c = 0; c < samples.size(); ++c) {
      line += height[c] > row ? '#' : height[c] == row ? '_' : ' ';
    }
    StrAppend(&out, line, "\n");
  }
  std::vector<std::string> labels;
  size_t longest = 0;
  for (const Sample& s : samples) {
    labels.push_back(AgeLabel(std::max<int64_t>(0, now_s - s.time)));
    longest = std::max(longest, labels.back().size());
  }
  for (size_t row = 0; row < longest; ++row) {
    std::string line;
    for (const std::string& l : labels) line += row < l.size() ? l[row] : ' ';
    StrAppend(&out, line, "\n");
  }
  return out;
}

std::string LatencyMonitor::Doctor(int64_t threshold_ms) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (threshold_ms == 0 && events_.empty()) {
    return "The latency monitor is off (latency-monitor-threshold is 0), so no latency spike "
           "has been recorded. Turn it on with CONFIG SET latency-monitor-threshold <ms>.\n";
  }
  if (events_.empty()) {
    return StrCat("No latency spike of ", threshold_ms,
                        " ms or more has been recorded since the server started or since the "
                        "last LATENCY RESET.\n");
  }
  std::string out = "Latency spikes recorded by event class:\n\n";
  int i = 0;
  bool commands = false, expiry = false;
  for (const auto& [name, e] : events_) {
    std::vector<Sample> s = e.InOrder();
    if (s.empty()) continue;
    double sum = 0;
    for (const Sample& x : s) sum += static_cast<double>(x.ms);
    const double avg = sum / static_cast<double>(s.size());
    double dev = 0;
    for (const Sample& x : s) dev += std::abs(static_cast<double>(x.ms) - avg);
    dev /= static_cast<double>(s.size());
    const double period =
        s.size() > 1 ? static_cast<double>(s.back().time - s.front().time) /
                           static_cast<double>(s.size() - 1)
                     : 0.0;
    StrAppend(&out, ++i, ". ", name, ": ", s.size(), " spikes, average ",
                    absl::StrFormat("%.0f", avg), " ms, mean deviation ",
                    absl::StrFormat("%.0f", dev), " ms, one every ",
                    absl::StrFormat("%.2f", period), " s on average; worst ever ", e.max_ms,
                    " ms.\n");
    commands |= name == "command" || name == "fast-command";
    expiry |= name == "expire-cycle";
  }
  out += "\nWhat to look at:\n";
  if (commands) {
    out += "- SLOWLOG GET lists the commands that ran long, with their arguments. Commands over "
           "large values (KEYS, SMEMBERS, HGETALL, LRANGE 0 -1, SORT, big DEL) cost time in "
           "proportion to their size; SCAN and its siblings visit a keyspace in small steps.\n";
  }
  if (expiry) {
    out += "- The active expiry cycle deleted many keys at once: many keys with the same "
           "deadline expire together; spreading the deadlines spreads the work.\n";
  }
  if (!commands && !expiry) {
    out += "- Compare the spikes with the server's load and the host's (CPU steal, swapping).\n";
  }
  return out;
}

}  // namespace dashkv
