// absl::Mutex as the request path needs it. Debian's Abseil is built in debug mode, where every
// Lock and ReaderLock first checks for deadlock cycles in one process-wide graph guarded by one
// spinlock: every shard's lock then waits on that one (ringfuse-bench stress at 8 threads: 0.0105
// futex calls per request with the check, 0.0004 without). Lock order is kept by design and
// tested instead (inode_table.h), so the check is turned off before any thread serves.
#pragma once

#include "absl/synchronization/mutex.h"

namespace ringfuse::daemon {

inline void TurnOffMutexDeadlockGraph() {
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
}

}  // namespace ringfuse::daemon
