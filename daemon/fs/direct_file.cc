#include "daemon/fs/direct_file.h"

#include <fcntl.h>
#include <sys/stat.h>

#include "daemon/fs/backing.h"

namespace ringfuse::daemon {

std::optional<DirectFile> DirectFile::Open(int buffered, int flags) {
  // O_TRUNC was done by the first open; doing it again would lose what a racing writer wrote.
  base::ErrnoOr<base::UniqueFd> fd = Reopen(buffered, (flags & ~O_TRUNC) | O_DIRECT);
  if (!fd.ok()) return std::nullopt;
  struct statx stx {};
  if (::statx(fd->get(), "", AT_EMPTY_PATH, STATX_DIOALIGN, &stx) != 0 ||
      !(stx.stx_mask & STATX_DIOALIGN) || stx.stx_dio_offset_align == 0 ||
      stx.stx_dio_mem_align == 0) {
    return std::nullopt;
  }
  return DirectFile(*std::move(fd), stx.stx_dio_mem_align, stx.stx_dio_offset_align);
}

}  // namespace ringfuse::daemon
