// POSIX record locks served with OFD locks (F_OFD_SETLK), which belong to an open file
// description rather than to a process.
//
// POSIX locks belong to a (process, inode) pair: several processes sharing one open file (a
// fork after open) must conflict, and one process's locks taken through two opens of a file
// are one set, all released when it closes any fd of that file. So each lock owner gets one
// open of each backing inode it locks, made on first use, and its locks live there. FLUSH from
// that owner (sent at every close) releases them, as close(2) does, and closes the open unless
// a lock request of the owner is still under way: a wait granted after the close holds its
// lock, as it does natively, and the open stays until the owner's next FLUSH.
// flock(2) locks belong to the open file and are taken on the handle's own fd instead.
//
// The owner's open has the access the owner's opens have: read-only for an owner that only
// opened the file read-only, so that a read lock makes the daemon no writer of the file (which
// would keep SOURCE's executable from running, ETXTBSY, and show leases and inotify a writer).
// A write lock asked later through a writable open reopens it read-write, and carries the read
// locks it held over.
#pragma once

#include <fcntl.h>
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
 private:
  using Key = std::tuple<dev_t, ino_t, uint64_t>;

 public:
  // One lock request's use of its owner's open, from the request to its answer.
  class Request {
   public:
    Request(OwnerLocks& locks, Key key) : locks_(locks), key_(key) {}
    ~Request() { locks_.End(key_); }
    Request(const Request&) = delete;
    Request& operator=(const Request&) = delete;

    // F_OFD_GETLK and F_OFD_SETLK on the owner's open: 0 or an errno.
    int Get(struct flock& lock) { return locks_.Lock(key_, F_OFD_GETLK, lock); }
    int Set(struct flock lock) { return locks_.Lock(key_, F_OFD_SETLK, lock); }

   private:
    OwnerLocks& locks_;
    const Key key_;
  };

  // A request by `owner` through `handle`, on its open of the handle's inode (made, or made
  // writable, as the handle allows); null with errno set when that open cannot be had.
  std::shared_ptr<Request> Begin(const FileHandle& handle, uint64_t owner);
  // Releases every lock `owner` holds on the handle's inode.
  void Drop(const FileHandle& handle, uint64_t owner);
  // Owners' opens held (for tests: none is left behind).
  size_t opens() const;

  // EBADF, as fcntl gives, for a lock the handle's access mode does not allow; else 0.
  static int CheckAccess(const FileHandle& handle, short lock_type);

 private:
  struct OwnerOpen {
    UniqueFd fd;
    bool writable = false;
    uint32_t requests = 0;  // Requests alive
    bool flushed = false;   // a FLUSH came during a request, and no lock was granted since
  };

  // The owner's open, made or made writable as `handle` allows; 0 or an errno.
  int Prepare(const Key& key, const FileHandle& handle) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  int Lock(const Key& key, int command, struct flock& lock);
  void End(const Key& key);

  mutable absl::Mutex mutex_;
  absl::flat_hash_map<Key, OwnerOpen> opens_ ABSL_GUARDED_BY(mutex_);
};

}  // namespace ringfuse::daemon
