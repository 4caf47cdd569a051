// Kernel passthrough allows one backing file per FUSE inode at a time (a second registration
// makes the open fail with EIO), so all opens of one inode share one backing id: registered by
// the first open, counted, and closed by the last release.
//
// The shared backing file is opened read-write whenever the backing filesystem lets the daemon,
// since a later open of the same inode may write through it even if the first only read.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"

namespace ringfuse::daemon {

class BackingIds {
 public:
  // The backing id for the inode `handle_fd` is open on, registering it on `dev_fd` first if no
  // open of that inode holds one. FailedPrecondition if `writes` but the shared file could only
  // be had read-only (a running executable, say): the caller serves that open itself.
  absl::StatusOr<int32_t> Acquire(int dev_fd, int handle_fd, dev_t dev, ino_t ino, bool writes);
  // One open of (dev, ino) ended; the registration is closed when it was the last.
  void Release(int dev_fd, dev_t dev, ino_t ino);

 private:
  struct Shared {
    int32_t id;
    bool writable;
    uint32_t opens;
  };

  absl::Mutex mutex_;
  std::map<std::pair<dev_t, ino_t>, Shared> shared_ ABSL_GUARDED_BY(mutex_);
};

}  // namespace ringfuse::daemon
