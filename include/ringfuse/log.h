// What the library has to say, and where it goes. The library writes nothing anywhere except
// through the sink: by default lines go to standard error, prefixed "ringfuse <level>: ".
#pragma once

#include <string_view>

#include "absl/strings/str_format.h"
#include "ringfuse/export.h"

RINGFUSE_PUBLIC_BEGIN

namespace ringfuse {

enum class LogLevel { kError = 0, kWarning = 1, kInfo = 2, kDebug = 3 };

// Receives every line at or below the current level, from any thread, possibly at once.
class LogSink {
 public:
  virtual ~LogSink() = default;
  virtual void Write(LogLevel level, std::string_view line) = 0;
};

// Lines above this level are dropped before formatting. Default kWarning.
void SetLogLevel(LogLevel level);
bool LogEnabled(LogLevel level);
// Where lines go from now on; null restores standard error. The sink must outlive every
// session and notifier (and every later log line); swap it before starting them.
void SetLogSink(LogSink* sink);
std::string_view LogLevelName(LogLevel level);

void LogLine(LogLevel level, std::string_view line);

template <typename... Args>
void Log(LogLevel level, const absl::FormatSpec<Args...>& format, const Args&... args) {
  if (LogEnabled(level)) LogLine(level, absl::StrFormat(format, args...));
}

}  // namespace ringfuse

RINGFUSE_PUBLIC_END
