#include "io/engine_pool.h"

#include <absl/strings/numbers.h>
#include <absl/strings/str_split.h>
#include <absl/strings/string_view.h>
#include <absl/strings/strip.h>
#include <absl/strings/ascii.h>
#include <sched.h>

#include <cmath>
#include <fstream>
#include <sstream>
#include <string>

#include "core/base/logging.h"

namespace dashkv::io {
namespace {

bool ReadFile(const std::string& path, std::string* out) {
  std::ifstream in(path);
  if (!in) return false;
  std::stringstream ss;
  ss << in.rdbuf();
  *out = ss.str();
  return true;
}

// Returns the CPU quota in CPUs (quota / period), or 0 when there is none.
double CgroupV2Quota() {
  // The process's own cgroup ("0::/path"), else the mount root (containers).
  std::string self, data;
  std::string dir = "/sys/fs/cgroup";
  if (ReadFile("/proc/self/cgroup", &self)) {
    for (absl::string_view line : absl::StrSplit(self, '\n')) {
      if (absl::ConsumePrefix(&line, "0::")) {
        std::string candidate = dir + std::string(line) + "/cpu.max";
        if (ReadFile(candidate, &data)) break;
      }
    }
  }
  if (data.empty() && !ReadFile(dir + "/cpu.max", &data)) return 0;
  std::vector<absl::string_view> parts =
      absl::StrSplit(data, absl::ByAnyChar(" \n"), absl::SkipEmpty());
  double quota = 0, period = 0;
  if (parts.size() < 2 || parts[0] == "max") return 0;
  if (!absl::SimpleAtod(parts[0], &quota) || !absl::SimpleAtod(parts[1], &period)) return 0;
  return period > 0 && quota > 0 ? quota / period : 0;
}

double CgroupV1Quota() {
  for (const char* dir : {"/sys/fs/cgroup/cpu", "/sys/fs/cgroup/cpu,cpuacct"}) {
    std::string q, p;
    if (!ReadFile(std::string(dir) + "/cpu.cfs_quota_us", &q) ||
        !ReadFile(std::string(dir) + "/cpu.cfs_period_us", &p)) {
      continue;
    }
    double quota = 0, period = 0;
    if (!absl::SimpleAtod(absl::StripAsciiWhitespace(q), &quota) ||
        !absl::SimpleAtod(absl::StripAsciiWhitespace(p), &period)) {
      continue;
    }
    if (quota > 0 && period > 0) return quota / period;
  }
  return 0;
}

}  // namespace

unsigned AvailableCpus() {
  unsigned cpus = 0;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) cpus = static_cast<unsigned>(CPU_COUNT(&set));
  if (cpus == 0) cpus = std::thread::hardware_concurrency();
  double quota = CgroupV2Quota();
  if (quota <= 0) quota = CgroupV1Quota();
  if (quota > 0) {
    auto limit = static_cast<unsigned>(std::ceil(quota));
    if (limit < cpus) cpus = limit;
  }
  return cpus == 0 ? 1 : cpus;
}

EnginePool::EnginePool(unsigned n, EngineOptions options) {
  CHECK(n > 0) << "EnginePool needs at least one engine";
  engines_.reserve(n);
  for (unsigned i = 0; i < n; ++i) engines_.push_back(std::make_unique<Engine>(i, options));
  EngineOptions background = options;
  background.background = true;
  background.pin_cpus = false;
  background.spin_us = 0;  // its work is rare: sleep at once
  background_ = std::make_unique<Engine>(n, background);
}

EnginePool::~EnginePool() {
  Stop();
  Join();
  for (auto& e : engines_) e->DiscardInbox();
  background_->DiscardInbox();
  engines_.clear();
  background_.reset();
}

void EnginePool::Start() {
  for (auto& e : engines_) e->Start();
  background_->Start();
}

void EnginePool::Stop() {
  for (auto& e : engines_) e->Stop();
  background_->Stop();
}

void EnginePool::Join() {
  for (auto& e : engines_) e->Join();
  background_->Join();
}

}  // namespace dashkv::io
