#include "daemon/owner_locks.h"

#include <fcntl.h>

#include "daemon/backing.h"

namespace ringfuse::daemon {

std::shared_ptr<const UniqueFd> OwnerLocks::For(const FileHandle& handle, uint64_t owner) {
  const Key key{handle.dev(), handle.ino(), owner};
  absl::MutexLock lock(&mutex_);
  if (auto known = fds_.find(key); known != fds_.end()) return known->second;
  UniqueFd opened(Reopen(handle.fd(), O_RDWR));
  if (!opened.valid()) opened.reset(Reopen(handle.fd(), handle.flags() & O_ACCMODE));
  if (!opened.valid()) return nullptr;
  auto fd = std::make_shared<const UniqueFd>(std::move(opened));
  fds_[key] = fd;
  return fd;
}

void OwnerLocks::Drop(const FileHandle& handle, uint64_t owner) {
  absl::MutexLock lock(&mutex_);
  fds_.erase(Key{handle.dev(), handle.ino(), owner});
}

int OwnerLocks::CheckAccess(const FileHandle& handle, short lock_type) {
  const int mode = handle.flags() & O_ACCMODE;
  if (lock_type == F_RDLCK && mode == O_WRONLY) return EBADF;
  if (lock_type == F_WRLCK && mode == O_RDONLY) return EBADF;
  return 0;
}

}  // namespace ringfuse::daemon
