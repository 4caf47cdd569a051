#include "transport/log.h"

#include <atomic>
#include <cstdio>

namespace ringfuse {
namespace {

std::atomic<int> g_level{static_cast<int>(LogLevel::kWarning)};

class StderrSink : public LogSink {
 public:
  void Write(LogLevel level, std::string_view line) override {
    // One fprintf per line: stdio locks the stream, so lines from threads do not interleave.
    std::string_view name = LogLevelName(level);
    std::fprintf(stderr, "ringfuse %.*s: %.*s\n", static_cast<int>(name.size()), name.data(),
                 static_cast<int>(line.size()), line.data());
  }
};

// Never destroyed: a line logged while statics are destroyed (a session held in one) still has
// somewhere to go.
LogSink* const g_stderr_sink = new StderrSink;
std::atomic<LogSink*> g_sink{g_stderr_sink};

}  // namespace

void SetLogLevel(LogLevel level) { g_level.store(static_cast<int>(level)); }

bool LogEnabled(LogLevel level) {
  return static_cast<int>(level) <= g_level.load(std::memory_order_relaxed);
}

void SetLogSink(LogSink* sink) {
  g_sink.store(sink != nullptr ? sink : g_stderr_sink, std::memory_order_release);
}

std::string_view LogLevelName(LogLevel level) {
  static constexpr std::string_view kNames[] = {"error", "warning", "info", "debug"};
  return kNames[static_cast<int>(level)];
}

void LogLine(LogLevel level, std::string_view line) {
  if (LogEnabled(level)) g_sink.load(std::memory_order_acquire)->Write(level, line);
}

void LoggingDiagnostics::Report(std::string_view line) {
  LogLine(LogLevel::kWarning, line);
  std::lock_guard lock(mutex_);
  last_ = std::string(line);
}

std::string LoggingDiagnostics::last() const {
  std::lock_guard lock(mutex_);
  return last_;
}

}  // namespace ringfuse
