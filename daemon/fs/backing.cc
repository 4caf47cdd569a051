#include "daemon/fs/backing.h"

#include <fcntl.h>
#include <unistd.h>

#include "absl/strings/str_format.h"
#include "daemon/inodes/fd_room.h"

namespace ringfuse::daemon {

std::string ProcPath(int fd) { return absl::StrFormat("/proc/self/fd/%d", fd); }

base::ErrnoOr<base::UniqueFd> Reopen(int fd, int flags) {
  const std::string path = ProcPath(fd);
  return OpenMakingRoom([&] {
    return base::FdOfCall(
        ::open(path.c_str(), (flags & ~(O_CREAT | O_EXCL | O_NOCTTY | O_NOFOLLOW)) | O_CLOEXEC));
  });
}

base::Errno Sync(int fd, bool datasync) {
  return base::Errno::OfCall(datasync ? ::fdatasync(fd) : ::fsync(fd));
}

}  // namespace ringfuse::daemon
