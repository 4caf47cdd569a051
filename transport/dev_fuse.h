// /dev/fuse: opening it, cloning a connection's fd, and its ioctls.
#pragma once

#include <cstdint>

#include "absl/status/statusor.h"
#include "base/fd.h"

namespace ringfuse::internal {

inline constexpr const char* kDevFusePath = "/dev/fuse";

// Opens /dev/fuse read-write, close-on-exec. The error says what to do when it is missing or
// not accessible.
absl::StatusOr<base::UniqueFd> OpenDevFuse();

// A new fd on the same connection as `session_fd` (FUSE_DEV_IOC_CLONE): it reads its own share
// of requests, and replies to a request must go to the fd that read it.
absl::StatusOr<base::UniqueFd> CloneDevFuse(int session_fd);

// FUSE_DEV_IOC_SYNC_INIT (Linux 6.18): mount() will then run INIT synchronously, so a thread must
// already be serving `fd`. Unimplemented on older kernels.
absl::Status EnableSyncInit(int fd);

// Kernel passthrough (7.40): register `backing_fd` and get the id to put in fuse_open_out.
absl::StatusOr<int32_t> OpenBacking(int dev_fd, int backing_fd);
absl::Status CloseBacking(int dev_fd, int32_t backing_id);

}  // namespace ringfuse::internal
