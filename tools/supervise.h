// ringfuse-ctl supervise: a keeper (ringfuse/keeper.h). It starts a kept daemon with
// --keeper-fd=N, holds the connection the daemon deposits, and when the daemon dies of anything
// but a clean exit, starts it again to recover the mount: clients only wait.
//
// It ends when the daemon exits 0 (it unmounted), when the mount ends by itself (unmounted or
// aborted from outside; the daemon is then left to exit), when a daemon dies before it served a
// mount (nothing to keep), or when the daemon dies again after max_restarts restarts within a
// minute (it then lets the connection go, and clients get ENOTCONN). SIGTERM, SIGINT and SIGHUP go
// to the daemon, which unmounts and exits.
#pragma once

#include "daemon/handover/spawn.h"

namespace ringfuse::tools {

struct SuperviseOptions {
  daemon::Program daemon;
  int max_restarts = 10;  // within a minute
};

// Returns the exit status for ringfuse-ctl: the daemon's when it ended the supervision (128 +
// the signal's number for a signal), 1 when the keeper gave up.
int Supervise(const SuperviseOptions& options);

}  // namespace ringfuse::tools
