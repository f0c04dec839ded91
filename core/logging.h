// Logging and invariant checks for core/ and server/. Debian 12's abseil (20220623) has no
// absl/log: CHECK(cond) aborts on failure in every build (abseil's raw logging); DCHECK(cond)
// only in debug builds (the condition is not evaluated under NDEBUG); LOG(INFO|WARNING|ERROR|
// FATAL) << ... writes one line to stderr in Redis's log format ("pid:M dd Mon yyyy hh:mm:ss.mmm
// * message", one write(2) per line; FATAL aborts). io/ may not include core/, and uses
// ABSL_RAW_LOG/ABSL_RAW_CHECK directly. Thread-safe.
#pragma once

#include <absl/base/internal/raw_logging.h>
#include <absl/base/log_severity.h>

#include <sstream>
#include <string>

namespace dashkv::detail {

// Collects one log line and emits it when destroyed (at the end of the full expression).
class LogLine {
 public:
  LogLine(absl::LogSeverity severity, const char* file, int line)
      : severity_(severity), file_(file), line_(line) {}
  ~LogLine() { Emit(severity_, file_, line_, stream_.str()); }
  // Writes one formatted line to stderr; aborts after a FATAL one.
  static void Emit(absl::LogSeverity severity, const char* file, int line,
                   const std::string& message);
  std::ostream& stream() { return stream_; }

 private:
  absl::LogSeverity severity_;
  const char* file_;
  int line_;
  std::ostringstream stream_;
};

}  // namespace dashkv::detail

#define DKV_LOG_SEVERITY_INFO ::absl::LogSeverity::kInfo
#define DKV_LOG_SEVERITY_WARNING ::absl::LogSeverity::kWarning
#define DKV_LOG_SEVERITY_ERROR ::absl::LogSeverity::kError
#define DKV_LOG_SEVERITY_FATAL ::absl::LogSeverity::kFatal

#define LOG(severity) \
  ::dashkv::detail::LogLine(DKV_LOG_SEVERITY_##severity, __FILE__, __LINE__).stream()

#define CHECK(cond) ABSL_RAW_CHECK(cond, #cond)
#define CHECK_EQ(a, b) CHECK((a) == (b))
#define CHECK_LT(a, b) CHECK((a) < (b))

#ifdef NDEBUG
#define DCHECK(cond) static_cast<void>(sizeof((cond) ? 1 : 0))
#else
#define DCHECK(cond) CHECK(cond)
#endif
#define DCHECK_EQ(a, b) DCHECK((a) == (b))
#define DCHECK_LT(a, b) DCHECK((a) < (b))
