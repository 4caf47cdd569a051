// Mounting and unmounting a FUSE filesystem.
//
// As root, mount(2) (or the new mount API: fsopen/fsconfig/fsmount) with an fd from /dev/fuse.
// Otherwise Debian's fusermount3, which mounts for us and hands the /dev/fuse fd back over a
// socket. Every failure comes back as a Status that names the mountpoint and what to do.
//
// The mountpoint is opened once (a symlink there is refused, not followed), checked through that
// fd, and the kernel methods mount onto the fd, so that the directory checked is the directory
// mounted on even if its name is swapped for a symlink meanwhile. fusermount3 gets the path.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "base/fd.h"
#include "ringfuse/mount_options.h"

namespace ringfuse::internal {

// Where the kernel lists its FUSE connections (fusectl), each as a directory named by its id.
inline constexpr const char* kFusectlPath = "/sys/fs/fuse/connections";

// Mounts fusectl on kFusectlPath unless it is there already (a fresh boot without systemd has
// none); aborting a connection needs it. Fails without CAP_SYS_ADMIN.
absl::Status MountFusectlIfMissing();

class Mount {
 public:
  // Mounts. `before_mount` is called with the /dev/fuse fd right before the mount call: with
  // sync_init the caller must start answering INIT there, since mount() waits for it (and if
  // the mount then fails, a read() blocked on the fd is not woken: interrupt it with a signal).
  // Without sync_init a read() there fails with EPERM (the fd is not attached yet): serve after
  // Create returns. Through fusermount3 the fd exists only once mounted, so it is called then.
  // `after_mount` (kernel methods) is called once the mount call has returned, with whether it
  // mounted, while the fd is still open: with sync_init the caller ends its INIT thread there,
  // before a failed mount closes the fd that thread may still be writing its answer to.
  static absl::StatusOr<Mount> Create(const MountOptions& options,
                                      const std::function<void(int dev_fd)>& before_mount = {},
                                      const std::function<void(bool mounted)>& after_mount = {});

  // A mount made by another process, whose connection was handed over to this one (its
  // /dev/fuse fd, `dev_fd`): unmounted by this process from now on, like one it made itself.
  static Mount Adopt(base::UniqueFd dev_fd, std::string mountpoint, MountMethod method,
                     uint32_t connection_id);

  Mount(Mount&& other) noexcept;
  Mount& operator=(Mount&& other) noexcept;
  Mount(const Mount&) = delete;
  Mount& operator=(const Mount&) = delete;
  // Unmounts lazily if still mounted, then closes the fd; never blocks on a dead server.
  ~Mount();

  int dev_fd() const { return dev_fd_.get(); }
  // The absolute, symlink-free path of the directory mounted on, as it was named once mounted
  // (and as /proc/self/mountinfo names the mount), so that unmounting works from any directory.
  const std::string& mountpoint() const { return mountpoint_; }
  // The method actually used (never kAuto).
  MountMethod method() const { return method_; }
  bool mounted() const { return mounted_; }
  // fusermount3 waits, for auto_unmount, on a socket this process holds.
  bool has_auto_unmount() const { return auto_unmount_helper_ >= 0; }
  // Whether the mountpoint still shows this connection's filesystem (not unmounted by anyone).
  bool StillMounted() const;
  // The connection's id under /sys/fs/fuse/connections (the minor of the mount's st_dev).
  uint32_t connection_id() const { return connection_id_; }

  // The connection went to another process: this one leaves the mount in place, and closes its
  // /dev/fuse fd (the other process holds its own).
  void LeaveMounted();

  // umount2 (MNT_DETACH when lazy), or fusermount3 -u [-z] for a fusermount3 mount.
  absl::Status Unmount(bool lazy = false);

 private:
  Mount() = default;

  absl::Status MountInKernel(const MountOptions& options, int directory, mode_t root_type,
                             const std::function<void(int)>& before_mount,
                             const std::function<void(bool)>& after_mount);
  absl::Status MountWithFusermount(const MountOptions& options);
  void StartDeathWatcher();
  void StopAutoUnmountHelper();
  void Release();

  base::UniqueFd dev_fd_;
  std::string mountpoint_;
  MountMethod method_ = MountMethod::kAuto;
  bool mounted_ = false;
  uint32_t connection_id_ = 0;
  // fusermount3 left running for auto_unmount: it unmounts once this socket closes with the
  // connection dead, which happens when our process dies.
  pid_t auto_unmount_helper_ = -1;
  base::UniqueFd auto_unmount_socket_;
  // A child process that holds that socket instead of us: once we are gone it aborts the
  // connection, then exits and so closes the socket. Closed by our own exit, the socket could
  // reach fusermount3 while the connection still lived (an io_uring holds /dev/fuse until its
  // teardown, which runs after the exit), and it would leave the mount in place.
  pid_t death_watcher_ = -1;
  base::UniqueFd death_watch_pipe_;  // the write end; the watcher reads end of file when we die
};

}  // namespace ringfuse::internal
