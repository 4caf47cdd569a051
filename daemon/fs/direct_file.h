// The O_DIRECT side of a file a client opened with O_DIRECT: the daemon reads and writes the
// backing file past its page cache too, as the client asked, whenever a request's offset, length
// and memory meet the backing file's alignment.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include "base/fd.h"

namespace ringfuse::daemon {

class DirectFile {
 public:
  // Opens `buffered` (an fd of the backing file, open with `flags`) again with O_DIRECT, with the
  // daemon's credentials: the caller was already granted this access mode on that very inode.
  // Nothing when the backing file offers no O_DIRECT or does not say what it needs (statx gives
  // no STATX_DIOALIGN on tmpfs, network filesystems, FUSE, or ext4 files it cannot serve
  // directly), though open(2) with O_DIRECT natively succeeds there: the open is then served
  // buffered, which is also how those filesystems serve O_DIRECT themselves.
  static std::optional<DirectFile> Open(int buffered, int flags);

  int fd() const { return fd_.get(); }

  // Whether a transfer of `length` bytes at `offset` can go to fd(): FUSE passes the client's
  // O_DIRECT requests on unaligned (fs/fuse/file.c checks nothing), and the kernel's own
  // writeback ends files with partial blocks. The rest go through the buffered fd, which keeps
  // them correct; the kernel keeps both coherent (a direct transfer writes back and drops the
  // cached range first).
  bool Fits(uint64_t offset, size_t length) const {
    return offset % offset_alignment_ == 0 && length % offset_alignment_ == 0;
  }
  bool FitsMemory(const void* data) const {
    return reinterpret_cast<uintptr_t>(data) % memory_alignment_ == 0;
  }

 private:
  DirectFile(base::UniqueFd fd, uint32_t memory_alignment, uint32_t offset_alignment)
      : fd_(std::move(fd)),
        memory_alignment_(memory_alignment),
        offset_alignment_(offset_alignment) {}

  base::UniqueFd fd_;
  uint32_t memory_alignment_;
  uint32_t offset_alignment_;
};

}  // namespace ringfuse::daemon
