#include "core/base/logging.h"

#include <sys/time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <ctime>

namespace dashkv::detail {

LogLine::LogLine(absl::LogSeverity severity, const char* file, int line)
    : severity_(severity), file_(file), line_(line) {}

LogLine::~LogLine() { Emit(severity_, file_, line_, stream_.str()); }

void LogLine::Emit(absl::LogSeverity severity, const char* file, int line,
                   const std::string& message) {
  timeval tv;
  gettimeofday(&tv, nullptr);
  tm local;
  localtime_r(&tv.tv_sec, &local);
  char when[64];
  size_t n = strftime(when, sizeof(when), "%d %b %Y %H:%M:%S", &local);
  // Redis's level marks: '.' debug, '-' verbose, '*' notice, '#' warning.
  char mark = severity == absl::LogSeverity::kInfo ? '*' : '#';
  std::string out;
  out.reserve(message.size() + 96);
  char prefix[128];
  int len = snprintf(prefix, sizeof(prefix), "%d:M %.*s.%03d %c ", static_cast<int>(getpid()),
                     static_cast<int>(n), when, static_cast<int>(tv.tv_usec / 1000), mark);
  out.append(prefix, static_cast<size_t>(len));
  out.append(message);
  if (severity != absl::LogSeverity::kInfo) {
    out.append(" (");
    out.append(file);
    out.push_back(':');
    out.append(std::to_string(line));
    out.push_back(')');
  }
  out.push_back('\n');
  ssize_t ignored = write(STDERR_FILENO, out.data(), out.size());
  (void)ignored;
  if (severity == absl::LogSeverity::kFatal) std::abort();
}

}  // namespace dashkv::detail
