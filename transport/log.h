// Protocol diagnostics reported through the library's log (ringfuse/log.h).
#pragma once

#include <mutex>
#include <string>
#include <string_view>

#include "protocol/dispatcher.h"
#include "ringfuse/log.h"

namespace ringfuse::internal {

// Reports protocol problems as warnings, and remembers the last one for error messages.
class LoggingDiagnostics : public Diagnostics {
 public:
  void Report(std::string_view line) override;
  std::string last() const;

 private:
  mutable std::mutex mutex_;
  std::string last_;
};

}  // namespace ringfuse::internal
