#include "daemon/direct_file.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <cerrno>

#include "daemon/backing.h"

namespace ringfuse::daemon {

int DirectFile::Open(int buffered, int flags, std::optional<DirectFile>& out) {
  // O_TRUNC was done by the first open; doing it again would lose what a racing writer wrote.
  UniqueFd fd(Reopen(buffered, (flags & ~O_TRUNC) | O_DIRECT));
  if (!fd.valid()) return errno;
  // The alignment O_DIRECT needs on this file (Linux 6.1+); none given means it has no O_DIRECT.
  struct statx stx {};
  if (::statx(fd.get(), "", AT_EMPTY_PATH, STATX_DIOALIGN, &stx) != 0) return errno;
  if (!(stx.stx_mask & STATX_DIOALIGN) || stx.stx_dio_offset_align == 0 ||
      stx.stx_dio_mem_align == 0) {
    return EINVAL;
  }
  out.emplace(DirectFile(std::move(fd), stx.stx_dio_mem_align, stx.stx_dio_offset_align));
  return 0;
}

}  // namespace ringfuse::daemon
