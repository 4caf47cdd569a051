#include "daemon/fs/open_handles.h"

#include <fcntl.h>

#include <cerrno>
#include <utility>

namespace ringfuse::daemon {

uint64_t OpenHandles::AddFile(std::unique_ptr<FileHandle> handle, uint64_t nodeid,
                              std::string_view inode_handle, int flags) {
  const uint64_t fh = files_.Add(std::move(handle));
  if (journal_ != nullptr) journal_->Opened(fh, nodeid, inode_handle, flags);
  return fh;
}

uint64_t OpenHandles::AddDir(std::unique_ptr<DirHandle> handle, uint64_t nodeid,
                             std::string_view inode_handle) {
  const uint64_t fh = dirs_.Add(std::move(handle));
  if (journal_ != nullptr) journal_->Opened(fh, nodeid, inode_handle, O_RDONLY | O_DIRECTORY);
  return fh;
}

std::shared_ptr<FileHandle> OpenHandles::ReleaseFile(uint64_t fh) {
  std::shared_ptr<FileHandle> handle = files_.Take(fh);
  if (handle != nullptr && journal_ != nullptr) journal_->Released(fh);
  return handle;
}

std::shared_ptr<DirHandle> OpenHandles::ReleaseDir(uint64_t fh) {
  std::shared_ptr<DirHandle> handle = dirs_.Take(fh);
  if (handle != nullptr && journal_ != nullptr) journal_->Released(fh);
  return handle;
}

void OpenHandles::ContinueAfterCrash(uint64_t last_dead) {
  GiveFhAbove(last_dead);
  first_own_fh_ = last_dead + 1;
}

void OpenHandles::FinishUnknown(uint64_t fh, EmptyReply& reply) const {
  if (DeadDaemons(fh)) return reply.Ok();
  reply.Error(EBADF);
}

bool OpenHandles::RestoreFileAfterCrash(uint64_t fh, uint64_t nodeid,
                                        std::unique_ptr<FileHandle> handle) {
  if (!files_.Restore(fh, std::move(handle))) return false;
  reopened_fh_of_node_.emplace(nodeid, fh);
  return true;
}

std::optional<uint64_t> OpenHandles::ReopenedFileOf(uint64_t nodeid) const {
  const auto reopened = reopened_fh_of_node_.find(nodeid);
  if (reopened == reopened_fh_of_node_.end()) return std::nullopt;
  return reopened->second;
}

}  // namespace ringfuse::daemon
