// ringfuse-ctl restart: the running daemon starts its successor (the same program, or another)
// and hands it the live connection, its state and its control socket, then exits 0. The mount
// stays and clients only wait, for the pause the report gives; if anything fails on the way,
// the successor is killed and this daemon serves on.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "daemon/control/control_socket.h"
#include "daemon/fs/passthrough_fs.h"
#include "daemon/handover/spawn.h"
#include "ringfuse/handover.h"
#include "ringfuse/session.h"

namespace ringfuse::daemon {

struct RestartReport {
  pid_t pid = 0;  // the successor's, serving now
  HandoverReport handover;
};

// Starts `successor` (the binary by absolute path, argv without --takeover-fd, the directory
// the daemon was started in, from which argv's relative paths are) with --takeover-fd=N
// appended, in a session of its own, and hands `session` over to it: the state of `fs`
// (SaveHandoverState, with `revision` the revision served, "" in passthrough mode) and
// `control`'s listener as the last payload fd. The binary is opened and checked first, and
// refused if anyone but root and this daemon's user could replace it (OpenTrustedProgram); what
// starts is that open file. On success `control` is handed off (HandOff; so call this from its
// answer) and the successor serves both; on failure the successor is killed and reaped, and
// `session` serves on.
absl::StatusOr<RestartReport> RestartDaemon(const Program& successor, Session& session,
                                            PassthroughFs& fs, const std::string& revision,
                                            ControlServer& control);

}  // namespace ringfuse::daemon
