// The real ringfused, run as a child process serving a directory or a repository of revisions,
// what the benchmark asks it over its control socket, and its restarts.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "daemon/control/control_commands.h"

namespace ringfuse::tools {

// <directory of this program>/../daemon/ringfused, where the build puts it.
std::string RingfusedNextToThisProgram();
// <directory of this program>/ringfuse-ctl, likewise.
std::string CtlNextToThisProgram();

struct DaemonLaunch {
  std::string binary;                      // ringfused
  std::string source;                      // SOURCE, or with `revisions` the repository
  bool revisions = false;                  // --revisions
  std::string mountpoint;                  // an empty directory
  std::string transport;                   // --transport=
  std::vector<std::string> mount_options;  // each one -o NAME=VALUE
  std::string log;                         // the daemon's stderr goes here
  std::string keeper;  // ringfuse-ctl: run under `ringfuse-ctl supervise` when set
};

// A control reply with the time the request took as seen from here.
struct ControlAnswer {
  daemon::ControlFields fields;
  absl::Duration round_trip;
};

class DaemonProcess {
 public:
  // Starts ringfused in the foreground and returns once its control socket answers, that is
  // once the mount is served; an error carries the daemon's own words from its log.
  static absl::StatusOr<DaemonProcess> Start(const DaemonLaunch& launch);
  DaemonProcess(DaemonProcess&& other) noexcept;
  DaemonProcess& operator=(DaemonProcess&&) = delete;
  DaemonProcess(const DaemonProcess&) = delete;
  // Stops the daemon unless Stop() did.
  ~DaemonProcess();

  // SIGTERM (the daemon unmounts), a wait, and a lazy unmount if the mount is still there. An
  // error if the daemon did not end cleanly (a crash, a sanitizer report), with its log.
  absl::Status Stop();

  // Sends one control request and returns the fields of its "ok" reply.
  absl::StatusOr<ControlAnswer> Ask(const std::string& request) const;
  // Sends `restart` and follows the mount to the successor that serves it now: waits for this
  // daemon to exit, and stands for the successor from then on. This process becomes a child
  // subreaper first, so that the successor, orphaned when its parent exits, becomes a child here
  // and Stop() ends and reaps it like the first. An error if the restart failed (the daemon
  // serves on) or the old daemon did not exit 0.
  absl::StatusOr<ControlAnswer> Restart();
  // Under a keeper: kills the daemon it runs with SIGKILL and returns once the next one answers
  // the control socket; how long that took from the kill.
  absl::StatusOr<absl::Duration> KillAndAwaitRecovery();
  pid_t pid() const { return pid_; }  // the keeper's, under one
  // The first line the daemon wrote: which transport serves and why.
  std::string TransportChoice() const;

 private:
  DaemonProcess(pid_t pid, DaemonLaunch launch) : pid_(pid), launch_(std::move(launch)) {}

  absl::Status AwaitControl();
  absl::StatusOr<ControlAnswer> Ask(const std::string& request, absl::Duration timeout) const;
  // Waits for the daemon that handed the mount over to exit, then stands for `successor`.
  absl::Status FollowTo(pid_t successor);
  // Ends the child if it still runs and returns how it ended (nothing if it cannot be waited for).
  std::optional<int> EndChild();
  std::string LogText() const;

  pid_t pid_ = -1;                  // -1 once stopped, or moved from
  std::optional<int> exit_status_;  // once the child has been reaped
  DaemonLaunch launch_;
};

// A numeric field of a control reply, or an error naming it.
absl::StatusOr<double> NumberField(const daemon::ControlFields& fields, const std::string& name);

}  // namespace ringfuse::tools
