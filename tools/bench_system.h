// What ringfuse-bench needs from the machine, and how it leaves the machine as it found it:
// the check for root and /dev/fuse, the FUSE-over-io_uring switch, and Ctrl-C.
#pragma once

#include <optional>
#include <string>

#include "absl/status/status.h"

namespace ringfuse::tools {

// Why this process cannot mount FUSE filesystems, or nothing when it can.
std::optional<std::string> WhyFuseMountsCannotRun();

// Turns FUSE-over-io_uring on (the uring-cmd transport needs it at mount time) and puts the old
// setting back when destroyed, so that a benchmark never changes how the machine runs.
class UringSwitch {
 public:
  UringSwitch() = default;
  UringSwitch(const UringSwitch&) = delete;
  UringSwitch& operator=(const UringSwitch&) = delete;
  ~UringSwitch();

  // An error says why the switch cannot be turned on (no such kernel parameter, not root).
  absl::Status TurnOn();

 private:
  std::string restore_;  // the value to write back; empty when nothing was changed
};

// SIGINT, SIGTERM and SIGHUP only raise a flag from now on, so that the benchmark stops between
// two steps and cleans up (unmount, temporary files, the io_uring switch) on its way out.
void CatchStopSignals();
bool StopRequested();

}  // namespace ringfuse::tools
