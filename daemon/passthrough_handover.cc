// The passthrough filesystem's part of a handover: its open files and directories, the lock
// owners' opens and the shared backing ids, beside the inode table (inode_table_handover.cc).
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "absl/strings/str_format.h"
#include "daemon/passthrough_fs.h"

namespace ringfuse::daemon {
namespace {

// Takes fd `index` out of `fds`, each once.
absl::StatusOr<base::UniqueFd> Take(std::vector<base::UniqueFd>& fds, int index) {
  if (index < 0 || static_cast<size_t>(index) >= fds.size() || !fds[index].valid()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "the handed-over open files name fd %d, which the handover did not carry (or twice)",
        index));
  }
  return std::move(fds[index]);
}

absl::Status FhTwice(uint64_t fh) {
  return absl::InvalidArgumentError(
      absl::StrFormat("the handed-over open files give fh %u twice (or 0)", fh));
}

}  // namespace

SavedFs PassthroughFs::Save() {
  SavedFs saved;
  saved.table = inodes_.Save();
  open_files_.ForEach([&saved](uint64_t fh, const FileHandle& file) {
    saved.files.push_back(
        SavedFs::File{fh, file.fd(), file.flags(), file.passthrough(), file.direct()});
  });
  open_dirs_.ForEach([&saved](uint64_t fh, const DirHandle& dir) {
    saved.dirs.push_back({fh, dir.fd()});
  });
  saved.owner_opens = owner_locks_.Save();
  saved.backing_ids = backing_ids_.Save();
  return saved;
}

absl::Status PassthroughFs::Restore(const SavedFs& saved, std::vector<base::UniqueFd>& fds) {
  if (absl::Status table = inodes_.Restore(saved.table, fds); !table.ok()) return table;
  for (const SavedFs::File& file : saved.files) {
    absl::StatusOr<base::UniqueFd> fd = Take(fds, file.fd);
    if (!fd.ok()) return fd.status();
    auto handle = std::make_unique<FileHandle>(std::move(*fd), file.flags);
    if (file.passthrough) handle->set_passthrough();
    if (file.direct) {
      if (std::optional<DirectFile> direct = DirectFile::Open(handle->fd(), file.flags)) {
        handle->set_direct(std::move(*direct));
      }
    }
    if (!open_files_.Restore(file.fh, std::move(handle))) return FhTwice(file.fh);
  }
  for (const SavedFs::Dir& dir : saved.dirs) {
    absl::StatusOr<base::UniqueFd> fd = Take(fds, dir.fd);
    if (!fd.ok()) return fd.status();
    DIR* stream = ::fdopendir(fd->get());
    if (stream == nullptr) return absl::InvalidArgumentError("a handed-over fh is no directory");
    fd->release();  // the stream's now
    auto handle = std::make_unique<DirHandle>(stream);
    handle->ForgetPosition();
    if (!open_dirs_.Restore(dir.fh, std::move(handle))) return FhTwice(dir.fh);
  }
  for (const OwnerLocks::Saved& open : saved.owner_opens) {
    absl::StatusOr<base::UniqueFd> fd = Take(fds, open.fd);
    if (!fd.ok()) return fd.status();
    owner_locks_.Restore(open, std::move(*fd));
  }
  // Last: an id adopted is closed if the restore fails after it (backing_ids.h).
  return backing_ids_.Restore(backing_files_, saved.backing_ids);
}

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
  const std::shared_ptr<const Inode> node = inodes_.Get(nodeid);
  if (node == nullptr) return base::UniqueFd();
  const base::UniqueFd inode = inodes_.handles().Open(handle);
  struct stat st {};
  const bool directory = (flags & O_DIRECTORY) != 0;
  if (!inode.valid() || ::fstat(inode.get(), &st) != 0 || st.st_dev != node->dev ||
      st.st_ino != node->ino || !(directory ? S_ISDIR(st.st_mode) : S_ISREG(st.st_mode))) {
    return base::UniqueFd();
  }
  return base::UniqueFd(::open(absl::StrFormat("/proc/self/fd/%d", inode.get()).c_str(),
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
