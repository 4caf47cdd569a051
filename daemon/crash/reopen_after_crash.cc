#include "daemon/crash/reopen_after_crash.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <memory>
#include <string>

#include "daemon/fs/backing.h"

namespace ringfuse::daemon {
namespace {

// Reopened through /proc (Reopen): an O_PATH fd cannot be opened again any other way. What the
// first open created or truncated is not done again. The journal's handle must reach the inode of
// the journal's node, which the table knows (recovered from the node journal, and reopened there
// with the same check): a record whose handle names another inode of the filesystem (SOURCE's
// or not) is no open file of that node, and opening it as root would serve anything. Only a
// regular file or a directory, as the record's flags say: the daemon opens nothing else (a
// FIFO's open would block recovery for good, a device's would pass nodev).
base::UniqueFd ReopenByHandle(InodeTable& inodes, uint64_t nodeid, const std::string& handle,
                              int flags) {
  const base::ErrnoOr<std::shared_ptr<const Inode>> node = inodes.Get(nodeid);
  if (!node.ok()) return base::UniqueFd();
  const base::ErrnoOr<base::UniqueFd> inode = inodes.handles().Open(handle);
  struct stat st {};
  const bool directory = (flags & O_DIRECTORY) != 0;
  if (!inode.ok() || ::fstat(inode->get(), &st) != 0 || st.st_dev != (*node)->dev ||
      st.st_ino != (*node)->ino || !(directory ? S_ISDIR(st.st_mode) : S_ISREG(st.st_mode))) {
    return base::UniqueFd();
  }
  base::ErrnoOr<base::UniqueFd> reopened = Reopen(inode->get(), flags & ~O_TRUNC);
  return reopened.ok() ? *std::move(reopened) : base::UniqueFd();
}

bool ReopenFile(const OpenFileJournal::Entry& entry, InodeTable& inodes, OpenHandles& open) {
  base::UniqueFd fd = ReopenByHandle(inodes, entry.nodeid, entry.handle, entry.flags);
  return fd.valid() &&
         open.RestoreFileAfterCrash(entry.fh, entry.nodeid,
                                    std::make_unique<FileHandle>(std::move(fd), entry.flags));
}

// Where the dead daemon's stream stood is not known: the next listing seeks to the cookie the
// kernel asks for, the backing directory's own, so it goes on where it stopped.
bool ReopenDir(const OpenFileJournal::Entry& entry, InodeTable& inodes, OpenHandles& open) {
  base::UniqueFd fd = ReopenByHandle(inodes, entry.nodeid, entry.handle, O_RDONLY | O_DIRECTORY);
  DIR* dir = fd.valid() ? ::fdopendir(fd.get()) : nullptr;
  if (dir == nullptr) return false;
  fd.release();  // the stream's now
  auto handle = std::make_unique<DirHandle>(dir);
  handle->ForgetPosition();
  return open.RestoreDir(entry.fh, std::move(handle));
}

}  // namespace

// An fh this daemon gives (ContinueAfterCrash): a record of one is no dead daemon's, and taking
// it would hand two opens one fh.
size_t ReopenAfterCrash(OpenFileJournal& journal, InodeTable& inodes, OpenHandles& open) {
  size_t reopened = 0;
  for (const OpenFileJournal::Entry& entry : journal.Recover()) {
    const bool restored = open.DeadDaemons(entry.fh) &&
                          ((entry.flags & O_DIRECTORY) != 0 ? ReopenDir(entry, inodes, open)
                                                            : ReopenFile(entry, inodes, open));
    if (!restored) {
      journal.Released(entry.fh);
      continue;
    }
    ++reopened;
  }
  return reopened;
}

}  // namespace ringfuse::daemon
