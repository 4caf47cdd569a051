// Any FUSE daemon as a child process serving one mount for ringfuse-bench compare: started in
// the foreground, ready once its mountpoint is a FUSE mount in /proc/self/mountinfo (a daemon
// not ours has no control socket to ask), and always stopped with its mount gone.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace ringfuse::tools {

// Whether `path` is the mount point of a FUSE filesystem (fuse, fuse.NAME, fuseblk).
bool IsFuseMount(const std::string& path);

class MountedDaemon {
 public:
  // Runs `argv` (no shell) with its output in `log`, and returns once `mountpoint` is a FUSE
  // mount, within 20 s; an error carries the daemon's log, and nothing is left running.
  static absl::StatusOr<MountedDaemon> Start(const std::vector<std::string>& argv,
                                             const std::string& mountpoint, const std::string& log);
  MountedDaemon(MountedDaemon&& other) noexcept;
  MountedDaemon& operator=(MountedDaemon&&) = delete;
  MountedDaemon(const MountedDaemon&) = delete;
  ~MountedDaemon();  // Stop() unless done

  // SIGTERM and a bounded wait; then a lazy unmount if the mount is still there, and SIGKILL if
  // the daemon still runs. An error when it needed either, or did not exit with status 0.
  absl::Status Stop();

  pid_t pid() const { return pid_; }

 private:
  MountedDaemon(pid_t pid, std::string mountpoint, std::string log)
      : pid_(pid), mountpoint_(std::move(mountpoint)), log_(std::move(log)) {}

  absl::Status AwaitMount();
  std::string LogText() const;

  pid_t pid_ = -1;  // -1 once stopped, or moved from
  std::optional<int> exit_status_;
  std::string mountpoint_;
  std::string log_;
};

}  // namespace ringfuse::tools
