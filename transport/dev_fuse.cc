#include "transport/dev_fuse.h"

#include <fcntl.h>
#include <sys/ioctl.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_format.h"
#include "base/errno_status.h"
#include "ringfuse/protocol/frames.h"
#include "ringfuse/wire.h"

namespace ringfuse::internal {

absl::StatusOr<base::UniqueFd> OpenDevFuse() {
  base::UniqueFd fd(::open(kDevFusePath, O_RDWR | O_CLOEXEC));
  if (fd.valid()) return fd;
  const int error = errno;
  switch (error) {
    case ENOENT:
    case ENODEV:
    case ENXIO:
      return absl::NotFoundError(absl::StrFormat(
          "%s is missing (%s): load the fuse module (modprobe fuse) or create the node "
          "(mknod -m 0666 /dev/fuse c 10 229)",
          kDevFusePath, std::strerror(error)));
    case EACCES:
    case EPERM:
      return absl::PermissionDeniedError(absl::StrFormat(
          "cannot open %s (%s): run as root, or make it accessible (chmod 0666 %s) to mount "
          "through fusermount3",
          kDevFusePath, std::strerror(error), kDevFusePath));
    default: return base::ErrnoStatus(error, absl::StrFormat("cannot open %s", kDevFusePath));
  }
}

absl::StatusOr<base::UniqueFd> CloneDevFuse(int session_fd) {
  absl::StatusOr<base::UniqueFd> clone = OpenDevFuse();
  if (!clone.ok()) return clone;
  uint32_t master = static_cast<uint32_t>(session_fd);
  if (::ioctl(clone->get(), wire::kDevIocClone, &master) != 0) {
    return base::ErrnoStatus(errno, "FUSE_DEV_IOC_CLONE failed");
  }
  return clone;
}

absl::Status EnableSyncInit(int fd) {
  if (::ioctl(fd, wire::kDevIocSyncInit) == 0) return absl::OkStatus();
  if (errno == ENOTTY) {
    return absl::UnimplementedError("FUSE_DEV_IOC_SYNC_INIT needs Linux 6.18 or newer");
  }
  return base::ErrnoStatus(errno, "FUSE_DEV_IOC_SYNC_INIT failed");
}

absl::StatusOr<int32_t> OpenBacking(int dev_fd, int backing_fd) {
  wire::BackingMap map{backing_fd, 0, 0};
  const int id = ::ioctl(dev_fd, wire::kDevIocBackingOpen, &map);
  if (id >= 0) return id;
  if (errno == EPERM) {
    return absl::PermissionDeniedError(
        "FUSE_DEV_IOC_BACKING_OPEN needs CAP_SYS_ADMIN in the initial user namespace");
  }
  return base::ErrnoStatus(errno, "FUSE_DEV_IOC_BACKING_OPEN failed");
}

absl::Status CloseBacking(int dev_fd, int32_t backing_id) {
  uint32_t id = static_cast<uint32_t>(backing_id);
  if (::ioctl(dev_fd, wire::kDevIocBackingClose, &id) == 0) return absl::OkStatus();
  return base::ErrnoStatus(errno, "FUSE_DEV_IOC_BACKING_CLOSE failed");
}

}  // namespace ringfuse::internal
