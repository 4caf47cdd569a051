#include "daemon/handover/fs_handover.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "absl/strings/str_format.h"

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

SavedFs SaveFs(PassthroughFs& fs) {
  const PassthroughFs::Parts parts = fs.parts();
  SavedFs saved;
  saved.table = parts.inodes.Save();
  parts.open.ForEachFile([&saved](uint64_t fh, const FileHandle& file) {
    saved.files.push_back(
        SavedFs::File{fh, file.fd(), file.flags(), file.passthrough(), file.direct()});
  });
  parts.open.ForEachDir([&saved](uint64_t fh, const DirHandle& dir) {
    saved.dirs.push_back({fh, dir.fd()});
  });
  saved.owner_opens = parts.owner_locks.Save();
  saved.backing_ids = parts.backing_ids.Save();
  return saved;
}

absl::Status RestoreFs(PassthroughFs& fs, const SavedFs& saved, std::vector<base::UniqueFd>& fds) {
  const PassthroughFs::Parts parts = fs.parts();
  if (absl::Status table = parts.inodes.Restore(saved.table, fds); !table.ok()) return table;
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
    if (!parts.open.RestoreFile(file.fh, std::move(handle))) return FhTwice(file.fh);
  }
  for (const SavedFs::Dir& dir : saved.dirs) {
    absl::StatusOr<base::UniqueFd> fd = Take(fds, dir.fd);
    if (!fd.ok()) return fd.status();
    DIR* stream = ::fdopendir(fd->get());
    if (stream == nullptr) return absl::InvalidArgumentError("a handed-over fh is no directory");
    fd->release();  // the stream's now
    auto handle = std::make_unique<DirHandle>(stream);
    handle->ForgetPosition();
    if (!parts.open.RestoreDir(dir.fh, std::move(handle))) return FhTwice(dir.fh);
  }
  for (const OwnerLocks::Saved& open : saved.owner_opens) {
    absl::StatusOr<base::UniqueFd> fd = Take(fds, open.fd);
    if (!fd.ok()) return fd.status();
    parts.owner_locks.Restore(open, std::move(*fd));
  }
  // Last: an id adopted is closed if the restore fails after it (backing_ids.h).
  return parts.backing_ids.Restore(parts.backing_files, saved.backing_ids);
}

}  // namespace ringfuse::daemon
