// FUSE-over-io_uring is off until root writes Y to /sys/module/fuse/parameters/enable_uring;
// the kernel reads it at mount time. Tools and tests that need it switch it on for a while and
// put the machine's setting back afterwards.
#pragma once

#include <string>

#include "absl/status/status.h"

namespace ringfuse::base {

class UringSwitch {
 public:
  UringSwitch() = default;
  UringSwitch(const UringSwitch&) = delete;
  UringSwitch& operator=(const UringSwitch&) = delete;
  // Puts back the value TurnOn found, if it changed it.
  ~UringSwitch();

  // An error says why it cannot be on: no such parameter (a kernel without it), or not root.
  absl::Status TurnOn();

 private:
  std::string restore_;  // the value to write back; empty when nothing was changed
};

}  // namespace ringfuse::base
