#include "transport/log.h"

#include <atomic>
#include <cstdio>

namespace ringfuse {
namespace {

std::atomic<int> g_level{static_cast<int>(LogLevel::kWarning)};

// Null: standard error, written without a virtual call. Besides needing no object that static
// destruction could take away, this keeps logging working where a sanitizer's check of a virtual
// call cannot run (UBSan's vptr check needs a free fd, and the fd table may be full: that is
// what the daemon logs about).
std::atomic<LogSink*> g_sink{nullptr};

void WriteToStderr(LogLevel level, std::string_view line) {
  // One fprintf per line: stdio locks the stream, so lines from threads do not interleave.
  const std::string_view name = LogLevelName(level);
  std::fprintf(stderr, "ringfuse %.*s: %.*s\n", static_cast<int>(name.size()), name.data(),
               static_cast<int>(line.size()), line.data());
}

}  // namespace

void SetLogLevel(LogLevel level) { g_level.store(static_cast<int>(level)); }

bool LogEnabled(LogLevel level) {
  return static_cast<int>(level) <= g_level.load(std::memory_order_relaxed);
}

void SetLogSink(LogSink* sink) { g_sink.store(sink, std::memory_order_release); }

std::string_view LogLevelName(LogLevel level) {
  static constexpr std::string_view kNames[] = {"error", "warning", "info", "debug"};
  return kNames[static_cast<int>(level)];
}

void LogLine(LogLevel level, std::string_view line) {
  if (!LogEnabled(level)) return;
  LogSink* const sink = g_sink.load(std::memory_order_acquire);
  if (sink == nullptr) return WriteToStderr(level, line);
  sink->Write(level, line);
}

void internal::LoggingDiagnostics::Report(std::string_view line) {
  LogLine(LogLevel::kWarning, line);
  std::lock_guard lock(mutex_);
  last_ = std::string(line);
}

std::string internal::LoggingDiagnostics::last() const {
  std::lock_guard lock(mutex_);
  return last_;
}

}  // namespace ringfuse
