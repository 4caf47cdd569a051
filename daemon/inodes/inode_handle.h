// Reaching a backing inode again without holding it open: a file handle (name_to_handle_at)
// names the inode itself, not a path, so renames and other names cannot change what it reaches,
// and unlike an fd it costs the process nothing while it is not in use.
//
// Opening a handle (open_by_handle_at) needs CAP_DAC_READ_SEARCH, and a filesystem whose handles
// reach inodes it no longer caches (ext4, xfs, btrfs, tmpfs, f2fs). Elsewhere nodes are reopened
// by name (inode_table.h).
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "base/errno.h"
#include "base/fd.h"

namespace ringfuse::daemon {

class InodeHandles {
 public:
  // `root` is an fd to SOURCE's top directory; whether handles can be opened is probed on it.
  explicit InodeHandles(int root);

  // Whether Open can work here (the process has CAP_DAC_READ_SEARCH, the filesystem has handles).
  bool openable() const { return openable_; }
  // The handle of the inode `fd` refers to (any fd, O_PATH included), or "" when its filesystem
  // gives none that Open could use later. Equal handles name the same inode.
  std::string HandleOf(int fd);
  // An O_PATH fd to the inode `handle` names, or the error (ESTALE once the inode is gone,
  // EMFILE...). Symlinks are opened themselves, not followed.
  base::ErrnoOr<base::UniqueFd> Open(std::string_view handle) const;

  // For a handover: the mounts learned, each with the fd Open uses for it (kept here; -1 for a
  // mount whose handles cannot be opened). Mount ids name a mount system-wide while it stays.
  std::vector<std::pair<int, int>> Mounts() const;
  // Takes on a mount another daemon learned: `directory` as Mounts gave it, reopened.
  void AdoptMount(int mount_id, base::UniqueFd directory);

 private:
  // The mounts learned, as a snapshot that is replaced, never changed: every lookup and reopen
  // reads it without a lock (issue 21), and a mount is learned once. Each mount's fd to use with
  // open_by_handle_at, or -1 for a mount whose handles do not outlive its inode cache.
  using MountFds = absl::flat_hash_map<int, int>;

  // Whether handles of the mount `mount_id` (where `fd` is) can be opened, learning it the first
  // time.
  bool MountServes(int mount_id, int fd);
  // Remembers an fd on the mount `mount_id`, which open_by_handle_at needs, or that the mount's
  // filesystem cannot reopen what it evicted; false if `fd` cannot serve for either reason, or
  // (for now: a later lookup may meet the mount's top directory) because it is not a directory.
  bool KnowMount(int mount_id, int fd) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  // Publishes a snapshot with `mount_id` added.
  void AddMount(int mount_id, base::UniqueFd directory) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  const MountFds& mounts() const { return *mounts_.load(std::memory_order_acquire); }

  absl::Mutex mutex_;  // for learning a mount; readers take none
  // An fd for each mount met under SOURCE (a few): open_by_handle_at refuses O_PATH ones.
  std::vector<base::UniqueFd> directories_ ABSL_GUARDED_BY(mutex_);
  // Every snapshot published, kept until the end: a reader may still hold an older one.
  std::vector<std::unique_ptr<const MountFds>> snapshots_ ABSL_GUARDED_BY(mutex_);
  std::atomic<const MountFds*> mounts_;
  bool openable_ = false;
};

}  // namespace ringfuse::daemon
