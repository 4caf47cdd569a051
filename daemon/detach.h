// Going to the background the way FUSE daemons do: the command returns once the mount is ready,
// or fails with the daemon's own error message if it could not mount, while the daemon carries on
// in a new session with its standard streams on /dev/null.
#pragma once

#include <string_view>

#include "absl/status/statusor.h"
#include "base/fd.h"

namespace ringfuse::daemon {

// The daemon's side of the fork: tells the waiting command how starting went, once.
class DetachedDaemon {
 public:
  explicit DetachedDaemon(base::UniqueFd verdict) : verdict_(std::move(verdict)) {}

  // The mount is served: the command exits 0, and this process drops its terminal.
  void Ready();
  // Starting failed: the command prints `message` and exits 1.
  void Failed(std::string_view message);

 private:
  base::UniqueFd verdict_;
};

// Forks; call it before any thread exists, with SIGINT and SIGTERM blocked (StopSignals). Returns
// only in the daemon. The command's process waits for the verdict and exits with it: 0, or 1
// after printing the daemon's error (also if the daemon dies without one), or 130 when
// interrupted, after telling the daemon to stop.
absl::StatusOr<DetachedDaemon> Detach(std::string_view program);

}  // namespace ringfuse::daemon
