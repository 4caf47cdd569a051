// What an open regular file's fh points to: the backing fd, its O_DIRECT twin when the client
// opened with O_DIRECT, and whether the kernel reads and writes it through passthrough (the
// inode's shared backing id, see backing_ids.h).
#pragma once

#include <sys/stat.h>

#include <cstdint>
#include <optional>

#include "base/fd.h"
#include "daemon/fs/direct_file.h"

namespace ringfuse::daemon {

class FileHandle {
 public:
  FileHandle(base::UniqueFd fd, int flags) : fd_(std::move(fd)), flags_(flags) {
    struct stat st {};
    ::fstat(fd_.get(), &st);
    dev_ = st.st_dev;
    ino_ = st.st_ino;
  }

  int fd() const { return fd_.get(); }
  int flags() const { return flags_; }  // the backing open's flags
  // The fd to transfer `length` bytes at `offset` from or into `memory` with: the O_DIRECT twin
  // when there is one and the transfer meets its alignment, else the buffered fd.
  int TransferFd(uint64_t offset, size_t length, const void* memory) const {
    const bool direct = direct_ && direct_->Fits(offset, length) && direct_->FitsMemory(memory);
    return direct ? direct_->fd() : fd_.get();
  }
  dev_t dev() const { return dev_; }
  ino_t ino() const { return ino_; }
  bool passthrough() const { return passthrough_; }
  bool direct() const { return direct_.has_value(); }
  void set_passthrough() { passthrough_ = true; }
  void set_direct(DirectFile direct) { direct_.emplace(std::move(direct)); }

 private:
  const base::UniqueFd fd_;
  const int flags_;
  dev_t dev_;
  ino_t ino_;
  bool passthrough_ = false;
  std::optional<DirectFile> direct_;
};

}  // namespace ringfuse::daemon
