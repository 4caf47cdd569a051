// The passthrough filesystem after a crash of a kept daemon (ringfuse/keeper.h): node ids and fh
// values of this incarnation's own, and the open files and directories the dead daemon's journal
// (open_file_journal.h) names, reopened under their fh values.
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "absl/strings/str_format.h"
#include "daemon/fs/passthrough_fs.h"

namespace ringfuse::daemon {

absl::Status PassthroughFs::ContinueAfterCrash(uint32_t incarnation) {
  if (incarnation >= (uint32_t{1} << (64 - kIncarnationShift))) {
    return absl::OutOfRangeError(absl::StrFormat(
        "incarnation %u: ringfused has no node ids left that no earlier one gave out; unmount "
        "and mount again",
        incarnation));
  }
  const uint64_t first = uint64_t{incarnation} << kIncarnationShift;
  inodes_.GiveNodeIdsFrom(first);
  GiveFhAbove(first);
  first_own_fh_ = first + 1;
  return absl::OkStatus();
}

// An fh at or above first_own_fh_ is this daemon's to give (ContinueAfterCrash): a record of
// one is no dead daemon's, and taking it would hand two opens one fh.
size_t PassthroughFs::ReopenAfterCrash(OpenFileJournal& journal) {
  size_t reopened = 0;
  for (const OpenFileJournal::Entry& entry : journal.Recover()) {
    const bool restored = entry.fh < first_own_fh_ &&
                          ((entry.flags & O_DIRECTORY) != 0 ? ReopenDirAfterCrash(entry)
                                                            : ReopenFileAfterCrash(entry));
    if (!restored) {
      journal.Released(entry.fh);
      continue;
    }
    ++reopened;
  }
  return reopened;
}

// Reopened through /proc: an O_PATH fd cannot be opened again any other way. What the first open
// created or truncated is not done again. The journal's handle must reach the inode of the
// journal's node, which the table knows (recovered from the node journal, and reopened there
// with the same check): a record whose handle names another inode of the filesystem (SOURCE's
// or not) is no open file of that node, and opening it as root would serve anything. Only a
// regular file or a directory, as the record's flags say: the daemon opens nothing else (a
// FIFO's open would block recovery for good, a device's would pass nodev).
base::UniqueFd PassthroughFs::ReopenByHandle(uint64_t nodeid, const std::string& handle,
                                             int flags) {
  const base::ErrnoOr<std::shared_ptr<const Inode>> node = inodes_.Get(nodeid);
  if (!node.ok()) return base::UniqueFd();
  const base::ErrnoOr<base::UniqueFd> inode = inodes_.handles().Open(handle);
  struct stat st {};
  const bool directory = (flags & O_DIRECTORY) != 0;
  if (!inode.ok() || ::fstat(inode->get(), &st) != 0 || st.st_dev != (*node)->dev ||
      st.st_ino != (*node)->ino || !(directory ? S_ISDIR(st.st_mode) : S_ISREG(st.st_mode))) {
    return base::UniqueFd();
  }
  return base::UniqueFd(::open(absl::StrFormat("/proc/self/fd/%d", inode->get()).c_str(),
                               (flags & ~(O_CREAT | O_EXCL | O_TRUNC | O_NOCTTY)) | O_CLOEXEC));
}

bool PassthroughFs::ReopenFileAfterCrash(const OpenFileJournal::Entry& entry) {
  base::UniqueFd fd = ReopenByHandle(entry.nodeid, entry.handle, entry.flags);
  if (!fd.valid() ||
      !open_files_.Restore(entry.fh, std::make_unique<FileHandle>(std::move(fd), entry.flags))) {
    return false;
  }
  reopened_fh_of_node_.emplace(entry.nodeid, entry.fh);
  return true;
}

// Where the dead daemon's stream stood is not known: the next listing seeks to the cookie the
// kernel asks for, the backing directory's own, so it goes on where it stopped.
bool PassthroughFs::ReopenDirAfterCrash(const OpenFileJournal::Entry& entry) {
  base::UniqueFd fd = ReopenByHandle(entry.nodeid, entry.handle, O_RDONLY | O_DIRECTORY);
  DIR* dir = fd.valid() ? ::fdopendir(fd.get()) : nullptr;
  if (dir == nullptr) return false;
  fd.release();  // the stream's now
  auto handle = std::make_unique<DirHandle>(dir);
  handle->ForgetPosition();
  return open_dirs_.Restore(entry.fh, std::move(handle));
}

}  // namespace ringfuse::daemon
