// What ringfuse-bench needs from the machine, and how it leaves the machine as it found it:
// the check for root and /dev/fuse, and Ctrl-C (the io_uring switch is base/uring_switch.h).
#pragma once

#include <optional>
#include <string>

namespace ringfuse::tools {

// Why this process cannot mount FUSE filesystems, or nothing when it can.
std::optional<std::string> WhyFuseMountsCannotRun();

// SIGINT, SIGTERM and SIGHUP only raise a flag from now on, so that the benchmark stops between
// two steps and cleans up (unmount, temporary files, the io_uring switch) on its way out.
void CatchStopSignals();
bool StopRequested();

}  // namespace ringfuse::tools
