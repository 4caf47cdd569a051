// ringfuse-trace follow: one JSON trace event (ringfuse/json_trace.h) as one readable line,
//   12.345678 request   #12 LOOKUP nodeid=1 pid=42 uid=0 gid=0 name="etc"
//   12.345702 reply     #12 LOOKUP error=-2 errno="ENOENT" size=0 latency=24.1us
#pragma once

#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace ringfuse::tools {

// The line shown for `line`, or why it is not a trace event.
absl::StatusOr<std::string> FormatTraceLine(std::string_view line);

}  // namespace ringfuse::tools
