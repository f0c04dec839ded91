// SlowLog: the commands that ran longer than `slowlog-log-slower-than` (SLOWLOG GET/LEN/RESET).
// Thread-safe: each engine appends to its own ring under that ring's mutex, which only a slow
// command (and SLOWLOG itself) ever takes, so the command path takes no lock; ids come from one
// atomic counter, so merging the rings by id gives Redis's newest-first order across threads.
//
// An entry is what Redis records: id, unix time (s), duration (µs), at most 32 arguments (the
// 32nd replaced by "... (N more arguments)"), each cut to 128 bytes ("... (N more bytes)"),
// secrets replaced by "(redacted)" (AUTH, HELLO AUTH, MIGRATE AUTH/AUTH2, ACL SETUSER, CONFIG
// SET of a password setting), the client's "ip:port" ("?:0" for a script's calls) and name.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "server/cmd_args.h"

namespace dashkv {

struct CommandSpec;

struct SlowLogEntry {
  uint64_t id = 0;
  int64_t unix_time = 0;
  int64_t duration_us = 0;
  std::vector<std::string> args;
  std::string client_addr;
  std::string client_name;
};

class SlowLog {
 public:
  explicit SlowLog(unsigned engines);

  // Records a run of `spec` with `args` on `engine`. `max_len` is slowlog-max-len (0: nothing
  // is kept).
  void Add(unsigned engine, const CommandSpec& spec, CmdArgs args, int64_t duration_us,
           std::string_view client_addr, std::string_view client_name, int64_t max_len);
  // The newest `count` entries (count < 0: all), newest first.
  std::vector<SlowLogEntry> Get(int64_t count, int64_t max_len) const;
  size_t Len(int64_t max_len) const;
  void Reset();

  // The arguments as recorded (truncated and redacted), for tests and Add.
  static std::vector<std::string> RecordedArgs(const CommandSpec& spec, CmdArgs args);

 private:
  struct alignas(64) Ring {
    mutable std::mutex mu;
    std::deque<SlowLogEntry> entries;  // oldest first
  };
  std::vector<Ring> rings_;
  std::atomic<uint64_t> next_id_{0};
};

}  // namespace dashkv
