// The project's one logging helper: leveled lines on stderr, and Diagnostics that log.
#pragma once

#include <atomic>
#include <mutex>
#include <string>
#include <string_view>

#include "absl/strings/str_format.h"
#include "protocol/dispatcher.h"

namespace ringfuse {

enum class LogLevel { kError = 0, kWarning = 1, kInfo = 2, kDebug = 3 };

// Lines above this level are dropped. Default kWarning; the daemon's -d raises it to kDebug.
void SetLogLevel(LogLevel level);
bool LogEnabled(LogLevel level);
void LogLine(LogLevel level, std::string_view line);

template <typename... Args>
void Log(LogLevel level, const absl::FormatSpec<Args...>& format, const Args&... args) {
  if (LogEnabled(level)) LogLine(level, absl::StrFormat(format, args...));
}

// Reports protocol problems as warnings, and remembers the last one for error messages.
class LoggingDiagnostics : public Diagnostics {
 public:
  void Report(std::string_view line) override;
  std::string last() const;

 private:
  mutable std::mutex mutex_;
  std::string last_;
};

}  // namespace ringfuse
