// A ringfused serving its mount: what is served (SOURCE, or a revision of REPO), the
// filesystem, the session (mounted, taken over from a predecessor, or kept by a keeper and
// perhaps recovered after a crash), revisions' publisher and the control socket. main.cc parses
// the options, starts one of these and waits for its session to end.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string_view>

#include "absl/status/statusor.h"
#include "base/fd.h"
#include "daemon/control/control_socket.h"
#include "daemon/crash/kept_state.h"
#include "daemon/debug_tracer.h"
#include "daemon/fs/passthrough_fs.h"
#include "daemon/handover/spawn.h"
#include "daemon/options.h"
#include "daemon/revisions/revisions.h"
#include "ringfuse/json_trace.h"
#include "ringfuse/session.h"

namespace ringfuse::daemon {

class Daemon {
 public:
  // Opens what `options` serve and serves it: mounts, takes the mount over at --takeover-fd, or,
  // kept by the keeper at --keeper-fd, mounts or recovers it; then opens the control socket.
  // `trace_file`: --trace's file, open, or none. `successor`: what ringfuse-ctl restart starts.
  // `program` names the daemon in what it says on stderr.
  static absl::StatusOr<std::unique_ptr<Daemon>> Start(const DaemonOptions& options,
                                                       base::UniqueFd trace_file, Program successor,
                                                       std::string_view program);
  ~Daemon();
  Daemon(const Daemon&) = delete;
  Daemon& operator=(const Daemon&) = delete;

  Session& session() { return *session_; }
  const Session& session() const { return *session_; }
  // Once the session has ended: stops answering ringfuse-ctl, after the answer in progress (a
  // restart's tells whether the mount was handed over).
  void StopControl() { control_.reset(); }
  // The successor serving the mount since a restart handed it over, once StopControl returned;
  // 0 if none.
  pid_t successor_pid() const { return successor_pid_; }

 private:
  struct Served;
  struct Inherited;

  Daemon(Program successor, bool kept) : successor_(std::move(successor)), kept_(kept) {}
  static absl::StatusOr<Served> OpenServed(const DaemonOptions& options);
  absl::Status RestoreInherited(HandoverPayload payload, Inherited& inherited);
  absl::Status Serve(const DaemonOptions& options, base::UniqueFd trace_file,
                     std::string_view program);
  SessionOptions SessionOptionsFor(const DaemonOptions& options, base::UniqueFd trace_file);
  absl::StatusOr<std::unique_ptr<Session>> StartSession(const SessionOptions& session_options,
                                                        const DaemonOptions& options,
                                                        Served& served, Inherited& inherited);
  absl::StatusOr<Recovered> Recover(const CrashRecovery& crash, Served& served,
                                    Inherited& inherited);
  // What the kernel must learn from the filesystem: set-ID bits cleared, nodes to prune.
  void ConnectFsToKernel();
  absl::Status StartControl(Served& served, Inherited& inherited, const DaemonOptions& options,
                            std::string_view program);
  absl::StatusOr<std::unique_ptr<ControlServer>> OpenControl(base::UniqueFd inherited);
  // The answer to one ringfuse-ctl request (control_commands.h), on the control thread.
  std::string Answer(std::string_view request, ControlServer& server);

  // Torn down in reverse order: the control socket first, the tracers last.
  DebugTracer tracer_;
  std::unique_ptr<JsonTraceWriter> trace_;
  KeptState kept_state_;  // a kept daemon's journals, in passthrough mode
  std::unique_ptr<PassthroughFs> fs_;
  std::unique_ptr<Session> session_;
  std::unique_ptr<Publisher> publisher_;
  std::unique_ptr<ControlServer> control_;
  const Program successor_;  // what ringfuse-ctl restart starts
  const bool kept_;          // under ringfuse-ctl supervise, which restarts it instead
  pid_t successor_pid_ = 0;  // once handed over; written by the control thread
};

}  // namespace ringfuse::daemon
