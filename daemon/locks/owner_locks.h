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
// An OFD lock taken through the mount comes as SETLK too, its owner being the client's open
// file (fs/fuse/file.c gives the kernel no way to say which kind a lock is). No FLUSH ever
// names that owner, and the kernel sends no unlock at the last close either (it has no local
// record of the lock to remove), so the owner's open goes at the RELEASE of the handle it was
// last used through. A POSIX owner's open cannot be caught by that: the owner's close of the
// handle's last fd sent its FLUSH before the RELEASE, and any later use was through another
// handle.
//
// The owner's open has the access the owner's opens have: read-only for an owner that only
// opened the file read-only, so that a read lock makes the daemon no writer of the file (which
// would keep SOURCE's executable from running, ETXTBSY, and show leases and inotify a writer).
// A write lock asked later through a writable open reopens it read-write, and carries the read
// locks it held over.
//
// Each owner's open is an fd of a root daemon that a local user can make by forking: one open
// file and 20,000 children each locking it made 20,000 fds, after which every user's LOOKUP and
// OPEN failed with EMFILE. So an open is made only to hold locks: a GETLK, or an unlock, by an
// owner that has none asks through the handle's own fd (which holds no POSIX or OFD lock:
// flock's are another kind), and the opens are bounded in total and per user (Limits), beyond
// which a lock is refused with ENOLCK ("no locks available"), as fcntl(2) allows. An open a
// handover brought counts in the total, not towards any user.
#pragma once

#include <fcntl.h>
#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <tuple>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "absl/synchronization/mutex.h"
#include "base/errno.h"
#include "base/fd.h"
#include "daemon/access/accountable_user.h"
#include "daemon/fs/file_handle.h"

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

    // F_OFD_SETLK on the owner's open for process `pid`.
    base::Errno Set(struct flock lock, uint32_t pid) { return locks_.Set(key_, lock, pid); }

   private:
    OwnerLocks& locks_;
    const Key key_;
  };

  // How many owners' opens may be held at once, in all and by one user.
  struct Limits {
    size_t total;
    size_t per_user;
  };
  // An eighth of the fd limit (at least 64), a quarter of that per user.
  static Limits DefaultLimits();
  explicit OwnerLocks(Limits limits = DefaultLimits()) : limits_(limits) {}

  // A lock by `owner` through `handle` (the kernel's `fh` for it), on its open of the handle's
  // inode (made, or made writable, as the handle allows); the error when that open cannot be had
  // (ENOLCK past the limits). `account_of` names the user the owner's process counts towards
  // (accountable_user.h), asked only when an open is to be made.
  base::ErrnoOr<std::shared_ptr<Request>> Begin(const FileHandle& handle, uint64_t fh,
                                                uint64_t owner,
                                                absl::FunctionRef<Account()> account_of);
  // F_OFD_GETLK for `owner` through its open if it has one, else through the handle's own fd:
  // a question makes no open. The conflicting lock's l_pid is the process that took it through
  // the mount (0 for a lock the daemon does not know, taken in SOURCE).
  base::Errno Probe(const FileHandle& handle, uint64_t owner, struct flock& lock);
  // Whether `owner` holds an open of the handle's inode (and so any lock there to release).
  bool Holds(const FileHandle& handle, uint64_t owner) const;
  // Releases every lock `owner` holds on the handle's inode.
  void Drop(const FileHandle& handle, uint64_t owner);
  // The kernel released `fh`: the owners whose opens were last used through it (an OFD lock's
  // owner) lose their locks.
  void Released(uint64_t fh);
  // Owners' opens held (for tests: none is left behind).
  size_t opens() const;

  // An owner's open as a handover carries it: its locks are the open file's (OFD), so they
  // travel with the fd.
  struct Saved {
    dev_t dev;
    ino_t ino;
    uint64_t owner;
    int fd;  // Save: the open's fd, which stays here; Restore: taken over
    bool writable;
    uint64_t last_fh;
    uint32_t pid;
  };
  // With no request in progress (none holds an open then).
  std::vector<Saved> Save() const;
  // Holds `saved`'s open again, with `fd` (the same open file, so the same locks).
  void Restore(const Saved& saved, base::UniqueFd fd);

  // EBADF, as fcntl gives, for a lock the handle's access mode does not allow; else none.
  static base::Errno CheckAccess(const FileHandle& handle, short lock_type);

 private:
  // The account an open counts towards: none for one a handover brought.
  static constexpr Account kNoAccount = ~Account{0};

  struct OwnerOpen {
    base::UniqueFd fd;
    Account account = kNoAccount;
    bool writable = false;
    uint64_t last_fh = 0;   // the handle of the owner's latest request
    uint32_t pid = 0;       // the process of the owner's latest lock (one pid per owner)
    uint32_t requests = 0;  // Requests alive
    bool flushed = false;   // a FLUSH came during a request, and no lock was granted since
  };
  // Ordered: the owners of one inode are neighbours.
  using Opens = std::map<Key, OwnerOpen>;

  // The owner's open, made (within the limits) or made writable as `handle` allows.
  base::Errno Prepare(const Key& key, const FileHandle& handle,
                      absl::FunctionRef<Account()> account_of)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  // A new owner's open, within the limits.
  base::Errno Open(const Key& key, const FileHandle& handle,
                   absl::FunctionRef<Account()> account_of) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  size_t OpensOf(Account account) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  // Takes an open out, and out of its user's count; closing it releases its locks.
  void Erase(Opens::iterator open) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  base::Errno Set(const Key& key, struct flock lock, uint32_t pid);
  // The pid of the owner other than `key`'s holding `lock` on key's inode, or 0.
  pid_t HolderOf(const Key& key, const struct flock& lock) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  void End(const Key& key);
  // Erases `open`, whose locks close with it, or unlocks it while a request still uses it.
  void DropOpen(Opens::iterator open) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);

  // opens_.size(), stored at every change: FLUSH and RELEASE, sent at every close, find no
  // owner's open without the lock, which all queue threads share, while no lock is held anywhere.
  void Counted() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_) {
    held_.store(opens_.size(), std::memory_order_release);
  }

  const Limits limits_;
  mutable absl::Mutex mutex_;
  Opens opens_ ABSL_GUARDED_BY(mutex_);
  absl::flat_hash_map<Account, size_t> per_user_ ABSL_GUARDED_BY(mutex_);
  std::atomic<size_t> held_{0};
};

}  // namespace ringfuse::daemon
