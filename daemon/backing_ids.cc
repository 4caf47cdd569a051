#include "daemon/backing_ids.h"

#include <fcntl.h>

#include "daemon/backing.h"
#include "transport/fd.h"

namespace ringfuse::daemon {

absl::StatusOr<int32_t> BackingIds::Acquire(const BackingFiles& backing_files, int handle_fd,
                                            dev_t dev, ino_t ino, bool writes) {
  absl::MutexLock lock(&mutex_);
  if (auto known = shared_.find({dev, ino}); known != shared_.end()) {
    if (writes && !known->second.writable) {
      return absl::FailedPreconditionError("the shared backing file is read-only");
    }
    ++known->second.opens;
    return known->second.backing.id();
  }
  // Opened as the daemon: the client's own open, as the caller, already passed the checks.
  bool writable = !read_only_;
  internal::UniqueFd backing(writable ? Reopen(handle_fd, O_RDWR) : -1);
  if (!backing.valid()) {
    writable = false;
    backing.reset(Reopen(handle_fd, O_RDONLY));
  }
  if (!backing.valid() || (writes && !writable)) {
    return absl::UnavailableError("no backing file to share for writing");
  }
  // The kernel keeps its own reference to the file; ours closes on return.
  absl::StatusOr<BackingFile> registered = backing_files.Open(backing.get());
  // Not FailedPrecondition, which is the answer for a read-only shared file alone.
  if (!registered.ok()) return absl::UnavailableError(registered.status().message());
  const int32_t id = registered->id();
  shared_[{dev, ino}] = Shared{std::move(*registered), writable, 1};
  return id;
}

void BackingIds::Release(dev_t dev, ino_t ino) {
  absl::MutexLock lock(&mutex_);
  auto known = shared_.find({dev, ino});
  if (known == shared_.end() || --known->second.opens > 0) return;
  shared_.erase(known);  // its BackingFile closes the registration
}

}  // namespace ringfuse::daemon
