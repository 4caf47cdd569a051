#include "daemon/fs/backing_ids.h"

#include <fcntl.h>

#include "base/errno_status.h"
#include "base/fd.h"
#include "daemon/access/credentials.h"
#include "daemon/fs/backing.h"

namespace ringfuse::daemon {
namespace {

// Every read and write the kernel passes through to the file is made with the registering
// thread's credentials, whoever the writer: so it registers as the file's owner, with only what
// the ioctl asks (CAP_SYS_ADMIN) and CAP_FSETID (the kernel clears the set-ID bits on the FUSE
// file, with the writer's own credentials, before it passes a write on: the backing write must
// not decide again). Not as root: a writer would pass quotas and use root's reserved blocks.
absl::StatusOr<BackingFile> RegisterAsOwner(const BackingFiles& backing_files, int fd) {
  absl::StatusOr<BackingFile> registered = absl::UnavailableError("not registered");
  const base::Errno acted = CallAsOwnerOf(
      fd,
      [&] {
        registered = backing_files.Open(fd);
        return base::Errno();
      },
      kCapabilitySysAdmin | kCapabilityFsetid);
  if (!acted.ok()) return base::ErrnoStatus(acted.value(), "acting as the backing file's owner");
  return registered;
}

}  // namespace

absl::StatusOr<int32_t> BackingIds::Acquire(const BackingFiles& backing_files, int handle_fd,
                                            dev_t dev, ino_t ino) {
  Shard& shard = ShardOf(dev, ino);
  absl::MutexLock lock(&shard.mutex);
  if (auto known = shard.shared.find({dev, ino}); known != shard.shared.end()) {
    ++known->second.opens;
    return known->second.backing.id();
  }
  // Opened as the daemon: the client's own open, as the caller, already passed the checks. The
  // kernel keeps its own reference to the file; ours closes on return.
  const base::ErrnoOr<base::UniqueFd> backing = Reopen(handle_fd, O_RDONLY);
  if (!backing.ok()) return base::ErrnoStatus(backing.error().value(), "no backing file to share");
  absl::StatusOr<BackingFile> registered = RegisterAsOwner(backing_files, backing->get());
  if (!registered.ok()) return registered.status();
  const int32_t id = registered->id();
  shard.shared[{dev, ino}] = Shared{std::move(*registered), 1};
  return id;
}

void BackingIds::Release(dev_t dev, ino_t ino) {
  Shard& shard = ShardOf(dev, ino);
  absl::MutexLock lock(&shard.mutex);
  auto known = shard.shared.find({dev, ino});
  if (known == shard.shared.end() || --known->second.opens > 0) return;
  shard.shared.erase(known);  // its BackingFile closes the registration
}

std::vector<BackingIds::Saved> BackingIds::Save() {
  std::vector<Saved> saved;
  for (Shard& shard : shards_) {
    absl::MutexLock lock(&shard.mutex);
    for (const auto& [inode, shared] : shard.shared) {
      saved.push_back(Saved{inode.first, inode.second, shared.backing.id(), false, shared.opens});
    }
  }
  return saved;
}

// Every check comes before the first adoption: an adopted id would be closed on the way out of
// a failed restore, under the old daemon, which serves on.
absl::Status BackingIds::Restore(const BackingFiles& backing_files,
                                 const std::vector<Saved>& saved) {
  std::set<std::pair<dev_t, ino_t>> inodes;
  for (const Saved& one : saved) {
    if (one.id < 0 || one.opens == 0 || !inodes.emplace(one.dev, one.ino).second) {
      return absl::InvalidArgumentError(
          "a handed-over backing id is negative, shared by no open, or given twice");
    }
  }
  for (const Saved& one : saved) {
    absl::StatusOr<BackingFile> adopted = backing_files.Adopt(one.id);
    if (!adopted.ok()) return adopted.status();  // not bound: the first fails, none adopted
    Shard& shard = ShardOf(one.dev, one.ino);
    absl::MutexLock lock(&shard.mutex);
    shard.shared[{one.dev, one.ino}] = Shared{std::move(*adopted), one.opens};
  }
  return absl::OkStatus();
}

}  // namespace ringfuse::daemon
