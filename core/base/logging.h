// Logging and invariant checks for every layer (core/, io/, server/). Debian 12's abseil
// (20220623) has no absl/log, so this is the project's one family, shaped like absl/log:
//   LOG(INFO|WARNING|ERROR|FATAL) << ...  writes one line to stderr in Redis's log format
//       ("pid:M dd Mon yyyy hh:mm:ss.mmm * message", one write(2) per line); FATAL aborts.
//   CHECK(cond) << ...   aborts with the condition, the streamed text and file:line when `cond`
//       is false, in every build. For cheap must-hold conditions.
//   DCHECK(cond) << ...  the same in debug builds; under NDEBUG neither `cond` nor the stream is
//       evaluated (they are still compiled). For hot paths.
//   CHECK_EQ/CHECK_LT and DCHECK_EQ/DCHECK_LT compare two values the same way.
// Thread-safe.
#pragma once

#include <absl/base/log_severity.h>
#include <absl/base/optimization.h>

#include <sstream>
#include <string>

namespace dashkv::detail {

// Collects one log line and emits it when destroyed (at the end of the full expression).
// Constructor and destructor are out of line so that a CHECK costs its call sites only a
// predicted-not-taken branch and a few calls.
class LogLine {
 public:
  LogLine(absl::LogSeverity severity, const char* file, int line);
  ~LogLine();
  LogLine(const LogLine&) = delete;
  LogLine& operator=(const LogLine&) = delete;

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

// Turns the stream expression of a failed CHECK into void, so that CHECK(c) << ... can be the
// second operand of ?: (binds looser than <<, tighter than ?:).
struct LogVoidify {
  void operator&(std::ostream&) {}
};

}  // namespace dashkv::detail

#define DKV_LOG_SEVERITY_INFO ::absl::LogSeverity::kInfo
#define DKV_LOG_SEVERITY_WARNING ::absl::LogSeverity::kWarning
#define DKV_LOG_SEVERITY_ERROR ::absl::LogSeverity::kError
#define DKV_LOG_SEVERITY_FATAL ::absl::LogSeverity::kFatal

#define LOG(severity) \
  ::dashkv::detail::LogLine(DKV_LOG_SEVERITY_##severity, __FILE__, __LINE__).stream()

#define CHECK(cond)                                                                         \
  ABSL_PREDICT_TRUE(cond)                                                                   \
  ? static_cast<void>(0)                                                                    \
  : ::dashkv::detail::LogVoidify() &                                                        \
        ::dashkv::detail::LogLine(::absl::LogSeverity::kFatal, __FILE__, __LINE__).stream() \
            << "Check failed: " #cond " "
#define CHECK_EQ(a, b) CHECK((a) == (b))
#define CHECK_LT(a, b) CHECK((a) < (b))

#ifdef NDEBUG
#define DCHECK(cond) \
  while (false) CHECK(cond)
#else
#define DCHECK(cond) CHECK(cond)
#endif
#define DCHECK_EQ(a, b) DCHECK((a) == (b))
#define DCHECK_LT(a, b) DCHECK((a) < (b))
