// The connection a ringfuse::BackingFiles registers on, bound by a session from INIT to its end
// (then by the next session it is given to); shared with every BackingFile, so that a handle
// outliving its session, or the BackingFiles, closes nothing.
#pragma once

#include <cstdint>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "ringfuse/backing.h"

namespace ringfuse::internal {

struct BackingConnection {
  // Registrations hold it shared; binding and unbinding exclusive, so no ioctl reaches an fd
  // the session has closed (or its number, reused).
  absl::Mutex mutex;
  int dev_fd ABSL_GUARDED_BY(mutex) = -1;
  bool passthrough ABSL_GUARDED_BY(mutex) = false;  // agreed at INIT
  // Counts the sessions bound: a handle closes its id only on the session that registered it.
  uint64_t session ABSL_GUARDED_BY(mutex) = 0;
};

// Once INIT is agreed: registrations go to `dev_fd`. FailedPrecondition if `backing` serves
// another session now.
absl::Status BindBacking(BackingConnection& backing, int dev_fd, bool passthrough);
// Before the session closes its /dev/fuse fd: from now on nothing is registered or closed.
void UnbindBacking(BackingConnection& backing);

}  // namespace ringfuse::internal
