#include "daemon/fs/backing.h"

#include <fcntl.h>
#include <unistd.h>

#include "absl/strings/str_format.h"
#include "daemon/inodes/fd_room.h"

namespace ringfuse::daemon {

std::string ProcPath(int fd) { return absl::StrFormat("/proc/self/fd/%d", fd); }

int Reopen(int fd, int flags) {
  const std::string path = ProcPath(fd);
  return OpenMakingRoom([&] {
    return ::open(path.c_str(), (flags & ~(O_CREAT | O_EXCL | O_NOCTTY | O_NOFOLLOW)) | O_CLOEXEC);
  });
}

int Sync(int fd, bool datasync) { return datasync ? ::fdatasync(fd) : ::fsync(fd); }

}  // namespace ringfuse::daemon
