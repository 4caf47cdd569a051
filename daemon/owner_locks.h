// POSIX record locks served with OFD locks (F_OFD_SETLK), which belong to an open file
// description rather than to a process.
//
// POSIX locks belong to a (process, inode) pair: several processes sharing one open file (a
// fork after open) must conflict, and one process's locks taken through two opens of a file
// are one set, all released when it closes any fd of that file. So each lock owner gets one
// open of each backing inode it locks, made on first use, and its locks live there; FLUSH from
// that owner (sent at every close) closes it, which releases them as close(2) does.
// flock(2) locks belong to the open file and are taken on the handle's own fd instead.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <tuple>

#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "daemon/file_handle.h"
#include "transport/fd.h"

namespace ringfuse::daemon {

class OwnerLocks {
 public:
  // The open that holds `owner`'s locks on the handle's inode; null with errno set when it
  // cannot be made. It is opened read-write where possible, so that it can hold either kind of
  // lock: the caller's own access is checked against the handle's flags (CheckAccess).
  std::shared_ptr<const UniqueFd> For(const FileHandle& handle, uint64_t owner);
  // Releases every lock `owner` holds on the handle's inode.
  void Drop(const FileHandle& handle, uint64_t owner);

  // EBADF, as fcntl gives, for a lock the handle's access mode does not allow; else 0.
  static int CheckAccess(const FileHandle& handle, short lock_type);

 private:
  using Key = std::tuple<dev_t, ino_t, uint64_t>;
  absl::Mutex mutex_;
  // Shared: a SETLKW still waiting keeps its owner's open alive past a FLUSH.
  absl::flat_hash_map<Key, std::shared_ptr<const UniqueFd>> fds_ ABSL_GUARDED_BY(mutex_);
};

}  // namespace ringfuse::daemon
