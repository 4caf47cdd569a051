/// \file
/// What the library has to say, and where it goes. The library writes nothing anywhere except
/// through the sink: by default lines go to standard error, prefixed "ringfuse <level>: ".
#pragma once

#include <string_view>

#include "absl/strings/str_format.h"
#include "ringfuse/export.h"

RINGFUSE_PUBLIC_BEGIN

namespace ringfuse {

/// How much a line matters; a level lets through itself and those before it.
enum class LogLevel {
  kError = 0,    ///< something failed
  kWarning = 1,  ///< something is off, and the library carries on
  kInfo = 2,     ///< what the library chose (a transport, INIT's outcome)
  kDebug = 3,    ///< details for finding a problem
};

/// Receives every line at or below the current level, from any thread, possibly at once.
class LogSink {
 public:
  virtual ~LogSink() = default;
  /// Takes one line, without its newline.
  virtual void Write(LogLevel level, std::string_view line) = 0;
};

/// Lines above this level are dropped before formatting. Default kWarning.
void SetLogLevel(LogLevel level);
/// Whether a line at `level` would be written now.
bool LogEnabled(LogLevel level);
/// Where lines go from now on; null restores standard error. The sink must outlive every
/// session and notifier (and every later log line); swap it before starting them.
void SetLogSink(LogSink* sink);
/// "error", "warning", "info" or "debug".
std::string_view LogLevelName(LogLevel level);

/// Sends `line` to the sink (standard error without one) if `level` is enabled.
void LogLine(LogLevel level, std::string_view line);

/// Formats with absl::StrFormat and logs the line, formatting nothing when `level` is off.
template <typename... Args>
void Log(LogLevel level, const absl::FormatSpec<Args...>& format, const Args&... args) {
  if (LogEnabled(level)) LogLine(level, absl::StrFormat(format, args...));
}

}  // namespace ringfuse

RINGFUSE_PUBLIC_END
