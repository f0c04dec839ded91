// PickFlag: which value of a command-line flag Config applies in each of its two passes over
// the flags: every flag's default before the config file is read, then, after the file, only the
// flags the command line gave (so that they override the file, as Redis's arguments do).
// Thread: start-up only.
#pragma once

#include <absl/container/flat_hash_set.h>
#include <absl/flags/flag.h>
#include <absl/flags/marshalling.h>
#include <absl/flags/reflection.h>

#include <optional>
#include <string>

#include "core/base/logging.h"

namespace dashkv {

// Returns the flag's default (`defaults`), or else its value when it was given on the command
// line (`given_flags`: their names) or differs from its default, else nullopt.
template <typename T>
std::optional<T> PickFlag(const absl::Flag<T>& flag, bool defaults,
                          const absl::flat_hash_set<std::string>& given_flags) {
  const absl::CommandLineFlag& handle = absl::GetFlagReflectionHandle(flag);
  if (!defaults) {
    if (!given_flags.contains(handle.Name()) && handle.CurrentValue() == handle.DefaultValue()) {
      return std::nullopt;
    }
    return absl::GetFlag(flag);
  }
  T value{};
  std::string error;
  CHECK(absl::ParseFlag(handle.DefaultValue(), &value, &error)) << error;
  return value;
}

}  // namespace dashkv
