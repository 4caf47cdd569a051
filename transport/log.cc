#include "transport/log.h"

#include <cstdio>

namespace ringfuse {
namespace {

std::atomic<int> g_level{static_cast<int>(LogLevel::kWarning)};

constexpr const char* kLevelNames[] = {"error", "warning", "info", "debug"};

}  // namespace

void SetLogLevel(LogLevel level) { g_level.store(static_cast<int>(level)); }

bool LogEnabled(LogLevel level) {
  return static_cast<int>(level) <= g_level.load(std::memory_order_relaxed);
}

void LogLine(LogLevel level, std::string_view line) {
  if (!LogEnabled(level)) return;
  // One fprintf per line: stdio locks the stream, so lines from threads do not interleave.
  std::fprintf(stderr, "ringfuse %s: %.*s\n", kLevelNames[static_cast<int>(level)],
               static_cast<int>(line.size()), line.data());
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
