// Reaching a backing inode from the O_PATH fd that names it, never from a path string.
#pragma once

#include <string>

#include "base/errno.h"

namespace ringfuse::daemon {

// "/proc/self/fd/N": the kernel resolves it to the inode `fd` holds, not to any name, so a
// rename or a symlink swapped in since cannot redirect it.
std::string ProcPath(int fd);

// Opens what `fd` (O_PATH, or any fd) refers to with real access flags: the kernel checks
// permissions on the inode again, as the thread's current credentials. Flags that only mean
// something to a name (O_CREAT, O_EXCL, O_NOCTTY, O_NOFOLLOW: the magic link itself is a symlink)
// are dropped. Takes fds back from the inode table when none is free (fd_room.h).
base::ErrnoOr<base::UniqueFd> Reopen(int fd, int flags);

// fsync, or fdatasync for `datasync` (FSYNC's FUSE_FSYNC_FDATASYNC).
base::Errno Sync(int fd, bool datasync);

}  // namespace ringfuse::daemon
